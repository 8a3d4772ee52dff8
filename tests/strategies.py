"""Hypothesis strategies shared by the test-suite (one place, imported by the test modules)."""

from __future__ import annotations

from hypothesis import strategies as st

# --- pipelab -------------------------------------------------------------------------------------
#: a positive stage/op time with few distinct values, so ties (the tricky cases) are common
op_time = st.sampled_from([0.5, 1.0, 1.0, 1.5, 2.0, 3.0])
#: a non-negative layer cost (zero allowed)
layer_cost = st.sampled_from([0.0, 0.25, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0])


@st.composite
def pipeline_case(draw, max_ranks: int = 5, max_microbatches: int = 8, schedules=None):
    """A schedule name, ranks P, microbatches m, chunks v and per-stage F/B/W times."""
    name = draw(st.sampled_from(schedules or ["gpipe", "1f1b", "interleaved-1f1b", "zb-h1"]))
    P = draw(st.integers(1, max_ranks))
    m = draw(st.integers(1, max_microbatches))
    v = draw(st.integers(2, 3)) if name == "interleaved-1f1b" else 1
    S = P * v
    f = draw(st.lists(op_time, min_size=S, max_size=S))
    b = draw(st.lists(op_time, min_size=S, max_size=S))
    w = draw(st.lists(op_time, min_size=S, max_size=S))
    latency = draw(st.sampled_from([0.0, 0.0, 0.5]))
    return {"name": name, "P": P, "m": m, "v": v, "f": f, "b": b, "w": w, "latency": latency}


@st.composite
def partition_case(draw, max_layers: int = 9, hetero: bool = True):
    """Per-layer costs, a stage count and optional head/tail, speeds and memory caps."""
    L = draw(st.integers(1, max_layers))
    P = draw(st.integers(1, L))
    kw = {
        "head_cost": draw(st.sampled_from([0.0, 0.0, 1.5, 4.0])),
        "tail_cost": draw(st.sampled_from([0.0, 0.0, 1.0, 6.0])),
    }
    if hetero and draw(st.booleans()):
        kw["speed"] = draw(st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0]), min_size=P, max_size=P))
    if hetero and draw(st.booleans()):
        kw["mem"] = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=L, max_size=L))
        kw["mem_cap"] = draw(st.lists(st.sampled_from([3.0, 4.0, 6.0, 30.0]), min_size=P, max_size=P))
    costs = draw(st.lists(layer_cost, min_size=L, max_size=L))
    return costs, P, kw


# --- written answers (answer groups) --------------------------------------------------------------
_answer_phrases = [
    "阻塞发送造成背压，下游没有空出接收缓冲区时上游只能等待。",
    "上游晚到造成饥饿，因为慢的 stage 决定了节拍。",
    "The send blocks until the downstream stage has a free receive buffer.",
    "气泡率收敛到 1 - t̄/t_max，增加 m 也消不掉。",
    "in-flight activations grow as min(m, P-p) · M_act per stage",
    "YOUR ANSWER HERE",
    "",
    "我不知道。",
]


@st.composite
def written_answers(draw, max_students: int = 12):
    """(student_id, text, met) triples of one item: texts built from a few phrases (so duplicates and
    near-duplicates are common), each with a set of criteria met."""
    n = draw(st.integers(1, max_students))
    out = []
    for i in range(n):
        parts = draw(st.lists(st.sampled_from(_answer_phrases), min_size=0, max_size=3))
        spaced = draw(st.sampled_from(["", " ", "\n\n"]))
        met = tuple(sorted(draw(st.sets(st.sampled_from(["a", "b"])))))
        out.append((f"s{i:02d}", spaced.join(parts), met))
    return out
