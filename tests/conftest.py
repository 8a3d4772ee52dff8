"""Shared pytest setup. Keep it minimal: topic-specific helpers live in their own test modules."""

import os
import time
from pathlib import Path

import pytest

# the example lesson of tests/test_add_a_lesson.py holds hidden tests; they run in a copy of the repository
collect_ignore_glob = ["fixtures/*"]

# Figures must not need a display; notebooks switch to the inline backend themselves.
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def executed_notebook():
    """``executed_notebook(path)`` → (notebook, seconds): every cell run in a fresh python3 kernel,
    continuing after errors, ONCE per path and session (lesson 16's source, ~15 s, serves both
    test_lesson16_notebook and test_lesson16_extension). The notebook is shared: read it, never modify it."""
    import nbformat
    from nbclient import NotebookClient

    cache: dict[Path, tuple] = {}

    def run(path: Path) -> tuple:
        path = Path(path).resolve()
        if path not in cache:
            nb = nbformat.read(path, as_version=4)
            client = NotebookClient(
                nb,
                kernel_name="python3",
                timeout=60,
                allow_errors=True,
                resources={"metadata": {"path": str(path.parent)}},
            )
            start = time.perf_counter()
            client.execute()
            cache[path] = (nb, time.perf_counter() - start)
        return cache[path]

    return run


#: the ordinary formula in the hostile answer (it must still reach MathJax as TeX)
HOSTILE_REVIEW_FORMULA = "$\\frac{p-1}{m+p-1}$"


@pytest.fixture(scope="session")
def hostile_review_notebook():
    """``hostile_review_notebook(release, payload)`` → the release notebook (a dict, not modified) with every
    vector of ``tests/fixtures/hostile_review/vectors.json``: an ordinary answer with a formula then the
    answer vectors in q1, output vectors on the exercise cell, raw and metadata vectors as cells after it.
    ``payload(name)`` gives the JavaScript put where a vector says ``{JS}`` (no double quotes).
    Used by tests/test_hostile_review.py and tests/browser/test_hostile_review.py."""
    import json

    vectors = json.loads((Path(__file__).parent / "fixtures/hostile_review/vectors.json").read_text("utf-8"))

    def build(release: dict, payload) -> dict:
        nb = json.loads(json.dumps(release))
        cells = nb["cells"]
        by_id = {(c["metadata"].get("nbgrader") or {}).get("grade_id"): c for c in cells}
        answer, code = by_id["q1"], by_id["exercise"]
        texts, extra = [f"气泡占比 {HOSTILE_REVIEW_FORMULA}，**慢 stage** 决定节拍。"], []
        for v in vectors["vectors"]:
            fill = json.loads(json.dumps(v["content"]).replace("{JS}", payload(v["name"])))
            if v["place"] == "answer":
                texts.append(fill)
            elif v["place"] == "output":
                code.setdefault("outputs", []).append(fill)
            elif v["place"] == "raw":
                meta = {"raw_mimetype": v["raw_mimetype"]} if v.get("raw_mimetype") else {}
                extra.append({"cell_type": "raw", "id": f"raw-{v['name']}", "metadata": meta, "source": fill})
            else:
                cell = {"cell_type": "markdown", "id": f"md-{v['name']}", "metadata": fill, "source": "m"}
                extra.append(cell)
        answer["source"] = "\n\n".join(texts)
        at = cells.index(code) + 1
        cells[at:at] = extra
        return nb

    return build
