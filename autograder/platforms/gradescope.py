"""The same grader as a Gradescope autograder.

    python -m autograder gradescope ASSIGNMENT --out dist/     # writes dist/<assignment>-gradescope.zip

The zip follows Gradescope's autograder contract (gradescope/autograder_samples, docs/specs.md): at its
root ``setup.sh`` (run once when Gradescope builds the image) and an executable ``run_autograder``
(copied to ``/autograder/run_autograder`` and run per submission with cwd ``/autograder``); the zip is
unpacked into ``/autograder/source``, the submission is in ``/autograder/submission`` and the results go
to ``/autograder/results/results.json``. ``$GRADESCOPE_ROOT`` replaces ``/autograder`` (tests), and
``$GRADESCOPE_PYTHON`` the interpreter ``setup.sh`` installs (``/autograder/venv/bin/python``).

What the zip holds: the engine (``autograder/*.py``), the assignment's rubric and hidden tests, its
release notebook (the grader's reference for cell roles and checksums), ``requirements.txt`` (the engine's
Python dependencies pinned to the versions this build ran with) and ``gradescope.json`` (assignment,
isolation, visibility). Never the solutions notebook or the mistakes catalogue. The zip requires a
sandbox unless built with ``--isolation auto``/``none``: bubblewrap, or where the container refuses
user namespaces (Docker's default seccomp profile without ``CAP_SYS_ADMIN``) the ``uid`` isolation
(student code as a uid of its own under a seccomp filter, the autograder's files made unreadable to it:
:func:`gradescope_run.lock_down`, ``sandbox.Worker``); ``setup.sh`` fails the image build if neither can run there
(Gradescope runs the grader as root, so the fallback would run student code as root beside the hidden
tests).

``run_autograder`` finds the notebook in the submission (any name, or inside a zip), grades it with the
local engine and sandbox (``engine.grade_notebook``, exactly what ``python -m autograder grade`` runs)
and writes ``results.json``:

* one test per hidden test: ``name`` (item: test), ``score``/``max_score`` (its weighted share of the
  item's points), ``status``, ``output`` (the message the feedback page shows: never hidden inputs),
  ``visibility``, ``tags`` (item id, ``edge``), ``number`` (item.test);
* written items (Q1–Q3) are **graded by hand in Gradescope**: add them as manually graded questions to
  the assignment's outline with their rubric points; the autograder's own points are the code items'.
  Each written item still gets an informational entry without a score (the static-review suggestion with
  its quoted evidence, as in formgrader's comment box), visible to students ``after_published`` by
  default, so a student sees the suggestion together with the TA's score;
* extra-credit items (rubric ``extra_credit: true``): their tests have ``max_score`` 0, so what they
  earn counts above the autograder's points, as Gradescope shows extra credit;
* top level: ``score`` = ``code_total`` + ``extra_credit`` of ``grades.csv``, ``output`` (per-item totals,
  pass line, status, isolation, notes), ``extra_data`` (per-item scores, status, isolation); all text
  formats are ``text``, so nothing a submission wrote renders as HTML.

Any crash still leaves a valid ``results.json`` that says what failed: the Python side catches
everything, and ``run_autograder`` writes one itself if the interpreter could not even start.

The parts: :mod:`autograder.platforms.gradescope_zip` builds the zip (pinned requirements, members,
``setup.sh`` and ``run_autograder``); :mod:`autograder.platforms.gradescope_run` is what runs inside the
container (the notebook, grading, ``results.json``, :func:`~autograder.platforms.gradescope_run.lock_down`,
seeding, setup.sh's check); this module is their command line (``python -m autograder.platforms.gradescope
{run,check}``, what the zip's scripts call) and tries a built zip without Gradescope (:func:`install`,
:func:`invoke`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from autograder.platforms.gradescope_run import DEFAULT_ROOT, PYTHON_ENV, ROOT_ENV, check, run

# ---------------------------------------------------------------------------------------------------
# trying the zip without Gradescope (tests, tools/gradescope_vs_local.py)
# ---------------------------------------------------------------------------------------------------


def install(zip_path: Path, root: Path) -> None:
    """Lay out ``root`` as Gradescope's image build does, setup.sh aside: the zip unpacked into
    ``root/source`` (file modes kept, as unzip does) and ``run_autograder`` copied to ``root``."""
    source = Path(root) / "source"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(source)
        for info in zf.infolist():
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(source / info.filename, mode)
    shutil.copy2(source / "run_autograder", Path(root) / "run_autograder")


def invoke(root: Path, python: str | None = None, timeout: float = 600) -> tuple[dict, str]:
    """Run ``root/run_autograder`` as Gradescope does (cwd ``root``), with ``python`` standing in for
    the venv setup.sh builds; returns the parsed results.json and the instructor-only stdout."""

    env = {**os.environ, ROOT_ENV: str(root), PYTHON_ENV: python or sys.executable}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [str(Path(root) / "run_autograder")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"run_autograder exited with {proc.returncode}: {proc.stderr[-2000:]}")
    data = json.loads((Path(root) / "results" / "results.json").read_text(encoding="utf-8"))
    return data, proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.platforms.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade the submission in ROOT/submission into ROOT/results/results.json")
    r.add_argument("--root", default=os.environ.get(ROOT_ENV, DEFAULT_ROOT))
    sub.add_parser("check", help="load the assignment and report the isolation (setup.sh)")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(Path(args.root))
    return check()


if __name__ == "__main__":
    sys.exit(main())
