# expect: stage_times=2 partition=2 scheduling=2 frontier=1
# The notebook's reference solution: the four exercise cells with the solution markers removed.

def stage_times(layer_costs, partition):
    """每个 stage 的耗时与不均衡比 max/mean。

    layer_costs: 每层耗时（list / tuple / 一维 numpy 数组），有限的非负数，至少一层。
    partition:   每个 stage 连续分到的层数（整数序列，每项 ≥ 1，总和 = 层数）。
    返回 (times, ratio)：times 是 P 个 Python float 组成的 list，ratio = max(times) / mean(times)
    （Python float；所有耗时都为 0 时定义为 1.0）。输入不得被修改。
    非法输入抛出 ValueError。
    """
    import math
    import numbers

    costs = []
    for v in layer_costs:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ValueError(f"layer_costs 只能包含数字，收到 {v!r}")
        v = float(v)
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"layer_costs 必须是有限的非负数，收到 {v}")
        costs.append(v)
    if not costs:
        raise ValueError("layer_costs 不能为空")
    counts = []
    for c in partition:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 1:
            raise ValueError(f"partition 的每一项都必须是 ≥ 1 的整数，收到 {c!r}")
        counts.append(int(c))
    if not counts:
        raise ValueError("partition 不能为空")
    if sum(counts) != len(costs):
        raise ValueError(f"partition 共 {sum(counts)} 层，但 layer_costs 有 {len(costs)} 层")
    times, start = [], 0
    for c in counts:
        times.append(float(sum(costs[start:start + c])))
        start += c
    mean = sum(times) / len(times)
    ratio = max(times) / mean if mean > 0 else 1.0
    return times, float(ratio)


def min_max_partition(layer_costs, num_stages):
    """把层按顺序切成 num_stages 段，使最慢 stage 的耗时最小（精确解）。

    layer_costs: 每层耗时，有限的非负数，至少一层（list / tuple / 一维 numpy 数组）。
    num_stages:  stage 数 P，整数，1 ≤ P ≤ 层数。
    返回 P 个 Python int 的 list（每项 ≥ 1，总和 = 层数）；最优解不唯一时返回任意一个。
    非法输入抛出 ValueError。规模：最多 400 层、64 个 stage，应在 1 秒内完成。
    """
    import math
    import numbers

    costs = []
    for v in layer_costs:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ValueError(f"layer_costs 只能包含数字，收到 {v!r}")
        v = float(v)
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"layer_costs 必须是有限的非负数，收到 {v}")
        costs.append(v)
    if not costs:
        raise ValueError("layer_costs 不能为空")
    if isinstance(num_stages, bool) or not isinstance(num_stages, numbers.Integral) or num_stages < 1:
        raise ValueError(f"num_stages 必须是 ≥ 1 的整数，收到 {num_stages!r}")
    P, L = int(num_stages), len(costs)
    if P > L:
        raise ValueError(f"num_stages = {P} 大于层数 {L}：每个 stage 至少要有一层")
    prefix = [0.0]
    for c in costs:
        prefix.append(prefix[-1] + c)

    def greedy(cap):
        # 贪心：每段尽量多装层，但段耗时不超过 cap（cap 不小于最重的一层）；返回各段层数（段数最少）
        counts, start = [], 0
        while start < L:
            end = start + 1
            while end < L and prefix[end + 1] - prefix[start] <= cap:
                end += 1
            counts.append(end - start)
            start = end
        return counts

    # 最优瓶颈一定等于某一段连续层的耗时之和，且不小于最重的一层：在这些候选值上二分
    heaviest = max(prefix[i + 1] - prefix[i] for i in range(L))
    candidates = sorted({prefix[j] - prefix[i] for i in range(L) for j in range(i + 1, L + 1)
                         if prefix[j] - prefix[i] >= heaviest})
    lo, hi = 0, len(candidates) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if len(greedy(candidates[mid])) <= P:
            hi = mid
        else:
            lo = mid + 1
    counts = greedy(candidates[lo])
    while len(counts) < P:  # 段数不足 P 时继续拆分最长的段：拆分不会让最大值变大
        i = max(range(len(counts)), key=counts.__getitem__)
        half = counts[i] // 2
        counts[i:i + 1] = [half, counts[i] - half]
    return counts


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    """同一批微批次，分别用静态 1F1B 顺序和动态“反向优先”策略执行（带反向的流水线）。

    fwd, bwd: 形状 n×P 的嵌套序列（或二维 numpy 数组），fwd[k][p] / bwd[k][p] 是微批次 k 在
              stage p 上的前向 / 反向耗时，有限的正数；n ≥ 1，P ≥ 1，两者形状相同。
    extra_in_flight: 动态策略在 1F1B 的显存上限之外多允许的在途微批次数，整数 ≥ 0。
    overhead: 动态策略每执行一个操作额外付出的决策耗时，有限的非负数。
    返回 {"static": R, "dynamic": R}，R = {"makespan": float, "idle": [P 个 float],
          "ops": [[stage, "F" 或 "B", k, start, end], ...]}（每个操作恰好一次，按 (start, stage) 排序）。
    非法输入抛出 ValueError；输入不得被修改。规模：n ≤ 64，P ≤ 16。
    """
    import math
    import numbers

    def matrix(values, what):
        rows = [list(r) for r in values]
        if not rows or not rows[0]:
            raise ValueError(f"{what} 至少要有一个微批次和一个 stage")
        out = []
        for r in rows:
            if len(r) != len(rows[0]):
                raise ValueError(f"{what} 的每一行长度必须相同")
            for v in r:
                if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 < float(v) < math.inf):
                    raise ValueError(f"{what} 的元素必须是有限的正数，收到 {v!r}")
            out.append([float(v) for v in r])
        return out

    F, B = matrix(fwd, "fwd"), matrix(bwd, "bwd")
    n, P = len(F), len(F[0])
    if len(B) != n or len(B[0]) != P:
        raise ValueError("fwd 与 bwd 的形状必须相同")
    if isinstance(extra_in_flight, bool) or not isinstance(extra_in_flight, numbers.Integral) or extra_in_flight < 0:
        raise ValueError(f"extra_in_flight 必须是 ≥ 0 的整数，收到 {extra_in_flight!r}")
    if isinstance(overhead, bool) or not isinstance(overhead, numbers.Real) or not (0 <= float(overhead) < math.inf):
        raise ValueError(f"overhead 必须是有限的非负数，收到 {overhead!r}")
    delta = float(overhead)

    def input_ready(end, kind, k, p):
        """(kind, k) 在 stage p 上的输入何时就绪；上游还没排出来时返回 None。"""
        if kind == "F":
            return end.get(("F", k, p - 1)) if p > 0 else 0.0
        return end.get(("F", k, p)) if p == P - 1 else end.get(("B", k, p + 1))

    def result(ops):
        makespan = max(o[4] for o in ops)
        idle = [makespan - sum(F[k][p] + B[k][p] for k in range(n)) for p in range(P)]
        return {"makespan": makespan, "idle": idle, "ops": sorted(ops, key=lambda o: (o[3], o[0]))}

    # 静态：每个 stage 严格按 1F1B 指令序列执行，轮到的操作输入没到就等
    orders = []
    for p in range(P):
        w = min(P - 1 - p, n)
        order = [("F", k) for k in range(w)]
        for i in range(n - w):
            order += [("F", w + i), ("B", i)]
        orders.append(order + [("B", k) for k in range(n - w, n)])
    pos, free, end, ops = [0] * P, [0.0] * P, {}, []
    while len(ops) < 2 * n * P:
        for p in range(P):
            while pos[p] < len(orders[p]):
                kind, k = orders[p][pos[p]]
                ready = input_ready(end, kind, k, p)
                if ready is None:
                    break
                start = max(free[p], ready)
                free[p] = end[(kind, k, p)] = start + (F[k][p] if kind == "F" else B[k][p])
                ops.append([p, kind, k, start, free[p]])
                pos[p] += 1
    static = result(ops)

    # 动态：按全局时间推进；每次选出能最早开工的 (stage, 操作)，同时刻 B 优先、stage 号小者优先
    nf, nb, free, end, ops = [0] * P, [0] * P, [0.0] * P, {}, []
    while len(ops) < 2 * n * P:
        best = None
        for p in range(P):
            if nb[p] < nf[p]:
                ready = input_ready(end, "B", nb[p], p)
                if ready is not None:
                    cand = (max(free[p], ready), p, 0, "B", nb[p])
                    best = cand if best is None or cand < best else best
            if nf[p] < n and nf[p] - nb[p] < P - p + extra_in_flight:
                ready = input_ready(end, "F", nf[p], p)
                if ready is not None:
                    cand = (max(free[p], ready), p, 1, "F", nf[p])
                    best = cand if best is None or cand < best else best
        start, p, _, kind, k = best
        free[p] = end[(kind, k, p)] = start + delta + (F[k][p] if kind == "F" else B[k][p])
        ops.append([p, kind, k, start, free[p]])
        if kind == "F":
            nf[p] += 1
        else:
            nb[p] += 1
    return {"static": static, "dynamic": result(ops)}


def throughput_latency_frontier(total_work, stage_options, microbatch_options, *, overhead=0.0,
                                weight_mem=0.0, act_mem=0.0, mem_cap=None, schedule="1f1b",
                                microbatch_size=1):
    """在显存上限内枚举 (P, m)，返回吞吐–延迟的帕累托前沿。

    模型（均匀 stage）：t = total_work / P + overhead；延迟 T = (m + P − 1)·t；
    吞吐 = m·microbatch_size / T；每卡显存 = (weight_mem + k·act_mem) / P，
    k = min(m, P)（schedule="1f1b"）或 k = m（schedule="gpipe"）；显存 ≤ mem_cap 才可行（None 表示不限）。
    返回可行且不被支配的 (P, m, throughput, latency) 元组的 list，按 (latency, P, m) 升序；
    没有可行点时返回 []。非法输入抛出 ValueError。
    """
    import math
    import numbers

    def real(v, what, positive=False):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise ValueError(f"{what} 必须是有限的数，收到 {v!r}")
        if float(v) < 0 or (positive and float(v) == 0):
            raise ValueError(f"{what} 必须{'为正' if positive else '非负'}，收到 {v!r}")
        return float(v)

    def options(values, what):
        out = []
        for v in values:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{what} 的每一项都必须是 ≥ 1 的整数，收到 {v!r}")
            out.append(int(v))
        if not out:
            raise ValueError(f"{what} 不能为空")
        return out

    W = real(total_work, "total_work", positive=True)
    c = real(overhead, "overhead")
    wm, am = real(weight_mem, "weight_mem"), real(act_mem, "act_mem")
    cap = None if mem_cap is None else real(mem_cap, "mem_cap")
    b = real(microbatch_size, "microbatch_size", positive=True)
    if schedule not in ("1f1b", "gpipe"):
        raise ValueError(f"schedule 只能是 '1f1b' 或 'gpipe'，收到 {schedule!r}")
    points = []
    for P in sorted(set(options(stage_options, "stage_options"))):
        for m in sorted(set(options(microbatch_options, "microbatch_options"))):
            k = min(m, P) if schedule == "1f1b" else m
            if cap is not None and (wm + k * am) / P > cap:
                continue
            latency = (m + P - 1) * (W / P + c)
            points.append((P, m, m * b / latency, latency))
    front = [x for x in points
             if not any(y[2] >= x[2] and y[3] <= x[3] and (y[2] > x[2] or y[3] < x[3]) for y in points)]
    return sorted(front, key=lambda x: (x[3], x[0], x[1]))
