"""What the instructor sees of a written answer, as text, and what was hidden from them.

The review pages show a written answer as :func:`autograder.grading.review_copy.markdown_html` renders it
(nbconvert's markdown renderer, then nh3), so the scorer reads the text of that same sanitised HTML
(:func:`visible`), never the raw markdown: an HTML comment, a ``<script>``/``<style>`` body, image alt
text, ruby fallback text (``<rp>``), text shrunk away in deeply nested ``<small>``/``<sub>``/``<sup>`` and
formulas that can hide text (``\\phantom``, ``\\color``, negative spaces, ``\\mathchoice`` …) never reach
the scorer. Each is *flagged* (:data:`HIDDEN_CONTENT`), so the review page, the answer groups and
grades.csv can say that the answer held something the instructor could not see.

The result is the answer's visible lines (paragraphs, list items, headings, table cells, preformatted
lines), with ``\\x00`` where the markdown had a soft line break (:func:`autograder.grading.written.normalise`
joins those) and formulas left between their ``$``/``$$`` delimiters for the scorer's LaTeX reader.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from html.parser import HTMLParser

from autograder.core.safe_text import encodable
from autograder.grading.review_copy import _exporter, markdown_html

__all__ = [
    "FORMAT_CHARACTERS",
    "HIDDEN_CONTENT",
    "Visible",
    "strip_invisible",
    "visible",
]

#: flag: the answer held content that the review page does not show (followed by what it was)
HIDDEN_CONTENT = "hidden content"
#: marks where emphasis began or ended (``s*b*h`` renders as ``s<em>b</em>h``): the scorer reads a mark
#: between two word characters as a product and drops the others
EMPHASIS = "\x02"
#: flag: the answer held invisible format characters (Unicode Cf / default-ignorable), removed before scoring
FORMAT_CHARACTERS = "invisible characters"

_BLOCK = frozenset(
    "p li h1 h2 h3 h4 h5 h6 td th pre div blockquote dt dd caption figcaption tr table thead tbody ul ol dl hr"
    " figure article aside center hgroup header footer nav details summary section".split()
)
_HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
_SHRINKING = frozenset({"small", "sub", "sup"})
#: nested this deep, ``<small>``/``<sub>``/``<sup>`` text is too small to read (each level shrinks it)
SHRINK_DEPTH = 3
#: elements whose text the browser does not show, even after sanitising (``<rp>``: ruby fallback)
_UNSHOWN = frozenset({"rp"})
#: struck-through text (``~~…~~``): shown crossed out, what the student withdrew; not scored
_STRUCK = frozenset({"del", "s", "strike"})
#: elements the sanitiser drops with their content (or whose content a browser never shows as text)
_DROPPED_BODIES = frozenset({"script", "style", "svg", "math"})  # nh3 keeps the text of any other

#: MathJax commands that can make text invisible or move it out of sight; a formula using one is not
#: scored (and the answer is flagged)
HIDING_TEX = re.compile(
    r"\\(?:(?:phantom|hphantom|vphantom|color|textcolor|colorbox|fcolorbox|pagecolor|kern|mkern|hspace|hskip"
    r"|mskip|mspace|moveleft|moveright|raise|lower|raisebox|Space|mathchoice|llap|rlap|clap|mathllap"
    r"|mathrlap|mathclap|rule)(?![A-Za-z])|!(?:\s*\\!){7})"
)
_MATH_SPAN = re.compile(
    r"\$\$.+?\$\$|\$[^$]+?\$|\\begin\{([A-Za-z]+\*?)\}.*?\\end\{\1\}|\\\(.*?\\\)|\\\[.*?\\\]", re.S
)


def _is_invisible(ch: str) -> bool:
    cp = ord(ch)
    return (
        unicodedata.category(ch) == "Cf"
        or cp in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0)
        or 0x180B <= cp <= 0x180F
        or 0xFE00 <= cp <= 0xFE0F
        or 0x2060 <= cp <= 0x206F
        or 0xFFF0 <= cp <= 0xFFF8
        or 0xE0000 <= cp <= 0xE0FFF
    )


#: every default-ignorable code point (Unicode's DerivedCoreProperties) and every format (Cf) character
_INVISIBLE = frozenset(
    chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and _is_invisible(chr(cp))
)


def _char_class(chars: frozenset[str]) -> str:
    """A regex character class of ``chars`` as ranges of consecutive code points (a class of single
    characters this size, 4,000 and more, made every answer's rendering slow)."""
    points, ranges = sorted(map(ord, chars)), []
    for cp in points:
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return (
        "[" + "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges) + "]"
    )


_INVISIBLE_RE = re.compile(_char_class(_INVISIBLE))


def strip_invisible(text: str) -> tuple[str, int]:
    """``text`` without default-ignorable and format (Cf) characters, and how many were removed."""
    return _INVISIBLE_RE.subn("", text)


@dataclass(frozen=True)
class Visible:
    """The visible text of an answer (lines joined by ``\\n``) and why it was flagged, if it was."""

    text: str
    flags: tuple[str, ...] = ()


class _Visible(HTMLParser):
    """The text of sanitised HTML as a reader sees it, block elements as lines."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.line: list[str] = []
        self.stack: list[str] = []
        self.pre = self.skip = self.shrink = self.struck = 0
        self.anchor = False
        self.hidden: set[str] = set()

    def flush(self) -> None:
        self.lines.append("".join(self.line))
        self.line = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in _BLOCK:
            self.flush()
        if tag == "br":
            self.line.append("\n")
            return
        if tag in ("img", "wbr", "hr", "col", "area"):
            if (attrs.get("alt") or "").strip():
                self.hidden.add("image alt text")
            return
        if (attrs.get("title") or "").strip():
            self.hidden.add("title attribute")
        self.stack.append(tag)
        if tag == "pre":
            self.pre += 1
        if tag in _UNSHOWN:
            self.skip += 1
        if tag in _SHRINKING:
            self.shrink += 1
        self.struck += tag in _STRUCK
        if tag in ("em", "strong"):
            self.line.append(EMPHASIS)
        if tag == "a" and (attrs.get("href") or "").startswith("#") and set(self.stack) & _HEADINGS:
            self.anchor = True  # nbconvert's heading anchor (¶)

    def handle_endtag(self, tag):
        if tag not in self.stack:
            return
        while self.stack:
            top = self.stack.pop()
            if top == "pre":
                self.pre -= 1
            if top in _UNSHOWN:
                self.skip -= 1
            if top in _SHRINKING:
                self.shrink -= 1
            self.struck -= top in _STRUCK
            if top == "a":
                self.anchor = False
            if top in ("em", "strong"):
                self.line.append(EMPHASIS)
            if top in _BLOCK:
                self.flush()
            if top == tag:
                break

    def handle_data(self, data):
        if self.anchor and data.strip() == "¶" or self.struck:
            return
        if self.skip or self.shrink >= SHRINK_DEPTH:
            if data.strip():
                self.hidden.add("ruby fallback text" if self.skip else "text shrunk out of sight")
            return
        self.line.append(data if self.pre else data.replace("\n", "\x00"))


class _Dropped(HTMLParser):
    """What the sanitiser removes from the renderer's raw HTML: comments and the bodies of script-like
    elements (for the flag only; the text scored comes from the sanitised HTML)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden: set[str] = set()
        self.inside: list[str] = []

    def handle_comment(self, data):
        if data.strip():
            self.hidden.add("HTML comment")

    def handle_starttag(self, tag, attrs):
        if tag in _DROPPED_BODIES:
            self.inside.append(tag)

    def handle_endtag(self, tag):
        if tag in self.inside:
            del self.inside[self.inside.index(tag) :]

    def handle_data(self, data):
        if self.inside and data.strip():
            self.hidden.add(f"<{self.inside[-1]}> content")


def _hide_tex(lines: list[str], hidden: set[str]) -> list[str]:
    def drop(m: re.Match) -> str:
        if HIDING_TEX.search(m.group(0)):
            hidden.add("formula that can hide text (" + HIDING_TEX.search(m.group(0)).group(0) + ")")
            return " "
        return m.group(0)

    joined = "\n".join(lines)
    if "\\" not in joined:
        return lines
    return _MATH_SPAN.sub(drop, joined).split("\n")


@functools.lru_cache(maxsize=4096)
def visible(source: str) -> Visible:
    """The text of ``source`` (a markdown answer) as the review page shows it, and the flags."""

    if not source or not source.strip():
        return Visible("")
    parser = _Visible()
    parser.feed(markdown_html(source))
    parser.close()
    parser.flush()
    hidden = set(parser.hidden)
    if "<" in source:  # comments and script/style bodies the sanitiser dropped (flag only)
        dropped = _Dropped()
        dropped.feed(_exporter().markdown2html({}, encodable(source)))
        dropped.close()
        hidden |= dropped.hidden
    lines = _hide_tex([line for chunk in parser.lines for line in chunk.split("\n")], hidden)
    flags = tuple(f"{HIDDEN_CONTENT}: {h}" for h in sorted(hidden))
    return Visible("\n".join(lines), flags)
