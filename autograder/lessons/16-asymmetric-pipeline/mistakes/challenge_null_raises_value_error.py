# expect: simulator=1 min_microbatches=1 solver=2 challenge=0
# include: reference
# Null challenge: rejects everything with ValueError, which is right for every invalid input; the
# validation test also asks for a right makespan on a valid case, so this earns nothing.


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    raise ValueError("not implemented")
