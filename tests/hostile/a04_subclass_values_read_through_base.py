# expect: simulator=0.9688 min_microbatches=1 solver=1.875
# include: reference
# Correct values wrapped in subclasses whose __float__/__index__/__int__/__repr__/__eq__/__iter__/
# __getitem__/__len__ all lie. The grader sees the true underlying values (so every core test passes)
# and the true types: a float subclass is not a float (simulator loses "returns floats", 0.5 of 16),
# an int subclass is not a Python int (solver loses "returns a list of Python ints", 1 of 16).
_Reference = AsymmetricPipelineScheduler  # noqa: F821 - defined by the included reference


class F(float):
    def __float__(self):
        return -7.0

    def __repr__(self):
        return "-7.0"

    def __eq__(self, other):
        return False

    __hash__ = float.__hash__


class I(int):  # noqa: E742
    def __index__(self):
        return -1

    def __int__(self):
        return -1

    def __repr__(self):
        return "-1"

    def __eq__(self, other):
        return False

    __hash__ = int.__hash__


class L(list):
    def __iter__(self):
        return iter([])

    def __getitem__(self, i):
        return -1

    def __len__(self):
        return 0


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        total, bubble = super().simulate_1f1b_execution(stage_latencies, num_microbatches)
        return F(total), F(bubble)

    def solve_optimal_layer_partition(self, *args):
        return L(I(n) for n in super().solve_optimal_layer_partition(*args))
