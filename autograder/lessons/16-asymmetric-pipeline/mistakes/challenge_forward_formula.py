# expect: simulator=1 min_microbatches=1 solver=2 challenge=0.375
# include: reference
# Challenge mistake: the forward-flow closed form carried over to f+b, sum(f+b) + (m-1)*max(f+b), with
# the bubble from it. Exact when the last stage has both the largest f and the largest b (and for uniform
# stages), wrong when the bottleneck sits earlier: there the gradient's way back makes the last op stage 0's own backward and
# the formula overestimates (lesson 16, extension A: 840 against 750).
# Earns the uniform (2) and heavy-tail (1) tests; every edge test also needs an ordinary case whose
# bottleneck is stage 0, so none of them: 3 of 16.
_reference_1f1b = simulate_1f1b


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    _reference_1f1b(forward_times, backward_times, num_microbatches)  # the reference's validation
    fb = [float(x) + float(y) for x, y in zip(forward_times, backward_times, strict=True)]
    m = int(num_microbatches)
    makespan = sum(fb) + (m - 1) * max(fb)
    if makespan == 0:
        return 0.0, 0.0
    return makespan, 1.0 - m * sum(fb) / (len(fb) * makespan)
