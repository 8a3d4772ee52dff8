"""Code similarity (autograder/review/similarity.py): what normalisation ignores, winnowing's guarantee, the release's
code excluded, and on lesson 16 a renamed-and-reformatted copy as the top pair while independent solutions
stay below the threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.authoring.demo import INCLUDE, parse_expectations, reference_code
from autograder.core.layout import REPO as LAYOUT
from autograder.grading.engine import grade_code
from autograder.grading.notebook import neutralise_magics
from autograder.grading.submission import shutdown_workers
from autograder.review.similarity import (
    THRESHOLD,
    WINDOW,
    Document,
    K,
    Token,
    compare_class,
    fingerprint,
    normalised_tokens,
    release_exclusion,
)

AUTOGRADER_DIR = LAYOUT.lesson_data

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "similarity"

ORIGINAL = '''
def bubble(times, m):
    """Share of idle time."""
    total = sum(times) + (m - 1) * max(times)  # closed form
    return 1.0 - m * sum(times) / (len(times) * total)
'''
DISGUISED = """
def idle_share(durations,
               count):
  # my own comment
  span = (sum(durations)
          + (count - 1) * max(durations))
  return 1.0 - count * sum(durations) / (len(durations) * span,)[0]
"""


def _texts(code: str) -> list[str]:
    return [t.text for t in normalised_tokens(code)]


def test_renaming_reformatting_comments_and_docstrings_change_no_token():
    renamed = """
def idle_share(durations, count):
    span = sum(durations) + (count - 1) * max(durations)
    return 1.0 - count * sum(durations) / (len(durations) * span)
"""
    reformatted = "def bubble(times,m,):\n  '''x'''\n  total=sum(times)+(m-1)*max(times);return 1.0-m*sum(times)/(len(times)*total)\n"
    assert _texts(ORIGINAL) == _texts(renamed) == _texts(reformatted)
    assert "sum" in _texts(ORIGINAL) and "N" in _texts(ORIGINAL)  # builtins kept, own names not
    assert _texts(DISGUISED) != _texts(ORIGINAL)  # a real change (the added tuple) still shows
    one_line = "if x:\n    return 1\n"
    assert _texts("if x: return 1\n") == _texts(one_line)
    assert _texts("import numpy as np\nx = 1\n") == _texts("from numpy import array\nx = 1\n")


def test_code_that_does_not_tokenize_keeps_what_was_read():
    tokens = normalised_tokens("x = 1\ny = (2,\n")  # unclosed bracket
    assert [t.text for t in tokens][:4] == ["N", "=", "0", "<eol>"]
    assert normalised_tokens('s = """never closed\n') is not None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=40),
    st.lists(st.sampled_from("abcdefgh"), min_size=K + WINDOW - 1, max_size=K + WINDOW + 10),
    st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=40),
    st.lists(st.sampled_from("ijklmnop"), min_size=0, max_size=40),
)
def test_winnowing_finds_every_shared_run_of_the_guaranteed_length(before, shared, after, other):
    """Schleimer et al.'s guarantee: a common run of K + WINDOW - 1 tokens yields a common fingerprint."""
    a = [Token(x, 1) for x in before + shared + after]
    b = [Token(x, 1) for x in other + shared]
    assert set(fingerprint(a)) & set(fingerprint(b))


def _release_exclusion(assignment: str, notebook: str) -> frozenset[int]:
    release = json.loads((LAYOUT.releases / assignment / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    return release_exclusion(
        neutralise_magics("".join(c["source"]))[0] for c in release["cells"] if c["cell_type"] == "code"
    )


def test_release_code_is_excluded():
    """The release's stub as handed out has no fingerprint of its own; two students who only add a line
    each to it are not compared (too little code of their own), so they never look alike."""
    assignment, notebook = "16-asymmetric-pipeline", "asymmetric_pipeline"
    exclude = _release_exclusion(assignment, notebook)
    stub = (LAYOUT.lesson_data / assignment / "mistakes" / "release_stub.py").read_text(encoding="utf-8")
    assert Document.of("stub", [stub], exclude).size == 0
    assert Document.of("stub", [stub]).size > 0  # (it has fingerprints until the release is removed)
    pairs, small = compare_class(
        [Document.of("a", [stub + "\nx = 1\n"], exclude), Document.of("b", [stub + "\ny = 2\n"], exclude)]
    )
    assert pairs == [] and [d.student_id for d in small] == ["a", "b"]


def _complete_alternatives(directory: Path) -> dict[str, str]:
    """The catalogue's complete files (not ``# include: reference`` patches) that earn some points: the
    catalogue's own alternative implementations."""
    out = {}
    for path in sorted((directory / "mistakes").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not INCLUDE.search(text) and any(v > 0 for v in parse_expectations(text).values()):
            out[path.stem] = text
    return out


LESSON16 = LAYOUT.lesson_data / "16-asymmetric-pipeline"
NEW_SOLUTIONS = ("16_event_queue", "16_table_bisection")


def test_renamed_and_reformatted_copy_is_the_top_pair_and_independent_solutions_stay_below():
    exclude = _release_exclusion("16-asymmetric-pipeline", "asymmetric_pipeline")
    independent = {"reference": reference_code(LESSON16), **_complete_alternatives(LESSON16)}
    assert set(independent) == {"reference", "closed_form", "numpy_floats_ok", "seed_reference"}
    independent.update(
        {name: (FIXTURES / f"{name}.py").read_text(encoding="utf-8") for name in NEW_SOLUTIONS}
    )
    copy = (FIXTURES / "16_closed_form_renamed.py").read_text(encoding="utf-8")
    docs = [Document.of(name, [code], exclude) for name, code in independent.items()]
    docs.append(Document.of("copy", [copy], exclude))
    pairs, small = compare_class(docs)
    assert small == []
    top = pairs[0]
    assert {top.a.student_id, top.b.student_id} == {"closed_form", "copy"}
    assert top.score >= 0.8 > THRESHOLD  # measured 0.89
    others = pairs[1:]
    assert len(others) >= 10  # independent solutions do share short runs: the threshold is what separates
    assert max(p.score for p in others) < THRESHOLD / 2  # measured 0.15
    # the copy split over two cells (as a student would paste it) is found just the same
    half = copy.index("    def simulate_1f1b_execution")
    split = Document.of("split", [copy[:half], copy[half:]], exclude)
    best = max(compare_class([*docs[:-1], split])[0], key=lambda p: p.score)
    assert {best.a.student_id, best.b.student_id} == {"closed_form", "split"}


@pytest.mark.parametrize(
    ("assignment", "notebook"),
    [("16-asymmetric-pipeline", "asymmetric_pipeline"), ("03-load-imbalance", "load_imbalance")],
)
def test_no_two_complete_catalogue_files_look_alike(assignment, notebook):
    """Every complete file of a catalogue (no ``# include: reference``: alternatives, null implementations,
    fakes) and the reference were written apart: no pair reaches the threshold. (Patches over the reference
    are copies of it by construction and would.)"""
    directory = LAYOUT.lesson_data / assignment
    exclude = _release_exclusion(assignment, notebook)
    docs = [Document.of("reference", [reference_code(directory)], exclude)]
    for path in sorted((directory / "mistakes").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not INCLUDE.search(text):
            docs.append(Document.of(path.stem, [text], exclude))
    pairs, small = compare_class(docs)
    assert len(docs) - len(small) >= 3
    assert all(p.score < THRESHOLD for p in pairs), [(p.a.student_id, p.b.student_id, p.score) for p in pairs]


@pytest.mark.parametrize("name", [*NEW_SOLUTIONS, "16_closed_form_renamed"])
def test_the_solutions_written_for_the_test_are_real_solutions(name):
    """The independent solutions (and the copy) earn full marks on lesson 16's exercises: the threshold is
    measured against real, different solutions, not against code that solves nothing."""
    try:
        scores = grade_code(LESSON16, (FIXTURES / f"{name}.py").read_text(encoding="utf-8"))
    finally:
        shutdown_workers()
    assert scores == {"simulator": 1, "min_microbatches": 1, "solver": 2, "challenge": 0}, scores
