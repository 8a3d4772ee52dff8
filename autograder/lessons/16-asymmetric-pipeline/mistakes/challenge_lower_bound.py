# expect: simulator=1 min_microbatches=1 solver=2 challenge=0.625
# include: reference
# Challenge mistake: returns the lower bound max_s[sum_{j<s}(f_j+b_j) + m(f_s+b_s)] as the makespan.
# Right for uniform stages and wherever the simulator attains the bound (a heavy stage 0), too small
# elsewhere (lesson 16, extension A: 720 against 750).
# Earns the uniform (2), bound-attained (2) and heavy-tail (1) tests (the bound is the forward formula
# when the last stage is the slowest); the edge tests' ordinary case does not attain it: 5 of 16.
_reference_1f1b = simulate_1f1b


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    _reference_1f1b(forward_times, backward_times, num_microbatches)  # the reference's validation
    fb = [float(x) + float(y) for x, y in zip(forward_times, backward_times, strict=True)]
    m = int(num_microbatches)
    makespan = max(sum(fb[:s]) + m * fb[s] for s in range(len(fb)))
    if makespan == 0:
        return 0.0, 0.0
    return makespan, 1.0 - m * sum(fb) / (len(fb) * makespan)
