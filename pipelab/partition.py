"""Layer-to-stage partitioners.

Every partitioner returns ``counts``: the number of consecutive layers on each stage (stage ``p`` holds
layers ``sum(counts[:p]) .. sum(counts[:p+1])-1``; every stage gets at least one layer).

Cost model (shared by all functions): stage ``p``'s time is
``(head_cost·[p == 0] + Σ layer costs on p + tail_cost·[p == P−1]) / speed[p]``; with ``P = 1`` both the
head and the tail are on stage 0.  ``speed`` defaults to 1 for every stage (``speed = 2`` means a
device twice as fast).  Optional memory: ``mem`` gives each layer's memory (a number applies to every
layer) and ``mem_cap`` the cap per stage (a number applies to every stage); a stage is feasible when the
sum of its layers' memory is ``<= mem_cap``.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import numbers

import numpy as np

from . import _validate as V

__all__ = [
    "water_fill",
    "min_max_partition",
    "brute_force_partition",
    "stage_loads",
    "bottleneck",
    "uniform_partition",
    "spread_balance_partition",
    "counts_to_bounds",
]


# --------------------------------------------------------------------------------------------- helpers
def counts_to_bounds(counts) -> list[int]:
    """``[3, 2, 4] -> [0, 3, 5, 9]``: the layer index where each stage starts, plus the end."""
    out = [0]
    for c in counts:
        out.append(out[-1] + int(c))
    return out


def _per_stage(value, P: int, what: str, default: float | None) -> list[float] | None:
    if value is None:
        return None if default is None else [default] * P
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        vals = [float(value)] * P
    else:
        vals = V.times(value, what)
        if len(vals) != P:
            raise ValueError(f"{what} has {len(vals)} entries but there are {P} stages")
    for i, v in enumerate(vals):
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"{what}[{i}] = {v} must be positive and finite")
    return vals


def _per_layer(value, L: int, what: str) -> list[float] | None:
    if value is None:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        vals = [float(value)] * L
    else:
        vals = V.times(value, what)
        if len(vals) != L:
            raise ValueError(f"{what} has {len(vals)} entries but there are {L} layers")
    for i, v in enumerate(vals):
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"{what}[{i}] = {v} must be non-negative and finite")
    return vals


def _setup(layer_costs, num_stages, head_cost, tail_cost, mem, mem_cap, speed, as_array=False):
    costs = V.array(layer_costs, "layer_costs") if as_array else V.times(layer_costs, "layer_costs")
    P = V.count(num_stages, "num_stages")
    L = len(costs)
    if L < P:
        raise ValueError(f"cannot give each of {P} stages at least one layer: only {L} layers")
    h = V.nonneg(head_cost, "head_cost")
    t = V.nonneg(tail_cost, "tail_cost")
    spd = _per_stage(speed, P, "speed", None)
    mems = _per_layer(mem, L, "mem")
    caps = _per_stage(mem_cap, P, "mem_cap", None)
    if (mems is None) != (caps is None):
        raise ValueError("give both mem (per-layer memory) and mem_cap (per-stage cap), or neither")
    fixed = [0.0] * P
    fixed[0] += h
    fixed[-1] += t
    return costs, P, L, fixed, spd, mems, caps


def stage_loads(layer_costs, counts, *, head_cost=0.0, tail_cost=0.0, speed=None) -> list[float]:
    """Per-stage time of a partition (see the module docstring for the cost model)."""
    costs = V.times(layer_costs, "layer_costs")
    counts = [V.count(c, "counts[i]") for c in counts]
    if sum(counts) != len(costs):
        raise ValueError(f"counts sum to {sum(counts)} but there are {len(costs)} layers")
    P = len(counts)
    spd = _per_stage(speed, P, "speed", 1.0)
    b = counts_to_bounds(counts)
    out = []
    for p in range(P):
        w = math.fsum(costs[b[p] : b[p + 1]])
        if p == 0:
            w += float(head_cost)
        if p == P - 1:
            w += float(tail_cost)
        out.append(w / spd[p])
    return out


def bottleneck(layer_costs, counts, **kw) -> float:
    """The slowest stage's time of a partition."""
    return max(stage_loads(layer_costs, counts, **kw))


def uniform_partition(num_layers: int, num_stages: int) -> list[int]:
    """Equal layer counts (the first ``L mod P`` stages get one more)."""
    L = V.count(num_layers, "num_layers")
    P = V.count(num_stages, "num_stages")
    if L < P:
        raise ValueError(f"cannot give each of {P} stages at least one layer: only {L} layers")
    q, r = divmod(L, P)
    return [q + (1 if p < r else 0) for p in range(P)]


# --------------------------------------------------------------------------------------------- water-fill
def water_fill(total_layers, layer_cost, head_cost, tail_cost, num_stages) -> list[int]:
    """Uniform per-layer cost: one layer per stage, then each next layer to the least-loaded stage.

    Stage 0 carries ``head_cost``, stage ``P−1`` carries ``tail_cost`` (both on stage 0 when ``P = 1``).
    Ties go to the lowest stage index.  Optimal for the slowest stage (and the variance) when every layer
    costs the same; not for non-uniform costs (use :func:`min_max_partition`).
    """
    L = V.count(total_layers, "total_layers")
    P = V.count(num_stages, "num_stages")
    c = V.nonneg(layer_cost, "layer_cost")
    h = V.nonneg(head_cost, "head_cost")
    t = V.nonneg(tail_cost, "tail_cost")
    if L < P:
        raise ValueError(f"cannot give each of {P} stages at least one layer: only {L} layers")
    load = [c] * P
    load[0] += h
    load[-1] += t
    counts = [1] * P
    heap = [(load[p], p) for p in range(P)]
    heapq.heapify(heap)
    for _ in range(L - P):
        w, p = heapq.heappop(heap)
        counts[p] += 1
        heapq.heappush(heap, (w + c, p))
    return counts


# --------------------------------------------------------------------------------------------- exact min-max
def _greedy_uniform(pre: list[float], P: int, fixed: list[float], T: float):
    """Maximal-prefix greedy for identical devices without memory caps.

    Returns ``(bounds or None, ext)``.  Exact for identical devices: if any partition has bottleneck
    ``<= T``, every greedy boundary is at or beyond that partition's boundary (a sub-segment of a
    feasible segment is feasible).  When it fails, ``ext`` is the smallest threshold at which some
    stage could take one more layer (or the last stage could fit): every ``T' < ext`` gives the same
    greedy boundaries, so the optimum is ``>= ext``.
    """
    L = len(pre) - 1
    bounds = [0]
    i = 0
    ext = math.inf
    for p in range(P):
        remaining = P - p - 1
        f = fixed[p]
        if p == P - 1:
            need = f + pre[L] - pre[i]
            if need > T:
                return None, min(ext, need)
            bounds.append(L)
            return bounds, ext
        budget = T - f
        # largest j with pre[j] - pre[i] <= budget, leaving `remaining` layers
        j = bisect.bisect_right(pre, pre[i] + budget, lo=i) - 1
        cap = L - remaining
        if j >= cap:
            j = cap
        else:
            e = f + pre[j + 1] - pre[i]
            if e < ext:
                ext = e
        if j <= i:
            return None, min(ext, f + pre[i + 1] - pre[i])
        bounds.append(j)
        i = j
    return bounds, ext


def _reachable(pre, P, fixed, spd, pm, caps, T):
    """Exact feasibility for heterogeneous stages (speed factors / memory caps) in O(P·L) with numpy.

    ``R`` = boundaries reachable after stage p.  Boundary j is reachable after stage p iff some
    reachable i in [lo_p(j), j−1] exists, where lo_p(j) is the smallest start with a feasible segment
    [i, j) on stage p (segment cost is monotone in the segment).  Returns the bounds or None.
    """
    L = len(pre) - 1
    pre_np = np.asarray(pre)
    idx = np.arange(L + 1)
    reach = np.zeros(L + 1, dtype=bool)
    reach[0] = True
    los = []
    history = [reach]
    for p in range(P):
        budget = T * spd[p] - fixed[p]
        if budget < 0:
            return None
        lo = np.searchsorted(pre_np, pre_np - budget * (1 + 1e-12), side="left")
        if pm is not None:
            lo = np.maximum(lo, np.searchsorted(pm, pm - caps[p] * (1 + 1e-12), side="left"))
        cnt = np.concatenate(([0], np.cumsum(reach)))  # cnt[k] = reachable among 0..k-1
        hi = idx  # exclusive upper end: i <= j-1
        ok = (lo < hi) & (cnt[hi] - cnt[np.minimum(lo, hi)] > 0)
        ok[0] = False
        # leave at least one layer per remaining stage
        ok[L - (P - p - 1) + 1 :] = False
        reach = ok
        los.append(lo)
        history.append(reach)
    if not reach[L]:
        return None
    bounds = [L]
    j = L
    for p in range(P - 1, -1, -1):
        prev = history[p]
        lo = los[p][j]
        cand = np.nonzero(prev[lo:j])[0]
        i = int(lo + cand[-1])
        bounds.append(i)
        j = i
    bounds.reverse()
    return bounds


def _loads_from_bounds(pre, bounds, fixed, spd):
    return [
        (fixed[p] + pre[bounds[p + 1]] - pre[bounds[p]]) / (1.0 if spd is None else spd[p])
        for p in range(len(bounds) - 1)
    ]


def min_max_partition(
    layer_costs,
    num_stages,
    *,
    head_cost=0.0,
    tail_cost=0.0,
    mem=None,
    mem_cap=None,
    speed=None,
    tie_break="variance",
) -> list[int]:
    """Exact contiguous partition minimising the slowest stage's time; ties broken by variance.

    Binary search on the bottleneck ``T``: every probe runs an exact feasibility test (maximal-prefix
    greedy, ``O(P log L)``, for identical devices without memory caps; an ``O(P·L)`` reachability sweep
    otherwise), and every feasible probe lowers the upper bound to the *attained* bottleneck of the
    partition it found, so the search ends on an attained value.

    Several partitions usually reach that bottleneck.  With ``tie_break="variance"`` (the default, the
    rule of lesson 16's contract) the one with the least sum of squared stage times is returned — the
    least variance, since the stage times sum to a constant without ``speed`` — found by an exact
    dynamic programme over the partitions whose stages all stay within the bottleneck
    (``O(P·L·w)``, ``w`` the most layers one stage can hold; :data:`TIE_BREAK_BUDGET` bounds it, and a
    larger instance warns and skips the tie-break).  When every layer costs the same (and there are no
    speeds or caps) the water-filling split is that partition.  ``tie_break=None`` returns the first
    optimum the search finds.  Raises ``ValueError`` if no partition meets the memory caps.
    """
    if tie_break not in ("variance", None):
        raise ValueError(f"tie_break must be 'variance' or None, not {tie_break!r}")
    arr, P, L, fixed, spd, mems, caps = _setup(
        layer_costs, num_stages, head_cost, tail_cost, mem, mem_cap, speed, as_array=True
    )
    pre_np = np.concatenate(([0.0], np.cumsum(arr)))
    pre = pre_np.tolist()
    hetero = spd is not None or mems is not None
    if mems is not None:
        pm = np.concatenate(([0.0], np.cumsum(np.asarray(mems, dtype=float))))
        if max(mems) > max(caps):
            raise ValueError("no partition fits the memory caps: some layer alone exceeds every cap")
    else:
        pm = None
    if hetero:
        s = spd if spd is not None else [1.0] * P

        def probe(T):
            return _reachable(pre, P, fixed, s, pm, caps, T), -math.inf
    else:
        s = None

        def probe(T):
            return _greedy_uniform(pre, P, fixed, T)

    total = pre[-1] + sum(fixed)
    smin = min(s) if s is not None else 1.0
    hi = total / smin
    best, _ = probe(hi * (1 + 1e-12))
    if best is None:
        raise ValueError("no partition satisfies the memory caps (mem / mem_cap)")
    hi = max(_loads_from_bounds(pre, best, fixed, s))
    smax = max(s) if s is not None else 1.0
    lo = max(total / (P * smax), float(arr.max()) / smax) * (1 - 1e-12)
    if hetero and L * L * P <= 4_000_000:
        # small instance: binary search over the sorted set of attainable stage times
        iu, ju = np.triu_indices(L + 1, 1)
        seg = pre_np[ju] - pre_np[iu]
        cand = np.unique(np.concatenate([(fixed[p] + seg) / s[p] for p in range(P)]))
        cand = cand[(cand >= lo) & (cand <= hi)]
        a, b_ = 0, len(cand) - 1
        while a <= b_:
            mid_i = (a + b_) // 2
            b, _ = probe(float(cand[mid_i]))
            if b is None:
                a = mid_i + 1
            else:
                best = b
                hi = max(_loads_from_bounds(pre, b, fixed, s))
                b_ = min(mid_i - 1, int(np.searchsorted(cand, hi, side="right")) - 1)
        lo = hi
    # invariant: hi is attained by `best`; the optimum is >= lo
    for _ in range(400):
        if lo >= hi or hi - lo <= 1e-13 * max(hi, 1e-300) and hetero:
            break
        mid = lo if hi - lo <= 1e-9 * hi else 0.5 * (lo + hi)
        b, ext = probe(mid)
        if b is None:
            lo = max(mid, ext)
        else:
            best = b
            hi = max(_loads_from_bounds(pre, b, fixed, s))
    counts = [best[p + 1] - best[p] for p in range(P)]
    if tie_break is None:
        return counts
    if not hetero and L > P and float(arr.min()) == float(arr.max()):
        wf = water_fill(L, float(arr[0]), float(head_cost), float(tail_cost), P)
        if max(stage_loads(arr, wf, head_cost=head_cost, tail_cost=tail_cost)) <= hi * (1 + 1e-12):
            return wf
    least = _least_squares_within(pre_np, P, fixed, s, pm, caps, hi * (1 + 1e-9))
    return counts if least is None else least


#: Most element operations the variance tie-break of :func:`min_max_partition` may spend (P·L·w).
TIE_BREAK_BUDGET = 50_000_000


def _least_squares_within(pre, P, fixed, spd, pm, caps, T):
    """The partition with the least sum of squared stage times among those whose every stage time is
    ``<= T`` (and within the memory caps): ``D_p(j) = min_i D_{p−1}(i) + t_p(i, j)²`` over the first
    ``j`` layers on stages ``0..p``, vectorised over ``j`` for each segment length ``d = j − i``.
    Returns None (after a warning) when the work exceeds :data:`TIE_BREAK_BUDGET`."""
    import warnings

    L = len(pre) - 1
    s = [1.0] * P if spd is None else spd
    # the longest segment any stage may hold within T (a stage's time grows with its segment)
    budget = max(T * s[p] - fixed[p] for p in range(P))
    ends = np.searchsorted(pre, pre[:-1] + budget, side="right") - 1
    longest = max(1, min(int((ends - np.arange(L)).max()), L - P + 1))
    if P * L * longest > TIE_BREAK_BUDGET:
        warnings.warn(
            f"min_max_partition: the variance tie-break would take ~{P * L * longest:.1e} operations "
            f"(budget {TIE_BREAK_BUDGET:.0e}); returning a min-max partition without it "
            "(pass tie_break=None to skip it silently)",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    inf = math.inf
    D = np.full(L + 1, inf)
    D[0] = 0.0
    choice = np.zeros((P, L + 1), dtype=np.int64)
    j = np.arange(L + 1)
    for p in range(P):
        new = np.full(L + 1, inf)
        arg = np.zeros(L + 1, dtype=np.int64)
        for d in range(longest, 0, -1):  # longest segment first: ties keep the earliest cut
            i = j[d:] - d
            t = (fixed[p] + pre[d:] - pre[:-d]) / s[p]
            ok = t <= T
            if pm is not None:
                ok &= pm[d:] - pm[:-d] <= caps[p] * (1 + 1e-12)
            val = np.where(ok, D[i] + t * t, inf)
            better = val < new[d:] * (1 - 1e-12)  # a float-level tie is a tie
            new[d:] = np.where(better, val, new[d:])
            arg[d:] = np.where(better, i, arg[d:])
        D = new
        choice[p] = arg
    if not math.isfinite(D[L]):
        return None
    bounds = [L]
    for p in range(P - 1, -1, -1):
        bounds.append(int(choice[p][bounds[-1]]))
    bounds.reverse()
    return [bounds[p + 1] - bounds[p] for p in range(P)]


# --------------------------------------------------------------------------------------------- oracles
def brute_force_partition(
    layer_costs, num_stages, *, head_cost=0.0, tail_cost=0.0, mem=None, mem_cap=None, speed=None
) -> list[int]:
    """Exact min-max partition by enumerating all ``C(L−1, P−1)`` cut sets (a test oracle; small sizes).

    Among optimal partitions returns the one with the smallest variance of stage times (then the
    lexicographically first).  Raises ``ValueError`` if nothing meets the memory caps.
    """
    costs, P, L, fixed, spd, mems, caps = _setup(
        layer_costs, num_stages, head_cost, tail_cost, mem, mem_cap, speed
    )
    if math.comb(L - 1, P - 1) > 2_000_000:
        raise ValueError("brute_force_partition is a test oracle: too many partitions to enumerate")
    s = spd if spd is not None else [1.0] * P
    best_key = None
    best = None
    for cuts in itertools.combinations(range(1, L), P - 1):
        b = (0, *cuts, L)
        ok = True
        loads = []
        for p in range(P):
            if mems is not None and math.fsum(mems[b[p] : b[p + 1]]) > caps[p]:
                ok = False
                break
            loads.append((fixed[p] + math.fsum(costs[b[p] : b[p + 1]])) / s[p])
        if not ok:
            continue
        mx = max(loads)
        mean = sum(loads) / P
        var = sum((x - mean) ** 2 for x in loads) / P
        key = (mx, var)
        if best_key is None or key < best_key:
            best_key = key
            best = [b[p + 1] - b[p] for p in range(P)]
    if best is None:
        raise ValueError("no partition satisfies the memory caps (mem / mem_cap)")
    return best


def spread_balance_partition(layer_costs, num_stages, *, max_rounds=None) -> list[int]:
    """A max−min balancer (the idea behind DeepSpeed's ``partition_balanced``), for comparison only.

    Starts from the split nearest to the ideal prefix targets ``k·Σw/P`` and then moves single
    boundary layers between neighbours while that lowers ``max − min`` of stage loads.  It reduces the
    *spread*, which is not the same as minimising the slowest stage: compare with
    :func:`min_max_partition`.
    """
    costs = V.times(layer_costs, "layer_costs")
    P = V.count(num_stages, "num_stages")
    L = len(costs)
    if L < P:
        raise ValueError(f"cannot give each of {P} stages at least one layer: only {L} layers")
    pre = np.concatenate(([0.0], np.cumsum(np.asarray(costs, dtype=float))))
    targets = pre[-1] * np.arange(1, P) / P
    cuts = np.searchsorted(pre, targets)
    # choose the nearer of the two neighbouring prefix positions, keep cuts strictly increasing in 1..L-1
    prev_c = np.clip(cuts - 1, 0, L)
    cuts = np.where(np.abs(pre[prev_c] - targets) <= np.abs(pre[np.clip(cuts, 0, L)] - targets), prev_c, cuts)
    b = [0]
    for k, c in enumerate(cuts.tolist()):
        c = max(c, b[-1] + 1)
        c = min(c, L - (P - 1 - k))
        b.append(c)
    b.append(L)

    def spread(bb):
        loads = [pre[bb[p + 1]] - pre[bb[p]] for p in range(P)]
        return max(loads) - min(loads)

    cur = spread(b)
    rounds = max_rounds if max_rounds is not None else 4 * L
    for _ in range(rounds):
        improved = False
        for k in range(1, P):
            for d in (-1, 1):
                nb = b[k] + d
                if nb <= b[k - 1] or nb >= b[k + 1]:
                    continue
                old = b[k]
                b[k] = nb
                sp = spread(b)
                if sp < cur - 1e-15:
                    cur = sp
                    improved = True
                else:
                    b[k] = old
        if not improved:
            break
    return [b[p + 1] - b[p] for p in range(P)]
