"""Start and talk to the sandboxed worker (``sandbox_worker.py``) from the grader's side.

With bubblewrap the worker sees a read-only system and Python environment, its own empty ``/tmp``
and nothing of the course: not ``solutions/``, ``autograder/``, ``pipelab/``, the gradebook, other
submissions or the instructor's home. It has no network and its own PID namespace, so killing the
sandbox kills every process a submission started. Without bubblewrap (macOS, containers without user
namespaces) the fallback keeps resource limits, a scrubbed environment and a temporary working
directory, and every report says so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .testing import CallTimeout, Result, WorkerCrashed, encode_arg

HERE = Path(__file__).resolve().parent
WORKER = HERE / "sandbox_worker.py"
PROJECT_ROOT = HERE.parent
HEADER_SIZE = 4

BWRAP = "bubblewrap (no network, read-only system, private /tmp, own PID namespace)"
FALLBACK = "fallback: resource limits + scrubbed environment + temporary directory (NOT a sandbox)"


@dataclass(frozen=True)
class Limits:
    call_timeout: float = 2.0  # wall clock per call into student code
    load_timeout: float = 5.0  # wall clock to run the notebook's cells
    submission_timeout: float = 60.0  # wall clock for one submission, all calls included
    cpu_seconds: int = 60
    address_space_bytes: int = 4 << 30
    file_bytes: int = 16 << 20
    processes: int = 0  # RLIMIT_NPROC; 0 = rely on the PID namespace (root's limit is not enforced)
    tmpfs_bytes: int = 256 << 20

    @classmethod
    def from_rubric(cls, data: dict | None) -> Limits:
        defaults = cls()
        known = {k: type(getattr(defaults, k))(v) for k, v in (data or {}).items() if hasattr(defaults, k)}
        unknown = sorted(set(data or {}) - set(known))
        if unknown:
            raise ValueError(f"unknown limits in rubric: {', '.join(unknown)}")
        return cls(**known)

    def for_child(self) -> dict:
        return {
            "cpu_seconds": self.cpu_seconds,
            "address_space_bytes": self.address_space_bytes,
            "file_bytes": self.file_bytes,
            "processes": self.processes,
        }


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
        return False, "bubblewrap cannot create namespaces here: " + probe.stderr.decode(errors="replace").strip()
    return True, exe


def resolve_isolation(requested: str = "auto") -> tuple[str, str]:
    """Return ("bwrap"|"fallback", human description). ``requested`` is auto, bwrap or none."""
    if requested == "none":
        return "fallback", FALLBACK
    ok, why = bwrap_usable()
    if ok:
        return "bwrap", BWRAP
    if requested == "bwrap":
        raise RuntimeError(f"--isolation bwrap was requested but {why}")
    return "fallback", f"{FALLBACK}; {why}"


def _python_roots() -> list[str]:
    """Directories the interpreter and the installed packages live in (bound read-only)."""
    roots = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    exe = os.path.realpath(sys.executable)
    roots.add(str(Path(exe).parent.parent))
    return sorted(roots)


def bwrap_command(limits: Limits, ctrl_fd: int) -> list[str]:
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--uid", "65534", "--gid", "65534"]
    for path in ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/etc/alternatives", "/etc/ld.so.cache"):
        if os.path.exists(path):
            cmd += ["--ro-bind", path, path]
    for root in _python_roots():
        cmd += ["--ro-bind", root, root]
    cmd += ["--ro-bind", str(WORKER), "/grader/worker.py"]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmpfs_bytes), "--tmpfs", "/tmp"]
    cmd += ["--dir", "/tmp/work", "--chdir", "/tmp/work", "--remount-ro", "/"]
    cmd += ["--clearenv"]
    for key, value in _clean_env("/tmp").items():
        cmd += ["--setenv", key, value]
    cmd += [sys.executable, "-I", "-B", "/grader/worker.py", str(ctrl_fd), "/tmp/work", "sandbox"]
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
    restarts: int = 0
    last_reap: dict = field(default_factory=dict)

    # -- zygote lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        ours, theirs = socket.socketpair()
        fd = theirs.fileno()
        if self.mode == "bwrap":
            cmd = bwrap_command(self.limits, fd)
            cwd, env = None, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        else:
            self.tmpdir = tempfile.mkdtemp(prefix="grader-fallback-")
            cmd = [sys.executable, "-I", "-B", str(WORKER), str(fd), os.path.join(self.tmpdir, "work"),
                   "fallback", str(PROJECT_ROOT)]
            cwd, env = self.tmpdir, _clean_env(self.tmpdir)
        self.proc = subprocess.Popen(
            cmd, pass_fds=[fd], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )
        theirs.close()
        self.ctrl = ours
        hello = self._recv_ctrl(timeout=30)
        if not hello or not hello.get("hello"):
            err = self.proc.stderr.read(2000).decode(errors="replace") if self.proc.stderr else ""
            self.stop()
            raise RuntimeError(f"the grading worker did not start ({self.mode}): {err.strip()}")

    def stop(self) -> None:
        """Tear the whole sandbox down: every process in it dies with it."""
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

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    # -- one submission ----------------------------------------------------------------------------
    def spawn(self, cells: list[tuple[int, str]]) -> dict:
        """Fork a fresh child that runs ``cells``; return its ``ready`` report."""
        if self.ctrl is None:
            self.start()
        try:
            _send(self.ctrl, {"op": "spawn", "cells": cells, "limits": self.limits.for_child()})
            self.ctrl.settimeout(10)
            _, fds, _, _ = socket.recv_fds(self.ctrl, HEADER_SIZE, 1)
        except OSError:
            fds = []
        if not fds:
            self.restart()
            return self.spawn(cells)
        self.chan = socket.socket(fileno=fds[0])
        try:
            ready = _recv(self.chan, timeout=self.limits.load_timeout)
        except TimeoutError:
            self.reap()
            raise CallTimeout(f"运行 notebook 代码单元超过 {self.limits.load_timeout:g} 秒") from None
        if ready is None:
            report = self.reap()
            raise WorkerCrashed(_crash_text(report))
        return ready

    def call(self, target: str, args: tuple, kwargs: dict, timeout: float) -> Result:
        if self.chan is None:
            raise WorkerCrashed("进程已不在")
        request = {"op": "call", "target": target, "args": [encode_arg(a) for a in args],
                   "kwargs": {k: encode_arg(v) for k, v in kwargs.items()}}
        try:
            _send(self.chan, request)
            answer = _recv(self.chan, timeout=timeout)
        except TimeoutError:
            self.reap()
            raise CallTimeout(f"{target.rsplit('.', 1)[-1]} 在 {timeout:g} 秒内没有返回（死循环或算法太慢？）") from None
        except OSError:
            answer = None
        if answer is None:
            report = self.reap()
            raise WorkerCrashed(_crash_text(report, target))
        return Result(
            target=target,
            value=_decode_floats(answer.get("value")),
            types=answer.get("types"),
            error=answer.get("error"),
            args_after=_decode_floats(answer.get("args_after")) or [],
            kwargs_after=_decode_floats(answer.get("kwargs_after")) or {},
        )

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
            report = self._recv_ctrl(timeout=10) or {}
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
        hint = {"SIGXCPU": "（CPU 时间超限）", "SIGKILL": "（被终止，可能内存或时间超限）",
                "SIGSEGV": "（段错误）", "SIGXFSZ": "（写文件超过大小上限）"}.get(name, "")
        return f"{where}进程被信号 {name} 结束{hint}"
    return f"{where}进程退出了（退出码 {code}；例如 sys.exit/os._exit 或内存不足）"


def _send(sock: socket.socket, obj) -> None:
    data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
    sock.settimeout(10)
    sock.sendall(len(data).to_bytes(4, "big") + data)


def _recv(sock: socket.socket, timeout: float):
    deadline = time.monotonic() + timeout
    head = _recv_exact(sock, 4, deadline)
    if head is None:
        return None
    size = int.from_bytes(head, "big")
    if size > 64 * 1024 * 1024:
        raise OSError("oversized message from worker")
    body = _recv_exact(sock, size, deadline)
    if body is None:
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise OSError("garbled message from worker") from None


def _recv_exact(sock: socket.socket, size: int, deadline: float):
    chunks, got = [], 0
    while got < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        try:
            chunk = sock.recv(min(size - got, 1 << 20))
        except TimeoutError:
            raise
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
