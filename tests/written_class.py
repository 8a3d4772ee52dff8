"""A graded class whose written answers are chosen by the test, recorded without running any code.

``record_written_class(OUT, {student: {item: answer}})`` writes each student's submission (lesson 16's
release with those answers), scores it as the grader does for a submission whose code is the release's
stub (code items 0, written items the scorer's suggestion, ``engine.score_items``), and records it the
way ``grade`` does: ``recording.record`` (gradebook rows, ``OUT/submitted`` and ``OUT/autograded``
copies), then ``OUT/results/<student>/<assignment>.json``. Used by the answer-group tests (unit and browser)
so they need no sandbox.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.authoring.demo import with_answers
from autograder.classroom.batch import result_path
from autograder.core.layout import REPO as LAYOUT
from autograder.core.registry import lessons
from autograder.core.results import SubmissionResult
from autograder.gradebook import coursedir, recording, structure
from autograder.grading.assignment import load_assignment
from autograder.grading.scoring import score_items

ROOT = LAYOUT.root

ASSIGNMENT = "16-asymmetric-pipeline"


def record_written_class(
    out: Path, answers: dict[str, dict[str, str]], submissions: Path, assignment_id: str = ASSIGNMENT
) -> dict[str, SubmissionResult]:
    assignment = load_assignment(lessons()[assignment_id].directory)
    nb_name = f"{assignment.notebook}.ipynb"
    release = json.loads((LAYOUT.releases / assignment_id / nb_name).read_text(encoding="utf-8"))
    coursedir.prepare_course_dir(out, ROOT)
    structure.ensure_assignment(coursedir.db_url_for(out), assignment.id, assignment.source)
    results = {}
    for student, texts in sorted(answers.items()):
        path = submissions / student / assignment_id / nb_name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(with_answers(release, texts), ensure_ascii=False), encoding="utf-8")
        res = SubmissionResult(student, assignment_id, assignment.notebook, pass_line=assignment.pass_line)
        res.items = score_items(assignment, [], {k: texts.get(k, "") for k in assignment.written_ids})
        recording.record(out, res, path)
        res.save(result_path(out, student, assignment_id))
        results[student] = res
    return results
