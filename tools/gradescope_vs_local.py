"""Grade the whole demo class twice, with the local batch and with each lesson's Gradescope zip (its
``run_autograder``, one container-style run per submission), and list every difference.

    .venv/bin/python tools/gradescope_vs_local.py [--work DIR]

Takes about 2.5 s per submission (a fresh grader process and sandbox each, as on Gradescope); the test
suite (tests/test_gradescope.py) checks a handful of notebooks the same way. Prints one line per
mismatch (code total or any item score) and a summary; exits 1 if anything differs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from autograder.authoring.demo import build_sample_class
from autograder.classroom.batch import grade_class
from autograder.core.registry import lessons
from autograder.platforms import gradescope, gradescope_zip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--work", type=Path, default=None, help="scratch directory (default: a temporary one)"
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="gradescope-vs-local-"))
    demo = build_sample_class(work / "class")
    local = {(r.student_id, r.assignment_id): r for r in grade_class(demo, work / "local", quiet=True)}
    mismatches, runs, started = 0, 0, time.monotonic()
    for assignment in lessons():
        root = work / f"root-{assignment}"
        shutil.rmtree(root, ignore_errors=True)
        gradescope.install(gradescope_zip.build(assignment, work / "dist"), root)
        for student in sorted(p.name for p in demo.iterdir() if (p / assignment).is_dir()):
            shutil.rmtree(root / "submission", ignore_errors=True)
            shutil.copytree(demo / student / assignment, root / "submission")
            data, _ = gradescope.invoke(root)
            runs += 1
            want = local[(student, assignment)]
            got_items = {k: v["score"] for k, v in data["extra_data"]["items"].items()}
            want_items = {it.id: it.score for it in want.items}
            if data["score"] != round(want.code_total + want.extra_credit, 4) or got_items != want_items:
                mismatches += 1
                print(
                    f"MISMATCH {assignment} {student}: gradescope {data['score']} {got_items}, "
                    f"local {want.code_total} + {want.extra_credit} {want_items}"
                )
    print(
        f"{runs} submissions, {mismatches} mismatches, {time.monotonic() - started:.0f} s of Gradescope runs"
    )
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
