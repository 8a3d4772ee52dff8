"""Issue 10, output escaping: text a student controls reaches the instructor's spreadsheet, terminal and
browser only as inert text (``autograder/core/safe_text.py`` at every write point).

Student folders named like spreadsheet formulas (OWASP CSV injection: ``=``, ``+``, ``-``, ``@``, tab,
carriage return), terminal escape sequences (ESC/CSI, an OSC-52 clipboard write, BEL, a carriage return
that overwrites the row with a forged ``PASS``), a right-to-left override, and HTML, are graded with the
``grade`` command; grades.csv, the class table printed by ``grade`` and ``export``, and the feedback pages
must hold none of it in active form.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core.safe_text import FORMULA_START, csv_cell, html_text, terminal_text

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENT = "16-asymmetric-pipeline"
HOSTILE_IDS = [
    '=HYPERLINK("http://127.0.0.1:9/x","open")',
    "+SUM(1,1)",
    "-2+3",
    "@SUM(1)",
    "\tTAB",
    "\rCR",
    "\x1b]52;c;cm0gLXJmIH4=\x07clip",  # OSC-52: write the instructor's clipboard
    "\x1b[2J\x1b[Hclear",  # CSI: clear the screen
    "mallory\r16-asymmetric-pipeline  2  2  2  2  2  10/10  PASS",  # overwrite the row with a forged PASS
    "\u202eSSAP-evil",  # right-to-left override
    "<img src=x onerror=alert(1)>",
]
CONTROL = (
    {chr(c) for c in range(0x20)} | {"\x7f"} | {chr(c) for c in range(0x80, 0xA0)} | {"\u202e", "\u2066"}
)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile-output")
    subs = tmp / "subs"
    for sid in HOSTILE_IDS:
        folder = subs / sid / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "asymmetric_pipeline.ipynb").write_text("{}", encoding="utf-8")
    out = tmp / "out"
    grade = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        timeout=600,
    )
    assert grade.returncode == 0, grade.stderr.decode("utf-8", "replace")[-3000:]
    export = subprocess.run(
        [sys.executable, "-m", "autograder", "export", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        timeout=300,
    )
    assert export.returncode == 0, export.stderr.decode("utf-8", "replace")[-3000:]
    return out, grade, export


def test_grades_csv_has_no_formula_and_no_control_characters(graded):
    out, _, _ = graded
    text = (out / "grades.csv").read_text(encoding="utf-8")
    assert not CONTROL & set(text) - {"\n"}, sorted(CONTROL & set(text) - {"\n"})
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) > len(HOSTILE_IDS)  # a row for every folder (and the header)
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START), row


def test_terminal_output_has_no_control_characters(graded):
    _, grade, export = graded
    for name, proc in (("grade", grade), ("export", export)):
        for stream in (proc.stdout, proc.stderr):
            text = stream.decode("utf-8")
            bad = sorted(CONTROL & set(text) - {"\n"})
            assert not bad, f"{name} printed {bad!r}"
    table = grade.stdout.decode("utf-8")
    assert "\\x1b" in table and "\\u202e" in table  # shown, visibly, not acted on
    assert not any(line.rstrip().endswith("PASS") for line in table.splitlines() if "mallory" in line)


def test_feedback_pages_escape_student_ids(graded):
    out, _, _ = graded
    pages = [p.read_text(encoding="utf-8") for p in (out / "feedback").rglob("*.html")]
    assert pages
    for page in pages:
        assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in "".join(pages)


@pytest.mark.parametrize(
    "raw, csv_form",
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@A1", "'@A1"),
        ("\t=1", "\\x09=1"),
        ("\r=1", "\\x0d=1"),
        ("alice", "alice"),
        ("a=b", "a=b"),
        ("\ud800x", "\ufffdx"),
    ],
)
def test_csv_cell(raw, csv_form):
    assert csv_cell(raw) == csv_form


def test_terminal_and_html_text():
    assert terminal_text("a\x1b[31mred\x07\u202e") == "a\\x1b[31mred\\x07\\u202e"
    assert terminal_text("学生 ✔ café") == "学生 ✔ café"  # printable text untouched
    assert terminal_text("x" * 50, 10) == "xxxxxxx..."
    assert html_text("<b a='1'>&\ud800") == "&lt;b a=&#x27;1&#x27;&gt;&amp;\ufffd"
