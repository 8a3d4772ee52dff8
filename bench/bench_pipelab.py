"""pipelab speed and quality figures (issue 5, point 5)."""

from __future__ import annotations

import random
import time

import numpy as np

from pipelab import make_schedule, simulate
from pipelab.partition import bottleneck, min_max_partition, spread_balance_partition, uniform_partition


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_simulation() -> None:
    P, m, v = 64, 1024, 4
    sched, t_build = _timed(lambda: make_schedule("interleaved-1f1b", P, m, v))
    rng = np.random.default_rng(0)
    f = rng.uniform(0.8, 1.2, P * v).tolist()
    b = [2 * x for x in f]
    tl, t_sim = _timed(lambda: simulate(sched, f, b))
    print(
        f"interleaved 1F1B P={P} m={m} v={v}: {len(tl)} ops, build {t_build:.3f} s + simulate "
        f"(incl. memory) {t_sim:.3f} s = {t_build + t_sim:.3f} s  [target < 1 s]  "
        f"engine={tl.meta['engine']} makespan={tl.makespan:.1f} bubble={tl.bubble_ratio:.4f}"
    )
    sched1, t1b = _timed(lambda: make_schedule("1f1b", P, m))
    tl1, t1 = _timed(lambda: simulate(sched1, f[:P], b[:P]))
    print(f"plain 1F1B P={P} m={m}: {len(tl1)} ops, build {t1b:.3f} s + simulate {t1:.3f} s")


def bench_partition() -> None:
    L, P = 10**6, 1024
    rng = np.random.default_rng(1)
    costs = rng.lognormal(0.0, 1.0, L)
    counts, t = _timed(lambda: min_max_partition(costs, P, tie_break=None))
    bn = bottleneck(costs, counts)
    print(
        f"exact min-max partition (tie_break=None) of {L} non-uniform layers into {P} stages: {t:.3f} s  [target < 1 s]  "
        f"slowest stage {bn:.3f} (mean {costs.sum() / P:.3f})"
    )


def bench_quality(n: int = 300, seed: int = 7) -> None:
    rng = random.Random(seed)
    r_uni, r_spread = [], []
    for _ in range(n):
        L = rng.randint(8, 64)
        P = rng.randint(2, min(16, L))
        costs = [rng.lognormvariate(0.0, 0.8) for _ in range(L)]
        exact = bottleneck(costs, min_max_partition(costs, P))
        r_uni.append(bottleneck(costs, uniform_partition(L, P)) / exact)
        r_spread.append(bottleneck(costs, spread_balance_partition(costs, P)) / exact)
    for name, r in (("uniform split", r_uni), ("max-min balancer", r_spread)):
        worse = sum(x > 1 + 1e-12 for x in r)
        print(
            f"slowest stage, {name} / exact min-max over {n} random instances: mean {np.mean(r):.3f}, "
            f"max {max(r):.3f}, worse in {worse}/{n}"
        )


def bench_v_split() -> None:
    """Lesson 16's V split search (extension F): every split of each rank's layers over its two stages,
    compared at once by ``batch_makespans`` against one ``simulate_placed`` per split."""
    from pipelab.vshape import simulate_placed, zbv
    from pipelab.vsplit import best_v_split, v_chunk_times, v_rank_layers, v_splits

    rank_layers = v_rank_layers(32, 2.0, 16.0, 8.0, 4, min_layers_per_stage=0)
    sched = zbv(4, 8)
    (tl, n), t_batch = _timed(
        lambda: best_v_split(sched, rank_layers, 2.0, 16.0, 8.0, min_layers_per_stage=0)
    )

    def one_by_one():
        best = None
        for split in v_splits(rank_layers, min_layers_per_stage=0):
            f = v_chunk_times(split, 2.0, 16.0, 8.0)
            span = simulate_placed(sched, f, f, f, activation_bytes=split, free_after="W").makespan
            best = (span, split) if best is None or span < best[0] else best
        return best

    (span, split), t_loop = _timed(one_by_one)
    count = sum(1 for _ in v_splits(rank_layers, min_layers_per_stage=0))
    assert (span, split) == (tl.makespan, n)
    print(
        f"ZB-V split search, lesson 16 (P=4, m=8, {count} splits): batch_makespans {t_batch:.3f} s, "
        f"one simulate_placed per split {t_loop:.3f} s; best {n} T={tl.makespan:g}"
    )


def main() -> None:
    bench_simulation()
    bench_partition()
    bench_quality()
    bench_v_split()


if __name__ == "__main__":
    main()
