"""Grades in an LMS's own import format: ``python -m autograder export --format canvas|moodle --roster R``.

Both take each assignment's ``final_total`` (``total`` minus any late penalty; ``autograder.intake.course``)
from ``OUT/results`` after ``export`` has applied the scores confirmed in formgrader, and map student
folder ids to LMS ids through a roster CSV:

* ``student_id`` (required): the folder id under ``submitted/`` (what ``collect`` wrote);
* Canvas: ``name``, ``canvas_id`` and optionally ``sis_user_id``, ``sis_login_id``, ``section``; the
  columns of Canvas's own gradebook export are read under their names too (``Student``, ``ID``,
  ``SIS User ID``, ``SIS Login ID``, ``Section``), so an exported gradebook with a ``student_id`` column
  added is a roster, and so is the export as it is when the folders are Canvas user ids (``collect``'s
  default: its ``ID`` column is then the student id);
* Moodle: the identifier chosen with ``--moodle-id`` (``email``, ``idnumber`` or ``username``; also read
  as Moodle's export headers ``Email address``, ``ID number``, ``Username``).

Canvas (gradebook "Import"): header ``Student, ID, SIS User ID, SIS Login ID, Section`` then one column
per assignment (``Name (canvas assignment id)`` updates that assignment; a plain name creates one);
second row ``Points Possible`` with each assignment's maximum; one row per roster student. A blank cell
leaves Canvas's grade unchanged, which is what a student without a submission gets.

Moodle (Grades → Import → CSV file): one identifier column, then one column per assignment holding the
grade, mapped to the grade item on Moodle's import page ("Map from" the identifier column "Map to" the
matching user field; each grade column to its grade item).

Nothing is dropped silently: a graded student not in the roster, a roster student without a result, a
submission that could not be graded (blank, never a 0: ``UNGRADED``), a roster row without the LMS id
and a provisional grade (written answers not yet confirmed) are each reported; unknown students make the command exit non-zero after writing the file.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import numbers
from autograder.core.files import atomic_write_text
from autograder.core.results import SubmissionResult
from autograder.core.safe_text import csv_cell

CANVAS_HEAD = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS = "    Points Possible"  # as Canvas writes it in its own export (leading spaces included)
MOODLE_IDS = {"email": "Email address", "idnumber": "ID number", "username": "Username"}
#: roster column -> the names it is read under (ours first, then the LMS exports')
ALIASES = {
    "student_id": ("student_id",),
    "name": ("name", "Student"),
    "canvas_id": ("canvas_id", "ID"),
    "sis_user_id": ("sis_user_id", "SIS User ID"),
    "sis_login_id": ("sis_login_id", "SIS Login ID"),
    "section": ("section", "Section"),
    "email": ("email", "Email address"),
    "idnumber": ("idnumber", "ID number"),
    "username": ("username", "Username"),
}


class RosterError(ValueError):
    pass


@dataclass
class LmsExport:
    path: Path
    report: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # graded student ids not in the roster


def read_roster(path: Path) -> list[dict[str, str]]:
    """The roster's rows as {our column: value}; Canvas's "Points Possible" row is skipped."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        where = {key: next((n for n in names if n in fields), None) for key, names in ALIASES.items()}
        by_canvas_id = where["student_id"] is None and where["canvas_id"] == "ID"
        if by_canvas_id:  # Canvas's own gradebook export: collect names folders by Canvas's user id (ID)
            where["student_id"] = where["canvas_id"]
        if where["student_id"] is None:
            raise RosterError(
                f"{path}: needs a student_id column (the student's folder id under submitted/), or "
                "Canvas's ID column when the folders are Canvas user ids (collect's default)"
            )
        rows = []
        for raw in reader:
            row = {key: (raw.get(col) or "").strip() for key, col in where.items() if col is not None}
            if by_canvas_id and not row["student_id"]:
                continue  # Canvas's "Points Possible" row and the like
            if "points possible" in row.get("name", "").lower() and not row["student_id"]:
                continue
            rows.append(row)
    seen, dupes = set(), set()
    for row in rows:
        sid = row["student_id"]
        (dupes if sid in seen else seen).add(sid)
    if dupes:
        raise RosterError(f"{path}: student_id listed more than once: {', '.join(sorted(dupes))}")
    return rows


def _grade(r: SubmissionResult | None) -> str:
    """The LMS cell: ``final_total``; blank (the LMS keeps its grade) without a result or when the
    submission could not be graded (a misnamed or unreadable notebook is not a 0: it is listed)."""
    return numbers.score(r.final_total) if r is not None and r.graded else ""


def _check(
    results: list[SubmissionResult], roster: list[dict[str, str]], lms_key: str, what: str, out: LmsExport
) -> dict[tuple[str, str], SubmissionResult]:
    by_key = {(r.student_id, r.assignment_id): r for r in results}
    listed = {row["student_id"] for row in roster}
    out.unknown = sorted({r.student_id for r in results} - listed)
    for sid in out.unknown:
        out.report.append(
            f"UNKNOWN {sid}: graded but not in the roster, so not in the {what} file (add them to the roster)"
        )
    assignments = sorted({r.assignment_id for r in results})
    for row in roster:
        sid = row["student_id"]
        if not row.get(lms_key):
            out.report.append(
                f"NO-ID   {sid}: the roster has no {lms_key} for this student; {what} cannot match the row"
            )
        for aid in assignments:
            r = by_key.get((sid, aid))
            if r is None:
                out.report.append(f"MISSING {sid}: no graded submission of {aid} (cell left blank)")
            elif not r.graded:
                out.report.append(
                    f"UNGRADED {sid} {aid}: could not be graded ({r.status}); cell left blank, not 0"
                )
            elif r.provisional:
                out.report.append(f"PROVISIONAL {sid} {aid}: written answers not yet confirmed in formgrader")
    return by_key


@dataclass(frozen=True)
class LmsFormat:
    """One LMS's import file: its identity columns (header, roster keys), the roster key it matches on,
    and whether it has Canvas's ``Points Possible`` row."""

    name: str
    head: tuple[str, ...]
    id_cols: tuple[str, ...]
    lms_key: str
    points_row: bool = False


CANVAS = LmsFormat(
    "canvas",
    tuple(CANVAS_HEAD),
    ("name", "canvas_id", "sis_user_id", "sis_login_id", "section"),
    "canvas_id",
    points_row=True,
)


def moodle_format(id_field: str = "email") -> LmsFormat:
    if id_field not in MOODLE_IDS:
        raise RosterError(f"--moodle-id must be one of {', '.join(MOODLE_IDS)}")
    return LmsFormat("moodle", (MOODLE_IDS[id_field],), (id_field,), id_field)


def write_lms(
    fmt: LmsFormat,
    out_dir: Path,
    results: list[SubmissionResult],
    roster: list[dict[str, str]],
    columns: dict[str, str],
    dest: Path | None = None,
) -> LmsExport:
    """``fmt``'s file (default ``OUT/grades-<lms>.csv``): its identity header + one column per assignment
    (``columns`` renames), Canvas's ``Points Possible`` row, then one row per roster student (its ids,
    then its ``final_total`` per assignment, blank where it has none). Text cells go through ``csv_cell``."""
    out = LmsExport(Path(dest) if dest else Path(out_dir) / f"grades-{fmt.name}.csv")
    by_key = _check(results, roster, fmt.lms_key, fmt.name.capitalize(), out)
    assignments = sorted({r.assignment_id for r in results})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(list(fmt.head) + [csv_cell(columns.get(aid, aid)) for aid in assignments])
    if fmt.points_row:
        maxima = [max(r.max_total for r in results if r.assignment_id == aid) for aid in assignments]
        w.writerow([CANVAS_POINTS] + [""] * (len(fmt.head) - 1) + [numbers.score(m) for m in maxima])
    for row in roster:
        sid = row["student_id"]
        grades = [_grade(by_key.get((sid, aid))) for aid in assignments]
        w.writerow([csv_cell(row.get(k, "")) for k in fmt.id_cols] + grades)
    atomic_write_text(out.path, buf.getvalue())
    return out


def parse_columns(specs: list[str] | None) -> dict[str, str]:
    """``--column ID=NAME`` options: the LMS column name of an assignment (Canvas: ``Name (id)``)."""
    out = {}
    for spec in specs or []:
        aid, sep, name = spec.partition("=")
        if not sep or not aid.strip() or not name.strip():
            raise RosterError(f"--column {spec!r}: expected ASSIGNMENT_ID=COLUMN NAME")
        out[aid.strip()] = name.strip()
    return out
