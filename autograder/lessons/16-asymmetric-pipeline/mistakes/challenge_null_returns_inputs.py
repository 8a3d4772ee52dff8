# expect: simulator=1 min_microbatches=1 solver=2 challenge=0
# include: reference
# Null challenge: hands the inputs back (a pair, of lists).


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    return forward_times, backward_times
