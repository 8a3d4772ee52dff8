# expect: simulator=0 min_microbatches=0 solver=0
# A fake get_ipython, a patched builtins.exec/compile/__import__ and sys.meta_path hook that would
# blank or rewrite later code. The tests are not code run in this process, so nothing is blanked.
import builtins
import sys


class FakeShell:
    input_transformers_cleanup = []
    input_transformers_post = []


builtins.get_ipython = lambda: FakeShell()
get_ipython().input_transformers_cleanup.append(lambda lines: [])  # noqa: F821
builtins.exec = lambda *a, **k: None
builtins.compile = lambda *a, **k: compile("pass", "<blank>", "exec")


class Blank:
    def find_spec(self, *a, **k):
        return None


sys.meta_path.insert(0, Blank())


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        raise NotImplementedError

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        raise NotImplementedError
