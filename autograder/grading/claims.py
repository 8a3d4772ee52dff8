"""Whether a sentence *claims* what a criterion says: negation scoped to the claim, retractions and
counter-claims, misreadings, and keyword salad (the rule language: autograder/grading/written.py's
module docstring, "How an answer is read", steps 3-6).

Nothing here knows a lesson: what counts as a misreading of a criterion is rubric data
(``misreadings:``); the cues below are language, not course content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK}]")
_WORD_RE = re.compile(r"[A-Za-z0-9]+")
QUOTE_MAX = 200

CLAUSE_END = ",;:。!?，；：\n"
_NEG_BEFORE_RE = re.compile(
    r"(?:并不|并非|不是|不会|不能|不需要|不需|不必|(?<!要)不要(?!了)|无需|无须|不用|不存在|没有|没|从不|从来不|从未|绝不|毫无|永远不|而非"
    r"|\b(?:not|never|no|cannot|without|neither|nor|none)\b|n't\b)(?:[^\s,;:。，；：]{0,6}|(?:\s+[\w-]+){1,3})?\s*$"
    r"|(?<![不无])[不无]$",
    re.I | re.A,
)
_NEG_EXEMPT_RE = re.compile(
    r"(?:不能|不会|没有|cannot|can't|not)\s*(?:靠|通过|仅|只|just|only|simply|merely)"
    # a negated condition, not a negated claim: "没有缓冲区时等待…", "没 buffer 的话…"
    r"|(?:没有|没|无)[^\s,;:。，；：]{1,8}\s*(?:[A-Za-z]+\s*)?(?:时|的时候|的话|之前)"
    r"|\bno [a-z]+(?: [a-z]+)? means\b"
    # a consequence under a condition ("缓冲无限大就不会阻塞"), a relative clause ("没超过的按 λ^Δt 缩小"),
    # and a denied guarantee ("没有理论能保证 λ 取多少", "cannot guarantee"): none denies the claim
    r"|(?:就|则|便)\s*(?:不会|不用|不必|无需|不需要|没有)|(?:没有|没|无)[^\s,;:。，；：]{1,8}(?:就|则|便)\s*$|(?:没有?|未|不)(?:超过|超出|达到|过期|满)\S{0,3}的"
    r"|(?:没有|无|不能|无法|不一定能?)\S{0,4}保证|(?:cannot|can't|not|no) (?:be )?guarantee"
    # a consequence of a setting ("B=∞ 时没有阻塞", "缓冲足够大的时候不会卡住")
    r"|(?:[=≥>]\s*[\w∞.]{1,4}|∞|无穷大?|无限大?|足够大?|够大|很大)\s*(?:时|的时候|的话)"
    r"|(?:unbounded|infinite|unlimited|large|big|bigger|larger|enough|无限大?|无穷大?|足够大?|够大)\s*(?:buffers?|slots?|缓冲区?|槽位)?"
    r"\s*(?:=|→|->|means|gives)\s*\S{0,3}\s*$"
    # a negated cause before its consequence ("接收方还没准备好而阻塞") and a bound ("不会多于 P−p 个")
    r"|(?:没|不|未)\S{0,8}(?:而|才|因而|导致|造成|所以)\s*$|(?:不会|不能|不|没有)\s*(?:多于|超过|大于|高于)\s*$"
    r"|\b(?:no|not) (?:more|greater|larger) than\s*$",
    re.I,
)
# a bare setting as the clause before ("buffer 大，producer 不阻塞"): the negation is its consequence
_SETTING_CLAUSE_RE = re.compile(
    r"\s*(?:buffer|缓冲区?|槽位|slots?|B)\s*(?:[=≥>]\s*[\w∞.]{1,4}|(?:够|足够|很|无限|无穷)?大了?|够了?|足够|充足)\s*$",
    re.I,
)
_NEG_AFTER_RE = re.compile(
    r"^[^。;\n]{0,16}?(?:无关|没有关系|没关系|不是问题|不成问题|可以忽略|忽略不计|不会带来任何问题|没有\S{0,3}影响|不是原因|不起作用|保持不变|并不存在|不成立)"
    r"|^[^,;.]{0,30}?\b(?:nothing to do with|plays? no role|(?:is|are) not (?:an? )?(?:issue|problem|cause|reason)"
    r"|(?:is|are) never the (?:reason|cause)|irrelevant|negligible|can be ignored|not needed|not required"
    r"|stays? the same|does ?n[o']t change|just noise)",
    re.I,
)
# "与 m 无关" / "independent of m": independence of a variable is a relation the answer states, not a
# dismissal of the hit before it
_INDEPENDENT_OF_VARIABLE_RE = re.compile(
    r"^[^。;\n]{0,16}?(?:与|和|跟|同)\s*[A-Za-z][\w_]{0,2}\s*(?:都)?无关|^\s*(?:is\s+)?independent of [A-Za-z]\b",
    re.A,
)
# a negation scoped to one named example ("在 [30,10,10,20] 里没有背压", "no backpressure in [30,10,10,20]",
# "no backpressure at all in this profile", "这条流水线里没有背压")
_EXAMPLE_RE = re.compile(r"\[\s*\d+(?:\s*,\s*\d+)+\s*\]")
_THIS_EXAMPLE_RE = re.compile(
    r"^(?:\s*at all)?\s*(?:in|for) (?:this|that|the first|the second) (?:profile|pipeline|case|example)"
    r"|^\S{0,2}(?:在|于)?这(?:条|种|个)(?:流水线|情况|例子)",
    re.I,
)
# a negated hit followed by a contrast with another subject ("静态调度没有决策开销，而动态调度…") states
# the relation; "not A but B" (而是/but rather/instead) does not
_CONTRAST_AFTER_RE = re.compile(r"[,，]\s*而(?![是且非])|\bwhereas\b|\bunlike\b", re.I)


_CONDITION_START_RE = re.compile(
    r"\s*(?:with(?:out)?|if|when|once|given|as long as|unless|如果|若|假如|假设|当|只要|一旦|有了?(?=\S{1,8}(?:时|就|的话)))",
    re.I,
)


def negated(text: str, start: int, end: int, floor: int = 0) -> bool:
    """A negation cue just before the hit (same clause, after ``floor``) or a dismissal just after it."""
    left = start
    while left > floor and text[left - 1] not in CLAUSE_END and start - left < 24:
        left -= 1
    before = text[left:start]
    if _NEG_BEFORE_RE.search(before) and not _NEG_EXEMPT_RE.search(before):
        clause = left
        while clause > floor and text[clause - 1] not in CLAUSE_END and start - clause < 120:
            if text[clause - 2 : clause] == ". ":
                break
            clause -= 1
        # "With an unbounded buffer there is no blocking", "如果槽位够，send 不会阻塞": a conditional claim
        if _CONDITION_START_RE.match(text, clause):
            return False
        setting = clause - 1
        while 0 < setting and text[setting - 1] not in CLAUSE_END and clause - setting < 16:
            setting -= 1
        return not (
            clause and text[clause - 1] == "," and _SETTING_CLAUSE_RE.fullmatch(text, setting, clause - 1)
        )
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
    stands right before the hit (no sentence break between) or right after it, heads its line or the
    line before ("[30,10,10,20]：" then "… → 没有背压"), or is the only example of the hit's paragraph,
    named before it."""
    before = text[max(sent_start, start - 40) : start]
    after = text[end : end + 30]
    line_start = text.rfind("\n", 0, start) + 1
    previous = text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 : max(line_start - 1, 0)]
    # a paragraph about one named example ("先看 [30,10,10,20]。… 所以不会有人卡在发送上。"): its first and
    # only example stands before the hit, and no other example follows in the paragraph
    line_end = text.find("\n", end) % (len(text) + 1)
    named = {re.sub(r"\s", "", m.group()) for m in _EXAMPLE_RE.finditer(text, line_start, line_end)}
    return bool(
        (len(named) == 1 and _EXAMPLE_RE.search(text, line_start, start))
        or _EXAMPLE_RE.match(text, line_start)
        or re.fullmatch(r"\s*\[\s*\d+(?:\s*,\s*\d+)+\s*\]\s*[:：]?\s*", previous)
        or _EXAMPLE_RE.search(before)
        or _EXAMPLE_RE.match(after.lstrip(" inforat在里中"))
        or _THIS_EXAMPLE_RE.match(after)
        or re.search(r"这(?:条|种|个)\s*(?:流水线|pipeline|情况|例子|配置)", before)
    )


def contrast_follows(text: str, end: int, sent_end: int) -> bool:
    return bool(_CONTRAST_AFTER_RE.search(text, end, sent_end))


_BUT_RATHER_RE = re.compile(r"而是|\bbut rather\b|\binstead\b", re.I)


def corrected_after(text: str, end: int, sent_end: int) -> bool:
    """The negated hit is the "not A" of "not A but B" ("不是 P−p 个，而是 min(m, P−p) 个"): A is neither
    claimed nor denied there; what B says is read on its own (a wrong B is the rubric's misreading)."""
    return bool(_BUT_RATHER_RE.search(text, end, sent_end))


RETRACTION_STRONG_RE = re.compile(
    r"scratch that|take (?:that|it) back|on second thought|(?:that|this) (?:is|was) wrong|收回|说错了|再想想|转念一想"
    r"|更正一下|纠正一下|\bcorrection:"
    # a correction of what came before: "我前面对 [30,10,10,20] 的分析错了", "I was wrong above"
    r"|(?:前面|上面|之前|刚才)[^。\n]{0,24}?(?:错了|不对)|\bI was wrong\b"
    # a change of mind that ends in another design: "更正：…", "最终方案改为…", "最后决定…"
    r"|更正[:：]|(?:最终|最后)的?(?:方案|设计|做法)?(?:还是)?(?:改为|改成|决定)",
    re.I,
)
RETRACTION_RE = re.compile(
    RETRACTION_STRONG_RE.pattern
    + r"|(?:does ?n[o']t|does not|wo ?n't|will not) (?:really |actually )?matter|(?:is|are) irrelevant here"
    r"|其实(?:都|也)?不|其实并不|其实没|其实只是|实际上\S{0,12}?(?:不|没|就够)|不算|无所谓|不重要|没有?必要|(?:是|都是)多余的?"
    r"|问题不在|站不住|历史包袱|只在理想|只在理论上|只是理论上|only (?:holds )?in theory|only in the ideal|(?:主要|只|不过)是\S{0,2}测量误差|(?:is|was) (?:just|mostly|only) (?:a )?measurement (?:error|noise)"
    r"|(?:is|are) (?:all )?(?:unnecessary|superfluous|overkill)"
    r"|(?:is|was) (?:only|just) an approximation|only approximate"
    # a later change of mind, read after the point it follows: "后来觉得…", "回头想…", "in the end …"
    r"|后来(?:我)?(?:觉得|想想|发现)|回头(?:再)?想|(?:^|(?<=[。!?\n]))\s*等等\s*[,!:]|我?改一下\s*[,:]|(?<![没不])(?:想|写|记|算)错了|\bon (?:reflection|second thoughts?)\b|\bin the end\b"
    r"|\bbottom line\b|\bafter (?:looking|checking)\b[^.;\n]{0,24}\bagain\b|^\s*EDIT\s*[:：]"
    # the measures dismissed after they were proposed: "不需要任何稳定化措施", "not really needed"
    r"|\bnot really (?:needed|necessary)\b|不需要任何(?:的)?(?:稳定化?|措施|处理|修正)|(?:这些|那些)(?:措施|方法|处理|修正)\S{0,4}(?:都|也)?(?:不需要|用不上|没必要)",
    re.I,
)


# -- explanatory structure: a sentence, not a keyword list ---------------------------------------------

_LIST_SEP_RE = re.compile(r"[,、|]")
_CJK_GAP_RE = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")
_ZH_FUNCTION_RE = re.compile(
    "[的了是在会就把被让给还也都着要能不没有这那它其一可很再又对于按以从与和及但或将使]|(?<![同及实准按暂])时(?![钟间序刻延候])"
)
_EN_FUNCTION = frozenset(
    "the a an is are was were be been to of in on at it its this that these for from with as by and or "
    "not no has have had their there they we you can will would must may which into than".split()
)


def size(text: str) -> float:
    """12 = 12 CJK characters or 8 English words."""
    return len(_CJK_RE.findall(text)) + 1.5 * len(_WORD_RE.findall(text))


_CLAUSE_CHAR_RE = re.compile("[我你它他就才按把被让会能要并再又不没写读存放跑]")
_RELATION_RE = re.compile(r"[=≈≤≥∝←→^]|[\w)]\s*·\s*[\w(]")


#: the share of space-separated segments that must be clauses for the spaces to stand for commas
SPACED_CLAUSES = 0.5


def _spaces_for_commas(text: str) -> bool:
    """Clauses separated by spaces instead of punctuation ("视觉来一帧就覆盖写 控制每拍读最新的 不等新帧 所以不丢帧"):
    at least half the space-separated segments are long or read as clauses, unlike a dump of keywords."""
    segments = [s for s in re.split(f"{_CJK_GAP_RE.pattern}|{_LIST_SEP_RE.pattern}", text) if s.strip()]
    clauses = sum(size(s) >= 7 or bool(_CLAUSE_CHAR_RE.search(s) or _RELATION_RE.search(s)) for s in segments)
    return clauses >= SPACED_CLAUSES * len(segments)


def is_list_like(text: str) -> bool:
    """A keyword list or dump rather than a sentence: short comma-separated segments, spaces between
    CJK words, CJK without function characters, or English content words without function words."""
    if not re.search(r"[=≈≤≥←→^]", text):
        if len(_CJK_GAP_RE.findall(text)) >= 3 and not _spaces_for_commas(text):
            return True
        n_cjk = len(_CJK_RE.findall(text))
        if n_cjk >= 8 and not _ZH_FUNCTION_RE.search(text) and len(_WORD_RE.findall(text)) <= 2:
            return True
        words = [
            w.lower()
            for w in re.findall(r"\b[A-Za-z]{3,}\b|\b(?:a|an|as|at|be|by|in|is|it|of|on|or|to)\b", text)
        ]
        n_function = sum(w in _EN_FUNCTION for w in words)
        if n_cjk < 4 and len(words) - n_function >= 6 and n_function < 2 and not re.search(r"[:,;()=]", text):
            return True
        tokens = text.split()
        if (
            len(tokens) >= 5
            and not n_function
            and not re.search(f"[{_CJK}]{{5}}|[的了是就把被会也都还要能没不个而所因则时]", text)
        ):
            return True  # "min(m,P-p) 34+5as/h 全局batch OOM GEMM 显存"
    segments = [s for s in _LIST_SEP_RE.split(re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", text)) if s.strip()]
    # a short segment with a function character ("我按 λ^Δt 衰减", "超过就丢") is a clause, not a keyword
    # an enumeration of six or more items (、) is a list even when some items are long or read as clauses
    enumeration = text.count("、") >= 5
    # a segment with a formula ("M_p = L_p·sbh", "m·b") or an arrow states a relation
    short = sum(
        size(s) < 7 and (enumeration or not (_CLAUSE_CHAR_RE.search(s) or _RELATION_RE.search(s)))
        for s in segments
    )
    return len(segments) >= 3 and short >= (0.5 if enumeration else 0.75) * len(segments)


_CLAUSE_CUT_RE = re.compile(r"[,;:、。!?]\s*|\.\s+")


def trim_quote(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> str:
    """At most QUOTE_MAX characters of ``text[start:end]`` around the hits, cut at clause ends."""
    if end - start <= QUOTE_MAX:
        return text[start:end].strip()
    lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
    cuts = sorted({start, end, *(m.end() for m in _CLAUSE_CUT_RE.finditer(text, start, end))})
    a = max(c for c in cuts if c <= lo)
    b = min(c for c in cuts if c >= hi)
    while True:  # widen clause by clause while it fits
        wider = [c for c in cuts if c > b and c - a <= QUOTE_MAX][:1] or [
            c for c in cuts if c < a and b - c <= QUOTE_MAX
        ][-1:]
        if not wider:
            break
        a, b = min(a, wider[0]), max(b, wider[0])
    if b - a > QUOTE_MAX:
        a = a if lo - a < QUOTE_MAX // 4 else lo
        space = text.rfind(" ", a + QUOTE_MAX // 2, a + QUOTE_MAX)
        return text[a : space if space > 0 else a + QUOTE_MAX].strip()
    return text[a:b].strip()


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
#: ... or this share of them are those words or the question's own words
SALAD_COVERAGE_WITH_QUESTION = 0.88
SALAD_MIN_TOKENS_WITH_QUESTION = 24
SALAD_MIN_TOKENS = 12
#: a salad's suggestion is capped at this share of the item's points (a careful grader gives it nothing;
#: a quarter keeps it within half a point of 0 on a 2-point item and well under half marks)
SALAD_CAP = 0.25


# causal connectives: a salad strings the rubric's words together with far more of them than any explanation
_CAUSAL_RE = re.compile(
    r"因为|所以|导致|因此|造成|使得|从而|\b(?:because|so|therefore|causes?|caused|leads? to|thus|hence)\b",
    re.I,
)
#: ... or it has at least this many causal connectives per token (and SALAD_MIN_CONNECTIVES of them)
SALAD_CONNECTIVE_DENSITY = 0.085
SALAD_MIN_CONNECTIVES = 4
# the links of a causal chain: a sincere sentence has at most three (every labelled non-salad answer of the
# tuning parts: 2 of 328 have three), a fluent salad chains four to seven ("因为 A 导致 B，从而 C 使得 D，因此 E")
_CHAIN_RE = re.compile(
    r"因为|由于|所以|导致|因此|从而|使得|(?<!即)使(?![用])|进而|造成|来源于|取决于|意味着|保证了?|以致|于是"
    r"|\b(?:because|since|so|therefore|thus|hence|which means|means that|as a result|leads? to|led to|causes?|makes?"
    r"|caused by|due to|follows? from|determines?|results? in|which is why|guarantees?)\b",
    re.I,
)
_SENTENCE_END_RE = re.compile(r"[。!?;\n]+|\.(?=\s|$)")
SALAD_CHAIN = 4
SALAD_PARAGRAPH_CHAIN = 6
#: ... close together: at most this many words per link (the tuning parts' salads: 5 to 14; with five
#: links or more, up to 17)
SALAD_CHAIN_TOKENS = 15


def salad(
    text: str,
    spans: list[tuple[int, int]],
    question: str = "",
    units: Sequence[Sequence[tuple[int, int]]] = (),
) -> str | None:
    """Why the answer is a keyword salad (its share of rubric and question words, its density of causal
    connectives, or a causal chain through several criteria's terms in one sentence), or None when it is not
    one. ``units``: the hits of each criterion (or option) apart."""
    coverage, n_tokens = rubric_coverage(text, spans)
    # the question's words only count in a longer answer: a short sincere one is mostly the question's terms
    long_enough = question and n_tokens >= SALAD_MIN_TOKENS_WITH_QUESTION
    with_question = rubric_coverage(text, spans, question)[0] if long_enough else 0.0
    if n_tokens < SALAD_MIN_TOKENS:
        return None
    if coverage >= SALAD_COVERAGE or with_question >= SALAD_COVERAGE_WITH_QUESTION:
        return f"{max(coverage, with_question):.0%} of the answer is the rubric's and question's own words"
    n_causal = len(_CAUSAL_RE.findall(text))
    if n_causal >= SALAD_MIN_CONNECTIVES and n_causal >= SALAD_CONNECTIVE_DENSITY * n_tokens:
        return f"{n_causal} causal connectives in {n_tokens} words"
    # ... or a paragraph of six or more links at most 18 words apart (the salads that split their chain
    # with semicolons; every sincere paragraph of the tuning parts with six links has over 30 words per link)
    start = 0
    for para in text.split("\n"):
        chain = len(_CHAIN_RE.findall(para))
        crossed = sum(any(start <= a < start + len(para) for a, _ in hits) for hits in units)
        start += len(para) + 1
        if chain >= SALAD_PARAGRAPH_CHAIN and len(_TOKEN_RE.findall(para)) <= 18 * chain and crossed >= 2:
            return f"a chain of {chain} causal links through {crossed} criteria in one paragraph"
    ends = [m.span() for m in _SENTENCE_END_RE.finditer(text)] + [(len(text), len(text))]
    for (_, start), (stop, _) in zip([(0, 0), *ends[:-1]], ends, strict=True):
        sentence = text[start:stop]
        chain = len(_CHAIN_RE.findall(sentence))
        words = len(_TOKEN_RE.findall(sentence))
        if chain < SALAD_CHAIN or words > (SALAD_CHAIN_TOKENS if chain == SALAD_CHAIN else 20) * chain:
            continue  # four links close together, or five and more at up to 20 words each
        crossed = sum(any(start <= a < stop for a, _ in hits) for hits in units)
        if crossed >= 2:
            return f"a chain of {chain} causal links through {crossed} criteria in one sentence"
    return None


def rubric_coverage(text: str, spans: list[tuple[int, int]], question: str = "") -> tuple[float, int]:
    """(share of the answer's tokens covered by the rubric's concept hits, the question's own words
    (a CJK character pair or an English word of the question) or glue words, token count)."""
    covered = bytearray(len(text))
    for a, b in [*spans, *question_spans(text, question)]:
        covered[a:b] = b"\x01" * (b - a)
    for m in _GLUE_RE.finditer(text):
        covered[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    tokens = list(_TOKEN_RE.finditer(text))
    if not tokens:
        return 0.0, 0
    return sum(any(covered[m.start() : m.end()]) for m in tokens) / len(tokens), len(tokens)


# -- copies of the question -------------------------------------------------------------------------------

_BIGRAM_CHARS_RE = re.compile(f"[{_CJK}]|[A-Za-z0-9]+")
#: a sentence at least this share of whose character pairs occur in the question is a (paraphrased) copy
ECHO_BIGRAMS = 0.75


def _units(text: str) -> list[re.Match]:
    return list(_BIGRAM_CHARS_RE.finditer(text))


def _pairs(units: list[re.Match]) -> set[tuple[str, str]]:
    return {(a.group().lower(), b.group().lower()) for a, b in zip(units, units[1:], strict=False)}


def echoes(sentence: str, question: str) -> bool:
    """Most of the sentence's adjacent character pairs (CJK characters, English words) are the question's:
    the question copied with a few words changed ("要区分上游饥饿和下游背压：各自的因果链…")."""
    units = _units(sentence)
    if len(units) < 8 or not question:
        return False
    q = _pairs(_units(question))
    mine = [(a.group().lower(), b.group().lower()) for a, b in zip(units, units[1:], strict=False)]
    return sum(p in q for p in mine) >= ECHO_BIGRAMS * len(mine)


def question_spans(text: str, question: str) -> list[tuple[int, int]]:
    """The spans of the text that are the question's own words: CJK character pairs and English words."""
    if not question:
        return []
    units, q = _units(text), _units(question)
    pairs, words = _pairs(q), {u.group().lower() for u in q if not _CJK_RE.match(u.group())}
    out = [(u.start(), u.end()) for u in units if u.group().lower() in words]
    out += [
        (a.start(), b.end())
        for a, b in zip(units, units[1:], strict=False)
        if (a.group().lower(), b.group().lower()) in pairs
    ]
    return out
