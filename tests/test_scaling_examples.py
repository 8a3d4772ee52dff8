"""The Kubernetes example in docs/SCALING.md, run as written on this machine: the indexed Job's container
command once per completion index, then the merge Job's. No Kubernetes cluster here, so what is tested is
the part a cluster does not change: the commands themselves, with the variable Kubernetes sets. The merged
grades equal one unsharded run. (The Slurm example runs on a real one-node Slurm: tests/test_slurm.py.)"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from autograder.authoring.demo import build_sample_class
from autograder.sandbox.bwrap import bwrap_usable

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "SCALING.md").read_text(encoding="utf-8")
STUDENTS = (  # <lesson>-<demo student without its number>: the numbers move when a catalogue grows
    "16-seed-reference",
    "16-bubble-steady-state-limit",
    "03-reference",
    "03-partition-greedy-average",
)

pytestmark = pytest.mark.skipif(not bwrap_usable()[0], reason="the examples ask for --isolation bwrap")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, re.S)


@pytest.fixture(scope="module")
def class_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("scaling")
    demo = build_sample_class(root / "demo")
    subs = root / "submitted"
    numbered = {re.sub(r"^(\d\d)-\d\d-", r"\1-", d.name): d.name for d in demo.iterdir() if d.is_dir()}
    for name in STUDENTS:
        shutil.copytree(demo / numbered[name], subs / numbered[name])
    one = root / "one-run"
    subprocess.run(
        [".venv/bin/python", "-m", "autograder", "grade", str(subs), "--out", str(one), "--quiet"],
        cwd=ROOT,
        check=True,
    )
    return root, subs, one


def _grades(out: Path) -> list[dict]:
    with open(out / "grades.csv", encoding="utf-8") as fh:
        return sorted(csv.DictReader(fh), key=lambda r: (r["student_id"], r["assignment_id"]))


def _sh(command: str, env: dict) -> None:
    subprocess.run(["sh", "-c", command], cwd=ROOT, env={**os.environ, **env}, check=True)


def test_kubernetes_indexed_job_then_merge(class_dir):
    root, subs, one = class_dir
    docs = [d for block in _blocks("yaml") for d in yaml.safe_load_all(block)]
    grade_job, merge_job = (d for d in docs if d.get("kind") == "Job")
    spec = grade_job["spec"]
    assert spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    (merge_container,) = merge_job["spec"]["template"]["spec"]["containers"]
    data = root / "k8s-data"
    (data / "shards").mkdir(parents=True)
    shutil.copytree(subs, data / "submitted")
    for index in range(spec["completions"]):
        (arg,) = container["args"]
        _sh(arg.replace("/data", str(data)), {"JOB_COMPLETION_INDEX": str(index)})
    (merge_arg,) = merge_container["args"]
    _sh(merge_arg.replace("/data", str(data)), {})
    assert _grades(data / "grading") == _grades(one)
