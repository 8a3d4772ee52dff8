"""Every lesson figure renders every glyph with the course's own font, on a machine without a CJK font.

Each notebook runs in a subprocess (``tests/glyph_probe.py``) with a fresh matplotlib config and font
cache (``MPLCONFIGDIR``), an empty fontconfig configuration and a fresh ``HOME``, and matplotlib's font
list cut down to the fonts bundled with matplotlib: fonts-noto-cjk installed system-wide (as on CI)
cannot help. A missing glyph is an error there. The control proves the setup can fail: Chinese text
drawn without pipelab's font is missing its glyphs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core.registry import lessons

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "glyph_probe.py"
SOURCE_NOTEBOOKS = [found.source for found in lessons().values()]


def _probe(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    empty = tmp_path / "fonts.conf"
    empty.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig></fontconfig>\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MPLCONFIGDIR": str(tmp_path / "mplconfig"),
        "FONTCONFIG_FILE": str(empty),
        "MPLBACKEND": "Agg",
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        [sys.executable, str(PROBE), *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("mode", ["--bare", "--bare-silenced"])
def test_control_chinese_without_course_font_is_missing_glyphs(tmp_path, mode):
    """The harness can fail: with system fonts hidden, plain matplotlib has no glyph for 中文, and
    silencing matplotlib's warning (as pipelab once did) does not hide it."""
    r = _probe(tmp_path, mode, "气泡率与微批次数")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "missing from" in r.stderr


def test_control_latin_renders(tmp_path):
    r = _probe(tmp_path, "--bare", "bubble ratio vs m")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["figures"] == {"bare": 1}
    assert Path(report["sans_serif_file"]).name == "DejaVuSans.ttf"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", SOURCE_NOTEBOOKS, ids=[p.parent.name for p in SOURCE_NOTEBOOKS])
def test_every_lesson_figure_has_every_glyph(tmp_path, notebook):
    r = _probe(tmp_path, str(notebook))
    assert r.returncode == 0, f"a figure lacks a glyph or the notebook failed:\n{r.stderr[-4000:]}"
    report = json.loads(r.stdout.strip().splitlines()[-1])
    if not report["figures"].get(notebook.name):
        return  # figures are optional (docs/ARCHITECTURE.md, "Add a lesson"); the notebook ran cleanly
    font = Path(report["sans_serif_file"])
    assert font.name == "NotoSansCJKsc-Regular.otf" and "mplfonts" in font.parts, (
        f"sans-serif text should use the course font shipped by mplfonts, got {font}"
    )
