"""Claims, not co-occurring words (issue 23): every fragment the issue quotes, as a full realistic answer.

Each answer was written and labelled per criterion, as a careful grader would, BEFORE the scorer was
changed for it (label before you tune); the labels are never adjusted to the scorer. Then: the sentence
that causes a denial, a retraction or a misconception is quoted with its ✗ (evidence and comment), and a
keyword salad gets a low-confidence flag and at most half of the item's points on every item.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from autograder.authoring import agreement
from autograder.core.registry import lessons
from autograder.grading.lesson_readers import for_lesson
from autograder.grading.written import LOW_CONFIDENCE, suggest

ROOT = Path(__file__).resolve().parents[1]
L16, L03 = "16-asymmetric-pipeline", "03-load-imbalance"
ITEMS = {lesson: agreement.written_items(lesson) for lesson in (L16, L03)}
#: the rules alone, and the rules checked by the learned reader as a class is graded (grading/scoring.py)
READERS = ("rules", "as graded")


def read(answer: str, lesson: str, item_id: str, reader: str):
    anchors = for_lesson(lessons()[lesson].directory).get(item_id) if reader == "as graded" else None
    return suggest(answer, ITEMS[lesson][item_id], anchors=anchors)


# id -> (lesson, item, answer, {criterion: label}, fragment a ✗ must quote or None)
CASES = {
    # retraction: "其实是异步发出的…所以第一种阻塞…并不存在"
    "q1-async-retraction": (
        L16,
        "q1",
        "上游饥饿：在 [30,10,10,20] 里 stage 0 每 30 ms 才交出一个微批次，stage 1 算完 10 ms 后只能空等输入。"
        "下游背压：在 [20,10,10,30] 里 stage 3 最慢，stage 2 的 send 因为下游还没发出 recv 而阻塞。"
        "不过我又查了一下，NCCL 的 send 其实是异步发出的，调用马上返回，所以第一种阻塞（发送阻塞）在实际中并不存在。",
        {"backpressure": 0, "upstream_starvation": 1},
        "并不存在",
    ),
    # affirmative counter-design with no negation word
    "q3-wait-for-new-frame": (
        L16,
        "q3",
        "视觉 10 Hz、控制 100 Hz，两边各自按自己的频率运行，中间放一个只保留最新 latent 的缓冲区，控制回路每次读最新值。"
        "回传给视觉的梯度滞后 Δt 步，我用 λ^Δt 衰减它的权重。"
        "但为了安全，控制回路还是应该每次等视觉给出新的一帧再出动作。",
        {"decoupled_clocks": 0, "staleness_stabiliser": 1},
        "还是应该每次等视觉给出新的一帧",
    ),
    "03q1-not-an-advantage": (
        L03,
        "q1",
        "第一，各阶段耗时稳定、可以预测时，静态调度没有每一步的决策开销，而动态调度每次都要决定下一个做什么，所以静态更快。"
        "第二，需要可复现时，静态调度每次执行顺序相同，便于调试。"
        "不过可复现只是调试方便，不算静态调度的优势。",
        {"situations": 0.5},
        None,  # its second situation reads as a short list ("第二，需要可复现时，…，便于调试"): not met anyway
    ),
    "03q1-not-an-advantage-long": (
        L03,
        "q1",
        "第一，各阶段耗时稳定、可以预测时，静态调度没有每一步的决策开销，而动态调度每次都要决定下一个做什么，所以静态更快。"
        "第二，需要可复现的时候，静态调度每次的执行顺序都相同，出了问题很容易复现和调试。"
        "不过可复现只是调试方便，不算静态调度的优势。",
        {"situations": 0.5},
        "不算静态调度的优势",
    ),
    "q2-only-an-approximation": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于下限 1 − t̄/t_max，而不是 0，增大 m 只能摊薄预热和排空。"
        "显存：1F1B 下阶段 p 的激活峰值为 min(m, P−p)·M_p，越靠前越大；GPipe 则要存 m 个。"
        "代价：b 不变时全局批 m·b·DP 膨胀，要重调学习率。"
        "不过这个下限其实只是 m 很小时的近似，m 足够大时气泡还是会趋于 0。",
        {"bubble_floor": 0, "inflight_formula": 1, "side_effects": 0.5},
        "其实只是",
    ),
    # fluent but wrong: the causal direction reversed
    "q1-fast-stage-causes-backpressure": (
        L16,
        "q1",
        "Starvation: in [30,10,10,20] stage 0 is the bottleneck, so stage 1 finishes in 10 ms and then waits for "
        "its input because the upstream stage has not produced it yet. Backpressure: the fast stage causes "
        "backpressure on the others, because it sends its outputs downstream so quickly that the slow stages' "
        "buffers fill up and their sends block.",
        {"backpressure": 0, "upstream_starvation": 1},
        "the fast stage causes backpressure on the others",
    ),
    "03q2-gpu-utilisation": (
        L03,
        "q2",
        "误区一：按层数平均切分并不等于负载均衡，因为各层耗时不同，大 FFN 层比别的层重 1.8 倍。"
        "暴露它的测量：看每个阶段的 GPU 利用率，利用率低的阶段就是在等别人。"
        "误区二：盲目增大 m 消除不了失衡造成的气泡，气泡率趋于 1 − t̄/t_max。"
        "暴露它：实测气泡率，本课 m=16 时实测约 50.8%，而均匀公式给 30.4%。",
        {"layer_count": 0.5, "layer_measure": 0, "more_microbatches": 0.5, "bubble_measure": 0.5},
        "GPU 利用率",
    ),
    "03q2-bubble-grows-with-m": (
        L03,
        "q2",
        "误区一：按层数均分不等于均衡，因为各层耗时不同（大 FFN 层重 1.8 倍）；用 profiler 实测每个阶段的耗时就能看出来，"
        "不均衡比 max/mean 为 1.636。误区二是 m 加得还不够：the bubble grows with m，实测的气泡率和公式都显示"
        "m 越大气泡越大，所以应该减小 m。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0, "bubble_measure": 0},
        "the bubble grows with m",
    ),
    # partially wrong
    "q1-blocking-recv-upstream": (
        L16,
        "q1",
        "饥饿：[30,10,10,20] 中 stage 0 最慢，stage 1 每个微批次只算 10 ms，然后要等上游 stage 0 交出下一个输入，所以空等。"
        "背压：阻塞式的 recv 会一直等上游把数据发过来，stage 2 的 recv 阻塞在那里等上游，这就是背压。",
        {"backpressure": 0, "upstream_starvation": 1},
        "recv",
    ),
    "03q2-variance": (
        L03,
        "q2",
        "误区一：按层数均分不等于负载均衡，因为每层耗时不同。暴露它：看各阶段耗时的方差，方差大就说明不均衡。"
        "误区二：盲目加 m 消除不了气泡，气泡率只会趋于 1 − t̄/t_max 这个下限；暴露它要实测 makespan 算出气泡率，"
        "本课 m=16 实测约 50.8%，而均匀公式给 30.4%。",
        {"layer_count": 0.5, "layer_measure": 0, "more_microbatches": 0.5, "bubble_measure": 0.5},
        "方差",
    ),
    "q2-bare-formula": (
        L16,
        "q2",
        "气泡下限：m→∞ 时气泡率趋于 1 − t̄/t_max 而不是 0，因为快阶段每个周期都要等最慢的阶段。"
        "显存：阶段 p 的激活峰值是 (P−p)·A_p，A_p 是一个微批次在该阶段的激活，所以越靠前的阶段显存越大。"
        "代价：全局批固定时微批次变小，GEMM 效率下降。",
        {"bubble_floor": 0.5, "inflight_formula": 0.5, "side_effects": 0.5},
        None,
    ),
    "q3-any-buffer": (
        L16,
        "q3",
        "视觉和控制各自按自己的频率运行（视觉 10 Hz，控制 100 Hz），中间用一个缓冲区连接，控制回路从缓冲区取数据。"
        "回传给视觉的梯度是几步之前的，陈旧了 Δt 步，所以我用 λ^Δt 衰减它。",
        {"decoupled_clocks": 0.5, "staleness_stabiliser": 1},
        None,
    ),
    # missed wording
    "03q2-blind-m-16-to-32": (
        L03,
        "q2",
        "误区一：按层数均分不等于负载均衡，因为各层耗时不同；用 profiler 实测每个阶段的耗时就能暴露它，"
        "不均衡比 max/mean = 1.636。误区二：盲目加 m。把 m 从 16 提到 32 也消除不了失衡造成的气泡，"
        "因为它趋于 1 − t̄/t_max；实测 m=16 的气泡率约 50.8%，而均匀公式给 30.4%，差距就是失衡造成的。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0.5},
        None,
    ),
    "q2-does-not-vanish-with-m": (
        L16,
        "q2",
        "非对称气泡有一个下限 1 − t̄/t_max，它不会随 m 消失，因为快阶段每个周期都要等最慢的阶段。"
        "1F1B 下阶段 p 的激活峰值 = min(m, P−p)·M_p，越靠前越大，而 GPipe 要存 m 个。"
        "代价：b 不变时全局批 m·b·DP 变大，需要重调超参。",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0.5},
        None,
    ),
    "q3-async-non-blocking": (
        L16,
        "q3",
        "视觉进程和控制进程异步、互不阻塞：视觉把最新的 latent 写进只有一个槽位的缓冲区，控制回路每次读最新值就出动作。"
        "陈旧：视觉一侧收到的梯度滞后 Δt 步，所以用 λ^Δt 衰减这些梯度，并给陈旧度设上界。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 1},
        None,
    ),
    "03q2-m-arrow": (
        L03,
        "q2",
        "误区一：按层数均分 ≠ 均衡，因为各层耗时不同（大 FFN 层重 1.8 倍），用 profiler 实测每个阶段的耗时就能看出来"
        "（max/mean = 1.636）。误区二：m↑ 也消除不了失衡的气泡，气泡率趋于 1 − t̄/t_max；"
        "实测 m = 16 的气泡率约 50.8%，均匀公式给 30.4%。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0.5},
        None,
    ),
    # a correct sentence read as a denial (was 1.5 of 2)
    "q2-floor-independent-of-m": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于 1 − t̄/t_max。这个下限与 m 无关，不会趋于 0，因为快阶段每个周期都在等最慢的阶段，"
        "增大 m 只能摊薄预热和排空。阶段 p 的激活峰值为 min(m, P−p)·M_p（M_p 为一个微批次在该阶段的激活），"
        "越靠前越大。代价：全局批 m·b·DP 膨胀，需要重调学习率。",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0.5},
        None,
    ),
    # negation scoped to one example, not to the mechanism
    "q1-no-backpressure-in-the-example": (
        L16,
        "q1",
        "No backpressure in [30,10,10,20]; it needs a slower downstream stage. There stage 1 only starves: "
        "stage 0 takes 30 ms per micro-batch, so stage 1 finishes in 10 ms and waits for its input from "
        "upstream. In [20,10,10,30] stage 3 is slower: it is still computing the previous micro-batch and has "
        "not posted its recv, so stage 2's blocking send cannot complete and the wait propagates upstream.",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
}


# Labelled as the grader did, but the scorer disagrees for a reason outside this change (kept
# visible: the label is never moved to the scorer).
# The general rules added while tuning on fresh3 (issue 23): each answer is new (not a fresh3 answer),
# written and labelled per criterion for the rule it pins, after the rule; same format as CASES.
RULE_CASES = {
    # a negated condition ("没有缓冲区时…") is no denial of the wait that follows it
    "q1-negated-condition": (
        L16,
        "q1",
        "饥饿：上游比自己慢时，自己算完了下一个激活还没到，[30,10,10,20] 里 stage 1 每 30 ms 只忙 10 ms。"
        "背压：下游比自己慢时，[20,10,10,30] 里 stage 2 的 send 要等 stage 3 发出 recv 才能完成，所以 stage 2 被阻塞；"
        "没有缓冲区时等待会一直往上游传，stage 1 也只好停下。",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
    # "no backpressure at all in this profile" is about the example, not a denial of the mechanism
    "q1-none-in-this-profile": (
        L16,
        "q1",
        "Starvation: in [30,10,10,20] the first stage is the slowest, so stage 1 finishes in 10 ms and waits for "
        "its next input because the upstream stage is slower. Since every downstream stage is faster than its "
        "supply, there is no backpressure at all in this profile. Backpressure: in [20,10,10,30] stage 2 is "
        "stuck in its send, waiting for stage 3 to post the matching recv, because stage 3 is still busy.",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
    # a reversed attribution: backpressure said to come from upstream, starvation from downstream
    "q1-reversed-attribution": (
        L16,
        "q1",
        "饥饿是由下游引起的：下游慢，不来取结果，所以上游没有新任务可做，比如 [20,10,10,30]。"
        "背压是由上游引起的：上游慢，数据一点点挤过来，阻塞式 send 让下游被压着，比如 [30,10,10,20]。",
        {"backpressure": 0, "upstream_starvation": 0},
        "由上游引起",
    ),
    # the lesson's premise denied affirmatively: the send never waits for the receiver
    "q1-send-never-waits": (
        L16,
        "q1",
        "Starvation happens when the upstream stage is slower: in [30,10,10,20] stage 1 waits for its input "
        "because stage 0 has not produced it yet. As for backpressure, sends are non-blocking in NCCL, so a "
        "stage never waits for its downstream neighbour even when the downstream stage is busy.",
        {"backpressure": 0, "upstream_starvation": 1},
        "non-blocking",
    ),
    # swapped schedules: min(m, P−p) put on GPipe
    "q2-swapped-schedules": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于下限 1 − t̄/t_max，而不是 0，因为瓶颈阶段的节拍不随 m 变。"
        "显存：GPipe 每个阶段同时只保留 min(m, P−p) 个微批次，峰值 min(m, P−p)·M_p；"
        "1F1B 因为前向反向交替，要留着全部 m 个微批次的激活，峰值 m·M_p。"
        "代价：b 不变时全局批 m·b·DP 膨胀，要重调学习率。",
        {"bubble_floor": 0.5, "inflight_formula": 0, "side_effects": 0.5},
        "GPipe 每个阶段",
    ),
    # a formula taken back ("只在理想的调度里成立")
    "q2-only-in-theory": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于 1 − t̄/t_max，而不是 0，增大 m 只摊薄预热和排空。"
        "显存：1F1B 下阶段 p 在途 min(m, P−p) 个微批次，峰值 min(m, P−p)·M_p，越靠前越大。"
        "不过这个上限只在理想的调度里成立，实际实现会把 m 个微批次的激活都留到反向，峰值还是 m·M_p。"
        "代价：b 不变时全局批 m·b·DP 膨胀，要重调学习率。",
        {"bubble_floor": 0.5, "inflight_formula": 0, "side_effects": 0.5},
        "只在理想的调度里成立",
    ),
    # a terse conditional sentence ("…固定时…") is a sentence, not a keyword list
    "q2-terse-cost": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于 1 − t̄/t_max，而不是 0，增大 m 只摊薄预热和排空。"
        "显存：1F1B 下阶段 p 在途 min(m, P−p) 个微批次，峰值 min(m, P−p)·M_p，越靠前越大。"
        "代价：全局批固定时微批次变小，GEMM 效率下降。",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0.5},
        None,
    ),
    # an affirmative counter-design: the control loop fetches a fresh vision result every cycle
    "q3-fetch-every-cycle": (
        L16,
        "q3",
        "视觉 20 Hz、控制 100 Hz 各自运行，中间放一个只保留最新 latent 的缓冲区。"
        "但为了动作和画面一致，控制回路每个周期先向视觉进程要一次刚编码好的 latent，拿到以后再算动作。"
        "回传的梯度陈旧 Δt 步，我按 λ^Δt 衰减它们。",
        {"decoupled_clocks": 0, "staleness_stabiliser": 1},
        "拿到以后再算动作",
    ),
    # a stabiliser taken back ("再想想……都是多余的")
    "q3-all-superfluous": (
        L16,
        "q3",
        "视觉 30 Hz、控制 200 Hz 各自运行，中间用只存最新 latent 的缓冲区连接，控制每拍读最新值、不等视觉。"
        "回传给视觉的梯度陈旧了 Δt 步，可以按 λ^Δt 衰减。"
        "再想想，Δt 步前的梯度和现在差不多，这些衰减处理都是多余的。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "都是多余的",
    ),
    # a FIFO queue instead of a latest-value buffer: half
    "q3-fifo-queue": (
        L16,
        "q3",
        "视觉和控制用两个不同频率的线程，中间放一个 FIFO 队列，视觉每出一帧就放进去，控制按顺序取。"
        "回传的梯度陈旧 Δt 步，按 λ^Δt 衰减。",
        {"decoupled_clocks": 0.5, "staleness_stabiliser": 1},
        None,
    ),
    # "不会死锁" is the claim (static order guarantees it), not a negated hit
    "03q1-no-deadlock": (
        L03,
        "q1",
        "第一，各阶段耗时稳定时，静态调度没有每一步的决策开销，而动态调度每步都要决定下一个做什么，所以静态更快。"
        "第二，通信可以预先规划时，静态调度的收发顺序在训练前就定好，所以能提前发起 P2P 通信、和计算重叠，也不会死锁。",
        {"situations": 1},
        None,
    ),
    # both situations given, then taken back ("站不住")
    "03q1-does-not-hold": (
        L03,
        "q1",
        "耗时稳定时，动态调度只会多出决策开销（33 对 35.2）；显存受限时，贪心的动态调度会推迟下游要的前向，所以更慢（77 对 71）。"
        "不过这两点都站不住：决策开销可以优化掉，显存也可以加。",
        {"situations": 0},
        "站不住",
    ),
    # the lesson's numbers swapped (the formula said to overestimate the bubble)
    "03q2-swapped-numbers": (
        L03,
        "q2",
        "误区一：层数相同不等于耗时相同，两个大 FFN 层让 stage 5 慢 1.8 倍；要用 profiler 实测各阶段的耗时，算不均衡比。"
        "误区二：以为增大 m 就能消除失衡的气泡，其实它趋于 1 − t̄/t_max，消除不了。"
        "暴露它的测量：均匀公式算出 m = 16 时气泡约 50.8%，实际测出来只有 30.4%，公式高估了气泡。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0},
        "公式高估了气泡",
    ),
    # a soft retraction belongs to the nearest point before it, even when it names an earlier point's terms
    "q3-retraction-takes-back-the-nearest-point": (
        L16,
        "q3",
        "视觉和控制各自按自己的频率运行，中间用只保留最新 latent 的缓冲区连接，控制每拍读最新值，从不等待视觉，所以不丢帧。"
        "回传给视觉的梯度会陈旧 Δt 步，所以按 λ^Δt 衰减。"
        "不过再一想，缓冲区里总是最新的 latent，梯度其实不会陈旧，衰减没有必要。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "没有必要",
    ),
    # "not A but B" where B is the wrong claim, and a closing counter-claim with no negation word
    "q2-limit-is-zero-not-the-floor": (
        L16,
        "q2",
        "m 很大时气泡率的极限并不是 1 − t̄/t_max，而是 0，因为瓶颈的影响最终会被摊平。"
        "显存：1F1B 下阶段 p 的峰值 min(m, P−p)·M_p，越靠前越大。代价：全局批固定时微批次变小，GEMM 效率下降。",
        {"bubble_floor": 0, "inflight_formula": 1, "side_effects": 0.5},
        "而是 0",
    ),
    "q2-counter-claim-bubble-near-zero": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于 1 − t̄/t_max，因为快阶段每个周期都要等最慢的阶段。"
        "显存：1F1B 下阶段 p 的峰值 min(m, P−p)·M_p，越靠前越大。代价：全局批固定时微批次变小，GEMM 效率下降。"
        "所以调参时把 m 开到上千，气泡率就接近 0 了。",
        {"bubble_floor": 0, "inflight_formula": 1, "side_effects": 0.5},
        "接近 0",
    ),
    # the question asks for the lesson's numbers (rubric ``figures``): a wrong one halves the measurement
    "03q2-wrong-figures": (
        L03,
        "q2",
        "误区一：按层数均分不等于负载均衡，因为每层耗时不同；用 profiler 实测每个阶段的耗时，算不均衡比 "
        "max/mean = 1.8 就能暴露它。误区二：盲目加 m 也消除不了失衡造成的气泡，它趋于 1 − t̄/t_max；"
        "实测 m=16 的气泡率约 45%，而均匀公式给 30.4%。",
        {"layer_count": 0.5, "layer_measure": 0.25, "more_microbatches": 0.5, "bubble_measure": 0.25},
        "1.8",
    ),
    "03q2-rounded-figures": (  # rounded figures and other quantities (P=8, m=16) are not wrong figures
        L03,
        "q2",
        "误区一：按层数均分不等于负载均衡，因为每层耗时不同；用 profiler 实测每个阶段的耗时，P=8 时不均衡比约 1.64。"
        "误区二：盲目加 m 也消除不了失衡造成的气泡，它趋于 1 − t̄/t_max；实测 m=16 时约 51% 的气泡率，公式只给约 30%。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0.5},
        None,
    ),
    # a change of mind that ends in another design (fresh15, this session): "最终方案改为…", "更正：…", a
    # counter-design with no negation word ("一律按层数平均切"), "in the end …"
    "q3-final-design-waits-for-a-frame": (
        L16,
        "q3",
        "一开始我打算让视觉 30 Hz 写一个只存最新 latent 的槽位，控制 200 Hz 每拍直接读，不等。"
        "后来担心动作和画面对不上，最终方案改为：控制回路每一拍都等新的视觉帧算出来以后再出动作。"
        "陈旧梯度：回传到视觉的梯度晚了 Δt 步，按 λ^Δt 衰减，λ 需要实验来定。",
        {"decoupled_clocks": 0, "staleness_stabiliser": 1},
        "等新的视觉帧",
    ),
    "q1-correction-takes-the-condition-back": (
        L16,
        "q1",
        "饥饿：上游慢时下游没有输入可算，[30,10,10,20] 里 stage 1 每 30 ms 只忙 10 ms，其余时间空等。"
        "背压：下游慢时，[20,10,10,30] 里 stage 3 还没发出 recv，stage 2 的 send 完不成，stage 2 开始不了下一个微批次。"
        "更正：背压其实跟下游快慢无关，只要激活大于 NCCL 的缓冲，每一次 send 都会这样阻塞。",
        {"backpressure": 0, "upstream_starvation": 1},
        "跟下游快慢无关",
    ),
    "03q2-uniform-split-in-practice": (
        L03,
        "q2",
        "误区一：按层数平均切不等于负载均衡，各层耗时不同；profiler 实测各阶段耗时，不均衡比 max/mean 为 1.636。"
        "误区二：盲目加 m 消不掉失衡造成的气泡，m→∞ 时还剩 1 − t̄/t_max；m=16 实测约 50.8%，均匀公式给 30.4%。"
        "所以在项目里我们的做法是：切分一律按层数平均切，最省事，剩下的不均衡交给运行时去消化。",
        {"layer_count": 0, "layer_measure": 0, "more_microbatches": 0.5, "bubble_measure": 0.5},
        "一律按层数平均切",
    ),
    "q3-in-the-end-raw-gradients": (
        L16,
        "q3",
        "Vision runs at camera rate and control at 200 Hz, each in its own loop; they share a one-slot buffer that "
        "vision overwrites with the newest latent and control reads every tick without waiting. "
        "The gradients reaching the vision encoder are Δt steps stale, so one could decay them by λ^Δt. "
        "In the end I would skip the decay and apply the stale gradients exactly as they arrive.",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "In the end",
    ),
    # fresh16 tuning (seen): a negation that is the consequence of a buffer setting denies nothing
    "q1-unbounded-buffer-means-no-blocking": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 每 30 ms 才交出一个输入，stage 1 算完 10 ms 就只能空等，因为上游更慢。"
        "下游背压：[20,10,10,30] 里 stage 3 最慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞式 send 完成不了，"
        "所以 stage 2 也开不了下一个，等待再往 stage 1 传。槽位的作用：B=∞ 时没有阻塞，只是激活在 stage 3 前排队占显存。",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
    "q1-big-buffer-clause-then-no-blocking": (
        L16,
        "q1",
        "- starvation: upstream slower -> stage 1 waits for its input, because stage 0 only delivers one every 30 ms in [30,10,10,20]\n"
        "- backpressure: [20,10,10,30], stage 3 is slower, so stage 2's send cannot complete until stage 3 posts its recv; "
        "the blocking send then delays stage 2's own recv and the wait travels upstream\n"
        "- 缓冲的作用：缓冲足够大，stage 2 就不阻塞了，代价是激活在 stage 3 门口排队。",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
    # a footnote that denies backpressure ever happens, and a denial that the fast stage stalls at all
    "q1-footnote-backpressure-never-happens": (
        L16,
        "q1",
        "饥饿：上游慢时（[30,10,10,20]），stage 1、2 要等 stage 0 的输入，空等 20 ms。"
        "背压：下游慢时（[20,10,10,30]），stage 2 的 send 因为 stage 3 没有 recv 而阻塞，等待向上游传。\n\n"
        "注：框架里用的是 isend，调用直接返回，所以背压这种停顿实际上并不会出现。",
        {"backpressure": 0, "upstream_starvation": 1},
        "并不会出现",
    ),
    "q1-strictly-no-stall-while-in-recv": (
        L16,
        "q1",
        "背压：[20,10,10,30] 里下游更慢，stage 2 的 send 要等 stage 3 发出 recv 才能完成，所以 stage 2 被阻塞，又拖住 stage 1。"
        "饥饿：[30,10,10,20] 里 stage 1 等 stage 0 的输入。不过 stage 1 等的时候 recv kernel 一直在跑，"
        "严格来说它并没有停顿，这条流水线里不存在真正的停顿。",
        {"backpressure": 1, "upstream_starvation": 0},
        "严格来说",
    ),
    "q1-slow-stage-called-starved": (
        L16,
        "q1",
        "[20,10,10,30]：最慢的阶段 stage 3 其实是饥饿，它在等 stage 2 送激活，所以它的 30 ms 有一大半是空等。"
        "[30,10,10,20]：stage 0 被下游背压，它的 send 卡住了，所以看起来要 30 ms。",
        {"backpressure": 0, "upstream_starvation": 0},
        "饥饿",
    ),
    "q3-measures-not-needed-after-all": (
        L16,
        "q3",
        "视觉 15 Hz、控制 250 Hz 各跑各的，中间一个单槽缓冲只放最新的 latent，视觉覆盖写、控制每拍非阻塞地读，所以控制不会丢拍。"
        "回传的梯度陈旧 Δt 步，可以按 λ^Δt 衰减或把学习率降为 η/(1+Δt)。"
        "再算一下 Δt 最多一个视觉周期，这些措施其实都不需要，原始梯度直接用就行。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "其实都不需要",
    ),
    "03q2-keep-the-split-raise-m": (
        L03,
        "q2",
        "误区一：按层数均分不等于均衡，要用 profiler 测每个 stage 的耗时，最慢段 5.4 比平均 3.3 高得多。"
        "误区二：增大 m 消不掉失衡的气泡，它趋于 1 − t̄/t_max，实测 m=16 时 50.8 % 比均匀公式的 30.4 % 高。\n"
        "不过我们组的实际方案是：切分先不动，把 m 从 16 加到 32，按 (P−1)/(m+P−1) 算气泡降到 17.9 % 左右就够了。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0, "bubble_measure": 0},
        "切分先不动",
    ),
    # fresh17 tuning (seen): terse notes whose segments are formulas or arrows state relations
    "q2-terse-formula-notes": (
        L16,
        "q2",
        "- limit: bubble(m→∞) = 1 − t̄/t_max, m can't touch it, it only amortises ramp-up/ramp-down.\n"
        "- peak act @ stage p, 1F1B: min(m, P−p)·M_p, M_p = L_p·s·b·h·(34+5as/h), stage 0 worst; GPipe m·M_p.\n"
        "- cost: fixed b → global batch m·b·DP grows → retune LR/warmup.",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0.5},
        None,
    ),
    "q2-longer-step-cost-and-independent-floor": (
        L16,
        "q2",
        "极限：$1-\\bar t/t_{\\max}$，与 m 无关，m 只稀释预热和排空两段。\n"
        "显存：1F1B 下阶段 p 最多同时存 min(m, P−p) 个微批次的激活，峰值 min(m, P−p)·M_p，越靠前越大。\n"
        "Cost: with a bigger m each step takes longer, so the policy updates lag further behind the robot in online RL.",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0.5},
        None,
    ),
    "q1-unbounded-buffer-equals-no-blocking": (
        L16,
        "q1",
        "Starvation: in [30,10,10,20] stage 1 waits for its input because the slower stage 0 delivers one every 30 ms. "
        "Backpressure: in [20,10,10,30] the slower stage 3 has not posted its recv, so stage 2's blocking send cannot "
        "complete and the wait travels upstream. Buffers: unbounded buffer = no blocking, the outputs queue in memory.",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
    "q1-denial-then-the-other-point-affirmed": (
        L16,
        "q1",
        "饥饿：上游慢时，[30,10,10,20] 里 stage 1 算完 10 ms 就要等 stage 0 的下一个输入。\n"
        "背压：下游慢时，[20,10,10,30] 里 stage 2 的 send 要等 stage 3 发出 recv 才能完成，所以阻塞，等待一路传回上游。\n"
        "但框架用的是 isend，发了就返回，所以真实训练里背压其实并不存在，快阶段的停顿全都是上游饥饿。",
        {"backpressure": 0, "upstream_starvation": 1},
        "其实并不存在",
    ),
    "q2-edit-every-stage-keeps-m": (
        L16,
        "q2",
        "Floor: 1 − t̄/t_max as m → ∞, more micro-batches only amortise the fill and drain.\n"
        "Memory: in 1F1B stage p holds min(m, P−p) micro-batches, so the peak is min(m, P−p)·M_p, largest at stage 0.\n"
        "Cost: at a fixed global batch the micro-batches shrink, so GEMM efficiency drops.\n\n"
        "EDIT: looked at our trainer again, it keeps every micro-batch alive until the step ends, so treat it as m·M_p "
        "on every stage, same as GPipe.",
        {"bubble_floor": 0.5, "inflight_formula": 0, "side_effects": 0.5},
        "treat it as",
    ),
    "q1-bottom-line-just-transfer-time": (
        L16,
        "q1",
        "- [30,10,10,20]: stage 0 is the bottleneck, so stages 1 and 2 wait about 20 ms per cycle for their next input: starvation.\n"
        "- [20,10,10,30]: stage 3 is slower, so stage 2's send cannot complete until stage 3 posts its recv; the blocked "
        "send keeps stage 2 from its next micro-batch and stage 1 blocks next: backpressure.\n\n"
        "Bottom line: the NCCL kernels stage 2 sits in are just transfer time, it is all starvation.",
        {"backpressure": 0, "upstream_starvation": 1},
        "just transfer time",
    ),
    "q1-slow-stage-waits-on-the-link": (
        L16,
        "q1",
        "Starvation in [30,10,10,20]: stages 1 and 2 idle about 20 ms per cycle because the slower stage 0 delivers late. "
        "Backpressure in [20,10,10,30]: stage 3 posts its recv and blocks until stage 2's send arrives, so the stall "
        "travels downstream with the data and the slow stage absorbs it.",
        {"backpressure": 0, "upstream_starvation": 1},
        "travels downstream",
    ),
    "q3-double-buffer-then-not-really-needed": (
        L16,
        "q3",
        "- double-buffered latent between the encoder (20 Hz) and the controller (500 Hz): the encoder fills the back "
        "buffer and swaps atomically, the controller reads the front buffer every tick without waiting, so no tick is lost.\n"
        "- gradients reaching the encoder are Δt steps stale, so bound Δt ≤ K and drop older ones, optionally scale by λ^Δt.\n"
        "- not really needed in the end: we skip the staleness handling and backprop whatever arrives.",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "not really needed",
    ),
    "q3-no-measure-needed-at-all": (
        L16,
        "q3",
        "视觉 10 Hz、控制 200 Hz 各跑各的，中间放一个只存最新 latent 的缓冲区，视觉覆盖写，控制每拍读最新值不等待，所以不丢帧。"
        "回传到视觉的梯度滞后 Δt 步，可以按 λ^Δt 衰减。\n\n"
        "不过视觉只慢几十毫秒，梯度那点陈旧不需要任何稳定化措施，直接回传就行。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "不需要任何稳定化措施",
    ),
    "03q2-layer-count-split-is-safest": (
        L03,
        "q2",
        "误区一：以为必须按耗时切分。其实按层数平均切分最稳，因为每段层数一样。"
        "误区二：以为增大 m 就能减小气泡，其实失衡时气泡只趋于 1 − t̄/t_max，不会到 0，实测 m=16 的 50.8 % 比公式的 30.4 % 高。",
        {"layer_count": 0, "layer_measure": 0, "more_microbatches": 0.5, "bubble_measure": 0.5},
        "按层数平均切分最稳",
    ),
    # fresh18 tuning (seen): a negated cause before its consequence, a bound stated with negation words
    "q1-not-ready-so-it-blocks": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1 因为上游还没交出下一个输入，只能空等 20 ms。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，stage 2 的 send 因为接收方还没发出 recv 而阻塞，等待一路传回 stage 1。",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
    "q2-no-more-than-either-bound": (
        L16,
        "q2",
        "气泡有个底：1 − t̄/t_max，与 m 无关，m 再大也只是摊薄预热和排空。\n"
        "显存：阶段 p 同时存着的微批次不会多于 m 个，也不会多于 P−p 个，取两者中小的，乘一个微批次的激活 M_p 就是峰值，所以越靠前越大。\n"
        "代价：全局批 m·b·DP 变大，学习率要重调。",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0.5},
        None,
    ),
    "q1-ps-only-backpressure-is-theory": (
        L16,
        "q1",
        "饥饿：上游慢时出现，[30,10,10,20] 里 stage 1 每个周期空等 20 ms 等 stage 0 的输入。\n"
        "背压：下游慢时出现，[20,10,10,30] 里 stage 2 的 send 要等 stage 3 的 recv，所以阻塞并往上游传。\n\n"
        "P.S. 查了一下 NCCL 的 send 都是异步的，所以实际只会有饥饿，背压只是理论上的说法。",
        {"backpressure": 0, "upstream_starvation": 1},
        "只是理论上",
    ),
    "q1-headings-put-on-the-wrong-pipelines": (
        L16,
        "q1",
        "1. [30,10,10,20] —— 下游背压：stage 0 最慢，stage 1、2 被迫跟着它的节拍，压力沿数据流向下游传递。\n"
        "2. [20,10,10,30] —— 上游饥饿：stage 3 最慢，前面的阶段都要等它确认可以接收，所以是被饿着。",
        {"backpressure": 0, "upstream_starvation": 0},
        "下游背压",
    ),
    "q3-terse-one-liner-with-a-formula": (
        L16,
        "q3",
        "vision/ctrl 各跑各的时钟 + 只存最新 latent 的 buffer，ctrl 每拍读最新值不等 vision; 回传 grad 按 staleness 乘 λ^Δt, λ 靠实验调",
        {"decoupled_clocks": 1, "staleness_stabiliser": 1},
        None,
    ),
    # fresh19 tuning (seen): counter-claims with no negation word, a half-credit misreading, space as comma
    "q1-backpressure-is-starvation-after-all": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，没有缓冲时一路传回 stage 1、0。\n"
        "不过说到底，stage 2 卡在 send 上也是在等数据从上游流过来，本质上和饥饿是一回事。",
        {"backpressure": 0, "upstream_starvation": 1},
        "一回事",
    ),
    "q1-isend-so-every-idle-is-starvation": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，没有缓冲时一路传回 stage 1、0。\n"
        "实际我们用 isend，发出去马上就能算下一个微批次，所以 [20,10,10,30] 里 stage 2 的空闲也全部来自等输入，两条流水线都是饥饿。",
        {"backpressure": 0, "upstream_starvation": 1},
        "都是饥饿",
    ),
    "q1-first-profile-recast-as-backpressure": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，没有缓冲时一路传回 stage 1、0。\n"
        "再想了一下，[30,10,10,20] 里 stage 1 那 20 ms 其实也该算背压：它的 send 被后面更慢的 stage 3 拖着。",
        {"backpressure": 0.5, "upstream_starvation": 0},
        "其实也该算背压",
    ),
    "q1-fast-stage-causes-it": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "背压是快阶段造成的：[20,10,10,30] 里 stage 1、2 只要 10 ms，算得太快，把激活一股脑推给 stage 3，stage 3 的缓冲区被塞满，它就被压住了。",
        {"backpressure": 0, "upstream_starvation": 1},
        "快阶段造成的",
    ),
    "q1-buffer-plays-no-role": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，没有缓冲时一路传回 stage 1、0。\n"
        "缓冲区对背压不起任何作用：就算缓冲区无限大，stage 2 也照样停在 send 上等 stage 3。",
        {"backpressure": 0.5, "upstream_starvation": 1},
        "不起任何作用",
    ),
    "q2-no-real-cost-after-all": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于 1 − t̄/t_max，与 m 无关，增大 m 只摊薄预热和排空。\n显存：1F1B 下阶段 p 的激活峰值是 min(m, P−p)·M_p，越靠前越大；GPipe 要存 m 份。\n"
        "代价：全局批 m·b·DP 变大，学习率要重调……其实也还好，学习率按 batch 线性缩放一下就行，基本没什么代价，m 能开多大就开多大。",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0},
        "没什么代价",
    ),
    "q2-m-removes-the-imbalance-part": (
        L16,
        "q2",
        "增大 m 能消除的是慢阶段造成的那部分非对称气泡，因为慢阶段的 (m−1)·t_max 被摊薄了；去不掉的是预热和排空，所以极限是 1 − t̄/t_max。\n"
        "显存：1F1B 下阶段 p 的激活峰值是 min(m, P−p)·M_p，越靠前越大。\n"
        "代价：全局批变大，学习率要重调。",
        {"bubble_floor": 0, "inflight_formula": 1, "side_effects": 0.5},
        "能消除的是慢阶段造成的",
    ),
    "q3-spaces-instead-of-commas": (
        L16,
        "q3",
        "视觉和控制各用各的时钟 视觉30hz 控制200hz 中间放一个只存最新latent的缓冲区 视觉来一帧就覆盖写 控制每拍直接读最新的 不等新帧 所以控制不会丢帧\n\n"
        "回传给视觉的梯度是几步前的 latent 算的 陈旧 Δt 步 可以设上界 K 超过就丢 再按 λ^Δt 衰减 λ 取多少只能靠实验",
        {"decoupled_clocks": 1, "staleness_stabiliser": 1},
        None,
    ),
    "03q1-stable-case-finishes-together": (
        L03,
        "q1",
        "（1）各阶段耗时稳定时，动态调度最后选出的也是 1F1B 的顺序，只是每步多了决策开销（练习 3：33 对 35.2）。"
        "（2）显存上限等于 1F1B 的在途数时，动态的贪心先做反向，推迟了下游在等的前向，所以更慢（77 对 71）。\n"
        "不过真实系统里决策开销只有几微秒，相对毫秒级的 kernel 可以不计，所以耗时稳定时两种调度其实同时完成。",
        {"situations": 0.5},
        "同时完成",
    ),
    "03q2-utilisation-counter-design": (
        L03,
        "q2",
        "误区一：以为按层数均分就是均衡。各层耗时不同，stage 5 有两个大 FFN。用 profiler 测每段的计算耗时，max/mean = 1.636，最优切分把最慢段从 5.4 降到 4.0。\n误区二：以为增大 m 就能消除气泡。失衡时气泡趋于 1 − t̄/t_max，不随 m 消失；实测气泡率对照均匀公式，m=16 实测约 50.8%，公式只有 30.4%。\n"
        "所以我的建议是：工程上先按层数均分，上线后看 nvidia-smi 上哪张卡的利用率最高，再从那一段挪一层出去就够了。",
        {"layer_count": 0.5, "layer_measure": 0, "more_microbatches": 0.5, "bubble_measure": 0.5},
        "nvidia-smi",
    ),
    "03q2-bubble-share-grows-with-m": (
        L03,
        "q2",
        "误区一：以为按层数均分就是均衡。各层耗时不同，用 profiler 测每段的计算耗时，max/mean = 1.636。\n"
        "误区二：大家以为增大 m 能降低气泡，其实相反：阶段失衡时 m 越大，运行中气泡占的比例越大，因为每多一个微批次就多一段空等。实测 m=16 的气泡率约 50.8%，均匀公式只有 30.4%。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0, "bubble_measure": 0.5},
        "气泡占的比例越大",
    ),
    "03q2-large-m-makes-it-negligible": (
        L03,
        "q2",
        "误区一：以为按层数均分就是均衡。各层耗时不同，stage 5 有两个大 FFN。用 profiler 测每段的计算耗时，max/mean = 1.636，最优切分把最慢段从 5.4 降到 4.0。\n误区二：以为增大 m 就能消除气泡。失衡时气泡趋于 1 − t̄/t_max，不随 m 消失；实测气泡率对照均匀公式，m=16 实测约 50.8%，公式只有 30.4%。\n"
        "当然，m 足够大（上千个微批次）时，这部分气泡最终也会被摊薄到可以忽略，所以误区二主要是延迟和显存的问题。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0, "bubble_measure": 0.5},
        "可以忽略",
    ),
    "03q2-the-uniform-formula-to-go-by": (
        L03,
        "q2",
        "误区一：以为按层数均分就是均衡。各层耗时不同，stage 5 有两个大 FFN。用 profiler 测每段的计算耗时，max/mean = 1.636，最优切分把最慢段从 5.4 降到 4.0。\n误区二：以为增大 m 就能消除气泡。失衡时气泡趋于 1 − t̄/t_max，不随 m 消失；实测气泡率对照均匀公式，m=16 实测约 50.8%，公式只有 30.4%。\n"
        "That said, the 50.8% comes from an idealised model rather than a real measurement, so I would not read much into it; for choosing m in practice the uniform formula is the number to go by.",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0},
        "idealised model",
    ),
    "03q2-dont-look-at-utilisation-and-figures-side-by-side": (
        L03,
        "q2",
        "误区1 按层数均分就等于均衡。其实每层耗时不一样 stage5 有两个大FFN 最慢那段决定节拍。\n\n"
        "暴露：用profiler测每段的计算耗时 算max/mean 本课1.636 最慢段5.4->4.0 不要看nvidia-smi利用率 等通信的卡也显示很忙。\n\n"
        "误区2 盲目增大m就能消掉气泡。失衡的气泡m再大也趋于1-tbar/tmax 消不掉。\n\n"
        "暴露：实测气泡率跟均匀公式比 m=16实际50.8% 公式30.4%。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0.5},
        None,
    ),
    "q3-staleness-put-on-the-control-side": (
        L16,
        "q3",
        "解耦：视觉、控制各按自己的频率跑，中间一个只保留最新 latent 的缓冲区，控制每拍读最新值，不等新帧。\n"
        "陈旧梯度出在控制一侧：控制网络更新得快，而它用的视觉特征更新得慢，所以控制网络收到的梯度是旧的，对动作网络的梯度乘 λ^Δt 衰减，λ 靠实验调。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "出在控制一侧",
    ),
    "q3-whether-or-not-is-no-negation": (
        L16,
        "q3",
        "视觉与控制各用自己的时钟，中间一个只存最新 latent 的缓冲区，控制每拍读最新值，不等新帧，所以不丢帧。\n"
        "回传给视觉的梯度晚了 Δt 步：超过 K 步的就不要了（这个上界是设计保证的），"
        "界内的梯度要不要再按 λ^Δt 打折扣、学习率要不要调小，只能靠实验确认。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 1},
        None,
    ),
    # fresh20 tuning (seen): written in new words after the misreadings were added, labelled before any run
    "03q2-equal-split-is-balanced-enough": (
        L03,
        "q2",
        "误区一：以为按层数平均切分就是均衡。各层耗时不同，stage 5 有两个大 FFN，用 profiler 测各段计算耗时，max/mean = 1.636。\n"
        "不过对这个规模来说，均匀切分大致上也算均衡了，差出来的那点主要是噪声。\n"
        "误区二：以为增大 m 就能消除气泡。失衡时气泡趋于 1 − t̄/t_max，不随 m 消失；实测 m=16 的气泡率约 50.8%，均匀公式只有 30.4%。",
        {"layer_count": 0, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0.5},
        "大致上也算均衡",
    ),
    "03q2-should-split-by-count": (
        L03,
        "q2",
        "误区一：stage 5 慢，是因为它分到的层数比别人多，所以应该按层数均匀分，每段 3 层，检查每段层数一致就能暴露。\n"
        "误区二：以为增大 m 就能消除气泡。失衡时气泡趋于 1 − t̄/t_max，不随 m 消失；实测 m=16 的气泡率约 50.8%，均匀公式只有 30.4%。",
        {"layer_count": 0, "layer_measure": 0, "more_microbatches": 0.5, "bubble_measure": 0.5},
        "层数比别人多",
    ),
    "q1-starvation-caused-by-the-fast-stage": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 1 算得快，提前去 recv，这个 recv 反过来拖慢了 stage 0 的发送，所以饥饿是由快阶段引起的。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，没有缓冲时一路传回 stage 1、0。",
        {"backpressure": 1, "upstream_starvation": 0},
        "由快阶段引起",
    ),
    "q1-backpressure-hardly-happens": (
        L16,
        "q1",
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，等待传回 stage 1、0。\n"
        "但 NCCL 有 4 MiB 的缓冲，激活一般塞得进去，所以背压几乎不会出现。",
        {"backpressure": 0, "upstream_starvation": 1},
        "几乎不会出现",
    ),
    "q2-m-amortises-the-bottleneck": (
        L16,
        "q2",
        "气泡率的下限是 1 − t̄/t_max：增大 m 可以把慢阶段带来的空等慢慢摊掉，可预热和排空那两段三角形是固定的，摊不掉，所以留下一个下限。\n"
        "显存：1F1B 下阶段 p 的激活峰值是 min(m, P−p)·M_p，越靠前越大；GPipe 要存 m 份。\n"
        "代价：全局批变大，学习率要重调。",
        {"bubble_floor": 0, "inflight_formula": 1, "side_effects": 0.5},
        "摊掉",
    ),
    "q2-every-stage-holds-p": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于 1 − t̄/t_max，与 m 无关，增大 m 只摊薄预热和排空。\n"
        "显存：稳态下所有阶段都在一前一后地跑，所以所有阶段的峰值都是 P·M_p，跟 p 无关；GPipe 是 m·M_p。\n"
        "代价：全局批 m·b·DP 变大，学习率要重调。",
        {"bubble_floor": 0.5, "inflight_formula": 0, "side_effects": 0.5},
        "P·M_p",
    ),
    "q2-large-m-is-free-under-1f1b": (
        L16,
        "q2",
        "m→∞ 时气泡率趋于 1 − t̄/t_max，与 m 无关，增大 m 只摊薄预热和排空。\n"
        "显存：1F1B 下阶段 p 的激活峰值是 min(m, P−p)·M_p，越靠前越大；GPipe 要存 m 份。\n"
        "代价：在 1F1B 里显存封顶之后，加大 m 就是免费的，因此 m 越大越好。",
        {"bubble_floor": 0.5, "inflight_formula": 1, "side_effects": 0},
        "免费",
    ),
    "q3-vision-reads-the-action": (
        L16,
        "q3",
        "设计：控制 200 Hz 把每一步的动作写进只保留最新值的缓冲区，视觉 30 Hz 每次编码前去读取最新动作，和图像一起编码，这样视觉不用等控制。\n"
        "陈旧梯度：回传给视觉的梯度晚了 Δt 步，按 λ^Δt 衰减，并设上界 K，超过就丢；λ 靠实验调。",
        {"decoupled_clocks": 0, "staleness_stabiliser": 1},
        "读取最新动作",
    ),
    "q3-amplify-the-stale-gradient": (
        L16,
        "q3",
        "视觉与控制各用自己的时钟，中间一个只存最新 latent 的缓冲区，控制每拍读最新值，不等新帧，所以不丢帧。\n"
        "陈旧梯度：梯度晚到 Δt 步，作用被稀释了，所以 Δt 越大越要放大，把梯度乘上 λ^{-Δt}（λ<1）。",
        {"decoupled_clocks": 1, "staleness_stabiliser": 0},
        "越要放大",
    ),
    # fresh21 tuning (seen): a change of mind, struck-through text, the last word counts
    "03q2-wait-the-formula-is-enough": (
        L03,
        "q2",
        "误区一：以为按层数均分就是均衡。各层耗时不同，stage 5 有两个大 FFN，用 profiler 测每段的计算耗时，max/mean = 1.636。\n"
        "误区二：以为增大 m 就能消除气泡。失衡时气泡趋于 1 − t̄/t_max，不随 m 消失；实测 m=16 的气泡率约 50.8%，均匀公式只有 30.4%。\n"
        "等等，实测太麻烦了，我改一下：第二个误区拿均匀公式算一下气泡率就够了。",
        {"layer_count": 0.5, "layer_measure": 0.5, "more_microbatches": 0.5, "bubble_measure": 0},
        "拿均匀公式",
    ),
    "q3-struck-through-design-earns-nothing": (
        L16,
        "q3",
        "~~视觉与控制各用自己的时钟，中间一个只存最新 latent 的缓冲区，控制每拍读最新值，不等新帧，所以不丢帧。~~\n"
        "陈旧梯度：回传给视觉的梯度晚了 Δt 步，按 λ^Δt 衰减，并设上界 K，超过就丢；λ 靠实验调。",
        {"decoupled_clocks": 0, "staleness_stabiliser": 1},
        None,
    ),
    "q1-corrected-after-a-wrong-start": (
        L16,
        "q1",
        "上游饥饿：下游太慢，上游发不出去。不对，我想错了，那是背压。\n"
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期只算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，等待传回 stage 1、0。",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
    "q1-corrected-after-a-wrong-start-with-the-buffer": (
        L16,
        "q1",
        "上游饥饿：下游太慢，上游发不出去。不对，我想错了，那是背压。\n"
        "上游饥饿：[30,10,10,20] 里 stage 0 最慢，stage 1、2 每个周期只算 10 ms，剩下 20 ms 在等上游交出下一个输入。\n"
        "下游背压：[20,10,10,30] 里 stage 3 更慢，还在算上一个微批次、没发出 recv，stage 2 的阻塞 send 完成不了，没有缓冲时一路传回 stage 1、0。",
        {"backpressure": 1, "upstream_starvation": 1},
        None,
    ),
}
CASES.update(RULE_CASES)

#: (case, reader) -> why the scorer still disagrees with the careful grader there (a strict xfail: fixed, it fails)
KNOWN_GAPS: dict[tuple[str, str], str] = {
    **{
        (case, reader): "the counter-design takes misconception one back, but the measurement that exposes it"
        " keeps its half point: the rules do not tie a measurement to the claim it serves (tying them, tried on"
        " 2026-12-03, lowered ten parts' within ±0.5 by an answer or more, fresh2 97 -> 96 %: their graders kept"
        " the measurement's point)"
        for case, reader in (
            ("03q2-uniform-split-in-practice", "rules"),
            ("03q2-uniform-split-in-practice", "as graded"),
            ("03q2-layer-count-split-is-safest", "rules"),  # the learned reader lowers it
        )
    },
    **{
        ("q1-corrected-after-a-wrong-start", reader): "a mechanism stated without a connective or a formula"
        " ('stage 3 更慢…stage 2 的阻塞 send 完成不了') is not read as an explanation: the same answer with '没有缓冲时'"
        " earns both points (q1-corrected-after-a-wrong-start-with-the-buffer)"
        for reader in READERS
    },
    (
        "q1-strictly-no-stall-while-in-recv",
        "as graded",
    ): "the learned reader lowers the correct backpressure point to 0: beside a denied stall the answer reads like"
    " the labelled answers that take backpressure back (fresh16), and the reader does not see which point is denied",
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("reader", READERS)
def test_a_careful_graders_score(case, reader, request):
    if (case, reader) in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[case, reader]))
    lesson, item_id, answer, labels, _ = CASES[case]
    item = ITEMS[lesson][item_id]
    assert set(labels) == {c["id"] for c in item["criteria"]}
    s = read(answer, lesson, item_id, reader)
    got = {e["criterion"]: e for e in s.evidence}
    if reader == "as graded":  # the learned reader may lower an unusual wording by half a point, no more
        assert sum(labels.values()) - 0.5 <= s.score <= sum(labels.values()), s.comment
        return
    assert s.score == sum(labels.values()), s.comment
    for cid, label in labels.items():
        crit = next(c for c in item["criteria"] if c["id"] == cid)
        if label == float(crit["points"]):
            assert got[cid]["met"], s.comment


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c][4]))
@pytest.mark.parametrize("reader", READERS)
def test_every_cross_quotes_the_sentence_that_caused_it(case, reader):
    """The ✗ of a denied, retracted or misread criterion quotes the student's sentence that caused it,
    in the evidence (review page, feedback) and in the comment, as every ✓ quotes its evidence."""
    lesson, item_id, answer, labels, fragment = CASES[case]
    s = read(answer, lesson, item_id, reader)
    crossed = [e for e in s.evidence if not e["met"]]
    assert crossed, s.comment
    assert any(fragment in e["quote"] for e in crossed), s.evidence
    assert any(fragment in line and "✗" in line for line in s.comment.splitlines()), s.comment


SALADS = {  # rubric terms and causal connectives, no explanation (each item)
    (L16, "q1"): (
        "因为背压所以饥饿，上游阻塞导致下游 send 晚到，当 recv 缓冲时上游空等，所以下游背压，"
        "因为 P2P 发送阻塞导致上游饥饿。"
    ),
    (L16, "q2"): (
        "因为下限所以气泡，min(m, P−p)·M_p 导致显存增大 m，当 1 − t̄/t_max 时全局批膨胀，"
        "所以 GEMM 效率下降导致气泡下限。"
    ),
    (L16, "q3"): (
        "因为解耦所以最新缓冲区，多速率导致陈旧梯度 Δt，当 λ^Δt 衰减时各自的频率缓冲，"
        "所以陈旧梯度导致解耦衰减。"
    ),
    (L03, "q1"): (
        "因为耗时稳定所以决策开销，显存上限导致贪心更慢，当提前测出耗时时重新切分，"
        "所以通信提前规划导致可复现顺序相同。"
    ),
    (L03, "q2"): (
        "因为按层数均分所以不等于均衡，实测每个阶段导致增大 m 消除不了，当气泡率 50.8% 时公式 30.4%，"
        "所以 profiler 导致 makespan 下限。"
    ),
}


ENGLISH_SALADS = [
    (
        (L16, "q1"),
        "Because backpressure causes starvation, the upstream blocking send leads to the downstream recv buffer, "
        "so when upstream starves the downstream backpressure blocks the send because the P2P send is late.",
    ),
    (
        (L16, "q3"),
        "Because decoupled latest buffer, the multi-rate stale gradients decay when the own rate buffer is "
        "stale, so decoupled clocks damp the stale latest gradients with a lambda decay.",
    ),
    # fewer rubric words, but a causal connective every few words (claims.salad: connective density)
    (
        (L03, "q2"),
        "Because the layers are equal the profiler is slow, so the imbalance causes the micro-batches, therefore "
        "the measured bubble leads to the formula and thus the partition causes more layers.",
    ),
    (
        (L16, "q2"),
        "Because the memory is the floor, the cost grows with the stage, so the schedule causes the formula to "
        "limit the micro-batches, therefore the position of the peak leads to the bubble.",
    ),
]

# fluent salads (the kind fresh4's authors wrote): one long sentence that chains the terms of several criteria
# with four or more causal links, at a rubric-word share a sincere answer also reaches
CHAIN_SALADS = [
    (  # the chain split by semicolons: six links in one paragraph
        (L03, "q2"),
        "两个误区是层数和 m。由于层数相同导致不均衡比 max/mean，因此最慢段决定了 1.636；而增大 m 使得气泡率趋于 "
        "1 − t̄/t_max，所以 makespan 暴露了公式的 30.4%，从而显存和 GEMM 效率共同暴露了本课的数字。",
    ),
    (
        (L16, "q1"),
        "下游背压之所以出现，是因为上游饥饿使得 recv 的缓冲区变慢，从而阻塞式 send 导致 [20,10,10,30] 的最慢阶段提前，"
        "因此快阶段的隐性停顿来源于两条流水线共同的节拍。",
    ),
    (
        (L03, "q2"),
        "Equal layer counts cause the imbalance ratio of 1.636, which means the bubble measured by the profiler "
        "leads to more micro-batches, so the uniform formula of 30.4% results in the slowest stage dropping to 4.0.",
    ),
    (
        (L16, "q3"),
        "控制回路不丢帧是因为陈旧梯度按 λ^Δt 衰减，从而最新值缓冲区使得视觉的频率提高，进而 stop-gradient 保证了时钟解耦，"
        "所以重要性加权导致控制与视觉同步。",
    ),
]


@pytest.mark.parametrize(
    "key, text",
    [(k, SALADS[k]) for k in sorted(SALADS)] + ENGLISH_SALADS + CHAIN_SALADS,
    ids=lambda x: str(x)[:30],
)
@pytest.mark.parametrize("reader", READERS)
def test_a_keyword_salad_is_flagged_and_capped_at_half(key, text, reader):
    lesson, item_id = key
    item = ITEMS[lesson][item_id]
    s = read(text, lesson, item_id, reader)
    assert s.score <= float(item["points"]) / 2, s.comment
    assert s.confidence == "low" and any(f.startswith(LOW_CONFIDENCE) for f in s.flags), s.flags
    assert "capped at a quarter" in s.comment


@pytest.mark.parametrize(
    "key, text",
    [
        (
            (L16, "q1"),
            "要区分上游饥饿和下游背压：各自的因果链、出现的条件，用 [30,10,10,20] 和 [20,10,10,30] 两条流水线"
            "说明，以及阻塞式 P2P 发送和缓冲区的作用。",
        ),
        (
            (L03, "q2"),
            "讲义的案例复盘指出两个常见误区，它们分别是什么，每个误区要用什么测量暴露，本课的数字怎样暴露它们。",
        ),
    ],
    ids=["16q1", "03q2"],
)
@pytest.mark.parametrize("reader", READERS)
def test_a_paraphrased_copy_of_the_question_earns_nothing(key, text, reader):
    """A copy of the question with a few words changed is ignored like a verbatim one (claims.echoes)."""
    s = read(text, key[0], key[1], reader)
    assert s.score == 0, s.comment
    assert "只复述题目" in s.comment or "only the question copied" in s.comment, s.comment


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("lesson", [L16, L03])
def test_sincere_answers_are_not_salad(lesson, reader):
    """The reference answers keep high confidence and full marks."""
    nb = json.loads(next((ROOT / "solutions" / lesson).glob("*.ipynb")).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "markdown" and meta.get("solution") and meta.get("grade"):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            s = read(src, lesson, meta["grade_id"], reader)
            assert s.confidence == "high", (meta["grade_id"], s.flags, s.doubts)
            assert s.score == s.points, s.comment


def _answer(student: str, text: str, item: dict):
    from autograder.review.answer_groups import answer_of

    s = suggest(text, item)
    return answer_of(student, text, s.points, s.score, s.evidence, flags=s.flags, doubts=s.doubts)


def test_low_confidence_groups_come_first_and_crosses_are_quoted_inert_on_the_review_page():
    """The answer groups sort low-confidence suggestions first and mark them; a ✗ shows its note and the
    student's sentence that caused it, escaped (a quote is data, never markup)."""
    from autograder.core.registry import lessons
    from autograder.review.answer_groups import group_answers
    from autograder.review.group_page import render_item
    from autograder.review.groups import ItemReview

    item = ITEMS[L16]["q1"]
    good = CASES["q1-no-backpressure-in-the-example"][2]
    hostile = CASES["q1-fast-stage-causes-backpressure"][2].replace(
        "on the others", 'on the others `<script>alert("x")</script>`'
    )
    answers = [_answer(f"g{i}", good, item) for i in range(3)]
    answers += [_answer("h1", hostile, item), _answer("s1", SALADS[(L16, "q1")], item)]
    groups = group_answers("q1", answers)
    assert groups[0].low_confidence and groups[0].representative.student_id == "s1"  # the salad
    assert not any(g.low_confidence for g in groups[1:])
    # h1 stands and misreads at once: medium confidence, after the flagged and before the confident
    assert groups[1].doubtful and groups[1].representative.student_id == "h1"
    assert not any(g.doubtful for g in groups[2:])
    assert "<script>" in next(e["quote"] for e in groups[1].representative.evidence if not e["met"])
    rubric_item = next(it for it in lessons()[L16].rubric.written_items if it.id == "q1")
    html = render_item(ItemReview(L16, rubric_item, groups), "/", "")
    outliers = html[html.index('id="outliers"') :]  # groups of two or more come in their own section
    assert outliers.index("low confidence") < outliers.index("因果方向反了")  # the salad before h1
    assert (
        outliers.index("low confidence")
        < outliers.index("medium confidence")
        < outliers.index("因果方向反了")
    )
    assert "前后不一" in outliers
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "因果方向反了" in html and "the fast stage causes backpressure on the others" in html


def test_feedback_quotes_the_sentence_behind_a_cross_inert():
    from autograder.core.results import SubmissionResult
    from autograder.reporting import feedback

    text = CASES["q1-async-retraction"][2].replace("并不存在。", '并不存在<img src=x onerror="alert(1)">。')
    s = suggest(text, ITEMS[L16]["q1"])
    cross = next(e for e in s.evidence if e["criterion"] == "backpressure")
    assert not cross["met"] and "并不存在" in cross["quote"]
    page = feedback.render(SubmissionResult("s1", L16, "nb.ipynb", items=[s.to_item_result()]))
    quoted = page[page.index("backpressure") :]
    assert "并不存在" in quoted and "<blockquote>" in quoted
    assert "<img" not in page and 'onerror="alert' not in page


def test_no_retraction_reversal_negation_or_salad_of_the_tuning_part_above_half():
    m = agreement.report("tune")["overall"]
    assert m["bad_n"] >= 10 and m["bad_max"] <= 0.5, m


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"pattern": "(", "why": "x"}, "bad misreading"),
        ({"pattern": "a"}, "needs a why"),
        ({"pattern": "a", "why": "x", "half": "yes"}, "half must be true or false"),
    ],
)
def test_a_malformed_misreading_is_a_clear_rubric_error(entry, message):
    import copy

    from autograder.grading.written import validate_item

    item = copy.deepcopy(ITEMS[L16]["q1"])
    item["criteria"][0]["misreadings"] = [entry]
    with pytest.raises(ValueError, match=message):
        validate_item(item)


@pytest.mark.parametrize(
    "entry",
    [{"cue": "(", "values": [1]}, {"cue": "x", "values": []}, {"cue": "x", "values": [1], "unit": "ms"}],
)
def test_a_malformed_figures_entry_is_a_clear_rubric_error(entry):
    item = copy.deepcopy(ITEMS[L03]["q2"])
    next(c for c in item["criteria"] if c["id"] == "layer_measure")["figures"] = [entry]
    with pytest.raises(ValueError, match="figures"):
        suggest("x", item)


@pytest.mark.parametrize("lesson", [L16, L03])
def test_the_concept_names_listed_earn_nothing(lesson):
    """The demo's keyword student lists every concept's name of the rubric (a name with a formula or "by"
    in it once made that list read as an explanation: 2/2 on lesson 16 Q2)."""
    for item in ITEMS[lesson].values():
        names = "、".join(
            c["name"] for cr in item["criteria"] for u in cr.get("options") or [cr] for c in u["concepts"]
        )
        assert suggest(names, item).score == 0, (item["id"], suggest(names, item).comment)


def test_confidence_is_medium_when_the_reading_is_doubtful():
    """Confidence is also about the reading, not only flags: an answer whose points stand beside a denied or
    misread one, one mostly made of the rubric's and question's words, or one naming concepts without an
    explanation is "medium", with its reasons in the comment (and the review page, above)."""
    item = ITEMS[L16]["q1"]
    mixed = suggest(CASES["q1-fast-stage-causes-backpressure"][2], item)
    assert mixed.confidence == "medium" and mixed.doubts and not mixed.flags
    assert any(line.startswith("? 置信度中等") for line in mixed.comment.splitlines())
    assert mixed.to_item_result().doubts == mixed.doubts
    clean = suggest(CASES["q1-no-backpressure-in-the-example"][2], item)
    assert clean.confidence == "high" and not clean.doubts
    salad = suggest(SALADS[(L16, "q1")], item)
    assert salad.confidence == "low" and not salad.doubts  # a flag already says it: no second reason


def test_a_sincere_causal_chain_about_one_criterion_is_no_salad():
    """Four links in one sentence about one criterion is an explanation, not a salad."""
    text = (
        "因为 stage 3 最慢，所以 stage 2 做完后 send 要等 stage 3 发出 recv，从而卡在发送上，"
        "因此它开始不了下一个微批次，这个等待再一级级传到上游：这是背压，只在下游更慢时出现。"
        "上游饥饿相反：上游比我慢时，我算完了下一个输入还没到，只能空等。"
    )
    s = suggest(text, ITEMS[L16]["q1"])
    assert not s.flags and s.score == 2, s.comment


@pytest.mark.parametrize(
    "part, answer_id",
    [
        ("fresh9", "q1-b03"),  # terse bullets: "例子 [30,10,10,20]，中间两级每周期空 20ms" is no keyword list
        (
            "fresh11",
            "q1-d14",
        ),  # "先看 [30,10,10,20]。… 所以不会有人卡在发送上。": a denial about that example
        ("fresh11", "q1-d12"),  # the same in English: "In [30,10,10,20] … no send ever blocks"
    ],
)
def test_an_example_is_one_token_and_scopes_the_paragraph_that_names_it(part, answer_id):
    """The commas inside "[30,10,10,20]" are no list separators, and a paragraph about one named example
    denies nothing of the mechanism: the rules alone give these authors' labels (2 of 2)."""
    a = next(x for x in agreement.corpus(L16, part) if x["id"] == answer_id)
    s = suggest(a["answer"], ITEMS[L16][a["item"]])
    assert s.score == sum(a["labels"].values()) == 2, s.comment
