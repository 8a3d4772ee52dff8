"""Two source trees graded on the same class in one run: ``python -m bench.compare_trees OLD_TREE [N]``.

A refactoring must not slow the grader: this builds one class of N (default 300) submissions from this
tree's demo class, then grades it with ``python -m autograder grade`` from each tree in turn (OLD, this
tree, OLD, …: three runs each, interleaved so a change in the machine's load hits both), in bubblewrap,
and prints every wall time, the medians and their ratio. OLD_TREE is a checkout of an earlier commit
(``git worktree add /tmp/old <commit>``); it runs with this environment's interpreter. ``make bench
BEFORE=/tmp/old`` runs it after the other benches (``BENCH_CLASS=N`` for the class size); quoted in
closing notes of refactoring issues.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _grade(tree: Path, subs: Path, out: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out), "--force", "--quiet"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: grade failed:\n{proc.stderr[-2000:]}")
    return wall


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    old, n = Path(argv[0]).resolve(), int(argv[1]) if len(argv) > 1 else 300
    sys.path.insert(0, str(HERE))
    from autograder.authoring.demo import build_sample_class
    from bench.bench_grading import _scaled_class

    with tempfile.TemporaryDirectory(prefix="compare-trees-") as tmp:
        tmp = Path(tmp)
        base = build_sample_class(tmp / "base")
        subs = _scaled_class(base, tmp / "class", n)
        walls: dict[str, list[float]] = {"old": [], "new": []}
        for i in range(3):
            for name, tree in (("old", old), ("new", HERE)):
                wall = _grade(tree, subs, tmp / f"out-{name}-{i}")
                walls[name].append(wall)
                print(f"run {i + 1} {name:3s} ({tree}): {wall:6.2f} s", flush=True)
        med = {k: statistics.median(v) for k, v in walls.items()}
        print(
            f"class of {n}: median old {med['old']:.2f} s, new {med['new']:.2f} s; "
            f"new/old = {med['new'] / med['old']:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
