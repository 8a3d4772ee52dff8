"""The class report (issue 27): how long ``python -m autograder report`` takes on a class of 300.

The class is lesson 16, written as grading would have left it but without running any code: each of the
300 students' code is one of the catalogue's files, the reference or one of the similarity test's
independent solutions (cycled, so the class holds many near-copies: the catalogue's patches are copies of
the reference, the worst case for the pair search), their written answers cycle through the reference,
its first paragraphs and blanks, and every hidden test's outcome is drawn at random. Timed:
``autograder.review.report.build`` (items.csv, similarity.csv, the page with its figures), whole and without the
similarity check, in this process (one run each; the first includes the imports of nbgrader's gradebook
reader that the answer groups use).
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

CLASS_SIZE = 300
SEED = 27
ASSIGNMENT, NOTEBOOK = "16-asymmetric-pipeline", "asymmetric_pipeline"


def _class(out: Path) -> int:
    from autograder.authoring.demo import (
        first_sentence_answers,
        mistake_code,
        reference_answers,
        reference_code,
        with_answers,
        with_code,
    )
    from autograder.classroom.batch import result_path
    from autograder.core.layout import REPO as LAYOUT
    from autograder.core.registry import lessons
    from autograder.core.results import SubmissionResult, TestOutcome
    from autograder.gradebook import coursedir
    from autograder.grading.assignment import load_assignment
    from autograder.grading.scoring import score_items

    directory = lessons()[ASSIGNMENT].directory
    assignment = load_assignment(directory)
    release = json.loads((LAYOUT.releases / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    source = json.loads((LAYOUT.sources / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    fixtures = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "similarity"
    codes = [mistake_code(p) for p in sorted((directory / "mistakes").glob("*.py"))]
    codes += [reference_code(directory)] + [
        p.read_text(encoding="utf-8") for p in sorted(fixtures.glob("*.py"))
    ]
    ref = reference_answers(source)
    variants = [ref, first_sentence_answers(ref), {}]
    rng = random.Random(SEED)
    for n in range(CLASS_SIZE):
        sid = f"s{n:03d}"
        answers = variants[n % len(variants)]
        path = out / coursedir.SUBMITTED / sid / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        path.parent.mkdir(parents=True)
        nb = with_answers(with_code(release, codes[n % len(codes)]), answers)
        path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
        outcomes = [
            TestOutcome(
                t.name, t.item, t.weight, passed := rng.random() < 0.6, "" if passed else "wrong", t.edge
            )
            for t in assignment.tests
        ]
        res = SubmissionResult(sid, ASSIGNMENT, NOTEBOOK, pass_line=assignment.pass_line)
        res.items = score_items(assignment, outcomes, {k: answers.get(k, "") for k in assignment.written_ids})
        res.save(result_path(out, sid, ASSIGNMENT))
    return len(codes)


def main() -> None:
    from autograder.review.report import build

    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        out = Path(tmp)
        distinct = _class(out)
        start = time.perf_counter()
        page = build(out)
        whole = time.perf_counter() - start
        size = page.stat().st_size
        with (out / "report" / "similarity.csv").open(encoding="utf-8") as fh:
            pairs = sum(1 for line in fh if ",code," in line)
        start = time.perf_counter()
        build(out, similarity=False)
        numbers = time.perf_counter() - start
    print(
        f"class report, lesson 16, {CLASS_SIZE} submissions ({distinct} distinct codes): "
        f"{whole:.1f} s with the similarity check ({pairs} code pairs at or above the threshold), "
        f"{numbers:.1f} s without it; page {size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
