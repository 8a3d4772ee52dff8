"""Build a sample class from the releases, the reference and each assignment's catalogue of typical
mistakes (``autograder/lessons/<lesson>/mistakes/*.py``). Nothing here knows a lesson: every submission is
derived from the release notebook, the source notebook's reference answers and the rubric."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

from autograder.core.registry import Lesson, lesson_of, lessons
from autograder.core.rubric import Rubric
from autograder.grading.notebook import SourceInfo, neutralise_magics

EXPECT = re.compile(r"^#\s*expect:\s*(.*)$", re.M)
INCLUDE = re.compile(r"^#\s*include:\s*reference\s*$", re.M)


def parse_expectations(code: str) -> dict[str, float]:
    """``# expect: simulator=2 solver=1.5`` → {"simulator": 2.0, "solver": 1.5}."""
    m = EXPECT.search(code)
    if not m:
        return {}
    out = {}
    for part in m.group(1).split():
        key, _, value = part.partition("=")
        out[key.strip()] = float(value)
    return out


def reference_cells(assignment_dir: Path) -> dict[str, str]:
    """The reference implementation, from its one source: the solution code cells of the assignment's
    source notebook (``solutions/<lesson>/<notebook>.ipynb`` of the lesson whose data folder is
    ``assignment_dir``), {grade_id: code} in notebook order, IPython lines commented out as the grader does."""
    source = SourceInfo.from_notebook(lesson_of(assignment_dir).source)
    return {
        c.grade_id: neutralise_magics(c.source)[0]
        for c in source.cells
        if c.role == "solution" and c.cell_type == "code"
    }


def reference_code(assignment_dir: Path) -> str:
    """The reference's code cells (``reference_cells``) as one module, in notebook order."""
    return "\n\n\n".join(reference_cells(assignment_dir).values()) + "\n"


def mistake_code(path: Path, reference: str | None = None) -> str:
    """The code a mistake file stands for. A file with a ``# include: reference`` line is a patch: the
    reference code (``reference_code`` of the assignment the file belongs to, ``path.parent.parent``,
    unless ``reference`` is given) followed by the file, which then redefines only what it gets wrong.
    Any other file is complete and returned as it is."""
    text = Path(path).read_text(encoding="utf-8")
    if not INCLUDE.search(text):
        return text
    if reference is None:
        reference = reference_code(Path(path).resolve().parent.parent)
    return reference + f"\n\n# ---- {Path(path).name}: over the reference ----\n" + text


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def with_code(release: dict, code: str) -> dict:
    """The release with ``code`` as its exercise: first solution code cell gets it, others are emptied
    (so the release's stubs do not redefine what ``code`` defined)."""
    nb = copy.deepcopy(release)
    first = True
    for cell in nb["cells"]:
        meta = _nbgrader(cell)
        if cell.get("cell_type") == "code" and meta.get("solution"):
            cell["source"] = code if first else "# 见上方单元 / see the cell above\n"
            first = False
    return nb


def with_answers(nb: dict, answers: dict[str, str]) -> dict:
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        gid = _nbgrader(cell).get("grade_id")
        if cell.get("cell_type") == "markdown" and gid in answers:
            cell["source"] = answers[gid]
    return nb


def reference_answers(source: dict) -> dict[str, str]:
    out = {}
    for cell in source["cells"]:
        meta = _nbgrader(cell)
        if cell.get("cell_type") == "markdown" and meta.get("solution") and meta.get("grade"):
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            out[meta["grade_id"]] = text
    return out


def keyword_answers(rubric: Rubric) -> dict[str, str]:
    """Answers that list every concept's name without explaining anything."""
    out = {}
    for it in rubric.written_items:
        names = [c["name"] for cr in it.criteria for c in cr.get("concepts", [])]
        out[it.id] = "、".join(names)
    return out


def first_sentence_answers(answers: dict[str, str]) -> dict[str, str]:
    """A partial answer: only the first paragraph of the reference."""
    return {k: v.strip().split("\n\n")[0] for k, v in answers.items()}


def _write(path: Path, nb: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def build_sample_class(dest: Path) -> Path:
    """Write ``dest/<student>/<assignment>/<notebook>.ipynb`` for every assignment; return ``dest``."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for found in lessons().values():
        sample_class_of(found, dest)
    return dest


def sample_class_of(found: Lesson, dest: Path) -> None:
    """One lesson's part of the sample class (``build_sample_class``), under ``dest``."""
    assignment_id, directory, rubric = found.id, found.directory, found.rubric
    nb_name = rubric.notebook + ".ipynb"
    if found.release.is_file() and found.source.is_file():
        release, source = _load(found.release), _load(found.source)
        ref_answers = reference_answers(source)
        variants = [ref_answers, first_sentence_answers(ref_answers), keyword_answers(rubric), {}]
        students: list[tuple[str, dict | bytes]] = []
        # the catalogue, plus the reference's code cells as a submission of their own
        codes = [(p.stem, mistake_code(p)) for p in (directory / "mistakes").glob("*.py")]
        codes = sorted([*codes, ("reference", reference_code(directory))])
        for i, (name, code) in enumerate(codes):
            answers = variants[i % len(variants)]
            students.append((name, with_answers(with_code(release, code), answers)))
        # the source notebook itself: the reference goes through the same path as any student
        students.append(("reference-notebook", source))
        students.append(("untouched-release", release))
        students.append(("answers-only", with_answers(release, ref_answers)))
        stub = "".join(
            c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for c in release["cells"]
            if c.get("cell_type") == "code" and _nbgrader(c).get("solution")
        )
        students.append(("syntax-error", with_code(release, stub + "\ndef broken(:\n    pass\n")))
        students.append(("infinite-loop", with_code(release, "while True:\n    pass\n")))
        text = json.dumps(with_answers(release, ref_answers), ensure_ascii=False, indent=1)
        students.append(("truncated-file", text[: len(text) // 2].encode("utf-8")))
        for index, (name, nb) in enumerate(students, start=1):
            student = f"{assignment_id[:2]}-{index:02d}-{re.sub(r'[^A-Za-z0-9]+', '-', name).strip('-')}"
            path = dest / student / assignment_id / nb_name
            if isinstance(nb, bytes):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(nb)
            else:
                _write(path, nb)
