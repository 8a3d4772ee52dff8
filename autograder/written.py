"""Suggested scores for written answers (Q items), with quoted evidence, labelled "static review".

``suggest(answer, item)`` reads one written rubric item (as loaded from rubric.yaml) and returns a
:class:`WrittenSuggestion`: a suggested score, per-criterion evidence, the rubric deductions that apply
and a ready-to-paste comment for nbgrader's comment box. Nothing here is a final grade: the instructor
confirms or changes it in formgrader. Pure stdlib (plus the rubric dict the caller loaded with yaml).

How an answer is read
=====================

1. **Normalisation** (:func:`normalise`; evidence quotes are substrings of its output):

   * Unicode NFKC, so full-width characters become half-width (``，：；（）！？`` -> ``,:;()!?``,
     full-width letters/digits -> ASCII); unicode minus/en dash -> ``-``; ``×``/``⋅``/``∙`` -> ``·``.
   * The placeholder ``YOUR ANSWER HERE`` and HTML tags are removed (``<br>`` is a line break).
   * Markdown: bullets/numbered items, headings, block quotes and table rows start a new line (their
     markers are dropped); soft-wrapped lines of one paragraph are joined (as markdown renders them);
     ``**``/``__``/``*emphasis*``/backticks/``$``/links are unwrapped; ``a*b`` becomes ``a·b``.
   * LaTeX is flattened so formula concepts can be matched with plain regexes: display math
     (``$$..$$``, ``\\[..\\]``) is put on the line of the sentence that introduces it;
     ``\\text{x}``/``\\mathrm{x}``/... -> ``x``; ``\\times``/``\\cdot`` -> ``·``; ``\\min`` -> ``min``;
     ``\\frac{a}{b}`` -> ``a/b`` (parenthesised when needed); ``\\lambda`` -> ``λ``, ``\\Delta`` -> ``Δ``
     (any Greek letter by name); ``\\left(``/``\\right)`` -> ``(``/``)``; ``x_{ab}``/``x^{ab}`` ->
     ``x_ab``/``x^ab``; remaining braces dropped. E.g. ``$\\min(m, P-p) \\cdot M_{\\text{act}}$`` ->
     ``min(m, P-p) · M_act`` and ``\\lambda^{\\Delta t}`` -> ``λ^Δt``. Write rubric patterns against
     this form, allowing ``\\s*`` around operators.

2. **Sentences**: split after ``。 ! ? ;`` (full-width ones included via NFKC), after ``.`` followed by a
   space, a CJK character or the end, and at every line break left after normalisation (paragraphs,
   bullets, headings, table rows). A **passage** is one sentence or two adjacent sentences.

3. **Concepts**: each concept's patterns are joined into one regex, compiled with ``re.IGNORECASE |
   re.ASCII`` and searched in the normalised text. ``re.ASCII`` makes ``\\b \\w \\d`` ASCII-only, so an
   English word glued to Chinese ("的send是") still has word boundaries; match CJK with literal
   characters or ``\\S`` / ``[^,。]``, not ``\\w``. A criterion is *met* when every one of its concepts
   has a match inside one passage and that passage *explains*:

   * it contains a causal/conditional/comparative connective (因为 由于 导致 所以 因此 从而 使得 若 如果
     当 …时 则 才 而 就 直到 否则 通过 用 被 让 只能 无法 ... / because since so therefore causes leads
     to when if until while than which ... / ``→``) or a formula: a relation (``= ≈ ≤ ≥ ← ∝ < >``),
     or an expression (``min(``, ``a·b``, ``x^y``) stated as a value (为/是/等于/约/is/are/equals/of
     ...) — so a bare string of symbols such as ``激活 min(m,P-p) 34+5as/h`` does not count;
   * it is long enough: *size* >= 12, where size = CJK characters + 1.5 x Latin words/numbers (i.e. 12
     CJK characters or 8 English words);
   * it is not a keyword list. A sentence is *list-like* (and cannot be part of a passage that earns
     credit) if its comma/、/| separated segments (outside parentheses) are at least 3 and 75 % of them
     are "short" (size < 7); or it is a keyword dump: >= 3 spaces between CJK characters
     ("背压 阻塞 下游"), or >= 8 CJK characters without any Chinese function character
     (的 了 是 在 会 就 把 被 让 给 还 也 都 着 要 能 不 没 有 ...), or >= 6 English content words (3+
     letters) with fewer than 2 function words (the a is to of in it and ...); sentences with an
     equation are exempt from the keyword-dump tests. A two-sentence window also needs both
     sentences to have size >= 6.

   **Keyword rule**: a criterion whose concepts only occur in passages that do not explain earns 0 for
   that criterion (note "关键词罗列，缺少解释 / keywords without explanation"). Hence a bare keyword
   list (bullets, comma list, one word per line) gets 0 suggested points, below half of the item.

4. **Copied question text**: if the item has ``question:`` (or ``suggest(..., question=...)`` is given),
   every sentence is compared with it: units are CJK characters and lower-cased Latin words/numbers;
   a unit counts as copied when it lies in a run of >= 4 consecutive units whose every adjacent pair
   (unit bigram) also occurs in the question. A sentence with >= 60 % copied units (and >= 3 units) is
   an *echo*: it is ignored for matching and never part of a passage. So a pasted question earns 0 even
   though it contains keywords, while an answer that restates a phrase of the question is unaffected.

5. **Score** = sum of the points of the met criteria, capped at the item's points. Deductions listed in
   the rubric are reported when their ``when_missing`` criterion is not met; they coincide with the
   missing criterion's points and are not subtracted a second time. Empty and off-topic answers
   (no concepts) therefore get 0.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from autograder.results import STATIC_REVIEW, ItemResult

__all__ = ["WrittenSuggestion", "suggest", "normalise", "split_sentences", "validate_item"]

MIN_PASSAGE_SIZE = 12.0  # 12 CJK characters or 8 English words
MIN_WINDOW_SENTENCE_SIZE = 6.0
LIST_MIN_SEGMENTS = 3
LIST_SHORT_SEGMENT = 7.0
LIST_SHORT_SHARE = 0.75
ECHO_RUN = 4
ECHO_SHARE = 0.6
QUOTE_MAX = 200

# ---------------------------------------------------------------------------------------------------
# result type


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
        )


# ---------------------------------------------------------------------------------------------------
# normalisation

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK}]")
_UNIT_RE = re.compile(f"[{_CJK}]|[A-Za-z0-9]+")
_WORD_RE = re.compile(r"[A-Za-z0-9]+")

_CHAR_MAP = str.maketrans(
    {
        "\u2212": "-",  # minus sign
        "\u2013": "-",  # en dash
        "\u2010": "-",
        "\u2011": "-",
        "\u00d7": "·",  # ×
        "\u22c5": "·",  # ⋅
        "\u2219": "·",  # ∙
        "\u30fb": "·",  # ・
        "\u00a0": " ",
        "\u200b": "",
        "\ufeff": "",
    }
)

_PLACEHOLDER_RE = re.compile(r"YOUR ANSWER HERE", re.I)
_BR_RE = re.compile(r"<br\s*/?>", re.I)
_TAG_RE = re.compile(
    r"</?(?:p|div|span|b|i|u|em|strong|code|pre|sup|sub|font|ul|ol|li|h[1-6]|blockquote|table|tr|td|th)\b[^>]*>",
    re.I,
)
_FENCE_RE = re.compile(r"^\s*(```|~~~).*$", re.M)
_DISPLAY_MATH_RE = re.compile(r"\s*(?:\$\$(.+?)\$\$|\\\[(.+?)\\\])[ \t]*", re.S)

_BULLET_RE = re.compile(r"^\s*(?:[-*+•·]\s+|\d{1,3}[.)]\s+|\d{1,3}、\s*|\(\d{1,3}\)\s*|[①-⑳]\s*)")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s*")
_QUOTE_RE = re.compile(r"^\s*(?:>\s*)+")
_HR_RE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")

_LATEX_SPACING_RE = re.compile(r"\\(?:[,;:! ]|quad\b|qquad\b)|\\\\")
_LATEX_SIZING_RE = re.compile(
    r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![A-Za-z])\s*"
)
_LATEX_ESC_RE = re.compile(r"\\([_%&#$])")
_LATEX_TEXTARG_RE = re.compile(
    r"\\(?:text|textbf|textit|textrm|texttt|mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|"
    r"operatorname|boldsymbol|bm|emph|hat|bar|tilde|vec|overline|underline)\s*\{([^{}]*)\}"
)
_LATEX_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_SUBSUP_RE = re.compile(r"([_^])\s*\{([^{}]*)\}")
_LATEX_CMD_RE = re.compile(r"\\([A-Za-z]+) ?")
_LATEX_SYMBOLS = {
    "times": "·",
    "cdot": "·",
    "cdots": "...",
    "ldots": "...",
    "dots": "...",
    "leftarrow": "←",
    "gets": "←",
    "Leftarrow": "⇐",
    "rightarrow": "→",
    "to": "→",
    "Rightarrow": "⇒",
    "implies": "⇒",
    "approx": "≈",
    "sim": "~",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "neq": "≠",
    "ne": "≠",
    "in": "∈",
    "propto": "∝",
    "infty": "∞",
    "sum": "Σ",
    "prod": "Π",
    "nabla": "∇",
    "partial": "∂",
    "varepsilon": "ε",
    "epsilon": "ε",
    "vartheta": "θ",
    "varphi": "φ",
}

_LATEX_OPERATORS = set("·←⇐→⇒≈≤≥≠∈∝~")
_LATEX_STRUCTURAL = {
    "frac",
    "dfrac",
    "tfrac",
    "text",
    "textbf",
    "textit",
    "textrm",
    "texttt",
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "mathcal",
    "mathbb",
    "operatorname",
    "boldsymbol",
    "bm",
    "emph",
    "hat",
    "bar",
    "tilde",
    "vec",
    "overline",
    "underline",
}

_MULT_STAR_RE = re.compile(r"(?<=[\w)])\s*\*\s*(?=[\w(])")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*|(?<!\w)__(.+?)__(?!\w)")
_EM_RE = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])")
_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_SPACES_RE = re.compile(r"[ \t\f\v\u3000]+")
_CJK_SPACE_RE = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")


def _latex_command(m: re.Match) -> str:
    name = m.group(1)
    if name in _LATEX_STRUCTURAL:
        return m.group(0)  # handled by _LATEX_TEXTARG_RE / _LATEX_FRAC_RE once its arguments are flat
    if name in _LATEX_SYMBOLS:
        sym = _LATEX_SYMBOLS[name]
        return f" {sym} " if sym in _LATEX_OPERATORS else sym
    if name in ("lambda", "Lambda"):  # Unicode spells it LAMDA
        return "λ" if name == "lambda" else "Λ"
    case = "CAPITAL" if name[0].isupper() else "SMALL"
    try:
        return unicodedata.lookup(f"GREEK {case} LETTER {name.upper()}")
    except KeyError:
        pass
    # \min, \max, \log, \exp, \lim, unknown macros: keep the name as a word
    return name + (" " if m.group(0).endswith(" ") else "")


def _frac(m: re.Match) -> str:
    num, den = m.group(1).strip(), m.group(2).strip()
    if re.search(r"[+\-\s]", num):
        num = f"({num})"
    if re.search(r"[+\-·/\s]", den):
        den = f"({den})"
    return f"{num}/{den}"


def _subsup(m: re.Match) -> str:
    body = m.group(2).strip()
    if re.fullmatch(r"[\w\u0370-\u03ff]*|\([^()]*\)", body):
        return m.group(1) + body
    return f"{m.group(1)}({body})"


def _flatten_latex(text: str) -> str:
    if "\\" not in text and "{" not in text:
        return text
    text = _LATEX_ESC_RE.sub(r"\1", text)
    text = _LATEX_SPACING_RE.sub(" ", text)
    text = _LATEX_SIZING_RE.sub("", text)
    for _ in range(6):  # nested groups, innermost first
        new = _LATEX_TEXTARG_RE.sub(r"\1", text)
        new = _LATEX_CMD_RE.sub(_latex_command, new) if "\\" in new else new
        new = _LATEX_FRAC_RE.sub(_frac, new)
        new = _LATEX_SUBSUP_RE.sub(_subsup, new)
        if new == text:
            break
        text = new
    text = text.replace("\\", "")
    return text.replace("{", "").replace("}", "")


def _inline_markdown(text: str) -> str:
    text = _LINK_RE.sub(r"\1", text)
    text = _BOLD_RE.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = _EM_RE.sub(r"\1", text)
    text = _MULT_STAR_RE.sub("·", text)
    return text.replace("*", "").replace("`", "").replace("$", "")


def _join(prev: str, nxt: str) -> str:
    if not prev:
        return nxt
    if _CJK_RE.match(nxt[:1] or " ") and _CJK_RE.match(prev[-1:]):
        return prev + nxt
    return prev + " " + nxt


def normalise(text: str | None) -> str:
    """The canonical form of an answer that patterns are matched against (see the module docstring).

    Lines of the result are the hard breaks (paragraphs, bullets, headings, table rows, display math)."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text).translate(_CHAR_MAP)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _PLACEHOLDER_RE.sub("", text)
    text = _BR_RE.sub("\n", text)
    text = _TAG_RE.sub("", text)
    text = _FENCE_RE.sub("", text)
    text = _DISPLAY_MATH_RE.sub(lambda m: " $" + " ".join((m.group(1) or m.group(2)).split()) + "$\n\n", text)

    # block structure: one output line per paragraph / bullet / heading / table row
    out: list[str] = []
    current = ""
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or _HR_RE.match(line) or _TABLE_SEP_RE.match(line):
            if current:
                out.append(current)
            current = ""
            continue
        block_start = False
        for rx in (_HEADING_RE, _QUOTE_RE, _BULLET_RE):
            m = rx.match(line)
            if m:
                line = line[m.end() :].strip()
                block_start = True
        if "|" in line:  # table row: every cell is its own line
            cells = [c.strip() for c in line.strip("|").split("|")]
            if current:
                out.append(current)
            out.extend(c for c in cells if c)
            current = ""
            continue
        if block_start:
            if current:
                out.append(current)
            current = line
        else:
            current = _join(current, line)
    if current:
        out.append(current)

    lines = []
    for line in out:
        line = _inline_markdown(_flatten_latex(line))
        line = _SPACES_RE.sub(" ", line).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# sentences and their features

_SENT_END_RE = re.compile(
    r"[。!?;]+[\"'”’)\]」』]*"
    r"|(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)(?<!\bFig)\.(?=\s|$|[" + _CJK + "])"
    r"|\n"
)
_CONNECTIVE_RE = re.compile(
    r"因为|由于|导致|所以|因此|因而|从而|使得|致使|以致|以至于|造成|引起|于是|进而|若|如果|假如|假设|一旦|只要|只有|除非"
    r"|当(?!前)|(?<![规原准法])则|才|而|直到|否则|意味着|取决于|受限于|相比|比起|大于|小于|高于|低于|超过|越.{1,10}越"
    r"|为了|以便|以免|防止|避免|通过|随着?|只能|无法|不得不|(?<![使作费利])用|被|让|(?<!成)就(?!是)"
    r"|(?<![同及实准按暂])时(?![钟间序刻延候])|→|⇒|->"
    r"|\b(?:because|since|so|therefore|thus|hence|consequently|causes?|caused|causing|leads?\s+to|led\s+to"
    r"|results?\s+in|resulting|due\s+to|when|whenever|if|unless|until|while|whereas|than|otherwise|means"
    r"|which|thereby|in\s+turn|as\s+a\s+result"
    r"|forc(?:e|es|ed|ing)|makes?|prevents?|avoids?|in\s+order\s+to|before|after|once|as\s+long\s+as|by)\b",
    re.I | re.A,
)
_RELATION_RE = re.compile(r"[=≈≤≥∝←<>]")
_EXPRESSION_RE = re.compile(r"\b(?:min|max)\s*\(|[\w)]\s*·\s*[\w(]|\^", re.I | re.A)
_COPULA_RE = re.compile(r"为|是|等于|约|达到|\b(?:is|are|equals?|becomes?|of|reaches)\b", re.I | re.A)
_PARENS_RE = re.compile(r"\([^()]*\)")
_LIST_SEP_RE = re.compile(r"[,、|]")
_ALPHA_RE = re.compile(r"\b(?:[A-Za-z]{3,}|a|an|as|at|be|by|in|is|it|no|of|on|or|to|we)\b", re.A)
_CJK_GAP_RE = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")
# function characters / words that real prose practically always has and a keyword dump lacks
_ZH_FUNCTION_RE = re.compile("[的了是在会就把被让给还也都着要能不没有这那它其一可很再又]")
_EN_FUNCTION = frozenset(
    "the a an is are was were be been to of in on at it its this that these for from with as by and or "
    "not no has have had their there they we you can will would must may which into than".split()
)


def _is_formula(text: str) -> bool:
    """An equation, or an expression stated as the value of something ("峰值为 min(m, P-p)·M")."""
    if _RELATION_RE.search(text):
        return True
    return bool(_EXPRESSION_RE.search(text) and _COPULA_RE.search(text))


def _size(text: str) -> float:
    return len(_CJK_RE.findall(text)) + 1.5 * len(_WORD_RE.findall(text))


def _is_list_like(text: str) -> bool:
    """A keyword list or keyword dump rather than a sentence (see the module docstring, rule 3)."""
    if not _RELATION_RE.search(text):  # keyword dumps (an equation is not one)
        if len(_CJK_GAP_RE.findall(text)) >= 3:  # "背压 阻塞 下游 因为 上游"
            return True
        n_cjk = len(_CJK_RE.findall(text))
        if n_cjk >= 8 and not _ZH_FUNCTION_RE.search(text):  # "背压阻塞发送下游因为上游饥饿"
            return True
        words = [w.lower() for w in _ALPHA_RE.findall(text)]
        n_function = sum(w in _EN_FUNCTION for w in words)
        if n_cjk < 4 and len(words) - n_function >= 6 and n_function < 2:
            return True  # "backpressure blocking send downstream because upstream starvation"
    for _ in range(3):
        text = _PARENS_RE.sub(" ", text)
    segments = [s for s in _LIST_SEP_RE.split(text) if s.strip()]
    if len(segments) < LIST_MIN_SEGMENTS:
        return False
    short = sum(1 for s in segments if _size(s) < LIST_SHORT_SEGMENT)
    return short >= LIST_SHORT_SHARE * len(segments)


@dataclass
class _Sentence:
    start: int
    end: int
    size: float
    connective: bool
    formula: bool
    list_like: bool
    echo: bool = False


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences of a *normalised* text, whitespace trimmed."""
    spans = []
    pos = 0
    for m in _SENT_END_RE.finditer(text):
        end = m.end() if m.group() != "\n" else m.start()
        spans.append((pos, end))
        pos = m.end()
    spans.append((pos, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s and _UNIT_RE.search(text, s, e):
            out.append((s, e))
    return out


@lru_cache(maxsize=64)
def _question_bigrams(question: str) -> frozenset:
    units = [u.lower() for u in _UNIT_RE.findall(normalise(question))]
    return frozenset(zip(units, units[1:], strict=False))


def _echo_share(sentence: str, qgrams: frozenset) -> float:
    units = [u.lower() for u in _UNIT_RE.findall(sentence)]
    if len(units) < 3:
        return 0.0
    copied = [False] * len(units)
    run_start = None
    for i in range(len(units)):
        linked = i + 1 < len(units) and (units[i], units[i + 1]) in qgrams
        if linked and run_start is None:
            run_start = i
        if not linked and run_start is not None:
            if i - run_start + 1 >= ECHO_RUN:
                for k in range(run_start, i + 1):
                    copied[k] = True
            run_start = None
    return sum(copied) / len(units)


def _sentences(text: str, question: str | None) -> list[_Sentence]:
    qgrams = _question_bigrams(question) if question else frozenset()
    out = []
    for s, e in split_sentences(text):
        chunk = text[s:e]
        out.append(
            _Sentence(
                start=s,
                end=e,
                size=_size(chunk),
                connective=bool(_CONNECTIVE_RE.search(chunk)),
                formula=_is_formula(chunk),
                list_like=_is_list_like(chunk),
                echo=bool(qgrams) and _echo_share(chunk, qgrams) >= ECHO_SHARE,
            )
        )
    return out


# ---------------------------------------------------------------------------------------------------
# rubric item


@lru_cache(maxsize=512)
def _concept_regex(patterns: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I | re.A)


def validate_item(item: dict) -> None:
    """Raise ``ValueError`` if a written rubric item is malformed (missing fields, bad regex, a deduction
    naming an unknown criterion)."""
    iid = item.get("id", "?")
    if item.get("kind", "written") != "written":
        raise ValueError(f"item {iid}: not a written item")
    if not isinstance(item.get("points"), int | float) or item["points"] <= 0:
        raise ValueError(f"item {iid}: points must be a positive number")
    criteria = item.get("criteria") or []
    if not criteria:
        raise ValueError(f"item {iid}: no criteria")
    ids = set()
    for c in criteria:
        cid = c.get("id")
        if not cid or cid in ids:
            raise ValueError(f"item {iid}: criterion without id or duplicate id {cid!r}")
        ids.add(cid)
        if not isinstance(c.get("points"), int | float) or c["points"] < 0:
            raise ValueError(f"item {iid}/{cid}: points must be a non-negative number")
        if not c.get("concepts"):
            raise ValueError(f"item {iid}/{cid}: no concepts")
        for concept in c["concepts"]:
            pats = concept.get("patterns") or []
            if not concept.get("name") or not pats:
                raise ValueError(f"item {iid}/{cid}: a concept needs a name and patterns")
            for p in pats:
                try:
                    re.compile(p)
                except re.error as exc:
                    raise ValueError(f"item {iid}/{cid}/{concept['name']}: bad regex {p!r}: {exc}") from None
    for d in item.get("deductions") or []:
        if d.get("when_missing") not in ids:
            raise ValueError(f"item {iid}: deduction names unknown criterion {d.get('when_missing')!r}")


# ---------------------------------------------------------------------------------------------------
# scoring


def _fmt(x: float) -> str:
    return f"{round(float(x), 2):g}"


_CLAUSE_END_RE = re.compile(r"[,;:、。!?]\s*|\.\s+|\n")


def _trim_quote(text: str, start: int, end: int, hits: list[tuple[int, int]]) -> str:
    """A substring of ``text[start:end]`` of at most QUOTE_MAX chars covering the concept hits, cut at
    clause boundaries (``, ; : 、``) where possible and at a space otherwise."""
    if end - start <= QUOTE_MAX:
        return text[start:end].strip()
    cuts = sorted({start, end, *(m.end() for m in _CLAUSE_END_RE.finditer(text, start, end))})
    lo = min(h[0] for h in hits)
    hi = max(h[1] for h in hits)
    i = max(k for k, c in enumerate(cuts) if c <= lo)
    j = min(k for k, c in enumerate(cuts) if c >= hi)
    if cuts[j] - cuts[i] > QUOTE_MAX:  # the covering clauses are too long: cut at a space after lo
        a = cuts[i] if lo - cuts[i] < QUOTE_MAX // 4 else lo
        b = a + QUOTE_MAX
        space = text.rfind(" ", a + QUOTE_MAX // 2, b)
        return text[a : space if space > 0 else b].strip()
    while True:  # widen clause by clause, right first, while it fits
        if j + 1 < len(cuts) and cuts[j + 1] - cuts[i] <= QUOTE_MAX:
            j += 1
        elif i > 0 and cuts[j] - cuts[i - 1] <= QUOTE_MAX:
            i -= 1
        else:
            break
    return text[cuts[i] : cuts[j]].strip()


def suggest(answer: str | None, item: dict, *, question: str | None = None) -> WrittenSuggestion:
    """Suggested score for ``answer`` under the written rubric ``item`` (a dict from rubric.yaml).

    ``question`` overrides ``item["question"]`` (the question text, whose copies earn nothing)."""
    validate_item(item)
    points = float(item["points"])
    question = question if question is not None else item.get("question")
    text = normalise(answer)
    sents = _sentences(text, question)
    live = [s for s in sents if not s.echo]

    # passages: (first sentence, last sentence, explains, rank) — singles first, then two-sentence windows
    passages: list[tuple[int, int, bool, int]] = []
    for i, s in enumerate(sents):
        if not s.echo:
            ok = (s.connective or s.formula) and s.size >= MIN_PASSAGE_SIZE and not s.list_like
            passages.append((i, i, ok, 0))
    for i, (a, b) in enumerate(zip(sents, sents[1:], strict=False)):
        if a.echo or b.echo:
            continue
        ok = (
            (a.connective or b.connective or a.formula or b.formula)
            and a.size + b.size >= MIN_PASSAGE_SIZE
            and min(a.size, b.size) >= MIN_WINDOW_SENTENCE_SIZE
            and not (a.list_like or b.list_like)
        )
        passages.append((i, i + 1, ok, 1))

    starts = [s.start for s in sents]

    def sentence_of(span: tuple[int, int]) -> int | None:
        k = bisect_right(starts, span[0]) - 1
        return k if k >= 0 and span[1] <= sents[k].end else None

    # every concept's matches, by sentence: per criterion [(name, {sentence index: first span})]
    hits_by_crit = []
    for crit in item["criteria"]:
        row = []
        for concept in crit["concepts"]:
            where: dict[int, tuple[int, int]] = {}
            for m in _concept_regex(tuple(concept["patterns"])).finditer(text):
                k = sentence_of(m.span()) if m.end() > m.start() else None
                if k is not None:
                    where.setdefault(k, m.span())
            row.append((concept["name"], where))
        hits_by_crit.append(row)
    off_topic = not any(not sents[k].echo for row in hits_by_crit for _n, where in row for k in where)

    evidence: list[dict] = []
    met_ids: set[str] = set()
    score = 0.0
    for crit, concept_hits in zip(item["criteria"], hits_by_crit, strict=True):
        cid = crit["id"]
        best = None  # (rank, length, start, end, hits)
        unexplained = None
        for i, j, ok, rank in passages:
            hits = []
            for _name, where in concept_hits:
                sp = where.get(i) or where.get(j)
                if sp is None:
                    break
                hits.append(sp)
            else:
                start, end = sents[i].start, sents[j].end
                key = (rank, end - start, start, end, hits)
                if ok:
                    if best is None or key[:2] < best[:2]:
                        best = key
                elif unexplained is None or key[:2] < unexplained[:2]:
                    unexplained = key

        if best is not None:
            _, _, start, end, hits = best
            met_ids.add(cid)
            score += float(crit["points"])
            names = "、".join(n for n, _ in concept_hits)
            evidence.append(
                {
                    "criterion": cid,
                    "met": True,
                    "quote": _trim_quote(text, start, end, hits),
                    "note": f"满足：{names} 在同一段中有解释 / met: concepts explained together",
                }
            )
            continue

        if not text:
            note = "空白作答 / empty answer"
        elif not live:
            note = "仅复述题目，没有作答 / only the question copied, no answer"
        elif unexplained is not None:
            note = "关键词罗列，缺少解释 / keywords without explanation"
        elif off_topic:
            note = "未涉及本题要点（离题？） / none of the rubric concepts found (off-topic?)"
        else:
            missing = [n for n, where in concept_hits if all(sents[k].echo for k in where)]
            echoed = [n for n, where in concept_hits if n in missing and where]
            if missing:
                tag = "（仅见于照抄题目处 / only where the question is copied）"
                note = "缺少概念 / missing concept: " + "、".join(
                    n + (tag if n in echoed else "") for n in missing
                )
            else:
                note = "概念分散在不同段落，未建立联系 / concepts only in separate passages, not connected"
        evidence.append({"criterion": cid, "met": False, "quote": "", "note": note})

    score = round(min(score, points), 4)
    deductions = [
        str(d["reason"]) for d in item.get("deductions") or [] if d.get("when_missing") not in met_ids
    ]
    comment = _comment(item, score, points, evidence, deductions)
    return WrittenSuggestion(
        item_id=str(item["id"]),
        points=points,
        score=score,
        evidence=evidence,
        deductions_applied=deductions,
        comment=comment,
    )


def _comment(item: dict, score: float, points: float, evidence: list[dict], deductions: list[str]) -> str:
    crit_points = {c["id"]: c["points"] for c in item["criteria"]}
    lines = [f"[静态审查 / static review] 建议得分 {_fmt(score)}/{_fmt(points)}"]
    for ev in evidence:
        mark = "✓ 满足 / met" if ev["met"] else "✗ 未满足 / missed"
        head = f"{mark} {ev['criterion']} ({_fmt(crit_points[ev['criterion']])} 分)"
        if ev["met"]:
            lines.append(f"{head}: 「{' '.join(ev['quote'].split())}」")
        else:
            lines.append(f"{head}: {ev['note']}")
    by_reason = {str(d["reason"]): d.get("points", 0) for d in item.get("deductions") or []}
    for reason in deductions:
        lines.append(f"扣分 / deduction (-{_fmt(by_reason.get(reason, 0))}): {reason}")
    lines.append("请在 formgrader 中确认或修改 / confirm or change in formgrader")
    return "\n".join(lines)
