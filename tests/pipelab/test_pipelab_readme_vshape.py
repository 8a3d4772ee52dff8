"""The numbers pipelab/README.md quotes for V placement and launch flags are what pipelab computes."""

import re
from pathlib import Path

import pytest

from pipelab.launch import launch_flags
from pipelab.vsplit import placement_table

README = (Path(__file__).resolve().parents[2] / "pipelab" / "README.md").read_text(encoding="utf-8")
NAMES = {"1f1b": "1F1B", "zb-h1": "ZB-H1", "zbv": "ZB-V", "dualpipev": "DualPipeV"}


def _between(tag):
    m = re.search(rf"<!-- {tag} -->\n(.*?)\n<!-- /{tag} -->", README, re.S)
    assert m, tag
    return m.group(1)


@pytest.fixture(scope="module")
def table():
    return placement_table(32, 2.0, 16.0, 8.0, 4, 8)


def test_readme_table_is_computed(table):
    lines = _between("vshape-table").splitlines()[2:]
    want = [
        f"| {NAMES[r['schedule']]} | {r['placement']} | {r['split']} | {r['stage_layers']} | {r['makespan']:g} "
        f"| {r['bubble_ratio']:.4f} | {[round(x) for x in r['peak_memory']]} |"
        for r in table
    ]
    assert lines == want
    assert all(x == round(x) for r in table for x in r["peak_memory"])  # rounding hides nothing


def test_readme_prose_numbers(table):
    rows = {(r["schedule"], r["split"]): r for r in table}
    ev = rows[("zbv", "even")]["stage_times"]
    per_rank = [ev[r] + ev[7 - r] for r in range(4)]
    mean = sum(rows[("1f1b", "even")]["stage_times"]) / 4
    text = " ".join(README.split())
    assert (
        f"that rank does {per_rank[0]:g} ms of forward per microbatch against {per_rank[1]:g} ms elsewhere"
        in text
    )
    assert f"head + tail ({16.0 + 8.0:g} ms) already exceed the mean per-rank forward ({mean:g} ms)" in text
    assert rows[("1f1b", "balanced")]["makespan"] > rows[("zbv", "balanced")]["makespan"]
    assert rows[("zbv", "balanced")]["makespan"] > rows[("zb-h1", "balanced")]["makespan"]
    assert max(table, key=lambda r: r["makespan"])["placement"] == "v"  # "the worst row"


def test_readme_launch_flags_are_computed(table):
    rows = {(r["schedule"], r["split"]): r for r in table}
    loop = rows[("1f1b", "balanced")]["stage_layers"]
    v = rows[("zbv", "balanced")]["stage_layers"]
    assert f"launch_flags({loop})" in README and f'launch_flags({v}, placement="v")' in README
    assert _between("launch-flags-loop") == "```\n" + launch_flags(loop)["text"] + "\n```"
    assert _between("launch-flags-v") == "```\n" + launch_flags(v, placement="v")["text"] + "\n```"


def test_readme_lighter_ends():
    rows = {(r["schedule"], r["split"]): r for r in placement_table(32, 2.0, 8.0, 4.0, 4, 8)}
    zbv, h1, one = (rows[(k, "balanced")] for k in ("zbv", "zb-h1", "1f1b"))
    mean = sum(one["stage_times"]) / 4
    text = " ".join(README.split())
    assert (
        f"`placement_table(32, 2.0, 8.0, 4.0, 4, 8)` (head + tail {8.0 + 4.0:g} ms, mean per-rank forward {mean:g} ms) "
        f"gives ZB-V {zbv['makespan']:g} ms (bubble {zbv['bubble_ratio']:.4f}) against ZB-H1's {h1['makespan']:g} ms "
        f"({h1['bubble_ratio']:.4f}) and 1F1B's {one['makespan']:g} ms"
    ) in text
    assert zbv["makespan"] < h1["makespan"] < one["makespan"]
