"""The notebook an instructor reviews: a submission made inert.

formgrader renders ``OUT/autograded/<student>/<assignment>/<nb>.ipynb`` with nbconvert's HTMLExporter, in
the instructor's logged-in Jupyter session, and nbconvert passes a notebook's HTML through unsanitised
(markdown's raw HTML, ``text/html`` and ``application/javascript`` outputs, ``javascript:`` links, raw
cells) and formgrader's template puts cell metadata into attributes unescaped. So the copy placed there
is built, not copied (:func:`build`):

* **No outputs, no attachments, no execution counts.** The grader never reads outputs (the hidden tests
  run the code themselves), so the review loses nothing.
* **Metadata from the source notebook.** A cell keeps nbgrader metadata only when its ``grade_id`` is one
  of the source notebook's, and then gets the source's dict (the student's copy of it is ignored); the
  notebook keeps only the source's ``kernelspec`` and ``language_info``; invalid cell ids are replaced.
* **Markdown that the instructor did not write is replaced by its rendering, sanitised.** A markdown cell
  whose text is not one of the source notebook's is rendered exactly as formgrader would render it
  (nbconvert's own markdown renderer, with its math handling), the HTML is cleaned with ``nh3`` (the
  maintained Rust sanitiser ammonia: no script, event handlers, ``javascript:``/``data:`` URLs, iframes,
  forms, styles, SVG, meta), LaTeX macros that make links, classes, styles or new macros are shown as
  text, and the result is stored as one HTML block that markdown passes through verbatim. Formulas
  (``$…$``, ``$$…$$``) stay text for MathJax and ordinary markdown looks as it did.
* **Raw cells** (rendered verbatim as HTML by nbconvert) become escaped, preformatted text.

:func:`sanitize_html` and :func:`markdown_html` are the functions any other page that shows submission
text as HTML should use (:mod:`autograder.core.safe_text` for plain text).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import nh3

from autograder.core.safe_text import encodable, html_text

SAFE_CELL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info")
#: tags an answer may keep: nh3's default set minus those that can disguise the page
ALLOWED_TAGS = set(nh3.ALLOWED_TAGS) - {"area", "map", "nav", "header", "footer", "details", "summary"}
#: attributes an answer may keep (nh3 adds rel="noopener noreferrer" to links itself)
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align"},
    "ol": {"start"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "pre": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}
#: classes nbconvert's code highlighting uses (pygments' short token classes, ``highlight``, ``hl-<lang>``);
#: any other class (e.g. one of formgrader's own) is dropped
SAFE_CLASS = re.compile(r"^(highlight|hl-[A-Za-z0-9_+-]{1,32}|[a-z]{1,3}[0-9]?)$")
#: MathJax/LaTeX commands that make links, classes, styles, ids, load extensions or (re)define macros
ACTIVE_TEX = re.compile(
    r"\\(href|url|require|class|cssId|style|data|unicode|html|mmlToken|toggle|texttip|tooltip|mathtip"
    r"|def|gdef|edef|xdef|let|newcommand|renewcommand|providecommand|DeclareMathOperator|newenvironment"
    r"|renewenvironment|Newextarrow|bbox)(?![A-Za-z])"
)


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "class":
        kept = [c for c in value.split() if SAFE_CLASS.match(c)]
        return " ".join(kept) or None
    return value


def sanitize_html(html: str) -> str:
    """HTML with nothing active left: nh3 with this module's allow-lists, no comments, links
    ``rel="noopener noreferrer"``."""
    return nh3.clean(
        encodable(html),
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        strip_comments=True,
        attribute_filter=_attribute_filter,
    )


def neutralize_tex(text: str) -> str:
    r"""Show active MathJax commands as text: ``\href`` becomes ``\backslash\mathtt{href}``."""
    return ACTIVE_TEX.sub(lambda m: r"\backslash\mathtt{" + m.group(1) + "}", text)


@functools.cache
def _exporter():
    from nbconvert.exporters import HTMLExporter

    return HTMLExporter()


@functools.lru_cache(maxsize=4096)  # the lesson's own cells are the same in every submission
def markdown_html(source: str) -> str:
    """Markdown rendered as formgrader renders it, then sanitised and with active TeX neutralised."""
    rendered = _exporter().markdown2html({}, encodable(source))
    return neutralize_tex(sanitize_html(rendered))


def inert_markdown(source: str) -> str:
    """A markdown cell source that renders like ``source`` but carries nothing active: the sanitised
    HTML on one line inside a ``<div>`` (a CommonMark HTML block, passed through verbatim)."""
    html = markdown_html(source).strip().replace("\r", "").replace("\n", "&#10;")
    return f"<div>{html}</div>"


def preformatted(text: str) -> str:
    """A markdown cell source that shows ``text`` as escaped, preformatted text."""
    return "<div><pre>" + html_text(text).replace("\r", "").replace("\n", "&#10;") + "</pre></div>"


# -- the source notebook: what the instructor wrote -------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _source_facts(path: str, mtime_ns: int) -> tuple[dict, dict, frozenset]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    meta = data.get("metadata") or {}
    kept_meta = {k: meta[k] for k in KEPT_NOTEBOOK_METADATA if k in meta}
    nbgrader_by_id: dict[str, dict] = {}
    markdown = set()
    for cell in data.get("cells", []):
        nbg = (cell.get("metadata") or {}).get("nbgrader") or {}
        if nbg.get("grade_id"):
            nbgrader_by_id.setdefault(str(nbg["grade_id"]), nbg)
        if cell.get("cell_type") == "markdown":
            markdown.add(_text(cell.get("source", "")))
    return kept_meta, nbgrader_by_id, frozenset(markdown)


def source_facts(source_path: Path | str) -> tuple[dict, dict, frozenset]:
    """(notebook metadata kept, grade_id -> nbgrader metadata, markdown sources) of the source notebook."""
    p = Path(source_path)
    return _source_facts(str(p), p.stat().st_mtime_ns)


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


# -- building the review copy ------------------------------------------------------------------------------


def _fresh(data):
    """A deep copy of JSON data (json's C codec: ~10x copy.deepcopy's speed on notebook metadata)."""
    return json.loads(json.dumps(data))


def _cell_factory(kind: str):
    """``nbformat.v4.new_code_cell`` / ``new_markdown_cell`` without their per-cell schema validation and
    random id (a uuid4 each): at class scale those were most of the grader's main thread (30 s of 52 s
    for 150 submissions under load). The cells have exactly the fields nbformat gives them, all of them
    plain strings or empty, and ``build`` sets each id; tests/test_review_copy.py validates the whole
    copy against nbformat's schema."""
    from nbformat import NotebookNode

    def new(source: str) -> NotebookNode:
        if kind == "code":
            return NotebookNode(
                id="",
                cell_type="code",
                metadata=NotebookNode(),
                execution_count=None,
                source=source,
                outputs=[],
            )
        return NotebookNode(id="", cell_type="markdown", source=source, metadata=NotebookNode())

    return new


def build(submission: dict, source_path: Path | str):
    """The inert review copy (an nbformat v4 NotebookNode) of a parsed submission (nbformat v4 dict)."""
    import nbformat

    kept_meta, nbgrader_by_id, trusted_markdown = source_facts(source_path)
    nb = nbformat.v4.new_notebook(metadata=nbformat.from_dict(_fresh(kept_meta)))
    new_code_cell, new_markdown_cell = _cell_factory("code"), _cell_factory("markdown")
    seen_ids: set[str] = set()
    seen_grade_ids: set[str] = set()
    for i, cell in enumerate(submission.get("cells") or []):
        if not isinstance(cell, dict):
            continue
        kind, source = cell.get("cell_type"), encodable(_text(cell.get("source", "")))
        if kind == "code":
            new = new_code_cell(source)
        elif kind == "markdown":
            new = new_markdown_cell(source if source in trusted_markdown else inert_markdown(source))
        else:  # raw (or unknown): nbconvert would pass it through as HTML
            new = new_markdown_cell(preformatted(source))
        nbg = (cell.get("metadata") or {}).get("nbgrader")
        grade_id = str(nbg.get("grade_id")) if isinstance(nbg, dict) and nbg.get("grade_id") else None
        if grade_id in nbgrader_by_id and grade_id not in seen_grade_ids:
            new.metadata["nbgrader"] = nbformat.from_dict(_fresh(nbgrader_by_id[grade_id]))
            seen_grade_ids.add(grade_id)
        cid = cell.get("id")
        new["id"] = (
            cid if isinstance(cid, str) and SAFE_CELL_ID.match(cid) and cid not in seen_ids else f"c{i}"
        )
        seen_ids.add(new["id"])
        nb.cells.append(new)
    return nb


def unreadable(status: str):
    """The review copy of a submission that is not a readable notebook: one cell saying why."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    note = "<div><p><b>This submission could not be read as a notebook.</b></p><p>Status: <code>"
    nb.cells.append(nbformat.v4.new_markdown_cell(note + html_text(status) + "</code></p></div>"))
    return nb


def of_submission(parsed: dict | None, source_path: Path | str, status: str):
    """:func:`build` on a submission as the grader parsed it (``notebook.read_notebook_bytes``), or
    :func:`unreadable` when it could not be read as a notebook (``parsed`` is None)."""
    return unreadable(status) if parsed is None else build(parsed, source_path)
