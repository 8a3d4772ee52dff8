# expect: stage_times=0 partition=0 scheduling=0 frontier=0
# The release as handed out: every exercise raises NotImplementedError.

def stage_times(layer_costs, partition):
    """每个阶段 的耗时与不均衡比 max/mean。

    layer_costs: 每层耗时（list / tuple / 一维 numpy 数组），有限的非负数，至少一层。
    partition:   每个阶段 连续分到的层数（整数序列，每项 ≥ 1，总和 = 层数）。
    返回 (times, ratio)：times 是 P 个 Python float 组成的 list，ratio = max(times) / mean(times)
    （Python float；所有耗时都为 0 时定义为 1.0）。输入不得被修改。
    非法输入抛出 ValueError。
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def min_max_partition(layer_costs, num_stages):
    """把层按顺序切成 num_stages 段，使最慢阶段 的耗时最小（精确解）。

    layer_costs: 每层耗时，有限的非负数，至少一层（list / tuple / 一维 numpy 数组）。
    num_stages:  阶段数 P，整数，1 ≤ P ≤ 层数。
    返回 P 个 Python int 的 list（每项 ≥ 1，总和 = 层数）；最优解不唯一时返回任意一个。
    非法输入抛出 ValueError。规模：最多 400 层、64 个阶段，应在 1 秒内完成。
    """
    # YOUR CODE HERE
    raise NotImplementedError()


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
    # YOUR CODE HERE
    raise NotImplementedError()


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
    # YOUR CODE HERE
    raise NotImplementedError()
