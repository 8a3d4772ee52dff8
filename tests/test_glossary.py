"""One glossary (docs/glossary.md, issue 13 point 6) serves every lesson: the release ships a copy next to
the lessons, each lesson links to it, and the lessons avoid every word the glossary lists as not used:
every cell, the reference answers and the 评分表 generated from rubric.yaml included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder.core.registry import lessons

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossary.md"
LESSONS = {found.id: found.source for found in lessons().values()}


def _src(cell) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def _text(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join(_src(c) for c in cells)


def _not_used() -> list[str]:
    """The 「…」 words of the glossary's 「不用」 column (the last column of its term tables)."""
    words = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| **") and len(cols) == 3:
            words += re.findall(r"「([^」]+)」", cols[2])
    return words


def test_release_ships_the_glossary():
    assert (ROOT / "lessons" / "glossary.md").read_bytes() == GLOSSARY.read_bytes(), "run `make release`"


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_lessons_avoid_the_words_the_glossary_retires(lesson):
    words = _not_used()
    assert {"在飞", "前向流", "激活内存", "各 stage"} <= set(words), words
    text = _text(LESSONS[lesson])
    for word in words:
        pattern = re.escape(word) + ("(?!水)" if word == "前向流" else "")
        found = re.findall(rf".{{0,12}}{pattern}.{{0,12}}", text)
        assert not found, (word, found)


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_c_is_only_the_layer_cost_and_warm_up_is_p_minus_p_minus_1(lesson):
    text = _text(LESSONS[lesson])
    assert not re.search(r"(传输延迟|固定开销)\s*\$c\$|\$c\$\s*是每段", text)  # hop latency is d, overhead o
    assert not re.search(r"\\min\(m,\s*P-p\)\$ 个前向（\*?\*?预热", text)  # warm-up is min(m, P-p-1)
    # h and a are the hidden size and the attention heads of the activation formula, nothing else
    assert not re.search(r"\$h=(16|2\.2)|\$a=8|固定开销 \$[ha]\$|各耗时 \$h\$", text)


def test_warm_up_attribution_follows_torch_2_13():
    """Issue 21: torch 2.13's Schedule1F1B counts warmup_chunks = min(n_microbatches, num_stages -
    stage_index), i.e. min(m, P-p); Megatron's num_warmup_microbatches is min(P-p-1, m). The glossary
    must not attribute the lesson's convention to PyTorch, and must state NCCL's buffer nuance."""
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| **预热**"))
    assert "PyTorch 的 `Schedule1F1B` 同此" not in row
    assert "`warmup_chunks` 是 $\\min(m,\\,P-p)$" in row and "`num_warmup_microbatches` 同此" in row
    rendezvous = next(line for line in text.splitlines() if line.startswith("| **会合**"))
    assert "`NCCL_BUFFSIZE`，默认 4 MiB" in rendezvous and "缓冲区空出来" not in rendezvous
