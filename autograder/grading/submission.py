"""The ``sub`` handle hidden tests receive: one submission's code running in a sandboxed worker, called with
plain data and answering with plain data (``autograder.testing.Result``). ``open_submission`` is the one
way to get one (the engine, the self-check and ``pytest autograder/`` use it); each thread keeps one
zygote per isolation mode and limits, reused across submissions."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from autograder.sandbox.isolation import Worker
from autograder.sandbox.limits import Limits
from autograder.testing import CallTimeout, Result, WorkerCrashed


@dataclass
class Submission:
    """A handle on one submission's code running in the sandbox. Calls return plain data."""

    worker: Worker
    cells: list[tuple[int, str]]
    limits: Limits
    deadline: float
    ready: dict | None = None
    load_error: Exception | None = None
    spawns: int = 0
    cell_errors: list = field(default_factory=list)
    active: Iterator[Result] | None = None  # the worker's pipelined calls now being read

    def _ensure(self) -> None:
        if self.ready is not None:
            return
        if self.load_error is not None:  # the notebook's code itself never finished loading: fail fast
            raise self.load_error
        self._check_deadline()
        self.spawns += 1
        try:
            self.ready = self.worker.spawn(self.cells)
        except (CallTimeout, WorkerCrashed) as exc:
            self.load_error = exc
            raise
        if self.spawns == 1:  # only the first load: it runs before any hidden input was sent (a later
            # child could read what an earlier one left in /tmp and put it into an error message)
            self.cell_errors = self.ready.get("cell_errors", [])

    def _check_deadline(self) -> None:
        if time.monotonic() > self.deadline:
            raise CallTimeout(f"这份提交的总评分时间（{self.limits.submission_timeout:g} 秒）已用完")

    def call(self, target: str, *args, **kwargs) -> Result:
        return next(self._calls(target, [(args, kwargs)]))

    def calls(self, target: str, arg_tuples) -> Iterator[Result]:
        """``call(target, *args)`` for each ``args`` in ``arg_tuples``, pipelined (see
        ``Worker.call_many``): yields each result in order. Same limits and failures as a loop of
        ``call``; a test may stop reading early (its next call gets a fresh child)."""
        return self._calls(target, [(tuple(args), {}) for args in arg_tuples])

    def calls_with(self, target: str, cases) -> Iterator[Result]:
        """:meth:`calls` with keyword arguments: each case is ``(args, kwargs)``."""
        return self._calls(target, [(tuple(args), dict(kwargs)) for args, kwargs in cases])

    def _calls(self, target: str, calls: list[tuple[tuple, dict]]) -> Iterator[Result]:
        self._settle()
        self._ensure()
        self._check_deadline()

        def timeout() -> float:
            self._check_deadline()
            return min(self.limits.call_timeout, max(0.05, self.deadline - time.monotonic()))

        mine = self.active = self.worker.call_many(target, calls, timeout)
        try:
            yield from mine
        except (CallTimeout, WorkerCrashed):
            self.ready = None  # the child is gone; the next call starts a fresh one
            raise
        finally:
            if self.active is mine:  # (an abandoned generator collected later must not touch a newer one)
                self._settle()

    def _settle(self) -> None:
        """Finish the last pipelined calls: a test that stopped reading them leaves answers owed, so
        that child is reaped (``call_many`` does it on close) and the next call starts a fresh one."""
        if self.active is not None:
            active, self.active = self.active, None
            active.close()
        if self.ready is not None and self.worker.chan is None:
            self.ready = None

    def close(self) -> dict:
        self._settle()
        report = self.worker.reap() if self.ready is not None or self.spawns else {}
        self.ready = None
        return report


_local = threading.local()
_all_workers: list[Worker] = []
_workers_lock = threading.Lock()


def _worker_for(limits: Limits, isolation: str) -> Worker:
    """One zygote per thread and isolation mode, reused across submissions."""
    key = (isolation, limits)
    pool = getattr(_local, "workers", None)
    if pool is None:
        pool = _local.workers = {}
    worker = pool.get(key)
    if worker is None or worker.proc is None:  # new thread, or stopped by shutdown_workers()
        worker = pool[key] = Worker(limits, mode=isolation)
        worker.start()
        with _workers_lock:
            _all_workers.append(worker)
    return worker


def shutdown_workers() -> None:
    """Stop every sandbox this process started (all threads)."""
    with _workers_lock:
        for worker in _all_workers:
            worker.stop(close=True)  # a thread still grading gets WorkerCrashed instead of a new sandbox
        _all_workers.clear()


def open_submission(limits: Limits, code_cells: list[tuple[int, str]], isolation: str) -> Submission:
    """A handle on ``code_cells`` run in this thread's sandbox for ``isolation`` and ``limits``, with the
    submission's whole time budget starting now. Close it (``close()``) when done."""
    return Submission(
        _worker_for(limits, isolation),
        code_cells,
        limits,
        deadline=time.monotonic() + limits.submission_timeout,
    )
