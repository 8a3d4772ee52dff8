"""Answer groups (issue 11, point 4): how many reviews an instructor makes against how many answers.

* **Demo class** (``make demo``'s sample class, ``autograder.authoring.demo.build_sample_class``): every written
  answer of every submission that is a readable notebook, scored by ``autograder.grading.written.suggest`` (what
  grading records) and grouped with ``autograder.review.answer_groups.group_answers``, as
  ``python -m autograder groups --out build/demo/grading`` shows after ``make demo``.
* **Synthetic 300-answer class per item**, built from the labelled corpus
  (``autograder/<lesson>/written_corpus/{tune,heldout}.yaml``): 300 students, each answering with a
  corpus answer drawn at random and changed on the surface the way copies and near-copies differ in a
  real class (full-/half-width punctuation, spacing, line breaks, markdown emphasis, letter case, a filler
  sentence), none of which changes what a careful instructor gives, so each synthetic answer keeps its
  corpus label. One class is built from the tuning part, one from the held-out part. The corpus answers themselves,
unchanged (each written to differ from the others), are grouped as a class too: the hard case, where
answers that look alike but deserve different scores (a correct answer and its negation) must not share a
group.

For each class: answers, distinct texts, groups of two or more, outliers, reviews (= groups + outliers)
and answers per review; and, where labels exist, **purity**: the share of grouped answers whose label
(total points of the criteria) equals the most common label of their group, and the number of grouped
answers whose label differs from their representative's by more than 0.5 (what confirming a group with
the representative's score would get wrong by more than the ±0.5 tolerance). The similarity threshold
was chosen on the tuning part only, so that it does not lean on the static review: the lowest threshold
at which grouping by text alone (criteria ignored) puts no answer more than 0.5 from its representative's
label, neither in the synthetic class nor in the corpus itself (the sweep prints the rule's pick). The
held-out part is reported with it unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

from autograder.core.registry import lesson_of, lessons
from autograder.grading.written import suggest
from autograder.review.answer_groups import SIMILARITY, answer_of, group_answers

CLASS_SIZE = 300
SEED = 11
SWEEP = (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9)
FILLERS = ["以上。", "希望是对的。", "(I hope this is right.)", "谢谢老师！", "That is my answer."]
WIDTH = str.maketrans({",": "，", ":": "：", ";": "；", "(": "（", ")": "）", "?": "？", "!": "！"})
NARROW = str.maketrans({v: k for k, v in {",": "，", ":": "：", ";": "；", "(": "（", ")": "）"}.items()})


def _surface_variants(rng: random.Random):
    return [
        lambda t: t.translate(WIDTH),
        lambda t: t.translate(NARROW),
        lambda t: t.replace("。", "。 ").replace(". ", ".  "),
        lambda t: t.replace("\n\n", "\n").strip() + "\n",
        lambda t: t.replace("**", ""),
        lambda t: t.lower(),
        lambda t: t.rstrip() + " " + rng.choice(FILLERS),
        lambda t: "  " + t.replace("\n", "  \n"),
    ]


def written_items(assignment_dir: Path) -> dict[str, dict]:
    return {it.id: it.spec for it in lesson_of(assignment_dir).rubric.written_items}


def corpus_part(assignment_dir: Path, part: str) -> list[dict]:
    path = assignment_dir / "written_corpus" / f"{part}.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))["answers"] if path.is_file() else []


def _score(text: str, item: dict, student: str, label: float | None = None):
    s = suggest(text, item)
    a = answer_of(student, text, item["points"], s.score, s.evidence)
    a.label = label  # type: ignore[attr-defined]  (bench-only annotation)
    return a


def written_answers_of(corpus: list[dict], item: dict) -> list:
    """The corpus answers to ``item`` as a class, unchanged, each with its label."""
    return [
        _score(c["answer"] or "", item, c["id"], float(sum(c["labels"].values())))
        for c in corpus
        if c["item"] == item["id"]
    ]


def synthetic_class(corpus: list[dict], item: dict, size: int = CLASS_SIZE, seed: int = SEED) -> list:
    """``size`` answers to ``item``: corpus answers with label-preserving surface changes (see above)."""
    rng = random.Random(f"{seed}-{item['id']}")
    pool = [c for c in corpus if c["item"] == item["id"]]
    variants = _surface_variants(rng)
    answers = []
    for i in range(size):
        base = rng.choice(pool)
        text = base["answer"] or ""
        for change in rng.sample(variants, rng.randint(1, 3)):
            text = change(text) if text.strip() else text
        answers.append(_score(text, item, f"syn-{i:03d}", float(sum(base["labels"].values()))))
    return answers


def text_only(answers: list) -> list:
    """The same answers as if the static review found nothing in any: grouping by text alone."""
    out = []
    for a in answers:
        out.append(dataclasses.replace(a, met=(), suggestion=0.0))
        out[-1].label = a.label  # type: ignore[attr-defined]
    return out


def stats(answers: list, threshold: float = SIMILARITY, item_id: str = "q") -> dict:
    groups = group_answers(item_id, answers, threshold)
    multi = [g for g in groups if not g.outlier]
    out = {
        "answers": len(answers),
        "distinct": len({a.text for a in answers}),
        "groups": len(multi),
        "outliers": len(groups) - len(multi),
        "reviews": len(groups),
    }
    if answers and getattr(answers[0], "label", None) is not None:
        grouped = [a for g in multi for a in g.members]
        out["pure"] = sum(Counter(a.label for a in g.members).most_common(1)[0][1] for g in multi)
        out["purity"] = out["pure"] / len(grouped) if grouped else 1.0
        out["off_by_more_than_half"] = sum(
            1 for g in multi for a in g.members if abs(a.label - g.representative.label) > 0.5
        )
    return out


def demo_class() -> dict[tuple[str, str], list]:
    """(assignment, item) -> answers of make demo's sample class (readable notebooks only)."""
    from autograder.authoring.demo import build_sample_class

    found: dict[tuple[str, str], list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = build_sample_class(Path(tmp) / "class")
        for aid, directory in ((k, v.directory) for k, v in lessons().items()):
            items = written_items(directory)
            nb_name = yaml.safe_load((directory / "rubric.yaml").read_text(encoding="utf-8"))["notebook"]
            for path in sorted(root.glob(f"*/{aid}/{nb_name}.ipynb")):
                try:
                    nb = json.loads(path.read_text(encoding="utf-8"))
                except ValueError:  # the sample class has a truncated file on purpose
                    continue
                for cell in nb["cells"]:
                    gid = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
                    if gid in items:
                        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                        student = path.parent.parent.name
                        found.setdefault((aid, gid), []).append(_score(text, items[gid], student))
    return found


def _line(name: str, s: dict) -> str:
    extra = ""
    if "purity" in s:
        extra = f"  purity {s['purity']:.1%}  off>0.5: {s['off_by_more_than_half']}"
    return (
        f"  {name:<28} {s['answers']:>5} answers ({s['distinct']:>3} distinct) -> {s['reviews']:>4} reviews "
        f"({s['groups']:>3} groups + {s['outliers']:>3} outliers), {s['answers'] / max(s['reviews'], 1):5.1f} "
        f"answers/review{extra}"
    )


def _total(rows: list[dict]) -> dict:
    total = {k: sum(r[k] for r in rows) for k in ("answers", "distinct", "groups", "outliers", "reviews")}
    if rows and "purity" in rows[0]:
        grouped = sum(r["answers"] - r["outliers"] for r in rows)
        total["pure"] = sum(r["pure"] for r in rows)
        total["purity"] = total["pure"] / grouped if grouped else 1.0
        total["off_by_more_than_half"] = sum(r["off_by_more_than_half"] for r in rows)
    return total


def main() -> None:
    t0 = time.perf_counter()
    print(f"answer groups: same criteria met + char n-gram TF-IDF cosine >= {SIMILARITY} for every pair")
    print("demo class (make demo's sample class; python -m autograder groups --out build/demo/grading):")
    rows = []
    for (aid, iid), answers in sorted(demo_class().items()):
        rows.append(stats(answers, item_id=iid))
        print(_line(f"{aid} {iid}", rows[-1]))
    print(_line("all items", _total(rows)))

    for part in ("tune", "heldout"):
        print(f"synthetic class, {CLASS_SIZE} answers per item from the corpus' {part} part (seed {SEED}):")
        rows, sweeps, plain, classes, plains = [], {t: [] for t in SWEEP}, [], [], []
        for aid, directory in ((k, v.directory) for k, v in lessons().items()):
            corpus = corpus_part(directory, part)
            for iid, item in written_items(directory).items():
                if not any(c["item"] == iid for c in corpus):
                    continue
                unchanged = written_answers_of(corpus, item)
                plain.append(stats(unchanged, item_id=iid))
                answers = synthetic_class(corpus, item)
                rows.append(stats(answers, item_id=iid))
                print(_line(f"{aid} {iid}", rows[-1]))
                classes.append(answers)
                plains.append(unchanged)
                for t in SWEEP:
                    sweeps[t].append(stats(answers, t, iid))
        if not rows:
            print("  (no corpus found)")
            continue
        print(_line("all items", _total(rows)))
        print(_line(f"the {part} corpus itself", _total(plain)) + "  (every answer written to differ)")
        print(
            f"  threshold sweep ({part}): as used (criteria + text): reviews, purity, off by > 0.5 | "
            "text alone (criteria ignored): off by > 0.5 in the synthetic class, in the corpus itself"
        )
        safe = []
        for t in SWEEP:
            s = _total(sweeps[t])
            alone = _total([stats(text_only(a), t) for a in classes])
            plain_alone = _total([stats(text_only(a), t) for a in plains])
            if alone["off_by_more_than_half"] == 0 and plain_alone["off_by_more_than_half"] == 0:
                safe.append(t)
            mark = "  <- used" if abs(t - SIMILARITY) < 1e-9 else ""
            print(
                f"    {t:.2f}: {s['reviews']:>5} reviews of {s['answers']}, purity {s['purity']:6.1%}, off>0.5: "
                f"{s['off_by_more_than_half']:>3} | text alone: {alone['off_by_more_than_half']:>3}, "
                f"{plain_alone['off_by_more_than_half']:>3}{mark}"
            )
        if part == "tune":
            pick = min(safe) if safe else None
            print(
                f"  rule (tuning part only): the lowest threshold at which text alone mixes nothing: {pick}"
            )
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
