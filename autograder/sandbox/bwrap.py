"""The ``bwrap`` isolation: whether bubblewrap can run here (:func:`bwrap_usable`), its command line
(:func:`bwrap_command`), a root grader's drop to an unprivileged uid of the sandbox's own (:class:`Stage`,
:func:`drop_to_nobody`) and what the isolation text says about it (:func:`sandbox_identity`,
:func:`hardening`)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.sandbox import cgroups, seccomp_policy
from autograder.sandbox.limits import WORKER, Limits, clean_env
from autograder.sandbox.uids import SANDBOX_UID

BWRAP = "bubblewrap (no network, read-only system, private /tmp, own PID namespace)"


@functools.lru_cache(maxsize=1)
def bwrap_usable() -> tuple[bool, str]:
    """Whether bubblewrap is installed and can create its namespaces here."""
    exe = shutil.which("bwrap")
    if not exe:
        return False, "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    try:
        probe = subprocess.run(
            [exe, "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap did not start: {exc}"
    if probe.returncode != 0:
        return False, "bubblewrap cannot create namespaces here: " + probe.stderr.decode(
            errors="replace"
        ).strip()
    return True, exe


@functools.lru_cache(maxsize=1)
def drop_to_nobody() -> bool:
    """Whether the sandbox can run as the unprivileged host uid ``SANDBOX_UID`` although we are root.

    A root grader's bubblewrap maps the sandbox's uid to host root: the kernel then ignores
    RLIMIT_NPROC and the process may write host-global files whose permission check is by uid (e.g.
    sysctls). So a root grader starts bubblewrap as ``nobody`` instead (unprivileged user namespace),
    inside a private mount namespace where the interpreter's directories (maybe under a mode-700
    ``/root``) are first bind-mounted at a path ``nobody`` can reach. Set
    ``AUTOGRADER_SANDBOX_AS_ROOT=1`` to skip this (then SECURITY.md's caveats for root apply)."""
    if os.geteuid() != 0 or os.environ.get("AUTOGRADER_SANDBOX_AS_ROOT") == "1":
        return False
    if not (shutil.which("unshare") and shutil.which("setpriv") and shutil.which("bwrap")):
        return False
    stage = Stage()
    try:
        cmd = stage.wrap(
            [
                "bwrap",
                "--unshare-all",
                "--die-with-parent",
                *_system_binds(),
                *stage.binds(),
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                _sandbox_python(),
                "-I",
                "-c",
                "import numpy",
            ],
            Limits(),
        )
        probe = subprocess.run(cmd, capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
        return probe.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        stage.remove()


def seccomp_filter(deny_memfd: bool) -> int | None:
    """The compiled seccomp filter for a new sandbox, or None where none can be built (the isolation
    text says so: :func:`hardening`)."""

    if not seccomp_policy.available()[0]:
        return None
    return seccomp_policy.filter_fd(deny_memfd=deny_memfd)


def hardening() -> str:
    """What the isolation text adds: the seccomp filter (or its absence) and the sandbox's cgroup (or
    why there is none, and that memfd_create is then denied)."""

    ok, text = seccomp_policy.available()
    parts = [
        f"{text}; no user namespaces inside" if ok else f"{text}: processes inside could create namespaces"
    ]
    cg_ok, cg_text = cgroups.usable()
    if cg_ok and os.environ.get(cgroups.NO_CGROUP_ENV) != "1":
        parts.append(cg_text)
    else:
        why = cg_text if not cg_ok else f"no cgroup (${cgroups.NO_CGROUP_ENV}=1)"
        memfd = "memfd_create denied" if ok else "memfd NOT capped"
        parts.append(f"{why}: memory limited per process only, {memfd}")
    return "; ".join(parts)


def sandbox_identity() -> str:
    if os.geteuid() != 0:
        return f"sandbox runs as your uid {os.geteuid()}, unprivileged"
    if drop_to_nobody():
        return f"sandbox runs as an unprivileged host uid of its own (from {SANDBOX_UID} down), process limit enforced"
    return "sandbox uid maps to host root: process limit NOT enforced (see SECURITY.md)"


class Stage:
    """Bind-mount points, readable by ``nobody``, for the directories the sandbox needs.

    The mounts are made by a root ``unshare --mount`` in its own private mount namespace (never on the
    host), then ``setpriv`` drops to ``SANDBOX_UID`` and execs bubblewrap, which binds the staged
    paths read-only at their real locations."""

    def __init__(self, uid: int = SANDBOX_UID) -> None:
        self.uid = uid
        self.dir = tempfile.mkdtemp(prefix=f"grader-stage-{os.getpid()}-")
        os.chmod(self.dir, 0o755)
        self.pairs: list[tuple[str, str, str]] = []  # (real source, staged path, path in the sandbox)
        for i, (root, inside) in enumerate(_python_roots()):
            staged = os.path.join(self.dir, f"r{i}")
            os.mkdir(staged, 0o755)
            self.pairs.append((root, staged, inside))
        staged = os.path.join(self.dir, "worker.py")
        with open(staged, "w"):
            pass
        os.chmod(staged, 0o644)
        self.pairs.append((str(WORKER), staged, "/grader/worker.py"))

    def binds(self) -> list[str]:
        out = []
        for _, staged, inside in self.pairs:
            out += ["--ro-bind", staged, inside]
        return out

    def wrap(self, bwrap_cmd: list[str], limits: Limits) -> list[str]:
        """Root makes the mounts and a fresh IPC namespace whose System V limits it sets (a process in
        the sandbox cannot change them: the namespace belongs to the host's user namespace), then
        ``setpriv`` drops to the sandbox's uid and bubblewrap runs in that IPC namespace."""
        mounts = [x for real, staged, _ in self.pairs for x in (real, staged)]
        return [
            "unshare",
            "--mount",
            "--ipc",
            "--propagation",
            "private",
            "--",
            "/bin/sh",
            "-c",
            _STAGE_SCRIPT,
            "stage",
            *mounts,
            "--",
            *_ipc_sysctls(limits),
            "--",
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--",
            *bwrap_cmd,
        ]

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


_STAGE_SCRIPT = (
    "set -e\n"
    'while [ "$1" != "--" ]; do mount --bind "$1" "$2"; shift 2; done\nshift\n'
    'while [ "$1" != "--" ]; do echo "$2" > "/proc/sys/kernel/$1"; shift 2; done\nshift\n'
    'exec "$@"\n'
)


def _ipc_sysctls(limits: Limits) -> list[str]:
    """System V IPC limits for the sandbox's own IPC namespace: shared memory counts against
    ``shm_bytes`` in all (and is freed when no process has it attached), a few message queues and
    semaphore sets. The zygote also removes every object between submissions."""
    page = os.sysconf("SC_PAGE_SIZE")
    return [
        "shmmax", str(limits.shm_bytes),
        "shmall", str(max(1, limits.shm_bytes // page)),
        "shmmni", "32",
        "shm_rmid_forced", "1",
        "msgmni", "16",
        "sem", "250 4096 32 16",
    ]  # fmt: skip


VENV_IN_SANDBOX = "/venv"


def _python_roots() -> list[tuple[str, str]]:
    """(host directory, path inside the sandbox) for the interpreter and the installed packages.

    A virtual environment is mounted at ``/venv`` whatever its host path (a checkout under /tmp would
    otherwise be hidden by the sandbox's private /tmp); Python finds its ``pyvenv.cfg`` from the path it
    is started by. The base interpreter keeps its real path, which ``pyvenv.cfg`` names."""
    base = {os.path.realpath(sys.base_prefix), str(Path(os.path.realpath(sys.executable)).parent.parent)}
    pairs = [(root, root) for root in sorted(base)]
    if os.path.realpath(sys.prefix) not in base:
        pairs.append((os.path.realpath(sys.prefix), VENV_IN_SANDBOX))
    return pairs


def _sandbox_python() -> str:
    """The interpreter's path inside the sandbox."""
    if os.path.realpath(sys.prefix) != os.path.realpath(sys.base_prefix):
        return os.path.join(VENV_IN_SANDBOX, os.path.relpath(sys.executable, sys.prefix))
    return sys.executable


def _system_binds() -> list[str]:
    out = []
    for path in (
        "/usr",
        "/bin",
        "/lib",
        "/lib64",
        "/lib32",
        "/sbin",
        "/etc/alternatives",
        "/etc/ld.so.cache",
    ):
        if os.path.exists(path):
            out += ["--ro-bind", path, path]
    return out


_NAMESPACES_BUT_IPC = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
)


def bwrap_command(
    limits: Limits, ctrl_fd: int, stage: Stage | None = None, seccomp_fd: int | None = None
) -> list[str]:
    """The bubblewrap command line; with ``stage`` the interpreter and worker come from staged mounts;
    with ``seccomp_fd`` (:func:`autograder.sandbox.seccomp_policy.filter_fd`) no process inside can create a
    namespace (``--disable-userns`` and the filter) or reach the kernel interfaces the filter denies."""
    # with a stage, the IPC namespace is the one root prepared (with limits); otherwise bubblewrap's own
    namespaces = ["--unshare-all"] if stage is None else [*_NAMESPACES_BUT_IPC]
    if seccomp_fd is not None:
        if "--unshare-user" not in namespaces:
            namespaces.append("--unshare-user")  # --disable-userns needs it (--unshare-all only tries)
        namespaces += ["--disable-userns", "--assert-userns-disabled", "--seccomp", str(seccomp_fd)]
    cmd = ["bwrap", *namespaces, "--die-with-parent", "--new-session", "--uid", "65534", "--gid", "65534"]
    cmd += _system_binds()
    if stage is not None:
        cmd += stage.binds()
    else:
        for root, inside in _python_roots():
            cmd += ["--ro-bind", root, inside]
        cmd += ["--ro-bind", str(WORKER), "/grader/worker.py"]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmpfs_bytes), "--tmpfs", "/tmp"]
    cmd += ["--dir", "/tmp/work", "--chdir", "/tmp/work", "--remount-ro", "/"]
    # /dev is a tmpfs without a size limit and /proc has host-global files (sysctls, sysrq-trigger)
    # whose write check is by uid: both read-only (device nodes stay usable on a read-only mount).
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/proc"]
    cmd += ["--clearenv"]
    for key, value in clean_env("/tmp").items():
        cmd += ["--setenv", key, value]
    cmd += [_sandbox_python(), "-I", "-B", "/grader/worker.py", str(ctrl_fd), "/tmp/work", "sandbox"]
    return cmd
