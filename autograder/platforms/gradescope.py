"""The same grader as a Gradescope autograder.

    python -m autograder gradescope ASSIGNMENT --out dist/     # writes dist/<assignment>-gradescope.zip

The zip follows Gradescope's autograder contract (gradescope/autograder_samples, docs/specs.md): at its
root ``setup.sh`` (run once when Gradescope builds the image) and an executable ``run_autograder``
(copied to ``/autograder/run_autograder`` and run per submission with cwd ``/autograder``); the zip is
unpacked into ``/autograder/source``, the submission is in ``/autograder/submission`` and the results go
to ``/autograder/results/results.json``. ``$GRADESCOPE_ROOT`` replaces ``/autograder`` (tests), and
``$GRADESCOPE_PYTHON`` the interpreter ``setup.sh`` installs (``/autograder/venv/bin/python``).

What the zip holds: the engine (``autograder/*.py``), the assignment's rubric and hidden tests, its
release notebook (the grader's reference for cell roles and checksums), ``requirements.txt`` (the engine's
Python dependencies pinned to the versions this build ran with) and ``gradescope.json`` (assignment,
isolation, visibility). Never the solutions notebook or the mistakes catalogue. The zip requires a
sandbox unless built with ``--isolation auto``/``none``: bubblewrap, or where the container refuses
user namespaces (Docker's default seccomp profile without ``CAP_SYS_ADMIN``) the ``uid`` isolation
(student code as a uid of its own under a seccomp filter, the autograder's files made unreadable to it:
:func:`lock_down`, ``sandbox.Worker``); ``setup.sh`` fails the image build if neither can run there
(Gradescope runs the grader as root, so the fallback would run student code as root beside the hidden
tests).

``run_autograder`` finds the notebook in the submission (any name, or inside a zip), grades it with the
local engine and sandbox (``engine.grade_notebook``, exactly what ``python -m autograder grade`` runs)
and writes ``results.json``:

* one test per hidden test: ``name`` (item: test), ``score``/``max_score`` (its weighted share of the
  item's points), ``status``, ``output`` (the message the feedback page shows: never hidden inputs),
  ``visibility``, ``tags`` (item id, ``edge``), ``number`` (item.test);
* written items (Q1–Q3) are **graded by hand in Gradescope**: add them as manually graded questions to
  the assignment's outline with their rubric points; the autograder's own points are the code items'.
  Each written item still gets an informational entry without a score (the static-review suggestion with
  its quoted evidence, as in formgrader's comment box), visible to students ``after_published`` by
  default, so a student sees the suggestion together with the TA's score;
* extra-credit items (rubric ``extra_credit: true``): their tests have ``max_score`` 0, so what they
  earn counts above the autograder's points, as Gradescope shows extra credit;
* top level: ``score`` = ``code_total`` + ``extra_credit`` of ``grades.csv``, ``output`` (per-item totals,
  pass line, status, isolation, notes), ``extra_data`` (per-item scores, status, isolation); all text
  formats are ``text``, so nothing a submission wrote renders as HTML.

Any crash still leaves a valid ``results.json`` that says what failed: the Python side catches
everything, and ``run_autograder`` writes one itself if the interpreter could not even start.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from pathlib import Path

from autograder.core.files import atomic_write, atomic_write_text
from autograder.core.layout import REPO
from autograder.core.registry import lessons
from autograder.core.safe_text import encodable
from autograder.gradebook.store import written_comment
from autograder.grading.assignment import load_assignment
from autograder.grading.engine import grade_notebook, new_result
from autograder.grading.submission import shutdown_workers
from autograder.intake.collect import zip_notebooks
from autograder.sandbox.isolation import LIMITS_ENV, resolve_isolation
from autograder.testing.seeding import grader_fingerprint, load_secret

ROOT_ENV = "GRADESCOPE_ROOT"
PYTHON_ENV = "GRADESCOPE_PYTHON"
DEFAULT_ROOT = "/autograder"
CONFIG_NAME = "gradescope.json"
SECRET_NAME = "course_secret"  # per-student hidden inputs (autograder.testing.seeding); only with --secret
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
#: the modules run_autograder imports (the sandbox worker imports numpy); the distributions they load,
#: plus LAZY_DISTRIBUTIONS (imported inside functions on the grading path), are what setup.sh installs,
#: pinned with their dependencies at the versions installed where the zip is built
GRADING_MODULES = (
    "autograder.platforms.gradescope",
    "autograder.grading.engine",
    "autograder.grading.written",
    "autograder.grading.notebook",
    "autograder.gradebook.store",
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
MAX_SUBMISSION_FILES = 10_000
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
    """The engine's modules (every package, no lesson data), this lesson's data folder (rubric and hidden
    tests: not its mistakes, corpus or goldens) and its release notebook, at their repository paths."""
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


# ---------------------------------------------------------------------------------------------------
# inside the container: find the notebook, grade it, write results.json
# ---------------------------------------------------------------------------------------------------


class NoNotebook(Exception):
    """The submission holds no notebook we can grade; the message tells the student what to upload."""


def find_notebook(submission: Path, notebook: str, scratch: Path) -> tuple[Path, list[str]]:
    """The notebook to grade in Gradescope's submission folder, and notes for the student.

    Candidates are the ``.ipynb`` files in the folder (any depth, regular files only; hidden files,
    ``__MACOSX`` and checkpoints ignored) and inside uploaded ``.zip`` files (read with ``collect``'s
    checks and caps). The one named ``<notebook>.ipynb`` wins; otherwise a single candidate is graded
    whatever its name; several differently named ones are refused rather than guessed."""

    wanted = f"{notebook}.ipynb"
    notes: list[str] = []
    found: list[tuple[str, Path]] = []  # (shown name, file to grade)
    seen = 0
    for dirpath, dirnames, filenames in os.walk(submission):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__MACOSX")
        for name in sorted(filenames):
            seen += 1
            if seen > MAX_SUBMISSION_FILES:
                raise NoNotebook(
                    f"the submission has over {MAX_SUBMISSION_FILES} files; upload only {wanted}"
                )
            path = Path(dirpath) / name
            if name.startswith(".") or path.is_symlink() or not path.is_file():
                continue
            shown = str(path.relative_to(submission))
            if name.lower().endswith(".ipynb"):
                found.append((shown, path))
            elif name.lower().endswith(".zip"):
                for i, (parts, data) in enumerate(zip_notebooks(path, notes)):
                    copy = scratch / f"zip{len(found)}-{i}.ipynb"
                    copy.write_bytes(data)
                    found.append((f"{shown}:{'/'.join(parts)}", copy))
    if not found:
        raise NoNotebook(f"no notebook in the submission: upload {wanted}")
    exact = [f for f in found if f[0].replace(":", "/").rsplit("/", 1)[-1] == wanted]
    if len(exact) == 1:
        chosen = exact[0]
    elif len(found) == 1:
        chosen = found[0]
        notes.append(f"graded {chosen[0]} as {wanted}")
    else:
        names = ", ".join(f[0] for f in (exact or found))
        raise NoNotebook(f"several notebooks in the submission ({names}): upload only {wanted}")
    if len(found) > 1:
        notes.append(f"graded {chosen[0]}; ignored {', '.join(f[0] for f in found if f is not chosen)}")
    return chosen[1], notes


def _share(points: float, weight: float, total: float) -> float:
    return round(points * weight / total, 4) if total else 0.0


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{float(x):g}"


def results_json(result, config: dict, elapsed: float) -> dict:
    """Gradescope's results.json for one graded submission (``results.SubmissionResult``)."""

    vis = config.get("visibility", "visible")
    written_vis = config.get("written_visibility", "after_published")
    tests: list[dict] = []
    for n, item in enumerate(result.items, start=1):
        if item.kind == "written":
            tests.append(
                {
                    "name": f"{item.id}: 问答题，由助教人工评分 / written answer, graded by hand ({_fmt(item.points)} 分)",
                    "number": str(n),
                    "output": written_comment(item),
                    "tags": [item.id, "written"],
                    "visibility": written_vis,
                }
            )
            continue
        total = sum(t.weight for t in item.tests)
        # extra credit (rubric extra_credit: true): Gradescope counts a score above max_score as extra
        bonus = " （附加分 / extra credit）" if item.extra_credit else ""
        if not item.tests:  # nothing ran: unreadable notebook, no notebook, grading error
            tests.append(
                {
                    "name": f"{item.id}{bonus}",
                    "number": f"{n}.1",
                    "score": 0.0,
                    "max_score": 0.0 if item.extra_credit else float(item.points),
                    "status": "failed",
                    "output": item.message or result.status,
                    "tags": [item.id],
                    "visibility": vis,
                }
            )
            continue
        for j, t in enumerate(item.tests, start=1):
            share = _share(item.points, t.weight, total)
            tests.append(
                {
                    "name": f"{item.id}: {t.name}" + ("（边界/校验 / edge case）" if t.edge else "") + bonus,
                    "number": f"{n}.{j}",
                    "score": share * t.credit,
                    "max_score": 0.0 if item.extra_credit else share,
                    "status": "passed" if t.passed else "failed",
                    "output": "✔ 通过 / passed"
                    if t.passed
                    else (t.message or "结果与预期不符 / wrong result"),
                    "tags": [
                        item.id,
                        *(["edge"] if t.edge else []),
                        *(["extra credit"] if item.extra_credit else []),
                    ],
                    "visibility": vis,
                }
            )
    code = [it for it in result.items if it.kind == "code" and not it.extra_credit]
    extra = [it for it in result.items if it.extra_credit]
    written = [it for it in result.items if it.kind == "written"]
    lines = [
        f"{result.assignment_id}: 代码 / code {_fmt(result.code_total)} / {_fmt(sum(it.points for it in code))}"
    ]
    lines += [f"  {it.id}: {_fmt(it.score)} / {_fmt(it.points)}" for it in code]
    if extra:
        lines.append(
            f"附加分 / extra credit: +{_fmt(result.extra_credit)}（最多 / at most {_fmt(result.max_extra_credit)}）"
        )
        lines += [f"  {it.id}: {_fmt(it.score)} / {_fmt(it.points)}" for it in extra]
    if written:
        ids = ", ".join(it.id for it in written)
        lines.append(
            f"问答题 / written ({ids}, {_fmt(sum(it.points for it in written))} 分): 由助教在 Gradescope 中人工评分；"
            "下面的建议分来自静态审查 / graded by hand on Gradescope; the suggestions are static review."
        )
    lines.append(
        f"及格线 / pass line: {_fmt(result.pass_line)} / {_fmt(result.max_total)}（代码 + 问答 / code + written）"
    )
    lines.append(f"状态 / status: {result.status}")
    lines.append(f"隔离方式 / isolation: {result.isolation}")
    lines += [f"- {m}" for m in result.messages]
    return {
        "score": round(result.code_total + result.extra_credit, 4),
        "execution_time": int(round(elapsed)),
        "output": "\n".join(lines),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": vis,
        "stdout_visibility": "hidden",
        "extra_data": {
            "assignment": result.assignment_id,
            "status": result.status,
            "isolation": result.isolation,
            "grader": result.grader,
            "items": {
                it.id: {
                    "kind": it.kind,
                    "points": it.points,
                    "score": it.score,
                    "extra_credit": it.extra_credit,
                    "suggestion": it.suggestion,
                }
                for it in result.items
            },
        },
        "tests": tests,
    }


def crash_json(what: str, elapsed: float) -> dict:
    return {
        "score": 0.0,
        "execution_time": int(round(elapsed)),
        "output": f"The autograder failed while grading this submission ({what}). Nothing was graded; "
        "please tell your instructor. / 评分程序出错，本次提交未评分，请告知教师。",
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"error": what},
        "tests": [{"name": "Autograder error", "status": "failed", "output": what, "visibility": "visible"}],
    }


def run(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json`` (always)."""

    started = time.monotonic()
    results_path = root / "results" / "results.json"
    scratch = Path(tempfile.mkdtemp(prefix="gradescope-"))
    try:
        print(f"engine: {Path(__file__).resolve().parents[1]}")
        config = json.loads((root / "source" / CONFIG_NAME).read_text(encoding="utf-8"))
        if config.get("limits"):
            os.environ[LIMITS_ENV] = json.dumps(config["limits"])
        assignment = load_assignment(REPO.data_dir(config["assignment"]))
        mode, isolation_text = resolve_isolation(config.get("isolation", "bwrap"), container=True)
        print(f"isolation: {isolation_text}")
        if mode == "uid":
            lock_down(root)
        try:
            path, notes = find_notebook(root / "submission", assignment.notebook, scratch)
        except NoNotebook as exc:
            result = new_result(assignment, "submission", isolation_text, status=str(exc), why=str(exc))
        else:
            secret, student = _seeding(root)
            try:
                result = grade_notebook(assignment, path, student, mode, isolation_text, secret=secret)
            finally:
                shutdown_workers()
            result.messages = notes + result.messages
        data = results_json(result, config, time.monotonic() - started)
        print(
            f"status: {result.status}; code {result.code_total:g}; items "
            + ", ".join(f"{it.id}={it.score:g}" for it in result.items)
        )
    except Exception as exc:  # noqa: BLE001 - whatever happens, Gradescope gets a valid results.json
        traceback.print_exc(file=sys.stdout)
        data = crash_json(f"{type(exc).__name__}: {str(exc)[:300]}", time.monotonic() - started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    atomic_write_text(results_path, results_text(data))
    return 0


def lock_down(root: Path) -> None:
    """The uid isolation (no bubblewrap in this container): the autograder's files become unreadable
    to other uids (securescope's ``chmod o=``): the unpacked zip (hidden tests, rubric), the results and
    the submission; ``root`` itself can only be traversed (the interpreter's venv stays readable)."""
    os.chmod(root, 0o711)
    for name in ("source", "results", "submission"):
        path = Path(root) / name
        if path.is_dir():
            os.chmod(path, 0o700)


def _seeding(root: Path) -> tuple[bytes | None, str]:
    """The course secret in the zip (None without one) and the id to seed with: the Gradescope user ids
    of ``submission_metadata.json`` (a group submission: all of them), ``submission`` where it has none."""
    path = root / "source" / SECRET_NAME
    secret = load_secret(path) if path.is_file() else None
    try:
        meta = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        ids = sorted(str(u["id"]) for u in meta.get("users", []) if u.get("id") is not None)
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        ids = []
    if secret is not None and not ids:
        raise RuntimeError("submission_metadata.json names no user: cannot seed this student's hidden cases")
    return secret, ("gradescope-" + "+".join(ids)) if ids else "submission"


def results_text(data: dict) -> str:
    """results.json as UTF-8 text. A submission's strings (quoted answers) may hold lone surrogates
    (valid in JSON escapes, not encodable): they become U+FFFD rather than stopping the write."""

    return encodable(json.dumps(data, ensure_ascii=False, indent=1) + "\n")


# ---------------------------------------------------------------------------------------------------
# trying the zip without Gradescope (tests, tools/gradescope_vs_local.py)
# ---------------------------------------------------------------------------------------------------


def install(zip_path: Path, root: Path) -> None:
    """Lay out ``root`` as Gradescope's image build does, setup.sh aside: the zip unpacked into
    ``root/source`` (file modes kept, as unzip does) and ``run_autograder`` copied to ``root``."""
    source = Path(root) / "source"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(source)
        for info in zf.infolist():
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(source / info.filename, mode)
    shutil.copy2(source / "run_autograder", Path(root) / "run_autograder")


def invoke(root: Path, python: str | None = None, timeout: float = 600) -> tuple[dict, str]:
    """Run ``root/run_autograder`` as Gradescope does (cwd ``root``), with ``python`` standing in for
    the venv setup.sh builds; returns the parsed results.json and the instructor-only stdout."""

    env = {**os.environ, ROOT_ENV: str(root), PYTHON_ENV: python or sys.executable}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [str(Path(root) / "run_autograder")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"run_autograder exited with {proc.returncode}: {proc.stderr[-2000:]}")
    data = json.loads((Path(root) / "results" / "results.json").read_text(encoding="utf-8"))
    return data, proc.stdout


def check() -> int:
    """What setup.sh runs last: the engine loads the assignment and says which isolation it will get."""

    root = Path(os.environ.get(ROOT_ENV, DEFAULT_ROOT))
    config = json.loads((root / "source" / CONFIG_NAME).read_text(encoding="utf-8"))
    assignment = load_assignment(REPO.data_dir(config["assignment"]))
    try:
        isolation = resolve_isolation(config.get("isolation", "bwrap"), container=True)[1]
    except RuntimeError as exc:  # fail the image build, where the instructor looks, not every submission
        print(
            f"error: {exc}\n(this zip was built with --isolation {config.get('isolation', 'bwrap')}; "
            "rebuild it with --isolation auto to accept the fallback where bubblewrap cannot run)"
        )
        return 1
    print(f"ok: {assignment.id}, {len(assignment.tests)} hidden tests; isolation: {isolation}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.platforms.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade the submission in ROOT/submission into ROOT/results/results.json")
    r.add_argument("--root", default=os.environ.get(ROOT_ENV, DEFAULT_ROOT))
    sub.add_parser("check", help="load the assignment and report the isolation (setup.sh)")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(Path(args.root))
    return check()


if __name__ == "__main__":
    sys.exit(main())
