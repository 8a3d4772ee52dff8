"""pipelab.varlen (lesson 03's demonstrations) agrees with the hidden tests' independent oracles."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from pipelab.varlen import backward_first, pareto_front, static_1f1b, throughput_latency

HIDDEN = Path(__file__).resolve().parents[2] / "autograder" / "lessons" / "03-load-imbalance"


def _hidden(name: str):
    spec = importlib.util.spec_from_file_location(f"lesson03_{name}_oracle", HIDDEN / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def oracle():
    return _hidden("test_scheduling")


def _ops(tl):
    return [[o.stage, o.kind, o.mb, o.start, o.end] for o in tl.ops]


def test_schedules_match_the_oracles_on_random_cases(oracle):
    rng = random.Random(3)
    for _ in range(60):
        m, P = rng.randint(1, 9), rng.randint(1, 5)
        F = [[float(rng.randint(1, 5)) for _ in range(P)] for _ in range(m)]
        B = [[float(rng.randint(1, 9)) for _ in range(P)] for _ in range(m)]
        extra, delta = rng.randint(0, 2), rng.choice([0.0, 0.0, 0.25])
        want = oracle.static_oracle(F, B)
        got = static_1f1b(F, B)
        assert got.makespan == want["makespan"] and got.meta["idle"] == pytest.approx(want["idle"])
        assert sorted(_ops(got)) == sorted(want["ops"])
        want = oracle.dynamic_oracle(F, B, extra, delta)
        got = backward_first(F, B, extra, delta)
        assert got.makespan == pytest.approx(want["makespan"]) and got.meta["idle"] == pytest.approx(
            want["idle"]
        )


def test_lesson_demo_numbers(oracle):
    lengths = [2, 1, 1, 3, 1, 1, 2, 1]
    F = [[float(x)] * 4 for x in lengths]
    B = [[2.0 * x] * 4 for x in lengths]
    assert static_1f1b(F, B).makespan == 71
    assert [backward_first(F, B, e).makespan for e in (0, 1, 2)] == [77, 64, 59]
    assert backward_first([[1.0] * 4] * 8, [[2.0] * 4] * 8, 0, 0.1).makespan == pytest.approx(35.2)


def test_frontier_matches_the_oracle():
    oracle = _hidden("test_frontier")
    Ps, ms = [2, 4, 8, 16], [1, 2, 4, 8, 16, 32, 64]
    for schedule in ("1f1b", "gpipe"):
        points = []
        for P in Ps:
            for m in ms:
                thr, lat, mem = throughput_latency(
                    96.0, P, m, overhead=2.0, weight_mem=160.0, act_mem=48.0, schedule=schedule
                )
                if mem <= 80.0:
                    points.append((P, m, thr, lat))
        want, _ = oracle.oracle(96.0, Ps, ms, 2.0, 160.0, 48.0, 80.0, schedule=schedule)
        assert [(p[0], p[1]) for p in pareto_front(points)] == [(f[0], f[1]) for f in want]


def test_rejects_bad_tables():
    with pytest.raises(ValueError):
        static_1f1b([[1.0, 0.0]], [[1.0, 1.0]])
    with pytest.raises(ValueError):
        backward_first([[1.0]], [[1.0]], -1)
