"""The Gradescope autograder, tested without Gradescope: build the zip with the CLI, unpack it into a
temporary root laid out as Gradescope's image (``$GRADESCOPE_ROOT`` = /autograder), run its
``run_autograder`` on the reference, the release stub, hostile and broken submissions, validate every
results.json against a schema written from Gradescope's spec, and compare the scores with the local
grader's on the same notebooks."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder.authoring.demo import mistake_code, reference_code, with_code
from autograder.classroom.batch import grade_class
from autograder.core.results import SubmissionResult
from autograder.platforms import gradescope, gradescope_run, gradescope_zip
from autograder.sandbox.isolation import resolve_isolation

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENT = "16-asymmetric-pipeline"
NB = "asymmetric_pipeline.ipynb"
SOURCE_NB = REPO / "solutions" / ASSIGNMENT / NB
RELEASE_NB = REPO / "lessons" / ASSIGNMENT / NB
SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "gradescope" / "results.schema.json").read_text())
HOSTILE = Path(__file__).parent / "hostile"
# zips require bubblewrap by default; where it cannot run, these tests build with the fallback instead
ISOLATION = "bwrap" if resolve_isolation("auto")[0] == "bwrap" else "none"
NO_BWRAP = [] if ISOLATION == "bwrap" else ["--isolation", "none"]

# A Gradescope-specific attack: forge results.json, read the hidden tests from the unpacked zip. It
# behaves like the reference only if it could read them, so 0 points means the attack failed.
FORGERY = """
import json, os
FORGED = json.dumps({"score": 1000, "tests": [{"name": "forged", "score": 1000, "max_score": 1}]})
LEAKED = False
for root in ("{{ROOT}}",):  # the test's root (never the host's /autograder)
    for path in (root + "/results/results.json", root + "/results/stdout"):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(FORGED)
        except OSError:
            pass
    try:
        with open(root + "/source/autograder/lessons/16-asymmetric-pipeline/test_simulator.py") as fh:
            LEAKED = "def test_" in fh.read()
    except OSError:
        pass
if not LEAKED:
    class AsymmetricPipelineScheduler(AsymmetricPipelineScheduler):
        def simulate_1f1b_execution(self, *a, **k):
            raise NotImplementedError
        def solve_optimal_layer_partition(self, *a, **k):
            raise NotImplementedError
        def min_microbatches_for_bubble(self, *a, **k):
            raise NotImplementedError
"""
# The hostile cases carry the reference's code; the extra-credit challenge is taken out of it so that
# their expected score is 0 (the regular code items still show any gain from an attack).
NO_CHALLENGE = "\n\ndef simulate_1f1b(*a, **k):\n    raise NotImplementedError\n"


def run_autograder(root: Path, files: dict[str, bytes], python: str = sys.executable) -> tuple[dict, str]:
    sub = root / "submission"
    if sub.exists():
        shutil.rmtree(sub)
    sub.mkdir()
    for name, data in files.items():
        (sub / name).parent.mkdir(parents=True, exist_ok=True)
        (sub / name).write_bytes(data)
    data, stdout = gradescope.invoke(root, python, timeout=300)
    jsonschema.validate(data, SCHEMA)
    return data, stdout


def code_of(path: Path, root: Path) -> str:
    text = mistake_code(path, reference=reference_code(REPO / "autograder" / "lessons" / ASSIGNMENT))
    for key, value in {
        "ROOT": str(root / "source"),
        "OUT": str(root / "results"),
        "SUBS": str(root / "submission"),
        "VENV": sys.prefix,
        "PORT": "9",
        "MARKER": "gradescope-hostile",
        "ABSTRACT": "gs",
    }.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def notebook_bytes(nb: dict) -> bytes:
    return json.dumps(nb, ensure_ascii=False).encode()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("gradescope")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "gradescope",
            ASSIGNMENT,
            "--out",
            str(base / "dist"),
            *NO_BWRAP,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    zip_path = Path(proc.stdout.strip())
    assert zip_path == base / "dist" / f"{ASSIGNMENT}-gradescope.zip"
    root = base / "autograder"
    gradescope.install(zip_path, root)
    return zip_path, root


def test_the_zip_follows_the_contract_and_holds_no_solution(built):
    zip_path, root = built
    with zipfile.ZipFile(zip_path) as zf:
        names = set(zf.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
    assert {"setup.sh", "run_autograder", "requirements.txt", gradescope_run.CONFIG_NAME} <= names
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert f"autograder/lessons/{ASSIGNMENT}/rubric.yaml" in names and f"lessons/{ASSIGNMENT}/{NB}" in names
    assert not any(n.startswith("solutions/") or "/mistakes/" in n or n.startswith("pipelab/") for n in names)
    requirements = (root / "source" / "requirements.txt").read_text().split()
    assert all("==" in r for r in requirements)
    assert {r.split("==")[0].lower() for r in requirements} >= {"numpy", "pyyaml", "nbformat"}
    assert "--no-cache-dir -r" in (root / "source" / "setup.sh").read_text()
    for script in ("setup.sh", "run_autograder"):  # both parse as bash
        check = subprocess.run(["bash", "-n", str(root / "source" / script)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    config = json.loads((root / "source" / gradescope_run.CONFIG_NAME).read_text())
    assert config["assignment"] == ASSIGNMENT and config["limits"] == {"address_space_bytes": 512 << 20}
    # the same inputs build the same bytes (fixed entry times, sorted entries)
    again = gradescope_zip.build(ASSIGNMENT, zip_path.parent / "again", isolation=ISOLATION)
    assert again.read_bytes() == zip_path.read_bytes()


@pytest.fixture(scope="module")
def graded(built, tmp_path_factory):
    """run_autograder and the local batch on the same notebooks."""
    _, root = built
    release = json.loads(RELEASE_NB.read_text(encoding="utf-8"))
    reference = SOURCE_NB.read_bytes()
    text = reference.decode()
    cases = {
        "reference": {NB: reference},
        "stub": {NB: RELEASE_NB.read_bytes()},
        "hostile-search": {
            NB: notebook_bytes(
                with_code(release, code_of(HOSTILE / "a10_search_disk_for_tests.py", root) + NO_CHALLENGE)
            )
        },
        "hostile-prints": {
            NB: notebook_bytes(
                with_code(release, code_of(HOSTILE / "a24_fake_score_lines.py", root) + NO_CHALLENGE)
            )
        },
        "hostile-forgery": {
            NB: notebook_bytes(
                with_code(
                    release,
                    reference_code(REPO / "autograder" / "lessons" / ASSIGNMENT)
                    + FORGERY.replace("{{ROOT}}", str(root))
                    + NO_CHALLENGE,
                )
            )
        },
        "broken": {NB: text[: len(text) // 2].encode()},
    }
    outcomes = {name: run_autograder(root, files) for name, files in cases.items()}
    subs = tmp_path_factory.mktemp("local")
    for name, files in cases.items():
        (subs / name / ASSIGNMENT).mkdir(parents=True)
        (subs / name / ASSIGNMENT / NB).write_bytes(files[NB])
    local = {r.student_id: r for r in grade_class(subs, subs.parent / "local-out", jobs=2, quiet=True)}
    return root, outcomes, local


def test_scores_equal_the_local_grader(graded):
    root, outcomes, local = graded
    for name, (data, stdout) in outcomes.items():
        res: SubmissionResult = local[name]
        assert data["score"] == round(res.code_total + res.extra_credit, 4), name
        items = data["extra_data"]["items"]
        assert {k: v["score"] for k, v in items.items()} == {it.id: it.score for it in res.items}, name
        assert data["extra_data"]["status"] == res.status, name
        # graded by the engine unpacked from the zip, not by the checkout's
        assert stdout.splitlines()[0] == f"engine: {(root / 'source' / 'autograder').resolve()}"
    everything = sum(it.points for it in local["reference"].items if it.kind == "code")  # extra credit too
    assert outcomes["reference"][0]["score"] == everything >= 4 and outcomes["stub"][0]["score"] == 0
    assert outcomes["broken"][0]["extra_data"]["status"].startswith("unreadable")
    for name in ("hostile-prints", "broken", "stub"):
        assert outcomes[name][0]["score"] == 0


def test_one_entry_per_hidden_test_with_the_feedback_message(graded):
    _, outcomes, local = graded
    for name in ("reference", "stub"):
        data, _ = outcomes[name]
        res = local[name]
        code = [t for t in data["tests"] if "written" not in t.get("tags", [])]
        expected = [(it.id, t) for it in res.items if it.kind == "code" for t in it.tests]
        assert len(code) == len(expected) > 4
        for entry, (item_id, outcome) in zip(code, expected, strict=True):
            assert entry["name"].startswith(f"{item_id}: {outcome.name}")
            assert entry["status"] == ("passed" if outcome.passed else "failed")
            assert entry["tags"][0] == item_id and entry["visibility"] == "visible"
            if not outcome.passed:
                assert entry["output"] == outcome.message  # what the feedback page says, nothing else
        for it in res.items:
            if it.kind == "code":
                own = [t for t in code if t["tags"][0] == it.id]
                assert sum(t["max_score"] for t in own) == pytest.approx(0 if it.extra_credit else it.points)
                assert sum(t["score"] for t in own) == pytest.approx(it.score)
        written = [t for t in data["tests"] if "written" in t.get("tags", [])]
        assert [t["tags"][0] for t in written] == [it.id for it in res.items if it.kind == "written"]
        for t in written:  # informational: graded by hand in Gradescope, no autograder points
            assert "score" not in t and "max_score" not in t and t["visibility"] == "after_published"
            assert "graded by hand" in t["name"]
        assert "graded by hand" in data["output"] and data["output_format"] == "text"


def test_hostile_submissions_gain_nothing(graded):
    if resolve_isolation("auto")[0] != "bwrap":
        pytest.skip("the hostile cases assume the bubblewrap sandbox")
    root, outcomes, _ = graded
    for name in ("hostile-search", "hostile-forgery", "hostile-prints"):
        data, _ = outcomes[name]
        assert data["score"] == 0, name
        assert "forged" not in json.dumps(data)


def test_finding_the_notebook(tmp_path):
    sub, scratch = tmp_path / "sub", tmp_path / "scratch"
    sub.mkdir()
    scratch.mkdir()
    with pytest.raises(gradescope_run.NoNotebook, match="no notebook"):
        gradescope_run.find_notebook(sub, "asymmetric_pipeline", scratch)
    (sub / "Copy of asymmetric_pipeline (2).ipynb").write_text("{}")
    (sub / ".ipynb_checkpoints").mkdir()
    (sub / ".ipynb_checkpoints" / "asymmetric_pipeline-checkpoint.ipynb").write_text("{}")
    path, notes = gradescope_run.find_notebook(sub, "asymmetric_pipeline", scratch)
    assert path.name == "Copy of asymmetric_pipeline (2).ipynb" and "graded Copy of" in notes[0]
    (sub / "other.ipynb").write_text("{}")
    with pytest.raises(gradescope_run.NoNotebook, match="several notebooks"):
        gradescope_run.find_notebook(sub, "asymmetric_pipeline", scratch)
    (sub / "other.ipynb").unlink()
    (sub / "Copy of asymmetric_pipeline (2).ipynb").unlink()
    with zipfile.ZipFile(sub / "upload.zip", "w") as zf:
        zf.writestr("hw/asymmetric_pipeline.ipynb", '{"cells": []}')
        zf.writestr("__MACOSX/hw/._asymmetric_pipeline.ipynb", "x")
        zf.writestr("../escape.ipynb", "{}")
    path, notes = gradescope_run.find_notebook(sub, "asymmetric_pipeline", scratch)
    assert path.read_text() == '{"cells": []}' and path.parent == scratch
    assert any("escape.ipynb" in n and "skipped" in n for n in notes)
    os.symlink("/etc/passwd", sub / "asymmetric_pipeline.ipynb")
    path, _ = gradescope_run.find_notebook(sub, "asymmetric_pipeline", scratch)
    assert path.parent == scratch  # the symlink is never followed


def test_zip_upload_and_crashes_still_give_valid_results(built, tmp_path):
    _, root = built
    buf = tmp_path / "upload.zip"
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("homework/My notebook.ipynb", RELEASE_NB.read_bytes())
    data, _ = run_autograder(root, {"upload.zip": buf.read_bytes()})
    assert data["score"] == 0 and data["extra_data"]["status"] == "ok"
    assert "graded upload.zip:homework/My notebook.ipynb as asymmetric_pipeline.ipynb" in data["output"]

    data, _ = run_autograder(root, {"notes.txt": b"forgot the notebook"})
    assert data["score"] == 0 and "no notebook in the submission" in data["output"]

    # the grader crashes (a damaged zip: the rubric is gone): a valid results.json says so
    broken = tmp_path / "broken-root"
    shutil.copytree(root, broken, symlinks=True)
    (broken / "source" / "autograder" / "lessons" / ASSIGNMENT / "rubric.yaml").unlink()
    data, stdout = run_autograder(broken, {NB: SOURCE_NB.read_bytes()})
    assert data["score"] == 0 and "RubricError" in data["output"] and data["tests"][0]["status"] == "failed"
    assert "Traceback" in stdout  # the instructor sees the trace in Gradescope's stdout

    # the interpreter is missing altogether (setup.sh failed): run_autograder itself writes the JSON
    data, stdout = run_autograder(root, {NB: SOURCE_NB.read_bytes()}, python=str(tmp_path / "no-python"))
    assert data["score"] == 0 and "stopped before grading" in data["output"]
    assert stat.S_IMODE((root / "run_autograder").stat().st_mode) & 0o111


def test_the_other_lesson_builds_and_grades_the_same(tmp_path):
    """Nothing in the zip or run_autograder is lesson 16's: lesson 03's reference earns its code points."""
    assignment, nb = "03-load-imbalance", "load_imbalance.ipynb"
    root = tmp_path / "root"
    gradescope.install(gradescope_zip.build(assignment, tmp_path / "dist", isolation=ISOLATION), root)
    data, _ = run_autograder(root, {"my upload.ipynb": (REPO / "solutions" / assignment / nb).read_bytes()})
    (tmp_path / "subs" / "ref" / assignment).mkdir(parents=True)
    shutil.copy(REPO / "solutions" / assignment / nb, tmp_path / "subs" / "ref" / assignment / nb)
    (local,) = grade_class(tmp_path / "subs", tmp_path / "out", jobs=1, quiet=True)
    assert local.code_total == sum(
        it.points for it in local.items if it.kind == "code" and not it.extra_credit
    )
    assert data["score"] == round(local.code_total + local.extra_credit, 4)
    assert {k: v["score"] for k, v in data["extra_data"]["items"].items()} == {
        it.id: it.score for it in local.items
    }


def test_results_json_maps_extra_credit_and_written_items():
    """Generic over rubric items: a synthetic result with a regular, an extra-credit and a written item."""
    from autograder.core.results import STATIC_REVIEW, ItemResult
    from autograder.core.results import TestOutcome as Outcome

    items = [
        ItemResult(
            "core",
            "code",
            3.0,
            2.25,
            "executed",
            tests=[
                Outcome("test_a", "core", 3, True),
                Outcome("test_b", "core", 1, False, "检查边界", edge=True),
            ],
        ),
        ItemResult(
            "bonus",
            "code",
            1.0,
            1.0,
            "executed",
            tests=[Outcome("test_c", "bonus", 1, True)],
            extra_credit=True,
        ),
        ItemResult(
            "q1", "written", 2.0, 1.0, STATIC_REVIEW, suggestion=1.0, message="建议 1/2：<b>quoted</b>"
        ),
    ]
    res = SubmissionResult("s", "a", "nb", items=items, pass_line=3, isolation="bubblewrap")
    data = gradescope_run.results_json(res, {}, 1.2)
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 3.25 == res.code_total + res.extra_credit
    by_name = {t["name"]: t for t in data["tests"]}
    a, b = by_name["core: test_a"], by_name["core: test_b（边界/校验 / edge case）"]
    assert (a["score"], a["max_score"], b["score"], b["max_score"]) == (2.25, 2.25, 0.0, 0.75)
    assert b["status"] == "failed" and b["output"] == "检查边界" and b["tags"] == ["core", "edge"]
    c = next(t for t in data["tests"] if t["name"].startswith("bonus: test_c"))
    assert (c["score"], c["max_score"], c["tags"][-1]) == (1.0, 0.0, "extra credit")
    q1 = next(t for t in data["tests"] if t["tags"] == ["q1", "written"])
    assert q1["output"] == "建议 1/2：<b>quoted</b>" and "score" not in q1  # shown as text, never as HTML
    assert "extra credit: +1" in data["output"] and data["extra_data"]["items"]["bonus"]["extra_credit"]


def test_unencodable_text_in_a_result_still_gives_valid_results():
    """Lone surrogates are valid JSON escapes in a notebook but not UTF-8: quoted back (answers, notes),
    they must not stop results.json from being written."""
    res = SubmissionResult("s", "a", "nb", messages=["code cell 3 raised: ValueError: \ud800"], isolation="x")
    text = gradescope_run.results_text(gradescope_run.results_json(res, {}, 0.1))
    data = json.loads(text.encode("utf-8").decode("utf-8"))  # strict UTF-8 round trip
    jsonschema.validate(data, SCHEMA)
    assert "ValueError: \ufffd" in data["output"]


def test_requirements_cover_what_grading_imports(built):
    """setup.sh installs only requirements.txt: grading the reference must import nothing else."""
    _, root = built
    sub = root / "submission"
    shutil.rmtree(sub, ignore_errors=True)
    sub.mkdir()
    shutil.copy(SOURCE_NB, sub / NB)
    code = (
        "import json, sys\n"
        "from importlib.metadata import packages_distributions\n"
        "from pathlib import Path\n"
        "before = set(sys.modules)\n"
        "sys.modules['pytest'] = None\n"  # optional (testing.item marks tests for pytest if present)
        "from autograder.platforms import gradescope, gradescope_run  # what run_autograder imports\n"
        "gradescope_run.run(Path(sys.argv[1]))\n"
        "names = {n.split('.')[0] for n in set(sys.modules) - before} - {'autograder', 'pytest'}\n"
        "owners = packages_distributions()\n"
        "print(json.dumps(sorted({d for n in names for d in owners.get(n, [])})))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(root / "source")}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        cwd=root / "source",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    used = {d.lower().replace("_", "-") for d in json.loads(proc.stdout.strip().splitlines()[-1])}
    pinned = {
        r.split("==")[0].lower().replace("_", "-")
        for r in (root / "source" / "requirements.txt").read_text().split()
    }
    # try/except ImportError: absent from the image, nothing breaks
    used -= set(gradescope_zip.OPTIONAL_IMPORTS)
    assert used and used <= pinned, used - pinned
    assert json.loads((root / "results" / "results.json").read_text())["score"] >= 4


def test_without_the_sandbox_the_build_fails_and_no_submission_is_graded(built, monkeypatch, capsys):
    """The default zip refuses to run student code unsandboxed: setup.sh's check fails the image build
    with the reason, and a submission run anyway gets a valid 'autograder failed' result, never a grade."""
    from autograder.sandbox import bwrap, uid_isolation

    _, root = built
    if json.loads((root / "source" / gradescope_run.CONFIG_NAME).read_text())["isolation"] != "bwrap":
        pytest.skip("bubblewrap cannot run here, so the zip was built without the requirement")
    monkeypatch.setattr(bwrap, "bwrap_usable", lambda: (False, "user namespaces are not allowed here"))
    # and no uid isolation either (tests/test_gradescope_no_userns.py: where it can run, the zip grades)
    monkeypatch.setattr(uid_isolation, "uid_usable", lambda: (False, "the grader is not root"))
    monkeypatch.setenv(gradescope_run.ROOT_ENV, str(root))
    assert gradescope_run.check() == 1
    assert "user namespaces are not allowed here" in capsys.readouterr().out
    shutil.rmtree(root / "submission", ignore_errors=True)
    (root / "submission").mkdir()
    shutil.copy(SOURCE_NB, root / "submission" / NB)
    gradescope_run.run(root)
    data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)
    assert (
        data["score"] == 0
        and "user namespaces are not allowed here" in data["output"]
        and data["tests"][0]["status"] == "failed"
    )
