"""Intake: turn the zip files an LMS hands out into the submitted layout the grader reads,
``DEST/<student_id>/<assignment_id>/<notebook>.ipynb`` (nbgrader's ``zip_collect`` idea).

    python -m autograder collect ZIP... --dest DIR --assignment ID

Where the student id comes from (first rule that matches an entry's path inside the zip):

1. **Canvas** ("Download submissions"): a flat file ``<login>_[LATE_]<user id>_<submission id>_<name>.ipynb``,
   e.g. ``zhangsan_12345_67890_<notebook>.ipynb`` → student ``12345``, Canvas's user id (unique,
   unlike the name slug before it, and the ``ID`` of Canvas's gradebook, so grades go back without a
   hand-made roster); ``ids="login"`` (``collect --canvas-ids login``) keeps the slug instead. Either way
   ``DEST/roster.csv`` (``student_id,name,canvas_id``) records both, a roster for ``export --format
   canvas``. Canvas's ``-1``, ``-2`` suffixes on resubmitted file names are ignored.
2. **Folders**: ``<student_id>/<file>.ipynb`` or ``<student_id>/<assignment_id>/<file>.ipynb`` (also below a
   single common top folder, e.g. ``submissions/<student_id>/...``, which is stripped).

Whatever the file was called, it is written as the assignment's notebook name (from its rubric), so a
student's ``Copy of <notebook> (2).ipynb`` is graded. Student ids must be safe names (letters,
digits, ``_.@+-``); anything else is skipped and logged.

If a student has several notebooks (several zips, resubmissions), the one with the latest timestamp
(the zip entry's modification time) wins, and the choice is logged; ties go to the later zip on the
command line. A notebook already in DEST counts with its file modification time (collect sets it to
the entry's time), so collecting a newer download later replaces older files and an older one never
replaces newer.

Submission time: beside each notebook, ``timestamp.txt`` (nbgrader's format, UTC) from the chosen
entry's time. A zip entry's time has no zone (it is the local time of whatever made the zip): it is read
in ``zone`` (``collect --timezone``, default UTC), and the log says so, and ``lms_late_marker.txt`` when Canvas's file name carried ``LATE_``; ``apply_times``
(``collect --times CSV``) overrides the time from an instructor's CSV. ``grade`` reads both
(``autograder.intake.course``).

Safety: nothing is extracted by its own path. Each entry is read through a size-capped stream and
written, atomically, only to the path computed above. Absolute paths, ``..``, drive letters, symlinks,
nested zips, encrypted entries, too many entries, oversized files, suspicious compression ratios and a
too-large total are refused and logged.
"""

from __future__ import annotations

import csv
import io
import re
import stat
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.core.files import atomic_write, atomic_write_text
from autograder.core.registry import lessons
from autograder.core.timestamps import TIMESTAMP_FILE, write_submission_time
from autograder.core.untrusted import SAFE_ID  # the one id rule, which `grade` applies too
from autograder.intake.course import LATE_MARKER_FILE, CourseError, parse_time

MAX_ENTRIES = 20_000  # per zip
MAX_FILE_BYTES = 20 * 1024 * 1024  # one notebook (the grader refuses larger ones anyway)
MAX_TOTAL_BYTES = 2 * 1024**3  # all notebooks read from one zip
MAX_RATIO = 200  # uncompressed / compressed, for entries over RATIO_MIN_BYTES
RATIO_MIN_BYTES = 1024 * 1024

CANVAS = re.compile(
    r"^(?P<student>[A-Za-z0-9][A-Za-z0-9.@+-]*)_(?P<late>LATE_|late_)?(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$"
)


class Refused(Exception):
    """An entry that is not collected; the message goes to the log."""


@dataclass
class Candidate:
    student: str
    timestamp: float
    data: bytes
    origin: str  # "zipname:entry" for the log
    lms_late: bool = False  # Canvas's LATE_ marker in the file name
    canvas: tuple[str, str] | None = None  # (name slug, user id) from a Canvas file name


ROSTER_FILE = "roster.csv"


def _notebook_name(assignment: str) -> str:
    """The rubric's notebook name for ``assignment`` (``<name>.ipynb``); the entry's own name otherwise."""
    try:
        known = lessons()
        if assignment in known:
            return known[assignment].notebook + ".ipynb"
    except Exception:  # noqa: BLE001 - collect works without a rubric too
        pass
    return ""


def _safe_parts(name: str) -> list[str]:
    """The entry's path components, or Refused for anything that could point outside DEST."""
    if "\\" in name:
        name = name.replace("\\", "/")  # zips made on Windows; judged like '/' paths
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise Refused("absolute path")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise Refused("path traversal ('..')")
    if not parts:
        raise Refused("empty name")
    return parts


def _student_of(
    parts: list[str], assignment: str, common_top: str | None, ids: str = "user"
) -> tuple[str, bool, tuple[str, str] | None]:
    """(student id, whether Canvas marked the file LATE_, Canvas's (name slug, user id) or None)."""
    if common_top is not None and len(parts) > 1 and parts[0] == common_top:
        parts = parts[1:]
    if len(parts) == 1:
        m = CANVAS.match(parts[0])
        if not m:
            raise Refused("file name does not follow <login>_<user id>_<submission id>_<name> (Canvas)")
        canvas = (m.group("student"), m.group("uid"))
        return (canvas[1] if ids == "user" else canvas[0]), bool(m.group("late")), canvas
    if len(parts) == 2 or (len(parts) == 3 and parts[1] == assignment):
        return parts[0], False, None
    raise Refused("expected <student_id>/<file>.ipynb or <student_id>/<assignment>/<file>.ipynb")


def _read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int]) -> bytes:
    """Read an entry without trusting its header: stop at the per-file cap and the zip's total budget."""
    limit = min(MAX_FILE_BYTES, budget[0])
    chunks, got = [], 0
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(min(1 << 16, limit + 1 - got))
            if not chunk:
                break
            got += len(chunk)
            if got > limit:
                if limit < MAX_FILE_BYTES:
                    raise Refused("the zip's total uncompressed size is over the limit (zip bomb?)")
                raise Refused(f"over {MAX_FILE_BYTES // 2**20} MB uncompressed")
            chunks.append(chunk)
    budget[0] -= got
    return b"".join(chunks)


def notebook_entry_parts(info: zipfile.ZipInfo) -> list[str] | None:
    """The path components of a notebook entry that is safe to read; None for an entry that is not a
    notebook (other files, hidden files, ``__MACOSX``, checkpoints); Refused for anything unsafe."""
    parts = _safe_parts(info.filename)
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise Refused("symbolic link")
    if mode and not stat.S_ISREG(mode) and stat.S_IFMT(mode):
        raise Refused("not a regular file")
    if info.flag_bits & 0x1:
        raise Refused("encrypted entry")
    if parts[-1].lower().endswith(".zip"):
        raise Refused("nested zip (unpack it and pass it on the command line)")
    if not parts[-1].lower().endswith(".ipynb"):
        return None
    if parts[-1].startswith(".") or "__MACOSX" in parts or ".ipynb_checkpoints" in parts:
        return None
    if info.file_size > RATIO_MIN_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise Refused(f"compression ratio over {MAX_RATIO}:1 (zip bomb?)")
    if info.file_size > MAX_FILE_BYTES:
        raise Refused(f"over {MAX_FILE_BYTES // 2**20} MB uncompressed")
    return parts


def _open_zip(zip_path: Path, log: list[str], tag: str, shown: str) -> zipfile.ZipFile | None:
    """The zip, open, or None with the reason logged: not a zip, or too many entries."""
    try:
        zf = zipfile.ZipFile(zip_path)
    except (OSError, zipfile.BadZipFile) as exc:
        log.append(f"{tag}{shown}: not a readable zip file ({exc})")
        return None
    count = len(zf.infolist())
    if count > MAX_ENTRIES:
        zf.close()
        log.append(f"{tag}{shown}: {count} entries, over the limit of {MAX_ENTRIES} (zip bomb?)")
        return None
    return zf


def zip_notebooks(zip_path: Path, log: list[str]) -> list[tuple[list[str], bytes]]:
    """Every notebook in one zip as (path components, bytes), read through the same checks and caps as
    ``collect``; what is refused or unreadable is logged, never raised."""
    found: list[tuple[list[str], bytes]] = []
    zf = _open_zip(zip_path, log, "", Path(zip_path).name)
    if zf is None:
        return found
    with zf:
        budget = [MAX_TOTAL_BYTES]
        for info in zf.infolist():
            if info.is_dir():
                continue
            try:
                parts = notebook_entry_parts(info)
                if parts is not None:
                    found.append((parts, _read_capped(zf, info, budget)))
            except Refused as exc:
                log.append(f"{Path(zip_path).name}:{info.filename}: skipped ({exc})")
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
                log.append(f"{Path(zip_path).name}:{info.filename}: unreadable ({type(exc).__name__})")
    return found


def _candidates(
    zip_path: Path, assignment: str, log: list[str], zone: tzinfo = UTC, ids: str = "user"
) -> list[Candidate]:
    out: list[Candidate] = []
    zf = _open_zip(zip_path, log, "ERROR ", str(zip_path))
    if zf is None:
        return out
    with zf:
        files = [i for i in zf.infolist() if not i.is_dir()]
        tops = {
            i.filename.replace("\\", "/").lstrip("/").split("/", 1)[0] for i in files if "/" in i.filename
        }
        nested_everywhere = files and all("/" in i.filename.replace("\\", "/") for i in files)
        # one folder wrapping everything, e.g. "submissions/<student>/..." (not when it is a student's own folder)
        common_top = next(iter(tops)) if nested_everywhere and len(tops) == 1 else None
        if common_top is not None and all(i.filename.replace("\\", "/").count("/") == 1 for i in files):
            common_top = None  # "<student>/<file>" with a single student
        budget = [MAX_TOTAL_BYTES]
        skipped_other = 0
        for info in files:
            where = f"{zip_path.name}:{info.filename}"
            try:
                parts = notebook_entry_parts(info)
                if parts is None:
                    skipped_other += 1
                    continue
                student, lms_late, canvas = _student_of(parts, assignment, common_top, ids)
                if not SAFE_ID.match(student):
                    raise Refused(f"unsafe student id {student!r}")
                data = _read_capped(zf, info, budget)
                try:  # a zip time has no zone: read in `zone` (collect --timezone)
                    stamp = datetime(*info.date_time, tzinfo=zone).timestamp()
                except (OverflowError, ValueError):
                    stamp = 0.0
                out.append(Candidate(student, stamp, data, where, lms_late, canvas))
            except Refused as exc:
                log.append(f"SKIP  {where}: {exc}")
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
                log.append(f"SKIP  {where}: unreadable entry ({type(exc).__name__}: {exc})")
        if skipped_other:
            log.append(f"note  {zip_path.name}: {skipped_other} entries that are not notebooks were ignored")
    return out


def _fmt(ts: float, zone: tzinfo = UTC) -> str:
    if not ts:
        return "no time"
    return datetime.fromtimestamp(ts, zone).strftime("%Y-%m-%d %H:%M:%S %Z")


def collect(zips: list[Path], dest: Path, assignment: str, zone: str = "UTC", ids: str = "user") -> list[str]:
    """Unpack ``zips`` into ``dest/<student>/<assignment>/<notebook>.ipynb``; return the log lines.
    ``zone``: the time zone zip entry times are read in; ``ids``: Canvas's ``user`` id or ``login``
    slug as the student id."""
    if not SAFE_ID.match(assignment):
        raise SystemExit(f"error: unsafe assignment id {assignment!r}")
    if ids not in ("user", "login"):
        raise SystemExit(f"error: --canvas-ids must be user or login, not {ids!r}")
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise SystemExit(f"error: unknown time zone {zone!r} (e.g. Asia/Shanghai, UTC)") from None
    dest = Path(dest)
    log: list[str] = [
        f"note  zip entry times carry no time zone: read as {zone} (set --timezone to the zone of the "
        "LMS that made the zip, or give --times CSV)"
    ]
    nb_name = _notebook_name(assignment)
    best: dict[str, Candidate] = {}
    losers: dict[str, list[Candidate]] = {}
    for order, zip_path in enumerate(Path(z) for z in zips):
        for cand in _candidates(zip_path, assignment, log, tz, ids):
            cand.timestamp += order * 1e-6  # ties: the later zip on the command line wins
            current = best.get(cand.student)
            if current is None or cand.timestamp >= current.timestamp:
                if current is not None:
                    losers.setdefault(cand.student, []).append(current)
                best[cand.student] = cand
            else:
                losers.setdefault(cand.student, []).append(cand)
    written = 0
    for student in sorted(best):
        cand = best[student]
        name = nb_name or _plain_name(cand.origin)
        target = dest / student / assignment / name
        for loser in losers.get(student, []):
            log.append(
                f"CHOSE {student}: {cand.origin} ({_fmt(cand.timestamp, tz)}) over {loser.origin} "
                f"({_fmt(loser.timestamp, tz)}): later timestamp wins"
            )
        if target.is_symlink() or (target.exists() and not target.is_file()):
            log.append(f"SKIP  {student}: {target} exists and is not a regular file")
            continue
        if target.exists():
            have = target.stat().st_mtime
            if have > cand.timestamp + 1e-3:
                log.append(
                    f"KEEP  {student}: {target} ({_fmt(have, tz)}) is newer than {cand.origin} "
                    f"({_fmt(cand.timestamp, tz)})"
                )
                continue
            if target.read_bytes() == cand.data:
                log.append(f"SAME  {student}: {target} already holds {cand.origin}")
                if not (target.parent / TIMESTAMP_FILE).is_file():
                    _record_time(target.parent, cand)
                continue
        atomic_write(target, cand.data, mtime=int(cand.timestamp))
        _record_time(target.parent, cand)
        written += 1
        late = " [Canvas: LATE]" if cand.lms_late else ""
        log.append(f"OK    {student}: {cand.origin} ({_fmt(cand.timestamp, tz)}){late} -> {target}")
    roster = {c.student: c.canvas for c in best.values() if c.canvas is not None}
    if roster:
        path = _update_roster(dest, roster)
        log.append(f"roster {path}: Canvas name and user id of {len(roster)} student(s) (export --roster)")
    log.append(f"collected {written} notebook(s) for {len(best)} student(s) into {dest}")
    return log


def _update_roster(dest: Path, found: dict[str, tuple[str, str]]) -> Path:
    """``DEST/roster.csv`` (``student_id,name,canvas_id``): earlier rows kept, these students' updated."""

    path = Path(dest) / ROSTER_FILE
    rows: dict[str, dict[str, str]] = {}
    if path.is_file():
        with open(path, newline="", encoding="utf-8-sig") as fh:
            for row in csv.DictReader(fh):
                if row.get("student_id"):
                    rows[row["student_id"]] = row
    for student, (name, uid) in found.items():
        rows[student] = {"student_id": student, "name": name, "canvas_id": uid}
    buf = io.StringIO()
    w = csv.DictWriter(buf, ["student_id", "name", "canvas_id"], extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for student in sorted(rows):
        w.writerow(rows[student])
    atomic_write_text(path, buf.getvalue())
    return path


def _record_time(folder: Path, cand: Candidate) -> None:
    """The submission time (nbgrader's ``timestamp.txt``, from the zip entry's time) and Canvas's late
    marker next to the notebook, where ``grade`` reads them (``autograder.intake.course``)."""
    marker = folder / LATE_MARKER_FILE
    if cand.timestamp >= 1:
        write_submission_time(folder, datetime.fromtimestamp(int(cand.timestamp), UTC))
    if cand.lms_late:
        marker.write_text("Canvas LATE_\n", encoding="utf-8")
    elif marker.exists():
        marker.unlink()


def apply_times(times_csv: Path, dest: Path, assignment: str, zone: str = "UTC") -> list[str]:
    """An instructor's CSV of submission times (``student_id,submitted_at`` and optionally
    ``assignment_id``; ISO 8601, times without an offset in ``zone``) written as each submission's
    ``timestamp.txt`` in ``dest``, replacing the zip's time. Rows for students with no submission in
    ``dest`` and submissions left without a time are logged, never dropped silently."""

    tz = ZoneInfo(zone)
    log: list[str] = []
    seen: set[str] = set()
    with open(times_csv, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or not {"student_id", "submitted_at"} <= set(reader.fieldnames):
            raise SystemExit(
                f"error: {times_csv} needs the columns student_id,submitted_at (and optionally assignment_id)"
            )
        for line, row in enumerate(reader, start=2):
            if row.get("assignment_id") and row["assignment_id"].strip() != assignment:
                continue
            student = (row.get("student_id") or "").strip()
            folder = dest / student / assignment
            if not SAFE_ID.match(student) or not folder.is_dir():
                log.append(
                    f"UNKNOWN {times_csv.name}:{line}: student {student!r} has no submission of "
                    f"{assignment} in {dest}"
                )
                continue
            try:
                when = parse_time(row.get("submitted_at") or "", tz, f"{times_csv.name}:{line}")
            except CourseError as exc:
                log.append(f"BAD   {exc}")
                continue
            write_submission_time(folder, when)
            seen.add(student)
            log.append(
                f"TIME  {student}: {when.astimezone(tz).isoformat()} = {when.astimezone(UTC).isoformat()} "
                f"(from {times_csv.name})"
            )
    if Path(dest).is_dir():
        for folder in sorted(Path(dest).glob(f"*/{assignment}")):
            if folder.parent.name not in seen and not (folder / TIMESTAMP_FILE).is_file():
                log.append(
                    f"NOTIME {folder.parent.name}: no submission time (no zip time, not in "
                    f"{times_csv.name}); no late policy can be applied"
                )
    return log


def _plain_name(origin: str) -> str:
    base = origin.rsplit(":", 1)[-1].replace("\\", "/").rsplit("/", 1)[-1]
    m = CANVAS.match(base)
    if m:
        base = m.group("file")
    base = re.sub(r"-\d+(\.ipynb)$", r"\1", base)
    return base if SAFE_ID.match(base) else "submission.ipynb"
