"""Grade a whole class: ``SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb`` → OUT (an nbgrader
course directory with the gradebook, autograded copies, feedback pages, results JSON, grades.csv).

Submissions are graded in parallel (one sandboxed zygote per job); everything that writes the
gradebook or OUT happens here in the grader's main thread: what finished in the last half second is
committed as one batch (one gradebook transaction), so an interrupted batch re-runs to the same state.

A batch always finishes: every student folder found gets a row in ``grades.csv`` (an error row if it
cannot be graded or recorded), and however the batch ends (an exception, Ctrl-C, SIGTERM) its
sandboxes and their temporary folders are removed.
"""

from __future__ import annotations

import gc
import hashlib
import math
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from autograder.classroom.discovery import Job, discover
from autograder.classroom.export import write_grades_csv
from autograder.classroom.sharding import Shard, remove_manifest, write_manifest
from autograder.core.files import atomic_write_text
from autograder.core.layout import REPO
from autograder.core.numbers import score
from autograder.core.registry import lessons
from autograder.core.results import MISNAMED_NOTE, SubmissionResult
from autograder.core.rubric import RubricError
from autograder.core.safe_text import encodable, terminal_text
from autograder.core.timestamps import TimestampError, read_submission_time
from autograder.gradebook import coursedir, recording, structure
from autograder.gradebook.notes import notes_for
from autograder.grading.assignment import Assignment, load_assignment
from autograder.grading.engine import grade_notebook, new_result
from autograder.grading.scoring import zero_items
from autograder.grading.submission import shutdown_workers
from autograder.intake.course import (
    UTC,
    CourseError,
    apply_to_result,
    lms_late_marker,
    load_course,
    record_in_gradebook,
)
from autograder.reporting import feedback
from autograder.sandbox.isolation import resolve_isolation
from autograder.testing.seeding import grader_fingerprint


class Progress:
    """A one-line progress bar on a terminal, plain lines otherwise."""

    def __init__(self, total: int, stream=sys.stderr) -> None:
        self.total, self.done, self.stream = total, 0, stream
        self.graded = 0  # steps that graded something (not unchanged or ungradable ones, which take no time)
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.last_line = 0.0

    def rate_text(self) -> str:
        """`` · 2.3/s · ~4 s left`` once a rate means something: over graded submissions only, after a
        second; nothing before (the first steps, often unchanged ones, said "1/10 123.4/s")."""
        elapsed = time.monotonic() - self.start
        if self.graded < 2 or elapsed < 1.0:
            return ""
        rate = self.graded / elapsed
        left = (self.total - self.done) / rate
        return f" · {rate:.1f}/s" + (f" · ~{math.ceil(left)} s left" if self.done < self.total else "")

    def step(self, label: str, graded: bool = True) -> None:
        self.done += 1
        self.graded += graded
        width = 28
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        line = f"[{bar}] {self.done}/{self.total}{self.rate_text()}  {terminal_text(label, 40)}"
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done == self.total or time.monotonic() - self.last_line > 2 or self.done == 1:
            self.stream.write(line + "\n")
            self.last_line = time.monotonic()
        self.stream.flush()


def result_path(out: Path, student_id: str, assignment_id: str) -> Path:
    return out / "results" / student_id / f"{assignment_id}.json"


#: at most this many submissions per gradebook transaction (bounds how long formgrader waits for the lock)
COMMIT_BATCH = 256
#: results are committed at most this often (group commit: one transaction, one fsync, for all finished)
COMMIT_INTERVAL_S = 0.5


class Phases:
    """Wall-clock seconds per phase of a batch (``make bench`` prints their shares). Grading runs in
    worker threads, so its figure is thread-seconds; the others are the main thread's."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    def timed(self, phase: str, fn, *args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.add(phase, time.perf_counter() - start)


def default_jobs() -> int:
    """Sandboxes graded at once: one more than the cores. A grading thread alternates between its
    sandbox (running the student's code) and the grader's own Python (the hidden tests' checks, under
    one interpreter lock), so with one thread per core a core sits idle whenever a thread waits for the
    lock; one extra thread fills that gap. Compare with ``BENCH_JOBS=N make bench`` (one-off runs of
    its class of 300 on 2 cores: 2 threads 16.4 s, 3 threads 14.9 s, 4 threads 16.2 s)."""
    return (os.cpu_count() or 1) + 1


def grade_class(
    submissions: Path,
    out: Path,
    *,
    isolation: str = "bwrap",
    jobs: int | None = None,
    only: list[str] | None = None,
    force: bool = False,
    quiet: bool = False,
    shard: Shard | None = None,
    phases: Phases | None = None,
    course: Path | None = None,
    secret: bytes | None = None,
) -> list[SubmissionResult]:
    """Grade every submission (or, with ``shard``, the students of that shard: see ``autograder.classroom.shards``).
    ``course``: a course file with due dates and late policies (``autograder.intake.course``); it is kept as
    ``OUT/course.yaml``, which later runs use when none is given.

    ``isolation``: ``bwrap`` (the default: refuses to run if bubblewrap cannot), ``none`` (the fallback,
    NOT a sandbox, only when asked for) or ``auto`` (the demo and tests: bubblewrap if usable, else the
    fallback; every report says which). ``secret``: the course secret that seeds each student's random
    hidden cases (``autograder.testing.seeding``; None: the tests' fixed seeds)."""

    submissions, out = Path(submissions).resolve(), Path(out).resolve()
    if out == submissions or submissions in out.parents:
        raise SystemExit(
            "error: --out must not be inside the submissions directory (submissions are never modified)"
        )
    try:
        mode, isolation_text = resolve_isolation(isolation)
    except RuntimeError as exc:
        raise SystemExit(f"error: {exc}") from None
    # What is loaded by now (libraries, rubrics, hidden tests) lives as long as the batch: frozen, the
    # collector's full passes skip it (they took ~130 ms each, ten per 300 submissions, under the lock
    # every grading thread needs; measured once with gc.callbacks)
    gc.collect()
    gc.freeze()
    try:
        return _grade_class(
            submissions,
            out,
            mode,
            isolation_text,
            jobs=jobs,
            only=only,
            force=force,
            quiet=quiet,
            shard=shard,
            phases=phases or Phases(),
            course=course,
            secret=secret,
        )
    finally:
        shutdown_workers()  # every exit path: the sandboxes and their temporary folders go
        gc.unfreeze()


def _grade_class(
    submissions: Path,
    out: Path,
    mode: str,
    isolation_text: str,
    *,
    jobs: int | None,
    only: list[str] | None,
    force: bool,
    quiet: bool,
    shard: Shard | None,
    phases: Phases,
    course: Path | None,
    secret: bytes | None = None,
) -> list[SubmissionResult]:

    started = time.perf_counter()
    if not quiet:
        print(f"isolation: {isolation_text}", file=sys.stderr)
    work = discover(submissions, only)
    if shard is not None:
        work = [job for job in work if shard.holds(job.student_id)]
    coursedir.prepare_course_dir(out, REPO.root)
    remove_manifest(out)  # written when this run is complete: a run that dies leaves no stale manifest
    policies = _late_policies(out, course)
    assignments: dict[str, Assignment] = {}
    for job in work:
        if job.path is not None and job.assignment_id not in assignments:
            try:
                assignments[job.assignment_id] = load_assignment(lessons()[job.assignment_id].directory)
            except RubricError as exc:
                raise SystemExit(f"error: {exc}") from None
    for a in assignments.values():
        try:
            structure.ensure_assignment(coursedir.db_url_for(out), a.id, a.source)
        except structure.SourceChanged as exc:
            raise SystemExit(f"error: {exc}") from None

    results: dict[tuple[str, str], SubmissionResult] = {}
    progress = Progress(len(work), open(os.devnull, "w") if quiet else sys.stderr)  # noqa: SIM115
    todo, ready = [], []
    for job in work:
        if job.path is None:
            ready.append((job, _failed_row(job, assignments, isolation_text)))
        elif (
            force
            or (res := _cached(out, job, assignments[job.assignment_id], isolation_text, secret)) is None
        ):
            todo.append(job)
        else:
            ready.append((job, res))
    for job, res in ready:
        apply_late_policy(res, job, policies)
    phases.add("setup (discover, rubrics, cache check)", time.perf_counter() - started)
    for start in range(0, len(ready), COMMIT_BATCH):
        batch = ready[start : start + COMMIT_BATCH]
        recorded = commit_many(out, [(res, job.path) for job, res in batch], phases, durable=False)
        for (job, _), res in zip(batch, recorded, strict=True):
            results[(job.student_id, job.assignment_id)] = res
            progress.step(
                f"{job.student_id} (unchanged)" if job.path else f"{job.student_id}: {res.status}",
                graded=False,
            )

    n_jobs = max(1, jobs or default_jobs())
    pool = ThreadPoolExecutor(max_workers=n_jobs)
    futures = {
        pool.submit(_grade_one, assignments[j.assignment_id], j, mode, isolation_text, phases, secret): j
        for j in todo
    }
    pending, finished, last_commit = set(futures), [], time.monotonic()
    try:
        while pending or finished:
            waited = time.perf_counter()
            timeout = max(0.0, last_commit + COMMIT_INTERVAL_S - time.monotonic()) if finished else None
            done, pending = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
            phases.add("main thread waiting for graders", time.perf_counter() - waited)
            finished += [(futures[f], apply_late_policy(f.result(), futures[f], policies)) for f in done]
            due = time.monotonic() >= last_commit + COMMIT_INTERVAL_S or len(finished) >= COMMIT_BATCH
            if finished and (due or not pending):
                # group commit: what finished since the last commit goes into one gradebook transaction
                batch, finished = finished[:COMMIT_BATCH], finished[COMMIT_BATCH:]
                recorded = commit_many(out, [(res, job.path) for job, res in batch], phases, durable=False)
                last_commit = time.monotonic()
                for (job, _), res in zip(batch, recorded, strict=True):
                    results[(job.student_id, job.assignment_id)] = res
                    progress.step(f"{job.student_id} {score(res.total)}/{score(res.max_total)}")
    finally:  # also on an exception or an interrupt: no new submission starts, the running ones stop now
        for fut in futures:
            fut.cancel()
        phases.timed("stopping sandboxes", shutdown_workers)
        pool.shutdown(wait=True, cancel_futures=True)
    ordered = [results[k] for k in sorted(results)]
    if policies:
        phases.timed("gradebook", record_in_gradebook, out, policies, ordered)
    phases.timed("grades.csv", write_grades_csv, out, ordered)
    if shard is not None:
        write_manifest(out, shard, ordered)
    else:
        remove_manifest(out)  # a whole-class run: OUT is no longer one shard of a set
    phases.add("total (wall)", time.perf_counter() - started)
    return ordered


def _late_policies(out: Path, course: Path | None) -> dict:
    """The late policies for this run: ``course`` (copied to ``OUT/course.yaml``), else the copy kept there."""

    kept = out / "course.yaml"
    source = Path(course) if course is not None else (kept if kept.is_file() else None)
    if source is None:
        return {}
    try:
        policies = load_course(source)
    except CourseError as exc:
        raise SystemExit(f"error: {exc}") from None
    if course is not None and source.resolve() != kept.resolve():
        atomic_write_text(kept, source.read_text(encoding="utf-8"))
    return policies


def apply_late_policy(res: SubmissionResult, job: Job, policies: dict) -> SubmissionResult:
    """Set the submission time and late penalty of ``res`` from its folder's ``timestamp.txt``."""

    folder = job.path.parent if job.path is not None else None
    try:  # times without an offset are in the course's zone (course.yaml), never guessed as UTC
        when = read_submission_time(folder, getattr(policies, "zone", UTC)) if folder is not None else None
        problem = ""
    except TimestampError as exc:
        when, problem = None, str(exc)
        print(f"warning: {terminal_text(job.student_id, 64)}: {terminal_text(problem)}", file=sys.stderr)
    return apply_to_result(res, policies, when, folder is not None and lms_late_marker(folder), problem)


def _grade_one(
    assignment: Assignment,
    job: Job,
    mode: str,
    isolation_text: str,
    phases: Phases | None = None,
    secret: bytes | None = None,
) -> SubmissionResult:
    start = time.perf_counter()
    try:
        res = grade_notebook(assignment, job.path, job.student_id, mode, isolation_text, secret=secret)
        if job.note:
            res.messages.insert(0, job.note)
        return res
    except Exception as exc:  # noqa: BLE001 - one broken submission never stops the batch
        res = new_result(assignment, job.student_id, isolation_text, secret=secret)
        return _error_row(res, f"error: grading failed ({_describe(exc)})", assignment)
    finally:
        if phases is not None:
            phases.add("grading (sandbox + hidden tests, thread-seconds)", time.perf_counter() - start)


def commit_many(
    out: Path,
    batch: list[tuple[SubmissionResult, Path | None]],
    phases: Phases | None = None,
    durable: bool = True,
) -> list[SubmissionResult]:
    """A batch of graded submissions (each with its submitted notebook, or None when there is none): the
    gradebook first (ONE transaction, always durable), then each JSON record and feedback page. A kill in
    between leaves no JSON for those students, so a re-run grades and records them again (recording is
    idempotent). ``durable=False`` (what ``grade`` uses) skips the per-file fsync of the records, pages
    and formgrader copies: a re-run rebuilds any that a power cut damaged (a damaged record is simply
    regraded). ``shards.merge`` commits through here too.

    Returns the results as recorded, in order: if the batch's transaction fails, each student is
    recorded on its own, and one whose recording fails becomes an error row (zero points, never passed),
    so one student's record never stops the batch."""
    phases = phases or Phases()
    try:
        phases.timed("gradebook", recording.record_many, out, _to_gradebook(batch), durable=durable)
    except Exception as exc:  # noqa: BLE001 - find the student(s) it was about, one by one
        if len(batch) > 1:
            return [res for entry in batch for res in commit_many(out, [entry], phases, durable)]
        return [_record_failed(out, batch[0][0], exc, durable)]
    recorded = []
    notes = _review_notes(out, batch)  # the instructor's comments stay on the regraded pages
    for res, _path in batch:
        try:
            phases.timed(
                "results JSON", res.save, result_path(out, res.student_id, res.assignment_id), durable
            )
            mine = notes.get((res.assignment_id, res.student_id))
            phases.timed("feedback pages", feedback.write, out, res, durable, mine)
        except Exception as exc:  # noqa: BLE001
            res = _record_failed(out, res, exc, durable)
        recorded.append(res)
    return recorded


def _review_notes(out: Path, batch) -> dict:
    """The gradebook's instructor comments for the batch (:func:`review_feedback.notes_for`), or none if
    they cannot be read (the pages are regenerated by ``feedback`` / ``export`` anyway)."""

    try:
        return notes_for(out, [(res.assignment_id, res.student_id) for res, _ in batch])
    except Exception:  # noqa: BLE001 - comments are an addition to the page, never a reason to fail it
        return {}


def _to_gradebook(batch: list[tuple[SubmissionResult, Path | None]]) -> list[tuple[SubmissionResult, Path]]:
    return [
        (res, path) for res, path in batch if path is not None and not res.status.startswith("unreadable")
    ]


def _record_failed(out: Path, res: SubmissionResult, exc: Exception, durable: bool) -> SubmissionResult:
    """The error row of a student whose recording raised ``exc``, saved as far as possible; it reaches
    grades.csv either way."""
    failed = _error_row(res, f"error: recording the result failed ({_describe(exc)})")
    try:
        failed.save(result_path(out, failed.student_id, failed.assignment_id), durable)
        feedback.write(out, failed, durable)
    except Exception:  # noqa: BLE001, S110 - the row still reaches grades.csv
        pass
    return failed


def _describe(exc: BaseException) -> str:
    return encodable(f"{type(exc).__name__}: {str(exc)[:200]}")


def _error_row(res: SubmissionResult, status: str, assignment: Assignment | None = None) -> SubmissionResult:
    """``res`` as an ungraded row: zero points, never passed, ``status`` says why."""
    res.status, res.graded = status, False
    if assignment is not None:
        res.items = zero_items(assignment, status)
    else:
        for it in res.items:
            it.score, it.confirmed, it.suggestion = 0.0, None, 0.0 if it.kind == "written" else None
            it.tests, it.evidence, it.message = [], [], status
    return res


def commit(out: Path, res: SubmissionResult, path: Path | None) -> None:
    """One submission: :func:`commit_many` with one entry."""
    commit_many(out, [(res, path)])


def _cached(
    out: Path, job: Job, assignment: Assignment, isolation_text: str, secret: bytes | None = None
) -> SubmissionResult | None:

    path = result_path(out, job.student_id, job.assignment_id)
    try:
        if not path.is_file():
            return None
        old = SubmissionResult.load(path)
        sha = hashlib.sha256(job.path.read_bytes()).hexdigest()
    except Exception:  # noqa: BLE001 - a damaged record (or an unreadable file) is simply regraded
        return None
    grader = grader_fingerprint(assignment.fingerprint, secret)
    if (old.submission_sha256, old.isolation, old.grader) != (sha, isolation_text, grader):
        return None
    if [m for m in old.messages if m.startswith(MISNAMED_NOTE)] != ([job.note] if job.note else []):
        return None  # renamed since (or another stray name): the note must say what was graded
    return old


def _failed_row(job: Job, assignments: dict, isolation_text: str) -> SubmissionResult:
    a = assignments.get(job.assignment_id)
    return new_result(
        a,
        job.student_id,
        isolation_text,
        assignment_id=job.assignment_id,
        status=job.problem,
        graded=False,
        why=job.problem,
    )
