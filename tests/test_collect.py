"""``python -m autograder collect``: LMS zips → DEST/<student>/<assignment>/<notebook>.ipynb, safely."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.intake import collect as collect_mod
from autograder.intake.collect import collect

ROOT = Path(__file__).resolve().parent.parent
A = "16-asymmetric-pipeline"
NB = "asymmetric_pipeline.ipynb"


def nb(tag: str) -> bytes:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [{"cell_type": "markdown", "metadata": {}, "source": tag}],
        }
    ).encode()


def make_zip(path: Path, entries: list[tuple], compression=zipfile.ZIP_DEFLATED) -> Path:
    """entries: (name, data[, date_time[, unix mode]])"""
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for entry in entries:
            name, data = entry[0], entry[1]
            info = zipfile.ZipInfo(name, date_time=entry[2] if len(entry) > 2 else (2024, 5, 1, 12, 0, 0))
            info.compress_type = compression
            if len(entry) > 3:
                info.external_attr = entry[3] << 16
            zf.writestr(info, data)
    return path


def files_under(top: Path) -> list[str]:
    """The files collect wrote, without the submission time and LMS marker beside each notebook."""
    skip = {collect_mod.TIMESTAMP_FILE, collect_mod.LATE_MARKER_FILE}
    return sorted(
        str(p.relative_to(top))
        for p in top.rglob("*")
        if p.is_file() and p.name not in skip and p != top / collect_mod.ROSTER_FILE
    )


def test_canvas_layout(tmp_path):
    z = make_zip(
        tmp_path / "canvas.zip",
        [
            ("zhangsan_12345_67890_asymmetric_pipeline.ipynb", nb("zs")),
            ("lisi_LATE_23456_78901_asymmetric_pipeline-1.ipynb", nb("ls")),
            ("wangwu_34567_89012_Copy of asymmetric_pipeline (2).ipynb", nb("ww")),
            ("zhangsan_12345_67890_notes.txt", b"not a notebook"),
        ],
    )
    log = collect([z], tmp_path / "dest", A)
    # the student id is Canvas's user id (unique; Canvas's gradebook calls it ID), the name slug is kept
    assert files_under(tmp_path / "dest") == [f"12345/{A}/{NB}", f"23456/{A}/{NB}", f"34567/{A}/{NB}"]
    assert (tmp_path / "dest" / "23456" / A / NB).read_bytes() == nb("ls")
    assert any("1 entries that are not notebooks" in line for line in log)
    assert log[-1].startswith("collected 3 notebook(s) for 3 student(s)")
    roster = (tmp_path / "dest" / collect_mod.ROSTER_FILE).read_text(encoding="utf-8").splitlines()
    assert roster == [
        "student_id,name,canvas_id",
        "12345,zhangsan,12345",
        "23456,lisi,23456",
        "34567,wangwu,34567",
    ]


def test_two_students_with_the_same_canvas_name_stay_apart(tmp_path):
    """Canvas's name slug is not unique (two 张伟 are both ``zhangwei``); the user id is."""
    z = make_zip(
        tmp_path / "canvas.zip",
        [
            ("zhangwei_111_1_asymmetric_pipeline.ipynb", nb("first"), (2026, 12, 7, 9, 0, 0)),
            ("zhangwei_222_2_asymmetric_pipeline.ipynb", nb("second"), (2026, 12, 7, 10, 0, 0)),
        ],
    )
    collect([z], tmp_path / "dest", A)
    assert (tmp_path / "dest" / "111" / A / NB).read_bytes() == nb("first")
    assert (tmp_path / "dest" / "222" / A / NB).read_bytes() == nb("second")
    # --canvas-ids login keeps the old layout (and shows why it is not the default: one is lost)
    log = collect([z], tmp_path / "by-login", A, ids="login")
    assert files_under(tmp_path / "by-login") == [f"zhangwei/{A}/{NB}"]
    assert any(line.startswith("CHOSE zhangwei") for line in log)
    roster = (tmp_path / "by-login" / collect_mod.ROSTER_FILE).read_text(encoding="utf-8")
    assert "zhangwei,zhangwei,222" in roster


def test_roster_from_collect_and_canvas_export_match_automatically(tmp_path):
    """The folders are Canvas user ids, so collect's roster.csv and Canvas's own gradebook export (no
    student_id column: its ID column is the folder id) both match without editing."""
    from autograder.reporting.lms import read_roster

    z = make_zip(tmp_path / "c.zip", [("zhangsan_12345_67890_asymmetric_pipeline.ipynb", nb("zs"))])
    collect([z], tmp_path / "dest", A)
    mine = read_roster(tmp_path / "dest" / collect_mod.ROSTER_FILE)
    assert [(r["student_id"], r["canvas_id"], r["name"]) for r in mine] == [("12345", "12345", "zhangsan")]
    canvas = tmp_path / "canvas-gradebook.csv"
    canvas.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Lesson 16 (4711)\n"
        "    Points Possible,,,,,10\n"
        "Zhang San,12345,2026001,zhangsan,PP-1,\n",
        encoding="utf-8",
    )
    rows = read_roster(canvas)
    assert [(r["student_id"], r["canvas_id"], r["sis_login_id"]) for r in rows] == [
        ("12345", "12345", "zhangsan")
    ]


def test_folder_layouts_with_and_without_a_common_top(tmp_path):
    z1 = make_zip(tmp_path / "a.zip", [("s1/whatever.ipynb", nb("s1")), (f"s2/{A}/{NB}", nb("s2"))])
    z2 = make_zip(
        tmp_path / "b.zip", [("submissions/s3/x.ipynb", nb("s3")), ("submissions/s4/y.ipynb", nb("s4"))]
    )
    collect([z1, z2], tmp_path / "dest", A)
    assert files_under(tmp_path / "dest") == [f"s{i}/{A}/{NB}" for i in range(1, 5)]
    assert (tmp_path / "dest" / "s3" / A / NB).read_bytes() == nb("s3")


def test_later_timestamp_wins_and_is_logged(tmp_path):
    old = make_zip(
        tmp_path / "old.zip", [("zhangsan_1_2_asymmetric_pipeline.ipynb", nb("old"), (2024, 5, 1, 9, 0, 0))]
    )
    new = make_zip(
        tmp_path / "new.zip",
        [
            ("zhangsan_1_3_asymmetric_pipeline-1.ipynb", nb("new"), (2024, 5, 2, 9, 0, 0)),
            ("lisi_4_5_asymmetric_pipeline.ipynb", nb("lisi"), (2024, 5, 2, 9, 0, 0)),
        ],
    )
    dest = tmp_path / "dest"
    log = collect([new, old], dest, A, ids="login")  # order on the command line does not matter: time does
    target = dest / "zhangsan" / A / NB
    assert target.read_bytes() == nb("new")
    chose = [line for line in log if line.startswith("CHOSE zhangsan")]
    assert len(chose) == 1 and "new.zip" in chose[0].split(" over ")[0] and "old.zip" in chose[0]
    # collecting the older download again later never replaces the newer file
    log = collect([old], dest, A, ids="login")
    assert target.read_bytes() == nb("new")
    assert any(line.startswith("KEEP  zhangsan") for line in log)
    # the same content again is a no-op
    log = collect([new], dest, A, ids="login")
    assert any(line.startswith("SAME  zhangsan") for line in log)


def test_same_student_twice_in_one_zip(tmp_path):
    z = make_zip(
        tmp_path / "z.zip",
        [
            ("s1/a.ipynb", nb("first"), (2024, 1, 1, 0, 0, 0)),
            ("s1/b.ipynb", nb("second"), (2024, 1, 1, 0, 0, 2)),
        ],
    )
    log = collect([z], tmp_path / "dest", A)
    assert (tmp_path / "dest" / "s1" / A / NB).read_bytes() == nb("second")
    assert any("CHOSE s1" in line and "b.ipynb" in line.split(" over ")[0] for line in log)


@pytest.mark.parametrize(
    "name",
    [
        "../evil.ipynb",
        "../../evil.ipynb",
        "/tmp/evil.ipynb",
        "s1/../../evil.ipynb",
        "C:\\evil.ipynb",
        "..\\..\\evil.ipynb",
        "s1\\..\\..\\evil.ipynb",
        "s1/./../../evil.ipynb",
    ],
)
def test_path_traversal_and_absolute_paths_are_refused(tmp_path, name):
    dest = tmp_path / "deep" / "dest"
    z = make_zip(tmp_path / "t.zip", [(name, nb("evil")), ("good_1_2_asymmetric_pipeline.ipynb", nb("ok"))])
    log = collect([z], dest, A)
    assert files_under(tmp_path / "deep") == [f"dest/1/{A}/{NB}", "dest/roster.csv"]
    assert not Path("/tmp/evil.ipynb").exists() or Path("/tmp/evil.ipynb").read_bytes() != nb("evil")
    assert any(line.startswith("SKIP") for line in log)


def test_symlinks_and_special_files_are_refused(tmp_path):
    z = make_zip(
        tmp_path / "s.zip",
        [
            ("s1/link.ipynb", b"/etc/passwd", (2024, 1, 1, 0, 0, 0), stat.S_IFLNK | 0o777),
            ("s2/fifo.ipynb", b"", (2024, 1, 1, 0, 0, 0), stat.S_IFIFO | 0o644),
            ("s3/ok.ipynb", nb("ok"), (2024, 1, 1, 0, 0, 0), stat.S_IFREG | 0o644),
        ],
    )
    log = collect([z], tmp_path / "dest", A)
    assert files_under(tmp_path / "dest") == [f"s3/{A}/{NB}"]
    assert any("symbolic link" in line for line in log) and any("not a regular file" in line for line in log)


def test_existing_symlink_in_dest_is_not_followed(tmp_path):
    dest = tmp_path / "dest"
    (dest / "s1" / A).mkdir(parents=True)
    outside = tmp_path / "outside.ipynb"
    outside.write_bytes(b"precious")
    (dest / "s1" / A / NB).symlink_to(outside)
    log = collect([make_zip(tmp_path / "z.zip", [("s1/x.ipynb", nb("x"))])], dest, A)
    assert outside.read_bytes() == b"precious"
    assert any("not a regular file" in line for line in log)


def test_zip_bomb_by_ratio(tmp_path):
    z = make_zip(tmp_path / "bomb.zip", [("s1/x.ipynb", b"\0" * (30 << 20))])
    log = collect([z], tmp_path / "dest", A)
    assert files_under(tmp_path / "dest") == []
    assert any("ratio" in line for line in log)


def test_size_caps_do_not_trust_the_header(tmp_path, monkeypatch):
    monkeypatch.setattr(collect_mod, "MAX_FILE_BYTES", 4000)
    monkeypatch.setattr(collect_mod, "MAX_TOTAL_BYTES", 6000)
    monkeypatch.setattr(collect_mod, "MAX_RATIO", 10**9)
    big = os.urandom(5000)
    z = make_zip(
        tmp_path / "z.zip",
        [("s1/x.ipynb", big), ("s2/x.ipynb", os.urandom(3000)), ("s3/x.ipynb", os.urandom(3500))],
    )
    # a header that lies either way never yields more than the cap: claiming more than the cap is
    # refused by our reader, claiming less is cut short (and fails its CRC) by zipfile itself
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("s1/x.ipynb")
        with pytest.raises(collect_mod.Refused):
            collect_mod._read_capped(zf, info, [10**9])
        info.file_size = 10
        with pytest.raises((collect_mod.Refused, zipfile.BadZipFile)):
            collect_mod._read_capped(zf, info, [10**9])
    log = collect([z], tmp_path / "dest", A)
    assert files_under(tmp_path / "dest") == [f"s2/{A}/{NB}"]  # s1 over the file cap, s3 over the total
    assert any("s1/x.ipynb: over" in line for line in log)
    assert any("total uncompressed size" in line for line in log)


def test_too_many_entries_and_nested_zips_and_garbage(tmp_path, monkeypatch):
    monkeypatch.setattr(collect_mod, "MAX_ENTRIES", 5)
    many = make_zip(tmp_path / "many.zip", [(f"s{i}/x.ipynb", nb(str(i))) for i in range(6)])
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("s9/x.ipynb", nb("inner"))
    nested = make_zip(tmp_path / "nested.zip", [("s8/inner.zip", inner.getvalue())])
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"PK\x03\x04 this is not a zip")
    log = collect([many, nested, garbage, tmp_path / "missing.zip"], tmp_path / "dest", A)
    assert files_under(tmp_path / "dest") == []
    text = "\n".join(log)
    assert "6 entries, over the limit" in text and "nested zip" in text
    assert "garbage.zip: not a readable zip" in text and "missing.zip: not a readable zip" in text


def test_unsafe_ids_and_unknown_layouts_are_refused(tmp_path):
    z = make_zip(
        tmp_path / "z.zip",
        [
            ("notes_without_ids.ipynb", nb("a")),
            ("a/b/c/d.ipynb", nb("b")),
            ("-rf/x.ipynb", nb("c")),
            ("ok/x.ipynb", nb("d")),
        ],
    )
    log = collect([z], tmp_path / "dest", A)
    assert files_under(tmp_path / "dest") == [f"ok/{A}/{NB}"]
    assert sum(line.startswith("SKIP") for line in log) == 3
    with pytest.raises(SystemExit):
        collect([z], tmp_path / "dest", "../escape")


def test_cli(tmp_path):
    z = make_zip(tmp_path / "canvas.zip", [("zhangsan_1_2_asymmetric_pipeline.ipynb", nb("zs"))])
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "collect",
            str(z),
            "--dest",
            str(tmp_path / "d"),
            "--assignment",
            A,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "OK    1: " in run.stdout
    assert "zip entry times carry no time zone: read as UTC" in run.stdout
    assert (tmp_path / "d" / "1" / A / NB).read_bytes() == nb("zs")
