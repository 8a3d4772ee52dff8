"""Code similarity across a class: winnowing over normalised Python token streams.

The detector is the algorithm MOSS uses (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms
for document fingerprinting", SIGMOD 2003), written here over Python's own tokenizer (:mod:`tokenize`):

* **Normalise.** Each code cell is tokenized on its own (a cell that does not tokenize keeps the tokens
  read before the error). Comments, blank lines and line breaks inside brackets are dropped; docstrings and
  other string-only statements are dropped; every identifier that is not a keyword or a builtin becomes
  ``N``, every number ``0``, every string ``S``; ``;`` and the end of a line are the same token, and a line end after ``:`` is dropped (``if x: y`` reads
  as its block form); a trailing
  comma before a closing bracket is dropped. So renaming variables, functions or classes, reformatting
  (indent width, line breaks, spacing, black's trailing commas), rewriting comments and docstrings change
  nothing. Reordering functions changes little: fingerprints are a set.
* **Fingerprint.** Every run of :data:`K` consecutive tokens (a k-gram) is hashed (BLAKE2b, so the same
  code always gives the same fingerprints); in every window of :data:`WINDOW` consecutive hashes the
  smallest is kept (winnowing). Any shared run of at least ``K + WINDOW - 1`` tokens yields a shared
  fingerprint; runs shorter than ``K`` never do.
* **Exclude the release.** Every k-gram of the release's own code cells (the exercise stubs: class and
  method signatures, docstrings; the locked demo and check cells) is removed from every submission, so code
  everyone was handed is never evidence (MOSS's ``-b`` base file).
* **Compare.** For two submissions with fingerprint sets A and B, ``score = 2|A ∩ B| / (|A| + |B|)``
  (the share of their fingerprints they have in common); ``cover_a = |A ∩ B| / |A|`` is how much of A is
  found in B. A submission with fewer than :data:`MIN_FINGERPRINTS` fingerprints of its own is not
  compared (a stub with a line or two added matches anything).

Why not a dependency: copydetect (MIT, PyPI 0.5.0) implements the same algorithm over Pygments tokens, but
its last release and last commit are from March 2024; Dolos (MIT, maintained) is a Node.js tool with
tree-sitter parsers, a second runtime in the instructor's path for one language the standard library
already tokenizes exactly.

Nothing here changes a grade: :mod:`autograder.review.report` lists the pairs for an instructor to look at.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import tokenize
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "K",
    "WINDOW",
    "THRESHOLD",
    "MIN_FINGERPRINTS",
    "Document",
    "Pair",
    "normalised_tokens",
    "fingerprint",
    "compare_class",
    "release_exclusion",
]

#: tokens per k-gram: shared runs shorter than this are noise
K = 10
#: winnowing window (in k-grams): every shared run of K + WINDOW - 1 = 14 tokens is found
WINDOW = 5
#: pairs at or above this score are listed in the report. Measured in tests/test_similarity.py on lesson 16:
#: a hand-renamed, reordered, reformatted copy scores 0.89; seven independent solutions (the reference, the
#: catalogue's complete alternatives, two written for the test) stay at or below 0.15 pairwise
THRESHOLD = 0.4
#: a submission needs this many fingerprints of its own (after the release's code is removed) to be compared
MIN_FINGERPRINTS = 10

_BUILTINS = frozenset(dir(builtins))
_CLOSERS = frozenset({")", "]", "}"})
EOL = "<eol>"
_STATEMENT_START = frozenset({EOL, ":"})
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
_SKIP |= {getattr(tokenize, "TYPE_COMMENT", -1)}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python >= 3.12 tokenizes f-strings
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass(frozen=True)
class Token:
    text: str  # the normalised token
    line: int  # 1-based line of the (joined) source it starts on


def _raw_tokens(code: str) -> Iterable[tokenize.TokenInfo]:
    """The tokens of ``code``; a source that stops tokenizing (unclosed bracket or string, bad dedent) gives
    the tokens read before the error."""
    try:
        yield from tokenize.generate_tokens(io.StringIO(code).readline)
    except (tokenize.TokenError, SyntaxError):
        return


def normalised_tokens(code: str, first_line: int = 1) -> list[Token]:
    """``code``'s tokens, normalised as the module docstring says; lines counted from ``first_line``."""
    out: list[Token] = []
    fstring_depth = 0
    for tok in _raw_tokens(code):
        kind, text = tok.type, tok.string
        line = tok.start[0] + first_line - 1
        if fstring_depth:  # inside an f-string (3.12+): one S for the whole literal
            if kind == _FSTRING_START:
                fstring_depth += 1
            elif kind == _FSTRING_END:
                fstring_depth -= 1
            continue
        if kind in _SKIP:
            continue
        if kind == _FSTRING_START:
            fstring_depth = 1
            out.append(Token("S", line))
        elif kind == tokenize.NEWLINE or (kind == tokenize.OP and text == ";"):
            if out and out[-1].text not in (EOL, ":"):  # `if x: y` is the same as its block form
                out.append(Token(EOL, line))
        elif kind in (tokenize.INDENT, tokenize.DEDENT):
            continue  # nesting shows in the ':' and the line ends; indent style must not matter
        elif kind == tokenize.NAME:
            keep = keyword.iskeyword(text) or text in _BUILTINS
            out.append(Token(text if keep else "N", line))
        elif kind == tokenize.NUMBER:
            out.append(Token("0", line))
        elif kind == tokenize.STRING:
            if out and out[-1].text == "S":  # implicit concatenation: one literal
                continue
            out.append(Token("S", line))
        elif kind == tokenize.OP and text in _CLOSERS and out and out[-1].text == ",":
            out[-1] = Token(text, line)  # trailing comma dropped
        else:
            out.append(Token(text, line))
    return _drop_statements(out)


def _drop_statements(tokens: list[Token]) -> list[Token]:
    """Remove docstrings and other statements that are only a string literal (``S`` then end of line), and
    import statements (how a module is imported and named says nothing about the solution)."""
    kept: list[Token] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        at_start = not kept or kept[-1].text in _STATEMENT_START
        if at_start and t.text == "S" and (i + 1 == len(tokens) or tokens[i + 1].text == EOL):
            i += 2
            continue
        if at_start and t.text in ("import", "from"):
            while i < len(tokens) and tokens[i].text != EOL:
                i += 1
            i += 1
            continue
        kept.append(t)
        i += 1
    return kept


def _hash(gram: Sequence[Token]) -> int:
    data = "\x1f".join(t.text for t in gram).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def kgram_hashes(tokens: Sequence[Token], k: int = K) -> list[int]:
    return [_hash(tokens[i : i + k]) for i in range(len(tokens) - k + 1)]


def winnow(hashes: Sequence[int], window: int = WINDOW) -> list[int]:
    """Indices of the k-grams winnowing selects: in each window the smallest hash (the rightmost of equal
    ones), each selected position once. A sequence shorter than a window keeps its minimum."""
    if not hashes:
        return []
    if len(hashes) <= window:
        return [min(range(len(hashes)), key=lambda i: (hashes[i], -i))]
    picked: list[int] = []
    for start in range(len(hashes) - window + 1):
        best = min(range(start, start + window), key=lambda i: (hashes[i], -i))
        if not picked or picked[-1] != best:
            picked.append(best)
    return picked


def fingerprint(tokens: Sequence[Token], exclude: frozenset[int] = frozenset()) -> dict[int, list[int]]:
    """Winnowed fingerprints of ``tokens``: hash -> the k-gram positions it was selected at, without the
    hashes in ``exclude`` (the release's k-grams)."""
    hashes = kgram_hashes(tokens)
    found: dict[int, list[int]] = defaultdict(list)
    for i in winnow(hashes):
        if hashes[i] not in exclude:
            found[hashes[i]].append(i)
    return dict(found)


@dataclass
class Document:
    """One submission's code: the cells the grader runs, joined, with its fingerprints."""

    student_id: str
    cells: list[str]
    text: str = ""
    tokens: list[Token] = field(default_factory=list)
    prints: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, student_id: str, cells: Sequence[str], exclude: frozenset[int] = frozenset()) -> Document:
        text_parts, tokens, line = [], [], 1
        for cell in cells:
            cell = cell.rstrip("\n")
            tokens += normalised_tokens(cell + "\n", line)
            text_parts.append(cell)
            line += cell.count("\n") + 2  # the cell's lines and one blank line between cells
        doc = cls(student_id, list(cells), "\n\n".join(text_parts), tokens)
        doc.prints = fingerprint(tokens, exclude)
        return doc

    @property
    def size(self) -> int:
        return len(self.prints)

    def lines_of(self, shared: Iterable[int]) -> set[int]:
        """Source lines covered by the k-grams of the ``shared`` fingerprints."""
        lines: set[int] = set()
        for h in shared:
            for pos in self.prints.get(h, ()):
                lines.update(t.line for t in self.tokens[pos : pos + K])
        return lines


def release_exclusion(cells: Iterable[str]) -> frozenset[int]:
    """Every k-gram hash of the release's code cells (not only the winnowed ones)."""
    excluded: set[int] = set()
    for cell in cells:
        excluded.update(kgram_hashes(normalised_tokens(cell)))
    return frozenset(excluded)


@dataclass
class Pair:
    a: Document
    b: Document
    common: int  # fingerprints the two have in common

    @property
    def shared(self) -> frozenset[int]:
        return frozenset(self.a.prints.keys() & self.b.prints.keys())

    @property
    def score(self) -> float:
        return round(2 * self.common / (self.a.size + self.b.size), 4)

    @property
    def cover_a(self) -> float:
        return round(self.common / self.a.size, 4)

    @property
    def cover_b(self) -> float:
        return round(self.common / self.b.size, 4)


def compare_class(documents: Sequence[Document]) -> tuple[list[Pair], list[Document]]:
    """Every pair of compared documents sharing a fingerprint, highest score first (then by ids), and the
    documents too small to compare (:data:`MIN_FINGERPRINTS`). The counts of common fingerprints come from
    one sparse product (documents × fingerprints times its transpose), so a class of hundreds in which most
    submissions share most of their code costs milliseconds, not a set intersection per pair."""
    import numpy as np
    from scipy.sparse import csr_matrix

    compared = [d for d in documents if d.size >= MIN_FINGERPRINTS]
    small = [d for d in documents if d.size < MIN_FINGERPRINTS]
    column: dict[int, int] = {}
    rows, cols = [], []
    for i, doc in enumerate(compared):
        for h in doc.prints:
            rows.append(i)
            cols.append(column.setdefault(h, len(column)))
    if not compared:
        return [], small
    m = csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(len(compared), len(column)))
    common = (m @ m.T).tocoo()
    pairs = [
        Pair(compared[i], compared[j], int(n))
        for i, j, n in zip(common.row, common.col, common.data, strict=True)
        if i < j and n > 0
    ]
    pairs.sort(key=lambda p: (-p.score, p.a.student_id, p.b.student_id))
    return pairs, small
