# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# A nested user namespace gave the sandbox every capability (CapEff 000001ffffffffff on 000f3b4), which
# opens mounts, nf_tables and the other kernel interfaces behind most privilege escalations. Full marks
# if unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWNET) works or leaves any capability, so the expected 0
# asserts the seccomp filter and --disable-userns refuse it.
import ctypes

_libc = ctypes.CDLL(None, use_errno=True)
_OK = _libc.unshare(0x10000000 | 0x00020000 | 0x40000000) == 0
with open("/proc/self/status") as _fh:
    _OK = _OK or any(line.startswith("CapEff") and int(line.split()[1], 16) for line in _fh)
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if not _OK:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if not _OK:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if not _OK:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
