"""The written-answer suggestions agree with a careful instructor on the labelled corpus (issue 11).

The corpus (autograder/lessons/<lesson>/written_corpus/) is checked for shape first: every written item has
>= 40 labelled answers, the labels use the rubric's criteria and points, and about a third is held out.
Then the agreement targets are enforced on the HELD-OUT part, which the scorer was never tuned on:
>= 90 % of suggestions within ±0.5 of the label overall, no item under 80 %, over-credit (suggestion >
label + 0.5) <= 3 %, and no answer that denies the right answer suggested more than 0.5. The figures
themselves are printed by `make bench` (bench/bench_written.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.authoring import agreement
from autograder.grading.written import suggest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def heldout() -> dict[str, dict[str, float]]:
    return agreement.report("heldout")


@pytest.mark.parametrize("assignment", agreement.corpus_lessons())
def test_corpus_shape_and_labels_follow_the_rubric(assignment):
    items = agreement.written_items(assignment)
    parts = {part: agreement.corpus(assignment, part) for part in agreement.parts()}
    ids = [a["id"] for answers in parts.values() for a in answers]
    assert len(ids) == len(set(ids)), "answer ids are unique across all parts"
    for item_id, item in items.items():
        counts = {part: sum(a["item"] == item_id for a in answers) for part, answers in parts.items()}
        total = counts["tune"] + counts["heldout"]
        assert total >= 40, f"{assignment}/{item_id}: {total} labelled answers, need >= 40"
        assert 0.3 <= counts["heldout"] / total <= 0.4, f"{assignment}/{item_id}: held-out share {counts}"
        assert counts["fresh"] >= 15 and counts["fresh2"] >= 15, (
            f"{assignment}/{item_id}: fresh parts {counts}"
        )
        points = {c["id"]: float(c["points"]) for c in item["criteria"]}
        # a criterion that can earn half (a ``full_only`` concept: the memory formula without min(m, ·),
        # a buffer that is not latest-value only) may be labelled in half steps in every part
        halves = {c["id"] for c in item["criteria"] if any(k.get("full_only") for k in c.get("concepts", []))}
        steps = {
            c["id"]: float(c["points"]) / int(c.get("need", 1)) / (2 if c["id"] in halves else 1)
            for c in item["criteria"]
        }
        for part, answers in parts.items():
            for a in (a for a in answers if a["item"] == item_id):
                assert set(a["labels"]) == set(points), f"{a['id']}: labels {sorted(a['labels'])}"
                for cid, got in a["labels"].items():
                    # the fresh parts' authors were asked for multiples of 0.5 (an instructor's partial
                    # credit on a criterion); tune and heldout hold whole criteria or their halves
                    step = 0.5 if part.startswith("fresh") else steps[cid]
                    assert 0 <= got <= points[cid] and (got / step).is_integer(), f"{a['id']}/{cid}={got}"
                assert isinstance(a["answer"], str) and a["reason"].strip(), a["id"]
                if a.get("negated"):
                    assert sum(a["labels"].values()) <= 0.5, f"{a['id']} is marked negated"
                assert a.get("kind") in (None, *agreement.KINDS), f"{a['id']}: kind {a.get('kind')!r}"


def test_every_item_has_the_hard_cases():
    """Negations, copies of the question, keyword stuffing, off-topic and empty answers are in every item."""
    for assignment in agreement.corpus_lessons():
        for item_id in agreement.written_items(assignment):
            answers = [
                a
                for part in agreement.parts()
                for a in agreement.corpus(assignment, part)
                if a["item"] == item_id
            ]
            styles = " ".join(a["style"] for a in answers)
            assert sum(bool(a.get("negated")) for a in answers) >= 2, f"{assignment}/{item_id}"
            assert sum(a["answer"].strip() in ("", "YOUR ANSWER HERE") for a in answers) >= 2
            for kind in ("copy of the question", "keyword stuffing", "off-topic", "nonsense"):
                assert kind in styles, f"{assignment}/{item_id} has no {kind!r} answer"


def test_heldout_agreement_meets_the_targets(heldout):
    table = agreement.format_report("heldout", heldout)
    overall = heldout["overall"]
    assert overall["within"] >= agreement.TARGET_WITHIN, table
    assert overall["over"] <= agreement.TARGET_OVER, table
    for key, m in heldout.items():
        assert m["within"] >= agreement.TARGET_ITEM_WITHIN, f"{key}\n{table}"
        assert m["negated_max"] <= agreement.TARGET_NEGATED_MAX, f"{key}\n{table}"


@pytest.mark.parametrize("part", ["heldout", "fresh2"])
def test_held_out_figures_never_drop_below_the_recorded_floor(part):
    """CI guard (issue 23): within ±0.5 and exact may not fall, over-credit may not rise, against the
    aggregate figures recorded in autograder/lessons/corpus_figures.yaml (floor)."""
    floor = agreement.floor_figures()[part]
    now = agreement.report(part)["overall"]
    table = agreement.format_report(part, agreement.report(part))
    assert now["n"] == floor["n"], table
    assert now["within"] >= floor["within"] - 1e-9, table
    assert now["exact"] >= floor["exact"] - 1e-9, table
    assert now["over"] <= floor["over"] + 1e-9, table


def test_parts_are_discovered_and_ordered(tmp_path, monkeypatch):
    """Any written_corpus/<part>.yaml whose part: names it is a part (a new fresh3 needs no code);
    known parts first in their order, new ones by name; a file whose part: disagrees is not one."""
    corpus = tmp_path / "written_corpus"
    corpus.mkdir()
    for name in ("zeta", "fresh3", "heldout", "tune"):
        (corpus / f"{name}.yaml").write_text(f"lesson: x\npart: {name}\nanswers: []\n", encoding="utf-8")
    (corpus / "notes.yaml").write_text("lesson: x\npart: other\nanswers: []\n", encoding="utf-8")

    class Found:
        pass

    found = Found()
    found.corpus = corpus
    monkeypatch.setattr(agreement, "lessons", lambda: {"x": found})
    agreement.parts.cache_clear()
    try:
        assert agreement.parts() == ("tune", "heldout", "fresh3", "zeta")
    finally:
        monkeypatch.undo()
        agreement.parts.cache_clear()
    assert agreement.parts()[:4] == ("tune", "heldout", "fresh", "fresh2")


def test_bad_kinds_report_their_highest_share_and_first_figures_are_printed():
    rows = [
        agreement.Scored("16-asymmetric-pipeline", "x", "q1", 0.0, 1.5, False, "salad", 2.0),
        agreement.Scored("16-asymmetric-pipeline", "y", "q1", 0.0, 0.5, False, "retraction", 2.0),
        agreement.Scored("16-asymmetric-pipeline", "z", "q1", 2.0, 2.0, False, "correct", 2.0),
    ]
    m = agreement.metrics(rows)
    assert (m["bad_n"], m["bad_max"]) == (2, 0.75)
    out = agreement.format_report("fresh2", {"overall": m})
    assert "first (measured once unseen): 93.0% within ±0.5, 81.0% exact, 5.0% over" in out
    assert "first figures: not recorded yet" in agreement.format_report("fresh-unrecorded", {"overall": m})
    assert agreement.first_figures().keys() >= {"tune", "heldout", "fresh", "fresh2"}


def test_metrics_can_fail():
    """The metric itself: a scorer that always gives full marks fails every target."""
    rows = [
        agreement.Scored("16-asymmetric-pipeline", "x", "q1", 0.0, 2.0, True),
        agreement.Scored("16-asymmetric-pipeline", "y", "q1", 1.0, 1.0, False),
    ]
    m = agreement.metrics(rows)
    assert (m["exact"], m["within"], m["over"], m["under"], m["negated_max"]) == (0.5, 0.5, 0.5, 0.0, 2.0)
    assert m["mae"] == 1.0


def test_the_heldout_parts_are_never_listed_answer_by_answer():
    for part in ("heldout", "fresh2"):
        with pytest.raises(ValueError, match="held-out"):
            agreement.disagreements(part)


def test_a_part_is_listed_only_once_its_first_figures_are_recorded(monkeypatch):
    """A new author's part stays unseen until its first measurement is recorded; parts sort naturally."""
    recorded = agreement.first_figures()
    monkeypatch.setattr(
        agreement, "first_figures", lambda: {k: v for k, v in recorded.items() if k != "fresh9"}
    )
    assert "fresh9" in agreement.parts() and "fresh9" not in agreement.tuning_parts()
    with pytest.raises(ValueError):
        agreement.disagreements("fresh9")
    assert agreement.parts()[:2] == ("tune", "heldout")
    assert agreement.parts().index("fresh2") < agreement.parts().index("fresh9")


def test_fresh3_is_tuning_data_since_its_first_measurement():
    assert "fresh3" in agreement.tuning_parts() and "fresh3" not in agreement.UNSEEN
    assert all(r.assignment and r.id for r in agreement.disagreements("fresh3"))


@pytest.mark.parametrize("assignment", agreement.corpus_lessons())
def test_reference_answers_get_full_suggestions(assignment):
    """The solutions notebook's answer cells (the one reference) earn every criterion."""
    items = agreement.written_items(assignment)
    nb_path = next((ROOT / "solutions" / assignment).glob("*.ipynb"))
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    answers = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "markdown" and meta.get("solution") and meta.get("grade"):
            src = cell["source"]
            answers[meta["grade_id"]] = "".join(src) if isinstance(src, list) else src
    assert sorted(answers) == sorted(items)
    for item_id, item in items.items():
        s = suggest(answers[item_id], item)
        assert s.score == item["points"], s.comment


def test_fresh3_meets_issue_23s_targets_now_that_it_is_tuning_data():
    """fresh3 was measured once unseen (corpus_figures.yaml: first); since then it is tuning data, and the
    scorer tuned on it must keep issue 23's targets there: >= 95 % within ±0.5 (every item >= 90 %),
    over-credit <= 3 %, and no retraction/reversal/negation/salad suggested above its label or half marks."""
    table = agreement.report("fresh3")
    overall = table.pop("overall")
    assert overall["within"] >= 0.95 and overall["over"] <= 0.03, overall
    assert all(m["within"] >= 0.90 for m in table.values()), table
    bad = [
        r
        for r in agreement.score_part("fresh3")
        if r.kind in agreement.BAD_KINDS and r.suggestion > max(r.label, r.points / 2)
    ]
    assert not bad, bad


def test_the_report_splits_agreement_by_confidence_and_shows_hard_kinds_over_their_label():
    """`make bench` prints how far each confidence level can be trusted, and how far a retraction, reversal,
    negation or salad was suggested above its own label (bad.over)."""
    line = agreement.by_confidence("fresh10")
    assert line.startswith("fresh10 by confidence: high ") and " medium " in line and " low " in line, line
    table = agreement.report("tune")
    assert "bad.over" in agreement.format_report("tune", table)
    assert table["overall"]["bad_n"] and table["overall"]["bad_over"] <= 0.5 + 1e-9


def test_issue_23s_goal_is_judged_condition_by_condition():
    def row(key, label, suggestion, kind="correct"):
        return agreement.Scored("16-asymmetric-pipeline", key, "q1", label, suggestion, False, kind, 2.0)

    good = [row(str(i), 2.0, 2.0) for i in range(19)] + [row("r", 1.0, 1.0, "retraction")]
    table = {"16/q1": agreement.metrics(good), "overall": agreement.metrics(good)}
    assert agreement.goal(table).count(" met") == 4 and "NOT" not in agreement.goal(table)
    # one retraction suggested 1.5 of 2 (its label): within, items and over-credit hold, the hard kinds do not
    bad = good[:-1] + [row("r", 1.5, 1.5, "retraction")]
    table = {"16/q1": agreement.metrics(bad), "overall": agreement.metrics(bad)}
    assert agreement.goal(table).endswith("no hard kind above half NOT met")
    # two answers over by a point: 90 % within, 10 % over
    worse = good[:18] + [row("a", 0.0, 1.0), row("b", 0.0, 1.0)]
    table = {"16/q1": agreement.metrics(worse), "overall": agreement.metrics(worse)}
    assert "within >= 95% NOT met" in agreement.goal(table) and "over <= 3% NOT met" in agreement.goal(table)
    assert "every item >= 90% met" in agreement.goal(table)


def test_the_comparison_scorers_read_the_same_answers_differently():
    """Rules alone and the learned reader alone, in the same run as the shipped scorer (make bench)."""
    with pytest.raises(ValueError, match="unknown scorer"):
        agreement.score_part("fresh14", scorer="oracle")
    shipped, rules, reader = (
        [r.suggestion for r in agreement.score_part("fresh14", ("16-asymmetric-pipeline",), scorer=s)]
        for s in agreement.SCORERS
    )
    assert len(shipped) == len(rules) == len(reader) == 75
    assert shipped != rules and shipped != reader and rules != reader
    assert all(x in {0.0, 0.5, 1.0, 1.5, 2.0} for x in reader)
    line = agreement.comparison("fresh14")
    assert "rules alone" in line and "learned reader alone" in line
