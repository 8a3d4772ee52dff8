# expect: simulator=1 min_microbatches=1 solver=2 challenge=1.8125
# include: reference
# Challenge mistake: right results on valid input, no validation: sequences of different lengths are
# cut to the shorter one, negative/NaN/infinite times and 0, 2.5 or True microbatches go through
# (True counts as 1). Loses exactly the validation test (1.5 of 16).
import numpy as np

_reference_1f1b = simulate_1f1b


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    n = min(len(forward_times), len(backward_times))
    f = np.abs(np.array(forward_times, dtype=float).ravel()[:n])  # abs and ravel hide bad input
    b = np.abs(np.array(backward_times, dtype=float).ravel()[:n])
    f, b = np.nan_to_num(f, posinf=0.0), np.nan_to_num(b, posinf=0.0)
    m = max(1, int(num_microbatches))
    if n == 0:
        return 0.0, 0.0
    return _reference_1f1b(f.tolist(), b.tolist(), m)
