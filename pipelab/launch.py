"""From the lesson's partition to the launch flag: the same split written for Megatron-LM, torchtitan
and ``torch.distributed.pipelining``.

A partition is the number of transformer layers of every pipeline stage, in model order
(``[3, 11, 11, 7]``: what :func:`pipelab.partition.water_fill` returns).  With ``placement="v"`` there
are ``2P`` stages and rank ``r`` holds stages ``r`` and ``2P−1−r`` (:mod:`pipelab.vshape`).  What each
framework accepts, read from its source:

* **Megatron-LM** (NVIDIA/Megatron-LM at d98e8a6, ``megatron/training/arguments.py``
  ``_add_distributed_args``; ``megatron/core/transformer/transformer_config.py``
  ``TransformerConfig.__post_init__``; ``megatron/core/transformer/pipeline_parallel_layer_layout.py``;
  ``docs/user-guide/features/pipeline_parallel_layout.md``):

  - ``--pipeline-model-parallel-layout STR``: stages separated by ``|``; ``E`` embedding, ``t``
    transformer decoder layer, ``m`` MTP layer, ``L`` loss; ``x*n`` repeats a symbol, ``(…)*n`` a group;
    commas are cosmetic; empty stages are allowed.  The list has ``PP × VPP`` stages in layer order and
    stage ``i`` runs on pipeline rank ``i mod PP`` (``layout[vpp_rank * PP + pp_rank]``): a loop
    placement only.  Megatron-LM has no V schedule, so a V partition has no Megatron layout.  The
    layout cannot be combined with the flags below.
  - ``--decoder-first-pipeline-num-layers A`` / ``--decoder-last-pipeline-num-layers B``: layers of the
    first and last stage; the remaining layers must divide evenly over the middle stages (and, with
    virtual pipelining, every count by VPP).  So they express a partition whose middle stages are equal.
  - ``--account-for-embedding-in-pipeline-split`` / ``--account-for-loss-in-pipeline-split`` count the
    embedding / loss as one layer each in an even split: not a way to write an arbitrary partition.

* **torchtitan** (pytorch/torchtitan at b5bcd76, ``torchtitan/config/configs.py`` ``ParallelismConfig``;
  ``torchtitan/distributed/pipeline_parallel.py`` ``_generate_llm_fqn_per_model_part``,
  ``_get_pipeline_metadata``, ``_get_pp_rank_to_stage_indices_mapping``):

  - ``parallelism.pipeline_parallel_first_stage_less_layers`` / ``..._last_stage_less_layers`` (int,
    default 1) are *weights*: the embedding counts as ``a`` layers and the output as ``b`` in
    ``L + a + b`` "effective layers", split evenly over the stages (the first ``(L+a+b) mod S`` stages
    one more), then the first stage gets ``a`` fewer real layers and the last ``b`` fewer.  Not every
    partition is reachable (the middle stages differ by at most one);
    :func:`torchtitan_less_layers` searches for the pair that reproduces a partition.
  - ``parallelism.module_fqns_per_model_part`` (list of lists of module names such as
    ``tok_embeddings``, ``layers.0``, ``norm``, ``lm_head``) states any partition exactly.
  - A multi-stage schedule (``ZBVZeroBubble``, ``DualPipeV``, ``Interleaved1F1B``) uses 2 stages per
    rank by default; for ``ZBVZeroBubble`` and ``DualPipeV`` torchtitan places them as a V.

* **torch.distributed.pipelining** (torch 2.13, ``_IR.py`` ``pipeline``, ``SplitPoint``,
  ``annotate_split_points``): ``pipeline(module, mb_args, split_spec={"layers.3":
  SplitPoint.BEGINNING, …})`` cuts the traced model *before* each named submodule; stage ``i`` of the
  ``Pipe`` is built with ``pipe.build_stage(i, device)``.  For a V schedule rank ``r`` builds stages
  ``r`` and ``2P−1−r`` and passes both to ``ScheduleZBVZeroBubble`` / ``ScheduleDualPipeV``.
"""

from __future__ import annotations

from . import _validate as V

__all__ = [
    "megatron_layout",
    "megatron_uneven_flags",
    "torchtitan_split",
    "torchtitan_less_layers",
    "torchtitan_fqns",
    "torch_split_spec",
    "launch_flags",
]


def _counts(stage_layers, *, allow_zero=False) -> list[int]:
    if isinstance(stage_layers, (str, bytes)):
        raise TypeError("stage_layers must be a sequence of layer counts")
    out = [V.count(n, "stage_layers[i]", minimum=0 if allow_zero else 1) for n in stage_layers]
    if not out:
        raise ValueError("stage_layers must not be empty")
    return out


# -- Megatron-LM ------------------------------------------------------------------------------------


def _megatron_stage(n: int, first: bool, last: bool) -> str:
    body = "" if n == 0 else "t" if n == 1 else f"t*{n}"
    return ("E" if first else "") + body + ("L" if last else "")


def megatron_layout(stage_layers, *, placement: str = "loop") -> str:
    """The ``--pipeline-model-parallel-layout`` string of a partition (loop placement): ``E`` on the
    first stage, ``L`` on the last, ``t*n`` for ``n`` decoder layers; a run of equal middle stages is
    written as a group, ``(t*11|)*2``, followed by a cosmetic comma.  ``placement="v"`` raises
    ``ValueError``: Megatron's layout maps stage ``i`` to rank ``i mod PP``."""
    if placement == "v":
        raise ValueError(
            "Megatron-LM places layout stage i on pipeline rank i mod PP and has no V schedule: "
            "a V partition has no --pipeline-model-parallel-layout"
        )
    if placement != "loop":
        raise ValueError(f"placement must be 'loop' or 'v', got {placement!r}")
    n = _counts(stage_layers, allow_zero=True)
    S = len(n)
    parts = [_megatron_stage(x, i == 0, i == S - 1) for i, x in enumerate(n)]
    out, i = [], 0
    while i < S:
        j = i
        while 0 < i and j + 1 < S - 1 and parts[j + 1] == parts[i]:
            j += 1
        run = j - i + 1
        if 0 < i < S - 1 and run >= 2:
            out.append(f"({parts[i]}|)*{run},")
        else:
            out.append(parts[i] + ("|" if i < S - 1 else ""))
            run = 1
        i += run
    return "".join(out)


def megatron_uneven_flags(stage_layers, *, virtual_stages: int = 1) -> dict[str, int] | None:
    """``{"--decoder-first-pipeline-num-layers": a, "--decoder-last-pipeline-num-layers": b}`` when
    Megatron's uneven split (first ``a``, last ``b``, the rest evenly over the middle ranks) gives this
    partition, else ``None``.  ``stage_layers`` are layers per pipeline *rank* (all virtual stages of a
    rank together); with ``virtual_stages > 1`` every count must divide by it, as Megatron checks."""
    n = _counts(stage_layers)
    vpp = V.count(virtual_stages, "virtual_stages")
    if len(n) < 2:
        return None
    mid = n[1:-1]
    if any(x != n[1] for x in mid) or any(x % vpp for x in n):
        return None
    return {"--decoder-first-pipeline-num-layers": n[0], "--decoder-last-pipeline-num-layers": n[-1]}


# -- torchtitan -------------------------------------------------------------------------------------


def torchtitan_split(num_stages: int, num_layers: int, first_less: int = 1, last_less: int = 1) -> list[int]:
    """Layers per stage that torchtitan's ``_generate_llm_fqn_per_model_part(num_stages, num_layers,
    input_weight=first_less, output_weight=last_less)`` produces (same arithmetic, same errors as
    ``ValueError``)."""
    S = V.count(num_stages, "num_stages")
    L = V.count(num_layers, "num_layers")
    a = V.count(first_less, "first_less", minimum=0)
    b = V.count(last_less, "last_less", minimum=0)
    if S == 1:
        return [L]
    eff = L + a + b
    if S > eff:
        raise ValueError(f"Number of stages ({S}) cannot be greater than effective layers ({eff})")
    per, extra = divmod(eff, S)
    if a > per or b > per:
        raise ValueError(f"input/output weight ({a}, {b}) exceeds minimum layers per stage ({per})")
    out, cur = [], 0
    for i in range(S):
        want = per + (1 if i < extra else 0) - (a if i == 0 else b if i == S - 1 else 0)
        take = max(0, min(want, L - cur))  # torchtitan stops adding layers when they run out
        out.append(take)
        cur += take
    return out


def torchtitan_less_layers(stage_layers, *, max_weight: int | None = None) -> tuple[int, int] | None:
    """The smallest ``(first_stage_less_layers, last_stage_less_layers)`` (by sum, then first) for
    which :func:`torchtitan_split` gives ``stage_layers``, or ``None`` if no pair does (then use
    :func:`torchtitan_fqns`).  Searched up to ``max_weight`` (default: the total layer count)."""
    n = _counts(stage_layers, allow_zero=True)
    S, L = len(n), sum(n)
    if L < 1:
        raise ValueError("the partition has no layers")
    top = L if max_weight is None else V.count(max_weight, "max_weight", minimum=0)
    for total in range(2 * top + 1):
        for a in range(max(0, total - top), min(total, top) + 1):
            try:
                if torchtitan_split(S, L, a, total - a) == n:
                    return a, total - a
            except ValueError:
                continue
    return None


def torchtitan_fqns(stage_layers) -> list[list[str]]:
    """``module_fqns_per_model_part`` for the partition: ``tok_embeddings`` first, ``layers.i`` in order,
    ``norm`` and ``lm_head`` last (torchtitan's module names for its decoder models)."""
    n = _counts(stage_layers, allow_zero=True)
    out, cur = [], 0
    for i, k in enumerate(n):
        part = (["tok_embeddings"] if i == 0 else []) + [f"layers.{j}" for j in range(cur, cur + k)]
        if i == len(n) - 1:
            part += ["norm", "lm_head"]
        out.append(part)
        cur += k
    return out


# -- torch.distributed.pipelining ---------------------------------------------------------------------


def torch_split_spec(stage_layers, *, prefix: str = "layers") -> dict[str, str]:
    """``split_spec`` for ``torch.distributed.pipelining.pipeline``: ``{"layers.3": "BEGINNING", …}``
    (values are the ``SplitPoint`` member names), one cut before the first layer of every stage after
    the first.  Every stage needs at least one layer (a cut needs a submodule to sit before)."""
    n = _counts(stage_layers)
    spec, cur = {}, 0
    for k in n[:-1]:
        cur += k
        spec[f"{prefix}.{cur}"] = "BEGINNING"
    return spec


# -- all together -----------------------------------------------------------------------------------


def launch_flags(
    stage_layers, *, placement: str = "loop", schedule: str | None = None, ranks: int | None = None
) -> dict:
    """Everything above for one partition.  ``placement="loop"``: stage ``i`` on rank ``i mod P``, one
    stage per rank unless ``ranks`` is given (then ``len(stage_layers) / ranks`` virtual stages per rank,
    interleaved as in Megatron's layout and ``Interleaved1F1B``); ``"v"``: ``2P`` stages, rank ``r``
    holds ``r`` and ``2P−1−r``.

    Returns a dict: ``ranks``, ``stage_layers``, ``megatron`` (``layout`` and ``uneven`` flags, ``None``
    where not expressible, and ``args``: a command-line fragment), ``torchtitan`` (``less_layers``,
    ``fqns``, ``args``), ``torch`` (``split_spec`` and the stages each rank builds) and ``text``: the
    lines :func:`print` would show.
    """
    n = _counts(stage_layers, allow_zero=True)
    if placement not in ("loop", "v"):
        raise ValueError(f"placement must be 'loop' or 'v', got {placement!r}")
    if placement == "v" and len(n) % 2:
        raise ValueError(f"a V placement has an even number of stages (2P); got {len(n)}")
    if placement == "loop":
        P = len(n) if ranks is None else V.count(ranks, "ranks")
        if len(n) % P:
            raise ValueError(f"{len(n)} stages do not divide over {P} ranks")
    else:
        P = len(n) // 2
        if ranks is not None and V.count(ranks, "ranks") != P:
            raise ValueError(f"a V of {len(n)} stages runs on {P} ranks, not {ranks}")
    vpp = len(n) // P
    L = sum(n)
    if schedule is None:
        schedule = "ZBVZeroBubble" if placement == "v" else "1F1B" if vpp == 1 else "Interleaved1F1B"
    mega: dict = {"layout": None, "uneven": None, "args": None}
    if placement == "loop":
        mega["layout"] = megatron_layout(n)
        mega["uneven"] = megatron_uneven_flags(n) if min(n) >= 1 and vpp == 1 else None
        head = f"--pipeline-model-parallel-size {P} --num-layers {L}"
        if mega["uneven"]:
            mega["args"] = head + "".join(f" {k} {v}" for k, v in mega["uneven"].items())
        else:
            mega["args"] = f'{head} --pipeline-model-parallel-layout "{mega["layout"]}"'
    # torchtitan's weights split over 1 stage per rank (single-stage schedules) or 2 (multi-stage ones)
    less = torchtitan_less_layers(n) if vpp <= 2 else None
    tt_args = (
        f"--parallelism.pipeline_parallel_degree {P} --parallelism.pipeline_parallel_schedule {schedule}"
    )
    if less is not None:
        tt_args += (
            f" --parallelism.pipeline_parallel_first_stage_less_layers {less[0]}"
            f" --parallelism.pipeline_parallel_last_stage_less_layers {less[1]}"
        )
    titan = {"less_layers": less, "fqns": torchtitan_fqns(n), "args": tt_args}
    if placement == "loop":
        builds = [[r + k * P for k in range(vpp)] for r in range(P)]
    else:
        builds = [[r, 2 * P - 1 - r] for r in range(P)]
    tch = {"split_spec": torch_split_spec(n) if min(n) >= 1 else None, "stages_per_rank": builds}
    lines = [f"partition {n} ({L} layers, {len(n)} stages on {P} ranks, {placement} placement)"]
    if placement == "loop":
        lines.append(f"Megatron-LM: {mega['args']}")
        if mega["uneven"]:
            lines.append(f'  or: --pipeline-model-parallel-layout "{mega["layout"]}"')
    else:
        lines.append("Megatron-LM: no V schedule (layout stage i runs on rank i mod PP)")
    lines.append(f"torchtitan: {tt_args}")
    if less is None:
        lines.append(f"  module_fqns_per_model_part = {titan['fqns']}")
    if tch["split_spec"] is not None:
        spec = ", ".join(f'"{k}": SplitPoint.BEGINNING' for k in tch["split_spec"])
        lines.append(f"torch.distributed.pipelining: pipeline(model, mb_args, split_spec={{{spec}}})")
        lines.append(f"  rank r builds stages {builds}[r] and runs Schedule{schedule}")
    return {
        "ranks": P,
        "stage_layers": n,
        "placement": placement,
        "megatron": mega,
        "torchtitan": titan,
        "torch": tch,
        "text": "\n".join(lines),
    }
