"""The ``uid`` isolation, for containers without user namespaces (Gradescope): student code runs as an
unprivileged host uid of its own, with ``no_new_privs`` and a seccomp filter, in a private directory."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from autograder.sandbox import cgroups, seccomp_policy, uids
from autograder.sandbox.limits import PROJECT_ROOT, WORKER, clean_env

UID_ISOLATION = (
    "separate uid (no user namespaces here, so no bubblewrap): student code runs as an unprivileged host "
    "uid of its own with no_new_privs and a seccomp filter (no network but Unix sockets, no namespaces, "
    "no inotify), rlimits, in a private directory; the grader's files are unreadable to it"
)


def uid_usable() -> tuple[bool, str]:
    """Whether the ``uid`` isolation can run: a root grader, ``setpriv``, and a seccomp filter."""

    if os.geteuid() != 0:
        return False, "the uid isolation needs a root grader (it gives student code a uid of its own)"
    if not shutil.which("setpriv"):
        return False, "the uid isolation needs setpriv (util-linux)"
    ok, why = seccomp_policy.available()
    return (True, "") if ok else (False, why)


def uid_hardening() -> str:

    ok, text = cgroups.usable()
    if ok and os.environ.get(cgroups.NO_CGROUP_ENV) != "1":
        return text
    return f"{text if not ok else 'no cgroup'}: memory limited per process only, memfd_create denied"


def command(sandbox, fd: int, passed: list[int]) -> tuple[list[str], str, dict]:
    """The ``uid`` isolation's command line, working directory and environment for ``sandbox`` (an
    ``autograder.sandbox.isolation.Worker``): a uid of its own (RLIMIT_NPROC then counts only its
    tasks), a private directory only it can enter, a copy of the worker script (the grader's files stay
    unreadable), ``no_new_privs`` and the seccomp filter (its fd appended to ``passed``), loaded by the
    worker before it reads any student code. What it makes is recorded on ``sandbox`` as it is made,
    so ``sandbox.stop()`` removes it if a later step fails."""

    # not "nobody" itself: every process of this uid is killed when the sandbox stops
    sandbox.uid = uids.take_uid(exclude=(uids.SANDBOX_UID,))
    sandbox.tmpdir = tempfile.mkdtemp(prefix=f"grader-uid-{os.getpid()}-")
    os.chmod(sandbox.tmpdir, 0o711)
    work = os.path.join(sandbox.tmpdir, "work")
    os.mkdir(work, 0o700)
    os.chown(work, sandbox.uid, sandbox.uid)
    script = os.path.join(sandbox.tmpdir, "worker.py")
    shutil.copyfile(WORKER, script)
    os.chmod(script, 0o644)
    sandbox.cgroup = cgroups.new_cgroup(sandbox.limits)
    seccomp = seccomp_policy.filter_fd(deny_memfd=sandbox.cgroup is None, deny_network=True)
    passed.append(seccomp)
    cmd = [
        "setpriv",
        f"--reuid={sandbox.uid}",
        f"--regid={sandbox.uid}",
        "--clear-groups",
        "--no-new-privs",
        "--",
        sys.executable,
        "-I",
        "-B",
        script,
        str(fd),
        os.path.join(work, "scratch"),
        "uid",
        str(seccomp),
        str(PROJECT_ROOT),
    ]
    if sandbox.cgroup is not None:
        cmd = sandbox.cgroup.wrap(cmd)
    return cmd, work, clean_env(work)
