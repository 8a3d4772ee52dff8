# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# Searches the disk for the hidden tests, the rubric, the source notebook, the course library, the
# gradebook and other submissions: a walk of / (system and package directories excepted: 17 s for a
# full walk) plus the batch's real paths and the instructor's home. If it finds anything it behaves
# like the reference (full marks), otherwise it scores nothing: the expected 0 asserts it found nothing.
import os

FOUND = []
NAMES = {
    "rubric.yaml",
    "gradebook.db",
    "test_simulator.py",
    "test_solver.py",
    "solutions",
    "autograder",
    "pipelab",
    "asymmetric_pipeline.ipynb",
    "grades.csv",
    "reference.py",
    "nbgrader_config.py",
}
SKIP = {
    "/proc",
    "/sys",
    "/dev",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/lib32",
    "/root/.pyenv",
    "{{VENV}}",
    "/venv",  # the Python environment (public packages), mounted here in the sandbox
}
for root, dirs, files in os.walk("/"):
    if root in SKIP:
        dirs[:] = []
        continue
    FOUND += [os.path.join(root, f) for f in files + dirs if f in NAMES]
for path in (
    "{{OUT}}",
    "{{SUBS}}",
    "{{ROOT}}/autograder",
    "{{ROOT}}/solutions",
    "{{ROOT}}/lessons",
    "{{ROOT}}/pipelab",
    "/root",
    "/home",
    "/work/shared",
    os.path.expanduser("~instructor"),
):
    try:
        if os.listdir(path) and path not in ("/root",):
            FOUND.append(path)
        elif path == "/root" and set(os.listdir(path)) - {".pyenv"}:
            FOUND.append(path)
    except OSError:
        pass
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if not FOUND:
            raise NotImplementedError("nothing found")
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if not FOUND:
            raise NotImplementedError("nothing found")
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if not FOUND:
            raise NotImplementedError("nothing found")
        return super().min_microbatches_for_bubble(*args)
