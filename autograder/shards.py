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

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .engine import ROOT
from .results import SubmissionResult, atomic_write_text

MANIFEST = "shard.json"


class ShardError(ValueError):
    """A bad --shard value or a set of shard outputs that cannot be merged."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, student_id: str) -> bool:
        return shard_of(student_id, self.count) == self.index


def parse_shard(text: str) -> Shard:
    """``"K/N"`` with 1 <= K <= N."""
    try:
        k, n = (int(x) for x in str(text).split("/"))
    except ValueError:
        raise ShardError(f"--shard must be K/N (e.g. 2/8), not {text!r}") from None
    if n < 1 or not 1 <= k <= n:
        raise ShardError(f"--shard {text}: need 1 <= K <= N")
    return Shard(k, n)


def shard_of(student_id: str, count: int) -> int:
    """The shard (1..count) a student belongs to; stable across machines, runs and class changes."""
    digest = hashlib.sha256(student_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def write_manifest(out: Path, shard: Shard, results: list[SubmissionResult]) -> Path:
    rows = sorted([r.student_id, r.assignment_id] for r in results)
    graders = {r.assignment_id: r.grader for r in results if r.grader}
    data = {"shard": shard.index, "of": shard.count, "rows": rows, "graders": dict(sorted(graders.items()))}
    path = Path(out) / MANIFEST
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    return path


def remove_manifest(out: Path) -> None:
    (Path(out) / MANIFEST).unlink(missing_ok=True)


def read_manifest(out: Path) -> dict | None:
    path = Path(out) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        int(data["shard"]), int(data["of"]), list(data["rows"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ShardError(f"{path} is damaged ({exc}); re-run that shard") from None
    return data


# ---------------------------------------------------------------------------------------------------
# merge
# ---------------------------------------------------------------------------------------------------


def _shard_results(out: Path, manifest: dict | None) -> list[SubmissionResult]:
    """The results a shard output holds: the rows its manifest lists (a re-used OUT may hold stale
    records of other students), or every record when the directory was graded without --shard."""
    from .batch import result_path

    if manifest is None:
        return [SubmissionResult.load(p) for p in sorted((out / "results").glob("*/*.json"))]
    results = []
    for student, assignment in manifest["rows"]:
        path = result_path(out, student, assignment)
        if not path.is_file():
            raise ShardError(f"{out}: {MANIFEST} lists {student}/{assignment} but {path} is missing")
        results.append(SubmissionResult.load(path))
    return results


def check_complete(manifests: dict[Path, dict]) -> None:
    """Every K of one N exactly once."""
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
        raise ShardError(
            f"shards {', '.join(f'{k}/{n}' for k in missing)} are missing: their students would be "
            "lost (grade them, then merge all N outputs)"
        )


def merge(shard_dirs: list[Path], out: Path, quiet: bool = False) -> list[SubmissionResult]:
    """Merge shard outputs into the course directory ``out``; returns the merged results."""
    from . import gradebook
    from .batch import COMMIT_BATCH, Progress, commit_many
    from .export import write_grades_csv

    shard_dirs = [Path(d).resolve() for d in shard_dirs]
    out = Path(out).resolve()
    for d in shard_dirs:
        if not (d / gradebook.CONFIG_NAME).is_file():
            raise ShardError(f"{d} is not a grading output (no {gradebook.CONFIG_NAME})")
        if d == out:
            raise ShardError(f"--out {out} is one of the shard outputs; merge into a new directory")
    twice = sorted({str(d) for d in shard_dirs if shard_dirs.count(d) > 1})
    if twice:
        raise ShardError(f"shard output given twice: {', '.join(twice)}")
    manifests = {d: m for d in shard_dirs if (m := read_manifest(d)) is not None}
    check_complete(manifests)

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

    gradebook.prepare_course_dir(out, ROOT)  # as `grade` does: this checkout's solutions/ is the source
    url = gradebook.db_url_for(out)
    # assignments the shards registered, even those without a gradeable submission (each once)
    registered = sorted({pair for d in shard_dirs for pair in _registered(gradebook.db_url_for(d))})
    for assignment_id, notebook_id in registered:
        source_nb = gradebook.source_directory(out) / assignment_id / f"{notebook_id}.ipynb"
        gradebook.ensure_assignment(url, assignment_id, source_nb)

    progress = Progress(len(todo), open(os.devnull, "w") if quiet else sys.stderr)  # noqa: SIM115
    merged = []
    for start in range(0, len(todo), COMMIT_BATCH):  # one gradebook transaction per batch
        batch = []
        for res, d in todo[start : start + COMMIT_BATCH]:
            copy = (
                d
                / gradebook.SUBMITTED
                / res.student_id
                / res.assignment_id
                / f"{gradebook.notebook_id_of(res.notebook)}.ipynb"
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
    """The shards' course file (due dates, late policy: ``autograder.course``) kept in ``out`` and its
    fields written to the merged gradebook; the results already carry each penalty. Shards graded with
    different course files are refused."""
    from .course import load_course, record_in_gradebook
    from .results import atomic_write_text

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
    from .batch import known_assignments
    from .engine import RubricError, load_assignment
    from .seeding import base_fingerprint

    known = known_assignments()
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

    from .gradebook import session

    with session(gb_url, write=False) as db:
        return sorted((a.name, nb.name) for a in db.query(Assignment) for nb in a.notebooks)
