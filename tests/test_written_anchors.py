"""The learned reader that checks the rules (autograder/grading/anchors.py, issue 23): what it learns from,
how it changes a score, and that every change is explained."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from autograder.authoring import agreement
from autograder.core.registry import lessons
from autograder.grading import anchors, lesson_readers
from autograder.grading.written import normalise, suggest

L16 = "16-asymmetric-pipeline"
ITEM = agreement.written_items(L16)["q1"]
GOOD = (
    "上游饥饿：[30,10,10,20] 里 stage 0 最慢，每 30 ms 才交出一个微批次，stage 1 算完 10 ms 就只能空等输入。"
    "下游背压：[20,10,10,30] 里 stage 3 最慢，它还在算上一个微批次、没有发出 recv，所以 stage 2 的阻塞 send "
    "完成不了，等待一路传回上游；缓冲区有空槽时 send 可以先返回。"
)


def test_it_learns_only_from_measured_parts_never_the_held_out_ones(tmp_path):
    corpus = lessons()[L16].corpus
    learned = {p.stem for p in anchors.training_parts(corpus)}
    recorded = set(agreement.first_figures())
    measured_only = {p for p, fig in agreement.first_figures().items() if fig.get("learn") is False}
    # a part may exist in one lesson only (fresh16's lesson 16 half is not written yet)
    here = {p for p in agreement.parts() if p in recorded and (corpus / f"{p}.yaml").is_file()}
    assert learned == here - set(anchors.HELD_OUT) - measured_only
    assert "tune" in learned and "fresh11" in learned
    assert not learned & {"heldout", "fresh2"}
    # a new part joins only once its first figures are recorded
    (tmp_path / "lessons" / "x" / "written_corpus").mkdir(parents=True)
    (tmp_path / "lessons" / anchors.FIGURES_NAME).write_text("first: {tune: {n: 1}}\n", encoding="utf-8")
    for name in ("tune", "fresh99", "heldout"):
        path = tmp_path / "lessons" / "x" / "written_corpus" / f"{name}.yaml"
        path.write_text(f"lesson: x\npart: {name}\nanswers: []\n", encoding="utf-8")
    assert [p.stem for p in anchors.training_parts(tmp_path / "lessons" / "x" / "written_corpus")] == ["tune"]


def test_each_training_part_is_measured_by_a_reader_fitted_without_it():
    directory = lessons()[L16].directory
    everything = lesson_readers.for_lesson(directory)["q1"]
    without = lesson_readers.for_lesson(directory, "fresh11")["q1"]
    n_fresh11 = sum(a["item"] == "q1" for a in agreement.corpus(L16, "fresh11"))
    assert n_fresh11 >= 20 and everything.n - without.n == n_fresh11


def test_fitting_is_deterministic():
    answers = [
        (normalise(a["answer"]), a["labels"]) for a in agreement.corpus(L16, "tune") if a["item"] == "q1"
    ]
    one, two = anchors.fit(ITEM, answers), anchors.fit(ITEM, answers)
    for cid, values in one.expected([GOOD, "不知道"]).items():
        assert np.array_equal(values, two.expected([GOOD, "不知道"])[cid])
    assert anchors.fit(ITEM, answers[:19]) is None  # too few labelled answers: no reader


@pytest.mark.parametrize(
    "rule, expected, p_rule, withdrawn, out",
    [
        (1.0, 0.9, 0.8, False, 1.0),  # likely: the rules' score stands
        (1.0, 0.1, 0.6, False, 1.0),  # lower expectation, but the rules' score is not unlikely
        (1.0, 0.1, 0.3, False, 0.0),  # unlikely and lower: lowered to the expectation (half points)
        (1.0, 0.6, 0.4, False, 0.5),
        (0.0, 0.9, 0.3, False, 0.0),  # higher, but not unlikely enough to raise
        (0.0, 0.9, 0.1, False, 1.0),  # far more unlikely: raised
        (0.0, 0.9, 0.1, True, 0.0),  # ... never a criterion the rules withdrew
        (0.5, 0.1, 0.2, True, 0.0),  # a withdrawn criterion may still be lowered
        (0.5, 2.0, 0.0, False, 1.0),  # never above the criterion's points
    ],
)
def test_combine(rule, expected, p_rule, withdrawn, out):
    assert anchors.combine(rule, expected, p_rule, 1.0, withdrawn) == out


class _Reader:
    """A reader that gives every criterion of lesson 16 Q1 the same probabilities over 0 / 0.5 / 1."""

    def __init__(self, probs):
        self.probs = np.array([probs])

    def reading(self, texts):
        return {
            c["id"]: (np.array([0.0, 0.5, 1.0]), np.repeat(self.probs, len(texts), 0))
            for c in ITEM["criteria"]
        }

    def expected(self, texts):
        return {cid: p @ v for cid, (v, p) in self.reading(texts).items()}

    def fragments(self, text):
        return None


def test_a_lowered_score_says_so_and_is_a_doubt():
    rules = suggest(GOOD, ITEM)
    assert rules.score == 2 and rules.confidence == "high", rules.comment
    s = suggest(GOOD, ITEM, anchors=_Reader([0.9, 0.05, 0.05]))
    assert s.score == 0 and s.confidence == "medium", s.comment
    assert all(not e["met"] and "相似的已评答案得分更低" in e["note"] and e["quote"] for e in s.evidence)
    assert len(s.doubts) == 2 and all("规则读到 1 分" in d for d in s.doubts), s.doubts
    assert "? 置信度中等" in s.comment and "✗" in s.comment


def test_a_raised_score_quotes_the_answer_and_never_stands_beside_a_retraction():
    text = "stage 0 慢，stage 1 每次都在等它的输入。stage 3 慢的时候，stage 2 发不出去，一直卡着。"
    rules = suggest(text, ITEM)
    s = suggest(text, ITEM, anchors=_Reader([0.02, 0.03, 0.95]))
    assert s.score > rules.score and s.confidence == "medium", (rules.comment, s.comment)
    raised = [e for e in s.evidence if "相似的已评答案得到这一点" in e["note"]]
    assert raised and all(e["met"] and e["quote"] and e["quote"] in normalise(text) for e in raised), (
        s.evidence
    )
    taken_back = suggest(text + "收回，我说错了。", ITEM, anchors=_Reader([0.02, 0.03, 0.95]))
    assert taken_back.score <= suggest(text + "收回，我说错了。", ITEM).score, taken_back.comment


def test_the_reader_does_not_lift_a_salad_past_its_cap():
    salad = (
        "因为背压所以饥饿，上游阻塞导致下游 send 晚到，当 recv 缓冲时上游空等，所以下游背压，"
        "因为 P2P 发送阻塞导致上游饥饿。"
    )
    s = suggest(salad, ITEM, anchors=_Reader([0.0, 0.0, 1.0]))
    assert s.score <= float(ITEM["points"]) / 4 and s.confidence == "low", s.comment


def test_a_class_is_graded_with_the_reader(monkeypatch):
    """grading/scoring.py passes each written item's reader: the suggestion a class gets is the checked one."""
    from autograder.grading import scoring

    seen = []
    real = scoring.suggest

    def spy(*args, **kwargs):
        seen.append(kwargs.get("anchors"))
        return real(*args, **kwargs)

    monkeypatch.setattr(scoring, "suggest", spy)
    from autograder.grading.assignment import Assignment

    assignment = Assignment.load(lessons()[L16].directory)
    scoring.score_items(assignment, [], {"q1": GOOD})
    assert seen and all(isinstance(a, anchors.Anchors) for a in seen)


def test_the_figures_file_is_where_the_layout_says():
    from autograder.core.layout import REPO

    assert REPO.corpus_figures == lessons()[L16].directory.parent / anchors.FIGURES_NAME
    assert "fresh11" in yaml.safe_load(REPO.corpus_figures.read_text(encoding="utf-8"))["first"]


def _references() -> list[tuple[str, str, str]]:
    """(lesson, item id, the reference answer's markdown) for every written item, read once from the solutions."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = []
    for lesson in agreement.corpus_lessons():
        nb = json.loads(next((root / "solutions" / lesson).glob("*.ipynb")).read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell["cell_type"] == "markdown" and meta.get("solution") and meta.get("grade"):
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                out.append((lesson, meta["grade_id"], source))
    return out


REFERENCES = _references()


def _reference_text(lesson: str, item_id: str) -> str:
    return next(text for les, iid, text in REFERENCES if (les, iid) == (lesson, item_id))


def _reference_answers():
    import random
    import re

    for lesson, item_id, source in REFERENCES:
        words = re.findall(r"[\u4e00-\u9fff]{2}|[A-Za-z_]+", source)
        yield lesson, item_id, " ".join(random.Random(0).sample(words, len(words)))


@pytest.mark.parametrize(
    "lesson, item_id, shuffled", [pytest.param(*a, id=f"{a[0][:2]}-{a[1]}") for a in _reference_answers()]
)
def test_the_reference_answers_words_shuffled_gain_nothing_from_the_reader(lesson, item_id, shuffled):
    """Attack: the reference answer's words in random order. A bag of character n-grams reads it much like the
    answer itself (2 of 2 on lesson 16 Q1 before the reader was kept out of keyword lists); the rules see a
    keyword list, and the reader may not raise what the rules read there."""
    item = agreement.written_items(lesson)[item_id]
    rules = suggest(shuffled, item)
    graded = suggest(shuffled, item, anchors=lesson_readers.for_lesson(lessons()[lesson].directory)[item_id])
    assert graded.score <= rules.score and graded.score <= float(item["points"]) / 2, graded.comment


def _cut(text: str, size: int, sep: str) -> str:
    import random
    import re

    flat = re.sub(r"\s+", "", text)
    pieces = [flat[i : i + size] for i in range(0, len(flat), size)]
    return sep.join(random.Random(0).sample(pieces, len(pieces)))


@pytest.mark.parametrize("size, sep", [(2, ""), (3, ""), (4, ""), (3, " "), (4, "，")])
@pytest.mark.parametrize(
    "lesson, item_id, reference", [pytest.param(*a, id=f"{a[0][:2]}-{a[1]}") for a in REFERENCES]
)
def test_the_reference_answer_cut_into_pieces_and_shuffled_earns_at_most_half(
    lesson, item_id, reference, size, sep
):
    """Attack: the model answer cut into pieces of a few characters, shuffled and glued. Before the fragments
    check it earned 2 of 2 on lesson 16 Q1 and Q3 from the rules alone (their words survive the cutting), and the
    learned reader raised 16 Q2 from 0.5 to 2. Now: at most half, flagged low confidence when credited."""
    item = agreement.written_items(lesson)[item_id]
    reader = lesson_readers.for_lesson(lessons()[lesson].directory)[item_id]
    assert suggest(reference, item, anchors=reader).score == float(item["points"])  # the uncut reference
    got = suggest(_cut(reference, size, sep), item, anchors=reader)
    assert got.score <= float(item["points"]) / 2, got.comment
    assert got.score == 0 or got.confidence == "low", got.comment


@pytest.mark.parametrize(
    "lesson, item_id, reference", [pytest.param(*a, id=f"{a[0][:2]}-{a[1]}") for a in REFERENCES]
)
def test_the_reference_answer_reversed_gains_nothing_from_the_reader(lesson, item_id, reference):
    """Attack: the model answer's characters in reverse order (the learned reader raised lesson 03 Q1 and
    lesson 16 Q3 from 0 to full marks: reversed, a character trigram bag looks much the same)."""
    item = agreement.written_items(lesson)[item_id]
    reader = lesson_readers.for_lesson(lessons()[lesson].directory)[item_id]
    got = suggest(reference[::-1], item, anchors=reader)
    assert got.score <= suggest(reference[::-1], item).score and got.score <= float(item["points"]) / 2


def test_fragments_reads_phrases_not_characters():
    """The fragments check: a sincere answer in the lesson's words passes, the same words cut apart do not,
    and a reader without trigrams (fitted without them) never calls anything fragments."""
    reader = lesson_readers.for_lesson(lessons()[L16].directory)["q1"]
    sincere = normalise(_reference_text(L16, "q1"))
    assert reader.fragments(sincere) is None
    assert reader.fragments(_cut(sincere, 3, "")) is not None
    assert reader.fragments("太短") is None  # too short to judge
    bare = anchors.Anchors(reader.vectoriser, reader.models, reader.n)
    assert bare.fragments(_cut(sincere, 3, "")) is None


def test_another_questions_model_answer_earns_nothing():
    """Attack: lesson 16 Q1's model answer pasted as the answer to lesson 03 Q1. The learned reader raised it
    to 1 of 1 (the rules give 0) until fresh14 was learned from; no rule stops it, so a refit that brings it
    back fails here."""
    item = agreement.written_items("03-load-imbalance")["q1"]
    reader = lesson_readers.for_lesson(lessons()["03-load-imbalance"].directory)["q1"]
    assert suggest(_reference_text(L16, "q1"), item, anchors=reader).score == 0


def test_a_part_recorded_with_learn_false_is_measured_but_not_learned_from(tmp_path):
    corpus = tmp_path / "lesson" / "written_corpus"
    corpus.mkdir(parents=True)
    for part in ("fresh20", "fresh21", "fresh22", "heldout"):
        (corpus / f"{part}.yaml").write_text("answers: []\n", encoding="utf-8")
    figures = {"first": {"fresh20": {"n": 1}, "fresh21": {"n": 1, "learn": False}, "heldout": {"n": 1}}}
    (tmp_path / anchors.FIGURES_NAME).write_text(yaml.safe_dump(figures), encoding="utf-8")
    assert [p.stem for p in anchors.training_parts(corpus)] == ["fresh20"]
