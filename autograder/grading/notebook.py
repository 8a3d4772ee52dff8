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

from autograder.core.untrusted import JSON_ESCAPE_TO_CLEAN, clean_tree

MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024  # outputs (figures) make notebooks big; they are never read
MAX_CELL_CHARS = 200_000
# Checked on the text before it is parsed (str.count: milliseconds for 100 MB), so an absurd notebook
# costs the grader no seconds of work. The lessons' source notebooks: 56 cells, 2 100 JSON values.
MAX_CELLS = 2_000
MAX_NOTEBOOK_VALUES = 1_000_000  # a figure is one value (a base64 string), however big
MAX_CODE_CHARS = 2_000_000  # all code cells together (the reference: ~30 000)
MAGIC = re.compile(r"^(\s*)([%!].*)$")
PLACEHOLDER = re.compile(r"\s*(?:YOUR ANSWER HERE\s*)?", re.I)  # an answer cell as released (or emptied)
DUPLICATE_ANSWER = "duplicated answer cell"


class UnreadableNotebook(Exception):
    """The submission cannot be graded at all; the message says why, for the student."""


@dataclass
class SourceCell:
    grade_id: str
    cell_type: str
    role: str  # "solution" | "locked" | "answer" | "check"
    checksum: str
    source: str
    flags: tuple = ()  # (grade, solution, locked, points) as in the release


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
            cells.append(
                SourceCell(
                    meta["grade_id"],
                    cell.get("cell_type", ""),
                    role,
                    meta.get("checksum", ""),
                    _text(cell.get("source", "")),
                    _flags(meta),
                )
            )
        return cls(cells)

    def by_id(self) -> dict[str, SourceCell]:
        return {c.grade_id: c for c in self.cells}


@dataclass
class Extracted:
    code_cells: list[tuple[int, str]] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    answer_flags: dict[str, list[str]] = field(default_factory=dict)  # grade_id -> flags for the review
    problems: list[str] = field(default_factory=list)
    sha256: str = ""

    @property
    def tampered(self) -> bool:
        return any(p.startswith("tampered") for p in self.problems)


def _flags(meta: dict) -> tuple:
    return tuple(repr(meta.get(k)) for k in ("grade", "solution", "locked", "points"))


def _text(source) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return str(source)


def _read_capped(path: Path) -> bytes:
    """The file's bytes, or UnreadableNotebook if it cannot be opened or is over the size limit."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UnreadableNotebook(f"unreadable: cannot open the notebook ({exc.strerror})") from None
    if size > MAX_NOTEBOOK_BYTES:
        raise UnreadableNotebook(
            f"unreadable: notebook is {size / 1e6:.0f} MB, over the {MAX_NOTEBOOK_BYTES // 2**20} MB limit "
            "(clear outputs: Edit → Clear Outputs of All Cells, then save)"
        )
    raw = path.read_bytes()
    return raw


def read_notebook_bytes(path: Path) -> dict:
    """Parse a notebook file or raise UnreadableNotebook with a message a student understands."""
    nb, _ = parse_notebook(_read_capped(path))
    return nb


def parse_notebook(raw: bytes) -> tuple[dict, list[str]]:
    """Parse notebook bytes: (notebook as nbformat 4, notes about repairs); UnreadableNotebook if hopeless.

    Text that is not valid UTF-8 is still read (UTF-16 with a BOM is decoded; stray bytes become
    U+FFFD) and noted, so the cells that are intact can be graded."""
    notes: list[str] = []
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = raw.decode("utf-16")
            notes.append("note: the notebook was saved as UTF-16, not UTF-8 (read anyway)")
        except UnicodeDecodeError:
            raise UnreadableNotebook("unreadable: broken UTF-16 text; re-save it from JupyterLab") from None
    else:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8-sig", errors="replace")
            notes.append(
                f"note: the notebook is not valid UTF-8 (first bad byte at {exc.start}); undecodable "
                "bytes were replaced by U+FFFD and the rest was graded. Re-save it from JupyterLab"
            )
    if not text.strip():
        raise UnreadableNotebook("unreadable: the notebook file is empty")
    if "\0" in text:
        raise UnreadableNotebook("unreadable: binary data, not a notebook (NUL bytes)")
    _check_cost(text)
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) - 8 or "Unterminated" in exc.msg:  # cut mid-token at the end
            hint = f"the file ends early at line {exc.lineno}: truncated (upload interrupted?)"
        else:
            hint = f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        raise UnreadableNotebook(
            f"unreadable: not a valid notebook ({hint}); open and re-save it in "
            "JupyterLab, or submit the last good copy"
        ) from None
    except RecursionError:
        raise UnreadableNotebook("unreadable: not a notebook (JSON nested too deeply)") from None
    if not isinstance(nb, dict):
        raise UnreadableNotebook("unreadable: not a notebook (top level is not a JSON object)")
    if JSON_ESCAPE_TO_CLEAN.search(text) and (cleaned := clean_tree(nb)) != nb:  # "\ud800", "\u0000":
        nb = cleaned  # valid JSON, but no UTF-8 writer (SQLite, files) can store a lone surrogate
        notes.append(
            "note: the notebook holds characters that cannot be stored (lone surrogates or NUL); "
            "they were replaced by U+FFFD"
        )
    major = nb.get("nbformat")
    if isinstance(major, str) and major.strip().isdigit():
        major = int(major)
    if major != 4:
        nb = _upgrade(nb, major)
        notes.append(f"note: nbformat {major} notebook converted to nbformat 4 for grading")
    if not isinstance(nb.get("cells"), list):
        raise UnreadableNotebook("unreadable: the notebook has no list of cells")
    return nb, notes


def _check_cost(text: str) -> None:
    """UnreadableNotebook for a notebook whose parsing alone would cost seconds: too many cells or JSON
    values, counted on the text before ``json.loads`` (an upper bound: every value but the first follows
    a ',', '[' or '{'; a '"cell_type"' key can only be a key, inside a string its quotes are escaped)."""
    cells = text.count('"cell_type"')
    if cells > MAX_CELLS:
        raise UnreadableNotebook(
            f"unreadable: the notebook has about {cells} cells, over the limit of {MAX_CELLS} "
            "(merge cells, or submit the notebook you were given)"
        )
    values = text.count(",") + text.count("[") + text.count("{")
    if values > MAX_NOTEBOOK_VALUES:
        raise UnreadableNotebook(
            f"unreadable: the notebook has about {values} JSON values, over the limit of {MAX_NOTEBOOK_VALUES} "
            "(clear outputs: Edit → Clear Outputs of All Cells, then save)"
        )


def _upgrade(nb: dict, major) -> dict:
    if major is None and isinstance(nb.get("cells"), list):
        return nb  # nbformat key missing but the shape is v4: read it
    if major == 3:
        try:
            import nbformat

            return json.loads(nbformat.writes(nbformat.reads(json.dumps(nb), as_version=4)))
        except Exception as exc:  # noqa: BLE001
            raise UnreadableNotebook(
                f"unreadable: nbformat 3 notebook could not be converted ({exc})"
            ) from None
    raise UnreadableNotebook(
        f"unreadable: unsupported nbformat {str(major)[:20]!r} (expected 4); "
        "re-save it from a current JupyterLab"
    )


def checksum(cell: dict) -> str:
    """nbgrader's cell checksum (``nbgrader.utils.compute_checksum``), without importing nbgrader."""
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        meta = {}
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
        try:
            m.update(str(float(meta.get("points", 0))).encode("utf-8"))
        except (TypeError, ValueError):
            return "invalid points"  # never equals a real checksum: the cell counts as edited
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
    raw = _read_capped(path)
    nb, notes = parse_notebook(raw)
    result = Extracted(sha256=hashlib.sha256(raw).hexdigest())
    result.problems.extend(notes)
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
        if not isinstance(gid, str):
            gid = None
        text = _text(cell.get("source", ""))
        if len(text) > MAX_CELL_CHARS:
            result.problems.append(f"cell {index} is over {MAX_CELL_CHARS} characters and was skipped")
            continue
        if gid in known:
            seen[gid] = seen.get(gid, 0) + 1
            order.append(gid)
            src = known[gid]
            if src.flags and seen[gid] == 1 and _flags(nbg) != src.flags:
                result.problems.append(
                    f"tampered: nbgrader metadata of cell '{gid}' was changed "
                    "(grading uses the release's roles)"
                )
            if seen[gid] > 1:
                if (
                    src.role == "solution" and ctype == "code"
                ):  # copy-pasted exercise: run every copy, in order
                    result.problems.append(
                        f"tampered: cell '{gid}' appears {seen[gid]} times (every copy is run "
                        "in notebook order, as Jupyter would)"
                    )
                    code, n = neutralise_magics(text)
                    magic_lines += n
                    result.code_cells.append((index, code))
                elif src.role == "answer":  # only the first copy that is not the placeholder is read
                    result.problems.append(
                        f"tampered: answer cell '{gid}' appears {seen[gid]} times (only the first "
                        "copy that is not the placeholder is scored)"
                    )
                    flags = result.answer_flags.setdefault(gid, [])
                    flags[:] = [f"{DUPLICATE_ANSWER}: {seen[gid]} copies, only the first answered one scored"]
                    if PLACEHOLDER.fullmatch(result.answers.get(gid, "")):
                        result.answers[gid] = text
                else:
                    result.problems.append(
                        f"tampered: cell '{gid}' appears {seen[gid]} times (the copies are ignored)"
                    )
                continue
            if src.role in ("locked", "check"):
                if checksum(cell) != src.checksum or text.strip() != src.source.strip():
                    result.problems.append(
                        f"tampered: locked cell '{gid}' was edited (it is not run when grading)"
                    )
                continue
            if src.role == "answer":
                if ctype != "markdown":
                    result.problems.append(
                        f"tampered: answer cell '{gid}' changed type (read as text anyway)"
                    )
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
    code_chars = sum(len(code) for _, code in result.code_cells)
    if code_chars > MAX_CODE_CHARS:
        raise UnreadableNotebook(
            f"unreadable: the notebook's code cells hold {code_chars} characters in all, over the limit of "
            f"{MAX_CODE_CHARS}"
        )
    return result
