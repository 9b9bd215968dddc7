# SPDX-License-Identifier: GPL-2.0
"""make install / make uninstall put exactly the files a test box needs
where PREFIX says, and take them away again; the user's CFLAGS add to the
build's own flags instead of replacing them. Runs in a temporary copy of
userspace/ (and the uapi headers it includes), writing only to DESTDIR:
no root needed."""
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFILES = sorted(f for f in os.listdir(os.path.join(ROOT, "userspace", "smrctl", "profiles"))
                  if f.endswith(".profile"))
# The build's outputs, left out of the copy (the programs' folders have
# the same names as their programs: only files are outputs).
BUILT = {"smrd", "smrctl", "smr-scsi", "test-units", "test-scsi"}
# What the caller's make or environment could carry into ours.
SCRUB = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "CFLAGS", "CPPFLAGS",
         "LDFLAGS", "LDLIBS", "PREFIX", "DESTDIR", "SMRCTL_PROFILES", "KVER", "KDIR")


def not_built(d, names):
    """copytree's ignore: objects, .*.cmd files and built programs."""
    return [n for n in names if n.endswith(".o") or (n.startswith(".") and n.endswith(".cmd"))
            or (n in BUILT and os.path.isfile(os.path.join(d, n)))]


def files_under(top):
    """{path relative to top: mode} of every non-directory under top."""
    out = {}
    for d, _, names in os.walk(top):
        for n in names:
            p = os.path.join(d, n)
            out[os.path.relpath(p, top)] = stat.S_IMODE(os.lstat(p).st_mode)
    return out


@unittest.skipUnless(shutil.which("make") and shutil.which("cc"), "needs make and cc")
class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="smr-install-test.")
        shutil.copytree(os.path.join(ROOT, "userspace"), os.path.join(cls.tmp, "userspace"),
                        ignore=not_built)
        for d in ("dm-smr/uapi", "dm-caveat/uapi"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(cls.tmp, d))
        shutil.copy(os.path.join(ROOT, "Makefile"), cls.tmp)
        cls.src = os.path.join(cls.tmp, "userspace")
        cls.env = {k: v for k, v in os.environ.items() if k not in SCRUB}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def make(self, *args, where=None):
        r = subprocess.run(["make", "-j4", "-C", where or self.src] + list(args),
                           capture_output=True, text=True, env=self.env, timeout=120)
        self.assertEqual(r.returncode, 0, "make %s:\n%s%s" % (" ".join(args), r.stdout, r.stderr))
        return r.stdout

    def completion(self, present):
        path = os.path.join(self.src, "smrctl", "smrctl.bash-completion")
        if present and not os.path.exists(path):
            with open(path, "w") as f:
                f.write("complete -W 'create status profiles' smrctl\n")
        elif not present and os.path.exists(path):
            os.unlink(path)

    def install_uninstall(self, prefix, unitdir, completion):
        self.completion(completion)
        destdir = tempfile.mkdtemp(dir=self.tmp)
        var = ["PREFIX=" + prefix, "DESTDIR=" + destdir]
        self.make("install", *var)
        p = prefix.lstrip("/")
        want = {p + "/sbin/smrd": 0o755, p + "/sbin/smrctl": 0o755,
                p + "/sbin/smr-calibrate": 0o755, p + "/sbin/smr-scsi": 0o755,
                p + "/share/man/man8/smrd.8": 0o644, p + "/share/man/man8/smrctl.8": 0o644,
                p + "/share/man/man8/smr-scsi.8": 0o644,
                unitdir.lstrip("/") + "/smrd.service": 0o644,
                unitdir.lstrip("/") + "/smr-scsi@.service": 0o644}
        want.update({p + "/share/smrctl/profiles/" + f: 0o644 for f in PROFILES})
        if completion:
            want[p + "/share/bash-completion/completions/smrctl"] = 0o644
        self.assertEqual(files_under(destdir), want)

        with open(os.path.join(destdir, unitdir.lstrip("/"), "smrd.service")) as f:
            execstart = [l for l in f if l.startswith("ExecStart=")]
        self.assertEqual(len(execstart), 1)
        self.assertTrue(execstart[0].startswith("ExecStart=%s/sbin/smrd " % prefix), execstart)
        with open(os.path.join(destdir, unitdir.lstrip("/"), "smr-scsi@.service")) as f:
            unit = f.read()
        execstart = [l + "\n" for l in unit.splitlines() if l.startswith("ExecStart=")]
        # The dm name unescaped (%I: hm-0 from smr-scsi@hm\x2d0), the
        # device unit escaped (%i); ready once /dev/sdX is there; a killed
        # export's configfs left-overs removed.
        self.assertEqual(execstart, ["ExecStart=%s/sbin/smr-scsi --name %%I /dev/mapper/%%I\n"
                                     % prefix])
        self.assertIn("BindsTo=dev-mapper-%i.device\n", unit)
        self.assertIn("Type=notify\n", unit)
        self.assertIn("ExecStopPost=-%s/sbin/smr-scsi --stop %%I\n" % prefix, unit)
        self.assertIn("Documentation=man:smr-scsi(8)\n", unit)

        # The installed smrctl, alone in a directory (no profiles/ beside
        # it, no ../share), falls back to the PREFIX it was built with.
        alone = tempfile.mkdtemp(dir=self.tmp)
        shutil.copy(os.path.join(destdir, p, "sbin", "smrctl"), alone)
        r = subprocess.run([os.path.join(alone, "smrctl"), "profiles"],
                           capture_output=True, text=True, env=self.env)
        profdir = prefix + "/share/smrctl/profiles"
        if not os.path.isdir(profdir):
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(profdir, r.stderr)
        # ... and finds the ones installed beside it through ../share.
        r = subprocess.run([os.path.join(destdir, p, "sbin", "smrctl"), "profiles"],
                           capture_output=True, text=True, env=self.env)
        if not os.path.isdir(profdir):
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("st8000as0002", r.stdout)

        self.make("uninstall", *var)
        self.assertEqual(files_under(destdir), {})
        self.assertFalse(os.path.exists(os.path.join(destdir, p, "share", "smrctl")))

    def test_install_usr(self):
        # A package's layout: the unit where Debian's packaged units go.
        self.install_uninstall("/usr", "/usr/lib/systemd/system", completion=True)

    def test_install_usr_local(self):
        # No smrctl.bash-completion (yet): install goes on without it.
        self.install_uninstall("/usr/local", "/etc/systemd/system", completion=False)

    def test_in_tree_profiles(self):
        self.make("smrctl")
        r = subprocess.run([os.path.join(self.src, "smrctl", "smrctl"), "profiles"],
                           capture_output=True, text=True, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("st8000as0002", r.stdout)

    def test_user_flags_add(self):
        self.make("clean")
        out = self.make("CFLAGS=-O1", "CPPFLAGS=-D_FORTIFY_SOURCE=2", "LDFLAGS=-Wl,-z,relro")
        cmds = [l.split() for l in out.replace("\\\n", " ").splitlines()
                if " -c " in l or " -o " in l]
        self.assertEqual(len(cmds), 8, out)     # 3 objects, 5 programs
        for c in cmds:
            for flag in ("-O1", "-D_FORTIFY_SOURCE=2", "-D_GNU_SOURCE", "-Wall",
                         "-I../dm-smr/uapi"):
                self.assertIn(flag, c, " ".join(c))
            # The user's CFLAGS come after the build's, so theirs win.
            self.assertGreater(c.index("-O1"), c.index("-Wall"), " ".join(c))
            if "-c" not in c:
                self.assertIn("-Wl,-z,relro", c, " ".join(c))
        self.make("check")

    def test_top_level_uninstall_modules(self):
        # Only this project's modules go, compressed or not; depmod is left
        # to whoever staged DESTDIR.
        destdir = tempfile.mkdtemp(dir=self.tmp)
        kver = "0.0.0-smr-test"
        extra = os.path.join(destdir, "lib", "modules", kver, "extra")
        ours = ["common/smr-common.ko", "dm-smr/dm-smr.ko.xz", "dm-caveat/dm-caveat.ko"]
        for f in ours + ["other/other.ko"]:
            os.makedirs(os.path.dirname(os.path.join(extra, f)), exist_ok=True)
            open(os.path.join(extra, f), "w").close()
        self.make("uninstall", "KVER=" + kver, "PREFIX=/usr", "DESTDIR=" + destdir,
                  where=self.tmp)
        self.assertEqual(sorted(os.listdir(extra)), ["other"])
        self.assertEqual(files_under(destdir), {os.path.join("lib", "modules", kver, "extra",
                                                             "other", "other.ko"): 0o644})

    def test_dkms_copy_is_named(self):
        # make install warns when a DKMS build of the same modules (in
        # updates/dkms/, which depmod prefers) hides what it installs.
        destdir = tempfile.mkdtemp(dir=self.tmp)
        kver = "0.0.0-smr-test"
        args = ["-s", "-C", self.tmp, "dkms-shadow-check", "KVER=" + kver, "DESTDIR=" + destdir]
        r = subprocess.run(["make"] + args, capture_output=True, text=True, env=self.env,
                           timeout=60)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        dkms = os.path.join(destdir, "lib", "modules", kver, "updates", "dkms")
        os.makedirs(dkms)
        open(os.path.join(dkms, "dm-caveat.ko.xz"), "w").close()
        r = subprocess.run(["make"] + args, capture_output=True, text=True, env=self.env,
                           timeout=60)
        self.assertEqual(r.returncode, 0)
        self.assertIn("DKMS has dm-caveat for %s in updates/dkms/" % kver, r.stderr)
        self.assertNotIn("dm-smr for", r.stderr)

    def test_install_names_its_kernel(self):
        # Without the running kernel's headers, make install stops (it
        # used to build for the newest headers installed, silently);
        # with KVER it says which kernel it builds and installs for.
        destdir = tempfile.mkdtemp(dir=self.tmp)
        running = "0.0.0-no-headers-test"
        r = subprocess.run(["make", "-C", self.tmp, "install", "RUNNING_KVER=" + running,
                            "DESTDIR=" + destdir], capture_output=True, text=True,
                           env=self.env, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("the running kernel %s has no headers" % running, r.stderr)
        self.assertIn("make install KVER=<version>", r.stderr)
        self.assertEqual(os.listdir(destdir), [], "nothing built or installed")
        r = subprocess.run(["make", "-s", "-C", self.tmp, "install-kver-check",
                            "RUNNING_KVER=" + running, "KVER=0.0.1-given"],
                           capture_output=True, text=True, env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the modules for kernel 0.0.1-given (/lib/modules/0.0.1-given/build)",
                      r.stdout)


if __name__ == "__main__":
    unittest.main()
