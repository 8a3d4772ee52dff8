"""Written-answer suggestions against a careful instructor's labels (issue 11, point 2).

Prints, for the tuning and the held-out parts of the labelled corpus (autograder/lessons/*/written_corpus/),
per item and overall (and beside each part's first recorded figures): exact agreement, within ±0.5, MAE, over-credit, under-credit and the highest
suggestion given to a negated answer; then the scorer's speed per answer. Targets (held-out part):
>= 90 % within ±0.5 overall, no item under 80 %, over-credit <= 3 %, negated answers <= 0.5.
"""

from __future__ import annotations

import time

from autograder.authoring import agreement
from autograder.core.registry import lessons
from autograder.grading.lesson_readers import for_lesson
from autograder.grading.written import suggest


def main() -> None:
    for part in agreement.parts():
        table = agreement.report(part)
        print(agreement.format_report(part, table))
        print(agreement.by_confidence(part))
        print(agreement.comparison(part))
        print(agreement.goal(table))
        if part == "heldout":
            worst = min(m["within"] for m in table.values())
            ok = (
                table["overall"]["within"] >= agreement.TARGET_WITHIN
                and worst >= agreement.TARGET_ITEM_WITHIN
                and table["overall"]["over"] <= agreement.TARGET_OVER
                and max(m["negated_max"] for m in table.values()) <= agreement.TARGET_NEGATED_MAX
            )
            print(
                f"held-out targets (>= 90 % within overall, every item >= 80 %, over <= 3 %, negated <= 0.5): "
                f"{'met' if ok else 'NOT met'}"
            )
        print()
    cases = [
        (a, agreement.written_items(a)[x["item"]], x["answer"])
        for a in agreement.corpus_lessons()
        for part in agreement.parts()
        for x in agreement.corpus(a, part)
    ]
    t0 = time.perf_counter()
    for _, item, text in cases:
        suggest(text, item)
    per = (time.perf_counter() - t0) / len(cases)
    print(
        f"suggest(), rules alone: {per * 1000:.2f} ms per answer over {len(cases)} corpus answers "
        f"({900 * per:.1f} s for a class of 300 students x 3 questions)"
    )
    for_lesson.cache_clear()
    t0 = time.perf_counter()
    readers = {a: for_lesson(lessons()[a].directory) for a in agreement.corpus_lessons()}
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    for a, item, text in cases:
        suggest(text, item, anchors=readers[a].get(item["id"]))
    checked = (time.perf_counter() - t0) / len(cases)
    print(
        f"suggest(), checked by the learned reader (as graded): {checked * 1000:.2f} ms per answer "
        f"({checked / per:.2f} x the rules alone), after fitting the readers of "
        f"{len(readers)} lessons once per process in {fit:.2f} s"
    )


if __name__ == "__main__":
    main()
