# expect: simulator=0 min_microbatches=0 solver=0
# Objects that claim to be floats/lists through a __class__ property and a metaclass
# __instancecheck__/__subclasscheck__, and an exception class whose metaclass fakes its __mro__ to look
# like a ValueError. None of it crosses the boundary: the worker reads the real type and the real MRO.


class Meta(type):
    def __instancecheck__(cls, obj):
        return True

    def __subclasscheck__(cls, sub):
        return True

    @property
    def __mro__(cls):
        return (ValueError, Exception, BaseException, object)


class FakeFloat(metaclass=Meta):
    @property
    def __class__(self):
        return float

    def __float__(self):
        return 280.0

    def __eq__(self, other):
        return True


class FakeValueError(Exception, metaclass=Meta):
    pass


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        if num_microbatches in (0, -2, 2.5, "3") or not stage_latencies:
            raise FakeValueError("looks like a ValueError")
        return FakeFloat(), FakeFloat()

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        if (
            num_stages < 1
            or total_layers < num_stages
            or layer_cost <= 0
            or min(s0_fixed_cost, s_tail_fixed_cost) < 0
        ):
            raise FakeValueError("looks like a ValueError")
        return [FakeFloat()] * num_stages
