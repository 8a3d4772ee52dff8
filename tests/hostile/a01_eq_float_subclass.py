# expect: simulator=0 min_microbatches=0 solver=0
# Always-true __eq__ objects returned in place of results: a float subclass that equals everything
# (and lies in __float__/__repr__/__abs__/__sub__), a list subclass that equals everything and claims
# to hold the seed's answer, an int subclass that equals everything and claims to be 17. The grader
# reads the base-class slots (-1.0, an empty list, -1) and compares
# plain data with its own code. (It used to keep "does not modify the input", 1/16 of the simulator;
# since every edge test also asks for a right result on an ordinary case, code that returns nothing
# right scores 0: d178251.)


class Liar(float):
    def __eq__(self, other):
        return True

    __ne__ = lambda self, other: False  # noqa: E731
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __hash__ = float.__hash__

    def __float__(self):
        return 280.0

    def __repr__(self):
        return "280.0"

    def __abs__(self):
        return 0.0

    def __sub__(self, other):
        return 0.0

    __rsub__ = __sub__


class LiarList(list):
    def __eq__(self, other):
        return True

    def __len__(self):
        return 4

    def __iter__(self):
        return iter([3, 11, 11, 7])

    def __getitem__(self, i):
        return [3, 11, 11, 7][i]


class LiarInt(int):
    def __eq__(self, other):
        return True

    __ne__ = lambda self, other: False  # noqa: E731
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __hash__ = int.__hash__

    def __int__(self):
        return 17

    def __index__(self):
        return 17

    def __repr__(self):
        return "17"


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return Liar(-1.0), Liar(-1.0)

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return LiarList()

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        return LiarInt(-1)
