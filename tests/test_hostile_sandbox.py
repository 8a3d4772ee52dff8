"""The sandbox against a hostile class, third round (issue 20, attacks 3 and 4).

Each test is an attack that worked on 000f3b4 (bubblewrap 0.8, grader as root) and the check that it no
longer does: a nested user namespace gave the sandbox every capability (``CapEff 000001ffffffffff``), and
``memfd_create`` held memory outside every limit (1.5 GB under a 512 MB address-space limit; the
open-file limit was the grader's 20 000). The probes run as a submission's code in the real sandbox
(``autograder.sandbox.isolation.Worker``, the same command line as ``grade``) and return what they saw as plain JSON.
"""

from __future__ import annotations

import platform
import time

import pytest

from autograder.grading.submission import Submission
from autograder.sandbox import bwrap, cgroups, seccomp_policy
from autograder.sandbox.isolation import Worker, resolve_isolation
from autograder.sandbox.limits import Limits
from autograder.testing import WorkerCrashed

PROBE = r'''
import ctypes, errno, os, resource, subprocess, threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CLONE_NEW = {"user": 0x10000000, "mount": 0x20000, "net": 0x40000000, "uts": 0x4000000,
             "ipc": 0x8000000, "pid": 0x20000000, "cgroup": 0x2000000}
SIGCHLD = 17


def cap_eff():
    with open("/proc/self/status") as fh:
        return next(line.split()[1] for line in fh if line.startswith("CapEff"))


def _errno(r):
    return 0 if r >= 0 else ctypes.get_errno()


def unshare_all():
    """unshare(NEWUSER|NEWNS|NEWNET) as in the issue, then the capabilities this process holds."""
    r = libc.unshare(CLONE_NEW["user"] | CLONE_NEW["mount"] | CLONE_NEW["net"])
    return {"errno": _errno(r), "cap_eff": cap_eff()}


def unshare_each():
    return {name: _errno(libc.unshare(flag)) for name, flag in CLONE_NEW.items()}


def clone_new_user():
    """clone(CLONE_NEWUSER) through the raw system call (glibc's unshare wrapper is not the only door)."""
    r = libc.syscall(56, CLONE_NEW["user"] | SIGCHLD, 0, 0, 0, 0)
    if r == 0:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
    return _errno(r)


def unshare_binary():
    return subprocess.run(["unshare", "-U", "-r", "true"], capture_output=True).returncode


def denied():
    """Harmless calls of each denied interface; each fails with EPERM."""
    return {
        "setns": _errno(libc.syscall(308, -1, 0)),
        "mount": _errno(libc.syscall(165, b"none", b"/tmp", b"tmpfs", 0, 0)),
        "keyctl": _errno(libc.syscall(250, 1, 0)),  # KEYCTL_JOIN_SESSION_KEYRING
        "bpf": _errno(libc.syscall(321, 0, 0, 0)),
        "userfaultfd": _errno(libc.syscall(323, 0)),
        "ptrace": _errno(libc.syscall(101, 0, 0, 0, 0)),  # PTRACE_TRACEME
        "perf_event_open": _errno(libc.syscall(298, 0, 0, -1, -1, 0)),
        "io_uring_setup": _errno(libc.syscall(425, 1, 0)),
    }


def clone3_errno():
    """clone3(NULL, 0): ENOSYS under the filter (glibc then falls back to clone), EFAULT/EINVAL without."""
    return _errno(libc.syscall(435, 0, 0))


def still_works():
    """What honest code needs keeps working: threads, subprocesses, fork."""
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    forked = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return {"thread": True, "subprocess": subprocess.run(["true"]).returncode, "fork": forked}


def open_files():
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def memfd_hog(n, size):
    """Up to n memfds of ``size`` bytes each, written (the issue: 100 x 15 MB); how much was held."""
    held, fds = 0, []
    try:
        for _ in range(n):
            fd = os.memfd_create("hog")
            fds.append(fd)
            os.ftruncate(fd, size)
            os.pwrite(fd, b"x" * size, 0)
            held += size
    except OSError as exc:
        return {"held": held, "stopped": errno.errorcode.get(exc.errno, str(exc.errno))}
    return {"held": held, "stopped": ""}


def dev_shm():
    try:
        with open("/dev/shm/hog", "wb") as fh:
            fh.write(b"x" * (1 << 20))
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return "written"
'''


def _bwrap_or_skip() -> None:
    mode, why = resolve_isolation("auto")
    if mode != "bwrap":
        pytest.skip(f"needs bubblewrap: {why}")
    if platform.machine() != "x86_64":
        pytest.skip("the probes use x86_64 system call numbers")


@pytest.fixture()
def probe(monkeypatch):
    _bwrap_or_skip()
    subs: list[tuple[Submission, Worker]] = []

    def run(target: str, *args, limits: Limits | None = None, timeout: float = 20.0):
        limits = limits or Limits(call_timeout=timeout, load_timeout=20.0, submission_timeout=60.0)
        worker = Worker(limits=limits, mode="bwrap")
        sub = Submission(worker=worker, cells=[(0, PROBE)], limits=limits, deadline=time.monotonic() + 60)
        subs.append((sub, worker))
        res = sub.call(target, *args)
        assert res.error is None, (target, res.error)
        return res.value

    yield run
    for sub, worker in subs:
        sub.close()
        worker.stop(close=True)


def test_no_capabilities_through_a_nested_user_namespace(probe):
    """Attack 4: unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWNET) gave CapEff 000001ffffffffff."""
    assert seccomp_policy.available()[0], seccomp_policy.available()[1]
    got = probe("unshare_all")
    assert got == {"errno": 1, "cap_eff": "0000000000000000"}  # EPERM, and still no capabilities
    assert set(probe("unshare_each").values()) == {1}
    assert probe("clone_new_user") == 1
    assert probe("unshare_binary") != 0


def test_denied_kernel_interfaces_fail_with_eperm(probe):
    assert probe("denied") == {name: 1 for name in probe("denied")}
    assert probe("clone3_errno") == 38  # ENOSYS


def test_honest_code_still_runs_threads_subprocesses_and_forks(probe):
    assert probe("still_works") == {"thread": True, "subprocess": 0, "fork": 7}


def test_the_open_file_limit_is_low(probe):
    assert probe("open_files") == Limits().open_files == 64


def test_memfd_memory_is_bounded_by_the_sandbox(probe, monkeypatch):
    """Attack 3: 100 memfds of 15 MB (1.5 GB) under a 512 MB address-space limit. With a cgroup the
    memory counts against the sandbox's limit (the child is stopped, by ENOMEM/ENOSPC or the cgroup's
    OOM killer); without one memfd_create is denied."""
    limits = Limits(
        call_timeout=20.0,
        load_timeout=20.0,
        submission_timeout=60.0,
        address_space_bytes=512 << 20,
        memory_bytes=256 << 20,
    )
    cap = limits.memory_bytes
    worker = Worker(limits=limits, mode="bwrap")
    sub = Submission(worker=worker, cells=[(0, PROBE)], limits=limits, deadline=time.monotonic() + 60)
    try:
        try:
            res = sub.call("memfd_hog", 100, 15 << 20)
        except WorkerCrashed:  # the cgroup's OOM killer stopped the child: it held nothing it could use
            res = None
        if cgroups.usable()[0]:
            assert res is None or res.value["held"] <= cap, res.value
            peak = worker.cgroup.memory_peak()
            assert 0 < peak <= cap, peak  # the whole sandbox, zygote included, never held more
        else:
            assert res is not None and res.value == {"held": 0, "stopped": "EPERM"}
    finally:
        sub.close()
        worker.stop(close=True)


def test_memfd_is_denied_without_a_cgroup(probe, monkeypatch):
    monkeypatch.setenv(cgroups.NO_CGROUP_ENV, "1")
    assert probe("memfd_hog", 100, 15 << 20) == {"held": 0, "stopped": "EPERM"}
    assert "memfd_create denied" in bwrap.hardening()


def test_dev_shm_is_not_writable(probe):
    assert probe("dev_shm") in ("EROFS", "ENOENT", "EACCES")


def test_the_isolation_text_names_the_filter_and_the_cgroup(monkeypatch):
    _bwrap_or_skip()
    _, text = resolve_isolation("bwrap")
    assert "seccomp filter" in text and "no user namespaces inside" in text
    assert ("own cgroup per sandbox" in text) == cgroups.usable()[0]
    monkeypatch.setenv(cgroups.NO_CGROUP_ENV, "1")
    assert "no cgroup" in bwrap.hardening() and "memory limited per process only" in bwrap.hardening()


SCRATCH_PROBE = r'''
import os


def hide():
    """Leave a file in the sandbox's scratch folder (the parent of this child's own folder), then take
    the folder's read permission away, so a cleanup that lists it finds nothing to remove."""
    scratch = os.path.dirname(os.getcwd())
    with open(os.path.join(scratch, "left_by_a"), "w") as fh:
        fh.write("a's answer")
    os.chmod(scratch, 0o300)
    return scratch


def look():
    scratch = os.path.dirname(os.getcwd())
    try:
        os.chmod(scratch, 0o700)
    except OSError:
        pass
    return sorted(os.listdir(scratch))
'''


def test_a_scratch_folder_made_unlistable_is_still_emptied():
    """Found while splitting the sandbox (issue 19): a child could chmod the scratch folder to 0o300;
    the zygote then could not list it, removed nothing and reported a clean reap, so the next
    submission in the same sandbox read the file it left. Now the zygote gives the folder back its
    permissions and empties it, or fails the reap (and the sandbox restarts)."""
    _bwrap_or_skip()
    limits = Limits()
    worker = Worker(limits=limits, mode="bwrap")
    try:
        a = Submission(
            worker=worker, cells=[(0, SCRATCH_PROBE)], limits=limits, deadline=time.monotonic() + 60
        )
        assert a.call("hide").ok
        a.close()
        b = Submission(
            worker=worker, cells=[(0, SCRATCH_PROBE)], limits=limits, deadline=time.monotonic() + 60
        )
        seen = b.call("look")
        b.close()
        assert seen.ok, seen.describe_failure()
        assert "left_by_a" not in seen.value, seen.value
    finally:
        worker.stop(close=True)
