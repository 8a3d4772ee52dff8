"""docs/SCALING.md's Slurm section run on a real one-node Slurm (``tests/slurm_cluster.py``): the array
script is written to ``grade.sbatch`` unchanged and the command blocks are run with bash as written, with
``COURSE``, ``SUBMISSIONS``, ``OUT`` and ``SHARDS`` set for a small class (the export line with the
example paths is the only line left out). The merged grades.csv and gradebook equal one unsharded run,
also with a task requeued mid-run; a task that fails blocks the merge (DependencyNeverSatisfied), the
merge by hand names the missing shard and writes nothing, and re-running the task then merging gives
one run's result again.

If Slurm cannot start, these tests FAIL (never skip): CI installs slurm-wlm and munge (.ci/run)."""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from autograder.authoring.demo import build_sample_class
from autograder.classroom.sharding import MANIFEST, shard_of
from autograder.sandbox.bwrap import bwrap_usable
from tests.slurm_cluster import SlurmCluster, SlurmUnavailable
from tests.test_shards import gradebook_content

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "SCALING.md").read_text(encoding="utf-8")
SECTION = DOC[DOC.index("### Slurm") : DOC.index("### Throughput")]
SHARDS = 3
# <lesson>-<demo student without its number> (the demo's numbers move when a catalogue grows); the
# infinite loop runs into its 5 s limit, which keeps its shard busy long enough to requeue or kill it
CLASS = [
    "16-reference",
    "16-infinite-loop",
    "16-sim-ignores-own-previous",
    "03-reference",
    "03-partition-greedy-average",
]
SLOW = "16-infinite-loop"
SLOW_SHARD = shard_of(SLOW, SHARDS)
# a student who submits after the first grading, in the slow shard, also running into the time limit
LATE = next(f"{SLOW}-{i}" for i in range(2, 100) if shard_of(f"{SLOW}-{i}", SHARDS) == SLOW_SHARD)


def _blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", SECTION, re.S)


def _script() -> str:
    (script,) = (b for b in _blocks() if "#SBATCH" in b)
    return script


def _commands(marker: str) -> str:
    """The command block holding ``marker``, without its ``export`` line (the example's paths)."""
    (block,) = (b for b in _blocks() if marker in b and "#SBATCH" not in b)
    return "\n".join(line for line in block.splitlines() if not line.startswith("export "))


def _grades(out: Path) -> list[dict]:
    with open(out / "grades.csv", encoding="utf-8") as fh:
        return sorted(csv.DictReader(fh), key=lambda r: (r["student_id"], r["assignment_id"]))


def _copy_student(demo: Path, name: str, dest: Path, as_name: str | None = None) -> None:
    """The demo student ``<lesson>-<stem>`` (whatever its number) copied to ``dest/<as_name or name>``."""
    lesson, stem = name.split("-", 1)
    (src,) = demo.glob(f"{lesson}-[0-9][0-9]-{stem}")
    shutil.copytree(src, dest / (as_name or name))


def _one_run(subs: Path, out: Path) -> None:
    subprocess.run(
        [".venv/bin/python", "-m", "autograder", "grade", str(subs), "--out", str(out), "--quiet"],
        cwd=ROOT,
        check=True,
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    assert bwrap_usable()[0], f"the docs' script grades with --isolation bwrap: {bwrap_usable()[1]}"
    try:
        c = SlurmCluster.start(tmp_path_factory.mktemp("slurm"))
    except SlurmUnavailable as exc:
        pytest.fail(f"no Slurm: {exc}", pytrace=False)
    try:
        yield c
    finally:
        c.stop()


class Term:
    """The class, its submit directory (grade.sbatch) and OUT, shared by the tests of this module."""

    def __init__(self, root: Path, cluster: SlurmCluster):
        self.root, self.cluster = root, cluster
        self.demo = build_sample_class(root / "demo")
        self.subs, self.out, self.submit = root / "submitted", root / "out", root / "submit"
        for name in CLASS:
            _copy_student(self.demo, name, self.subs)
        assert {shard_of(s, SHARDS) for s in CLASS} == set(range(1, SHARDS + 1)), "a shard without students"
        self.submit.mkdir()
        (self.submit / "grade.sbatch").write_text(_script(), encoding="utf-8")
        self.env = {"COURSE": str(ROOT), "SUBMISSIONS": str(self.subs), "OUT": str(self.out)}
        self.env["SHARDS"] = str(SHARDS)

    def bash(self, commands: str, **more: str) -> dict[str, str]:
        """Run the docs' commands in the submit directory; returns the shell variables they set."""
        names = sorted(set(re.findall(r"^(\w+)=", commands, re.M)))
        probe = "".join(f'\necho "{n}=${n}"' for n in names)
        proc = self.cluster.run(
            ["bash", "-euc", commands + probe], cwd=self.submit, extra_env={**self.env, **more}
        )
        return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)

    def task(self, array: str, k: int) -> str:
        return f"{array}_{k}"

    def job_outputs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')}" for p in sorted(self.submit.glob("slurm-*"))
        )

    def wait_state(self, job: str, states: set[str], timeout: float = 240) -> dict:
        def reached():
            jobs = self.cluster.jobs(job)
            return jobs if all(j["JobState"] in states for j in jobs) else None

        try:
            return self.cluster.wait_for(reached, timeout, f"job {job} to be {'/'.join(sorted(states))}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.job_outputs()}\n{self.cluster.jobs(job)}") from None

    def wait_grading(self, task: str) -> list[int]:
        """Wait until the task's shard is grading (a sandbox worker of it runs, not just the start-up
        probe of bubblewrap); returns the task's pids."""

        def sandboxed():
            pids = self.cluster.pids(task)
            return pids if any(_is_worker(_cmdline(p)) for p in pids) else None

        return self.cluster.wait_for(sandboxed, 120, f"task {task} to start grading", every=0.1)


def _is_worker(cmdline: bytes) -> bool:
    """A sandbox worker's interpreter running ``/grader/worker.py`` (bubblewrap's own command line names
    that path too, as a bind target, also for the start-up probe)."""
    argv = cmdline.split(b"\0")
    return bool(argv) and not argv[0].endswith(b"bwrap") and b"/grader/worker.py" in argv[1:4]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture(scope="module")
def term(cluster, tmp_path_factory):
    t = Term(tmp_path_factory.mktemp("term"), cluster)
    t.one = t.root / "one-run"
    _one_run(t.subs, t.one)
    return t


@pytest.fixture(scope="module")
def first_grading(term):
    """The array and the afterok merge as documented, the slow shard's task requeued while it grades.
    Returns what the merge wrote (before later tests change OUT)."""
    jobs = term.bash(_commands("ARRAY=$(sbatch"))
    array, merge = jobs["ARRAY"], jobs["MERGE"]
    task = term.task(array, SLOW_SHARD)
    term.wait_grading(task)
    term.cluster.run(["scontrol", "requeue", task])
    requeued = term.wait_state(task, {"PENDING"})[0]
    term.cluster.wait_for(lambda: not term.cluster.pids(task), 60, f"task {task}'s processes to end")
    interrupted = not (term.out / f"out_{SLOW_SHARD}" / MANIFEST).exists()
    assert term.cluster.job(merge)["JobState"] == "PENDING"
    # Slurm makes a requeued job eligible only about two minutes later: release it now
    term.cluster.run(["scontrol", "update", f"JobId={task}", "StartTime=now"])
    term.wait_state(merge, {"COMPLETED"})
    merged = term.out / "grading"
    return {
        "requeued": requeued,
        "interrupted": interrupted,
        "task": term.cluster.job(task),
        "array": term.cluster.jobs(array),
        "grades": _grades(merged),
        "gradebook": gradebook_content(merged),
    }


def test_array_then_afterok_merge_equals_one_run_with_a_task_requeued_mid_run(term, first_grading):
    got = first_grading
    assert got["requeued"]["Restarts"] == "1" and got["interrupted"], "the task was not requeued mid-run"
    assert got["task"]["Restarts"] == "1"
    assert sorted(j["ArrayTaskId"] for j in got["array"]) == [str(k) for k in range(1, SHARDS + 1)]
    assert all(j["JobState"] == "COMPLETED" for j in got["array"]), got["array"]
    assert got["grades"] == _grades(term.one)
    assert got["gradebook"] == gradebook_content(term.one)


def test_a_failed_task_blocks_the_merge_until_it_is_re_run(term, first_grading):
    # a late student in the slow shard; the same array and merge again, the slow shard's grader killed
    _copy_student(term.demo, SLOW, term.subs, as_name=LATE)
    before = (term.out / "grading" / "grades.csv").read_bytes()
    jobs = term.bash(_commands("ARRAY=$(sbatch"))
    array, merge = jobs["ARRAY"], jobs["MERGE"]
    task = term.task(array, SLOW_SHARD)
    pids = term.wait_grading(task)
    (grader,) = (p for p in pids if b"autograder\0grade\0" in _cmdline(p))
    os.kill(grader, signal.SIGKILL)  # as the out-of-memory killer would
    failed = term.wait_state(task, {"FAILED"})[0]
    assert failed["ExitCode"] == "137:0", failed
    term.wait_state(array, {"COMPLETED", "FAILED"})
    blocked = term.cluster.wait_for(
        lambda: (j := term.cluster.job(merge))["Reason"] == "DependencyNeverSatisfied" and j,
        60,
        "the merge to be DependencyNeverSatisfied",
    )
    assert blocked["JobState"] == "PENDING"

    # the docs' merge command run by hand: refused, naming the missing shard, nothing written
    (command,) = re.findall(r'--wrap \\\n\s*"(.*?)"', _commands("ARRAY=$(sbatch"), re.S)
    proc = term.cluster.run(["bash", "-c", command], extra_env=term.env, check=False)
    assert proc.returncode != 0, proc.stdout
    unfinished = term.out / f"out_{SLOW_SHARD}"
    assert f"shard {SLOW_SHARD}/{SHARDS} is missing" in proc.stderr, proc.stderr
    assert f"{unfinished} has no {MANIFEST}" in proc.stderr, proc.stderr
    assert (term.out / "grading" / "grades.csv").read_bytes() == before

    # cancel the merge, re-run the failed task alone, merge again: one run's result with the late student
    jobs = term.bash(_commands("RERUN=$(sbatch"), MERGE=merge, K=str(SLOW_SHARD))
    rerun = term.cluster.job(jobs["RERUN"])
    assert rerun["ArrayTaskId"] == str(SLOW_SHARD)
    assert term.cluster.job(merge)["JobState"] == "CANCELLED"
    term.wait_state(jobs["MERGE"], {"COMPLETED"})
    _one_run(term.subs, term.one)  # incremental: grades the late student
    merged = term.out / "grading"
    assert LATE in {r["student_id"] for r in _grades(merged)}
    assert _grades(merged) == _grades(term.one)
    assert gradebook_content(merged) == gradebook_content(term.one)
