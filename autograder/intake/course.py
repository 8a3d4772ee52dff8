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

Reading ``timestamp.txt`` (:func:`parse_timestamp`): ISO 8601 with an offset or ``Z`` is taken as written;
a time without an offset is in the course's ``timezone``; nbgrader's own format ends in a zone
*abbreviation* (its exchange writes ``%Y-%m-%d %H:%M:%S.%f %Z`` with ``c.Exchange.timezone``, e.g.
``2026-12-07 21:10:00.000000 CST`` for Asia/Shanghai). ``UTC``/``GMT`` and numeric offsets (``+0800``)
are exact; any other abbreviation names no zone by itself (CST is China, US Central or Cuba), so it is
resolved by the course's zone: accepted when the course's zone has that name at that time (which also
settles the repeated hour when clocks go back: ``CEST`` or ``CET``), otherwise refused with
:class:`TimestampError`, never guessed. A naive time in the repeated hour is the earlier one (fold 0).
Times are shown in the course's zone and in UTC.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from autograder.core.numbers import score
from autograder.core.timestamps import STAMP_PATTERN, TimestampError, parse_timestamp, zone_name
from autograder.gradebook.coursedir import db_url_for
from autograder.gradebook.database import _tables, session

LATE_MARKER_FILE = "lms_late_marker.txt"  # collect: the LMS itself marked the submission late (Canvas LATE_)
DAY = timedelta(days=1)
_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?\s*$", re.I
)

_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class CourseError(ValueError):
    """The course file is malformed; the message names the assignment and key."""


class Policies(dict):
    """{assignment id: LatePolicy}, and the course's ``zone`` (times without an offset are in it)."""

    def __init__(self, policies=(), zone: tzinfo = UTC) -> None:
        super().__init__(policies)
        self.zone = zone


@dataclass(frozen=True)
class Amount:
    """A share of ``max_total`` (``"10%"``) or a number of points (``1.5``)."""

    value: float
    percent: bool

    def points(self, max_total: float) -> float:
        return self.value / 100 * max_total if self.percent else self.value

    def __str__(self) -> str:
        return f"{score(self.value)}%" if self.percent else f"{score(self.value)} 分 (points)"


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
    """An aware datetime from a YAML/CSV value (:func:`parse_timestamp`); naive times are in ``zone``."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=zone) if value.tzinfo is None else value
    text = str(value).strip()
    try:
        return parse_timestamp(text, zone, what)
    except TimestampError as exc:
        if STAMP_PATTERN.match(text):  # a zone abbreviation the course's zone does not have: say why
            raise CourseError(str(exc)) from None
        raise CourseError(f"{what}: {text!r} is not a date and time (e.g. 2026-12-07 23:59)") from None


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


def load_course(path: Path | str) -> Policies:
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
    policies = Policies(zone=zone)
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
    """``2026-12-08 05:10:00 CST (Asia/Shanghai) = 2026-12-07 21:10:00 UTC``: the course's zone, then UTC."""
    local = dt.astimezone(zone)
    shown = local.strftime("%Y-%m-%d %H:%M:%S ") + (local.tzname() or "")
    if local.utcoffset() == timedelta(0) and zone_name(zone) in ("UTC", "Etc/UTC"):
        return shown
    return f"{shown} ({zone_name(zone)}) = {dt.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S')} UTC"


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
        how += f" × 满分 (max) {score(max_total)}"
    how += f" = {score(penalty)} 分"
    if policy.cap is not None and penalty > policy.cap.points(max_total):
        penalty = policy.cap.points(max_total)
        how += f"，封顶 (cap) {policy.cap} → {score(penalty)} 分"
    if penalty > raw_total:
        penalty = max(raw_total, 0.0)
        how += f"，不超过原始总分 (raw total) → {score(penalty)} 分"
    penalty = round(penalty, 4)
    return Late(
        submitted_at,
        days,
        penalty,
        f"{how}；最终 (final) {score(raw_total)} − {score(penalty)} = {score(raw_total - penalty)}；{when}",
    )


def lms_late_marker(folder: Path) -> bool:
    return (Path(folder) / LATE_MARKER_FILE).is_file()


REFUSED, REFUSED_END = "提交时间无法确定 (submission time refused: ", ")；请教师核对。"
MARKER_NOTE = "；注意 (note)：LMS 把这份提交标为迟交 (Canvas LATE_)，与记录的提交时间不一致，请教师核对"


def apply_to_result(
    res,
    policies: dict[str, LatePolicy],
    when: datetime | None,
    lms_marker: bool = False,
    time_problem: str = "",
):
    """Set ``res``'s submission time, late days, penalty and note (a ``SubmissionResult``); returns it.
    ``time_problem``: why the submission's time could not be read (TimestampError): no penalty, and the
    note says so for the instructor to check."""
    res.submitted_at = when.astimezone(UTC).isoformat() if when else ""
    policy = policies.get(res.assignment_id)
    if policy is None:
        res.late_days, res.late_penalty, res.late_note = 0, 0.0, ""
        return res
    late = apply_policy(policy, when, res.total, res.max_total)
    res.late_days, res.late_penalty, res.late_note = late.days, late.penalty, late.note
    if time_problem and when is None:
        res.late_note = f"{REFUSED}{time_problem}{REFUSED_END}{late.note}"
    if lms_marker and late.days == 0:
        res.late_note += MARKER_NOTE
    return res


def refusal(note: str) -> str:
    """The refused submission time's reason recorded in a late note ("" if none), so that re-applying
    the policy keeps saying it."""
    if note.startswith(REFUSED) and REFUSED_END in note:
        return note[len(REFUSED) :].split(REFUSED_END, 1)[0]
    return ""


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
        apply_to_result(res, policies, when, MARKER_NOTE in res.late_note, refusal(res.late_note))
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
