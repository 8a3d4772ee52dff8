"""Read a submitted notebook defensively and take from it what grading needs.

Roles come from the *source* notebook (by nbgrader grade_id), never from the submission's own
metadata, so editing metadata cannot make a locked cell run or a check cell disappear unnoticed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
MAX_CELL_CHARS = 200_000
MAGIC = re.compile(r"^(\s*)([%!].*)$")


class UnreadableNotebook(Exception):
    """The submission cannot be graded at all; the message says why, for the student."""


@dataclass
class SourceCell:
    grade_id: str
    cell_type: str
    role: str  # "solution" | "locked" | "answer" | "check"
    checksum: str
    source: str


@dataclass
class SourceInfo:
    """What the source notebook says about each nbgrader cell, in order."""

    cells: list[SourceCell]

    @classmethod
    def from_notebook(cls, path: Path) -> SourceInfo:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        cells = []
        for cell in nb.get("cells", []):
            meta = cell.get("metadata", {}).get("nbgrader")
            if not meta or not meta.get("grade_id"):
                continue
            if meta.get("solution") and cell.get("cell_type") == "markdown":
                role = "answer"
            elif meta.get("solution"):
                role = "solution"
            elif meta.get("grade"):
                role = "check"
            else:
                role = "locked"
            cells.append(SourceCell(meta["grade_id"], cell.get("cell_type", ""), role,
                                    meta.get("checksum", ""), _text(cell.get("source", ""))))
        return cls(cells)

    def by_id(self) -> dict[str, SourceCell]:
        return {c.grade_id: c for c in self.cells}


@dataclass
class Extracted:
    code_cells: list[tuple[int, str]] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    sha256: str = ""

    @property
    def tampered(self) -> bool:
        return any(p.startswith("tampered") for p in self.problems)


def _text(source) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return str(source)


def read_notebook_bytes(path: Path) -> dict:
    """Parse a notebook file or raise UnreadableNotebook with a message a student understands."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UnreadableNotebook(f"unreadable: cannot open the notebook ({exc.strerror})") from None
    if size > MAX_NOTEBOOK_BYTES:
        raise UnreadableNotebook(
            f"unreadable: notebook is {size / 1e6:.0f} MB, over the {MAX_NOTEBOOK_BYTES // 2**20} MB limit "
            "(clear outputs: Edit → Clear Outputs of All Cells, then save)")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableNotebook(f"unreadable: not UTF-8 text (byte {exc.start}); re-save it from JupyterLab") from None
    if not text.strip():
        raise UnreadableNotebook("unreadable: the notebook file is empty")
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = "truncated?" if exc.pos >= len(text) - 2 else "malformed JSON"
        raise UnreadableNotebook(f"unreadable: not a valid notebook ({hint} line {exc.lineno})") from None
    if not isinstance(nb, dict):
        raise UnreadableNotebook("unreadable: not a notebook (top level is not a JSON object)")
    major = nb.get("nbformat")
    if major != 4:
        nb = _upgrade(nb, major)
    if not isinstance(nb.get("cells"), list):
        raise UnreadableNotebook("unreadable: the notebook has no list of cells")
    return nb


def _upgrade(nb: dict, major) -> dict:
    if major == 3:
        try:
            import nbformat

            return json.loads(nbformat.writes(nbformat.reads(json.dumps(nb), as_version=4)))
        except Exception as exc:  # noqa: BLE001
            raise UnreadableNotebook(f"unreadable: nbformat 3 notebook could not be converted ({exc})") from None
    raise UnreadableNotebook(f"unreadable: unsupported nbformat {major!r} (expected 4)")


def checksum(cell: dict) -> str:
    """nbgrader's cell checksum (``nbgrader.utils.compute_checksum``), without importing nbgrader."""
    meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
    grade, solution = bool(meta.get("grade")), bool(meta.get("solution"))
    locked = False if solution else (True if grade else bool(meta.get("locked", False)))
    m = hashlib.md5()  # noqa: S324 - nbgrader's format, not security
    m.update(_text(cell.get("source", "")).encode("utf-8"))
    m.update(str(cell.get("cell_type", "")).encode("utf-8"))
    m.update(str(grade).encode("utf-8"))
    m.update(str(solution).encode("utf-8"))
    m.update(str(locked).encode("utf-8"))
    m.update(str(meta.get("grade_id", "")).encode("utf-8"))
    if grade:
        m.update(str(float(meta.get("points", 0))).encode("utf-8"))
    return m.hexdigest()


def neutralise_magics(code: str) -> tuple[str, int]:
    """Comment out IPython magics and shell escapes so the cell is plain Python."""
    out, count = [], 0
    for line in code.splitlines():
        m = MAGIC.match(line)
        if m and not line.lstrip().startswith("%="):
            out.append(f"{m.group(1)}pass  # removed IPython line: {m.group(2)[:60]}")
            count += 1
        else:
            out.append(line)
    return "\n".join(out), count


def extract(path: Path, source: SourceInfo, written_ids: list[str]) -> Extracted:
    """Take the code to run and the written answers from a submission, noting every irregularity."""
    nb = read_notebook_bytes(path)
    result = Extracted(sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    known = source.by_id()
    seen: dict[str, int] = {}
    order: list[str] = []
    magic_lines = 0
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict):
            result.problems.append(f"tampered: cell {index} is not a JSON object (ignored)")
            continue
        ctype = cell.get("cell_type")
        meta = cell.get("metadata", {})
        nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
        gid = nbg.get("grade_id") if isinstance(nbg, dict) else None
        text = _text(cell.get("source", ""))
        if len(text) > MAX_CELL_CHARS:
            result.problems.append(f"cell {index} is over {MAX_CELL_CHARS} characters and was skipped")
            continue
        if gid in known:
            seen[gid] = seen.get(gid, 0) + 1
            order.append(gid)
            src = known[gid]
            if seen[gid] > 1:
                result.problems.append(f"tampered: cell '{gid}' appears {seen[gid]} times (the first one counts)")
                continue
            if src.role in ("locked", "check"):
                if checksum(cell) != src.checksum or text.strip() != src.source.strip():
                    result.problems.append(f"tampered: locked cell '{gid}' was edited (it is not run when grading)")
                continue
            if src.role == "answer":
                if ctype != "markdown":
                    result.problems.append(f"tampered: answer cell '{gid}' changed type (read as text anyway)")
                result.answers[gid] = text
                continue
            if src.role == "solution" and ctype == "code":
                code, n = neutralise_magics(text)
                magic_lines += n
                result.code_cells.append((index, code))
            continue
        if ctype == "code":  # a cell the student added (or one whose metadata was removed)
            code, n = neutralise_magics(text)
            magic_lines += n
            result.code_cells.append((index, code))
    for gid, src in known.items():
        if gid not in seen and (src.role != "locked" or src.cell_type == "code"):
            what = {"answer": "answer", "solution": "exercise", "check": "check"}.get(src.role, "locked")
            result.problems.append(f"tampered: {what} cell '{gid}' is missing")
    expected_order = [c.grade_id for c in source.cells if c.grade_id in seen]
    first_seen = list(dict.fromkeys(order))
    if first_seen != expected_order:
        result.problems.append("tampered: nbgrader cells are out of their original order")
    for gid in written_ids:
        result.answers.setdefault(gid, "")
    if magic_lines:
        result.problems.append(f"note: {magic_lines} IPython magic/shell line(s) were not run when grading")
    return result
