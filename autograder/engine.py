"""The grading engine: one rubric file and one folder of hidden tests per assignment, nothing
lesson-specific here.

Flow for one submission: read the notebook (``notebook.extract``) → fork a sandboxed child that runs
its code (``sandbox.Worker``) → run every hidden test in this process against plain data the child
sends back → score each rubric item as the weighted share of its tests passed → suggest scores for
written answers (``written.suggest``, static review).
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .notebook import Extracted, SourceInfo, UnreadableNotebook, extract
from .results import EXECUTED, STATIC_REVIEW, ItemResult, SubmissionResult, TestOutcome
from .sandbox import Limits, Worker
from .testing import CallTimeout, Result, WorkerCrashed, recording_parts

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER_DIR = ROOT / "autograder"
LESSONS_DIR = ROOT / "lessons"
SOLUTIONS_DIR = ROOT / "solutions"
ENGINE_VERSION = "1"
LOAD_FAILED = "your code could not be loaded: "


class RubricError(Exception):
    """The rubric or the hidden tests of an assignment are inconsistent (an instructor's error)."""


@dataclass
class HiddenTest:
    name: str
    fn: object
    item: str
    weight: float
    edge: bool
    doc: str = ""
    parts: dict[str, float] | None = None


@dataclass
class Assignment:
    """Everything needed to grade one assignment, loaded once per batch."""

    id: str
    directory: Path
    rubric: dict
    tests: list[HiddenTest]
    release: Path
    source: Path
    cells: SourceInfo
    limits: Limits
    fingerprint: str = ""

    @property
    def notebook(self) -> str:
        return self.rubric["notebook"]

    @property
    def items(self) -> list[dict]:
        return self.rubric["items"]

    @property
    def written_ids(self) -> list[str]:
        return [it["id"] for it in self.items if it["kind"] == "written"]

    @property
    def pass_line(self) -> float:
        return float(self.rubric.get("pass_line", 0))

    @classmethod
    def load(cls, directory: Path, release: Path | None = None, source: Path | None = None) -> Assignment:
        directory = Path(directory).resolve()
        rubric_path = directory / "rubric.yaml"
        if not rubric_path.is_file():
            raise RubricError(f"{directory} has no rubric.yaml")
        rubric = yaml.safe_load(rubric_path.read_text(encoding="utf-8"))
        _check_rubric(rubric, rubric_path)
        assignment_id = rubric["assignment"]
        nb_name = rubric["notebook"] + ".ipynb"
        release = release or LESSONS_DIR / assignment_id / nb_name
        source = source or SOLUTIONS_DIR / assignment_id / nb_name
        if not release.is_file():
            raise RubricError(f"release notebook {release} is missing (run `make release`)")
        tests = _load_tests(directory, rubric)
        digest = hashlib.sha256(ENGINE_VERSION.encode())
        for path in sorted(directory.glob("*.py")) + [rubric_path, release]:
            digest.update(path.read_bytes())
        return cls(
            id=assignment_id,
            directory=directory,
            rubric=rubric,
            tests=tests,
            release=release,
            source=source,
            cells=SourceInfo.from_notebook(release),
            limits=Limits.from_rubric(rubric.get("limits")),
            fingerprint=digest.hexdigest()[:16],
        )


def _check_rubric(rubric: dict, path: Path) -> None:
    for key in ("assignment", "notebook", "items"):
        if key not in rubric:
            raise RubricError(f"{path}: missing '{key}'")
    ids = set()
    for it in rubric["items"]:
        for key in ("id", "kind", "points"):
            if key not in it:
                raise RubricError(f"{path}: an item lacks '{key}'")
        if it["kind"] not in ("code", "written"):
            raise RubricError(f"{path}: item {it['id']}: kind must be code or written")
        if not isinstance(it.get("extra_credit", False), bool):
            raise RubricError(f"{path}: item {it['id']}: extra_credit must be true or false")
        if it.get("extra_credit") and it["kind"] != "code":
            raise RubricError(
                f"{path}: item {it['id']}: only code items can be extra credit "
                "(written answers are confirmed in formgrader against their points)"
            )
        if it["id"] in ids:
            raise RubricError(f"{path}: duplicate item id {it['id']}")
        ids.add(it["id"])
        if it["kind"] == "written":
            from .written import validate_item

            try:
                validate_item(it)
            except ValueError as exc:
                raise RubricError(f"{path}: {exc}") from None
            total = sum(float(c.get("points", 0)) for c in it.get("criteria", []))
            if abs(total - float(it["points"])) > 1e-9:
                raise RubricError(
                    f"{path}: item {it['id']}: criteria points {total} != item points {it['points']}"
                )
    total = sum(float(it["points"]) for it in rubric["items"] if not it.get("extra_credit"))
    if float(rubric.get("pass_line", 0)) > total:
        raise RubricError(f"{path}: pass_line above the total of {total} (extra credit not counted)")


def _load_tests(directory: Path, rubric: dict) -> list[HiddenTest]:
    code_items = {it["id"] for it in rubric["items"] if it["kind"] == "code"}
    tests: list[HiddenTest] = []
    safe = re.sub(r"\W", "_", directory.name)
    for path in sorted(directory.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"hidden_{safe}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found = [
            (name, fn)
            for name, fn in vars(module).items()
            if name.startswith("test_") and callable(fn) and hasattr(fn, "rubric_item")
        ]
        found.sort(key=lambda nf: inspect.getsourcelines(nf[1])[1])
        for name, fn in found:
            if fn.rubric_item not in code_items:
                raise RubricError(
                    f"{path.name}::{name} names item {fn.rubric_item!r}, not a code item of the rubric"
                )
            doc = (inspect.getdoc(fn) or "").splitlines()[0] if inspect.getdoc(fn) else ""
            tests.append(
                HiddenTest(
                    name,
                    fn,
                    fn.rubric_item,
                    fn.rubric_weight,
                    fn.rubric_edge,
                    doc,
                    getattr(fn, "rubric_parts", None),
                )
            )
    for item_id in code_items:
        own = [t for t in tests if t.item == item_id]
        if not own:
            raise RubricError(f"{directory.name}: code item {item_id!r} has no hidden tests")
        total = sum(t.weight for t in own)
        edge = sum(t.weight for t in own if t.edge)
        if edge > total / 4 + 1e-9:
            raise RubricError(
                f"{directory.name}: item {item_id!r}: edge/validation weight {edge} of {total} "
                "exceeds the quarter the lesson promises"
            )
    return tests


# -- the `sub` object hidden tests receive -----------------------------------------------------------
@dataclass
class Submission:
    """A handle on one submission's code running in the sandbox. Calls return plain data."""

    worker: Worker
    cells: list[tuple[int, str]]
    limits: Limits
    deadline: float
    ready: dict | None = None
    load_error: Exception | None = None
    spawns: int = 0
    cell_errors: list = field(default_factory=list)
    active: Iterator[Result] | None = None  # the worker's pipelined calls now being read

    def _ensure(self) -> None:
        if self.ready is not None:
            return
        if self.load_error is not None:  # the notebook's code itself never finished loading: fail fast
            raise self.load_error
        self._check_deadline()
        self.spawns += 1
        try:
            self.ready = self.worker.spawn(self.cells)
        except (CallTimeout, WorkerCrashed) as exc:
            self.load_error = exc
            raise
        if self.spawns == 1:  # only the first load: it runs before any hidden input was sent (a later
            # child could read what an earlier one left in /tmp and put it into an error message)
            self.cell_errors = self.ready.get("cell_errors", [])

    def _check_deadline(self) -> None:
        if time.monotonic() > self.deadline:
            raise CallTimeout(f"这份提交的总评分时间（{self.limits.submission_timeout:g} 秒）已用完")

    def call(self, target: str, *args, **kwargs) -> Result:
        return next(self._calls(target, [(args, kwargs)]))

    def calls(self, target: str, arg_tuples) -> Iterator[Result]:
        """``call(target, *args)`` for each ``args`` in ``arg_tuples``, pipelined (see
        ``Worker.call_many``): yields each result in order. Same limits and failures as a loop of
        ``call``; a test may stop reading early (its next call gets a fresh child)."""
        return self._calls(target, [(tuple(args), {}) for args in arg_tuples])

    def calls_with(self, target: str, cases) -> Iterator[Result]:
        """:meth:`calls` with keyword arguments: each case is ``(args, kwargs)``."""
        return self._calls(target, [(tuple(args), dict(kwargs)) for args, kwargs in cases])

    def _calls(self, target: str, calls: list[tuple[tuple, dict]]) -> Iterator[Result]:
        self._settle()
        self._ensure()
        self._check_deadline()

        def timeout() -> float:
            self._check_deadline()
            return min(self.limits.call_timeout, max(0.05, self.deadline - time.monotonic()))

        mine = self.active = self.worker.call_many(target, calls, timeout)
        try:
            yield from mine
        except (CallTimeout, WorkerCrashed):
            self.ready = None  # the child is gone; the next call starts a fresh one
            raise
        finally:
            if self.active is mine:  # (an abandoned generator collected later must not touch a newer one)
                self._settle()

    def _settle(self) -> None:
        """Finish the last pipelined calls: a test that stopped reading them leaves answers owed, so
        that child is reaped (``call_many`` does it on close) and the next call starts a fresh one."""
        if self.active is not None:
            active, self.active = self.active, None
            active.close()
        if self.ready is not None and self.worker.chan is None:
            self.ready = None

    def close(self) -> dict:
        self._settle()
        report = self.worker.reap() if self.ready is not None or self.spawns else {}
        self.ready = None
        return report


def run_tests(assignment: Assignment, sub: Submission) -> list[TestOutcome]:
    outcomes = []
    for test in assignment.tests:
        passed, message, record = False, "", None
        try:
            if test.parts:
                with recording_parts(test.parts) as record:
                    test.fn(sub)
            else:
                test.fn(sub)
            passed = True
        except (CallTimeout, WorkerCrashed) as exc:
            message = str(exc)
        except AssertionError as exc:
            message = str(exc.args[0]) if exc.args else "结果与预期不符"
        except Exception as exc:  # noqa: BLE001 - the student's value had an unexpected shape
            message = f"返回值的结构或类型不符合约定（检查时出现 {type(exc).__name__}）"
        outcome = TestOutcome(test.name, test.item, test.weight, passed, message[:500], test.edge)
        if record is not None:
            outcome.earned = round(record.earned(), 6) if passed else 0.0
            outcome.parts = [
                {
                    "name": name,
                    "weight": weight,
                    "passed": passed and name in record.checked and name not in record.failed,
                    "message": record.failed.get(name, _unchecked(name, record, passed, message))[:500],
                }
                for name, weight in test.parts.items()
            ]
            outcome.passed = outcome.earned == 1.0
            if passed and not outcome.passed:
                outcome.message = next(p["message"] for p in outcome.parts if not p["passed"])
        outcomes.append(outcome)
    return outcomes


def _unchecked(name: str, record, passed: bool, message: str) -> str:
    if not passed:
        return message
    return "" if name in record.checked else "这一部分没有被检查到（测试提前结束）"


def score_items(
    assignment: Assignment,
    outcomes: list[TestOutcome],
    answers: dict[str, str],
    confirmed: dict[str, float | None] | None = None,
) -> list[ItemResult]:
    confirmed = confirmed or {}
    items = []
    for spec in assignment.items:
        points = float(spec["points"])
        if spec["kind"] == "code":
            own = [o for o in outcomes if o.item == spec["id"]]
            total = sum(o.weight for o in own)
            got = sum(o.weight * o.credit for o in own)
            score = round(points * got / total, 4) if total else 0.0
            items.append(
                ItemResult(
                    spec["id"],
                    "code",
                    points,
                    score,
                    EXECUTED,
                    spec.get("description", ""),
                    tests=own,
                    extra_credit=bool(spec.get("extra_credit", False)),
                )
            )
        else:
            from .written import suggest

            s = suggest(answers.get(spec["id"], ""), spec)
            conf = confirmed.get(spec["id"])
            items.append(
                ItemResult(
                    spec["id"],
                    "written",
                    points,
                    conf if conf is not None else float(s.score),
                    STATIC_REVIEW,
                    spec.get("description", ""),
                    evidence=list(s.evidence),
                    suggestion=float(s.score),
                    confirmed=conf,
                    message=s.comment,
                )
            )
    return items


# -- grading one piece of code / one notebook ---------------------------------------------------------
_local = threading.local()
_all_workers: list[Worker] = []
_workers_lock = threading.Lock()


def _worker_for(limits: Limits, isolation: str) -> Worker:
    """One zygote per thread and isolation mode, reused across submissions."""
    key = (isolation, limits)
    pool = getattr(_local, "workers", None)
    if pool is None:
        pool = _local.workers = {}
    worker = pool.get(key)
    if worker is None or worker.proc is None:  # new thread, or stopped by shutdown_workers()
        worker = pool[key] = Worker(limits, mode=isolation)
        worker.start()
        with _workers_lock:
            _all_workers.append(worker)
    return worker


def shutdown_workers() -> None:
    """Stop every sandbox this process started (all threads)."""
    with _workers_lock:
        for worker in _all_workers:
            worker.stop(close=True)  # a thread still grading gets WorkerCrashed instead of a new sandbox
        _all_workers.clear()


def grade_extracted(
    assignment: Assignment,
    extracted: Extracted,
    isolation: str,
    confirmed: dict | None = None,
    *,
    student_id: str = "",
    secret: bytes | None = None,
) -> tuple[list[ItemResult], list[str], dict]:
    """Run the hidden tests on ``extracted``'s code; with a course ``secret``, their random cases are
    ``student_id``'s own (``autograder.seeding``)."""
    from .seeding import for_student

    worker = _worker_for(assignment.limits, isolation)
    sub = Submission(
        worker,
        extracted.code_cells,
        assignment.limits,
        deadline=time.monotonic() + assignment.limits.submission_timeout,
    )
    try:
        with for_student(secret, student_id):
            outcomes = run_tests(assignment, sub)
    finally:
        report = sub.close()
    notes = []
    for err in sub.cell_errors:
        notes.append(f"code cell {err['cell']} raised: {err['error']}")
    if sub.load_error:
        notes.append(f"{LOAD_FAILED}{sub.load_error}")
    if report.get("output_bytes", 0) > 0:
        notes.append("your code printed output (ignored for grading)")  # no byte count: it is a channel
    return score_items(assignment, outcomes, extracted.answers, confirmed), notes, report


def grade_code(assignment_dir: Path, code: str, isolation: str | None = None) -> dict[str, float]:
    """Grade one piece of exercise code with the assignment's hidden tests (code items only)."""
    from .sandbox import resolve_isolation

    assignment = load_assignment(Path(assignment_dir))
    mode = isolation or resolve_isolation("auto")[0]
    items, _, _ = grade_extracted(assignment, Extracted(code_cells=[(0, code)]), mode)
    return {it.id: it.score for it in items if it.kind == "code"}


_assignments: dict[Path, Assignment] = {}
_assign_lock = threading.Lock()


def load_assignment(directory: Path) -> Assignment:
    directory = Path(directory).resolve()
    with _assign_lock:
        if directory not in _assignments:
            _assignments[directory] = Assignment.load(directory)
        return _assignments[directory]


def grade_notebook(
    assignment: Assignment,
    path: Path,
    student_id: str,
    isolation: str,
    isolation_text: str,
    confirmed: dict | None = None,
    secret: bytes | None = None,
) -> SubmissionResult:
    from .seeding import grader_fingerprint

    started = time.monotonic()
    result = SubmissionResult(
        student_id,
        assignment.id,
        assignment.notebook,
        isolation=isolation_text,
        pass_line=assignment.pass_line,
        grader=grader_fingerprint(assignment.fingerprint, secret),
    )
    try:
        extracted = extract(path, assignment.cells, assignment.written_ids)
    except UnreadableNotebook as exc:
        result.status, result.graded = str(exc), False
        result.items = zero_items(assignment, str(exc))
        result.duration_s = round(time.monotonic() - started, 4)
        return result
    result.submission_sha256 = extracted.sha256
    items, notes, _ = grade_extracted(
        assignment, extracted, isolation, confirmed, student_id=student_id, secret=secret
    )
    result.items = items
    result.messages = extracted.problems + notes
    tampered = [p for p in extracted.problems if p.startswith("tampered")]
    if tampered:
        result.status = "tampered: " + "; ".join(p.split(": ", 1)[1] for p in tampered)[:300]
    elif any(n.startswith(LOAD_FAILED) for n in notes):  # graded (zero code points), but say why
        result.status = (
            "code did not load: " + next(n for n in notes if n.startswith(LOAD_FAILED))[len(LOAD_FAILED) :]
        )
    result.duration_s = round(time.monotonic() - started, 4)
    return result


def zero_items(assignment: Assignment, why: str) -> list[ItemResult]:
    return [
        ItemResult(
            spec["id"],
            spec["kind"],
            float(spec["points"]),
            0.0,
            EXECUTED if spec["kind"] == "code" else STATIC_REVIEW,
            spec.get("description", ""),
            suggestion=0.0 if spec["kind"] == "written" else None,
            message=why,
            extra_credit=bool(spec.get("extra_credit", False)),
        )
        for spec in assignment.items
    ]
