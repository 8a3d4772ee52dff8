"""Results read back after review: every stored result with the scores the instructor confirmed in the
gradebook applied (``export``, ``feedback`` and formgrader's feedback buttons start here)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autograder.core.results import SubmissionResult
from autograder.gradebook import coursedir, reading
from autograder.intake.course import reapply


def load_results(out_dir: Path | str) -> list[tuple[Path, SubmissionResult]]:
    """Every stored result under ``OUT/results/<student>/<assignment>.json``."""
    root = Path(out_dir) / "results"
    return [(p, SubmissionResult.load(p)) for p in sorted(root.glob("*/*.json"))]


def refresh_confirmed(out_dir: Path | str, results: Iterable[SubmissionResult]) -> list[SubmissionResult]:
    """Apply the gradebook's confirmed written scores to the results in place; returns those that changed."""
    results = list(results)
    confirmed = reading.confirmed_scores_many(
        coursedir.db_url_for(out_dir), [(r.assignment_id, r.student_id) for r in results]
    )
    return [r for r in results if reading.apply_confirmed(r, confirmed[(r.assignment_id, r.student_id)])]


def refresh(out_dir: Path | str) -> list[SubmissionResult]:
    """Every stored result with the gradebook's confirmed scores applied, late penalties recomputed
    where they changed, and the changed JSON records saved. Returns all results."""
    out = Path(out_dir)
    pairs = load_results(out)
    results = [r for _, r in pairs]
    if (out / coursedir.DB_NAME).exists():
        changed = {id(r) for r in refresh_confirmed(out, results)}
        if changed:
            reapply(out, [r for r in results if id(r) in changed])
        for path, r in pairs:
            if id(r) in changed:
                r.save(path)
    return results
