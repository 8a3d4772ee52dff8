"""The package layout's rules hold: import-linter's contracts (pyproject.toml, ``[tool.importlinter]``) are
kept and can fail, the sandbox worker stands alone, and no module grows past ~500 lines without saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).parent / "lint-imports"
MAX_LINES = 500
LONG_REASON = "Longer than 500 lines because"  # the phrase a long module's docstring must carry


def _lint(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def test_contracts_are_kept():
    r = _lint(ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "3 kept, 0 broken" in r.stdout


@pytest.fixture()
def copy(tmp_path) -> Path:
    shutil.copytree(
        ROOT / "autograder", tmp_path / "autograder", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("core/layout.py", "import autograder.grading.engine", "Packages by job"),  # upward
        ("sandbox/isolation.py", "import autograder.classroom.batch", "Packages by job"),  # upward
        ("reporting/feedback.py", "import autograder.intake.course", "Packages by job"),  # sideways
        ("sandbox/worker.py", "import autograder.testing", "The sandbox worker"),
        ("classroom/sharding.py", "import autograder.classroom.shards", "No import cycle"),
    ],
)
def test_a_deliberate_bad_import_breaks_a_contract(copy, module, line, contract):
    path = copy / "autograder" / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}  # deliberately wrong\n", encoding="utf-8")
    r = _lint(copy)
    assert r.returncode != 0, r.stdout[-2000:]
    broken = r.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, r.stdout[-3000:]


def test_no_long_module_without_a_reason():
    long = []
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        if "lessons" in path.relative_to(ROOT / "autograder").parts:
            continue
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_LINES and LONG_REASON not in text.split('"""', 2)[1]:
            long.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert not long, f"over {MAX_LINES} lines without '{LONG_REASON} …' in the docstring: {long}"
