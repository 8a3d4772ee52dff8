"""Suggestions anchored on labelled answers: what answers like this one earned from careful graders.

The rules of :mod:`.written` read claims; on answers by authors they were never tuned on they agree with
the labels on about four answers in five (``corpus_figures.yaml``: every part's first figures). This module
adds a second reader that learns from the labels themselves: for each criterion of a written item, a
logistic regression over character 1–3-grams (TF-IDF, sublinear) of the normalised answer text, fitted on
the lesson's labelled corpus (``written_corpus/<part>.yaml``). Its expected score per criterion is
a check on the rules' score (:func:`combine`):

* the rules' score stands unless the learned reader finds it unlikely: below :data:`LOWER_BELOW`
  probability with a lower expectation, it is lowered to that expectation (in half points); below
  :data:`RAISE_BELOW` with a higher one, raised (over-credit is the costlier error, so raising needs the
  stronger objection), never for a criterion the rules find denied, retracted or misread (a ✗ with a
  quoted sentence: the learned reader does not see a claim withdrawn);
* a changed score carries a doubt (medium confidence) naming both readings, and its evidence says so;
* the salad cap, the flags and the item's points still apply afterwards (:func:`.written.suggest`).

The thresholds were chosen on fresh10 (measured once unseen first, then used to choose) and the
tuning parts, each read by a reader fitted without it; fresh11 to fresh14 measured the choice,
unseen (``corpus_figures.yaml``). The reader never raises a score beside a retraction, in an answer that is
mostly keyword lists (it does not see word order: the reference answer's words shuffled earned 2 of 2), or in
one that names none of the item's concepts (:func:`.written._anchor`), nor in fragments glued together
(:meth:`Anchors.fragments`: a model answer cut into pieces and shuffled keeps its n-grams, not its phrases).

Which parts it learns from: every part whose first figures are recorded (it has been measured once, unseen,
``corpus_figures.yaml``: ``first``), except the held-out parts (:data:`HELD_OUT`), which stay a measure, and
a part recorded with ``learn: false`` (measured, listed as tuning data, not yet learned from).
``lesson_readers.for_lesson(..., exclude)`` leaves one more part out, so that a part is measured by a reader that never saw it
(``autograder/authoring/agreement.py`` scores each training part that way).

It reads only the corpus, never a submission: what it learned is the same for every student.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

#: the parts that are never learned from (only their aggregate figures are read)
HELD_OUT = ("heldout", "fresh2")
#: each part's first recorded figures, beside the lesson folders (``Layout.corpus_figures``)
FIGURES_NAME = "corpus_figures.yaml"
#: regularisation of each criterion's regression (chosen by leaving each author's part out in turn)
C = 10.0


@dataclass(frozen=True)
class Anchors:
    """One written item's learned reader: a vectoriser and, per criterion, (classes in half points, model)."""

    vectoriser: TfidfVectorizer
    models: dict[str, tuple[np.ndarray, LogisticRegression | None]]
    n: int
    #: every character trigram of the lesson's labelled answers (spaces removed): :meth:`fragments`
    familiar: frozenset[str] = field(default=frozenset(), repr=False)

    def reading(self, texts: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per criterion: (the classes in points, each text's probability of each class)."""
        x = self.vectoriser.transform(texts)
        out = {}
        for cid, (classes, model) in self.models.items():
            if model is None:  # every labelled answer earned the same on this criterion
                out[cid] = (classes / 2, np.ones((len(texts), 1)))
            else:
                out[cid] = (model.classes_ / 2, model.predict_proba(x))
        return out

    def fragments(self, text: str) -> str | None:
        """Why ``text`` reads as fragments glued together (pieces of a model answer shuffled, a text
        reversed), or None: it is long, yet almost none of it lies in a familiar phrase (:data:`PHRASE_RUN`
        trigrams in a row that labelled answers use). The reader's n-grams survive the cutting; phrases do not."""
        grams = trigrams(text)
        if not self.familiar or len(grams) < FRAGMENTS_MIN_TRIGRAMS:
            return None
        in_phrases = run = 0
        for known in [g in self.familiar for g in grams] + [False]:
            if known:
                run += 1
                continue
            in_phrases += run if run >= PHRASE_RUN else 0
            run = 0
        share = in_phrases / len(grams)
        return f"{share:.0%} of it in phrases labelled answers use" if share < FRAGMENTS_BELOW else None

    def expected(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Each criterion's expected points for each text."""
        return {cid: probs @ values for cid, (values, probs) in self.reading(texts).items()}


#: a run of this many trigrams that labelled answers use is a familiar phrase ...
PHRASE_RUN = 6
#: ... and an answer of at least FRAGMENTS_MIN_TRIGRAMS trigrams less than this share of which lies in
#: familiar phrases is fragments glued together. In the corpus (each tuning part read without its own part's
#: trigrams) 7 answers fall below, all labelled 0 (off-topic, a salad); the first sincere ones with credit
#: (metaphors in everyday words) lie at 6 to 10 %. Model answers cut into pieces of 2 to 4 characters and
#: shuffled lie at 0 to 4 % (tests/test_written_anchors.py); pieces of 6 at 2 to 7 %, so some pass.
FRAGMENTS_BELOW = 0.06
FRAGMENTS_MIN_TRIGRAMS = 40


def trigrams(text: str) -> list[str]:
    """The character trigrams of ``text`` lower-cased, its white space removed."""
    flat = re.sub(r"\s+", "", text.lower())
    return [flat[i : i + 3] for i in range(len(flat) - 2)]


def fit(
    item: dict, answers: list[tuple[str, dict]], familiar: frozenset[str] = frozenset()
) -> Anchors | None:
    """The learned reader of ``item`` from ``(normalised text, labels per criterion)``, or None with
    fewer than 20 labelled answers; ``familiar``: the trigrams of all the lesson's labelled answers."""
    if len(answers) < 20:
        return None
    vectoriser = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), min_df=2, sublinear_tf=True)
    x = vectoriser.fit_transform([text for text, _ in answers])
    models = {}
    for crit in item["criteria"]:
        y = np.array([round(float(labels.get(crit["id"], 0)) * 2) for _, labels in answers])
        classes = np.unique(y)
        model = LogisticRegression(C=C, max_iter=3000).fit(x, y) if len(classes) > 1 else None
        models[crit["id"]] = (classes, model)
    return Anchors(vectoriser, models, len(answers), familiar)


def training_parts(corpus: Path, exclude: str | None = None) -> list[Path]:
    """The corpus files a lesson's reader learns from (see the module docstring)."""
    figures = corpus.parent.parent / FIGURES_NAME
    if not figures.is_file():  # no corpus measured here (a lesson copied without it): the rules alone
        return []
    recorded = (yaml.safe_load(figures.read_text(encoding="utf-8")) or {}).get("first") or {}
    return [
        path
        for path in sorted(corpus.glob("*.yaml"))
        if path.stem in recorded
        and (recorded[path.stem] or {}).get("learn", True)
        and path.stem not in HELD_OUT
        and path.stem != exclude
    ]


def half(x: float) -> float:
    """Rounded to the nearest half point (halves up)."""
    return float(np.floor(2 * x + 0.5) / 2)


#: the learned reader lowers a criterion when it gives the rules' score less than this probability ...
LOWER_BELOW = 0.5
#: ... and raises it only when it gives the rules' score less than this (over-credit is the costlier error)
RAISE_BELOW = 0.2


def combine(rule: float, expected: float, p_rule: float, points: float, withdrawn: bool) -> float:
    """One criterion's suggestion: the rules' score, unless the learned reader finds it unlikely
    (``p_rule``, its probability of the rules' score) and expects less (lowered to its expectation, in
    half points) or, far more unlikely, more (raised so; never a criterion the rules find withdrawn)."""
    value = rule
    if expected < rule and p_rule < LOWER_BELOW:
        value = min(rule, half(expected))
    elif expected > rule and p_rule < RAISE_BELOW and not withdrawn:
        value = max(rule, half(expected))
    return min(points, value)
