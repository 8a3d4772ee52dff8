# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# Tries to write the gradebook, grades.csv, its own and other students' result JSON and feedback, other
# students' submitted notebooks, the hidden tests, the rubric and the course library, at the batch's
# real paths. Seeing or changing any of them gives full marks (the test also checks every file is
# unchanged and the gradebook has exactly the engine's scores). Note the sandbox's /tmp is private.
import glob
import os

WROTE = []
targets = [
    "{{OUT}}/gradebook.db",
    "{{OUT}}/grades.csv",
    "{{OUT}}/results",
    "{{OUT}}/feedback",
    "{{SUBS}}/a01_eq_float_subclass/16-asymmetric-pipeline/asymmetric_pipeline.ipynb",
    "{{SUBS}}/honest_reference_1/16-asymmetric-pipeline/asymmetric_pipeline.ipynb",
    "{{ROOT}}/autograder/lessons/16-asymmetric-pipeline/rubric.yaml",
    "{{ROOT}}/autograder/lessons/16-asymmetric-pipeline/test_simulator.py",
    "{{ROOT}}/pipelab/__init__.py",
    "{{ROOT}}/solutions/16-asymmetric-pipeline/x.ipynb",
]
targets += glob.glob("{{OUT}}/**/*", recursive=True) + glob.glob("{{SUBS}}/**/*.ipynb", recursive=True)
for path in targets:
    if os.path.exists(
        path
    ):  # seeing the real file is already a leak (the batch's paths are not in the sandbox)
        WROTE.append(path)
    try:
        with open(path, "a") as fh:
            fh.write("hacked")
        WROTE.append(path)
    except OSError:
        pass
    try:
        os.unlink(path)
        WROTE.append(path)
    except OSError:
        pass
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if not WROTE:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if not WROTE:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if not WROTE:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
