# SPDX-License-Identifier: GPL-2.0
#
# dm-smr: out-of-tree device-mapper targets emulating shingled disks.
#
#   make                 build the modules against KDIR
#   make install         what a test box needs: the modules (modules_install
#                        + depmod, for KVER), then make -C userspace install
#                        (smrd, smrctl, profiles, man pages, the systemd
#                        unit, bash completion); PREFIX (/usr/local) and
#                        DESTDIR are passed on
#   make uninstall       removes the same: the modules' .ko files for KVER
#                        (+ depmod), then make -C userspace uninstall
#   make check           set up, build, run the userspace tests and the VM
#                        suite on every kernel scripts/kernels.sh lists
#                        (6.1, 6.12 and the newest, each whole; a series
#                        left out of SMR_WHOLE_SUITE runs its smoke set),
#                        in two VMs at a time
#   make check KVER=V    the VM suite on kernel V alone (SMOKE=1: smoke set)
#   make demo            set up what the demo needs (one kernel), build, boot
#                        the VM and run the demo
#   make libzbc-check    libzbc's conformance suite on an exported drive and
#                        on scsi_debug (KVER=V: that kernel)
#   make debug-extras KVER=V  LIO and md RAID modules for a debug kernel of
#                        ../shared/kernels, which lacks them (V: *-smrdebug)
#   make clean
#
# KDIR defaults to the running kernel's build tree; on a machine whose own
# kernel is not the one under test (CI, this project's VMs), the newest
# installed Debian -amd64 headers are used instead. KVER overrides both.
# make install does not fall back: without the running kernel's headers
# it stops unless KVER (or KDIR) is given, and says which kernel it is for.
# Before every build compat/probe.sh test-compiles compat/probes/ against
# KDIR (compat/generated/config.h).

# kbuild reads Kbuild, never this file, so this is for people (and DKMS,
# which may pass KERNELRELEASE=) only.

# KVER given on the command line: make check runs that kernel alone.
KVER_GIVEN := $(KVER)
KDIR_GIVEN := $(KDIR)
# The kernel this machine runs (make install's default target kernel).
RUNNING_KVER ?= $(shell uname -r)
KVER ?= $(shell if [ -d /lib/modules/$(RUNNING_KVER)/build ]; then echo $(RUNNING_KVER); \
	else ls -d /lib/modules/*-amd64/build 2>/dev/null | sort -V | tail -n1 | \
	cut -d/ -f4; fi)
KDIR ?= /lib/modules/$(KVER)/build
PWD := $(shell pwd)
PREFIX ?= /usr/local
DESTDIR ?=
# The modules go to /lib/modules/KVER/extra/{common,dm-smr,dm-caveat}/ on every
# kernel (6.1's default; 6.12's would be updates/, beside DKMS's
# updates/dkms/), compressed as that kernel's config says (.ko.xz on
# 6.12). DESTDIR stages them, and depmod is then left to the package.
INSTALL_MOD_DIR ?= extra
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)
MODULES := common/smr-common dm-smr/dm-smr dm-caveat/dm-caveat

.PHONY: dkms-shadow-check all modules test-modules install install-kver-check uninstall clean check demo demo-run deps vm-check libzbc-check fstests debug-extras

all: modules

# A kernel whose headers the host cannot use (the newest, gcc-14) is built
# in the chroot scripts/setup-newest-kernel.sh keeps, through this Makefile.
modules:
	@if [ ! -d "$(KDIR)" ] && scripts/setup-newest-kernel.sh --print 2>/dev/null | grep -qx 'KVER=$(KVER)'; then \
		echo "building for $(KVER) in its chroot"; \
		exec scripts/setup-newest-kernel.sh --build $(PWD) modules; \
	fi; \
	test -d "$(KDIR)" || { echo "No kernel build tree at '$(KDIR)': install linux-headers or set KDIR=" >&2; exit 1; }; \
	compat/probe.sh $(KDIR) compat/generated/config.h && \
	$(MAKE) -C $(KDIR) M=$(PWD) modules

# Test-only modules for the VM suite (tests/kmod/), never installed.
test-modules:
	@if [ ! -d "$(KDIR)" ] && scripts/setup-newest-kernel.sh --print 2>/dev/null | grep -qx 'KVER=$(KVER)'; then \
		exec scripts/setup-newest-kernel.sh --build $(PWD) test-modules; \
	fi; \
	test -d "$(KDIR)" || { echo "No kernel build tree at '$(KDIR)': install linux-headers or set KDIR=" >&2; exit 1; }; \
	$(MAKE) -C $(KDIR) M=$(PWD)/tests/kmod modules

# make install puts the modules where one kernel loads them: the running
# one, unless KVER (or KDIR) says which. Without the running kernel's
# headers the default KVER above is some other kernel's (the newest
# headers installed): refuse rather than install for a kernel the user
# did not pick, and say which kernel it is for when it goes ahead.
install-kver-check:
	@if [ -z "$(KVER_GIVEN)$(KDIR_GIVEN)" ] && [ ! -d /lib/modules/$(RUNNING_KVER)/build ]; then \
		echo "make install: the running kernel $(RUNNING_KVER) has no headers (/lib/modules/$(RUNNING_KVER)/build):" >&2; \
		echo "  install them (apt-get install linux-headers-$(RUNNING_KVER)), or give the kernel to build" >&2; \
		echo "  and install for: make install KVER=<version> (installed: $$(ls /lib/modules 2>/dev/null | tr '\n' ' '))" >&2; \
		exit 1; \
	fi
	@test -n "$(KVER)" || { echo "make install: no kernel headers found: install linux-headers-$(RUNNING_KVER) or give KVER=" >&2; exit 1; }
	@echo "make install: building and installing the modules for kernel $(KVER) ($(KDIR))"

install: install-kver-check
	@$(MAKE) --no-print-directory modules KVER=$(KVER) KDIR=$(KDIR)
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR))
	$(if $(DESTDIR),,depmod -a $(KVER))
	@$(MAKE) --no-print-directory dkms-shadow-check
	$(MAKE) -C userspace install PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)"

# A DKMS build of the modules for KVER (updates/dkms/) is what modprobe
# loads, not the copy make install just put in extra/: say so.
dkms-shadow-check:
	@for m in $(notdir $(MODULES)); do \
		if ls $(DESTDIR)/lib/modules/$(KVER)/updates/dkms/$$m.ko* >/dev/null 2>&1; then \
			echo "make install: warning: DKMS has $$m for $(KVER) in updates/dkms/, which modprobe loads instead of extra/ (dkms remove dm-smr/VERSION --all)" >&2; \
		fi; \
	done

uninstall:
	rm -f $(foreach m,$(MODULES),$(MODDIR)/$(m).ko $(MODDIR)/$(m).ko.*)
	for d in $(dir $(MODULES)); do \
		if [ -d "$(MODDIR)/$$d" ]; then rmdir --ignore-fail-on-non-empty "$(MODDIR)/$$d"; fi; \
	done
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C userspace uninstall PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)"

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null || true
	$(MAKE) -C $(KDIR) M=$(PWD)/tests/kmod clean 2>/dev/null || true
	rm -rf tests/results compat/generated

deps:
	scripts/setup-deps.sh

check: deps
	$(MAKE) -C userspace check
	SMR_CHECK_UNIT=1 scripts/check.sh $(if $(KVER_GIVEN),$(KVER_GIVEN) $(if $(SMOKE),smoke,full))

# libzbc's conformance suite through the SCSI view, beside scsi_debug's
# disk of the same geometry (tests/conformance/libzbc-scsi.sh, docs/
# testing.md). Not in make check: it takes longer than CI has room for.
# LIBZBC_SRC: libzbc's source, an archive or a tree (default: the archive
# in ../shared/sources/).
libzbc-check:
	scripts/setup-deps.sh
	scripts/setup-libzbc.sh
	$(MAKE) modules test-modules KVER=$(KVER)
	$(MAKE) -C userspace smr-scsi/smr-scsi
	tests/vm-run --kernel $(KVER) --results tests/results/libzbc-$(KVER) tests/conformance/libzbc-scsi.sh

# fstests on emulated drives against a baseline in the same boot
# (tests/conformance/fstests.sh, docs/testing.md "fstests"). Not in make
# check: a configuration takes longer than CI has room for.
# FSTESTS_SRC: fstests' source, an archive or a tree (default: the archive
# in ../shared/sources/; upstream: git.kernel.org/pub/scm/fs/xfs/
# xfstests-dev.git). SMR_FSTESTS_CONFIGS and SMR_FSTESTS_TESTS choose
# what runs (the script's header says how); the guest gets 4 GiB for
# the baseline's memory-backed devices.
fstests:
	scripts/setup-deps.sh
	scripts/setup-fstests.sh
	$(MAKE) modules test-modules KVER=$(KVER)
	$(MAKE) -C userspace
	SMR_VM_MEM=$${SMR_VM_MEM:-4G} tests/vm-run --kernel $(KVER) --results tests/results/fstests-$(KVER) tests/conformance/fstests.sh

# The modules the SCSI and array tests need that the debug kernels were
# built without (target_core_user, tcm_loop, raid1, raid456 and what they
# load), built from Debian's source of the series against the debug
# kernel's build tree (scripts/build-debug-extras.sh, docs/testing.md).
debug-extras:
	@[ -n "$(KVER_GIVEN)" ] || { echo "make debug-extras: give KVER=<a -smrdebug kernel>" >&2; exit 2; }
	scripts/build-debug-extras.sh $(KVER)

# The demo boots one kernel, Debian 12's own 6.1 (or KVER=, an installed
# one), so it sets up only that: not 6.12, not the newest kernel's trixie
# chroot, not fio's source tree (test_fio_02's); make check sets up all.
DEMO_DEPS := SMR_KERNELS=6.1 SMR_FIO_SOURCE=0

demo:
	$(DEMO_DEPS) scripts/setup-deps.sh
	@$(MAKE) --no-print-directory demo-run \
		KVER="$(or $(KVER_GIVEN),$$(SMR_KERNELS=6.1 scripts/kernels.sh | sed -n '1s/ .*//p'))"

demo-run:
	@test -n "$(KVER)" || { echo "make demo: no 6.1 kernel with headers after set-up" >&2; exit 1; }
	@echo "make demo: kernel $(KVER)"
	$(MAKE) modules KVER=$(KVER)
	$(MAKE) -C userspace
	scripts/demo.sh --kernel $(KVER)
