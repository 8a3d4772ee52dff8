"""Run the hidden tests under plain pytest against the reference: `pytest autograder/`.

The `sub` fixture executes the exercise cells of `solutions/<assignment>/<notebook>.ipynb` in the same
sandboxed worker students get, so the reference goes through the path any submission takes.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from autograder.grading.engine import Submission, _worker_for, load_assignment, shutdown_workers
from autograder.grading.notebook import extract
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
    worker = _worker_for(assignment.limits, _isolation)
    handle = Submission(
        worker,
        extracted.code_cells,
        assignment.limits,
        deadline=time.monotonic() + assignment.limits.submission_timeout,
    )
    yield handle
    handle.close()
