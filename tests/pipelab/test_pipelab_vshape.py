"""V placement (``pipelab.vshape``): ZB-V and DualPipeV against torch 2.13, and the placed simulator.

The goldens (``tests/golden/pipelab/torch_v_schedules.json``) were produced by ``tools/make_goldens.py``
from torch 2.13's ``_schedule_visualizer.get_schedule_ops(name, P, m, num_stages_per_rank=2)`` for
``ScheduleZBVZeroBubble`` and ``ScheduleDualPipeV``: every action as torch prints it, including the
overlapped ``(0F3;7B1)OVERLAP_F_B`` pairs.  torch rejects DualPipeV with m < 2P; pipelab too.
"""

import json
import random
import re
from pathlib import Path

import pytest

from pipelab import make_schedule, simulate
from pipelab.partition import water_fill
from pipelab.schedules import interleaved_1f1b, parse_action, zb_h1
from pipelab.vshape import (
    Overlap,
    PlacedSchedule,
    dualpipev,
    rank_to_stages,
    simulate_placed,
    stage_to_rank,
    zbv,
)
from pipelab.vsplit import placement_table, v_chunk_times, v_rank_layers, v_splits

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "pipelab" / "torch_v_schedules.json"
DOC = json.loads(GOLDEN.read_text(encoding="utf-8"))
BUILD = {"ZBVZeroBubble": zbv, "DualPipeV": dualpipev}
CASES = [c for c in DOC["cases"] if "orders" in c]
REJECTED = [c for c in DOC["cases"] if "error" in c]


def test_golden_file_is_sane():
    assert DOC["torch_version"].startswith("2.13")
    assert {c["schedule"] for c in CASES} == set(BUILD)
    labels = [a for c in CASES for order in c["orders"] for a in order]
    assert any(a.endswith("OVERLAP_F_B") for a in labels)  # DualPipeV's overlapped F&B are in the goldens
    assert {re.fullmatch(r"\d+([FIWB])\d+", a).group(1) for a in labels if a[0].isdigit()} == set("FIWB")
    assert len(CASES) >= 80 and all(c["m"] < 2 * c["P"] for c in REJECTED)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['schedule']}-P{c['P']}-m{c['m']}")
def test_orders_equal_pytorch(case):
    sched = BUILD[case["schedule"]](case["P"], case["m"])
    assert sched.labels() == case["orders"]
    assert list(sched.stage_to_rank) == case["stage_to_rank"]


@pytest.mark.parametrize("case", REJECTED, ids=lambda c: f"{c['schedule']}-P{c['P']}-m{c['m']}")
def test_cases_torch_rejects(case):
    assert case["schedule"] == "DualPipeV" and "microbatches" in case["error"]
    with pytest.raises(ValueError, match="m >= 2P"):
        dualpipev(case["P"], case["m"])


def test_v_placement_puts_both_ends_on_rank_0():
    assert stage_to_rank(4, 8) == (0, 1, 2, 3, 3, 2, 1, 0)
    assert rank_to_stages(4, 8) == [[0, 7], [1, 6], [2, 5], [3, 4]]
    assert stage_to_rank(4, 8, "loop") == (0, 1, 2, 3, 0, 1, 2, 3)
    with pytest.raises(ValueError):
        stage_to_rank(3, 8)


def _random_costs(rng, S):
    return [rng.choice([0.5, 1.0, 2.0, 3.0]) for _ in range(S)]


@pytest.mark.parametrize("seed", range(6))
def test_placed_simulator_equals_simulate_on_loop_schedules(seed):
    """The placed simulator and pipelab.simulate are separate code: on loop schedules they must agree
    op by op, and in peak memory."""
    rng = random.Random(seed)
    P, m = rng.randint(1, 5), rng.randint(1, 9)
    cases = [
        (make_schedule("gpipe", P, m), False),
        (make_schedule("1f1b", P, m), False),
        (interleaved_1f1b(P, m, 2), False),
        (zb_h1(P, m), True),
    ]
    for sched, split in cases:
        S = sched.num_stages
        f, b, w = (_random_costs(rng, S) for _ in range(3))
        lat = rng.choice([0.0, 0.25])
        act = _random_costs(rng, S)
        kw = {"hop_latency": lat, "activation_bytes": act, "free_after": "W" if split else "B"}
        ref = simulate(sched, f, b, w if split else None, **kw)
        got = simulate_placed(PlacedSchedule.from_schedule(sched), f, b, w if split else None, **kw)
        key = lambda o: (o.stage, o.kind, o.mb)  # noqa: E731
        assert sorted((key(o), o.start, o.end) for o in got.ops) == sorted(
            (key(o), o.start, o.end) for o in ref.ops
        )
        assert got.makespan == ref.makespan and got.peak_memory == pytest.approx(ref.peak_memory)
        assert got.peak_in_flight == ref.peak_in_flight


@pytest.mark.parametrize("P", [2, 3, 4, 8])
@pytest.mark.parametrize("mult", [2, 3, 4])
def test_zbv_and_dualpipev_with_equal_times(P, mult):
    """Every stage F = I = W = t (so each rank does 6t of work per microbatch).  Simulated: torch's ZB-V
    order idles (P−1)·t per rank, half of ZB-H1's (P−1)(T_F+T_B−T_W) = 2(P−1)t for the same per-rank
    work (T = 2t), and keeps 2P chunk activations (= P whole-rank ones, 1F1B's rank-0 peak) on every
    rank; DualPipeV without overlap idles 2(P−1)·t and keeps 2P+1."""
    m = mult * P
    t = 1.0
    z = simulate_placed(zbv(P, m), t, t, t)
    assert z.makespan == pytest.approx(6 * m * t + (P - 1) * t)
    assert z.peak_in_flight == [2 * P] * P
    h1 = simulate(zb_h1(P, m), 2 * t, 2 * t, 2 * t)
    assert h1.makespan - 6 * m * t == pytest.approx(2 * (z.makespan - 6 * m * t))
    if m >= 2 * P:
        d = simulate_placed(dualpipev(P, m), t, t, t)
        assert d.makespan == pytest.approx(6 * m * t + 2 * (P - 1) * t)
        assert d.peak_in_flight == [2 * P + 1] * P
        hidden = simulate_placed(dualpipev(P, m), t, t, t, overlap=1.0)
        assert hidden.makespan < d.makespan


def test_overlapped_pair_waits_for_both_inputs_and_releases_at_its_end():
    # P = 2 in a V: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2; f = 1, b = 2 everywhere
    F, B = "F", "B"
    orders = (
        ((0, F, 0), (3, F, 0), Overlap((0, F, 1), (3, B, 0)), (3, F, 1), (3, B, 1), (0, B, 0), (0, B, 1)),
        ((1, F, 0), (2, F, 0), (1, F, 1), (2, F, 1), (2, B, 0), (1, B, 0), (2, B, 1), (1, B, 1)),
    )
    sched = PlacedSchedule("custom", 2, 2, 4, "v", orders)
    tl = simulate_placed(sched, 1.0, 2.0)
    start, end, label = tl.meta["overlapped"][0]
    assert label == "(0F1;3B0)OVERLAP_F_B"
    # 0F1 could start at 1, but 3B0 needs 3F0, which ends at 4: the pair waits for both, then lasts f + b
    assert tl.find(3, "F", 0).end == 4.0 and (start, end) == (4.0, 7.0)
    # 0F1's output leaves rank 0 at the pair's end, not at 5 (where its share of the pair is drawn)
    assert tl.find(0, "F", 1).end == 5.0 and tl.find(1, "F", 1).start == 7.0
    assert tl.busy_per_stage[0] == 2 * 2 * (1.0 + 2.0)  # 2 stages x 2 microbatches; the pair counted once
    half = simulate_placed(sched, 1.0, 2.0, overlap=0.5)
    s2, e2, _ = half.meta["overlapped"][0]
    assert e2 - s2 == pytest.approx(3.0 - 0.5 * 1.0)


def test_placed_schedule_validation():
    ok = [[(0, "F", 0), (1, "F", 0), (1, "B", 0), (0, "B", 0)]]
    simulate_placed(PlacedSchedule("x", 1, 1, 2, "v", (tuple(ok[0]),)), 1.0, 1.0)
    with pytest.raises(ValueError, match="twice"):
        simulate_placed(PlacedSchedule("x", 1, 1, 2, "v", ((ok[0][0], *ok[0]),)), 1.0, 1.0)
    with pytest.raises(ValueError, match="either B, or I and W"):
        bad = ((0, "F", 0), (1, "F", 0), (1, "I", 0), (0, "B", 0))
        simulate_placed(PlacedSchedule("x", 1, 1, 2, "v", (bad,)), 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="weight-gradient"):
        simulate_placed(zbv(2, 2), 1.0, 1.0)
    with pytest.raises(ValueError, match="invalid action"):  # stage 1 is on rank 1 in a V of 2 ranks
        simulate_placed(PlacedSchedule("x", 2, 1, 4, "v", (((1, "F", 0),), ())), 1.0, 1.0)
    with pytest.raises(RuntimeError, match="deadlock"):
        rev = ((1, "B", 0), (0, "F", 0), (1, "F", 0), (0, "B", 0))
        simulate_placed(PlacedSchedule("x", 1, 1, 2, "v", (rev,)), 1.0, 1.0)


def test_v_partition_helpers():
    # rank 0 carries head 16 + tail 8 = 24 ms: it gets the minimum, 2 layers (one per stage)
    assert v_rank_layers(32, 2.0, 16.0, 8.0, 4) == [2, 10, 10, 10]
    assert v_rank_layers(32, 2.0, 16.0, 8.0, 4, min_layers_per_stage=0) == [0, 11, 11, 10]
    assert v_rank_layers(16, 1.0, 0.0, 0.0, 4) == [4, 4, 4, 4]
    splits = list(v_splits([2, 3]))
    assert splits == [[1, 1, 2, 1], [1, 2, 1, 1]]
    assert all(n[r] + n[3 - r] == [2, 3][r] for n in splits for r in range(2))
    assert v_chunk_times([1, 2, 0, 3], 2.0, 16.0, 8.0) == [18.0, 4.0, 0.0, 14.0]


@pytest.fixture(scope="module")
def lesson_table():
    """Lesson 16's layer model: 32 layers of 2 ms, head 16 ms, tail 8 ms, P = 4, m = 8."""
    return {(r["schedule"], r["split"]): r for r in placement_table(32, 2.0, 16.0, 8.0, 4, 8)}


def test_lesson_dumbbell_table(lesson_table):
    t = lesson_table
    # the loop rows reproduce the lesson's own numbers (section 4 and extension E)
    assert t[("1f1b", "balanced")]["stage_layers"] == water_fill(32, 2.0, 16.0, 8.0, 4) == [3, 11, 11, 7]
    assert t[("1f1b", "even")]["makespan"] == 840.0
    assert t[("1f1b", "balanced")]["makespan"] == 726.0
    assert t[("zb-h1", "balanced")]["makespan"] == 594.0
    # the V on an even split: rank 0 holds both heavy ends (24 + 16 ms of forward) and is the bottleneck
    ev = t[("zbv", "even")]
    per_rank = [ev["stage_times"][r] + ev["stage_times"][7 - r] for r in range(4)]
    assert per_rank == [40.0, 16.0, 16.0, 16.0]
    assert ev["makespan"] >= 8 * 3 * 40.0 and ev["makespan"] > t[("1f1b", "even")]["makespan"]
    # re-balanced for the V (rank 0 keeps one layer per stage), ZB-V beats 1F1B but not ZB-H1:
    # head + tail (24 ms) exceed the mean per-rank forward (22 ms), so rank 0 is still the slowest
    zb = t[("zbv", "balanced")]
    assert zb["stage_layers"] == [1, 5, 2, 1, 9, 8, 5, 1]
    assert t[("1f1b", "balanced")]["makespan"] > zb["makespan"] > t[("zb-h1", "balanced")]["makespan"]
    assert zb["makespan"] >= 8 * 3 * (16.0 + 8.0 + 2 * 2.0)  # rank 0's own work: a lower bound
    for r in t.values():
        assert r["bubble_ratio"] == pytest.approx(1 - 8 * 3 * sum(r["stage_times"]) / (4 * r["makespan"]))


def test_lesson_v_with_empty_end_stages():
    rows = {
        (r["schedule"], r["split"]): r
        for r in placement_table(32, 2.0, 16.0, 8.0, 4, 8, min_layers_per_stage=0)
    }
    zb = rows[("zbv", "balanced")]
    assert zb["stage_layers"][0] == zb["stage_layers"][7] == 0  # head and tail alone on rank 0
    assert zb["makespan"] >= 8 * 3 * 24.0
    assert zb["makespan"] < rows[("zb-h1", "balanced")]["makespan"]


@pytest.mark.parametrize("P,m", [(2, 4), (3, 6), (4, 8), (4, 12)])
def test_dualpipev_dependencies_hold(P, m):
    """Every op starts after its inputs: an overlapped pair's outputs leave at the pair's end."""
    f = [1.0 + 0.5 * (s % 3) for s in range(2 * P)]
    tl = simulate_placed(dualpipev(P, m), f, f, f)
    release = {(o.stage, o.kind, o.mb): o.end for o in tl.ops}
    for _start, en, label in tl.meta["overlapped"]:
        inner = label[1 : label.index(")")].split(";")
        for a in inner:
            release[parse_action(a)] = en
    checked = 0
    for o in tl.ops:
        if o.kind == "F" and o.stage > 0:
            assert o.start >= release[(o.stage - 1, "F", o.mb)]
            checked += 1
        if o.kind == "B" and o.stage < 2 * P - 1:
            assert o.start >= release[(o.stage + 1, "B", o.mb)]
            checked += 1
    assert checked == 2 * (2 * P - 1) * m
    starts = {st for st, _, _ in tl.meta["overlapped"]}
    waited = [
        o for o in tl.ops if o.start in {en for _, en, _ in tl.meta["overlapped"]} and o.start not in starts
    ]
    assert waited  # some op does wait for a pair to end: the release time matters here


def test_vshape_and_launch_never_import_matplotlib():
    import subprocess
    import sys

    probe = (
        "import sys, pipelab.vshape as v, pipelab.launch as l\n"
        "import pipelab.vsplit as vs; vs.placement_table(8, 1.0, 2.0, 1.0, 2, 4); l.launch_flags([1, 3, 3, 1], placement='v')\n"
        "assert 'matplotlib' not in sys.modules\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_gantt_draws_the_v_on_ranks():
    import matplotlib.pyplot as plt

    from pipelab.plot import gantt

    tl = simulate_placed(zbv(2, 4), 1.0, 1.0, 1.0)
    assert tl.rank_of(tl.find(3, "F", 0)) == 0 and tl.rank_of(tl.find(2, "F", 0)) == 1
    assert [o.label for o in tl.ops_of_rank(0)][:4] == ["0F0", "0F1", "0F2", "3F0"]
    assert tl.busy_per_stage == [24.0, 24.0]
    ax = gantt(tl)
    bars = {}
    for c in ax.collections:
        for path in c.get_paths():
            xy = path.vertices
            bars.setdefault((float(xy[:, 0].min()), float(xy[:, 0].max())), []).append(
                round(float(xy[:, 1].min() + xy[:, 1].max()) / 2, 6)
            )
    plt.close(ax.figure)
    op = tl.find(3, "F", 0)  # stage 3 of a 2-rank V runs on rank 0: drawn on row 0, not on row 3 mod 2
    other = tl.find(1, "F", 1)  # rank 1 runs 1F1 at the same time
    assert (other.start, other.end) == (op.start, op.end)
    assert sorted(bars[(op.start, op.end)]) == [0.0, 1.0]


def test_chrome_trace_puts_v_stages_on_their_rank():
    from pipelab import chrome_trace

    tl = simulate_placed(zbv(2, 2), 1.0, 1.0, 1.0)
    events = [e for e in chrome_trace(tl)["traceEvents"] if e["ph"] == "X"]
    tid = {(e["args"]["stage"], e["name"]) for e in events if e["tid"] == 0}
    assert (3, "F0") in tid and (0, "F0") in tid and not any(s in (1, 2) for s, _ in tid)


def test_gantt_frames_overlapped_pairs():
    import matplotlib.pyplot as plt

    from pipelab.plot import gantt

    sched = dualpipev(2, 4)
    tl = simulate_placed(sched, 1.0, 1.0, 1.0)
    ax = gantt(tl)
    frames = [c for c in ax.collections if len(c.get_facecolors()) == 0 or c.get_facecolors()[0][3] == 0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(ax.figure)
    pairs = sum(a.endswith("OVERLAP_F_B") for row in sched.labels() for a in row)
    assert len(frames) == len(tl.meta["overlapped"]) == pairs > 0
    assert "重叠的 F 与 B" in legend


@pytest.mark.parametrize("seed", range(12))
def test_batch_makespans_equal_simulate_placed(seed):
    """``batch_makespans`` (numpy sweeps over the fixed dependency order) gives exactly the makespans of
    ``simulate_placed`` case by case, for V schedules (with hop latency and overlapped pairs) and loop ones."""
    import numpy as np

    from pipelab.vsplit import batch_makespans

    rng = random.Random(seed)
    P = rng.choice([2, 3, 4])
    m = rng.choice([2 * P, 2 * P + 1, 3 * P])
    lat, ov = rng.choice([0.0, 0.5]), rng.choice([0.0, 0.3, 1.0])
    for sched in (zbv(P, m), dualpipev(P, m), PlacedSchedule.from_schedule(zb_h1(P, m))):
        S = sched.num_stages
        cases = [[_random_costs(rng, S) for _ in range(3)] for _ in range(6)]
        got = batch_makespans(
            sched, *(np.array([c[i] for c in cases]) for i in range(3)), hop_latency=lat, overlap=ov
        )
        want = [simulate_placed(sched, *c, hop_latency=lat, overlap=ov).makespan for c in cases]
        assert got.tolist() == want, sched.name


def test_best_v_split_is_the_first_fastest_split():
    """``best_v_split`` returns what simulating every split one by one and keeping the first fastest gives."""
    from pipelab.vsplit import best_v_split

    rank_layers = v_rank_layers(16, 1.0, 5.0, 3.0, 3, min_layers_per_stage=0)
    for build in (zbv, dualpipev):
        sched = build(3, 6)
        best = None
        for n in v_splits(rank_layers, min_layers_per_stage=0):
            f = v_chunk_times(n, 1.0, 5.0, 3.0)
            tl = simulate_placed(sched, f, f, f, activation_bytes=n, free_after="W")
            if best is None or tl.makespan < best[0].makespan:
                best = (tl, n)
        tl, n = best_v_split(sched, rank_layers, 1.0, 5.0, 3.0, min_layers_per_stage=0)
        assert n == best[1] and tl.makespan == best[0].makespan and tl.peak_memory == best[0].peak_memory
    with pytest.raises(ValueError, match="shape"):
        from pipelab.vsplit import batch_makespans

        batch_makespans(zbv(2, 4), [[1.0] * 3], [[1.0] * 3], [[1.0] * 3])
