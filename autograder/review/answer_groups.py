"""Answer groups: a class's answers to one written item, grouped by substance, for review one group at a time.

Two answers share a group when

* the scorer (:mod:`autograder.grading.written`) found **the same criteria met** in both, so they carry the same
  suggested score and the same kind of evidence, and
* their **texts are similar**: cosine similarity of character n-gram TF-IDF vectors (scikit-learn) of the
  normalised text (:func:`autograder.grading.written.normalise`, lower-cased) is at least ``threshold`` for
  *every pair* in the group (complete linkage), so the representative answer an instructor reads is close
  to each member and to the others. Answers that are identical after normalisation always share a group.

The representative is the member most similar to the others (the medoid). A group of one answer is an
*outlier*: it is reviewed on its own. Groups are deterministic (same answers, same groups and keys), and a
group's ``key`` changes whenever its members or their answers change, so a review page never confirms a
group that is no longer what the instructor saw.

Nothing here reads or writes files: :mod:`autograder.review.groups` loads a class and confirms groups.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from autograder.grading.written import normalise

__all__ = ["SIMILARITY", "Answer", "AnswerGroup", "answer_of", "group_answers", "similarity_matrix"]

#: lowest TF-IDF cosine similarity between any two answers of one group (tuned in bench/bench_groups.py)
SIMILARITY = 0.65
NGRAMS = (1, 3)  # character n-grams inside words (CJK runs are one "word"): characters to trigrams


@dataclass
class Answer:
    """One student's answer to one written item, with the scorer's reading of it."""

    student_id: str
    text: str  # as submitted (markdown)
    points: float
    suggestion: float
    met: tuple[str, ...]  # ids of the criteria the scorer found met, sorted
    evidence: list[dict] = field(default_factory=list)
    confirmed: float | None = None  # the instructor's score in the gradebook, None while unconfirmed
    submission_id: str = ""  # nbgrader's submitted-notebook id (formgrader's page of this submission)
    flags: tuple[str, ...] = ()  # the scorer's flags (hidden content, invisible characters, ...)
    doubts: tuple[str, ...] = ()  # why the scorer's reading is doubtful (medium confidence)

    @property
    def canonical(self) -> str:
        """What similarity is measured on: the normalised text, lower-cased, whitespace collapsed."""
        return " ".join(normalise(self.text).lower().split())


def answer_of(
    student_id: str, text: str, points: float, suggestion: float, evidence: list[dict], **kw
) -> Answer:
    """An :class:`Answer` from the scorer's output (``evidence``: ``[{"criterion", "met", ...}]``)."""
    met = tuple(sorted(str(e.get("criterion")) for e in evidence if e.get("met")))
    kw["flags"] = tuple(kw.get("flags") or ())
    kw["doubts"] = tuple(kw.get("doubts") or ())
    return Answer(student_id, text, float(points), float(suggestion), met, list(evidence), **kw)


@dataclass
class AnswerGroup:
    """Answers of one item with the same criteria met and similar text; ``members[0]`` represents them."""

    item_id: str
    members: list[Answer]
    similarity: float  # the lowest similarity between two different answers of the group (1.0: one text)
    key: str = ""

    @property
    def representative(self) -> Answer:
        return self.members[0]

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def outlier(self) -> bool:
        return len(self.members) == 1

    @property
    def low_confidence(self) -> bool:
        """Some member's suggestion carries a flag (hidden content, salad, not scored, …): review first."""
        return any(a.flags for a in self.members)

    @property
    def doubtful(self) -> bool:
        """Medium confidence: some member's reading is doubtful (incoherent, mostly rubric words, unexplained)."""
        return not self.low_confidence and any(a.doubts for a in self.members)

    @property
    def suggestion(self) -> float:
        return self.members[0].suggestion

    @property
    def met(self) -> tuple[str, ...]:
        return self.members[0].met

    @property
    def points(self) -> float:
        return self.members[0].points

    @property
    def confirmed(self) -> list[Answer]:
        return [a for a in self.members if a.confirmed is not None]


def similarity_matrix(texts: Sequence[str]):
    """Pairwise cosine similarity (numpy array) of character n-gram TF-IDF vectors of ``texts``; 1 on the
    diagonal, 0 between an empty text and any other."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    n = len(texts)
    if n == 0 or not any(t.strip() for t in texts):
        return np.eye(n)
    vectors = TfidfVectorizer(analyzer="char_wb", ngram_range=NGRAMS, sublinear_tf=True).fit_transform(texts)
    sim = np.clip(cosine_similarity(vectors), 0.0, 1.0)
    np.fill_diagonal(sim, 1.0)
    return sim


def _clusters(indices: list[int], sim, threshold: float) -> list[list[int]]:
    """Complete-linkage clusters of ``indices`` (rows of ``sim``): every pair within a cluster >= threshold."""
    if len(indices) == 1:
        return [indices]
    from sklearn.cluster import AgglomerativeClustering

    sub = sim[indices][:, indices]
    labels = AgglomerativeClustering(
        n_clusters=None,
        metric="precomputed",
        linkage="complete",
        distance_threshold=1.0 - threshold + 1e-9,
    ).fit_predict(1.0 - sub)
    found: dict[int, list[int]] = defaultdict(list)
    for idx, label in zip(indices, labels, strict=True):
        found[int(label)].append(idx)
    return list(found.values())


def _key(item_id: str, members: Iterable[Answer]) -> str:
    digest = hashlib.sha256(item_id.encode())
    for a in sorted(members, key=lambda a: a.student_id):
        digest.update(b"\0" + a.student_id.encode() + b"\0" + a.text.encode("utf-8", "surrogatepass"))
        digest.update(b"\0" + ",".join(a.met).encode() + f"\0{a.suggestion!r}".encode())
    return digest.hexdigest()[:16]


def group_answers(
    item_id: str, answers: Sequence[Answer], threshold: float = SIMILARITY
) -> list[AnswerGroup]:
    """Group one item's answers (see the module docstring). Groups of two or more come first, largest
    first (then by suggested score, highest first); outliers (groups of one) follow."""
    canonical = [a.canonical for a in answers]
    texts = sorted(set(canonical))
    text_index = {t: i for i, t in enumerate(texts)}
    sim = similarity_matrix(texts)

    by_text: dict[tuple, dict[int, list[Answer]]] = defaultdict(lambda: defaultdict(list))
    for a, c in zip(answers, canonical, strict=True):
        # a flagged answer (hidden content, invisible characters, ...) never shares a group with an answer
        # that is not flagged the same way: what it showed the instructor is not what it held
        by_text[(a.met, a.suggestion, tuple(sorted(a.flags)))][text_index[c]].append(a)

    groups = []
    for bucket in by_text.values():
        for cluster in _clusters(sorted(bucket), sim, threshold):
            weight = {i: len(bucket[i]) for i in cluster}
            # medoid: the text with the highest total similarity to the members (ties: first in order)
            rep = max(cluster, key=lambda i: (sum(sim[i, j] * weight[j] for j in cluster), -i))
            ordered = sorted(cluster, key=lambda i: (i != rep, -sim[rep, i], i))
            members = [a for i in ordered for a in sorted(bucket[i], key=lambda a: a.student_id)]
            low = min((sim[i, j] for i in cluster for j in cluster if i < j), default=1.0)
            groups.append(AnswerGroup(item_id, members, round(float(low), 4), _key(item_id, members)))
    groups.sort(
        key=lambda g: (
            not g.low_confidence,
            not g.doubtful,
            g.outlier,
            -g.size,
            -g.suggestion,
            g.representative.student_id,
        )
    )
    return groups
