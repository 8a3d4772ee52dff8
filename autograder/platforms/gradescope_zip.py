"""The Gradescope autograder zip (:mod:`autograder.platforms.gradescope` describes Gradescope's contract):
``setup.sh`` and ``run_autograder``, ``requirements.txt`` (the grading path's distributions pinned at the
versions installed here), ``gradescope.json``, and the engine, the lesson's rubric, hidden tests and release.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from pathlib import Path

from autograder.core.files import atomic_write
from autograder.core.layout import REPO
from autograder.core.registry import lessons
from autograder.grading import anchors
from autograder.grading.assignment import load_assignment
from autograder.platforms.gradescope_run import CONFIG_NAME, SECRET_NAME
from autograder.testing.seeding import grader_fingerprint

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
#: the modules run_autograder imports (the sandbox worker imports numpy); the distributions they load,
#: plus LAZY_DISTRIBUTIONS (imported inside functions on the grading path), are what setup.sh installs,
#: pinned with their dependencies at the versions installed where the zip is built
GRADING_MODULES = (
    "autograder.platforms.gradescope",
    "autograder.grading.engine",
    "autograder.grading.written",
    "autograder.grading.notebook",
    "autograder.gradebook.recording",
    "numpy",
)


# notebook._upgrade (nbformat 3 notebooks); the sandbox's seccomp filter (seccomp_policy, at sandbox start);
# the written scorer reads the review page's rendering (answer_text.visible: nbconvert's markdown, nh3)
# (jsonschema, which nbconvert's nbformat loads, imports the format checkers of its format-nongpl extra
# whenever they are installed, as in the course environment)
LAZY_DISTRIBUTIONS = ("nbformat", "pyseccomp", "nbconvert", "nh3", "jsonschema[format-nongpl]")
#: imported on the grading path only when installed (``try: import … except ImportError``: nbconvert's
#: CSS preprocessor looks for the notebook package, BeautifulSoup for an encoding detector), so not pinned
OPTIONAL_IMPORTS = ("notebook", "charset-normalizer")
DEFAULT_ADDRESS_SPACE_MB = 512  # per sandboxed process (virtual memory), on Gradescope
ZIP_DATE = (2020, 1, 1, 0, 0, 0)  # fixed entry times: the same inputs build the same zip

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this once per submission, with cwd /autograder (see autograder/platforms/gradescope.py).
ROOT="${GRADESCOPE_ROOT:-/autograder}"
SOURCE="$ROOT/source"
PY="${GRADESCOPE_PYTHON:-$ROOT/venv/bin/python}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
cd "$SOURCE" 2>/dev/null || echo "run_autograder: $SOURCE is missing"
PYTHONPATH="$SOURCE" PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg \
  "$PY" -m autograder.platforms.gradescope run --root "$ROOT"
rc=$?
if [ ! -s "$RESULTS" ]; then
  # the grader never got to write its results (no interpreter, killed, out of memory): still valid JSON
  echo "run_autograder: the grader exited with status $rc without writing $RESULTS"
  printf '%s\n' "{\"score\": 0, \"output\": \"The autograder stopped before grading this submission (exit status $rc). Nothing was graded; please tell your instructor.\", \"output_format\": \"text\", \"visibility\": \"visible\", \"stdout_visibility\": \"hidden\", \"tests\": [{\"name\": \"Autograder error\", \"status\": \"failed\", \"output\": \"The grader did not start or was stopped (exit status $rc).\", \"visibility\": \"visible\"}]}" > "$RESULTS"
fi
exit 0
"""

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu, as root; see
# autograder/platforms/gradescope.py). It installs what grading needs and nothing else: Python >= 3.11 in a
# virtual environment with the pinned requirements, and bubblewrap for the sandbox where the container
# allows it (the grader reports which isolation it got in every result).
set -euo pipefail
ROOT="${GRADESCOPE_ROOT:-/autograder}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends bubblewrap util-linux ca-certificates libseccomp2 \
  || echo "setup.sh: bubblewrap could not be installed; grading will use the fallback isolation"
PY=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null \
     && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    PY="$(command -v "$candidate")"; break
  fi
done
if [ -z "$PY" ]; then
  apt-get install -y --no-install-recommends python3.11 python3.11-venv \
    || apt-get install -y --no-install-recommends python3.12 python3.12-venv
  PY="$(command -v python3.11 || command -v python3.12)"
fi
"$PY" -m venv "$ROOT/venv" || { apt-get install -y --no-install-recommends "$(basename "$PY")-venv"; "$PY" -m venv "$ROOT/venv"; }
"$ROOT/venv/bin/python" -m pip install --no-cache-dir --upgrade pip
"$ROOT/venv/bin/python" -m pip install --no-cache-dir -r "$ROOT/source/requirements.txt"
cd "$ROOT/source"
PYTHONPATH="$ROOT/source" "$ROOT/venv/bin/python" -m autograder.platforms.gradescope check
"""


# ---------------------------------------------------------------------------------------------------
# building the zip
# ---------------------------------------------------------------------------------------------------


def grading_distributions() -> list[str]:
    """The installed distributions that importing GRADING_MODULES loads (in a fresh interpreter, so
    nothing this process imported counts), plus LAZY_DISTRIBUTIONS. The course library must not be one."""

    code = (
        "import importlib, json, sys\n"
        "before = set(sys.modules)\n"  # what the interpreter loaded at start-up (site hooks) does not count
        "for m in sys.argv[1:]: importlib.import_module(m)\n"
        "print(json.dumps(sorted({n.split('.')[0] for n in set(sys.modules) - before})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *GRADING_MODULES],
        cwd=REPO.root,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    names = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    if "pipelab" in names:
        raise RuntimeError("the grading path imports pipelab, which the sandbox must not expose")
    owners = packages_distributions()
    dists = {d for n in names - {"autograder"} for d in owners.get(n, [])}
    return sorted(dists | set(LAZY_DISTRIBUTIONS), key=str.lower)


def pinned_requirements(roots: list[str] | None = None) -> list[str]:
    """``name==version`` for ``roots`` (default: :func:`grading_distributions`) and everything they
    require (markers evaluated here), sorted."""

    from packaging.requirements import Requirement

    pins: dict[str, str] = {}
    done: set[tuple[str, str]] = set()  # (distribution, extra) pairs followed
    # (name, extras asked for): a requirement such as jsonschema[format-nongpl] brings its extra's
    # requirements too (nbconvert's stack asks for that one, and grading imports what it brings)
    todo: list[tuple[str, frozenset]] = []
    for root in grading_distributions() if roots is None else roots:
        req = Requirement(root)
        todo.append((req.name, frozenset(req.extras)))
    while todo:
        name, extras = todo.pop()
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            raise SystemExit(f"error: {name} is not installed here; cannot pin it") from None
        key = dist.metadata["Name"]
        wanted = {e for e in ("", *extras) if (key.lower(), e) not in done}
        if not wanted:
            continue
        done |= {(key.lower(), e) for e in wanted}
        pins[key] = dist.version
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in wanted):
                todo.append((req.name, frozenset(req.extras)))
    return [f"{k}=={v}" for k, v in sorted(pins.items(), key=lambda kv: kv[0].lower())]


def _zip_members(assignment) -> dict[str, Path | bytes]:
    """The engine's modules (every package, no lesson data), this lesson's data folder (rubric, hidden
    tests and the corpus parts its learned reader learns from: not its mistakes, held-out parts or goldens)
    and its release notebook, at their repository paths."""
    package = REPO.root / "autograder"
    members: dict[str, Path | bytes] = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(REPO.root)
        if path.name == "conftest.py" or REPO.lesson_data in path.parents or "__pycache__" in rel.parts:
            continue  # pytest wiring for the repository's own tests; other lessons' data
        members[rel.as_posix()] = path
    for path in sorted([*assignment.directory.glob("*.py"), assignment.directory / "rubric.yaml"]):
        if path.name != "conftest.py":
            members[path.relative_to(REPO.root).as_posix()] = path
    members[assignment.release.relative_to(REPO.root).as_posix()] = assignment.release
    # the learned reader's corpus (grading/anchors.py): the parts it learns from and the figures naming them,
    # so that Gradescope suggests what the local grader does (never the held-out parts)
    parts = anchors.training_parts(assignment.directory / "written_corpus")
    for path in [*parts, REPO.corpus_figures] if parts else []:
        members[path.relative_to(REPO.root).as_posix()] = path
    return members


def build(
    assignment_id: str,
    out_dir: Path,
    *,
    isolation: str = "bwrap",
    visibility: str = "visible",
    written_visibility: str = "after_published",
    address_space_mb: int = DEFAULT_ADDRESS_SPACE_MB,
    secret: bytes | None = None,
) -> Path:
    """Write ``out_dir/<assignment>-gradescope.zip`` and return its path. With a course ``secret``
    (``autograder.testing.seeding``) the zip carries it as ``course_secret`` (mode 0600: root's, and the sandbox
    never mounts the source folder), and each student's random hidden cases are seeded from it and their
    Gradescope user id (``submission_metadata.json``)."""

    known = {name: found.directory for name, found in lessons().items()}
    if assignment_id not in known:
        raise SystemExit(f"error: unknown assignment {assignment_id!r} (known: {', '.join(known)})")
    for v in (visibility, written_visibility):
        if v not in VISIBILITIES:
            raise SystemExit(f"error: visibility must be one of {', '.join(VISIBILITIES)}, not {v!r}")
    assignment = load_assignment(known[assignment_id])
    config = {
        "assignment": assignment.id,
        "isolation": isolation,
        "visibility": visibility,
        "written_visibility": written_visibility,
        "grader": grader_fingerprint(assignment.fingerprint, secret),
        # Gradescope's container has 768 MB by default: a submission's processes must stay well below
        # it, or a memory bomb gets the whole container killed instead of a failed test
        "limits": {"address_space_bytes": int(address_space_mb) << 20},
    }
    files: dict[str, Path | bytes] = {
        "setup.sh": SETUP_SH.encode(),
        "run_autograder": RUN_AUTOGRADER.encode(),
        "requirements.txt": ("\n".join(pinned_requirements()) + "\n").encode(),
        CONFIG_NAME: (json.dumps(config, indent=1) + "\n").encode(),
        **_zip_members(assignment),
    }
    if secret is not None:
        files[SECRET_NAME] = secret + b"\n"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{assignment.id}-gradescope.zip"

    def write_zip(fh) -> None:
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name in sorted(files):
                data = files[name]
                info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
                executable = name in ("setup.sh", "run_autograder")
                mode = 0o755 if executable else 0o600 if name == SECRET_NAME else 0o644
                info.external_attr = (mode | stat.S_IFREG) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data if isinstance(data, bytes) else data.read_bytes())

    atomic_write(target, write_zip)
    return target
