# expect: simulator=1 min_microbatches=1 solver=1.25
# include: reference
# slow: two calls run into the per-call time limit on purpose
# Correct but exponential: tries every composition of the layers (C(L-1, P-1) of them). Fine on the
# small cases, times out on hundreds of layers: loses exactly the two large-size tests (4 + 2 of 16).
# (Validation is the reference's: the override calls it first.)

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        args = (total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages)
        super().solve_optimal_layer_partition(*args)  # the reference's checks (ValueError)
        fixed = [0.0] * num_stages
        fixed[0] += s0_fixed_cost
        fixed[-1] += s_tail_fixed_cost
        best = None

        def search(prefix, left):  # BUG (of speed): every composition, exponentially many
            nonlocal best
            if len(prefix) == num_stages - 1:
                counts = [*prefix, left]
                times = [f + n * layer_cost for f, n in zip(fixed, counts, strict=True)]
                mean = sum(times) / len(times)
                key = (max(times), sum((t - mean) ** 2 for t in times))
                if best is None or key < best[0]:
                    best = (key, counts)
                return
            for n in range(1, left - (num_stages - len(prefix) - 1) + 1):
                search([*prefix, n], left - n)

        search([], total_layers)
        return best[1]
