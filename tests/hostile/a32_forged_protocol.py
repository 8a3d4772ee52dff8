# expect: simulator=0 min_microbatches=0 solver=0
# The worker's own code runs in the student's process, so a submission can rewrite what it sends:
# here json.dumps is patched so that every answer claims "raised ValueError". That buys exactly what
# honestly raising ValueError buys (a33_always_valueerror.py): nothing, since every validation test
# also asks for a right result on an ordinary case (d178251). The grader trusts no more than plain
# JSON data from the sandbox.
import json

_dumps = json.dumps


def forged(obj, *args, **kwargs):
    if isinstance(obj, dict) and "id" in obj:
        obj = {
            "id": obj["id"],
            "error": {
                "type": "ValueError",
                "mro": ["ValueError", "Exception", "BaseException"],
                "message": "forged",
            },
        }
    return _dumps(obj, *args, **kwargs)


json.dumps = forged


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return 280.0, 0.5

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return [3, 11, 11, 7]
