"""Each lesson's learned readers (:mod:`.anchors`), fitted from its labelled corpus once per process.

Kept apart from :mod:`.anchors` because it reads answers as the scorer does (:func:`.written.normalise`),
and the scorer uses :mod:`.anchors`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from autograder.core.rubric import load_rubric
from autograder.grading import anchors
from autograder.grading.written import normalise


@functools.cache
def for_lesson(lesson_dir: Path, exclude: str | None = None) -> dict[str, anchors.Anchors]:
    """``{item id: Anchors}`` for the written items of the lesson in ``lesson_dir`` (its rubric.yaml and
    written_corpus/); empty without a corpus. Fitted once per process (and ``exclude``)."""
    by_item: dict[str, list[tuple[str, dict]]] = {}
    for path in anchors.training_parts(lesson_dir / "written_corpus", exclude):
        for a in yaml.safe_load(path.read_text(encoding="utf-8"))["answers"]:
            by_item.setdefault(a["item"], []).append((normalise(a["answer"]), a["labels"]))
    familiar = frozenset(
        g for answers in by_item.values() for text, _ in answers for g in anchors.trigrams(text)
    )
    out = {}
    for item in load_rubric(lesson_dir / "rubric.yaml").written_items:
        fitted = anchors.fit(item.spec, by_item.get(item.id, []), familiar)
        if fitted is not None:
            out[item.id] = fitted
    return out
