"""Start and talk to the sandboxed worker (``sandbox_worker.py``) from the grader's side.

With bubblewrap the worker sees a read-only system and Python environment, its own empty ``/tmp``
and nothing of the course: not ``solutions/``, ``autograder/``, ``pipelab/``, the gradebook, other
submissions or the instructor's home. It has no network and its own PID namespace, so killing the
sandbox kills every process a submission started. Without bubblewrap (macOS, containers without user
namespaces) the fallback keeps resource limits, a scrubbed environment and a temporary working
directory, and every report says so.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.layout import REPO
from autograder.core.untrusted import JSON_ESCAPE_TO_CLEAN_BYTES, clean_tree
from autograder.sandbox import cgroups, seccomp_policy
from autograder.sandbox.worker import MAX_REPLY_BYTES, MAX_REPLY_TOKENS, _pids_of_uid, reply_cost
from autograder.testing import CallTimeout, Result, WorkerCrashed, encode_arg

HERE = Path(__file__).resolve().parent
WORKER = HERE / "worker.py"  # run as a script, inside the sandbox, importing nothing of autograder
PROJECT_ROOT = REPO.root
HEADER_SIZE = 4
PIPELINE_WINDOW = 8  # call requests in flight at once (see Worker.call_many)
PIPELINE_BYTES = 64 * 1024  # ... and no more request bytes than this, beyond the first
DRAIN_BUDGET = 0.05  # seconds to wait for answers nobody reads before starting a fresh child instead

BWRAP = "bubblewrap (no network, read-only system, private /tmp, own PID namespace)"
SANDBOX_UID = 65534  # host uid ("nobody") the sandbox runs as when the grader runs as root
# Each live sandbox gets its own uid below SANDBOX_UID, so RLIMIT_NPROC (counted per host uid) is a
# per-sandbox budget: a fork storm in one slot cannot make another student's fork or thread fail.
# The pool is host-wide: a uid is held through an flock'd file, so two grader processes on one machine
# (shards, a second course, parallel test runs) never share a uid; a dead holder releases it.
_UID_POOL = range(SANDBOX_UID, SANDBOX_UID - 256, -1)
# A fixed host path (not $TMPDIR, which a grader may set privately): only a root grader takes uids.
_UID_LOCK_DIR = Path(
    "/run/autograder-sandbox-uids" if os.access("/run", os.W_OK) else "/tmp/autograder-sandbox-uids"
)
_uids_held: dict[int, int] = {}  # uid -> fd of its lock file
_uid_lock = threading.Lock()


def _take_uid(exclude: tuple[int, ...] = ()) -> int:
    _UID_LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    with _uid_lock:
        for uid in _UID_POOL:
            if uid in _uids_held or uid in exclude:
                continue
            fd = os.open(_UID_LOCK_DIR / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            _uids_held[uid] = fd
            return uid
    raise RuntimeError(f"more than {len(_UID_POOL)} sandboxes at once on this host")


def _give_uid(uid: int) -> None:
    with _uid_lock:
        fd = _uids_held.pop(uid, None)
        if fd is not None:
            os.close(fd)


LIMITS_ENV = "AUTOGRADER_LIMITS"  # JSON object overriding rubric limits (tests; an instructor's override)
FALLBACK = "fallback: resource limits + scrubbed environment + temporary directory (NOT a sandbox)"


@dataclass(frozen=True)
class Limits:
    call_timeout: float = 2.0  # wall clock per call into student code
    load_timeout: float = 5.0  # wall clock to run the notebook's cells
    submission_timeout: float = 60.0  # wall clock for one submission, all calls included
    cpu_seconds: int = 60
    address_space_bytes: int = 4 << 30
    file_bytes: int = 16 << 20
    processes: int = 16  # RLIMIT_NPROC (tasks, threads included) per sandbox; the kernel ignores it for
    # host root, so it binds only when the sandbox runs as an unprivileged host uid (see sandbox_identity)
    tmpfs_bytes: int = 256 << 20
    open_files: int = 64  # RLIMIT_NOFILE per process: bounds what open files (memfds, pipes) can pin
    # the sandbox's cgroup: all its processes, their tmpfs files and memfds (autograder.sandbox.cgroups)
    memory_bytes: int = 1 << 30
    shm_bytes: int = 64 << 20  # System V shared memory in the sandbox's IPC namespace (kernel.shmall)

    @classmethod
    def from_rubric(cls, data: dict | None) -> Limits:
        """The rubric's ``limits``, then the overrides in ``$AUTOGRADER_LIMITS`` (a JSON object), if set."""
        data = dict(data or {})
        override = os.environ.get(LIMITS_ENV, "").strip()
        if override:
            try:
                extra = json.loads(override)
            except json.JSONDecodeError as exc:
                raise ValueError(f"${LIMITS_ENV} is not a JSON object: {exc}") from None
            if not isinstance(extra, dict):
                raise ValueError(f"${LIMITS_ENV} is not a JSON object")
            data.update(extra)
        defaults = cls()
        known = {k: type(getattr(defaults, k))(v) for k, v in data.items() if hasattr(defaults, k)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown limits in rubric: {', '.join(unknown)}")
        return cls(**known)

    def for_child(self) -> dict:
        return {
            "cpu_seconds": self.cpu_seconds,
            "address_space_bytes": self.address_space_bytes,
            "file_bytes": self.file_bytes,
            "processes": self.processes,
            "open_files": self.open_files,
        }


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
    stage = _Stage()
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


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (the uid isolation's), in rounds until none is left."""

    for _ in range(100):
        pids = _pids_of_uid(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def _seccomp_fd(deny_memfd: bool) -> int | None:
    """The compiled seccomp filter for a new sandbox, or None where none can be built (the isolation
    text says so: :func:`hardening`)."""

    if not seccomp_policy.available()[0]:
        return None
    return seccomp_policy.filter_fd(deny_memfd=deny_memfd)


def _new_cgroup(limits: Limits):
    """The sandbox's own memory and pids cgroup (``autograder.sandbox.cgroups``), or None where none can be made."""

    if os.environ.get(NO_CGROUP_ENV) == "1" or not cgroups.usable()[0]:
        return None
    try:
        # pids: the student's tasks plus bubblewrap, its init, the zygote and the staging shell
        return cgroups.SandboxCgroup(limits.memory_bytes, limits.processes + 8)
    except OSError:
        return None


NO_CGROUP_ENV = "AUTOGRADER_NO_CGROUP"  # "1": no cgroup even where one could be made (tests, comparisons)


def _uid_hardening() -> str:

    ok, text = cgroups.usable()
    if ok and os.environ.get(NO_CGROUP_ENV) != "1":
        return text
    return f"{text if not ok else 'no cgroup'}: memory limited per process only, memfd_create denied"


def hardening() -> str:
    """What the isolation text adds: the seccomp filter (or its absence) and the sandbox's cgroup (or
    why there is none, and that memfd_create is then denied)."""

    ok, text = seccomp_policy.available()
    parts = [
        f"{text}; no user namespaces inside" if ok else f"{text}: processes inside could create namespaces"
    ]
    cg_ok, cg_text = cgroups.usable()
    if cg_ok and os.environ.get(NO_CGROUP_ENV) != "1":
        parts.append(cg_text)
    else:
        why = cg_text if not cg_ok else f"no cgroup (${NO_CGROUP_ENV}=1)"
        memfd = "memfd_create denied" if ok else "memfd NOT capped"
        parts.append(f"{why}: memory limited per process only, {memfd}")
    return "; ".join(parts)


def sandbox_identity() -> str:
    if os.geteuid() != 0:
        return f"sandbox runs as your uid {os.geteuid()}, unprivileged"
    if drop_to_nobody():
        return f"sandbox runs as an unprivileged host uid of its own (from {SANDBOX_UID} down), process limit enforced"
    return "sandbox uid maps to host root: process limit NOT enforced (see SECURITY.md)"


class _Stage:
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


ISOLATIONS = ("bwrap", "uid", "none", "auto")
#: what each ``--isolation`` choice means, for every command's help
ISOLATION_HELP = {
    "bwrap": "refuse to run unless bubblewrap can sandbox student code",
    "auto": "bubblewrap where it can run, else the fallback (said so)",
    "uid": "a separate uid with seccomp, for containers without user namespaces (Gradescope)",
    "none": "the fallback, NOT a sandbox: student code runs as you (SECURITY.md)",
}


def add_isolation_argument(parser, *, default: str, choices: tuple[str, ...] = ISOLATIONS) -> None:
    """The one definition of ``--isolation``: the modes of :func:`resolve_isolation`; a command that must
    not fall back silently (``grade``) leaves ``auto`` out of its ``choices``."""
    if default not in choices or not set(choices) <= set(ISOLATIONS):
        raise ValueError(f"--isolation: {default!r} / {choices!r} are not modes of {ISOLATIONS!r}")
    parser.add_argument(
        "--isolation",
        choices=list(choices),
        default=default,
        help="; ".join(f"{c}{' (default)' if c == default else ''}: {ISOLATION_HELP[c]}" for c in choices),
    )


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


def resolve_isolation(requested: str = "bwrap", container: bool = False) -> tuple[str, str]:
    """Return ("bwrap"|"uid"|"fallback", human description).

    ``bwrap`` (what ``grade`` uses unless told otherwise) requires bubblewrap: RuntimeError, saying how
    to go on, if it cannot run. With ``container`` (Gradescope: a container holding nothing but the
    autograder, whose files the grader makes unreadable to other uids) ``bwrap`` takes the ``uid``
    isolation where bubblewrap cannot run. ``uid`` asks for that isolation by name. ``none`` is the
    fallback, only when asked for by name. ``auto`` takes bubblewrap if usable, else the fallback: for
    the demo's own sample class and the test-suite."""
    if requested not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, not {requested!r}")
    if requested == "none":
        return "fallback", FALLBACK
    ok, why = bwrap_usable()
    if ok and requested != "uid":
        return "bwrap", f"{BWRAP}; {sandbox_identity()}; {hardening()}"
    if requested == "uid" or (requested == "bwrap" and container):
        uid_ok, uid_why = uid_usable()
        if uid_ok:
            return "uid", f"{UID_ISOLATION}; {_uid_hardening()}"
        if requested == "uid":
            raise RuntimeError(f"no uid isolation: {uid_why}")
        why = f"{why}; {uid_why}"
    if requested == "bwrap":
        raise RuntimeError(
            f"no sandbox: {why}. Refusing to run student code unsandboxed. Install bubblewrap (or grade on a "
            "Linux host with user namespaces), or pass --isolation none to grade in the fallback, which is "
            "NOT a sandbox: student code then runs as you and can read and write your files (SECURITY.md)"
        )
    return "fallback", f"{FALLBACK}; {why}"


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
    limits: Limits, ctrl_fd: int, stage: _Stage | None = None, seccomp_fd: int | None = None
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
    for key, value in _clean_env("/tmp").items():
        cmd += ["--setenv", key, value]
    cmd += [_sandbox_python(), "-I", "-B", "/grader/worker.py", str(ctrl_fd), "/tmp/work", "sandbox"]
    return cmd


def _clean_env(home: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


@dataclass
class Worker:
    """One zygote process (inside its sandbox) and, at most, one live submission child."""

    limits: Limits
    mode: str = "bwrap"
    proc: subprocess.Popen | None = None
    ctrl: socket.socket | None = None
    chan: socket.socket | None = None
    tmpdir: str = ""
    stage: _Stage | None = None
    cgroup: object | None = None  # autograder.sandbox.cgroups.SandboxCgroup, where the grader can make one
    uid: int | None = None  # the uid isolation's host uid
    restarts: int = 0
    _serial: int = 0  # the id of the last call request sent
    last_reap: dict = field(default_factory=dict)
    closed: bool = False  # stopped for good (the batch ended or was interrupted): never starts again
    # start and stop are serialised: the batch's shutdown may stop a worker while its grading thread
    # is stopping or restarting it
    _life: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    # -- zygote lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        with self._life:
            if self.closed:
                raise WorkerCrashed("评分已停止 / grading was stopped")
            try:
                self._start()
            except BaseException:
                self.stop()  # nothing half-started stays: no process, no staging or temporary folder
                raise

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        fd = theirs.fileno()
        passed = [fd]
        if self.mode == "bwrap":
            self.cgroup = _new_cgroup(self.limits)
            seccomp = _seccomp_fd(deny_memfd=self.cgroup is None)  # no cgroup charges a memfd: none at all
            passed += [seccomp] if seccomp is not None else []
            if drop_to_nobody():
                self.stage = _Stage(_take_uid())
                cmd = self.stage.wrap(bwrap_command(self.limits, fd, self.stage, seccomp), self.limits)
            else:
                cmd = bwrap_command(self.limits, fd, seccomp_fd=seccomp)
            if self.cgroup is not None:
                cmd = self.cgroup.wrap(cmd)
            cwd, env = None, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        elif self.mode == "uid":
            cmd, cwd, env = self._uid_command(fd, passed)
        else:
            self.tmpdir = tempfile.mkdtemp(prefix=f"grader-fallback-{os.getpid()}-")
            cmd = [
                sys.executable,
                "-I",
                "-B",
                str(WORKER),
                str(fd),
                os.path.join(self.tmpdir, "work"),
                "fallback",
                str(PROJECT_ROOT),
            ]
            cwd, env = self.tmpdir, _clean_env(self.tmpdir)
        try:
            self.proc = subprocess.Popen(
                cmd,
                pass_fds=passed,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        finally:
            for extra in passed[1:]:
                os.close(extra)
        theirs.close()
        self.ctrl = ours
        hello = self._recv_ctrl(timeout=30)
        if not hello or not hello.get("hello"):
            err = self.proc.stderr.read(2000).decode(errors="replace") if self.proc.stderr else ""
            self.stop()
            raise RuntimeError(f"the grading worker did not start ({self.mode}): {err.strip()}")

    def _uid_command(self, fd: int, passed: list[int]) -> tuple[list[str], str, dict]:
        """The ``uid`` isolation: a uid of its own (RLIMIT_NPROC then counts only its tasks), a private
        directory only it can enter, a copy of the worker script (the grader's files stay unreadable),
        ``no_new_privs`` and the seccomp filter, loaded by the worker before it reads any student code."""

        # not "nobody" itself: every process of this uid is killed when the sandbox stops
        self.uid = _take_uid(exclude=(SANDBOX_UID,))
        self.tmpdir = tempfile.mkdtemp(prefix=f"grader-uid-{os.getpid()}-")
        os.chmod(self.tmpdir, 0o711)
        work = os.path.join(self.tmpdir, "work")
        os.mkdir(work, 0o700)
        os.chown(work, self.uid, self.uid)
        worker = os.path.join(self.tmpdir, "worker.py")
        shutil.copyfile(WORKER, worker)
        os.chmod(worker, 0o644)
        self.cgroup = _new_cgroup(self.limits)
        seccomp = seccomp_policy.filter_fd(deny_memfd=self.cgroup is None, deny_network=True)
        passed.append(seccomp)
        cmd = [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--no-new-privs",
            "--",
            sys.executable,
            "-I",
            "-B",
            worker,
            str(fd),
            os.path.join(work, "scratch"),
            "uid",
            str(seccomp),
            str(PROJECT_ROOT),
        ]
        if self.cgroup is not None:
            cmd = self.cgroup.wrap(cmd)
        return cmd, work, _clean_env(work)

    def stop(self, close: bool = False) -> None:
        """Tear the whole sandbox down: every process in it dies with it. ``close``: for good."""
        with self._life:
            self.closed = self.closed or close
            for sock in (self.chan, self.ctrl):
                if sock is not None:
                    try:
                        sock.close()
                    except OSError:
                        pass
            self.chan = self.ctrl = None
            if self.proc is not None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    self.proc.kill()
                except ProcessLookupError:
                    pass
                self.proc.wait()
                if self.proc.stderr:
                    self.proc.stderr.close()
                self.proc = None
            if self.tmpdir:
                shutil.rmtree(self.tmpdir, ignore_errors=True)
                self.tmpdir = ""
            stage, self.stage = self.stage, None
            if stage is not None:
                stage.remove()
                _give_uid(stage.uid)
            uid, self.uid = self.uid, None
            if uid is not None:  # the uid isolation: nothing of that uid survives its sandbox
                _kill_uid(uid)
                _give_uid(uid)
            cgroup, self.cgroup = self.cgroup, None
            if cgroup is not None:
                cgroup.remove()

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    # -- one submission ----------------------------------------------------------------------------
    def spawn(self, cells: list[tuple[int, str]], _retry: bool = True) -> dict:
        """Fork a fresh child that runs ``cells``; return its ``ready`` report."""
        if self.ctrl is None:
            self.start()
        try:
            limits = self.limits.for_child()
            if (
                self.mode == "fallback"
            ):  # outside a uid of its own RLIMIT_NPROC counts all the user's processes
                limits["processes"] = 0
            _send(self.ctrl, {"op": "spawn", "cells": cells, "limits": limits})
            self.ctrl.settimeout(5)
            _, fds, _, _ = socket.recv_fds(self.ctrl, HEADER_SIZE, 1)
        except OSError:
            fds = []
        if not fds:  # the zygote is gone or stuck (e.g. a previous child killed or stopped it)
            self.restart()
            if not _retry:
                raise WorkerCrashed("评分进程无法启动你的代码（沙箱重启后仍失败）")
            return self.spawn(cells, _retry=False)
        self.chan = socket.socket(fileno=fds[0])
        try:
            ready = _recv(self.chan, timeout=self.limits.load_timeout)
        except TimeoutError:
            self.reap()
            raise CallTimeout(f"运行 notebook 代码单元超过 {self.limits.load_timeout:g} 秒") from None
        except OSError:  # refused (too large) or garbled: not what the worker sends
            ready = None
        if not isinstance(ready, dict):
            report = self.reap()
            raise WorkerCrashed(_crash_text(report))
        return ready

    def call(self, target: str, args: tuple, kwargs: dict, timeout: float) -> Result:
        return next(self.call_many(target, [(args, kwargs)], lambda: timeout))

    def call_many(self, target: str, calls: list[tuple[tuple, dict]], timeout) -> Iterator[Result]:
        """Call ``target`` once per ``(args, kwargs)``, in order, yielding each result as it arrives.

        Requests are pipelined: up to ``PIPELINE_WINDOW`` are in flight (and at most
        ``PIPELINE_BYTES`` of them), so the child goes from one call to the next without waiting for
        the grader, and neither side sleeps and wakes once per call. Each answer still has its own
        time limit, ``timeout()`` seconds from when the grader starts waiting for it (never less than
        the child had: it starts a call only after answering the one before). A timeout or a crash
        raises at that call, as a sequential loop would. A caller that stops early (a check failed)
        leaves answers owed: they are drained (``_drain``), or else the child is reaped and the next
        call starts a fresh one."""
        if self.chan is None:
            raise WorkerCrashed("进程已不在")
        pending: deque[tuple[int, int]] = deque()  # (id, request bytes) sent, not yet answered
        queued = iter(calls)

        def fill() -> None:
            while len(pending) < PIPELINE_WINDOW and sum(size for _, size in pending) < PIPELINE_BYTES:
                nxt = next(queued, None)
                if nxt is None:
                    return
                args, kwargs = nxt
                self._serial += 1
                request = {
                    "op": "call",
                    "id": self._serial,
                    "target": target,
                    "args": [encode_arg(a) for a in args],
                    "kwargs": {k: encode_arg(v) for k, v in kwargs.items()},
                }
                pending.append((self._serial, _send(self.chan, request)))

        done = False
        try:
            try:
                fill()
            except OSError:
                pass  # the child is gone: the first answer below reports it
            while pending:
                expected, _ = pending[0]
                limit = timeout()
                try:
                    answer, body = _recv(self.chan, timeout=limit, with_body=True) or (None, b"")
                except TimeoutError:
                    self.reap()
                    raise CallTimeout(
                        f"{target.rsplit('.', 1)[-1]} 在 {limit:g} 秒内没有返回（死循环或算法太慢？）"
                    ) from None
                except ReplyTooLarge:
                    self.reap()
                    raise WorkerCrashed(
                        f"{target.rsplit('.', 1)[-1]} 的返回值过大，评分程序拒绝读取"
                    ) from None
                except OSError:
                    answer = None
                # not a dict, or not the answer to the oldest request: not what the worker sends
                if not isinstance(answer, dict) or answer.get("id") != expected:
                    report = self.reap()
                    raise WorkerCrashed(_crash_text(report, target))
                pending.popleft()
                try:
                    fill()
                except OSError:
                    pass  # reported at the next answer
                yield _result(target, answer, body)
            done = True
        finally:
            if not done and pending and self.chan is not None and not self._drain(pending):
                self.reap()  # answers are still owed: this child is out of step with the grader

    def _drain(self, pending: deque) -> bool:
        """Read and drop the answers still owed for calls nobody reads any more (a test stopped at a
        failed check), if they come within ``DRAIN_BUDGET`` seconds: cheaper than a fresh child."""
        deadline = time.monotonic() + DRAIN_BUDGET
        try:
            while pending:
                answer = _recv(self.chan, timeout=max(0.0, deadline - time.monotonic()))
                if not isinstance(answer, dict) or answer.get("id") != pending.popleft()[0]:
                    return False
        except (OSError, TimeoutError):
            return False
        return True

    def reap(self) -> dict:
        """End the current child and everything it started; restart the sandbox if that fails."""
        if self.chan is not None:
            try:
                self.chan.close()
            except OSError:
                pass
            self.chan = None
        if self.ctrl is None:
            return {}
        try:
            _send(self.ctrl, {"op": "reap"})
            report = self._recv_ctrl(timeout=3) or {}
        except OSError:
            report = {}
        if not report.get("reaped") or report.get("stray") == -1 or report.get("clean") is False:
            self.restart()
            report["sandbox_restarted"] = True
        self.last_reap = report
        return report

    def _recv_ctrl(self, timeout: float):
        try:
            return _recv(self.ctrl, timeout=timeout)
        except (TimeoutError, OSError, ValueError):
            return None


def _crash_text(report: dict, target: str = "") -> str:
    code = report.get("exit")
    where = f"调用 {target.rsplit('.', 1)[-1]} 时" if target else "运行 notebook 代码时"
    if code is not None and code < 0:
        sig = -code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {
            "SIGXCPU": "（CPU 时间超限）",
            "SIGKILL": "（被终止，可能内存或时间超限）",
            "SIGSEGV": "（段错误）",
            "SIGXFSZ": "（写文件超过大小上限）",
        }.get(name)
        # the student's code picks its exit code and can pick its signal: only the limits' four signals
        # are named, no number is shown (a number would carry hidden inputs back to the feedback page)
        return f"{where}进程被信号 {name} 结束{hint}" if hint else f"{where}进程被信号结束"
    return f"{where}进程退出了（例如 sys.exit/os._exit 或内存不足；退出码不显示）"


def _send(sock: socket.socket, obj) -> int:
    """Send one message; returns its size in bytes."""
    data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
    sock.settimeout(10)
    sock.sendall(len(data).to_bytes(4, "big") + data)
    return len(data) + 4


def _result(target: str, answer: dict, body: bytes) -> Result:
    # non-finite floats come tagged; a reply without the tag (even escaped) has nothing to decode
    decode = _decode_floats if (b"__float__" in body or b"\\u" in body) else _same
    return Result(
        target=target,
        value=decode(answer.get("value")),
        types=answer.get("types"),
        error=answer.get("error"),
        args_after=decode(answer.get("args_after")) or [],
        kwargs_after=decode(answer.get("kwargs_after")) or {},
    )


def _same(x):
    return x


class ReplyTooLarge(OSError):
    """The sandbox sent more than the grader parses (refused before reading or parsing it)."""


def _recv(sock: socket.socket, timeout: float, with_body: bool = False):
    """One message (with ``with_body``: the message and its raw bytes) from the sandbox: untrusted, so its cost is bounded before it is paid (size from the
    length prefix, then an upper bound on its JSON values counted in C) and its strings are made
    encodable (a forged reply may hold escaped lone surrogates or NUL)."""
    deadline = time.monotonic() + timeout
    head = _recv_exact(sock, 4, deadline)
    if head is None:
        return None
    size = int.from_bytes(head, "big")
    if size > MAX_REPLY_BYTES:
        raise ReplyTooLarge(f"{size} bytes, over the limit of {MAX_REPLY_BYTES}")
    body = _recv_exact(sock, size, deadline)
    if body is None:
        return None
    cost = reply_cost(body)
    if cost > MAX_REPLY_TOKENS:
        raise ReplyTooLarge(f"about {cost} values, over the limit of {MAX_REPLY_TOKENS}")
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise OSError("garbled message from worker") from None
    obj = clean_tree(obj) if JSON_ESCAPE_TO_CLEAN_BYTES.search(body) else obj
    return (obj, body) if with_body else obj


# A reply that is already waiting when the deadline is checked counts as in time: the grader's thread
# may have been kept from running (another thread holding the GIL, a loaded CPU), and that is not the
# student's delay. Reading on past the deadline is capped, so a trickling sender gains at most this.
LATE_READ_GRACE = 2.0


def _waiting(sock: socket.socket) -> bool:
    """Whether data (or the peer's close) is waiting on ``sock`` right now."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # closed meanwhile (the sandbox was stopped)
        return True  # recv then reports the closed socket


def _recv_exact(sock: socket.socket, size: int, deadline: float):
    chunks, got = [], 0
    while got < size:
        left = deadline - time.monotonic()
        if left <= 0:
            if -left > LATE_READ_GRACE or not _waiting(sock):
                raise TimeoutError
            left = 0.05  # readable now: recv returns at once
        sock.settimeout(left)
        try:
            chunk = sock.recv(min(size - got, 1 << 20))
        except TimeoutError:
            continue  # the deadline check above decides (a late but waiting reply still counts)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _decode_floats(x):
    """Undo the worker's tagging of non-finite floats."""
    if isinstance(x, list):
        return [_decode_floats(v) for v in x]
    if isinstance(x, dict):
        if set(x) == {"__float__"}:
            return float(x["__float__"])
        return {k: _decode_floats(v) for k, v in x.items()}
    return x
