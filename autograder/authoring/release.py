"""Generate the student release (``lessons/``) from the nbgrader source notebooks (``solutions/``).

    python -m autograder.authoring.release [--check] [LESSON...]        (make release / make check-release)

Every registered lesson unless some are named. For each, the source notebook's 评分表 is first rendered
from the rubric (``autograder.authoring.scoring_table``), then the release generated from the source.

nbgrader ``generate_assignment`` runs (in-process, with the repository's ``nbgrader_config.py``) on a
throw-away course directory holding a copy of the assignment's source folder, so neither the
repository's gradebook nor ``lessons/`` is touched until the result is known.  Every generated notebook is then normalised —
outputs cleared, execution counts ``null``, JSON with ``indent=1``, ``ensure_ascii=False``, sorted keys
and a trailing newline — so that the committed release is byte-for-byte reproducible.

Files shared by every lesson (``SHARED``: the glossary) are copied from ``docs/`` into ``lessons/`` on
every run, so a notebook links to ``../glossary.md`` and the link works in JupyterLab (``make lab`` serves
``lessons/``) and on the Quarto site; ``--check`` compares them too.

Without ``--check`` the normalised release replaces ``lessons/<assignment>/``.  With ``--check`` nothing
is written: the command exits 1 and prints a unified-diff summary when ``lessons/`` differs from a fresh
generation (0 when it is in sync).
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import sys
import tempfile
from pathlib import Path

from autograder.authoring import scoring_table
from autograder.core.layout import REPO
from autograder.core.notebook_format import normalise_notebook
from autograder.core.registry import lessons

ROOT = REPO.root
SOURCE_DIR = REPO.sources.name
RELEASE_DIR = REPO.releases.name
MAX_DIFF_LINES = 60
#: Files every lesson links to: source in the repository -> path under ``lessons/``.
SHARED = {"docs/glossary.md": "glossary.md"}


def _run_nbgrader(course: Path, assignment: str, root: Path) -> None:
    """``nbgrader generate_assignment ASSIGNMENT --force --no-db`` in ``course``, in-process.

    Only the repository's ``nbgrader_config.py`` is loaded (a user's ``~/.jupyter/nbgrader_config.py``
    cannot change the release), with the course root redirected into the temporary course.  The release
    needs no gradebook (the grading engine builds its own), so the run skips the database: nbgrader's
    ``SaveCells`` step only records cells in the gradebook and does not change the notebook, and
    creating a fresh gradebook costs a slow ``alembic`` subprocess.
    """
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import SaveCells
    from nbgrader.utils import capture_log
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.db_url = f"sqlite:///{course / 'build' / 'release-gradebook.db'}"
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = assignment
    app = GenerateAssignment(coursedir=coursedir, config=config)
    app.force = True
    app.no_database = True
    app.preprocessors = [p for p in app.preprocessors if p is not SaveCells]
    result = capture_log(app)
    if not result["success"]:
        sys.stderr.write(result.get("log", "") + result.get("error", ""))
        raise SystemExit(f"nbgrader generate_assignment {assignment} failed")


def generate(assignment: str, root: Path = ROOT) -> dict[str, bytes]:
    """Run nbgrader on ``solutions/<assignment>`` in a temporary course; return ``{relpath: content}``."""
    src = root / SOURCE_DIR / assignment
    if not src.is_dir():
        raise SystemExit(f"no source folder {SOURCE_DIR}/{assignment}")
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        course = Path(tmp)
        shutil.copytree(
            src,
            course / SOURCE_DIR / assignment,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
        (course / "build").mkdir()
        _run_nbgrader(course, assignment, root)
        out = course / RELEASE_DIR / assignment
        if not out.is_dir():
            raise SystemExit(f"nbgrader generate_assignment {assignment} produced nothing")
        files: dict[str, bytes] = {}
        for path in sorted(out.rglob("*")):
            if path.is_file():
                rel = path.relative_to(out).as_posix()
                data = path.read_bytes()
                if path.suffix == ".ipynb":
                    data = normalise_notebook(data.decode("utf-8")).encode("utf-8")
                files[rel] = data
        return files


def current(assignment: str, root: Path = ROOT) -> dict[str, bytes]:
    folder = root / RELEASE_DIR / assignment
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".ipynb_checkpoints" not in p.parts
    }


def diff(assignment: str, fresh: dict[str, bytes], have: dict[str, bytes]) -> list[str]:
    """Human-readable differences between the committed release and a fresh generation."""
    lines: list[str] = []
    base = f"{RELEASE_DIR}/{assignment}"
    for rel in sorted(set(fresh) | set(have)):
        if rel not in have:
            lines.append(f"missing: {base}/{rel} (run `make release`)")
        elif rel not in fresh:
            lines.append(f"extra (not generated from {SOURCE_DIR}/): {base}/{rel}")
        elif fresh[rel] != have[rel]:
            try:
                a = have[rel].decode("utf-8").splitlines(keepends=True)
                b = fresh[rel].decode("utf-8").splitlines(keepends=True)
            except UnicodeDecodeError:
                lines.append(f"differs (binary): {base}/{rel}")
                continue
            ud = list(difflib.unified_diff(a, b, f"{base}/{rel} (committed)", f"{base}/{rel} (fresh)", n=1))
            changed = sum(1 for x in ud if x[:1] in "+-" and x[:3] not in ("+++", "---"))
            lines.append(f"differs: {base}/{rel} ({changed} changed lines)")
            lines.extend(x.rstrip("\n") for x in ud[:MAX_DIFF_LINES])
            if len(ud) > MAX_DIFF_LINES:
                lines.append(f"... ({len(ud) - MAX_DIFF_LINES} more diff lines)")
    return lines


def write(assignment: str, files: dict[str, bytes], root: Path = ROOT) -> None:
    folder = root / RELEASE_DIR / assignment
    if folder.exists():
        shutil.rmtree(folder)
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.authoring.release", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if lessons/ differs from a fresh generation",
    )
    parser.add_argument("assignments", nargs="*", metavar="LESSON", help="default: every lesson")
    args = parser.parse_args(argv)
    known = lessons()
    unknown = [a for a in args.assignments if a not in known]
    if unknown:
        parser.error(f"unknown lesson {', '.join(unknown)} (known: {', '.join(known)})")
    status = 0
    for source, target in SHARED.items():
        fresh, path = (ROOT / source).read_bytes(), ROOT / RELEASE_DIR / target
        if args.check:
            if not path.is_file() or path.read_bytes() != fresh:
                status = 1
                print(f"{RELEASE_DIR}/{target} is out of date with {source}; regenerate with `make release`.")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(fresh)
    for assignment in args.assignments or list(known):
        if not scoring_table.sync(assignment, write=not args.check):
            print(
                f"{assignment}: the 评分表 differs from rubric.yaml"
                + (" (run `make release`)" if args.check else " (rewritten)")
            )
            status = 1 if args.check else status
        fresh = generate(assignment)
        if args.check:
            problems = diff(assignment, fresh, current(assignment))
            if problems:
                status = 1
                print(f"{RELEASE_DIR}/{assignment} is out of date with {SOURCE_DIR}/{assignment}:")
                print("\n".join(problems))
                print("Regenerate with `make release` (python -m autograder.authoring.release ASSIGNMENT).")
            else:
                print(f"{RELEASE_DIR}/{assignment}: in sync ({len(fresh)} file(s))")
        else:
            write(assignment, fresh)
            print(f"{RELEASE_DIR}/{assignment}: wrote {', '.join(sorted(fresh))}")
    return status


if __name__ == "__main__":
    sys.exit(main())
