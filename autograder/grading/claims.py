"""Whether a sentence *claims* what a criterion says: negation scoped to the claim, retractions and
counter-claims, misreadings, and keyword salad (the rule language: autograder/grading/written.py's
module docstring, "How an answer is read", steps 3-6).

Nothing here knows a lesson: what counts as a misreading of a criterion is rubric data
(``misreadings:``); the cues below are language, not course content.
"""

from __future__ import annotations

import re

CLAUSE_END = ",;:。!?，；：\n"
_NEG_BEFORE_RE = re.compile(
    r"(?:并不|并非|不是|不会|不能|不需要|不需|不必|无需|无须|不用|不存在|没有|没|从不|从来不|从未|绝不|毫无|永远不|而非"
    r"|\b(?:not|never|no|cannot|without|neither|nor|none)\b|n't\b)(?:[^\s,;:。，；：]{0,6}|(?:\s+[\w-]+){1,3})?\s*$"
    r"|(?<![不无])[不无]$",
    re.I | re.A,
)
_NEG_EXEMPT_RE = re.compile(
    r"(?:不能|不会|没有|cannot|can't|not)\s*(?:靠|通过|仅|只|just|only|simply|merely)", re.I
)
_NEG_AFTER_RE = re.compile(
    r"^[^。;\n]{0,16}?(?:无关|没有关系|没关系|不是问题|不成问题|可以忽略|忽略不计|不会带来任何问题|没有\S{0,3}影响|不是原因|不起作用|保持不变|并不存在)"
    r"|^[^,;.]{0,30}?\b(?:nothing to do with|plays? no role|(?:is|are) not (?:an? )?(?:issue|problem|cause|reason)"
    r"|(?:is|are) never the (?:reason|cause)|irrelevant|negligible|can be ignored|not needed|not required"
    r"|stays? the same|does ?n[o']t change|just noise)",
    re.I,
)
# "与 m 无关" / "independent of m": independence of a variable is a relation the answer states, not a
# dismissal of the hit before it
_INDEPENDENT_OF_VARIABLE_RE = re.compile(
    r"^\S{0,4}?(?:与|和|跟|同)\s*[A-Za-z][\w_]{0,2}\s*(?:都)?无关|^\s*(?:is\s+)?independent of [A-Za-z]\b",
    re.A,
)
# a negation scoped to one named example ("在 [30,10,10,20] 里没有背压", "no backpressure in [30,10,10,20]")
_EXAMPLE_RE = re.compile(r"\[\s*\d+(?:\s*,\s*\d+)+\s*\]")
# a negated hit followed by a contrast with another subject ("静态调度没有决策开销，而动态调度…") states
# the relation; "not A but B" (而是/but rather/instead) does not
_CONTRAST_AFTER_RE = re.compile(r"[,，]\s*而(?![是且非])|\bwhereas\b|\bunlike\b", re.I)


def negated(text: str, start: int, end: int, floor: int = 0) -> bool:
    """A negation cue just before the hit (same clause, after ``floor``) or a dismissal just after it."""
    left = start
    while left > floor and text[left - 1] not in CLAUSE_END and start - left < 24:
        left -= 1
    before = text[left:start]
    if _NEG_BEFORE_RE.search(before) and not _NEG_EXEMPT_RE.search(before):
        return True
    right = end
    while right < len(text) and text[right] not in ".。;；\n" and right - end < 40:
        right += 1
    after = text[end:right]
    return bool(_NEG_AFTER_RE.search(after)) and not _INDEPENDENT_OF_VARIABLE_RE.search(after)


# a misreading the sentence itself rejects ("用方差衡量也不对", "utilisation is misleading")
_REJECTED_AFTER_RE = re.compile(
    r"^[^。.;\n]{0,20}?(?:不对|不行|是错的|错了|错误|不可靠|误导|骗人|靠不住|看不出)"
    r"|^[^.;\n]{0,30}?\b(?:is|are) (?:wrong|misleading|unreliable|not enough)",
    re.I,
)


def rejected(text: str, start: int, end: int) -> bool:
    """The claim is negated, or the sentence rejects it right after it."""
    return negated(text, start, end) or bool(_REJECTED_AFTER_RE.search(text[end : end + 40]))


def scoped_to_example(text: str, sent_start: int, start: int, end: int) -> bool:
    """The negation is about one named example, not the mechanism: an example such as ``[30,10,10,20]``
    stands right before the hit (no sentence break between) or right after it."""
    before = text[max(sent_start, start - 40) : start]
    return bool(
        _EXAMPLE_RE.search(before) or _EXAMPLE_RE.match(text[end : end + 30].lstrip(" inforat在里中"))
    )


def contrast_follows(text: str, end: int, sent_end: int) -> bool:
    return bool(_CONTRAST_AFTER_RE.search(text, end, sent_end))


RETRACTION_STRONG_RE = re.compile(
    r"scratch that|take (?:that|it) back|on second thought|(?:that|this) (?:is|was) wrong|收回|说错了", re.I
)
RETRACTION_RE = re.compile(
    RETRACTION_STRONG_RE.pattern
    + r"|(?:does ?n[o']t|does not|wo ?n't|will not) (?:really |actually )?matter|(?:is|are) irrelevant here"
    r"|其实不|其实并不|其实没|其实只是|实际上\S{0,12}?(?:不|没|就够)|不算|无所谓|不重要|没必要"
    r"|(?:is|was) (?:only|just) an approximation|only approximate",
    re.I,
)


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence (up to 。!?;. or a line break) around ``text[start:end]``."""
    a = max(text.rfind(c, 0, start) for c in "。!?;\n") + 1
    stops = [i for i in (text.find(c, end) for c in "。!?;\n") if i >= 0]
    return a, (min(stops) + 1 if stops else len(text))


# -- salad ----------------------------------------------------------------------------------------------

_CJK_CHAR_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
_TOKEN_RE = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)?|[\u3400-\u4dbf\u4e00-\u9fff]")
# the connectives and function characters a salad strings the rubric's words together with
_GLUE_RE = re.compile(
    r"因为|所以|导致|当|时|则|而|就|的|了|是|在|会|和|与|及|也|都|上|下|中|一|个|被|把|让|使"
    r"|\b(?:because|so|therefore|causes?|leads?|to|when|if|the|a|an|is|are|of|and|then|which|in|on)\b",
    re.I,
)
#: a salad: at least this share of the answer's tokens are the rubric's own words or mere glue
SALAD_COVERAGE = 0.82
SALAD_MIN_TOKENS = 12


def rubric_coverage(text: str, spans: list[tuple[int, int]]) -> tuple[float, int]:
    """(share of the answer's tokens covered by the rubric's concept hits or glue words, token count)."""
    covered = bytearray(len(text))
    for a, b in spans:
        covered[a:b] = b"\x01" * (b - a)
    for m in _GLUE_RE.finditer(text):
        covered[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    tokens = list(_TOKEN_RE.finditer(text))
    if not tokens:
        return 0.0, 0
    return sum(any(covered[m.start() : m.end()]) for m in tokens) / len(tokens), len(tokens)
