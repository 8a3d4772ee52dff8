"""One lesson as the grader loads it: its rubric, its hidden tests (checked against the rubric: every code
item has tests, edge cases at most a quarter), its release's cells and a fingerprint of all of them."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from autograder.core.layout import REPO, Layout
from autograder.core.registry import lesson as registry_lesson
from autograder.core.rubric import Item, Rubric, RubricError, load_rubric
from autograder.grading.notebook import SourceInfo
from autograder.sandbox.limits import Limits

ENGINE_VERSION = "1"


@dataclass
class HiddenTest:
    name: str
    fn: object
    item: str
    weight: float
    edge: bool
    doc: str = ""
    parts: dict[str, float] | None = None


@dataclass
class Assignment:
    """Everything needed to grade one assignment, loaded once per batch."""

    id: str
    directory: Path
    rubric: Rubric
    tests: list[HiddenTest]
    release: Path
    source: Path
    cells: SourceInfo
    limits: Limits
    fingerprint: str = ""

    @property
    def notebook(self) -> str:
        return self.rubric.notebook

    @property
    def items(self) -> tuple[Item, ...]:
        return self.rubric.items

    @property
    def written_ids(self) -> list[str]:
        return self.rubric.written_ids

    @property
    def pass_line(self) -> float:
        return self.rubric.pass_line

    @classmethod
    def load(cls, directory: Path, release: Path | None = None, source: Path | None = None) -> Assignment:
        """The lesson data folder ``directory`` (``autograder/lessons/<id>/`` of some repository layout);
        ``release`` and ``source`` default to that layout's notebooks of the lesson."""
        directory = Path(directory).resolve()
        rubric_path = directory / "rubric.yaml"
        rubric = load_rubric(rubric_path)
        layout = Layout(directory.parents[2]) if len(directory.parents) > 2 else REPO
        release = release or layout.release_notebook(rubric.assignment, rubric.notebook)
        source = source or layout.source_notebook(rubric.assignment, rubric.notebook)
        if not release.is_file():
            raise RubricError(f"release notebook {release} is missing (run `make release`)")
        tests = _load_tests(directory, rubric)
        digest = hashlib.sha256(ENGINE_VERSION.encode())
        for path in sorted(directory.glob("*.py")) + [rubric_path, release]:
            digest.update(path.read_bytes())
        return cls(
            id=rubric.assignment,
            directory=directory,
            rubric=rubric,
            tests=tests,
            release=release,
            source=source,
            cells=SourceInfo.from_notebook(release),
            limits=Limits.from_rubric(rubric.limits),
            fingerprint=digest.hexdigest()[:16],
        )


def _load_tests(directory: Path, rubric: Rubric) -> list[HiddenTest]:
    code_items = {it.id for it in rubric.code_items}
    tests: list[HiddenTest] = []
    safe = re.sub(r"\W", "_", directory.name)
    for path in sorted(directory.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"hidden_{safe}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found = [
            (name, fn)
            for name, fn in vars(module).items()
            if name.startswith("test_") and callable(fn) and hasattr(fn, "rubric_item")
        ]
        found.sort(key=lambda nf: inspect.getsourcelines(nf[1])[1])
        for name, fn in found:
            if fn.rubric_item not in code_items:
                raise RubricError(
                    f"{path.name}::{name} names item {fn.rubric_item!r}, not a code item of the rubric"
                )
            doc = (inspect.getdoc(fn) or "").splitlines()[0] if inspect.getdoc(fn) else ""
            tests.append(
                HiddenTest(
                    name,
                    fn,
                    fn.rubric_item,
                    fn.rubric_weight,
                    fn.rubric_edge,
                    doc,
                    getattr(fn, "rubric_parts", None),
                )
            )
    for item_id in code_items:
        own = [t for t in tests if t.item == item_id]
        if not own:
            raise RubricError(f"{directory.name}: code item {item_id!r} has no hidden tests")
        total = sum(t.weight for t in own)
        edge = sum(t.weight for t in own if t.edge)
        if edge > total / 4 + 1e-9:
            raise RubricError(
                f"{directory.name}: item {item_id!r}: edge/validation weight {edge} of {total} "
                "exceeds the quarter the lesson promises"
            )
    return tests


_assignments: dict[Path, Assignment] = {}
_assign_lock = threading.Lock()


def load_lesson(lesson_id: str) -> Assignment:
    """The registered lesson ``lesson_id``, loaded for grading (once per process)."""
    return load_assignment(registry_lesson(lesson_id).directory)


def load_assignment(directory: Path) -> Assignment:
    """The lesson whose data folder is ``directory``, loaded for grading (once per process)."""
    directory = Path(directory).resolve()
    with _assign_lock:
        if directory not in _assignments:
            _assignments[directory] = Assignment.load(directory)
        return _assignments[directory]
