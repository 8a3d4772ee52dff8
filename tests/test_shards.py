"""Sharded grading: N runs of `grade --shard K/N` merged with `merge` give the same course directory as one
unsharded run (grades.csv, gradebook content, results, feedback, autograded copies), formgrader opens it,
and merge refuses shard sets that would lose or double-count students."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.demo import build_sample_class
from autograder.classroom import sharding, shards
from autograder.classroom.batch import grade_class
from autograder.gradebook.coursedir import COURSE_ID, db_url_for
from autograder.review import formgrader

N = 3
# a subset of the demo class covering both lessons: full marks, stubs, a typical mistake, a notebook that
# does not load, one that is not JSON, answers without code, and a folder without a notebook
SUBSET = [  # <lesson>-<demo student without its number>: the demo numbers move when a catalogue grows
    "03-reference",
    "03-release-stub",
    "03-frontier-drops-ties",
    "03-syntax-error",
    "03-truncated-file",
    "16-reference",
    "16-release-stub",
    "16-sim-ignores-own-previous",
    "16-reference-notebook",
    "16-answers-only",
    "16-truncated-file",
]


def test_shard_of_is_a_fixed_function_of_the_id():
    """Changing the hash would move students between shards across re-runs: these values are pinned."""
    assert [sharding.shard_of(s, 4) for s in ("alice", "bob", "16-11-reference", "张三")] == [4, 3, 1, 1]
    assert sharding.shard_of("alice", 1) == 1
    counts = [0] * 8
    for i in range(4000):
        counts[sharding.shard_of(f"student{i:05d}", 8) - 1] += 1
    assert min(counts) > 400 and max(counts) < 600, counts  # about 500 each


@pytest.mark.parametrize("bad", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_bad_shard_values_are_refused(bad):
    with pytest.raises(sharding.ShardError):
        sharding.parse_shard(bad)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One unsharded run and N sharded runs of the same submissions."""
    root = tmp_path_factory.mktemp("shards")
    demo = build_sample_class(root / "demo")
    subs = root / "submitted"
    for name in SUBSET:
        lesson, stem = name.split("-", 1)
        (src,) = demo.glob(f"{lesson}-[0-9][0-9]-{stem}")
        shutil.copytree(src, subs / name)
    (subs / "zz-no-notebook" / "16-asymmetric-pipeline").mkdir(parents=True)
    full = grade_class(subs, root / "full", jobs=2, quiet=True)
    outs = []
    for k in range(1, N + 1):
        out = root / f"out_{k}"
        grade_class(subs, out, jobs=2, quiet=True, shard=sharding.Shard(k, N))
        outs.append(out)
    return root, full, outs


def gradebook_content(out: Path) -> dict:
    """Everything formgrader reads, keyed by names (row ids are random UUIDs)."""
    from nbgrader.api import Gradebook

    content: dict = {}
    with Gradebook(db_url_for(out), COURSE_ID) as gb:
        for a in gb.assignments:
            cells = sorted(
                (
                    nb.name,
                    c.name,
                    type(c).__name__,
                    getattr(c, "max_score", None),
                    getattr(c, "checksum", None),
                )
                for nb in a.notebooks
                for c in [*nb.grade_cells, *nb.solution_cells, *nb.task_cells, *nb.source_cells]
            )
            content[("assignment", a.name)] = cells
            for sub in a.submissions:
                rows = [str(sub.timestamp)]
                for snb in sub.notebooks:
                    rows += sorted(
                        (snb.name, g.name, g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                        for g in snb.grades
                    )
                    rows += sorted((snb.name, c.name, c.auto_comment, c.manual_comment) for c in snb.comments)
                content[("submission", a.name, sub.student_id)] = rows
        content["students"] = sorted(s.id for s in gb.students)
    return content


def files_under(out: Path, sub: str) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / sub).rglob("*")) if p.is_file()}


def results_without_timing(out: Path) -> dict[str, dict]:
    found = {}
    for p in sorted((out / "results").glob("*/*.json")):
        data = json.loads(p.read_text(encoding="utf-8"))
        data.pop("duration_s")
        found[str(p.relative_to(out))] = data
    return found


def test_merging_the_shards_equals_one_unsharded_run(graded, tmp_path):
    root, full, outs = graded
    manifests = [sharding.read_manifest(o) for o in outs]
    assert sorted(m["shard"] for m in manifests) == list(range(1, N + 1))
    sizes = [len(m["rows"]) for m in manifests]
    assert sum(sizes) == len(full) == len(SUBSET) + 1 and all(sizes), sizes  # every shard holds someone

    merged = tmp_path / "merged"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "merge", *map(str, reversed(outs)), "--out", str(merged)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "16-reference" in proc.stdout  # the class table of the merged class

    one = root / "full"
    assert (merged / "grades.csv").read_text(encoding="utf-8") == (one / "grades.csv").read_text(
        encoding="utf-8"
    )
    assert gradebook_content(merged) == gradebook_content(one)
    assert results_without_timing(merged) == results_without_timing(one)
    for sub in ("feedback", "autograded", "submitted"):
        assert files_under(merged, sub) == files_under(one, sub), sub
    assert not (merged / sharding.MANIFEST).exists()

    # formgrader opens the merged directory and counts every recorded submission
    server = formgrader.start(merged, app="server")
    try:
        server.wait_ready(timeout=90)
        for assignment in ("16-asymmetric-pipeline", "03-load-imbalance"):
            recorded = [
                r
                for r in full
                if r.assignment_id == assignment and (one / "submitted" / r.student_id).exists()
            ]
            status, info = server.request("GET", f"/formgrader/api/assignment/{assignment}")
            assert status == 200 and info["num_submissions"] == len(recorded), info
        status, subs = server.request("GET", "/formgrader/api/submissions/16-asymmetric-pipeline")
        assert status == 200 and {s["student"] for s in subs} >= {"16-reference", "16-release-stub"}
    finally:
        server.stop()


def test_merge_refuses_incomplete_mixed_or_overlapping_shards(graded, tmp_path):
    _, _, outs = graded
    with pytest.raises(sharding.ShardError, match="missing"):
        shards.merge(outs[:-1], tmp_path / "a", quiet=True)
    with pytest.raises(sharding.ShardError, match="twice"):
        shards.merge([*outs, outs[0]], tmp_path / "b", quiet=True)
    with pytest.raises(sharding.ShardError, match="one of the shard outputs"):
        shards.merge(outs, outs[0], quiet=True)
    # a copy of shard 1 that pretends to be a 1/1 run: its students would be counted twice
    alone = tmp_path / "alone"
    shutil.copytree(outs[0], alone)
    data = sharding.read_manifest(alone)
    data["of"] = 1
    (alone / sharding.MANIFEST).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sharding.ShardError, match="different N"):
        shards.merge([*outs, alone], tmp_path / "c", quiet=True)
    (alone / sharding.MANIFEST).unlink()  # graded without --shard: all its records count
    with pytest.raises(sharding.ShardError, match="in both"):
        shards.merge([*outs, alone], tmp_path / "d", quiet=True)
    assert not (tmp_path / "a").exists() and not (tmp_path / "d" / "grades.csv").exists()
    # a shard graded by other hidden tests (an older image): every result of it is refused
    stale = tmp_path / "stale"
    shutil.copytree(outs[0], stale)
    for path in (stale / "results").glob("*/*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["grader"] = "0" * 16
        path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sharding.ShardError, match="hidden tests/rubric/release"):
        shards.merge([stale, *outs[1:]], tmp_path / "e", quiet=True)
    assert not (tmp_path / "e").exists()
