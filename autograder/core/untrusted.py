"""Where text from a submission enters the grader: made encodable, and ids checked.

Everything a submission controls (answers, code, folder names, messages and values the sandbox sends
back) passes through here once, when it enters, so every writer after it (SQLite, UTF-8 files,
JSON, CSV, the terminal) can encode it:

* ``clean_tree``: every string in parsed JSON (keys included) through ``safe_text.encodable``: lone
  UTF-16 surrogates (``"\\ud800"`` is valid JSON) and NUL become U+FFFD.
* ``id_problem`` / ``display_id``: the one rule for student and assignment ids, shared by ``collect``
  and ``grade``, and the safe name an unsafe folder is shown and stored under.

Escaping for a particular output (HTML, CSV cells, the terminal) is the writer's job (``safe_text``);
this module only guarantees the text can be written at all.
"""

from __future__ import annotations

import hashlib
import re

from autograder.core.safe_text import encodable

# in JSON text: an escaped surrogate or NUL (a cheap test before walking a parsed document)
JSON_ESCAPE_TO_CLEAN = re.compile(r"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)")
JSON_ESCAPE_TO_CLEAN_BYTES = re.compile(JSON_ESCAPE_TO_CLEAN.pattern.encode())

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}$")
ID_RULE = "ids are 1-128 letters, digits or _.@+- and start with a letter or digit"


def clean_tree(obj):
    """A copy of parsed JSON in which every string (keys too) went through ``safe_text.encodable``."""
    if isinstance(obj, str):
        return encodable(obj)
    if isinstance(obj, list):
        return [clean_tree(v) for v in obj]
    if isinstance(obj, dict):
        return {encodable(k) if isinstance(k, str) else k: clean_tree(v) for k, v in obj.items()}
    return obj


def id_problem(name: str) -> str | None:
    """Why ``name`` cannot be a student or assignment id, or None if it can."""
    if SAFE_ID.match(name):
        return None
    return f"unsafe name ({ID_RULE})"


def display_id(name: str) -> str:
    """A safe stand-in for an unsafe folder name: its safe characters plus a hash of the exact name, so
    two different unsafe names never share a row and nothing of it can start a formula, carry control
    characters or reorder the text (RTL overrides)."""
    if SAFE_ID.match(name):
        return name
    raw = name.encode("utf-8", "surrogateescape")
    kept = re.sub(r"[^A-Za-z0-9_.]+", "_", name).strip("_.")[:40]
    return f"unsafe_{kept + '_' if kept else ''}{hashlib.sha256(raw).hexdigest()[:8]}"


def describe_name(name: str) -> str:
    """The name as printable ASCII (escapes for everything else), for a status line."""
    shown = ascii(name)
    return shown if len(shown) <= 80 else shown[:77] + "..."
