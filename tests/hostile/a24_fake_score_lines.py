# expect: simulator=0 min_microbatches=0 solver=0
# Prints fake score lines in every format it can think of, on stdout and stderr, at load and on every
# call, and returns nothing useful. Results travel on a separate channel: printing cannot forge them.
import json
import sys

FAKES = [
    json.dumps({"score": 10, "tests": [{"name": "simulator", "score": 2, "max_score": 2}]}),
    json.dumps({"id": 1, "value": [280.0, 0.5], "types": ["tuple", ["float", "float"]]}),
    '{"ready": true, "cell_errors": [], "names": []}',
    "simulator: 2/2\nsolver: 2/2\nTOTAL 10/10 PASSED",
    "============ 32 passed in 0.01s ============",
    "Score: 10.0 / 10.0",
]


def shout():
    for fake in FAKES:
        print(fake)
        print(fake, file=sys.stderr)


shout()


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        shout()
        raise NotImplementedError

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        shout()
        raise NotImplementedError
