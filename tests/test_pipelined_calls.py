"""Pipelined calls (``Submission.calls``): hidden tests send a loop's calls at once, and each answer
still has its own time limit, failures still stop at the call that failed, and a test that stops
reading early never leaves the child out of step with the grader."""

from __future__ import annotations

import time

import pytest

from autograder.grading.submission import Submission
from autograder.sandbox import isolation, wire
from autograder.sandbox.isolation import Worker, resolve_isolation
from autograder.sandbox.limits import Limits
from autograder.testing import CallTimeout, WorkerCrashed

CODE = """
import time
calls = []

def echo(x):
    calls.append(x)
    return x

def slow_at(x, at):
    if x == at:
        time.sleep(30)
    return x

def count():
    return len(calls)
"""


@pytest.fixture
def sub():
    mode, _ = resolve_isolation("auto")
    limits = Limits(call_timeout=1.0, load_timeout=5.0, submission_timeout=60.0)
    worker = Worker(limits=limits, mode=mode)
    s = Submission(worker=worker, cells=[(0, CODE)], limits=limits, deadline=time.monotonic() + 60)
    yield s
    s.close()
    worker.stop(close=True)


def test_results_arrive_in_order_with_many_in_flight(sub):
    values = list(range(3 * isolation.PIPELINE_WINDOW + 1))
    assert [r.value for r in sub.calls("echo", [(v,) for v in values])] == values
    assert sub.call("count").value == len(values)  # each ran once, in the same child


def test_large_requests_are_windowed_by_bytes(sub):
    big = [[float(i)] * 5_000 for i in range(12)]  # ~ 12 x 45 KB: more than PIPELINE_BYTES in flight
    assert [r.value for r in sub.calls("echo", [(b,) for b in big])] == big


def test_keyword_arguments(sub):
    got = [r.value for r in sub.calls_with("slow_at", [((1,), {"at": 9}), ((2,), {"at": 9})])]
    assert got == [1, 2]


def test_a_timeout_stops_at_its_own_call_after_the_earlier_answers(sub):
    seen = []
    start = time.monotonic()
    with pytest.raises(CallTimeout):
        for r in sub.calls("slow_at", [(x, 3) for x in range(6)]):
            seen.append(r.value)
    assert seen == [0, 1, 2]
    assert time.monotonic() - start < 5  # one call's limit (1 s), not the sleeping child's 30 s
    assert sub.call("echo", "after").value == "after"  # a fresh child answers the next call


def test_a_test_that_stops_reading_leaves_no_stale_answer(sub):
    for r in sub.calls("echo", [(x,) for x in range(10)]):
        assert r.value == 0
        break  # a failed check ends a test's loop the same way
    for x in ("a", "b", "c"):
        assert sub.call("echo", x).value == x  # never an answer owed to the abandoned loop


def test_owed_answers_that_do_not_come_cost_a_fresh_child_not_a_wait(sub):
    gen = sub.calls("slow_at", [(x, 1) for x in range(4)])  # call 1 sleeps 30 s
    assert next(gen).value == 0
    start = time.monotonic()
    assert sub.call("echo", "next").value == "next"
    assert time.monotonic() - start < 3
    assert sub.spawns == 2


def test_an_answer_out_of_order_is_a_crash(sub, monkeypatch):
    """Student code owns the child, so it can write to the grader's socket itself; an answer whose id
    is not the oldest request's is treated as a garbled reply."""
    sub.call("echo", 0)
    real = wire.recv

    def forged(sock, timeout, with_body=False):
        got = real(sock, timeout, with_body)
        if with_body and got and isinstance(got[0], dict):
            got[0]["id"] = got[0]["id"] + 1
        return got

    monkeypatch.setattr(wire, "recv", forged)
    with pytest.raises(WorkerCrashed):
        list(sub.calls("echo", [(1,), (2,)]))
