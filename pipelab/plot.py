"""Matplotlib figures: Gantt timeline, bubble vs m, per-stage bars, activation memory over time.

Chinese labels use the course font (Noto Sans CJK SC, shipped by the ``mplfonts`` dependency), which
``pipelab.fonts.register`` adds to matplotlib when pipelab is imported; a missing glyph is never silenced.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from . import _validate as V
from .flow import bubble_limit, forward_flow
from .fonts import register as register_font
from .timeline import Timeline

register_font()  # importing the figures module makes the course font available to plain matplotlib too

__all__ = ["gantt", "bubble_vs_m", "stage_bars", "memory_over_time"]


def _ax(ax, figsize):
    register_font()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


_KIND_STYLE = {
    "F": dict(alpha=1.0, hatch=None),
    "B": dict(alpha=0.6, hatch="//"),
    "W": dict(alpha=0.35, hatch=".."),
}


def gantt(timeline: Timeline, ax=None, title=None, *, show_labels: bool | None = None, time_unit: str = ""):
    """Gantt chart: one row per rank (rank 0 on top), one colour per microbatch.

    Forward ops are solid, backward ops hatched ``//`` and lighter, weight-gradient ops dotted and
    lighter still; idle time is the light-grey row background and time blocked in a send (finite
    buffers) is drawn in red.  Returns the Axes.
    """
    if not isinstance(timeline, Timeline):
        raise TypeError("gantt() needs a pipelab Timeline")
    P = timeline.num_stages
    own = ax is None
    ax = _ax(ax, (11, 0.5 * P + 1.8))
    cmap = plt.get_cmap("tab20" if timeline.num_microbatches > 10 else "tab10")
    T = timeline.makespan or 1.0
    if show_labels is None:
        show_labels = len(timeline.ops) <= 200
    for r in range(P):
        ax.broken_barh([(0, T)], (r - 0.4, 0.8), facecolors="#eeeeee", edgecolor="none", zorder=0)
    for o in timeline.ops:
        r = timeline.rank_of(o)
        st = _KIND_STYLE.get(o.kind, _KIND_STYLE["F"])
        color = cmap(o.mb % cmap.N)
        ax.broken_barh(
            [(o.start, o.end - o.start)],
            (r - 0.4, 0.8),
            facecolors=[color],
            alpha=st["alpha"],
            hatch=st["hatch"],
            edgecolor="black",
            linewidth=0.4,
            zorder=2,
        )
        if show_labels and o.end - o.start > 0.025 * T:
            txt = f"{o.kind}{o.mb}" if timeline.chunks == 1 else f"{o.kind}{o.mb}.{o.chunk}"
            ax.text((o.start + o.end) / 2, r, txt, ha="center", va="center", fontsize=7, zorder=3)
    for r, s, e in timeline.blocked:
        ax.broken_barh(
            [(s, e - s)], (r - 0.4, 0.8), facecolors="#d62728", alpha=0.35, edgecolor="none", zorder=1
        )
    overlapped = timeline.meta.get("overlapped", [])  # DualPipeV's F&B pairs (pipelab.vshape)
    for s, e, label in overlapped:
        r = timeline.rank_of(
            timeline.find(
                int(label[1 : label.index("F")]), "F", int(label[label.index("F") + 1 : label.index(";")])
            )
        )
        ax.broken_barh(
            [(s, e - s)], (r - 0.45, 0.9), facecolors="none", edgecolor="black", linewidth=1.6, zorder=4
        )
    ax.set_ylim(P - 0.5, -0.5)
    ax.set_yticks(range(P))
    ax.set_yticklabels([f"stage {r}" if timeline.chunks == 1 else f"rank {r}" for r in range(P)])
    ax.set_xlim(0, T * 1.01)
    ax.set_xlabel(f"时间 {time_unit}".strip())
    kinds = sorted({o.kind for o in timeline.ops}, key="FBW".index)
    handles = [
        Patch(
            facecolor="#999999",
            alpha=_KIND_STYLE[k]["alpha"],
            hatch=_KIND_STYLE[k]["hatch"],
            edgecolor="black",
            label={"F": "前向 F", "B": "反向 B", "W": "权重梯度 W"}[k],
        )
        for k in kinds
    ]
    handles.append(Patch(facecolor="#eeeeee", edgecolor="#999999", label="空闲"))
    if timeline.blocked:
        handles.append(Patch(facecolor="#d62728", alpha=0.35, label="阻塞发送"))
    if overlapped:
        handles.append(Patch(facecolor="none", edgecolor="black", linewidth=1.6, label="重叠的 F 与 B"))
    ax.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9, bbox_to_anchor=(1.005, 1.0))
    if title is None:
        title = f"makespan = {timeline.makespan:g}，气泡率 = {timeline.bubble_ratio:.1%}"
    ax.set_title(title)
    if own:
        ax.figure.tight_layout()
    return ax


def bubble_vs_m(stage_times, ms, ax=None, *, title=None):
    """Simulated forward-flow bubble ratio against m, the ``1 − mean/max`` asymptote (dashed) and the
    uniform-stage curve ``(P−1)/(m+P−1)`` for comparison.  Returns the Axes."""
    t = V.times(stage_times)
    ms = [V.count(m, "ms[i]") for m in ms]
    if not ms:
        raise ValueError("ms must not be empty")
    P = len(t)
    ax = _ax(ax, (7, 4))
    sim = [forward_flow(t, m).bubble_ratio for m in ms]
    ax.plot(ms, sim, "o-", label="模拟（非均匀阶段）")
    ax.plot(
        ms,
        [(P - 1) / (m + P - 1) for m in ms],
        "s--",
        color="gray",
        alpha=0.8,
        label="均匀阶段 (P−1)/(m+P−1)",
    )
    lim = bubble_limit(t)
    ax.axhline(lim, linestyle="--", color="C3", label=f"极限 1 − mean/max = {lim:.3f}")
    if max(ms) / max(1, min(ms)) >= 16:
        ax.set_xscale("log", base=2)
    ax.set_xlabel("微批次数 m")
    ax.set_ylabel("气泡率")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title(title or f"阶段耗时 {t}")
    return ax


def stage_bars(before, after, labels=("重平衡前", "重平衡后"), ax=None, *, title=None, ylabel="每阶段耗时"):
    """Grouped bars of per-stage times before/after re-balancing, each set's maximum dashed.
    ``before`` and ``after`` may have different lengths.  Returns the Axes."""
    b = V.times(before, "before")
    a = V.times(after, "after")
    ax = _ax(ax, (7, 4))
    n = max(len(a), len(b))
    w = 0.38
    ax.bar([i - w / 2 for i in range(len(b))], b, width=w, label=labels[0], color="C0")
    ax.bar([i + w / 2 for i in range(len(a))], a, width=w, label=labels[1], color="C2")
    ax.axhline(max(b), color="C0", linestyle="--", linewidth=1, label=f"{labels[0]} 最慢 = {max(b):g}")
    ax.axhline(max(a), color="C2", linestyle="--", linewidth=1, label=f"{labels[1]} 最慢 = {max(a):g}")
    ax.set_xticks(range(n))
    ax.set_xticklabels([f"stage {i}" for i in range(n)])
    ax.set_ylabel(ylabel)
    # headroom above the tallest bar, so the legend (two columns, at the top) covers no bar
    ax.set_ylim(0, 1.4 * max(max(a), max(b), 1e-12))
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    if title:
        ax.set_title(title)
    return ax


def memory_over_time(timeline: Timeline, ax=None, *, title=None, unit: str = "GiB"):
    """Activation memory per stage (per rank when a rank holds several chunks) over time (from
    :func:`pipelab.simulate`), labelled like :func:`gantt`'s rows.  Returns the Axes."""
    if not isinstance(timeline, Timeline) or timeline.memory is None:
        raise ValueError("memory_over_time() needs a Timeline produced by pipelab.simulate()")
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]
    ax = _ax(ax, (8, 4))
    T = timeline.makespan
    for r, (ts, vals) in enumerate(timeline.memory):
        xs = [0.0, *ts.tolist(), T]
        ys = [0.0, *(v / scale for v in vals.tolist())]
        ys.append(ys[-1])
        ax.step(xs, ys, where="post", label=f"stage {r}" if timeline.chunks == 1 else f"rank {r}")
    ax.set_xlabel("时间")
    ax.set_ylabel(f"激活显存 ({unit})")
    if timeline.num_stages <= 12:
        ax.legend(fontsize=8)
    ax.set_title(title or "激活显存随时间变化")
    return ax
