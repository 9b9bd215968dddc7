# SPDX-License-Identifier: GPL-2.0
"""tests/lib/dmlib.py - device-mapper calls from Python through
libdevmapper (ctypes), for checkers that create and remove devices many
times: under QEMU's software emulation starting a process costs about
0.3 s and dmsetup waiting for udev 1-2 s more, per call.

Nodes: create() returns a node of its own in a private directory
(mknod from the device number) and tables name devices by "major:minor",
so nothing waits for udev and nothing depends on /dev/mapper: udev still
sees the devices and may rename or drop /dev/mapper/NAME late (a remove
event handled after the next create of the same name), which is why the
names there are not used. DM_DISABLE_UDEV (set before the library is
loaded) keeps libdevmapper from waiting for udev; remove() rides out
udev's probes with libdevmapper's retry.
"""

import atexit
import ctypes
import ctypes.util
import os
import shutil
import stat
import tempfile
import time

os.environ['DM_DISABLE_UDEV'] = '1'

# enum in libdevmapper.h
DM_DEVICE_CREATE, DM_DEVICE_REMOVE, DM_DEVICE_INFO = 0, 2, 6
DM_DEVICE_STATUS, DM_DEVICE_TARGET_MSG = 10, 17


class DmError(RuntimeError):
    pass


class _Info(ctypes.Structure):
    _fields_ = [('exists', ctypes.c_int), ('suspended', ctypes.c_int),
                ('live_table', ctypes.c_int), ('inactive_table', ctypes.c_int),
                ('open_count', ctypes.c_int32), ('event_nr', ctypes.c_uint32),
                ('major', ctypes.c_uint32), ('minor', ctypes.c_uint32),
                ('read_only', ctypes.c_int), ('target_count', ctypes.c_int32),
                ('deferred_remove', ctypes.c_int), ('internal_suspend', ctypes.c_int)]


def _load():
    name = ctypes.util.find_library('devmapper') or 'libdevmapper.so.1.02.1'
    lib = ctypes.CDLL(name)
    vp, cp, u64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64
    sig = {
        'dm_task_create': (vp, [ctypes.c_int]),
        'dm_task_destroy': (None, [vp]),
        'dm_task_set_name': (ctypes.c_int, [vp, cp]),
        'dm_task_add_target': (ctypes.c_int, [vp, u64, u64, cp, cp]),
        'dm_task_run': (ctypes.c_int, [vp]),
        'dm_task_retry_remove': (ctypes.c_int, [vp]),
        'dm_task_get_info': (ctypes.c_int, [vp, ctypes.POINTER(_Info)]),
        'dm_task_set_sector': (ctypes.c_int, [vp, u64]),
        'dm_task_set_message': (ctypes.c_int, [vp, cp]),
        'dm_task_get_message_response': (cp, [vp]),
        'dm_get_next_target': (vp, [vp, vp, ctypes.POINTER(u64), ctypes.POINTER(u64),
                                    ctypes.POINTER(cp), ctypes.POINTER(cp)]),
        'dm_udev_set_sync_support': (None, [ctypes.c_int]),
        'dm_task_update_nodes': (None, []),
    }
    for fn, (res, args) in sig.items():
        f = getattr(lib, fn)
        f.restype, f.argtypes = res, args
    lib.dm_udev_set_sync_support(0)
    return lib


_lib = _load()


class _Task:
    def __init__(self, kind, name):
        self.t = _lib.dm_task_create(kind)
        if not self.t:
            raise DmError('dm_task_create failed')
        if not _lib.dm_task_set_name(self.t, name.encode()):
            self.close()
            raise DmError('bad device name %r' % name)

    def run(self, what):
        ok = _lib.dm_task_run(self.t)
        # Node changes are queued until this (dmsetup does the same).
        _lib.dm_task_update_nodes()
        if not ok:
            raise DmError('%s failed (the kernel log says why)' % what)

    def close(self):
        if self.t:
            _lib.dm_task_destroy(self.t)
            self.t = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_NODES = tempfile.mkdtemp(prefix='dmlib.')
atexit.register(shutil.rmtree, _NODES, True)


class Dev:
    """A device made by create(): .path (its node), .spec ("major:minor",
    for tables)."""
    def __init__(self, name, major, minor):
        self.name, self.spec = name, '%d:%d' % (major, minor)
        self.path = os.path.join(_NODES, name)
        if os.path.exists(self.path):
            os.unlink(self.path)
        os.mknod(self.path, stat.S_IFBLK | 0o600, os.makedev(major, minor))

    @classmethod
    def existing(cls, path):
        """A Dev for a device made elsewhere, by its /dev path."""
        d = cls.__new__(cls)
        rdev = os.stat(path).st_rdev
        d.name, d.path = os.path.basename(path), path
        d.spec = '%d:%d' % (os.major(rdev), os.minor(rdev))
        return d


def create(name, table):
    """Create, load and resume NAME with TABLE (lines of "start len type
    params"); returns a Dev."""
    with _Task(DM_DEVICE_CREATE, name) as t:
        for line in table.strip().splitlines():
            start, length, ttype, params = line.split(None, 3)
            if not _lib.dm_task_add_target(t.t, int(start), int(length),
                                           ttype.encode(), params.encode()):
                raise DmError('bad table line %r' % line)
        t.run('create %s' % name)
        info = _Info()
        if not _lib.dm_task_get_info(t.t, ctypes.byref(info)) or not info.exists:
            raise DmError('create %s: no device afterwards' % name)
        return Dev(name, info.major, info.minor)


def remove(name, tries=4):
    """Remove NAME. libdevmapper retries a busy device for 5 s (udev's
    probe may hold it open); under a loaded TCG that is not always enough,
    so try up to @tries times."""
    for i in range(tries):
        try:
            with _Task(DM_DEVICE_REMOVE, name) as t:
                _lib.dm_task_retry_remove(t.t)
                t.run('remove %s' % name)
            break
        except DmError:
            if i == tries - 1:
                raise
            time.sleep(1)
    try:
        os.unlink(os.path.join(_NODES, name))
    except FileNotFoundError:
        pass


def exists(name):
    with _Task(DM_DEVICE_INFO, name) as t:
        t.run('info %s' % name)
        info = _Info()
        _lib.dm_task_get_info(t.t, ctypes.byref(info))
        return bool(info.exists)


def message(name, msg, sector=0):
    """A target message; returns its response ('' if none)."""
    with _Task(DM_DEVICE_TARGET_MSG, name) as t:
        _lib.dm_task_set_sector(t.t, sector)
        _lib.dm_task_set_message(t.t, msg.encode())
        t.run('message %r to %s' % (msg, name))
        r = _lib.dm_task_get_message_response(t.t)
        return r.decode() if r else ''


def status(name):
    """The status line(s) of NAME, as dmsetup status prints them."""
    with _Task(DM_DEVICE_STATUS, name) as t:
        t.run('status %s' % name)
        out, nxt = [], None
        start, length = ctypes.c_uint64(), ctypes.c_uint64()
        ttype, params = ctypes.c_char_p(), ctypes.c_char_p()
        while True:
            nxt = _lib.dm_get_next_target(t.t, nxt, ctypes.byref(start), ctypes.byref(length),
                                          ctypes.byref(ttype), ctypes.byref(params))
            if ttype.value:
                out.append('%d %d %s %s' % (start.value, length.value, ttype.value.decode(),
                                            (params.value or b'').decode()))
            if not nxt:
                return '\n'.join(out)
