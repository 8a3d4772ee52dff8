"""Run the hidden tests under plain pytest against the reference: `pytest autograder/`.

The `sub` fixture executes the exercise cells of `solutions/<assignment>/<notebook>.ipynb` in the same
sandboxed worker students get, so the reference goes through the path any submission takes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.grading.assignment import load_assignment
from autograder.grading.notebook import extract
from autograder.grading.submission import open_submission, shutdown_workers
from autograder.sandbox.isolation import resolve_isolation


@pytest.fixture(scope="session")
def _isolation():
    mode, _ = resolve_isolation("auto")
    yield mode
    shutdown_workers()


@pytest.fixture
def sub(request, _isolation):
    assignment = load_assignment(Path(request.node.path).parent)
    extracted = extract(assignment.source, assignment.cells, assignment.written_ids)
    handle = open_submission(assignment.limits, extracted.code_cells, _isolation)
    yield handle
    handle.close()
