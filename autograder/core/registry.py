"""The lesson registry: every lesson is found from its data folder, ``autograder/lessons/<id>/rubric.yaml``.

Commands, Makefile targets, tests and benchmarks iterate over :func:`lessons`; nothing else lists lessons.
A lesson is its own folders and nothing else: ``solutions/<id>/<notebook>.ipynb`` (the nbgrader source),
``autograder/lessons/<id>/`` (rubric, hidden tests, mistakes, written corpus, goldens) and the generated
``lessons/<id>/`` (``make release``). docs/ARCHITECTURE.md, "Add a lesson", lists the rules one must meet.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from autograder.core.layout import REPO, Layout
from autograder.core.rubric import Rubric, RubricError, load_rubric


@dataclass(frozen=True)
class Lesson:
    id: str
    directory: Path  # autograder/lessons/<id>/
    rubric: Rubric
    layout: Layout

    @property
    def notebook(self) -> str:
        """The notebook's name without ``.ipynb`` (as nbgrader's gradebook and the submissions name it)."""
        return self.rubric.notebook

    @property
    def release(self) -> Path:
        return self.layout.release_notebook(self.id, self.notebook)

    @property
    def source(self) -> Path:
        return self.layout.source_notebook(self.id, self.notebook)

    @property
    def mistakes(self) -> list[Path]:
        """The typical-mistakes catalogue: each file's ``# expect:`` line states its exact code scores."""
        return sorted((self.directory / "mistakes").glob("*.py"))

    @property
    def corpus(self) -> Path:
        """The labelled written answers (optional: agreement is measured for the items it covers)."""
        return self.directory / "written_corpus"

    @property
    def hidden_tests(self) -> list[Path]:
        return sorted(self.directory.glob("test_*.py"))

    @property
    def golden(self) -> Path:
        """Generated artefacts of this lesson checked by the tests (``make goldens`` refreshes them)."""
        return self.directory / "golden"


def lessons(layout: Layout = REPO) -> dict[str, Lesson]:
    """Every lesson of ``layout``, by id, in id order."""
    return dict(_lessons(layout))


def lesson_dirs(layout: Layout = REPO) -> list[Path]:
    """Every lesson data folder of ``layout`` (those with a rubric.yaml), unvalidated: ``check`` reports
    each one's problems on its own."""
    return [p.parent for p in sorted(layout.lesson_data.glob("*/rubric.yaml"))]


@functools.cache
def _lessons(layout: Layout) -> tuple[tuple[str, Lesson], ...]:
    found = []
    for directory in lesson_dirs(layout):
        path = directory / "rubric.yaml"
        rubric = load_rubric(path)
        if rubric.assignment != path.parent.name:
            raise RubricError(
                f"{path}: assignment is {rubric.assignment!r} but the folder is {path.parent.name!r} "
                "(a lesson's data folder is named by its assignment id)"
            )
        found.append((rubric.assignment, Lesson(rubric.assignment, path.parent, rubric, layout)))
    return tuple(found)


def lesson(lesson_id: str, layout: Layout = REPO) -> Lesson:
    """The lesson ``lesson_id``, or a ``KeyError`` whose message lists the known ones."""
    known = lessons(layout)
    if lesson_id not in known:
        raise KeyError(f"unknown lesson {lesson_id!r} (known: {', '.join(known) or 'none'})")
    return known[lesson_id]


def lesson_of(directory: Path | str) -> Lesson:
    """The lesson whose data folder is ``directory`` (any layout: a temporary copy of the repository too)."""
    directory = Path(directory).resolve()
    layout = Layout(directory.parents[2])
    for found in lessons(layout).values():
        if found.directory.resolve() == directory:
            return found
    raise RubricError(f"{directory} is not a lesson's data folder (expected .../autograder/lessons/<id>/)")


def clear_cache() -> None:
    """Forget what was discovered (a test that adds a lesson to a layout calls this)."""
    _lessons.cache_clear()
