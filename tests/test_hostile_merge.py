"""A forged shard output against ``merge`` (issue 20, attack 6).

A shard result whose ``student_id`` was ``../../../ESCAPED`` made ``merge`` exit 0 and write a JSON and
an HTML file outside ``--out`` (failed on 000f3b4). ``merge`` now checks every id with grade's rule,
that a record matches the folder and file it was read from, and that every path it writes resolves
under OUT, before it writes anything.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder.classroom import shards
from autograder.classroom.batch import result_path
from autograder.cli.main import main as cli
from tests.written_class import ASSIGNMENT, record_written_class


@pytest.fixture(scope="module")
def shard_out(tmp_path_factory) -> Path:
    """An honest output of an unsharded run (two students; no sandbox needed)."""
    top = tmp_path_factory.mktemp("merge")
    out = top / "shard"
    record_written_class(out, {"s01": {"q1": "因为阻塞发送。"}, "s02": {}}, top / "submitted")
    return out


def _forged(shard_out: Path, tmp_path: Path, edit) -> Path:
    forged = tmp_path / "deep" / "er" / "forged"
    shutil.copytree(shard_out, forged)
    edit(forged)
    return forged


def _set(path: Path, **fields) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(fields)
    path.write_text(json.dumps(data), encoding="utf-8")


def _escaped_record(forged: Path) -> None:
    _set(result_path(forged, "s01", ASSIGNMENT), student_id="../../../ESCAPED")


def _unsafe_folder(forged: Path) -> None:
    src = result_path(forged, "s01", ASSIGNMENT)
    bad = forged / "results" / "=HYPERLINK(1)" / src.name
    bad.parent.mkdir()
    shutil.move(src, bad)
    _set(bad, student_id="=HYPERLINK(1)")


def _record_in_another_folder(forged: Path) -> None:
    """s01's record filed as s03's: merged, it would land under an id other than its folder's."""
    src, dest = result_path(forged, "s01", ASSIGNMENT), result_path(forged, "s03", ASSIGNMENT)
    dest.parent.mkdir()
    shutil.move(src, dest)


def _escaped_assignment(forged: Path) -> None:
    _set(result_path(forged, "s01", ASSIGNMENT), assignment_id="../../ESCAPED")


def _escaped_manifest_row(forged: Path) -> None:
    escaped = forged.parent / "ESCAPED" / f"{ASSIGNMENT}.json"  # results/../../ESCAPED/<assignment>.json
    escaped.parent.mkdir(parents=True)
    shutil.copy(result_path(forged, "s01", ASSIGNMENT), escaped)
    _set(escaped, student_id="../../ESCAPED")
    manifest = {"shard": 1, "of": 1, "rows": [["../../ESCAPED", ASSIGNMENT]], "graders": {}}
    (forged / shards.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize(
    "forge",
    [_escaped_record, _unsafe_folder, _record_in_another_folder, _escaped_assignment, _escaped_manifest_row],
    ids=lambda f: f.__name__.strip("_"),
)
def test_a_forged_shard_output_is_refused_and_nothing_is_written_outside_out(shard_out, tmp_path, forge):
    forged = _forged(shard_out, tmp_path, forge)
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(forged)}
    merged = tmp_path / "deep" / "er" / "merged"
    with pytest.raises(SystemExit) as stopped:
        cli(["merge", str(forged), "--out", str(merged), "--quiet"])
    assert str(stopped.value.code).startswith("error: "), stopped.value.code
    after = {p for p in tmp_path.rglob("*") if not p.is_relative_to(forged) and not p.is_relative_to(merged)}
    assert after == before, sorted(map(str, after - before))
    assert not list(merged.rglob("*.json")) and not list(merged.rglob("*.html"))


def test_an_honest_output_still_merges(shard_out, tmp_path):
    merged = tmp_path / "merged"
    assert cli(["merge", str(shard_out), "--out", str(merged), "--quiet"]) == 0
    assert result_path(merged, "s01", ASSIGNMENT).is_file() and (merged / "grades.csv").is_file()
