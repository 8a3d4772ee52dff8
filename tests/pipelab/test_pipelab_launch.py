"""``pipelab.launch``: a partition written as Megatron-LM, torchtitan and torch.distributed.pipelining
flags, checked against the frameworks' own code.

``tests/golden/pipelab/launch_goldens.json`` comes from ``tools/make_launch_goldens.py``, which ran
Megatron-LM's ``parse_str_to_list`` (d98e8a6) on every layout string pipelab writes, torchtitan's
``_generate_llm_fqn_per_model_part`` (b5bcd76) on a grid, and torch 2.13's ``pipeline(…, split_spec=…)``
on a toy model.  The Megatron uneven-split rule below is a transcription of
``TransformerConfig.__post_init__`` (``megatron/core/transformer/transformer_config.py``, "Uneven PP").
"""

import json
import random
import re
from pathlib import Path

import pytest

from pipelab.launch import (
    launch_flags,
    megatron_layout,
    megatron_uneven_flags,
    torch_split_spec,
    torchtitan_fqns,
    torchtitan_less_layers,
    torchtitan_split,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "pipelab" / "launch_goldens.json"
DOC = json.loads(GOLDEN.read_text(encoding="utf-8"))


def megatron_parse(layout_str):
    """Megatron-LM ``PipelineParallelLayerLayout.parse_str_to_list`` (d98e8a6), symbols kept as text."""
    layout_str = layout_str.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        layout_str = re.sub(pattern, lambda x: x.group(1) * int(x.group(2)), layout_str)
    out = []
    for stage in layout_str.split("|"):
        assert set(stage) <= set("EtmL"), stage
        out.append(stage)
    return out


def megatron_uneven(num_layers, pp, first, last, vpp=None):
    """Layers per pipeline rank under ``--decoder-first/last-pipeline-num-layers`` (Megatron's checks)."""
    mid_layers, mid_ranks = num_layers, pp
    for x in (first, last):
        if x is not None:
            if x <= 0 or (vpp is not None and x % vpp):
                raise ValueError(x)
            mid_layers -= x
            mid_ranks -= 1
    if bool(mid_layers) != bool(mid_ranks):
        raise ValueError("mismatch")
    if mid_ranks and mid_layers % mid_ranks:
        raise ValueError("middle not divisible")
    if mid_ranks and vpp is not None and (mid_layers // mid_ranks) % vpp:
        raise ValueError("vpp")
    per = mid_layers // mid_ranks if mid_ranks else 0
    return [first if first is not None else per] + [per] * (pp - 2) + [last if last is not None else per]


@pytest.mark.parametrize("case", DOC["megatron"]["cases"], ids=lambda c: str(c["partition"]))
def test_megatron_layout_parsed_by_megatron(case):
    n = case["partition"]
    assert megatron_layout(n) == case["layout"]  # the golden is pipelab's current output
    parsed = case["parsed"]  # what Megatron's own parser made of it
    assert [st.count("t") for st in parsed] == n
    assert "".join(parsed).count("E") == 1 and parsed[0].startswith("E")
    assert "".join(parsed).count("L") == 1 and parsed[-1].endswith("L")
    assert megatron_parse(case["layout"]) == parsed  # the transcription above is faithful


def test_megatron_doc_example():
    ex = DOC["megatron"]["doc_example"]
    assert megatron_parse(ex["layout"]) == ex["parsed"]
    assert len(ex["parsed"]) == 32 and ex["parsed"][0] == "Ettt" and ex["parsed"][-2:] == ["m", "L"]


@pytest.mark.parametrize("seed", range(40))
def test_megatron_layout_round_trip(seed):
    rng = random.Random(seed)
    n = [rng.choice([0, 1, 1, 2, 3, 3, 3, 7, 11]) for _ in range(rng.randint(1, 12))]
    n[0] = max(n[0], 0)
    parsed = megatron_parse(megatron_layout(n))
    assert [st.count("t") for st in parsed] == n
    flags = megatron_uneven_flags(n) if min(n) >= 1 else None
    if flags is not None:
        first = flags["--decoder-first-pipeline-num-layers"]
        last = flags["--decoder-last-pipeline-num-layers"]
        assert megatron_uneven(sum(n), len(n), first, last) == n
    elif min(n) >= 1 and len(n) > 1:
        # unequal middle stages: Megatron's first/last flags cannot give this partition
        assert len(n) > 3 and len(set(n[1:-1])) > 1
        try:
            got = megatron_uneven(sum(n), len(n), n[0], n[-1])
        except ValueError:
            got = None
        assert got != n


def test_megatron_has_no_v_layout():
    with pytest.raises(ValueError, match="i mod PP"):
        megatron_layout([1, 5, 2, 1, 9, 8, 5, 1], placement="v")
    assert "Megatron-LM: no V schedule" in launch_flags([1, 5, 2, 1, 9, 8, 5, 1], placement="v")["text"]


def test_megatron_uneven_with_virtual_stages():
    assert megatron_uneven_flags([4, 6, 6, 2], virtual_stages=2) is not None
    assert megatron_uneven_flags([3, 6, 6, 2], virtual_stages=2) is None
    assert megatron_uneven(18, 4, 4, 2, vpp=2) == [4, 6, 6, 2]
    with pytest.raises(ValueError):
        megatron_uneven(18, 4, 3, 3, vpp=2)


@pytest.mark.parametrize("case", DOC["torchtitan"]["cases"][::7], ids=lambda c: str(tuple(c.values())[:4]))
def test_torchtitan_split_equals_torchtitan(case):
    args = (case["stages"], case["layers"], case["first_less"], case["last_less"])
    if "error" in case:
        with pytest.raises(ValueError):
            torchtitan_split(*args)
    else:
        assert torchtitan_split(*args) == case["layers_per_stage"]


def test_torchtitan_split_whole_grid():
    for case in DOC["torchtitan"]["cases"]:
        args = (case["stages"], case["layers"], case["first_less"], case["last_less"])
        if "error" in case:
            with pytest.raises(ValueError):
                torchtitan_split(*args)
        else:
            assert torchtitan_split(*args) == case["layers_per_stage"], args


def test_torchtitan_options_for_the_lesson_partition():
    fq = {
        (c["stages"], c["layers"], c["first_less"], c["last_less"]): c["fqns"]
        for c in DOC["torchtitan"]["cases"]
        if "fqns" in c
    }
    assert torchtitan_less_layers([3, 11, 11, 7]) == (8, 3)
    # torchtitan's own function gives the lesson's partition for (8, 3) and for (8, 4)
    # (the head's 16 ms and the tail's 8 ms in 2 ms layers), and pipelab's explicit FQN lists match it
    assert fq[(4, 32, 8, 3)] == fq[(4, 32, 8, 4)] == torchtitan_fqns([3, 11, 11, 7])
    assert fq[(8, 32, 1, 1)] == torchtitan_fqns(torchtitan_split(8, 32, 1, 1))
    assert torchtitan_less_layers([1, 5, 2, 1, 9, 8, 5, 1]) is None  # only module_fqns_per_model_part
    assert torchtitan_less_layers([8, 8, 8, 8]) == (0, 0)


@pytest.mark.parametrize("case", DOC["torch"]["cases"], ids=lambda c: str(c["partition"]))
def test_torch_split_points_cut_where_pipelab_says(case):
    n = case["partition"]
    assert torch_split_spec(n) == case["split_spec"]
    assert case["num_stages"] == len(n)
    got = [sum(x.startswith("layers.") for x in st) for st in case["stage_modules"]]
    assert got == n
    assert "tok_embeddings" in case["stage_modules"][0] and "lm_head" in case["stage_modules"][-1]


def test_launch_flags_for_the_lesson_partition():
    d = launch_flags([3, 11, 11, 7])
    assert d["megatron"]["args"] == (
        "--pipeline-model-parallel-size 4 --num-layers 32 "
        "--decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 7"
    )
    assert d["megatron"]["layout"] == "Et*3|(t*11|)*2,t*7L"
    assert "--parallelism.pipeline_parallel_first_stage_less_layers 8" in d["torchtitan"]["args"]
    assert list(d["torch"]["split_spec"]) == ["layers.3", "layers.14", "layers.25"]
    v = launch_flags([1, 5, 2, 1, 9, 8, 5, 1], placement="v")
    assert v["ranks"] == 4 and v["torch"]["stages_per_rank"] == [[0, 7], [1, 6], [2, 5], [3, 4]]
    assert "ZBVZeroBubble" in v["torchtitan"]["args"] and v["megatron"]["args"] is None
    with pytest.raises(ValueError):
        launch_flags([1, 2, 3], placement="v")


def test_cli_flags_and_v_orders():
    import subprocess
    import sys

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "pipelab", *args], capture_output=True, text=True)

    r = cli("flags", "3,11,11,7")
    assert r.returncode == 0 and r.stdout.rstrip("\n") == launch_flags([3, 11, 11, 7])["text"]
    r = cli("flags", "1,5,2,1,9,8,5,1", "--placement", "v", "--schedule", "DualPipeV")
    assert r.returncode == 0 and "ScheduleDualPipeV" in r.stdout and "no V schedule" in r.stdout
    r = cli("flags", "2,5,6,4,1,6,5,3", "--ranks", "4")
    assert (
        r.returncode == 0 and r.stdout.rstrip("\n") == launch_flags([2, 5, 6, 4, 1, 6, 5, 3], ranks=4)["text"]
    )
    r = cli("flags", "3,x")
    assert r.returncode == 2 and "whole numbers" in r.stderr
    r = cli("order", "zbv", "--stages", "2", "--microbatches", "2")
    assert r.returncode == 0 and r.stdout.splitlines()[0].split()[:3] == ["0F0", "0F1", "3F0"]
    r = cli("order", "dualpipev", "--stages", "2", "--microbatches", "3")
    assert r.returncode == 2 and "m >= 2P" in r.stderr


def test_interleaved_partition_megatron_rank_map():
    """With ``ranks``, Megatron infers VPP = stages / PP and gives pipeline rank p the stages
    ``layout[vpp * PP + p]`` (``PipelineParallelLayerLayout.__init__``): the same stages torch builds."""
    n = [2, 5, 6, 4, 1, 6, 5, 3]
    d = launch_flags(n, ranks=4)
    stages = megatron_parse(d["megatron"]["layout"])
    pp = 4
    vpp = len(stages) // pp
    per_rank = [[vp * pp + p for vp in range(vpp)] for p in range(pp)]
    assert per_rank == d["torch"]["stages_per_rank"] == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert [st.count("t") for st in stages] == n
    assert d["megatron"]["uneven"] is None and "--pipeline-model-parallel-layout" in d["megatron"]["args"]
    assert "Interleaved1F1B" in d["torchtitan"]["args"]
    with pytest.raises(ValueError):
        launch_flags(n, ranks=3)
    assert launch_flags([3, 11, 11, 7], ranks=4)["text"] == launch_flags([3, 11, 11, 7])["text"]


def _megatron_args(args: str) -> dict:
    """The Megatron-LM command-line fragment as {flag: value} (the layout value without its quotes)."""
    out = {}
    for flag, value in re.findall(r'(--[a-z-]+)\s+("[^"]*"|\S+)', args):
        assert flag not in out, f"{flag} given twice"
        out[flag] = value.strip('"')
    return out


@pytest.mark.parametrize("seed", range(30))
def test_megatron_args_obey_megatron_argument_checks(seed):
    """The rules Megatron-LM (d98e8a6) enforces on these flags, transcribed:
    ``TransformerConfig.__post_init__`` raises if ``pipeline_model_parallel_layout`` is set together with
    ``num_layers_in_first/last_pipeline_stage`` or ``account_for_embedding/loss_in_pipeline_split``;
    ``validate_args`` (``megatron/training/arguments.py``) asserts the layout's stage count
    (``get_num_stages_from_str`` = ``len(parse_str_to_list(...))``) is divisible by
    ``--pipeline-model-parallel-size`` and sets VPP to the quotient.  Every ``args`` fragment
    ``launch_flags`` writes obeys them and describes the partition it was given."""
    rng = random.Random(seed)
    P = rng.choice([2, 3, 4, 8])
    vpp = rng.choice([1, 1, 2])
    n = [rng.randint(1, 9) for _ in range(P * vpp)]
    if seed % 3 == 0:  # a partition the uneven flags can express
        n = [rng.randint(1, 9)] + [rng.randint(1, 9)] * (P - 2) + [rng.randint(1, 9)] if vpp == 1 else n
    d = launch_flags(n, ranks=P)
    args = _megatron_args(d["megatron"]["args"])
    assert int(args["--pipeline-model-parallel-size"]) == P
    assert int(args["--num-layers"]) == sum(n)
    uneven = {"--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers"}
    account = {"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}
    assert not account & set(args)
    if "--pipeline-model-parallel-layout" in args:
        assert not uneven & set(args), "Megatron raises: layout cannot be set with other layout arguments"
        stages = megatron_parse(args["--pipeline-model-parallel-layout"])
        assert len(stages) % P == 0 and len(stages) // P == vpp  # Megatron's VPP
        assert [st.count("t") for st in stages] == n
    else:
        assert uneven <= set(args) and vpp == 1
        first, last = (int(args[k]) for k in sorted(uneven))
        assert megatron_uneven(sum(n), P, first, last) == n


def test_megatron_checks_transcribed_can_fail():
    """The checks above reject what Megatron rejects: a layout whose stage count does not divide by PP,
    and a layout given together with the uneven flags."""
    stages = megatron_parse("Et*3|t*11|t*11|t*7L")
    assert len(stages) % 3 != 0  # Megatron: "must be divisible by pipeline_model_parallel_size"
    both = _megatron_args('--pipeline-model-parallel-layout "Et|tL" --decoder-first-pipeline-num-layers 1')
    assert "--pipeline-model-parallel-layout" in both and "--decoder-first-pipeline-num-layers" in both
    with pytest.raises(AssertionError, match="twice"):
        _megatron_args("--num-layers 3 --num-layers 4")
