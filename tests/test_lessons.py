"""The rules every lesson meets, checked for each lesson of the registry (``autograder.core.registry``).

A lesson is its own folders: ``solutions/<id>/<notebook>.ipynb`` (nbgrader's source), the generated
``lessons/<id>/`` and ``autograder/lessons/<id>/`` (rubric, hidden tests, mistakes, written corpus,
goldens). docs/ARCHITECTURE.md, "Add a lesson", states the rules below in words; a new lesson is checked by
them without any edit here. Lesson-specific checks (the numbers a lesson's prose states, its catalogue's
required entries) live in ``tests/test_lesson<NN>_*.py``.

Run one lesson's checks with ``pytest tests/test_lessons.py -k <lesson-id>``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder.authoring import release
from autograder.authoring.demo import INCLUDE, mistake_code, parse_expectations, reference_code
from autograder.core.layout import REPO as LAYOUT
from autograder.core.notebook_format import normalise_notebook
from autograder.core.registry import Lesson, lessons
from autograder.grading.assignment import load_assignment
from autograder.grading.engine import grade_code

LESSONS = lessons()
IDS = list(LESSONS)
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
PASSED = "{item}：可视检查全部通过"  # what a code item's visible-check cell prints when every check passes


def _mistakes() -> list:
    return [
        pytest.param(found, path, id=f"{found.id}/{path.stem}", marks=_marks(path))
        for found in LESSONS.values()
        for path in found.mistakes
    ]


def _marks(path: Path) -> list:
    # a catalogue entry that runs into the per-call time limit on purpose says so in its header
    return [pytest.mark.slow] if "# slow:" in path.read_text(encoding="utf-8") else []


@pytest.fixture(params=IDS)
def lesson(request) -> Lesson:
    return LESSONS[request.param]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _src(cell: dict) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def _nbg(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def expected_scores(found: Lesson, path: Path) -> dict[str, float]:
    """A catalogue file's ``# expect:`` scores. Every regular code item must be stated; an extra-credit
    item left out scores what the file leaves it: the reference's full points for a patch over the
    reference (``# include: reference``), 0 for a complete file."""
    text = path.read_text(encoding="utf-8")
    stated = parse_expectations(text)
    patch = bool(INCLUDE.search(text))
    out = {}
    for it in found.rubric.code_items:
        if it.id in stated:
            out[it.id] = stated[it.id]
        elif it.extra_credit:
            out[it.id] = it.points if patch else 0.0
    return out


# -- the rubric and the hidden tests --------------------------------------------------------------------
def test_rubric_and_hidden_tests_load(lesson):
    """The rubric validates, every code item has hidden tests with edge cases at most a quarter, the pass
    line is within the regular points (the loader raises otherwise)."""
    a = load_assignment(lesson.directory)
    assert a.id == lesson.id and a.rubric.code_items and a.tests
    assert 0 < a.pass_line <= a.rubric.max_total


def test_reference_code_earns_full_marks(lesson):
    points = {it.id: it.points for it in lesson.rubric.code_items}  # extra credit included
    scores = grade_code(lesson.directory, reference_code(lesson.directory))
    assert {item: scores.get(item) for item in points} == pytest.approx(points, abs=1e-4)


def test_release_stub_earns_nothing(lesson):
    nb = _load(lesson.release)
    code = "\n\n".join(_src(c) for c in nb["cells"] if c["cell_type"] == "code" and _nbg(c).get("solution"))
    scores = grade_code(lesson.directory, code)
    assert {it.id: scores.get(it.id) for it in lesson.rubric.code_items} == dict.fromkeys(
        (it.id for it in lesson.rubric.code_items), 0.0
    )


def test_catalogue_states_every_regular_code_item(lesson):
    regular = {it.id for it in lesson.rubric.code_items if not it.extra_credit}
    for path in lesson.mistakes:
        stated = parse_expectations(path.read_text(encoding="utf-8"))
        assert regular <= set(stated), f"{path.name}: '# expect:' must state {sorted(regular - set(stated))}"
        assert set(stated) <= {it.id for it in lesson.rubric.code_items}, f"{path.name}: unknown item"


def test_null_implementations_promise_zero(lesson):
    """Every ``null_*`` file (code that does nothing useful) states 0 on every code item."""
    for path in lesson.mistakes:
        if path.stem.startswith("null_"):
            assert set(expected_scores(lesson, path).values()) == {0.0}, path.name


@pytest.mark.parametrize(("found", "path"), _mistakes())
def test_mistake_scores_exactly_as_stated(found: Lesson, path: Path):
    expected = expected_scores(found, path)
    scores = grade_code(found.directory, mistake_code(path))
    got = {item: scores.get(item) for item in expected}
    assert got == pytest.approx(expected, abs=1e-4), f"{path.name}: expected {expected}, engine gave {got}"


# -- the notebooks ----------------------------------------------------------------------------------------
def test_release_in_sync_with_a_fresh_generation(lesson):
    fresh = release.generate(lesson.id)
    problems = release.diff(lesson.id, fresh, release.current(lesson.id))
    assert not problems, "lessons/ drifted from solutions/; run `make release`:\n" + "\n".join(problems)


@pytest.mark.parametrize("which", ["source", "release"])
def test_committed_without_outputs(lesson, which):
    """Both notebooks without outputs; the release byte for byte as ``make release`` writes it."""
    path = getattr(lesson, which)
    text = path.read_text(encoding="utf-8")
    for cell in json.loads(text)["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"cell {cell.get('id')}"
    if which == "release":
        assert text == normalise_notebook(text), f"{path.name} is not in normalised form (run `make release`)"


@pytest.mark.parametrize("which", ["source", "release"])
def test_nbgrader_cells_follow_the_rubric(lesson, which):
    """Unique cell ids; every code cell is a solution or locked; the graded cells are the rubric's items
    (grade_id = item id, same points; an extra-credit cell has 0, so nbgrader's maximum leaves it out); a
    code item's cell is its locked visible check, a written item's answer cell follows its locked
    ``<id>-question`` cell."""
    nb = _load(getattr(lesson, which))
    ids = [c.get("id") for c in nb["cells"]]
    assert len(ids) == len(set(ids)), "cell ids must be unique"
    for cell in nb["cells"]:
        meta = _nbg(cell)
        if cell["cell_type"] == "code":
            assert meta and (meta.get("solution") or meta.get("locked")), f"code cell {cell['id']}"
    by_id = {_nbg(c)["grade_id"]: (c, _nbg(c)) for c in nb["cells"] if _nbg(c)}
    graded = {k: m["points"] for k, (_, m) in by_id.items() if m.get("grade")}
    assert graded == {it.id: 0 if it.extra_credit else it.points for it in lesson.rubric.items}
    for it in lesson.rubric.items:
        cell, m = by_id[it.id]
        if it.is_code:
            assert cell["cell_type"] == "code" and (m["solution"], m["locked"]) == (False, True), it.id
        else:
            assert cell["cell_type"] == "markdown" and m["solution"], it.id
            assert by_id[f"{it.id}-question"][1]["locked"], f"{it.id}-question must be a locked cell"


def test_release_holds_no_reference_code_or_answers(lesson):
    source, released = _load(lesson.source), _load(lesson.release)
    ref = []
    for cell in source["cells"]:
        inside = False
        for line in _src(cell).splitlines():
            if BEGIN in line or END in line:
                inside = BEGIN in line
            elif inside and len(line.strip()) >= 8:
                ref.append(line.strip())
    assert ref, "the source's exercise cells hold the reference inside ### BEGIN/END SOLUTION"
    shipped = {line.strip() for cell in released["cells"] for line in _src(cell).splitlines()}
    assert not [line for line in ref if line in shipped], "reference code in the release"
    text = json.dumps(released, ensure_ascii=False)
    assert BEGIN not in text and END not in text
    for cell in released["cells"]:
        meta = _nbg(cell)
        if cell["cell_type"] == "markdown" and meta.get("solution"):
            assert _src(cell).strip() == "YOUR ANSWER HERE", meta["grade_id"]
        if cell["cell_type"] == "code" and meta.get("solution"):
            assert "raise NotImplementedError()" in _src(cell), meta["grade_id"]
    for needle in ("BEGIN HIDDEN TESTS", "BEGIN MARK SCHEME", "autograder.testing"):
        assert needle not in text and needle not in json.dumps(source, ensure_ascii=False)


def test_source_runs_with_every_visible_check_passing(lesson, executed_notebook):
    nb, _ = executed_notebook(lesson.source)
    errors = [(c.get("id"), o["ename"]) for c in nb.cells for o in c.get("outputs", []) if o.get("ename")]
    assert errors == [], errors
    printed = {c.get("id"): "".join(o.get("text", "") for o in c.get("outputs", [])) for c in nb.cells}
    for it in lesson.rubric.code_items:
        assert PASSED.format(item=it.id) in printed[it.id], (it.id, printed[it.id][-500:])


def test_release_runs_with_only_the_code_checks_failing(lesson, executed_notebook):
    """Run All on the untouched release: each code item's check raises NotImplementedError (the stubs),
    nothing else fails, so the lesson's demonstrations and figures never depend on the student's code."""
    nb, seconds = executed_notebook(lesson.release)
    assert seconds < 60, f"the release took {seconds:.1f} s to run"
    failing = {}
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.get("output_type") == "error":
                failing.setdefault(c.get("id"), []).append(o["ename"])
    assert failing == {it.id: ["NotImplementedError"] for it in lesson.rubric.code_items}


@pytest.mark.parametrize("which", ["source", "release"])
def test_quarto_renderable(lesson, which):
    """Renders as a Quarto page and reads well in JupyterLab: no raw cells (no YAML front matter: the title
    is the first cell's only level-1 heading, ``# 第 NN 课：…``; lang and format come from _quarto.yml), no
    raw HTML, no Quarto-only callouts, no widgets."""
    nb = _load(getattr(lesson, which))
    assert not any(c["cell_type"] == "raw" for c in nb["cells"]), "no raw cells (front matter) in a lesson"
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and re.match(r"# 第 \d+ 课：\S", _src(first)), (
        "the first cell must open with the lesson's title as a level-1 heading"
    )
    headings = [line for c in nb["cells"] if c["cell_type"] == "markdown" for line in _src(c).splitlines()]
    assert sum(line.startswith("# ") for line in headings) == 1
    quarto = (LAYOUT.root / "_quarto.yml").read_text(encoding="utf-8")
    assert re.search(r"^lang: zh$", quarto, re.M) and re.search(
        r"^format:\n  html:\n    toc: true", quarto, re.M
    )
    markdown = "\n".join(_src(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert not re.search(
        r"<\s*/?\s*(?:div|span|img|br|p|table|script|style|iframe|details|summary|a|font)(?:\s[^<>]*)?/?>",
        markdown,
        re.IGNORECASE,
    ), "no raw HTML in lesson markdown"
    assert not re.search(r"^:::", markdown, re.MULTILINE), "no Quarto-only callouts"
    assert "mermaid" not in markdown
    assert not any("application/vnd.jupyter.widget" in json.dumps(c) for c in nb["cells"])


def test_links_to_the_glossary(lesson):
    text = "\n".join(_src(c) for c in _load(lesson.source)["cells"])
    assert "[术语表](../glossary.md)" in text


def test_demo_golden_exists(lesson):
    """The demo class's grades of this lesson are a golden file (tests/test_demo.py compares them)."""
    golden = lesson.golden / "demo_grades.csv"
    assert golden.is_file(), "run `make goldens` and commit autograder/lessons/<id>/golden/"
    head = golden.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert [c for c in head if c in {it.id for it in lesson.rubric.items}] == [
        it.id for it in lesson.rubric.items
    ]


def test_the_registry_finds_lessons_by_their_folders():
    for found in LESSONS.values():
        assert found.directory.name == found.id and found.source.is_file() and found.release.is_file()
        assert re.fullmatch(r"[0-9]{2}-[a-z0-9-]+", found.id), "lesson ids: two digits, a dash, a slug"


def test_no_engine_module_names_a_lesson():
    """Lessons are data: no module of the engine (autograder/ outside autograder/lessons/) names a lesson,
    its notebook or its exercise API; everything lesson-specific is found through the registry."""
    names = set()
    for found in LESSONS.values():
        names |= {found.id, found.notebook, found.rubric.title}
    engine = [p for p in (LAYOUT.root / "autograder").rglob("*.py") if LAYOUT.lesson_data not in p.parents]
    assert len(engine) > 20
    for path in engine:
        text = path.read_text(encoding="utf-8")
        assert not [n for n in names if n and n in text], path
