"""Tampered and broken notebooks: each gives a clear status and message, and whatever can still be graded
is graded. Roles come from the release (by nbgrader grade_id), never from the submission's metadata."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.demo import reference_code, with_code
from autograder.grading import notebook as nbmod
from autograder.grading.notebook import SourceInfo, UnreadableNotebook, extract

ROOT = Path(__file__).resolve().parent.parent
A = "16-asymmetric-pipeline"
RELEASE = ROOT / "lessons" / A / "asymmetric_pipeline.ipynb"
REFERENCE = reference_code(ROOT / "autograder" / "lessons" / A)  # the source notebook's solution cells
WRITTEN = ["q1", "q2", "q3"]
STUB = "class AsymmetricPipelineScheduler:\n    pass\n"

pytestmark = pytest.mark.skipif(not RELEASE.is_file(), reason="release notebook missing (make release)")


@pytest.fixture(scope="module")
def release() -> dict:
    return json.loads(RELEASE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def source() -> SourceInfo:
    return SourceInfo.from_notebook(RELEASE)


def gid(cell: dict) -> str | None:
    return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")


def index_of(nb: dict, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb["cells"]) if gid(c) == grade_id)


def write(tmp_path: Path, nb_or_bytes, name="nb.ipynb") -> Path:
    path = tmp_path / name
    if isinstance(nb_or_bytes, bytes):
        path.write_bytes(nb_or_bytes)
    else:
        path.write_text(json.dumps(nb_or_bytes, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def to_v3(nb: dict) -> bytes:
    """The same notebook written as nbformat 3 (what a very old Jupyter saved)."""
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    v4 = nbformat.reads(json.dumps(nb), as_version=4)
    return nbformat.writes(nbformat.convert(v4, 3), version=3).encode()


def run(tmp_path, nb_or_bytes, source):
    return extract(write(tmp_path, nb_or_bytes), source, WRITTEN)


def executed(ex) -> str:
    return "\n".join(code for _, code in ex.code_cells)


# -- the unit level: extract() -------------------------------------------------------------------------
def test_untouched_submission_has_no_problems(tmp_path, release, source):
    ex = run(tmp_path, with_code(release, REFERENCE), source)
    assert ex.problems == [] and not ex.tampered
    assert "class AsymmetricPipelineScheduler" in executed(ex)
    assert "pipelab" not in executed(ex)  # locked cells (setup, figures, checks) never run
    assert set(ex.answers) == set(WRITTEN)


def test_edited_locked_check_cell(tmp_path, release, source):
    nb = with_code(release, REFERENCE)
    nb["cells"][index_of(nb, "simulator")]["source"] = "print('all checks passed!')\n"
    ex = run(tmp_path, nb, source)
    assert ex.tampered and any("locked cell 'simulator' was edited" in p for p in ex.problems)
    assert "all checks passed" not in executed(ex)


@pytest.mark.parametrize(
    "change",
    [
        {"locked": False},
        {"solution": True, "grade": False},
        {"points": 100},
        {"points": "lots"},
    ],
)
def test_changed_nbgrader_metadata(tmp_path, release, source, change):
    nb = with_code(release, REFERENCE)
    cell = nb["cells"][index_of(nb, "solver")]
    cell["metadata"]["nbgrader"].update(change)
    ex = run(tmp_path, nb, source)
    assert any("metadata of cell 'solver' was changed" in p for p in ex.problems)
    assert "check_equal" not in executed(ex)  # roles come from the release: still not run


def test_removed_metadata_and_odd_values(tmp_path, release, source):
    nb = with_code(release, REFERENCE)
    del nb["cells"][index_of(nb, "solver")]["metadata"]["nbgrader"]
    nb["cells"][index_of(nb, "simulator")]["metadata"]["nbgrader"]["grade_id"] = ["not", "a", "string"]
    nb["cells"].insert(1, "not a cell")
    nb["cells"].insert(1, {"cell_type": "code", "metadata": "not a dict", "source": ["x = 1\n", 2]})
    nb["metadata"] = {"kernelspec": {"name": "evil"}, "nbgrader": {"anything": True}}
    ex = run(tmp_path, nb, source)
    text = "\n".join(ex.problems)
    assert "check cell 'solver' is missing" in text and "check cell 'simulator' is missing" in text
    assert "is not a JSON object" in text
    assert "class AsymmetricPipelineScheduler" in executed(ex)


def test_deleted_cells(tmp_path, release, source):
    nb = with_code(release, REFERENCE)
    nb["cells"] = [c for c in nb["cells"] if gid(c) not in ("exercise", "q2", "solver")]
    ex = run(tmp_path, nb, source)
    text = "\n".join(ex.problems)
    for what in (
        "exercise cell 'exercise' is missing",
        "answer cell 'q2' is missing",
        "check cell 'solver' is missing",
    ):
        assert what in text
    assert ex.answers["q2"] == "" and "class AsymmetricPipelineScheduler" not in executed(ex)


def test_duplicated_cells(tmp_path, release, source):
    nb = with_code(release, STUB)
    i = index_of(nb, "exercise")
    fixed = copy.deepcopy(nb["cells"][i])
    fixed["source"] = REFERENCE
    nb["cells"].insert(i + 1, fixed)  # copy-pasted exercise cell, the later copy finished
    q1 = index_of(nb, "q1")
    nb["cells"][q1]["source"] = "first part."
    extra = copy.deepcopy(nb["cells"][q1])
    extra["source"] = "second part."
    nb["cells"].insert(q1 + 1, extra)
    check = copy.deepcopy(nb["cells"][index_of(nb, "simulator")])
    check["source"] = "print('forged')"
    nb["cells"].append(check)
    ex = run(tmp_path, nb, source)
    text = "\n".join(ex.problems)
    assert (
        "'exercise' appears 2 times" in text
        and "'q1' appears 2 times" in text
        and "'simulator' appears 2" in text
    )
    runs = executed(ex)
    assert runs.index("class AsymmetricPipelineScheduler:\n    pass") < runs.index(
        "def simulate_1f1b_execution"
    )
    assert "forged" not in runs
    # only the first copy that is not the placeholder is scored (issue 20: copies made scoring unbounded)
    assert ex.answers["q1"] == "first part." and ex.answer_flags["q1"][0].startswith("duplicated answer cell")


def test_reordered_cells(tmp_path, release, source):
    nb = with_code(release, REFERENCE)
    cells = nb["cells"]
    i, j = index_of(nb, "simulator"), index_of(nb, "q1")
    cells[i], cells[j] = cells[j], cells[i]
    ex = run(tmp_path, nb, source)
    assert any("out of their original order" in p for p in ex.problems)
    assert "class AsymmetricPipelineScheduler" in executed(ex)


@pytest.mark.parametrize(
    "damage, expect",
    [
        (lambda t: t[: len(t) // 2], "truncated"),
        (lambda t: t[:-3], "truncated"),
        (lambda t: t.replace('"cells": [', '"cells": [,', 1), "malformed JSON at line"),
        (lambda t: "", "empty"),
        (lambda t: "[1, 2, 3]", "top level is not a JSON object"),
        (lambda t: '{"nbformat": 4, "cells": 7}', "no list of cells"),
        (lambda t: '{"nbformat": 5, "cells": []}', "unsupported nbformat"),
        (lambda t: "[" * 100_000, "not a notebook"),
    ],
)
def test_broken_json_is_unreadable_with_a_clear_message(tmp_path, release, source, damage, expect):
    text = json.dumps(with_code(release, REFERENCE), indent=1)
    with pytest.raises(UnreadableNotebook) as err:
        run(tmp_path, damage(text).encode(), source)
    assert str(err.value).startswith("unreadable: ") and expect in str(err.value)


def test_binary_file(tmp_path, source):
    with pytest.raises(UnreadableNotebook, match="binary data"):
        run(tmp_path, b"PK\x03\x04\x00\x00" + bytes(range(256)) * 10, source)


def test_non_utf8_text_is_graded_with_a_note(tmp_path, release, source):
    nb = with_code(release, REFERENCE)
    nb["cells"][index_of(nb, "q1")]["source"] = "MARK-ANSWER"
    raw = json.dumps(nb, ensure_ascii=False).encode("utf-8").replace(b"MARK-ANSWER", b"caf\xe9 \xff answer")
    ex = run(tmp_path, raw, source)
    assert any("not valid UTF-8" in p for p in ex.problems) and not ex.tampered
    assert "class AsymmetricPipelineScheduler" in executed(ex)
    assert "answer" in ex.answers["q1"] and "\ufffd" in ex.answers["q1"]


def test_utf16_and_bom(tmp_path, release, source):
    text = json.dumps(with_code(release, REFERENCE), ensure_ascii=False)
    ex = run(tmp_path, text.encode("utf-16"), source)
    assert any("UTF-16" in p for p in ex.problems) and "class AsymmetricPipelineScheduler" in executed(ex)
    ex = run(tmp_path, b"\xef\xbb\xbf" + text.encode("utf-8"), source)
    assert ex.problems == []


def test_huge_notebooks(tmp_path, release, source, monkeypatch):
    nb = with_code(release, REFERENCE)
    figure = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "A" * (30 << 20)}}
    nb["cells"][index_of(nb, "fig-gantt-main")]["outputs"] = [figure]
    ex = run(tmp_path, nb, source)  # 30 MB of outputs: read, outputs ignored
    assert "class AsymmetricPipelineScheduler" in executed(ex)
    monkeypatch.setattr(nbmod, "MAX_NOTEBOOK_BYTES", 1 << 20)
    with pytest.raises(UnreadableNotebook, match="over the 1 MB limit"):
        run(tmp_path, nb, source)


def test_huge_cell_is_skipped_and_noted(tmp_path, release, source):
    nb = with_code(release, REFERENCE)
    nb["cells"].insert(
        index_of(nb, "exercise") + 1,
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "x = 1\n" * 50_000,
        },
    )
    ex = run(tmp_path, nb, source)
    assert any("characters and was skipped" in p for p in ex.problems)
    assert "class AsymmetricPipelineScheduler" in executed(ex)


def test_nbformat3_is_converted(tmp_path, release, source):
    raw = to_v3(with_code(release, REFERENCE))
    assert json.loads(raw)["nbformat"] == 3
    ex = run(tmp_path, raw, source)
    assert any("nbformat 3 notebook converted" in p for p in ex.problems)
    assert "class AsymmetricPipelineScheduler" in executed(ex)


def test_ipython_magics_are_not_run(tmp_path, release, source):
    code = "%load_ext autoreload\n!rm -rf /\n" + REFERENCE + "\n%%time\n"
    ex = run(tmp_path, with_code(release, code), source)
    assert "!rm" not in "\n".join(
        line for line in executed(ex).splitlines() if not line.lstrip().startswith("pass")
    )
    assert any("IPython magic/shell line(s) were not run" in p for p in ex.problems)


# -- end to end: one batch, statuses in grades.csv, scores of what can still be graded --------------------
def test_tampered_and_broken_notebooks_in_a_batch(tmp_path, release):
    from autograder.classroom.batch import grade_class

    full = {"simulator": 1, "min_microbatches": 1, "solver": 2}  # the regular code items
    nothing = dict.fromkeys(full, 0)

    good = with_code(release, REFERENCE)
    cases: dict[str, tuple[object, str, dict]] = {}
    nb = copy.deepcopy(good)
    nb["cells"][index_of(nb, "simulator")]["source"] = "pass"
    cases["edited-check"] = (
        nb,
        "tampered: locked cell 'simulator' was edited",
        full,
    )
    nb = copy.deepcopy(good)
    nb["cells"] = [c for c in nb["cells"] if gid(c) != "solver"][::-1]
    cases["deleted-and-reversed"] = (
        nb,
        "tampered: check cell 'solver' is missing",
        full,
    )
    nb = with_code(release, STUB)
    i = index_of(nb, "exercise")
    dup = copy.deepcopy(nb["cells"][i])
    dup["source"] = REFERENCE
    nb["cells"].insert(i + 1, dup)
    cases["duplicated-exercise"] = (
        nb,
        "tampered: cell 'exercise' appears 2 times",
        full,
    )
    raw = json.dumps(good, ensure_ascii=False).encode().replace(b"YOUR ANSWER HERE", b"r\xe9ponse", 1)
    cases["latin1-bytes"] = (raw, "ok", full)
    cases["nbformat3"] = (to_v3(good), "ok", full)
    text = json.dumps(good)
    cases["truncated"] = (
        text[: len(text) // 3].encode(),
        "unreadable: not a valid notebook (the file ends early",
        nothing,
    )
    subs = tmp_path / "submitted"
    for student, (content, _, _) in cases.items():
        path = subs / student / A / "asymmetric_pipeline.ipynb"
        path.parent.mkdir(parents=True)
        path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    results = {
        r.student_id: r for r in grade_class(subs, tmp_path / "out", isolation="auto", jobs=2, quiet=True)
    }
    rows = {
        row["student_id"]: row
        for row in csv.DictReader((tmp_path / "out" / "grades.csv").open(encoding="utf-8"))
    }
    assert set(rows) == set(cases)
    for student, (_, status, scores) in cases.items():
        res = results[student]
        assert res.status.startswith(status), (student, res.status)
        assert rows[student]["status"].startswith(status)
        # the regular code items (the extra-credit challenge follows the same rules: not listed per case)
        got = {it.id: it.score for it in res.items if it.kind == "code" and not it.extra_credit}
        assert got == scores, (student, res.messages)
    assert any("not valid UTF-8" in m for m in results["latin1-bytes"].messages)
