"""The review copy formgrader shows is built without nbformat's per-cell validation (for speed at class
scale), so it is validated here: every kind of cell a submission can hold gives a schema-valid notebook,
and building it twice gives the same bytes (no random cell ids: a re-run rewrites the same copy)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from autograder.grading import review_copy
from autograder.grading.notebook import read_notebook_bytes

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "solutions" / "16-asymmetric-pipeline" / "asymmetric_pipeline.ipynb"


def test_review_copy_is_schema_valid_and_deterministic(tmp_path):
    submission = json.loads(SOURCE.read_text(encoding="utf-8"))
    submission["cells"] += [
        {"cell_type": "raw", "metadata": {}, "source": "<script>alert(1)</script>"},
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["# student's own\n", "<img src=x onerror=alert(1)>"],
        },
        {"cell_type": "code", "metadata": {}, "execution_count": 3, "outputs": [], "source": "x = 1"},
        {
            "cell_type": "code",
            "id": "bad id!",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": "",
        },
    ]
    path = tmp_path / "sub.ipynb"
    path.write_text(json.dumps(submission, ensure_ascii=False), encoding="utf-8")
    first = review_copy.of_submission(read_notebook_bytes(path), SOURCE, "ok")
    nbformat.validate(first)
    again = review_copy.of_submission(read_notebook_bytes(path), SOURCE, "ok")
    assert nbformat.v4.writes_json(first) == nbformat.v4.writes_json(again)
    assert len({c["id"] for c in first.cells}) == len(first.cells)
    nbformat.validate(review_copy.unreadable("unreadable: truncated"))
