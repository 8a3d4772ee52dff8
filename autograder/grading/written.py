"""Suggested scores for written answers (Q items), with quoted evidence, labelled "static review".

``suggest(answer, item)`` reads one written rubric item (as loaded from rubric.yaml) and returns a
:class:`WrittenSuggestion`: a suggested score, one piece of evidence per criterion, the rubric
deductions that apply and a comment for nbgrader's comment box. Nothing here is a final grade: the
instructor confirms or changes it in formgrader. How well the suggestions agree with a careful
instructor is measured on a labelled corpus (``autograder/authoring/agreement.py``, ``make bench``).

How an answer is read
=====================

1. **Plain text** (:func:`normalise`): the text of the answer *as the review page shows it*
   (:func:`autograder.grading.answer_text.visible`: nbconvert's markdown rendering sanitised by nh3, exactly the
   HTML formgrader shows), so nothing the instructor cannot see is scored (comments, script/style bodies,
   alt text, formulas that hide text: those are flagged instead; struck-through ``~~text~~``, which the student
   withdrew, is not scored either); every paragraph, list item, heading and
   table cell becomes a line. Then Unicode NFKC (full-width -> half-width), every format (Cf) and
   default-ignorable character removed (flagged), ``×``/``⋅``/``a*b`` -> ``·``, unicode minus -> ``-``;
   ``$..$``/``$$..$$`` LaTeX is turned into text by pylatexenc
   (``\\min(m, P-p)\\cdot M_{\\text{act}}`` -> ``min(m, P-p)·M_act``, ``\\frac{a}{b}`` -> ``(a)/(b)``,
   ``\\lambda^{\\Delta t}`` -> ``λ^Δt``); display math joins the line that introduces it. Answers over
   ``MAX_ANSWER_CHARS`` or over the time budget are not scored (suggestion 0, flagged).
2. **Sentences** end at ``。!?;``, at ``.`` before a space/CJK/end, and at every line break. A
   **passage** is one sentence, two or three adjacent ones of one paragraph. Sentences that copy the question
   (rapidfuzz ``partial_ratio`` >= 85, or 80 % of their character pairs the question's) are ignored.
3. **Concepts** are regexes (``re.IGNORECASE | re.ASCII``: match CJK with literal characters). A hit
   is **negated** when a negation cue (不是/不会/没有/从不/无需/not/never/no/…) stands just before it in
   its clause, or a dismissal (无关/可以忽略/并不存在/nothing to do with/is not an issue/…) just after it.
   Negated hits do not count. The negation is scoped to the claim: "与 m 无关" / "independent of m"
   (independence of a variable) states a relation and is no dismissal; a negation about one named
   example ("在 [30,10,10,20] 里没有背压", "no backpressure in [30,10,10,20]") is neither a claim nor a
   denial; a negated hit followed by a contrast with another subject ("静态调度没有决策开销，而动态调度…")
   states the relation and counts; the "not A" of "not A but B" (不是 A，而是 B) is neither (B is read on
   its own); a negation under a condition ("缓冲无限大就不会阻塞", "With an unbounded buffer there is no
   blocking", "B=∞ 时没有阻塞", "buffer 大，producer 不阻塞", "unbounded buffer = no blocking"), in a relative
   clause ("没超过的") or of a guarantee ("没有理论能保证") denies nothing.
4. A **criterion** is met when every concept has an un-negated hit inside one passage that
   *explains*: it has a causal/conditional connective (因为 所以 导致 当…时 because when if …) or a
   formula (unless the criterion says ``needs_reason: false``, e.g. a design), it is long enough (12
   CJK characters or 8 English words) and it is not a keyword list. It is **withdrawn** (✗, the
   sentence that caused it is quoted in the evidence and the comment) when
   (a) its first concept (its claim) is negated in a sentence that also names another of its concepts
   (a denial or a self-contradiction);
   (b) a later sentence about the same subject takes it back: "scratch that"/"收回" anywhere after the
   passage; "doesn't matter"/"其实不…"/"其实只是…"/"不算…"/a change of mind ("等等，", "我改一下：", "想错了")
   after the passage's first hit, and only the nearest point before it (another point's passage in between
   keeps this one) unless it speaks of all ("这两点都站不住"). The last word counts: a passage after the
   retraction that states the point anew meets it;
   (c) one of the criterion's ``misreadings`` (rubric data: ``{pattern, why}``) matches, un-negated and
   not rejected in its own sentence ("…也不对", "is misleading"): a reversed causal direction, a
   misattributed mechanism, a rejected measure, an affirmative counter-design; ``why`` is the note. A
   misreading with ``half: true`` halves the criterion instead (quoted): a mechanism applied where it
   does not hold ("[30,10,10,20] 里也算背压"), a role denied ("缓冲区对背压不起作用").
   A concept marked ``full_only: true`` is needed for full points only: without it the criterion earns
   half ("缓冲" without "latest value only", a memory formula without min(m, ·)). A criterion's ``figures``
   (rubric data: ``{cue, values, unit}``) are the lesson's numbers where the question asks for them: a
   figure stated after the cue that is none of the values (beyond rounding or 2 %) halves the criterion,
   quoted. ``need: k`` with ``options:`` makes an any-k-of-n criterion: each option met earns ``points /
   k``, up to the criterion's points. A soft retraction belongs to the criterion it speaks of: one named before it in its sentence or
   in its own clause ("背压其实并不存在，停顿都是饥饿" takes back backpressure, not starvation).
5. **Score** = the sum over criteria, capped at the item's points. Deductions are reported for the
   criteria not fully met; they coincide with the missing points and are not subtracted again.
6. **Salad and confidence**: when ``SALAD_COVERAGE`` of an answer's tokens (>= 12) are the item's concept
   hits or glue words (因为 所以 的 because the …), ``SALAD_COVERAGE_WITH_QUESTION`` counting the question's
   words too, a causal connective per ~12 tokens, or one sentence chaining four or more causal links
   through two or more criteria's terms (:func:`claims.salad`), it is a keyword salad: capped at
   ``SALAD_CAP`` (a quarter) of the points, flagged ``LOW_CONFIDENCE``. ``confidence`` is "low" whenever
   there is a flag (hidden content, invisible characters, duplicated cells, not scored, salad); "medium"
   when the reading is doubtful (``doubts``: points standing beside a denied or misread one, mostly the
   rubric's and question's words, concepts without an explanation); reviews show low, then medium first.

7. **Checked by labelled answers** (:mod:`.anchors`, when ``anchors`` is given: as a class is graded,
   ``grading/scoring.py``): a learned reader fitted on the lesson's labelled corpus gives each criterion a
   probability per score. The rules' score stands unless the reader finds it unlikely (under 50 % with a
   lower expectation: lowered; under 20 % with a higher one: raised, never beside a retraction or for a
   criterion the rules withdrew); a changed score says so in its evidence and is a doubt (medium). The
   salad flag is decided by the rules' reading, its cap applied after the check. A long answer almost none of
   which lies in phrases the labelled answers use (:meth:`.anchors.Anchors.fragments`: a model answer cut into
   pieces and shuffled, or reversed) is fragments glued together: nothing raised, capped at half, flagged.

The cues (negation, dismissal, retraction, contrast, salad glue, copies) live in :mod:`.claims`; the rest is rubric data.

Longer than 500 lines because the scorer and its rule language are kept in one module, documented
here, so that what a criterion's patterns mean is read in one place.
"""

from __future__ import annotations

import functools
import re
import time
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from rapidfuzz import fuzz

from autograder.core.results import STATIC_REVIEW, ItemResult
from autograder.core.rubric import criterion_units
from autograder.core.rubric import validate_written_item as validate_item
from autograder.grading import anchors as learned_reader
from autograder.grading import claims
from autograder.grading.answer_text import EMPHASIS, FORMAT_CHARACTERS, strip_invisible, visible

__all__ = ["LOW_CONFIDENCE", "WrittenSuggestion", "suggest", "normalise", "split_sentences", "validate_item"]

#: longest answer scored (the labelled corpora's longest: 1 304 characters); a longer one is "not scored"
MAX_ANSWER_CHARS = 10_000
#: time one answer may take to score (honest answers: milliseconds); over it, "not scored"
ANSWER_BUDGET_S = 5.0
NOT_SCORED = "not scored"
LOW_CONFIDENCE = "低置信度 / low confidence"
MIN_PASSAGE_SIZE = 12.0  # 12 CJK characters or 8 English words
MIN_WINDOW_SENTENCE_SIZE = 6.0
ECHO_SIMILARITY = 85.0
QUOTE_MAX = claims.QUOTE_MAX


@dataclass
class WrittenSuggestion:
    """A suggested score for one written item. ``mode`` is always "static review"."""

    item_id: str
    points: float
    score: float
    evidence: list[dict] = field(default_factory=list)  # [{"criterion", "met", "quote", "note"}]
    deductions_applied: list[str] = field(default_factory=list)
    comment: str = ""
    mode: str = STATIC_REVIEW
    #: what an instructor must know before trusting the score: hidden content, invisible characters,
    #: duplicated answer cells, "not scored" (too long or over the time budget)
    flags: list[str] = field(default_factory=list)
    #: "low" whenever there is a flag: the text may not be what it seems (hidden content, invisible
    #: characters, duplicated cells, not scored, or a keyword salad: the LOW_CONFIDENCE flag); "medium"
    #: when the reading itself is doubtful (``doubts``: the answer contradicts itself, it is mostly the
    #: rubric's and question's words, or its concepts occur without an explanation); else "high"
    confidence: str = "high"
    doubts: list[str] = field(default_factory=list)

    def to_item_result(self, description: str = "") -> ItemResult:
        """The suggestion as an unconfirmed :class:`ItemResult` (score = suggestion until confirmed)."""
        return ItemResult(
            id=self.item_id,
            kind="written",
            points=self.points,
            score=self.score,
            mode=self.mode,
            description=description,
            evidence=[dict(e) for e in self.evidence],
            suggestion=self.score,
            confirmed=None,
            message=self.comment,
            flags=list(self.flags),
            doubts=list(self.doubts),
        )


# -- 1. plain text ------------------------------------------------------------------------------------

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK}]")
_WORD_RE = re.compile(r"[A-Za-z0-9]+")
_CHARS = str.maketrans(
    {
        "\u2212": "-",
        "\u2013": "-",
        "\u2010": "-",
        "\u2011": "-",
        "\u00d7": "·",
        "\u22c5": "·",
        "\u2219": "·",
        "\u30fb": "·",
        "\u00a0": " ",
        "\u200b": "",
        "\ufeff": "",
    }
)
_PLACEHOLDER_RE = re.compile(r"YOUR ANSWER HERE", re.I)
_STAR_PRODUCT_RE = re.compile(r"(?<=[A-Za-z0-9)])\*(?=[A-Za-z0-9(])|(?<=[\w)]) \* (?=[\w(])")
_SPACES_RE = re.compile(r"[ \t\f\v\u3000]+")


def _latex_converter() -> LatexNodes2Text:
    db = get_default_latex_context_db().filter_context(keep_categories=None)
    db.add_context_category(
        "course",
        prepend=True,
        macros=[
            MacroTextSpec("frac", "(%s)/(%s)"),
            MacroTextSpec("cdot", " · "),
            MacroTextSpec("times", " · "),
            MacroTextSpec("left", ""),
            MacroTextSpec("right", ""),
            MacroTextSpec("bar", "%s̄"),
            MacroTextSpec("overline", "%s̄"),
            *(
                MacroTextSpec(name, f" {sym} ")
                for name, sym in (("leftarrow", "←"), ("gets", "←"), ("rightarrow", "→"), ("to", "→"))
            ),
        ],
    )
    return LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=False)


_LATEX = _latex_converter()
# \dfrac and \tfrac are \frac to a reader; pylatexenc's parser does not know their arguments
_FRAC_VARIANT_RE = re.compile(r"\\[dtc]frac(?![A-Za-z])")
_SIMPLE_GROUP_RE = re.compile(r"\(([\w\u0300-\u036f\u0370-\u03ff]+)\)")


@functools.lru_cache(maxsize=8192)  # short formulas ($P-1$, $t_{max}$) recur across a class's answers
def latex_to_text(latex: str) -> str:
    """``\\frac{a}{b}`` -> ``a/b``, ``\\cdot`` -> ``·``, ``\\lambda`` -> ``λ`` (pylatexenc)."""
    try:
        text = _LATEX.latex_to_text(_FRAC_VARIANT_RE.sub(r"\\frac", latex))
    except Exception:  # a student's broken LaTeX: keep it as typed
        text = latex
    return _SIMPLE_GROUP_RE.sub(r"\1", text)


def _join_soft_breaks(line: str) -> str:
    def join(m: re.Match) -> str:
        a, b = m.string[m.start() - 1 : m.start()], m.string[m.end() : m.end() + 1]
        return "" if _CJK_RE.match(a or " ") and _CJK_RE.match(b or " ") else " "

    return re.sub(r"\s*\x00\s*", join, line)


def normalise(text: str | None) -> str:
    """The plain text that patterns are matched against; lines are paragraphs, items, cells."""
    return read_answer(text)[0]


_EMPHASIS_PRODUCT_RE = re.compile(f"(?<=[A-Za-z0-9)]){EMPHASIS}(?=[A-Za-z0-9(])")
_DISPLAY_MATH_RE = re.compile(r"\s*\$\$(.+?)\$\$\s*(?:\x00|$)", re.S)
_INLINE_MATH_RE = re.compile(r"\$([^$]+?)\$", re.S)


def _math(latex: str) -> str:
    return latex_to_text(latex.replace("\x00", " "))


def _visible_lines(chunk: str) -> list[str]:
    """One visible line of the review rendering as the lines the scorer reads: NFKC, ``×``/``a*b`` -> ``·``,
    formulas as text (a display formula ends its line)."""
    line = unicodedata.normalize("NFKC", chunk).translate(_CHARS)
    line = _EMPHASIS_PRODUCT_RE.sub("*", line).replace(EMPHASIS, "")
    line = _STAR_PRODUCT_RE.sub("·", _PLACEHOLDER_RE.sub("", line))
    line = _DISPLAY_MATH_RE.sub(lambda m: " " + " ".join(_math(m.group(1)).split()) + "\n", line)
    return _INLINE_MATH_RE.sub(lambda m: _math(m.group(1)), line).split("\n")


@lru_cache(maxsize=4096)
def read_answer(text: str | None) -> tuple[str, tuple[str, ...]]:
    """(normalised text, flags): the text of the answer as the review page shows it
    (:func:`autograder.grading.answer_text.visible`), normalised, and what was hidden or invisible in it."""
    if not text:
        return "", ()
    shown = visible(text)
    out: list[str] = []
    invisible = 0
    for chunk in shown.text.split("\n"):
        chunk, removed = strip_invisible(chunk)  # entities (&#8205;) included: this is the rendered text
        invisible += removed
        joins = chunk.lstrip(" \t\x00").startswith("$$")  # display math joins the line introducing it
        for line in _visible_lines(chunk):
            line = _SPACES_RE.sub(" ", _join_soft_breaks(line).replace("$", "")).strip()
            if line and joins and out:
                out[-1] += " " + line
            elif line:
                out.append(line)
            joins = False
    flags = list(shown.flags)
    if invisible or strip_invisible(text)[1]:
        flags.append(f"{FORMAT_CHARACTERS}: removed before scoring")
    return "\n".join(out), tuple(flags)


# -- 2. sentences -------------------------------------------------------------------------------------

_SENT_END_RE = re.compile(
    r"[。!?;]+[\"'”’)\]」』]*"
    r"|(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)(?<!\bFig)\.(?=\s|$|[" + _CJK + "])"
    r"|\n"
)
_CONNECTIVE_RE = re.compile(
    r"因为|由于|导致|所以|因此|因而|从而|使得|致使|以致|造成|引起|于是|进而|若|如果|假如|一旦|只要|只有|除非"
    r"|当(?!前)|(?<![规原准法])则|才|而|直到|否则|意味着|取决于|受限于|相比|比起|(?<![对相])比[^,，。;\s]{0,8}?[慢快]|大于|小于|高于|低于|超过|越.{1,10}越"
    r"|为了|以便|以免|防止|避免|通过|随着?|只能|无法|不得不|(?<![使作费利])用|被|让|(?<!成)就(?!是)"
    r"|(?<![同及实准按暂])时(?![钟间序刻延候])|→|⇒|->|不等于|≠"
    r"|\b(?:because|since|so|therefore|thus|hence|causes?|caused|causing|leads?\s+to|led\s+to"
    r"|results?\s+in|due\s+to|when|whenever|if|unless|until|while|whereas|than|otherwise|means"
    r"|which|thereby|in\s+turn|as\s+a\s+result|instead|rather"
    r"|forc(?:e|es|ed|ing)|makes?|prevents?|avoids?|in\s+order\s+to|before|after|once|by|not|never"
    r"|via|using|through|without|only|each|every)\b",
    re.I | re.A,
)
_FORMULA_RE = re.compile(r"[=≈≤≥∝←<>]|\b(?:min|max)\s*\(|[\w)]\s*·\s*[\w(]|\^", re.I | re.A)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences of a *normalised* text, whitespace trimmed."""
    spans, pos = [], 0
    for m in _SENT_END_RE.finditer(text):
        spans.append((pos, m.start() if m.group() == "\n" else m.end()))
        pos = m.end()
    spans.append((pos, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s and re.search(f"[{_CJK}A-Za-z0-9]", text[s:e]):
            out.append((s, e))
    return out


@dataclass
class _Sentence:
    start: int
    end: int
    size: float
    explains: bool  # a connective or a formula
    list_like: bool
    echo: bool


@lru_cache(maxsize=64)
def _question_text(question: str) -> str:
    return normalise(question).lower()


def _sentences(text: str, question: str | None, deadline: float | None = None) -> list[_Sentence]:
    q = _question_text(question) if question else ""
    out = []
    for s, e in split_sentences(text):
        _check(deadline)
        chunk = text[s:e]
        echo = bool(q) and len(chunk) >= 6 and fuzz.partial_ratio(chunk.lower(), q) >= ECHO_SIMILARITY
        echo = echo or claims.echoes(chunk, q)
        explains = bool(_CONNECTIVE_RE.search(chunk) or _FORMULA_RE.search(chunk))
        out.append(_Sentence(s, e, claims.size(chunk), explains, claims.is_list_like(chunk), echo))
    return out


# -- 3. concepts and negation -------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _concept_regex(patterns: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I | re.A)


def _subject_regexes(criterion: dict) -> list[re.Pattern]:
    """The criterion's required concepts (its subject), over all its units."""
    return [
        _concept_regex(tuple(c["patterns"]))
        for u in criterion_units(criterion)
        for c in u["concepts"]
        if not c.get("full_only")
    ]


def _sentence_at(sents: list[_Sentence], start: int, end: int | None = None) -> int | None:
    """The index of the sentence holding ``start`` (and ``end``, when given), or None (between sentences)."""
    k = bisect_right([s.start for s in sents], start) - 1
    return k if k >= 0 and (start < sents[k].end if end is None else end <= sents[k].end) else None


def _hits(text: str, sents: list[_Sentence], concept: dict) -> tuple[dict[int, tuple[int, int]], set[int]]:
    """Un-negated hits by sentence index (first span each), and the sentences with a negated hit."""
    where: dict[int, tuple[int, int]] = {}
    negated: set[int] = set()
    previous_end = 0
    for m in _concept_regex(tuple(concept["patterns"])).finditer(text):
        if m.end() == m.start():
            continue
        k = _sentence_at(sents, m.start(), m.end())
        floor = previous_end  # a cue inside the previous affirmed hit belongs to it ("cannot drop below")
        if k is None or sents[k].echo:
            continue
        if claims.negated(text, m.start(), m.end(), floor):
            if claims.scoped_to_example(text, sents[k].start, m.start(), m.end()):
                continue  # "no backpressure in [30,10,10,20]": about the example, neither claim nor denial
            if claims.corrected_after(text, m.end(), sents[k].end):
                continue  # "不是 A，而是 B": the A is neither claim nor denial; B is read on its own
            if not claims.contrast_follows(text, m.end(), sents[k].end):
                negated.add(k)  # the floor stays: "不用最新值缓冲" negates both hits
                continue
            where.setdefault(k, m.span())  # "静态没有决策开销，而动态…": the contrast states the relation
        else:
            where.setdefault(k, m.span())
            previous_end = m.end()
    return where, negated


# -- 4. criteria --------------------------------------------------------------------------------------


@dataclass
class _Match:
    met: bool
    quote: str = ""  # the evidence of a ✓, or the sentence that caused a ✗ (denial, retraction, misreading)
    note: str = ""
    seen: bool = False  # some concept occurs (outside copies of the question)
    unexplained: bool = False  # all concepts occur together, but only in passages that do not explain
    contradicted: bool = False
    half: bool = False  # met without a ``full_only`` concept: half the points
    at: int = -1  # where the passage that met it starts
    kept: _Match | None = None  # the reading a soft retraction withdrew, and where that retraction is
    taken_back_at: int = -1
    cue_clause_end: int = -1  # the end of the soft retraction's clause (its subject stands before)


def _sentence_quote(text: str, sent: _Sentence) -> str:
    return claims.trim_quote(
        text, sent.start, sent.end, [(sent.start, min(sent.end, sent.start + QUOTE_MAX))]
    )


def _misread(text: str, sents: list[_Sentence], unit: dict) -> _Match | None:
    """The rubric's ``misreadings`` of the criterion: a reversed, misattributed or rejected claim."""
    for entry in unit.get("misreadings") or []:
        for m in _concept_regex((entry["pattern"],)).finditer(text):
            k = _sentence_at(sents, m.start())
            if k is None or sents[k].echo or claims.rejected(text, m.start(), m.end()):
                continue
            quote, why = _sentence_quote(text, sents[k]), str(entry["why"])
            return _Match(False, quote, why, True, contradicted=True, half=bool(entry.get("half")))
    return None


_FIGURE_RE = re.compile(r"(?<![\w.])(\d+(?:\.(\d+))?)\s*(%?)(?![\w.])", re.A)


def _wrong_figure(text: str, sents: list[_Sentence], unit: dict) -> _Match | None:
    """A figure the answer states for one of the lesson's numbers (rubric ``figures``: a cue, the lesson's
    values, a unit) that is none of them: within rounding (half a unit of its last digit) or 2 %."""
    for entry in unit.get("figures") or []:
        values, unit_ = [float(v) for v in entry["values"]], entry.get("unit", "")
        for cue in _concept_regex((entry["cue"],)).finditer(text):
            k = _sentence_at(sents, cue.start())
            if k is None or sents[k].echo:
                continue
            lo = max(sents[k].start, cue.start() - 16) if unit_ else cue.end()  # "50.8% 的气泡率"
            for n in _FIGURE_RE.finditer(text, lo, min(sents[k].end, cue.end() + 30)):
                if n.group(3) != unit_ or re.search(
                    r"[A-Za-z_]\s*[=＝]?\s*$", text[max(lo, n.start() - 4) : n.start()]
                ):
                    continue  # another unit, or another quantity after the cue ("m=16", "P=8", "m 16")
                x, tol = float(n.group(1)), 0.5 * 10 ** -len(n.group(2) or "")
                if not any(abs(x - v) <= max(tol, 0.02 * abs(v)) for v in values):
                    lesson = "、".join(f"{v:g}{unit_}" for v in values[:4])
                    note = f"数字与本课不符：{n.group().strip()}（本课 {lesson}…） / not the lesson's figure"
                    return _Match(False, _sentence_quote(text, sents[k]), note, True, contradicted=True)
    return None


def _match(text: str, sents: list[_Sentence], unit: dict, deadline: float | None = None) -> _Match:
    found = [_hits(text, sents, c) for c in unit["concepts"]]
    _check(deadline)
    seen = any(where for where, _ in found)
    denied = next((k for k in sorted(found[0][1]) if any(k in where for where, _ in found[1:])), None)
    if denied is not None:
        # the claim is denied in a sentence about the criterion's subject: a contradiction is no answer
        return _Match(False, _sentence_quote(text, sents[denied]), seen=seen, contradicted=True)
    misread = _misread(text, sents, unit)
    if misread and not misread.half:
        return misread
    best, unexplained = _passage(text, sents, found, unit.get("needs_reason", True), deadline)
    half = False
    required = [f for f, c in zip(found, unit["concepts"], strict=True) if not c.get("full_only")]
    if best is None and len(required) < len(found):
        best, _ = _passage(text, sents, required, unit.get("needs_reason", True), deadline)
        half = best is not None
    if best is None:
        return misread or _Match(False, seen=seen, unexplained=unexplained)
    _, _, start, end, spans = best
    # the subject of a retraction is named by the claim's required concepts, not by a full-points detail
    taken_back = _retracted(text, sents, required, start, min(e for _, e in spans[: len(required)]))
    while taken_back is not None:  # the last word counts: a passage after the retraction states it anew
        later = [
            ({k: v for k, v in w.items() if k > taken_back.sentence}, d)
            for w, d in (required if half else found)
        ]
        again, _ = _passage(text, sents, later, unit.get("needs_reason", True), deadline)
        if again is None:
            break
        _, _, start, end, spans = again
        taken_back = _retracted(text, sents, required, start, min(e for _, e in spans[: len(required)]))
    met = _Match(True, quote=claims.trim_quote(text, start, end, spans), seen=True, half=half, at=start)
    if taken_back is not None:  # a soft one may belong to another point (_soft_retraction_owners)
        return _Match(
            False,
            _sentence_quote(text, sents[taken_back.sentence]),
            seen=True,
            contradicted=True,
            kept=None if taken_back.strong else met,
            taken_back_at=sents[taken_back.sentence].start,
            cue_clause_end=taken_back.clause_end,
        )
    # a half misreading (the mechanism applied where it does not hold), or a measurement that is right with a
    # number that is not the lesson's: half the points, the sentence quoted
    wrong = misread or (None if half else _wrong_figure(text, sents, unit))
    if wrong is not None:
        wrong.met = wrong.half = True
        wrong.at = start
        return wrong
    return met


def _passage(text: str, sents: list[_Sentence], found: list, needs_reason: bool, deadline: float | None):
    """(the shortest explaining passage holding a hit of every concept, whether one exists unexplained)."""
    best = unexplained = None
    for i in range(len(sents)):
        if i % 64 == 0:
            _check(deadline)
        for j in range(i, min(i + 3, len(sents))):
            if j == i + 2 and "\n" in text[sents[i].start : sents[j].end]:
                continue  # three sentences only within one paragraph
            spans = [next((where[k] for k in range(i, j + 1) if k in where), None) for where, _ in found]
            if None in spans:
                continue
            window = sents[i : j + 1]
            ok = (
                (any(s.explains for s in window) or not needs_reason)
                and sum(s.size for s in window) >= MIN_PASSAGE_SIZE
                and not any(s.list_like for s in window)
                and (j == i or min(s.size for s in window) >= MIN_WINDOW_SENTENCE_SIZE)
            )
            a, b = sents[i], sents[j]
            key = (j - i, b.end - a.start, a.start, b.end, spans)
            if ok and (best is None or key[:2] < best[:2]):
                best = key
            elif not ok and unexplained is None:
                unexplained = key
    return best, unexplained is not None


_ALL_POINTS_RE = re.compile(r"都|全部|两点|以上|上面|二者|两者|\b(?:all|both|none|everything|above)\b", re.I)


@dataclass(frozen=True)
class _Retraction:
    sentence: int  # the index of the sentence that takes the statement back
    strong: bool  # explicit ("scratch that", "收回"): it withdraws the point, no owner sought (a soft one has one)
    clause_end: int = -1  # a soft one's: the end of its cue's clause (its subject is named before that)


def _retracted(text: str, sents: list[_Sentence], found: list, start: int, after: int) -> _Retraction | None:
    """The sentence that takes the statement back: it retracts and speaks of the same subject (one of the
    unit's concepts occurs in it, affirmed or denied). An explicit retraction ("scratch that", "收回")
    counts from the passage that met the criterion on; a softer one ("doesn't matter", "其实不…",
    "不算…", "其实只是…") only after that passage's hits (before them it is usually "not X but Y")."""
    for k, sent in enumerate(sents):
        if sent.end <= start or sent.echo or not any(k in where or k in denied for where, denied in found):
            continue
        if claims.RETRACTION_STRONG_RE.search(text, max(sent.start, start), sent.end):
            return _Retraction(k, True)
        cue = sent.end > after and claims.RETRACTION_RE.search(text, max(sent.start, after), sent.end)
        if cue:
            comma = text.find(",", cue.end(), sent.end)
            return _Retraction(k, False, comma if comma >= 0 else sent.end)
    return None


def _soft_retraction_owners(text: str, item: dict, matches: dict[str, list[_Match]]) -> None:
    """Give each soft retraction to the one point it takes back, restoring (in place) the others' readings.

    It takes back the nearest point before it: when another point's passage stands between this one's and
    the retraction ("A. B. 其实 B 没有必要"), it is that point's ("这两点都站不住", "all of this is wrong"
    take back every point before them). And it speaks of the criterion named in its own clause, else before
    it in its sentence: "下游背压其实并不存在，停顿都是上游饥饿" takes back backpressure, named before the
    cue, not starvation, named only after it; "所以只会有饥饿，背压只是理论上的说法" takes back backpressure."""
    passages = [m.at if m.met else m.kept.at for ms in matches.values() for m in ms if m.met or m.kept]
    subjects = None  # each criterion's subject regexes, built only for an answer that has a soft retraction
    for cid, ms in matches.items():
        for k, m in enumerate(ms):
            if not m.kept:
                continue
            if not _ALL_POINTS_RE.search(m.quote) and any(m.kept.at < a < m.taken_back_at for a in passages):
                ms[k] = m.kept
                continue
            subjects = subjects or {c["id"]: _subject_regexes(c) for c in item["criteria"]}
            own = text.rfind(",", m.taken_back_at, m.cue_clause_end - 1) + 1 or m.taken_back_at
            for span in ((own, m.cue_clause_end), (m.taken_back_at, m.cue_clause_end)):
                named = {c for c, regexes in subjects.items() if any(r.search(text, *span) for r in regexes)}
                if named:
                    break
            if named and cid not in named:
                ms[k] = m.kept


def _note(m: _Match, text: str, live: bool, off_topic: bool) -> str:
    if not text:
        return "空白作答 / empty answer"
    if not live:
        return "仅复述题目，没有作答 / only the question copied, no answer"
    if m.contradicted and m.note:
        return m.note
    if m.contradicted:
        return (
            "答案否定了这一要点（否定或自相矛盾） / the answer denies this point (negation or contradiction)"
        )
    if m.unexplained:
        return "关键词罗列，缺少解释 / keywords without explanation"
    if off_topic:
        return "未涉及本题要点（离题？） / none of the rubric concepts found (off-topic?)"
    if m.seen:
        return "要点不完整或分散在不同段落 / concepts missing or only in separate passages, not connected"
    return "缺少要点 / missing concept"


# -- 5. score -----------------------------------------------------------------------------------------


def _fmt(x: float) -> str:
    return f"{round(float(x), 2):g}"


class _OverBudget(Exception):
    pass


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise _OverBudget


def not_scored(item: dict, why: str, flags: Sequence[str] = ()) -> WrittenSuggestion:
    """Suggestion 0 with a clear "not scored" flag (an answer over the length cap or the time budget)."""
    points = float(item["points"])
    flag = f"{NOT_SCORED}: {why}"
    evidence = [{"criterion": c["id"], "met": False, "quote": "", "note": flag} for c in item["criteria"]]
    comment = "\n".join(
        [
            f"[静态审查 / static review] 未评分 / {flag}: 建议得分 0/{_fmt(points)}",
            *(f"⚠ {f}" for f in flags),
            "请人工评分 / score it by hand in formgrader",
        ]
    )
    return WrittenSuggestion(
        str(item["id"]), points, 0.0, evidence, [], comment, flags=[*flags, flag], confidence="low"
    )


def suggest(
    answer: str | None,
    item: dict,
    *,
    question: str | None = None,
    flags: Sequence[str] = (),
    budget_s: float | None = None,
    anchors: learned_reader.Anchors | None = None,
) -> WrittenSuggestion:
    """Suggested score for ``answer`` under the written rubric ``item`` (a dict from rubric.yaml).

    ``question`` overrides ``item["question"]`` (the question text, whose copies earn nothing).
    ``flags`` are added to the scorer's own (e.g. a duplicated answer cell). An answer over
    :data:`MAX_ANSWER_CHARS` characters, or one whose scoring takes longer than ``budget_s`` (default
    :data:`ANSWER_BUDGET_S`), is not scored: suggestion 0 and a "not scored" flag. ``anchors``: the item's
    learned reader (:mod:`.anchors`), combined with the rules' reading per criterion."""
    validate_item(item)
    points = float(item["points"])
    flags = list(flags)
    if answer and len(answer) > MAX_ANSWER_CHARS:
        return not_scored(item, f"{len(answer)} characters, over the limit of {MAX_ANSWER_CHARS}", flags)
    # the rendering is bounded by the length cap; the budget starts after it, so the first answer a
    # process reads does not pay nbconvert's one-time start-up against its budget
    text, read_flags = read_answer(answer)
    flags += [f for f in read_flags if f not in flags]
    question = question if question is not None else item.get("question")
    if question:
        _question_text(question)  # the item's question is read once per process, outside any budget
    deadline = time.monotonic() + (ANSWER_BUDGET_S if budget_s is None else budget_s)
    try:
        sents = _sentences(text, question, deadline)
        live = any(not s.echo for s in sents)
        matches = {
            c["id"]: [_match(text, sents, u, deadline) for u in criterion_units(c)] for c in item["criteria"]
        }
    except _OverBudget:
        budget = ANSWER_BUDGET_S if budget_s is None else budget_s
        return not_scored(item, f"scoring took longer than {budget:g} s", flags)
    _soft_retraction_owners(text, item, matches)
    off_topic = not any(m.seen for ms in matches.values() for m in ms)

    evidence, scores = [], {}
    for crit in item["criteria"]:
        cid, ms = crit["id"], matches[crit["id"]]
        need = int(crit.get("need", 1)) if "options" in crit else 1
        credit = sum(0.5 if m.half else 1.0 for m in ms if m.met)
        scores[cid] = float(crit["points"]) * min(credit, need) / need
        quotes = [m.quote for m in ms if m.met][:need]
        n_met = sum(m.met and not m.half for m in ms)
        if "options" in crit:
            names = [u["id"] for u, m in zip(crit["options"], ms, strict=True) if m.met]
            note = f"{_fmt(min(credit, need))}/{need}：" + (
                "、".join(names) if names else _note(ms[0], text, live, off_topic)
            )
        elif n_met:
            note = "满足：要点在同一段中有解释 / met: concepts explained together"
        elif credit and ms[0].note:
            note = "部分满足（半分）：" + ms[0].note
        elif credit:
            missing = [c["name"] for c in crit["concepts"] if c.get("full_only")]
            note = "部分满足（半分）：缺少 / half: missing " + "、".join(missing)
        else:
            note = _note(ms[0], text, live, off_topic)
        # a ✗ quotes the sentence that caused it (a denial, a retraction, a misreading) when there is one
        why = [m.quote for m in ms if m.contradicted and m.quote][:1]
        if n_met < need and why and credit and not (ms[0].half and ms[0].note):
            note += "；另有一点被否定或撤回 / another point is denied or taken back"
        evidence.append(
            {
                "criterion": cid,
                "met": n_met >= need,
                "quote": " … ".join(why if n_met < need and why else quotes if credit else ()),
                "note": note,
            }
        )

    units = [_unit_hits(text, u) for c in item["criteria"] for u in criterion_units(c)]
    hits, q = [h for u in units for h in u], _question_text(question or "")
    salad = claims.salad(text, hits, q, units)
    # a salad the rules would credit is flagged whatever the learned reader then makes of it
    salad = salad if sum(scores.values()) else None
    # fragments glued together (a model answer cut and shuffled) keep the words the rules and the reader look for
    fragments = anchors.fragments(text) if anchors is not None and live and not salad else None
    disagree = (
        _anchor(anchors, text, sents, item, evidence, scores, off_topic or bool(fragments))
        if anchors is not None and live
        else []
    )
    score = round(min(sum(scores.values()), points), 4)
    if salad:
        score = min(score, points * claims.SALAD_CAP)
        flags.append(
            f"{LOW_CONFIDENCE}: keyword salad ({salad}), capped at a quarter / 关键词拼凑，至多四分之一"
        )
    elif fragments and score:
        score = min(score, points / 2)
        flags.append(
            f"{LOW_CONFIDENCE}: fragments glued together ({fragments}), capped at half / 片段拼接，至多一半"
        )
    deductions = [
        str(d["reason"])
        for d in item.get("deductions") or []
        if scores[d["when_missing"]] < float(_crit(item, d["when_missing"])["points"])
    ]
    doubts = [] if flags else _doubts(text, evidence, hits, q) + disagree
    return WrittenSuggestion(
        str(item["id"]),
        points,
        score,
        evidence,
        deductions,
        _comment(item, score, points, evidence, scores, deductions, flags, doubts),
        flags=flags,
        confidence="low" if flags else "medium" if doubts else "high",
        doubts=doubts,
    )


#: the learned reader raises no score in an answer more than this share of which (by size) is keyword lists
#: or sentences without a connective or formula: a bag of character n-grams cannot tell them from prose
RAISE_MAX_UNEXPLAINED = 0.5


def _anchor(
    anchors, text: str, sents: list, item: dict, evidence: list[dict], scores: dict, off_topic: bool
) -> list[str]:
    """Each criterion's score checked by the learned reader (:func:`.anchors.combine`), its evidence
    updated; returns the doubts where the check changed a score."""
    reading = anchors.reading([text])
    # the learned reader does not see what a retraction takes back, nor word order, nor the topic: it never
    # raises a score beside a retraction, in an answer that is mostly keyword lists (shuffled words), or in
    # one that names none of the item's concepts
    own = [s for s in sents if not s.echo]
    listed = sum(s.size for s in own if s.list_like)
    retracts = (
        off_topic
        or bool(claims.RETRACTION_RE.search(text))
        or listed > RAISE_MAX_UNEXPLAINED * sum(s.size for s in own)
    )
    doubts = []
    for ev in evidence:
        cid, points = ev["criterion"], float(_crit(item, ev["criterion"])["points"])
        if cid not in reading:
            continue
        values, probs = reading[cid]
        rule, expected = scores[cid], float(probs[0] @ values)
        p_rule = float(probs[0][abs(values - rule) < 1e-9].sum())
        withdrawn = retracts or (not ev["met"] and bool(ev["quote"]))
        final = learned_reader.combine(rule, expected, p_rule, points, withdrawn)
        if final == rule:
            continue
        doubts.append(
            f"{cid}: 规则读到 {_fmt(rule)} 分，相似的已评答案多为 {_fmt(final)} 分 / the rules read {_fmt(rule)},"
            f" labelled answers like this one mostly earned {_fmt(final)}"
        )
        if final > rule and not ev["quote"]:
            own = [s for s in sents if not s.echo]
            best = anchors.expected([text[s.start : s.end] for s in own])[cid].argmax() if own else None
            ev["quote"] = "" if best is None else _sentence_quote(text, own[best])
        if final > rule:
            ev["note"] = "相似的已评答案得到这一点（规则未读到）/ labelled answers like this one earn it"
        elif ev["met"]:
            ev["note"] = (
                "规则读到这一点，相似的已评答案得分更低 / the rules read it, labelled answers earn less"
            )
        else:
            ev["note"] += "；相似的已评答案得分更低 / labelled answers like this one earn less"
        scores[cid], ev["met"] = final, final >= points
    return doubts


#: an answer at least this share of whose tokens are the rubric's and question's words (short of a salad)
#: reads doubtfully: on the tuning parts a fifth of such suggestions are off by half a point or more
DOUBTFUL_COVERAGE = 0.7


def _doubts(text: str, evidence: list[dict], hits: list[tuple[int, int]], question: str) -> list[str]:
    """Why the reading of an honest-looking answer may be wrong (coherence and evidence, not flags): on the
    tuning parts these answers disagree with the label about four times as often as the others."""
    out = []
    if any(e["met"] for e in evidence) and any(not e["met"] and e["quote"] for e in evidence):
        out.append(
            "前后不一：有的要点成立，有的被否定、撤回或读反 / mixed: some points stand, others are denied or misread"
        )
    coverage, n_tokens = claims.rubric_coverage(text, hits, question)
    if n_tokens >= claims.SALAD_MIN_TOKENS and coverage >= DOUBTFUL_COVERAGE:
        out.append(f"{coverage:.0%} 是题目与评分表的用词 / mostly the rubric's and question's words")
    if any(e["note"].startswith("关键词罗列") for e in evidence):
        out.append("关键词出现但没有解释 / concepts named without an explanation")
    return out


def _unit_hits(text: str, unit: dict) -> list[tuple[int, int]]:
    """Every span of the text that one of a criterion's (or option's) concepts matches (for the salad measure)."""
    return [
        m.span()
        for concept in unit["concepts"]
        for m in _concept_regex(tuple(concept["patterns"])).finditer(text)
    ]


def _crit(item: dict, cid: str) -> dict:
    return next(c for c in item["criteria"] if c["id"] == cid)


def _comment(
    item: dict,
    score: float,
    points: float,
    evidence: list[dict],
    scores: dict,
    deductions: list[str],
    flags: Sequence[str] = (),
    doubts: Sequence[str] = (),
) -> str:
    lines = [f"[静态审查 / static review] 建议得分 {_fmt(score)}/{_fmt(points)}"]
    lines += [f"⚠ 请核对 / check: {f}" for f in flags]
    lines += [f"? 置信度中等 / medium confidence: {d}" for d in doubts]
    for ev in evidence:
        crit = _crit(item, ev["criterion"])
        mark = "✓ 满足 / met" if ev["met"] else "✗ 未满足 / missed"
        head = f"{mark} {ev['criterion']} ({_fmt(scores[ev['criterion']])}/{_fmt(crit['points'])} 分)"
        quote = " ".join(ev["quote"].split())
        if ev["met"]:
            lines.append(f"{head}: 「{quote}」")
        else:
            lines.append(f"{head}: {ev['note']}" + (f"「{quote}」" if quote else ""))
    for d in item.get("deductions") or []:
        if str(d["reason"]) in deductions:
            missing = min(
                float(d.get("points", 0)),
                float(_crit(item, d["when_missing"])["points"]) - scores[d["when_missing"]],
            )
            part = (
                ""
                if missing == float(d.get("points", 0))
                else f"（部分满足，只扣 {_fmt(missing)} 分 / half met）"
            )
            lines.append(f"扣分 / deduction (-{_fmt(missing)}): {d['reason']}{part}")
    lines.append("请在 formgrader 中确认或修改 / confirm or change in formgrader")
    return "\n".join(lines)
