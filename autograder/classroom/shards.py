"""Sharded grading: split a class over N independent grader runs, then merge their outputs into one
course directory.

    python -m autograder grade SUBMISSIONS --out OUT_K --shard K/N     # K = 1..N, any machine, any order
    python -m autograder merge OUT_1 ... OUT_N --out OUT               # one gradebook, grades.csv, feedback

A student belongs to shard ``1 + H(student_id) mod N``, where H is the first 8 bytes of the SHA-256 of
the id (UTF-8): the same on every machine and Python version, independent of the other students, so
re-runs and students added later keep their shard. All assignments of a student land in the same shard.

Each sharded run writes ``OUT_K/shard.json`` (its K, N, the (student, assignment) rows it graded and
each assignment's grader fingerprint). ``merge`` refuses shard sets that are incomplete (a K missing),
mixed (different N, or different hidden tests/rubric for one assignment) or overlapping, and otherwise
re-records every result into OUT through the same function the batch uses (gradebook row, result
JSON, feedback page, autograded and submitted copies), so the merged directory is what one unsharded
run would have written. Written answers are reviewed in the merged directory's formgrader.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autograder.classroom.batch import COMMIT_BATCH, Progress, commit_many, result_path
from autograder.classroom.export import write_grades_csv
from autograder.classroom.sharding import MANIFEST, ShardError, read_manifest
from autograder.core.files import atomic_write_text
from autograder.core.layout import REPO
from autograder.core.registry import lessons
from autograder.core.results import SubmissionResult
from autograder.core.rubric import RubricError
from autograder.core.untrusted import SAFE_ID, display_id
from autograder.gradebook import coursedir, structure
from autograder.gradebook.database import session
from autograder.gradebook.structure import notebook_id_of
from autograder.grading.assignment import load_assignment
from autograder.intake.course import load_course, record_in_gradebook
from autograder.testing.seeding import base_fingerprint

# ---------------------------------------------------------------------------------------------------
# merge
# ---------------------------------------------------------------------------------------------------


def _shard_results(out: Path, manifest: dict | None) -> list[SubmissionResult]:
    """The results a shard output holds: the rows its manifest lists (a re-used OUT may hold stale
    records of other students), or every record when the directory was graded without --shard."""

    if manifest is None:
        paths = sorted((out / "results").glob("*/*.json"))
        return [_checked_record(out, p, p.parent.name, p.stem) for p in paths]
    results = []
    for row in manifest["rows"]:
        student, assignment = (str(x) for x in row) if len(row) == 2 else (repr(row), "")
        _check_id(out, "student id", student)
        _check_id(out, "assignment id", assignment)
        path = result_path(out, student, assignment)
        if not path.is_file():
            raise ShardError(f"{out}: {MANIFEST} lists {student}/{assignment} but {path} is missing")
        results.append(_checked_record(out, path, student, assignment))
    return results


def _check_id(out: Path, what: str, value: str) -> None:
    """``grade``'s id rule (``untrusted.SAFE_ID``, what ``collect`` and ``grade`` give every folder)."""

    if not isinstance(value, str) or not SAFE_ID.match(value):
        raise ShardError(f"{out}: unsafe {what} {display_id(str(value))} (not an id grade would write)")


def _checked_record(out: Path, path: Path, student: str, assignment: str) -> SubmissionResult:
    """A shard's result record whose ids follow grade's rule and match the folder and file it was read
    from (``results/<student>/<assignment>.json``)."""

    _check_id(out, "student id", student)
    _check_id(out, "assignment id", assignment)
    try:
        res = SubmissionResult.load(path)
    except (ValueError, TypeError, KeyError) as exc:
        raise ShardError(f"{path} is damaged ({exc}); re-run that shard") from None
    if not isinstance(res.notebook, str) or not isinstance(res.student_id, str):
        raise ShardError(f"{path} is damaged (ids are not text); re-run that shard")
    _check_id(out, "notebook name", notebook_id_of(res.notebook) or "?")
    if (res.student_id, res.assignment_id) != (student, assignment):
        raise ShardError(
            f"{path} holds the record of {res.student_id!r}/{res.assignment_id!r}, not of its folder and "
            "file: refused (a result is merged only under the id it was graded as)"
        )
    return res


def _written_paths(out: Path, res: SubmissionResult) -> list[Path]:
    """Every file recording ``res`` writes in ``out`` (result JSON, feedback page, formgrader copies)."""

    nb = f"{structure.notebook_id_of(res.notebook)}.ipynb"
    return [
        result_path(out, res.student_id, res.assignment_id),
        out / coursedir.FEEDBACK / res.student_id / f"{res.assignment_id}.html",
        out / coursedir.SUBMITTED / res.student_id / res.assignment_id / nb,
        out / coursedir.AUTOGRADED / res.student_id / res.assignment_id / nb,
    ]


def _check_under(out: Path, res: SubmissionResult) -> None:
    root = out.resolve()
    for path in _written_paths(out, res):
        if not path.resolve().is_relative_to(root):
            raise ShardError(f"{res.student_id}/{res.assignment_id} would write {path} outside --out {root}")


def check_complete(manifests: dict[Path, dict], unfinished: list[Path] = ()) -> None:
    """Every K of one N exactly once. ``unfinished``: the given outputs without a manifest, named when a
    shard is missing (a sharded run writes its manifest last, so a run that died has none)."""
    if not manifests:
        return
    counts = {m["of"] for m in manifests.values()}
    if len(counts) > 1:
        raise ShardError(f"the shard outputs were graded with different N: {sorted(counts)}")
    n = counts.pop()
    seen: dict[int, Path] = {}
    for path, m in manifests.items():
        if m["shard"] in seen:
            raise ShardError(f"shard {m['shard']}/{n} given twice: {seen[m['shard']]} and {path}")
        seen[m["shard"]] = path
    missing = sorted(set(range(1, n + 1)) - set(seen))
    if missing:
        names = ", ".join(f"{k}/{n}" for k in missing)
        hint = "".join(f"; {d} has no {MANIFEST} (its run did not finish: re-run it)" for d in unfinished)
        raise ShardError(
            f"shard{'s' if len(missing) > 1 else ''} {names} {'are' if len(missing) > 1 else 'is'} missing: "
            f"their students would be lost (grade them, then merge all N outputs){hint}"
        )


def merge(shard_dirs: list[Path], out: Path, quiet: bool = False) -> list[SubmissionResult]:
    """Merge shard outputs into the course directory ``out``; returns the merged results."""

    shard_dirs = [Path(d).resolve() for d in shard_dirs]
    out = Path(out).resolve()
    for d in shard_dirs:
        if not (d / coursedir.CONFIG_NAME).is_file():
            raise ShardError(f"{d} is not a grading output (no {coursedir.CONFIG_NAME})")
        if d == out:
            raise ShardError(f"--out {out} is one of the shard outputs; merge into a new directory")
    twice = sorted({str(d) for d in shard_dirs if shard_dirs.count(d) > 1})
    if twice:
        raise ShardError(f"shard output given twice: {', '.join(twice)}")
    manifests = {d: m for d in shard_dirs if (m := read_manifest(d)) is not None}
    check_complete(manifests, [d for d in shard_dirs if d not in manifests])

    owner: dict[tuple[str, str], Path] = {}
    graders: dict[str, tuple[str, Path]] = {}
    todo: list[tuple[SubmissionResult, Path]] = []
    for d in shard_dirs:
        for res in _shard_results(d, manifests.get(d)):
            key = (res.student_id, res.assignment_id)
            if key in owner:
                raise ShardError(
                    f"{key[0]}/{key[1]} is in both {owner[key]} and {d} (overlapping shard outputs)"
                )
            owner[key] = d
            if res.grader:
                first = graders.setdefault(res.assignment_id, (res.grader, d))
                if first[0] != res.grader:
                    raise ShardError(
                        f"{res.assignment_id} was graded with different hidden tests/rubric/release or course "
                        f"secret in {first[1]} and {d}: re-grade the older shard (with the same --secret)"
                    )
            todo.append((res, d))
    todo.sort(key=lambda rd: (rd[0].student_id, rd[0].assignment_id))
    _check_same_grader(graders)
    for res, _ in todo:  # before anything is written
        _check_under(out, res)

    coursedir.prepare_course_dir(out, REPO.root)  # as `grade` does: this checkout's solutions/ is the source
    url = coursedir.db_url_for(out)
    # assignments the shards registered, even those without a gradeable submission (each once)
    registered = sorted({pair for d in shard_dirs for pair in _registered(coursedir.db_url_for(d))})
    for assignment_id, notebook_id in registered:
        source_nb = coursedir.source_directory(out) / assignment_id / f"{notebook_id}.ipynb"
        try:
            structure.ensure_assignment(url, assignment_id, source_nb)
        except structure.SourceChanged as exc:
            raise ShardError(str(exc)) from None

    progress = Progress(len(todo), open(os.devnull, "w") if quiet else sys.stderr)  # noqa: SIM115
    merged = []
    for start in range(0, len(todo), COMMIT_BATCH):  # one gradebook transaction per batch
        batch = []
        for res, d in todo[start : start + COMMIT_BATCH]:
            copy = (
                d
                / coursedir.SUBMITTED
                / res.student_id
                / res.assignment_id
                / f"{structure.notebook_id_of(res.notebook)}.ipynb"
            )
            batch.append((res, copy if copy.is_file() else None))
        commit_many(out, batch)
        for res, _ in batch:
            merged.append(res)
            progress.step(f"{res.student_id} {res.assignment_id}")
    _merge_course_file(shard_dirs, out, merged)
    write_grades_csv(out, merged)
    return merged


def _merge_course_file(shard_dirs: list[Path], out: Path, merged: list) -> None:
    """The shards' course file (due dates, late policy: ``autograder.intake.course``) kept in ``out`` and its
    fields written to the merged gradebook; the results already carry each penalty. Shards graded with
    different course files are refused."""

    texts = {
        (d / "course.yaml").read_text(encoding="utf-8") for d in shard_dirs if (d / "course.yaml").is_file()
    }
    if len(texts) > 1:
        raise ShardError(
            "the shards were graded with different course files (course.yaml); re-grade them with one"
        )
    if texts:
        atomic_write_text(out / "course.yaml", texts.pop())
        record_in_gradebook(out, load_course(out / "course.yaml"), merged)


def _check_same_grader(graders: dict[str, tuple[str, Path]]) -> None:
    """The shards must have been graded by this checkout's hidden tests, rubric and release: the merge
    registers the assignments from it and formgrader shows its notebooks."""

    known = {name: found.directory for name, found in lessons().items()}
    for assignment_id, (fingerprint, where) in sorted(graders.items()):
        if assignment_id not in known:
            raise ShardError(f"{where} holds {assignment_id}, which this checkout does not know")
        try:
            here = load_assignment(known[assignment_id]).fingerprint
        except RubricError as exc:
            raise ShardError(str(exc)) from None
        if here != base_fingerprint(fingerprint):  # (the secret's tag, if any, was compared above)
            raise ShardError(
                f"{assignment_id} was graded in {where} with other hidden tests/rubric/release than this "
                "checkout's: merge with the checkout (image) that graded the shards, or re-grade them"
            )


def _registered(gb_url: str) -> list[tuple[str, str]]:
    """(assignment, notebook) pairs registered in a gradebook."""
    from nbgrader.api import Assignment

    with session(gb_url, write=False) as db:
        return sorted((a.name, nb.name) for a in db.query(Assignment) for nb in a.notebooks)
