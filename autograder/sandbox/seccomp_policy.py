"""The seccomp filter every sandboxed process runs under (bubblewrap's ``--seccomp FD``).

bubblewrap's namespaces leave the whole kernel reachable: a process inside could create a user
namespace of its own (``unshare(CLONE_NEWUSER)``) and hold every capability there, which opens the
kernel interfaces (nf_tables, mounts of its own filesystems, ...) behind most unprivileged privilege
escalations. The filter, compiled by libseccomp (through the ``pyseccomp`` ctypes binding), allows
everything except:

* **namespaces**: ``unshare``, ``setns``, and ``clone`` with any ``CLONE_NEW*`` flag; ``clone3`` answers
  ``ENOSYS`` (its flags sit in memory a filter cannot read; glibc then falls back to ``clone``), as in
  Docker's default profile;
* **mounts**: ``mount``, ``umount2``, ``pivot_root``, ``chroot`` and the new mount API;
* **kernel interfaces a grader never needs**: ``keyctl``/``add_key``/``request_key``, ``bpf``,
  ``userfaultfd``, ``ptrace``, ``process_vm_readv``/``writev``, ``perf_event_open``, ``io_uring_*``,
  ``kexec_*``, module loading, ``reboot``, ``swapon``/``swapoff``, ``acct``, ``quotactl``, handles
  (``open_by_handle_at``), ``iopl``/``ioperm``, ``syslog``, clock and host-name setters, ``fanotify_init``;
* with ``deny_memfd`` (where no cgroup charges it): ``memfd_create`` (its memory sits outside the
  address-space limit);
* with ``deny_network`` (the ``uid`` isolation, which has no network namespace): ``socket`` for any
  family but ``AF_UNIX``, and ``inotify_init``/``inotify_init1`` (no watching the grader's files).

Denied calls fail with ``EPERM`` (a program sees an ordinary "operation not permitted"); system calls
of another architecture's ABI kill the process (libseccomp's default for a foreign architecture).
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile

__all__ = ["DENIED", "available", "filter_fd", "CLONE_NEW_FLAGS"]

DENIED = (
    "unshare",
    "setns",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "userfaultfd",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "open_by_handle_at",
    "name_to_handle_at",
    "iopl",
    "ioperm",
    "syslog",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "fanotify_init",
    "vhangup",
    "nfsservctl",
    "uselib",
)
CLONE_NEW_FLAGS = {
    "CLONE_NEWTIME": 0x00000080,
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}


@functools.lru_cache(maxsize=1)
def available() -> tuple[bool, str]:
    """Whether a filter can be built here (the pyseccomp binding over the system's libseccomp)."""
    try:
        _compile(False)
    except Exception as exc:  # noqa: BLE001 - ImportError, OSError (no libseccomp), a binding error
        return False, f"no seccomp filter ({type(exc).__name__}: {exc}; install libseccomp2 and pyseccomp)"
    return True, "seccomp filter (no namespaces, mounts, keyctl, bpf, userfaultfd, ptrace, perf_event_open)"


@functools.lru_cache(maxsize=4)
def _compile(deny_memfd: bool, deny_network: bool = False) -> bytes:
    import pyseccomp as sc

    f = sc.SyscallFilter(sc.ALLOW)
    eperm = sc.ERRNO(errno.EPERM)
    names = [*DENIED, *(("memfd_create",) if deny_memfd else ())]
    if deny_network:
        names += ["inotify_init", "inotify_init1"]
        f.add_rule(eperm, "socket", sc.Arg(0, sc.NE, 1))  # AF_UNIX = 1 (the worker's channels)
    for name in names:
        try:
            f.add_rule(eperm, name)
        except (ValueError, OSError):  # a call this architecture does not have (e.g. iopl on arm64)
            continue
    for flag in CLONE_NEW_FLAGS.values():  # clone(flags, ...): flags is the first argument on every ABI
        f.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as fh:
        f.export_bpf(fh)
        fh.seek(0)
        return fh.read()


def filter_fd(deny_memfd: bool = False, deny_network: bool = False) -> int:
    """A file descriptor holding the compiled filter (bubblewrap, or the ``uid`` isolation's worker,
    reads it to the end), inheritable by the child that gets it through ``pass_fds``; the caller closes
    it once that child is started."""
    data = _compile(deny_memfd, deny_network)
    fd = os.memfd_create("autograder-seccomp", 0) if hasattr(os, "memfd_create") else None
    if fd is None:
        fh = tempfile.TemporaryFile()
        fd = os.dup(fh.fileno())
        fh.close()
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
