"""Text from a submission, made safe for the place it is written to. Call these at every write point.

Anything a student controls (folder names, answers, exception text, statuses that quote them) can hold
bytes that act on the reader rather than being read: a spreadsheet formula, a terminal escape sequence,
an HTML tag. Each writer passes such text through one function here:

* :func:`encodable` — lone surrogates (``"\\ud800"``, valid JSON) and NUL replaced by U+FFFD, so UTF-8
  and SQLite writers never raise on it.
* :func:`html_text` — for HTML pages: encodable, then ``&<>"'`` escaped.
* :func:`terminal_text` — for the instructor's terminal: control characters (C0, DEL, C1, so ESC, CSI,
  OSC-52 clipboard writes, BEL), Unicode format characters (bidi overrides and isolates such as RLO
  U+202E, zero-width characters) and line/paragraph separators are shown as visible ``\\x1b`` /
  ``\\u202e`` escapes: nothing moves the cursor, recolours, reorders or hides text.
* :func:`csv_cell` — for CSV files: :func:`terminal_text`, then OWASP's CSV-injection rule: a cell
  starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return is prefixed with ``'`` so a
  spreadsheet shows it as text instead of evaluating it. Numbers the grader formats itself are written
  as they are (a score is never student text).
"""

from __future__ import annotations

import html
import re
import unicodedata

#: characters that must never reach a terminal raw: controls, format characters (bidi, zero-width),
#: surrogates, private use is left alone (it is inert), line/paragraph separators
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SURROGATE_OR_NUL = re.compile("[\ud800-\udfff\x00]")
#: OWASP CSV injection: characters that make a spreadsheet treat a cell as a formula
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def encodable(text: object) -> str:
    """``str(text)`` with lone surrogates and NUL replaced by U+FFFD (always encodable as UTF-8)."""
    s = text if isinstance(text, str) else str(text)
    return _SURROGATE_OR_NUL.sub("\ufffd", s)


def html_text(text: object) -> str:
    """Text for an HTML page (element content or a quoted attribute value)."""
    return html.escape(encodable(text), quote=True)


def _visible(ch: str) -> str:
    if unicodedata.category(ch) not in _INVISIBLE_CATEGORIES:
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: object, limit: int | None = None) -> str:
    """One line of text for a terminal: every control, format or separator character shown as a visible
    escape (``\\x1b``, ``\\u202e``); cut to ``limit`` characters with ``...`` when given."""
    s = encodable(text)
    if any(unicodedata.category(ch) in _INVISIBLE_CATEGORIES for ch in s):
        s = "".join(_visible(ch) for ch in s)
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 3)] + "..."
    return s


def csv_cell(text: object) -> str:
    """A text cell for a CSV file: terminal-safe, and never read as a formula by a spreadsheet."""
    s = terminal_text(text)
    if s.startswith(FORMULA_START):
        s = "'" + s
    return s
