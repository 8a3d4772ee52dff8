"""Start and talk to the sandboxed worker (``worker.py``) from the grader's side.

With bubblewrap the worker sees a read-only system and Python environment, its own empty ``/tmp``
and nothing of the course: not ``solutions/``, ``autograder/``, ``pipelab/``, the gradebook, other
submissions or the instructor's home. It has no network and its own PID namespace, so killing the
sandbox kills every process a submission started. Without bubblewrap (macOS, containers without user
namespaces) the fallback keeps resource limits, a scrubbed environment and a temporary working
directory, and every report says so.

Here: choosing the isolation (:func:`resolve_isolation`, ``--isolation``) and the grader's client of one
sandbox (:class:`Worker`). Each isolation's own code is beside it: ``bwrap.py``, ``uid_isolation.py``;
the limits in ``limits.py``, the uid pool in ``uids.py``, the socket protocol in ``wire.py``.
"""

from __future__ import annotations

import os
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

from autograder.sandbox import bwrap, cgroups, uid_isolation, uids, wire
from autograder.sandbox.limits import PROJECT_ROOT, WORKER, Limits, clean_env
from autograder.testing import CallTimeout, Result, WorkerCrashed, encode_arg

PIPELINE_WINDOW = 8  # call requests in flight at once (see Worker.call_many)
PIPELINE_BYTES = 64 * 1024  # ... and no more request bytes than this, beyond the first
DRAIN_BUDGET = 0.05  # seconds to wait for answers nobody reads before starting a fresh child instead
FALLBACK = "fallback: resource limits + scrubbed environment + temporary directory (NOT a sandbox)"


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
    ok, why = bwrap.bwrap_usable()
    if ok and requested != "uid":
        return "bwrap", f"{bwrap.BWRAP}; {bwrap.sandbox_identity()}; {bwrap.hardening()}"
    if requested == "uid" or (requested == "bwrap" and container):
        uid_ok, uid_why = uid_isolation.uid_usable()
        if uid_ok:
            return "uid", f"{uid_isolation.UID_ISOLATION}; {uid_isolation.uid_hardening()}"
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


@dataclass
class Worker:
    """One zygote process (inside its sandbox) and, at most, one live submission child."""

    limits: Limits
    mode: str = "bwrap"
    proc: subprocess.Popen | None = None
    ctrl: socket.socket | None = None
    chan: socket.socket | None = None
    tmpdir: str = ""
    stage: bwrap.Stage | None = None
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
            self.cgroup = cgroups.new_cgroup(self.limits)
            # no cgroup charges a memfd: then none at all
            seccomp = bwrap.seccomp_filter(deny_memfd=self.cgroup is None)
            passed += [seccomp] if seccomp is not None else []
            if bwrap.drop_to_nobody():
                self.stage = bwrap.Stage(uids.take_uid())
                cmd = self.stage.wrap(bwrap.bwrap_command(self.limits, fd, self.stage, seccomp), self.limits)
            else:
                cmd = bwrap.bwrap_command(self.limits, fd, seccomp_fd=seccomp)
            if self.cgroup is not None:
                cmd = self.cgroup.wrap(cmd)
            cwd, env = None, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        elif self.mode == "uid":
            cmd, cwd, env = uid_isolation.command(self, fd, passed)
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
            cwd, env = self.tmpdir, clean_env(self.tmpdir)
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
                uids.give_uid(stage.uid)
            uid, self.uid = self.uid, None
            if uid is not None:  # the uid isolation: nothing of that uid survives its sandbox
                uids.kill_uid(uid)
                uids.give_uid(uid)
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
            wire.send(self.ctrl, {"op": "spawn", "cells": cells, "limits": limits})
            self.ctrl.settimeout(5)
            _, fds, _, _ = socket.recv_fds(self.ctrl, wire.HEADER_SIZE, 1)
        except OSError:
            fds = []
        if not fds:  # the zygote is gone or stuck (e.g. a previous child killed or stopped it)
            self.restart()
            if not _retry:
                raise WorkerCrashed("评分进程无法启动你的代码（沙箱重启后仍失败）")
            return self.spawn(cells, _retry=False)
        self.chan = socket.socket(fileno=fds[0])
        try:
            ready = wire.recv(self.chan, timeout=self.limits.load_timeout)
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
                pending.append((self._serial, wire.send(self.chan, request)))

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
                    answer, body = wire.recv(self.chan, timeout=limit, with_body=True) or (None, b"")
                except TimeoutError:
                    self.reap()
                    raise CallTimeout(
                        f"{target.rsplit('.', 1)[-1]} 在 {limit:g} 秒内没有返回（死循环或算法太慢？）"
                    ) from None
                except wire.ReplyTooLarge:
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
                yield wire.result(target, answer, body)
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
                answer = wire.recv(self.chan, timeout=max(0.0, deadline - time.monotonic()))
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
            wire.send(self.ctrl, {"op": "reap"})
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
            return wire.recv(self.ctrl, timeout=timeout)
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
