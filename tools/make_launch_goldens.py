"""Golden file for ``pipelab.launch``: what the frameworks' own code makes of pipelab's flags (dev-only).

Runs the frameworks' functions themselves, not copies:

* Megatron-LM ``PipelineParallelLayerLayout.parse_str_to_list`` (from
  ``megatron/core/transformer/pipeline_parallel_layer_layout.py``; the function is taken out of the file
  with ``ast`` and run with a stand-in ``LayerType`` enum, because importing the module needs
  ``megatron.core.parallel_state``) on every layout string ``pipelab.launch.megatron_layout`` writes
  for a list of partitions, and on the documentation's example.
* torchtitan ``_generate_llm_fqn_per_model_part`` (from ``torchtitan/distributed/pipeline_parallel.py``,
  taken out with ``ast``; it uses no torch) on a grid of (stages, layers, first/last weights).
* torch 2.13 ``torch.distributed.pipelining.pipeline(model, mb_args, split_spec=…)`` on a toy model
  with ``tok_embeddings``, ``layers.0…``, ``norm``, ``lm_head``: the modules each stage holds.

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 numpy
    git -C <megatron mirror> show HEAD:megatron/core/transformer/pipeline_parallel_layer_layout.py > /tmp/ml.py
    git -C <torchtitan mirror> show HEAD:torchtitan/distributed/pipeline_parallel.py > /tmp/tt.py
    PYTHONPATH=. /tmp/torchenv/bin/python tools/make_launch_goldens.py \\
        --megatron /tmp/ml.py --megatron-commit <sha> --torchtitan /tmp/tt.py --torchtitan-commit <sha>

It writes ``tests/golden/pipelab/launch_goldens.json``.
"""

from __future__ import annotations

import argparse
import ast
import enum
import hashlib
import json
import re
from pathlib import Path

from pipelab.launch import megatron_layout, torch_split_spec

OUT = Path(__file__).resolve().parents[1] / "tests" / "golden" / "pipelab" / "launch_goldens.json"

PARTITIONS = [
    [32],
    [3, 11, 11, 7],
    [8, 8, 8, 8],
    [2, 5, 5, 5, 5, 3],
    [1, 5, 2, 1, 9, 8, 5, 1],
    [0, 7, 7, 0, 10, 4, 4, 0],
    [4, 4, 4, 4, 4, 4, 4, 4],
    [1, 1],
    [5, 0, 0, 5],
    [2, 3, 3, 3, 4, 3, 3, 3, 1],
]
TORCH_SPLITS = [[3, 11, 11, 7], [8, 8, 8, 8], [1, 5, 2, 1, 9, 8, 5, 1], [2, 5, 5, 5, 5, 3]]


def _function(path: Path, name: str, namespace: dict):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            node.decorator_list = []  # @staticmethod / @lru_cache
            code = compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec")
            exec(code, namespace)  # noqa: S102 - the framework's own source, dev-only
            return namespace[name]
    raise SystemExit(f"{name} not found in {path}")


class LayerType(enum.Enum):  # stand-in for megatron.core.transformer.enums.LayerType (same members)
    embedding = 1
    loss = 2
    encoder = 3
    decoder = 4
    mtp = 5


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--megatron", type=Path, required=True)
    ap.add_argument("--megatron-commit", required=True)
    ap.add_argument("--torchtitan", type=Path, required=True)
    ap.add_argument("--torchtitan-commit", required=True)
    a = ap.parse_args()

    parse = _function(a.megatron, "parse_str_to_list", {"re": re, "LayerType": LayerType})
    short = {LayerType.embedding: "E", LayerType.decoder: "t", LayerType.mtp: "m", LayerType.loss: "L"}
    megatron = []
    for n in PARTITIONS:
        layout = megatron_layout(n)
        megatron.append(
            {
                "partition": n,
                "layout": layout,
                "parsed": ["".join(short[x] for x in st) for st in parse(layout)],
            }
        )
    doc_example = "Et*3|(tt|)*29,m|L"
    megatron_doc = {
        "layout": doc_example,
        "parsed": ["".join(short[x] for x in st) for st in parse(doc_example)],
    }

    gen = _function(a.torchtitan, "_generate_llm_fqn_per_model_part", {})
    titan = []
    for S in (1, 2, 3, 4, 6, 8):
        for L in (8, 16, 25, 32):
            for w_in in range(0, 9):
                for w_out in range(0, 9):
                    case = {"stages": S, "layers": L, "first_less": w_in, "last_less": w_out}
                    try:
                        parts = gen(S, L, w_in, w_out)
                        case["layers_per_stage"] = [sum(x.startswith("layers.") for x in p) for p in parts]
                        if (S, L, w_in, w_out) in ((4, 32, 8, 3), (4, 32, 8, 4), (8, 32, 1, 1)):
                            case["fqns"] = parts
                    except ValueError as e:
                        case["error"] = str(e)
                    titan.append(case)

    import torch
    from torch.distributed.pipelining import SplitPoint, pipeline

    class Toy(torch.nn.Module):
        def __init__(self, L):
            super().__init__()
            self.tok_embeddings = torch.nn.Linear(4, 4)
            self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(L)])
            self.norm = torch.nn.LayerNorm(4)
            self.lm_head = torch.nn.Linear(4, 4)

        def forward(self, x):
            x = self.tok_embeddings(x)
            for layer in self.layers:
                x = layer(x)
            return self.lm_head(self.norm(x))

    splits = []
    for n in TORCH_SPLITS:
        spec = torch_split_spec(n)
        pipe = pipeline(
            Toy(sum(n)), (torch.randn(2, 4),), split_spec={k: SplitPoint[v] for k, v in spec.items()}
        )
        stages = []
        for i in range(pipe.num_stages):
            names = {
                ".".join(p.split(".")[:2]) if p.startswith("layers.") else p.split(".")[0]
                for p, _ in pipe.get_stage_module(i).named_parameters()
            }
            stages.append(sorted(names))
        splits.append(
            {"partition": n, "split_spec": spec, "num_stages": pipe.num_stages, "stage_modules": stages}
        )

    doc = {
        "generated_by": "tools/make_launch_goldens.py",
        "megatron": {
            "commit": a.megatron_commit,
            "file": "megatron/core/transformer/pipeline_parallel_layer_layout.py",
            "sha256": hashlib.sha256(a.megatron.read_bytes()).hexdigest(),
            "cases": megatron,
            "doc_example": megatron_doc,
        },
        "torchtitan": {
            "commit": a.torchtitan_commit,
            "file": "torchtitan/distributed/pipeline_parallel.py",
            "sha256": hashlib.sha256(a.torchtitan.read_bytes()).hexdigest(),
            "cases": titan,
        },
        "torch": {"version": torch.__version__, "cases": splits},
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
