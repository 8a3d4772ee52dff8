"""Record grading results in nbgrader's SQLite gradebook, so instructors review written answers in formgrader.

The grading output directory ``OUT`` is an nbgrader course directory (``nbgrader_config.py``,
``gradebook.db``, ``autograded/``, ``feedback/``). We write nbgrader's own tables through its ORM models
(``nbgrader.api``), so formgrader, ``nbgrader export`` and ``nbgrader generate_feedback`` read our rows as
if ``nbgrader autograde`` had written them.

How a result lands in the gradebook (one submission = one SQLite transaction, ``BEGIN IMMEDIATE``):

* code items (``grade: true, solution: false`` check cells): ``auto_score`` = the hidden-test score,
  ``needs_manual_grade`` False, and a ``Comment`` row on the check cell whose ``auto_comment`` lists the
  hidden tests (names and messages; hidden inputs never appear in either).
* written items (markdown ``grade: true, solution: true`` answer cells): ``auto_score`` stays None, so the
  cell needs manual grading and nbgrader's totals count only what the instructor confirmed. The
  suggestion text (``ItemResult.message``) goes into the answer cell's comment: ``auto_comment`` always
  holds the latest suggestion (formgrader shows it as the comment box's placeholder and nbgrader's
  ``Comment.comment`` falls back to it), and ``manual_comment`` is pre-filled with the same text so it is
  the editable content of formgrader's comment box.

Re-runs never undo the instructor's work: ``manual_score`` and ``extra_credit`` are never written; a
``manual_comment`` is only refreshed while it still equals the suggestion we wrote last time (kept in
``auto_comment``) and the item is unconfirmed (or its answer changed); ``needs_manual_grade`` of a
confirmed written item is only
set again when the student's answer text changed since the last recording (nbgrader's ``--force``
resets it unconditionally; we do not).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .results import EXECUTED, ItemResult, SubmissionResult, atomic_write_text

COURSE_ID = "pp-course"
DB_NAME = "gradebook.db"
CONFIG_NAME = "nbgrader_config.py"
#: sub-directories of OUT, as nbgrader's CourseDirectory names them
SUBMITTED, AUTOGRADED, FEEDBACK, RELEASE = "submitted", "autograded", "feedback", "release"
SQLITE_BUSY_TIMEOUT_S = 30.0

# ---------------------------------------------------------------------------------------------------
# course directory
# ---------------------------------------------------------------------------------------------------


def db_url_for(out_dir: Path | str) -> str:
    """The SQLAlchemy URL of OUT's gradebook (absolute, so it works from any working directory)."""
    return "sqlite:///" + str(Path(out_dir).resolve() / DB_NAME)


def _solutions_dir(source_root: Path | str) -> Path:
    """``source_root`` is the source directory itself (``<assignment>/<notebook>.ipynb`` below it) or the
    repository root holding ``solutions/``."""
    root = Path(source_root).resolve()
    if (root / "solutions").is_dir() and (root / CONFIG_NAME).is_file():
        return root / "solutions"
    return root


def prepare_course_dir(out_dir: Path | str, source_root: Path | str) -> Path:
    """Make OUT an nbgrader course directory: ``OUT/nbgrader_config.py`` and the folders. Returns OUT.

    The config is rewritten only when its content changes (an open formgrader keeps working)."""
    out = Path(out_dir).resolve()
    source = _solutions_dir(source_root)
    for sub in (SUBMITTED, AUTOGRADED, FEEDBACK, "results"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    text = (
        '"""nbgrader course directory of a grading run (written by autograder.gradebook; do not edit)."""\n\n'
        "c = get_config()  # noqa: F821  (injected by traitlets)\n\n"
        f"c.CourseDirectory.root = {str(out)!r}\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.CourseDirectory.db_url = {db_url_for(out)!r}\n"
        f"c.CourseDirectory.source_directory = {str(source)!r}\n"
        f"c.CourseDirectory.release_directory = {RELEASE!r}\n"
        f"c.CourseDirectory.submitted_directory = {SUBMITTED!r}\n"
        f"c.CourseDirectory.autograded_directory = {AUTOGRADED!r}\n"
        f"c.CourseDirectory.feedback_directory = {FEEDBACK!r}\n"
    )
    cfg = out / CONFIG_NAME
    if not cfg.is_file() or cfg.read_text(encoding="utf-8") != text:
        atomic_write_text(cfg, text)
    return out


def source_directory(out_dir: Path | str) -> Path:
    """The source directory recorded in OUT's nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader(CONFIG_NAME, path=str(Path(out_dir).resolve())).load_config()
    return Path(cfg.CourseDirectory.source_directory)


# ---------------------------------------------------------------------------------------------------
# database sessions: one SQLite transaction, taken with BEGIN IMMEDIATE
# ---------------------------------------------------------------------------------------------------

_initialised: set[str] = set()
_engines: dict = {}  # (url, write) -> Engine, kept for the process's life (its statement cache)
os.register_at_fork(after_in_child=_engines.clear)  # never share pooled SQLite connections across fork


def alembic_head() -> str:
    """nbgrader's current alembic revision, read in-process (``nbgrader.api.get_alembic_version`` shells
    out to the ``alembic`` command, which costs seconds per Gradebook on a fresh database)."""
    import nbgrader
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(cfg).get_current_head()


def _init_db(gb_url: str) -> None:
    """What ``Gradebook(gb_url, COURSE_ID)`` does on a new database (tables, alembic version, course row),
    in one transaction, once per database file and process."""
    path = gb_url.removeprefix("sqlite:///")
    if gb_url in _initialised and os.path.exists(path):
        return
    from nbgrader.api import Base, Course
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(gb_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
    try:
        with engine.begin() as conn:
            fresh = len(inspect(conn).get_table_names()) == 0
            Base.metadata.create_all(bind=conn)
            if fresh:
                conn.execute(
                    text("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL)")
                )
                conn.execute(
                    text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": alembic_head()}
                )
            if (
                conn.execute(Course.__table__.select().where(Course.__table__.c.id == COURSE_ID)).first()
                is None
            ):
                conn.execute(Course.__table__.insert().values(id=COURSE_ID))
    finally:
        engine.dispose()
    _initialised.add(gb_url)


@contextmanager
def session(gb_url: str, write: bool = True) -> Iterator:
    """A SQLAlchemy session over the gradebook whose whole life is ONE SQLite transaction.

    ``write=True`` starts it with ``BEGIN IMMEDIATE``: the write lock is taken before the first read, so a
    formgrader save cannot slip in between our read of a manual comment and our write. Committed on normal
    exit, rolled back on an exception; a process killed inside it leaves the previous state (SQLite's
    journal is rolled back by the next connection)."""
    from sqlalchemy import create_engine, event
    from sqlalchemy.orm import Session

    _init_db(gb_url)
    engine = _engines.get((gb_url, write))
    if engine is None:  # one engine per database and mode: SQLAlchemy's statement cache lives in it
        engine = create_engine(gb_url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

        @event.listens_for(engine, "connect")
        def _no_driver_transactions(dbapi_conn, _record):  # let us emit BEGIN ourselves
            dbapi_conn.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin(conn):
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        _engines[(gb_url, write)] = engine

    db = Session(engine, autoflush=True, expire_on_commit=False)
    try:
        yield db
        if write:
            _before_commit()
            db.commit()
        else:
            db.rollback()
    except BaseException:
        db.rollback()
        raise
    finally:
        db.close()


def _before_commit() -> None:
    """Test hook: called inside the transaction, just before COMMIT."""


# ---------------------------------------------------------------------------------------------------
# assignment structure (what SaveCells stores during `nbgrader generate_assignment`)
# ---------------------------------------------------------------------------------------------------


def notebook_id_of(name: str) -> str:
    return Path(name).name.removesuffix(".ipynb")


def _release_cells(source_notebook_path: Path):
    """The source notebook as generate_assignment hands it to SaveCells: locked, solutions cleared,
    outputs cleared, metadata checked, checksums computed (nbgrader's own preprocessors, in memory)."""
    import nbformat
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        ClearOutput,
        ClearSolutions,
        ComputeChecksums,
        LockCells,
    )

    nb = nbformat.read(str(source_notebook_path), as_version=nbformat.NO_CONVERT)
    resources: dict = {}
    for pp in (LockCells(), ClearSolutions(), ClearOutput(), CheckCellMetadata(), ComputeChecksums()):
        nb, resources = pp.preprocess(nb, resources)
    return nb


def ensure_assignment(gb_url: str, assignment_id: str, source_notebook_path: Path | str) -> None:
    """Create or update the assignment, its notebook and its grade/solution/task/source cells from the
    source notebook's nbgrader metadata, as ``nbgrader generate_assignment`` (SaveCells) would, in one
    transaction. Idempotent. Like SaveCells, refuses to add or remove cells once submissions exist."""
    from nbgrader import utils
    from nbgrader.api import (
        Assignment,
        GradeCell,
        Notebook,
        SolutionCell,
        SourceCell,
        SubmittedNotebook,
        TaskCell,
    )

    source_notebook_path = Path(source_notebook_path)
    notebook_id = notebook_id_of(source_notebook_path.name)
    nb = _release_cells(source_notebook_path)

    grade, solution, task, source = {}, {}, {}, {}
    for cell in nb.cells:
        if "nbgrader" not in cell.metadata:
            continue
        gid = cell.metadata.nbgrader.get("grade_id")
        if utils.is_grade(cell):
            grade[gid] = {"max_score": float(cell.metadata.nbgrader["points"]), "cell_type": cell.cell_type}
        if utils.is_solution(cell):
            solution[gid] = {}
        if utils.is_task(cell):
            task[gid] = {"max_score": float(cell.metadata.nbgrader["points"]), "cell_type": cell.cell_type}
        if utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell) or utils.is_task(cell):
            source[gid] = {
                "cell_type": cell.cell_type,
                "locked": utils.is_locked(cell),
                "source": cell.source,
                "checksum": cell.metadata.nbgrader.get("checksum"),
            }
    kernelspec = json.dumps(nb.metadata.get("kernelspec", {}))

    with session(gb_url) as db:
        assignment = db.query(Assignment).filter_by(name=assignment_id).one_or_none()
        if assignment is None:
            assignment = Assignment(name=assignment_id, course_id=COURSE_ID)
            db.add(assignment)
            db.flush()
        notebook = db.query(Notebook).filter_by(name=notebook_id, assignment_id=assignment.id).one_or_none()
        if notebook is None:
            notebook = Notebook(name=notebook_id, assignment=assignment)
            db.add(notebook)
        notebook.kernelspec = kernelspec
        db.flush()
        has_submissions = db.query(SubmittedNotebook).filter_by(notebook_id=notebook.id).count() > 0

        for model, wanted in (
            (GradeCell, grade),
            (SolutionCell, solution),
            (TaskCell, task),
            (SourceCell, source),
        ):
            existing = {c.name: c for c in db.query(model).filter_by(notebook_id=notebook.id)}
            if has_submissions and set(existing) != set(wanted):
                raise RuntimeError(
                    f"cannot add or remove cells of notebook {notebook_id!r} of {assignment_id!r}: it has "
                    f"submissions ({model.__name__}: gradebook {sorted(existing)}, source {sorted(wanted)})"
                )
            for name in set(existing) - set(wanted):
                db.delete(existing[name])
            for name, info in wanted.items():
                row = existing.get(name)
                if row is None:
                    row = model(name=name, notebook=notebook)
                    db.add(row)
                for key, value in info.items():
                    if getattr(row, key) != value:
                        setattr(row, key, value)


# ---------------------------------------------------------------------------------------------------
# recording one submission
# ---------------------------------------------------------------------------------------------------


def code_comment(item: ItemResult) -> str:
    """The auto comment of a code item: score and each hidden test by name and message."""
    tests = item.tests
    passed = sum(1 for t in tests if t.passed)
    lines = [
        f"Hidden tests ({item.mode or EXECUTED}): {passed}/{len(tests)} passed, "
        f"score {_fmt(item.score)} / {_fmt(item.points)}."
    ]
    for t in tests:
        mark = "PASS" if t.passed else "FAIL"
        edge = " (edge case)" if t.edge else ""
        msg = f": {t.message}" if (t.message and not t.passed) else ""
        lines.append(f"- {mark} {t.name}{edge}{msg}")
    if item.message:
        lines.append("")
        lines.append(item.message)
    return "\n".join(lines)


def written_comment(item: ItemResult) -> str:
    """The suggestion shown in formgrader's comment box: the engine's ready text, else one built here."""
    if item.message:
        return item.message
    sugg = item.suggestion if item.suggestion is not None else item.score
    lines = [f"Suggested score ({item.mode}): {_fmt(sugg)} / {_fmt(item.points)} — please confirm."]
    for ev in item.evidence:
        mark = "met" if ev.get("met") else "not met"
        quote = f" «{ev['quote']}»" if ev.get("quote") else ""
        note = f" {ev['note']}" if ev.get("note") else ""
        lines.append(f"- {ev.get('criterion', '?')}: {mark}.{quote}{note}")
    return "\n".join(lines)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{float(x):g}"


def _answer_sources(nb_path: Path) -> dict[str, str]:
    """grade_id -> source of the manually graded answer cells of a notebook ({} if unreadable/missing)."""
    try:
        data = json.loads(nb_path.read_text(encoding="utf-8"))
        out = {}
        for cell in data.get("cells", []):
            meta = (cell.get("metadata") or {}).get("nbgrader") or {}
            if meta.get("grade") and meta.get("solution") and meta.get("grade_id"):
                src = cell.get("source", "")
                out[meta["grade_id"]] = "".join(src) if isinstance(src, list) else str(src)
        return out
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def _autograded_path(out: Path, result: SubmissionResult) -> Path:
    nb_id = notebook_id_of(result.notebook)
    return out / AUTOGRADED / result.student_id / result.assignment_id / f"{nb_id}.ipynb"


def _atomic_copy(src: Path, dest: Path) -> None:
    """Byte copy that readers see whole or not at all (temp file in the same folder, fsync, rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh, open(src, "rb") as fsrc:
            shutil.copyfileobj(fsrc, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _write_autograded(dest: Path, submitted: Path, result: SubmissionResult) -> None:
    """Place a byte copy of the submission where formgrader looks for it. A submission that is not a
    readable notebook is replaced by a one-cell notebook saying why (formgrader would fail on it)."""
    import nbformat

    try:
        nbformat.reads(submitted.read_text(encoding="utf-8"), as_version=4)
    except Exception:  # noqa: BLE001 - any parse failure means "not a notebook"
        note = nbformat.v4.new_notebook()
        note.cells.append(
            nbformat.v4.new_markdown_cell(
                f"**This submission could not be read as a notebook.**\n\nStatus: `{result.status}`"
            )
        )
        atomic_write_text(dest, nbformat.writes(note))
    else:
        _atomic_copy(submitted, dest)


def _mirror_submitted(out: Path, result: SubmissionResult, submitted: Path) -> None:
    """Copy the submission (and its timestamp.txt) to OUT/submitted/..., where nbgrader's formgrader counts
    submissions and decides that a gradebook entry is "autograded" (equal timestamps)."""
    dest = (
        out
        / SUBMITTED
        / result.student_id
        / result.assignment_id
        / f"{notebook_id_of(result.notebook)}.ipynb"
    )
    if dest.exists() and dest.resolve() == submitted.resolve():
        return
    _atomic_copy(submitted, dest)
    ts_src, ts_dest = submitted.parent / "timestamp.txt", dest.parent / "timestamp.txt"
    if ts_src.is_file():
        _atomic_copy(ts_src, ts_dest)
    elif ts_dest.exists():
        ts_dest.unlink()


def _read_timestamp(submitted: Path):
    ts_file = submitted.parent / "timestamp.txt"
    if not ts_file.is_file():
        return None
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(ts_file.read_text(encoding="utf-8").strip())
    except Exception:  # noqa: BLE001 - a bad timestamp file must not stop grading
        return None


def _ensure_submission_rows(db, assignment, student_id: str, timestamp):
    """Student, SubmittedAssignment, and for every notebook its SubmittedNotebook, Grade and Comment rows
    (what Gradebook.add_submission creates), each only if missing. Returns the SubmittedAssignment."""
    from nbgrader.api import Comment, Grade, Student, SubmittedAssignment, SubmittedNotebook

    if db.get(Student, student_id) is None:
        db.add(Student(id=student_id))
        db.flush()
    sub = (
        db.query(SubmittedAssignment)
        .filter_by(assignment_id=assignment.id, student_id=student_id)
        .one_or_none()
    )
    if sub is None:
        sub = SubmittedAssignment(assignment=assignment, student_id=student_id)
        db.add(sub)
    if timestamp is not None:
        sub.timestamp = timestamp
    db.flush()
    for notebook in assignment.notebooks:
        snb = (
            db.query(SubmittedNotebook).filter_by(assignment_id=sub.id, notebook_id=notebook.id).one_or_none()
        )
        if snb is None:
            snb = SubmittedNotebook(notebook=notebook, assignment=sub)
            db.add(snb)
            db.flush()
        have_grades = {g.cell_id for g in db.query(Grade).filter_by(notebook_id=snb.id)}
        have_comments = {c.cell_id for c in db.query(Comment).filter_by(notebook_id=snb.id)}
        for cell in list(notebook.grade_cells) + list(notebook.task_cells):
            if cell.id not in have_grades:
                db.add(Grade(cell_id=cell.id, notebook=snb))
        for cell in list(notebook.solution_cells) + list(notebook.task_cells):
            if cell.id not in have_comments:
                db.add(Comment(cell_id=cell.id, notebook=snb))
    db.flush()
    return sub


def record(out_dir: Path | str, result: SubmissionResult, submitted_notebook_path: Path | str) -> dict:
    """Record one graded submission in OUT's gradebook and place its copies for formgrader
    (``OUT/autograded/<student>/<assignment>/<nb>.ipynb``, and ``OUT/submitted/...`` unless that is
    where the submission already is).

    Returns the instructor-confirmed scores of the written items (see :func:`confirmed_scores`) and
    applies them to ``result`` in place (``confirmed``, and ``score`` = confirmed else suggestion), so the
    caller's JSON and CSV show what the instructor already decided. The submission file is never modified.
    If the assignment is not in the gradebook yet, it is registered from the source notebook named in
    OUT's nbgrader_config.py."""
    from nbgrader.api import Assignment, Comment, Grade, GradeCell, Notebook, SolutionCell, SubmittedNotebook

    out = Path(out_dir).resolve()
    url = db_url_for(out)
    submitted = Path(submitted_notebook_path)
    nb_id = notebook_id_of(result.notebook)
    dest = _autograded_path(out, result)
    previous_answers = _answer_sources(dest)
    current_answers = _answer_sources(submitted)
    timestamp = _read_timestamp(submitted)

    with session(url, write=False) as db:
        assignment = db.query(Assignment).filter_by(name=result.assignment_id).one_or_none()
        known = assignment is not None and any(n.name == nb_id for n in assignment.notebooks)
    if not known:
        ensure_assignment(
            url, result.assignment_id, source_directory(out) / result.assignment_id / f"{nb_id}.ipynb"
        )

    confirmed: dict[str, float | None] = {}
    with session(url) as db:
        assignment = db.query(Assignment).filter_by(name=result.assignment_id).one()
        sub = _ensure_submission_rows(db, assignment, result.student_id, timestamp)
        notebook = db.query(Notebook).filter_by(name=nb_id, assignment_id=assignment.id).one()
        snb = db.query(SubmittedNotebook).filter_by(assignment_id=sub.id, notebook_id=notebook.id).one()
        grade_cells = {c.name: c for c in db.query(GradeCell).filter_by(notebook_id=notebook.id)}
        solution_cells = {c.name: c for c in db.query(SolutionCell).filter_by(notebook_id=notebook.id)}

        def comment_for(cell) -> Comment:
            row = db.query(Comment).filter_by(notebook_id=snb.id, cell_id=cell.id).one_or_none()
            if row is None:
                row = Comment(cell_id=cell.id, notebook=snb)
                db.add(row)
            return row

        for item in result.items:
            cell = grade_cells.get(item.id)
            if cell is None:
                raise KeyError(
                    f"rubric item {item.id!r} is not a grade cell of {result.assignment_id}/{nb_id} "
                    f"(grade cells: {sorted(grade_cells)})"
                )
            grade = db.query(Grade).filter_by(notebook_id=snb.id, cell_id=cell.id).one()
            if item.kind == "written":
                grade.auto_score = None
                old_answer = previous_answers.get(item.id)
                changed = old_answer is not None and old_answer != current_answers.get(item.id)
                if grade.manual_score is None or changed:
                    grade.needs_manual_grade = True
                sol = solution_cells.get(item.id)
                if sol is not None:
                    text = written_comment(item)
                    com = comment_for(sol)
                    # auto_comment = the text we last put in the box; equal => the instructor left it alone
                    untouched = com.manual_comment is None or com.manual_comment == com.auto_comment
                    if not untouched:  # the instructor's words stay; the new suggestion is kept aside
                        com.auto_comment = text
                    elif grade.manual_score is None or changed:
                        com.manual_comment = com.auto_comment = text
                    # else: confirmed with our text: keep the text the instructor confirmed against
                confirmed[item.id] = _confirmed_value(grade)
            else:
                new_score = float(item.score)
                if grade.manual_score is not None and grade.auto_score != new_score:
                    grade.needs_manual_grade = True  # the instructor overrode an older test score: re-check
                elif grade.manual_score is None:
                    grade.needs_manual_grade = False
                grade.auto_score = new_score
                comment_for(cell).auto_comment = code_comment(item)

    # the notebook formgrader shows, placed after the commit (a crash in between is repaired by a re-run;
    # placing it later keeps the previous copy as the reference for "answer changed" until we committed)
    _write_autograded(dest, submitted, result)
    _mirror_submitted(out, result, submitted)
    apply_confirmed(result, confirmed)
    return confirmed


def _confirmed_value(grade) -> float | None:
    """The instructor's score of a written cell, or None while it still needs manual grading."""
    if grade.manual_score is None or grade.needs_manual_grade:
        return None
    return float(grade.manual_score) + float(grade.extra_credit or 0.0)


def apply_confirmed(result: SubmissionResult, confirmed: dict) -> bool:
    """Put confirmed scores on the written items: ``confirmed`` and ``score`` (confirmed, else the
    suggestion). Returns True if anything changed."""
    changed = False
    for item in result.items:
        if item.kind != "written" or item.id not in confirmed:
            continue
        value = confirmed[item.id]
        fallback = item.suggestion if item.suggestion is not None else item.score
        score = value if value is not None else fallback
        if item.confirmed != value or item.score != score:
            item.confirmed, item.score = value, score
            changed = True
    return changed


def confirmed_scores(gb_url: str, assignment_id: str, student_id: str) -> dict[str, float | None]:
    """Written item id -> the score the instructor set in formgrader (manual score + extra credit), or
    None while unconfirmed (no manual score yet, or flagged for re-review because the answer changed).
    Written items are the manually graded cells: grade cells that are also solution cells."""
    from nbgrader.api import (
        Assignment,
        Grade,
        GradeCell,
        SolutionCell,
        SubmittedAssignment,
        SubmittedNotebook,
    )

    out: dict[str, float | None] = {}
    with session(gb_url, write=False) as db:
        assignment = db.query(Assignment).filter_by(name=assignment_id).one_or_none()
        if assignment is None:
            return out
        sub = (
            db.query(SubmittedAssignment)
            .filter_by(assignment_id=assignment.id, student_id=student_id)
            .one_or_none()
        )
        for notebook in assignment.notebooks:
            written = {c.name for c in db.query(SolutionCell).filter_by(notebook_id=notebook.id)}
            cells = [c for c in db.query(GradeCell).filter_by(notebook_id=notebook.id) if c.name in written]
            snb = (
                None
                if sub is None
                else db.query(SubmittedNotebook)
                .filter_by(assignment_id=sub.id, notebook_id=notebook.id)
                .one_or_none()
            )
            for cell in cells:
                grade = (
                    None
                    if snb is None
                    else db.query(Grade).filter_by(notebook_id=snb.id, cell_id=cell.id).one_or_none()
                )
                out[cell.name] = None if grade is None else _confirmed_value(grade)
    return out
