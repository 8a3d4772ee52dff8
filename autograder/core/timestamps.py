"""Submission times as nbgrader and ``collect`` write them (``timestamp.txt``), read without guessing a zone:
the rules are in :mod:`autograder.intake.course`'s docstring (late policy), which builds on this."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.core.files import atomic_write_text

TIMESTAMP_FILE = "timestamp.txt"


class TimestampError(ValueError):
    """A submission time that cannot be read or whose zone cannot be resolved; the message says why."""


def zone_name(zone: tzinfo) -> str:
    return getattr(zone, "key", None) or str(zone)


STAMP_PATTERN = re.compile(
    r"^(?P<time>\d{4}-\d{2}-\d{2}[ T][0-9:.,]+)\s+(?P<zone>[A-Za-z][A-Za-z0-9_/+-]*|[+-]\d{2}:?\d{2})$"
)
_UTC_NAMES = {"UTC", "GMT", "Z", "UCT", "ZULU", "UNIVERSAL"}


def _naive(text: str, what: str) -> datetime:
    try:
        dt = datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        raise TimestampError(f"{what}: {text!r} is not a date and time") from None
    if dt.tzinfo is not None:
        raise TimestampError(f"{what}: {text!r} has two zones")
    return dt


def parse_timestamp(text: str, zone: tzinfo = UTC, what: str = TIMESTAMP_FILE) -> datetime:
    """The instant, in UTC (an aware time in a repeated hour never compares equal across zones), of
    :func:`_parse_timestamp`."""
    return _parse_timestamp(text, zone, what).astimezone(UTC)


def _parse_timestamp(text: str, zone: tzinfo, what: str) -> datetime:
    """An aware datetime from a submission time as nbgrader or ``collect`` write it (module docstring):
    ISO 8601 (an offset or ``Z`` as written; none: ``zone``), or ``<date> <time> <zone>`` with a numeric
    offset, ``UTC``, an IANA name, or an abbreviation that ``zone`` has at that time. TimestampError
    otherwise (an abbreviation of another zone is never guessed)."""
    text = str(text).strip()
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        dt = None
    if dt is not None:
        return dt.replace(tzinfo=zone, fold=0) if dt.tzinfo is None else dt
    m = STAMP_PATTERN.match(text)
    if not m:
        raise TimestampError(f"{what}: {text[:60]!r} is not a date and time (e.g. 2026-12-07 21:10:00 UTC)")
    local, abbr = _naive(m.group("time"), what), m.group("zone")
    if abbr.upper() in _UTC_NAMES:
        return local.replace(tzinfo=UTC)
    if abbr[0] in "+-":
        sign = -1 if abbr[0] == "-" else 1
        digits = abbr[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        return local.replace(tzinfo=timezone(sign * offset))
    for fold in (0, 1):  # the course's zone under that name at that time (fold: the repeated hour)
        candidate = local.replace(tzinfo=zone, fold=fold)
        if candidate.tzname() == abbr:
            return candidate
    if "/" in abbr:
        try:
            return local.replace(tzinfo=ZoneInfo(abbr))
        except (ZoneInfoNotFoundError, ValueError):
            pass
    actual = local.replace(tzinfo=zone).tzname()
    raise TimestampError(
        f"{what}: {text[:60]!r} is in '{abbr}', but the course's timezone {zone_name(zone)} is called "
        f"'{actual}' at that time. A zone abbreviation names no zone by itself (CST is China, US Central "
        f"or Cuba), so it is not guessed: set 'timezone:' in course.yaml to the zone that wrote it "
        f"(nbgrader's c.Exchange.timezone), or write the time with an offset"
    )


def read_submission_time(folder: Path, zone: tzinfo = UTC) -> datetime | None:
    """nbgrader's ``timestamp.txt`` in a submission folder, as an aware UTC datetime; None if there is
    none; TimestampError if it cannot be read or its zone resolved (:func:`parse_timestamp`, times
    without an offset in ``zone``, the course's)."""
    path = Path(folder) / TIMESTAMP_FILE
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8").strip()[:100]
    except (OSError, UnicodeDecodeError) as exc:
        raise TimestampError(f"{TIMESTAMP_FILE}: unreadable ({type(exc).__name__})") from None
    return parse_timestamp(text, zone).astimezone(UTC)


def write_submission_time(folder: Path, when: datetime) -> None:
    """Write ``timestamp.txt`` in nbgrader's format (``2026-12-07 15:50:00.000000 UTC``)."""

    stamp = when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"
    atomic_write_text(Path(folder) / TIMESTAMP_FILE, stamp + "\n")
