"""What a shard is: ``--shard K/N``, which students it holds, and the manifest each sharded run writes
(``OUT_K/shard.json``). The merge is ``autograder.classroom.shards``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from autograder.core.files import atomic_write_text
from autograder.core.results import SubmissionResult

MANIFEST = "shard.json"


class ShardError(ValueError):
    """A bad --shard value or a set of shard outputs that cannot be merged."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, student_id: str) -> bool:
        return shard_of(student_id, self.count) == self.index


def parse_shard(text: str) -> Shard:
    """``"K/N"`` with 1 <= K <= N."""
    try:
        k, n = (int(x) for x in str(text).split("/"))
    except ValueError:
        raise ShardError(f"--shard must be K/N (e.g. 2/8), not {text!r}") from None
    if n < 1 or not 1 <= k <= n:
        raise ShardError(f"--shard {text}: need 1 <= K <= N")
    return Shard(k, n)


def shard_of(student_id: str, count: int) -> int:
    """The shard (1..count) a student belongs to; stable across machines, runs and class changes."""
    digest = hashlib.sha256(student_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def write_manifest(out: Path, shard: Shard, results: list[SubmissionResult]) -> Path:
    rows = sorted([r.student_id, r.assignment_id] for r in results)
    graders = {r.assignment_id: r.grader for r in results if r.grader}
    data = {"shard": shard.index, "of": shard.count, "rows": rows, "graders": dict(sorted(graders.items()))}
    path = Path(out) / MANIFEST
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    return path


def remove_manifest(out: Path) -> None:
    (Path(out) / MANIFEST).unlink(missing_ok=True)


def read_manifest(out: Path) -> dict | None:
    path = Path(out) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        int(data["shard"]), int(data["of"]), list(data["rows"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ShardError(f"{path} is damaged ({exc}); re-run that shard") from None
    return data
