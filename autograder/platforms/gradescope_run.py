"""Inside Gradescope's container: ``run_autograder`` finds the notebook in the submission, grades it and
writes ``results.json`` (:func:`run`; :mod:`autograder.platforms.gradescope` describes what it holds);
``setup.sh`` ends with :func:`check`. Under the ``uid`` isolation :func:`lock_down` makes the autograder's
files unreadable to student code; with a course secret, :func:`_seeding` says whom to seed for.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from autograder.core import numbers
from autograder.core.files import atomic_write_text
from autograder.core.layout import REPO
from autograder.core.safe_text import encodable
from autograder.gradebook.comments import written_comment
from autograder.grading.assignment import load_assignment
from autograder.grading.engine import grade_notebook, new_result
from autograder.grading.submission import shutdown_workers
from autograder.intake.collect import zip_notebooks
from autograder.sandbox.isolation import resolve_isolation
from autograder.sandbox.limits import LIMITS_ENV
from autograder.testing.seeding import load_secret

ROOT_ENV = "GRADESCOPE_ROOT"
PYTHON_ENV = "GRADESCOPE_PYTHON"
DEFAULT_ROOT = "/autograder"
CONFIG_NAME = "gradescope.json"
SECRET_NAME = "course_secret"  # per-student hidden inputs (autograder.testing.seeding); only with --secret
MAX_SUBMISSION_FILES = 10_000


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
    # 6 decimals: a 1-point item of 16 weight units has shares of 0.03125, which 4 decimals would round so
    # that an item's test scores no longer add up to its score (tests/test_gradescope.py)
    return round(points * weight / total, 6) if total else 0.0


def results_json(result, config: dict, elapsed: float) -> dict:
    """Gradescope's results.json for one graded submission (``results.SubmissionResult``)."""

    vis = config.get("visibility", "visible")
    written_vis = config.get("written_visibility", "after_published")
    tests: list[dict] = []
    for n, item in enumerate(result.items, start=1):
        if item.kind == "written":
            tests.append(
                {
                    "name": f"{item.id}: 问答题，由助教人工评分 / written answer, graded by hand ({numbers.score(item.points)} 分)",
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
        f"{result.assignment_id}: 代码 / code {numbers.score(result.code_total)} / {numbers.score(sum(it.points for it in code))}"
    ]
    lines += [f"  {it.id}: {numbers.score(it.score)} / {numbers.score(it.points)}" for it in code]
    if extra:
        lines.append(
            f"附加分 / extra credit: +{numbers.score(result.extra_credit)}（最多 / at most {numbers.score(result.max_extra_credit)}）"
        )
        lines += [f"  {it.id}: {numbers.score(it.score)} / {numbers.score(it.points)}" for it in extra]
    if written:
        ids = ", ".join(it.id for it in written)
        lines.append(
            f"问答题 / written ({ids}, {numbers.score(sum(it.points for it in written))} 分): 由助教在 Gradescope 中人工评分；"
            "下面的建议分来自静态审查 / graded by hand on Gradescope; the suggestions are static review."
        )
    lines.append(
        f"及格线 / pass line: {numbers.score(result.pass_line)} / {numbers.score(result.max_total)}（代码 + 问答 / code + written）"
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
            f"status: {result.status}; code {numbers.score(result.code_total)}; items "
            + ", ".join(f"{it.id}={numbers.score(it.score)}" for it in result.items)
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
