"""An assignment's cells in the gradebook, as nbgrader's ``SaveCells`` stores them during ``generate_assignment``."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.gradebook.coursedir import COURSE_ID
from autograder.gradebook.database import session


def notebook_id_of(name: str) -> str:
    return Path(name).name.removesuffix(".ipynb")


def _release_cells(source_notebook_path: Path):
    """The source notebook as generate_assignment hands it to SaveCells: locked, solutions cleared,
    outputs cleared, metadata checked, checksums computed (nbgrader's own preprocessors, in memory)."""
    import nbformat
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        ClearOutput,
        ClearSolutions,
        ComputeChecksums,
        LockCells,
    )

    nb = nbformat.read(str(source_notebook_path), as_version=nbformat.NO_CONVERT)
    resources: dict = {}
    for pp in (LockCells(), ClearSolutions(), ClearOutput(), CheckCellMetadata(), ComputeChecksums()):
        nb, resources = pp.preprocess(nb, resources)
    return nb


class SourceChanged(Exception):
    """The lesson's source notebook gained or lost cells after submissions were recorded against it."""


def ensure_assignment(gb_url: str, assignment_id: str, source_notebook_path: Path | str) -> None:
    """Create or update the assignment, its notebook and its grade/solution/task/source cells from the
    source notebook's nbgrader metadata, as ``nbgrader generate_assignment`` (SaveCells) would, in one
    transaction. Idempotent. Like SaveCells, refuses to add or remove cells once submissions exist."""
    from nbgrader import utils
    from nbgrader.api import (
        Assignment,
        GradeCell,
        Notebook,
        SolutionCell,
        SourceCell,
        SubmittedNotebook,
        TaskCell,
    )

    source_notebook_path = Path(source_notebook_path)
    notebook_id = notebook_id_of(source_notebook_path.name)
    nb = _release_cells(source_notebook_path)

    grade, solution, task, source = {}, {}, {}, {}
    for cell in nb.cells:
        if "nbgrader" not in cell.metadata:
            continue
        gid = cell.metadata.nbgrader.get("grade_id")
        if utils.is_grade(cell):
            grade[gid] = {"max_score": float(cell.metadata.nbgrader["points"]), "cell_type": cell.cell_type}
        if utils.is_solution(cell):
            solution[gid] = {}
        if utils.is_task(cell):
            task[gid] = {"max_score": float(cell.metadata.nbgrader["points"]), "cell_type": cell.cell_type}
        if utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell) or utils.is_task(cell):
            source[gid] = {
                "cell_type": cell.cell_type,
                "locked": utils.is_locked(cell),
                "source": cell.source,
                "checksum": cell.metadata.nbgrader.get("checksum"),
            }
    kernelspec = json.dumps(nb.metadata.get("kernelspec", {}))

    with session(gb_url) as db:
        assignment = db.query(Assignment).filter_by(name=assignment_id).one_or_none()
        if assignment is None:
            assignment = Assignment(name=assignment_id, course_id=COURSE_ID)
            db.add(assignment)
            db.flush()
        notebook = db.query(Notebook).filter_by(name=notebook_id, assignment_id=assignment.id).one_or_none()
        if notebook is None:
            notebook = Notebook(name=notebook_id, assignment=assignment)
            db.add(notebook)
        notebook.kernelspec = kernelspec
        db.flush()
        has_submissions = db.query(SubmittedNotebook).filter_by(notebook_id=notebook.id).count() > 0

        for model, wanted in (
            (GradeCell, grade),
            (SolutionCell, solution),
            (TaskCell, task),
            (SourceCell, source),
        ):
            existing = {c.name: c for c in db.query(model).filter_by(notebook_id=notebook.id)}
            if has_submissions and set(existing) != set(wanted):
                added, removed = sorted(set(wanted) - set(existing)), sorted(set(existing) - set(wanted))
                raise SourceChanged(
                    f"{assignment_id}: the source notebook {source_notebook_path} now has other graded cells "
                    f"than the ones this gradebook recorded its submissions against ({model.__name__}"
                    + (f"; added {', '.join(added)}" if added else "")
                    + (f"; removed {', '.join(removed)}" if removed else "")
                    + "). nbgrader's gradebook cannot change a notebook's cells once it has submissions: "
                    "grade into a new --out directory (nothing in this one is lost), or undo the change."
                )
            for name in set(existing) - set(wanted):
                db.delete(existing[name])
            for name, info in wanted.items():
                row = existing.get(name)
                if row is None:
                    row = model(name=name, notebook=notebook)
                    db.add(row)
                for key, value in info.items():
                    if getattr(row, key) != value:
                        setattr(row, key, value)
