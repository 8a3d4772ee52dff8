"""Due dates and late policy: the course configuration file (``course.yaml``) and the penalty it gives.

    timezone: Asia/Shanghai          # times written without an offset are in this zone (default UTC)
    assignments:
      <lesson-id>:
        due: 2026-12-07 23:59
        grace: 15 minutes            # submitted up to due + grace counts as on time (default 0)
        per_day: 10%                 # per started day after the due date: a share of max_total, or points
        cap: 50%                     # the penalty never exceeds this (share of max_total, or points)
        zero_after: 2026-12-14 23:59 # submitted after this: final total 0 (optional)

Rule: a submission later than ``due + grace`` is late by ``ceil((submitted - due) / 1 day)`` started days
(counted from the due date itself: the grace period forgives a late click, not a day); the penalty is
``min(days × per_day, cap)`` points, never more than the raw total, so the final total is never negative.
After ``zero_after`` the penalty is the whole raw total. A submission without a time (no
``timestamp.txt``) gets no penalty and is flagged. Assignments not in the file have no late policy.

The submission time is nbgrader's ``timestamp.txt`` next to the notebook (``collect`` writes it from the
zip entry's time or from an instructor's CSV); ``grade`` records it in the gradebook as nbgrader's
submission timestamp.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from autograder.core.files import atomic_write_text
from autograder.gradebook.store import _tables, db_url_for, session

TIMESTAMP_FILE = "timestamp.txt"
LATE_MARKER_FILE = "lms_late_marker.txt"  # collect: the LMS itself marked the submission late (Canvas LATE_)
DAY = timedelta(days=1)
_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?\s*$", re.I
)

_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class CourseError(ValueError):
    """The course file is malformed; the message names the assignment and key."""


@dataclass(frozen=True)
class Amount:
    """A share of ``max_total`` (``"10%"``) or a number of points (``1.5``)."""

    value: float
    percent: bool

    def points(self, max_total: float) -> float:
        return self.value / 100 * max_total if self.percent else self.value

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.percent else f"{self.value:g} 分 (points)"


@dataclass(frozen=True)
class LatePolicy:
    assignment: str
    due: datetime
    grace: timedelta = timedelta(0)
    per_day: Amount | None = None
    cap: Amount | None = None
    zero_after: datetime | None = None
    zone: tzinfo = UTC


@dataclass(frozen=True)
class Late:
    """What the policy gave one submission."""

    submitted_at: datetime | None
    days: int
    penalty: float
    note: str  # how the penalty was computed, Chinese with English terms (feedback page)


def parse_time(value, zone: tzinfo, what: str) -> datetime:
    """An aware datetime from a YAML/CSV value; naive times are in ``zone``."""
    if isinstance(value, datetime):
        dt = value
    else:
        text = str(value).strip()
        try:
            dt = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
        except ValueError:
            raise CourseError(f"{what}: {text!r} is not a date and time (e.g. 2026-12-07 23:59)") from None
    return dt.replace(tzinfo=zone) if dt.tzinfo is None else dt


def parse_duration(value, what: str) -> timedelta:
    """``15 minutes``, ``2h``, ``1 day``; a bare number is minutes."""
    if isinstance(value, bool):
        raise CourseError(f"{what}: not a duration")
    if isinstance(value, int | float):
        return timedelta(minutes=float(value))
    m = _DURATION.match(str(value))
    if not m:
        raise CourseError(f"{what}: {value!r} is not a duration (e.g. 15 minutes, 2 hours, 1 day)")
    unit = (m.group(2) or "m").lower()[0]
    return timedelta(seconds=float(m.group(1)) * _UNIT[unit])


def parse_amount(value, what: str) -> Amount:
    text = str(value).strip()
    try:
        amount = Amount(float(text[:-1]), True) if text.endswith("%") else Amount(float(text), False)
    except ValueError:
        raise CourseError(f"{what}: {value!r} is not a percentage (10%) or a number of points") from None
    if amount.value < 0 or not math.isfinite(amount.value):
        raise CourseError(f"{what}: must be a non-negative amount")
    return amount


def load_course(path: Path | str) -> dict[str, LatePolicy]:
    """{assignment id: its late policy} from a course file; CourseError with the place of any mistake."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise CourseError(f"{path}: cannot read the course file ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("assignments", {}), dict):
        raise CourseError(f"{path}: expected a mapping with 'assignments: {{<id>: {{due: ...}}}}'")
    try:
        zone = ZoneInfo(str(data.get("timezone", "UTC")))
    except (ZoneInfoNotFoundError, ValueError):
        raise CourseError(f"{path}: unknown timezone {data.get('timezone')!r} (e.g. Asia/Shanghai)") from None
    policies = {}
    for aid, spec in (data.get("assignments") or {}).items():
        where = f"{path.name}: {aid}"
        if not isinstance(spec, dict) or "due" not in spec:
            raise CourseError(f"{where}: needs at least 'due:'")
        unknown = set(spec) - {"due", "grace", "per_day", "cap", "zero_after"}
        if unknown:
            raise CourseError(f"{where}: unknown keys {sorted(unknown)}")
        due = parse_time(spec["due"], zone, f"{where}.due")
        zero_after = (
            parse_time(spec["zero_after"], zone, f"{where}.zero_after") if "zero_after" in spec else None
        )
        if zero_after is not None and zero_after < due:
            raise CourseError(f"{where}: zero_after is before the due date")
        policies[str(aid)] = LatePolicy(
            str(aid),
            due,
            parse_duration(spec.get("grace", 0), f"{where}.grace"),
            parse_amount(spec["per_day"], f"{where}.per_day") if "per_day" in spec else None,
            parse_amount(spec["cap"], f"{where}.cap") if "cap" in spec else None,
            zero_after,
            zone,
        )
    return policies


def _show(dt: datetime, zone: tzinfo) -> str:
    local = dt.astimezone(zone)
    return local.strftime("%Y-%m-%d %H:%M:%S ") + (local.tzname() or "")


def apply_policy(
    policy: LatePolicy, submitted_at: datetime | None, raw_total: float, max_total: float
) -> Late:
    """The penalty ``policy`` gives a submission made at ``submitted_at`` with ``raw_total`` points."""
    z = policy.zone
    due = f"截止 (due) {_show(policy.due, z)}"
    if submitted_at is None:
        return Late(None, 0, 0.0, f"没有提交时间 (no submission time)：未按迟交规则扣分；{due}")
    when = f"提交于 (submitted) {_show(submitted_at, z)}，{due}"
    if submitted_at <= policy.due:
        return Late(submitted_at, 0, 0.0, f"按时提交 (on time)：{when}")
    if submitted_at <= policy.due + policy.grace:
        grace = policy.grace.total_seconds() / 60
        return Late(
            submitted_at, 0, 0.0, f"宽限期内 (within the {grace:g}-minute grace period)，不扣分：{when}"
        )
    days = math.ceil((submitted_at - policy.due) / DAY)
    if policy.zero_after is not None and submitted_at > policy.zero_after:
        return Late(
            submitted_at,
            days,
            round(max(raw_total, 0.0), 4),
            f"迟交 {days} 天，晚于 {_show(policy.zero_after, z)} (zero after)：总分记 0；{when}",
        )
    per_day = policy.per_day.points(max_total) if policy.per_day else 0.0
    penalty = days * per_day
    how = f"迟交 (late) {days} 天 (started days after the due date) × 每天 (per day) {policy.per_day or 0}"
    if policy.per_day and policy.per_day.percent:
        how += f" × 满分 (max) {max_total:g}"
    how += f" = {penalty:g} 分"
    if policy.cap is not None and penalty > policy.cap.points(max_total):
        penalty = policy.cap.points(max_total)
        how += f"，封顶 (cap) {policy.cap} → {penalty:g} 分"
    if penalty > raw_total:
        penalty = max(raw_total, 0.0)
        how += f"，不超过原始总分 (raw total) → {penalty:g} 分"
    penalty = round(penalty, 4)
    return Late(
        submitted_at,
        days,
        penalty,
        f"{how}；最终 (final) {raw_total:g} − {penalty:g} = {round(raw_total - penalty, 4):g}；{when}",
    )


def read_submission_time(folder: Path) -> datetime | None:
    """nbgrader's ``timestamp.txt`` in a submission folder, as an aware UTC datetime (None if absent or
    unreadable)."""
    path = Path(folder) / TIMESTAMP_FILE
    if not path.is_file():
        return None
    from nbgrader.utils import parse_utc

    try:
        dt = parse_utc(path.read_text(encoding="utf-8").strip()[:100])
    except Exception:  # noqa: BLE001 - a bad file means "no time", which is flagged
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def write_submission_time(folder: Path, when: datetime) -> None:
    """Write ``timestamp.txt`` in nbgrader's format (``2026-12-07 15:50:00.000000 UTC``)."""

    stamp = when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"
    atomic_write_text(Path(folder) / TIMESTAMP_FILE, stamp + "\n")


def lms_late_marker(folder: Path) -> bool:
    return (Path(folder) / LATE_MARKER_FILE).is_file()


MARKER_NOTE = "；注意 (note)：LMS 把这份提交标为迟交 (Canvas LATE_)，与记录的提交时间不一致，请教师核对"


def apply_to_result(res, policies: dict[str, LatePolicy], when: datetime | None, lms_marker: bool = False):
    """Set ``res``'s submission time, late days, penalty and note (a ``SubmissionResult``); returns it."""
    res.submitted_at = when.astimezone(UTC).isoformat() if when else ""
    policy = policies.get(res.assignment_id)
    if policy is None:
        res.late_days, res.late_penalty, res.late_note = 0, 0.0, ""
        return res
    late = apply_policy(policy, when, res.total, res.max_total)
    res.late_days, res.late_penalty, res.late_note = late.days, late.penalty, late.note
    if lms_marker and late.days == 0:
        res.late_note += MARKER_NOTE
    return res


def reapply(out_dir: Path | str, results) -> None:
    """After scores changed (confirmed in formgrader): recompute the penalties with ``OUT/course.yaml``
    and each result's recorded submission time."""
    kept = Path(out_dir) / "course.yaml"
    if not kept.is_file():
        return
    policies = load_course(kept)
    results = list(results)
    for res in results:
        when = datetime.fromisoformat(res.submitted_at) if res.submitted_at else None
        apply_to_result(res, policies, when, MARKER_NOTE in res.late_note)
    record_in_gradebook(out_dir, policies, results)


def record_in_gradebook(out_dir: Path | str, policies: dict[str, LatePolicy], results) -> None:
    """nbgrader's own late fields, in one transaction: each assignment's ``duedate`` and each submitted
    notebook's ``late_submission_penalty`` (what ``nbgrader export`` subtracts from the raw score and
    formgrader shows), for the results of assignments with a policy."""
    from sqlalchemy import select, update

    results = [r for r in results if r.assignment_id in policies]
    if not results:
        return
    t = _tables()
    a, sa, sn = t["assignment"], t["submitted_assignment"], t["submitted_notebook"]
    with session(db_url_for(out_dir)) as db:
        conn = db.connection()
        for aid in {r.assignment_id for r in results}:
            due = policies[aid].due.astimezone(UTC).replace(tzinfo=None)  # nbgrader stores naive UTC
            conn.execute(update(a).where(a.c.name == aid).values(duedate=due))
        rows = conn.execute(select(sa.c.id, sa.c.student_id, a.c.name).join(a, sa.c.assignment_id == a.c.id))
        subs = {(row.name, row.student_id): row.id for row in rows}
        for r in results:
            sub_id = subs.get((r.assignment_id, r.student_id))
            if sub_id is not None:
                penalty = float(r.late_penalty) if r.late_penalty else None
                conn.execute(
                    update(sn).where(sn.c.assignment_id == sub_id).values(late_submission_penalty=penalty)
                )
