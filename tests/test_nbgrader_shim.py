"""The bench's nbgrader comparison runs our hidden tests inside an nbgrader kernel through
``bench/nbgrader_shim.py``. The shim must offer every call the hidden tests make (``call``, and the
pipelined ``calls``/``calls_with``), or nbgrader's scores in `make bench` silently drop to 0: the
reference earns every code item through it, and a known-wrong patch loses one."""

from __future__ import annotations

import pytest

from autograder.authoring.demo import reference_code
from autograder.core.registry import lessons
from autograder.grading.assignment import load_assignment
from bench.nbgrader_shim import run_item


@pytest.mark.parametrize("assignment_id", sorted(lessons()))
def test_reference_passes_every_code_item_through_the_shim(assignment_id):
    directory = lessons()[assignment_id].directory
    namespace: dict = {"__name__": "__main__"}
    exec(compile(reference_code(directory), "<reference>", "exec"), namespace)  # noqa: S102 - our reference
    items = [it.id for it in load_assignment(directory).items if it.is_code]
    assert items
    for item_id in items:
        run_item(namespace, str(directory), item_id)


def test_the_shim_fails_wrong_code():
    directory = lessons()["16-asymmetric-pipeline"].directory
    namespace: dict = {"__name__": "__main__"}
    exec(compile(reference_code(directory), "<reference>", "exec"), namespace)  # noqa: S102
    namespace["AsymmetricPipelineScheduler"].simulate_1f1b_execution = lambda self, lat, m: (0.0, 0.0)
    with pytest.raises(AssertionError):
        run_item(namespace, str(directory), "simulator")
