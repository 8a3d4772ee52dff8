"""A small class whose results are written by hand, so the class report's numbers can be computed by hand.

``hand_class(OUT)`` writes five results of lesson 16 under ``OUT/results`` (no grading, no sandbox): one
code item ``simulator`` (2 points, tests ``test_core`` weight 3 and ``test_edge`` weight 1) and one written
item ``q1`` (2 points, criteria ``backpressure`` and ``upstream_starvation``, 1 point each), plus a course
file with a due date. With ``code=True`` it also writes the submission copies grading would have left in
``OUT/submitted`` (lesson 16's release with the given code), so the similarity section has code to compare:
s1's code is ``closed_form.py`` from the catalogue, s2's is the hand-renamed copy of it with a hostile
comment, s3 and s4 hold the independent solutions written for the similarity test.

The table the tests compare with (worked out in tests/test_report.py):

    student  test_core  test_edge  simulator  backpressure  upstream  q1   total  submitted
    s1       pass       pass       2          met           met       2    4      on time
    s2       pass       fail(M2)   1.5        met           -         1    2.5    within grace
    s3       fail(M1)   pass       0.5        -             -         0    0.5    late
    s4       fail(M1)   fail(M2b)  0          met           -         1    1      (no time)
    s5       not graded (unreadable), no time
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.authoring.demo import with_code
from autograder.core.layout import REPO as LAYOUT
from autograder.core.results import EXECUTED, STATIC_REVIEW, ItemResult, SubmissionResult, TestOutcome
from autograder.gradebook import coursedir

ASSIGNMENT, NOTEBOOK = "16-asymmetric-pipeline", "asymmetric_pipeline"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "similarity"
HOSTILE = '</pre><script>window.pwned=1</script><img src=x onerror="window.pwned=2">\u202eevil'
M1 = "总时间与独立推导不符 " + HOSTILE  # a failure message that quotes student text
COURSE = """\
assignments:
  16-asymmetric-pipeline:
    due: 2026-12-07 23:59
    grace: 15 minutes
"""


def _result(sid, core, edge, crit, when, m_core="", m_edge=""):
    tests = [
        TestOutcome("test_core", "simulator", 3, core, "" if core else m_core),
        TestOutcome("test_edge", "simulator", 1, edge, "" if edge else m_edge, edge=True),
    ]
    code = 2 * (3 * core + 1 * edge) / 4
    evidence = [
        {"criterion": "backpressure", "met": crit[0], "quote": "", "note": "" if crit[0] else HOSTILE},
        {"criterion": "upstream_starvation", "met": crit[1], "quote": "", "note": ""},
    ]
    written = float(sum(crit))
    res = SubmissionResult(sid, ASSIGNMENT, NOTEBOOK, pass_line=3, submitted_at=when)
    res.items = [
        ItemResult("simulator", "code", 2.0, code, EXECUTED, tests=tests),
        ItemResult("q1", "written", 2.0, written, STATIC_REVIEW, evidence=evidence, suggestion=written),
    ]
    return res


def hand_class(out: Path, code: bool = False) -> list[SubmissionResult]:
    results = [
        _result("s1", True, True, (True, True), "2026-12-07T12:00:00+00:00"),
        _result("s2", True, False, (True, False), "2026-12-08T00:05:00+00:00", m_edge="M2"),
        _result("s3", False, True, (False, False), "2026-12-09T10:00:00+00:00", m_core=M1),
        _result("s4", False, False, (True, False), "", m_core=M1, m_edge="M2b"),
    ]
    broken = SubmissionResult("s5", ASSIGNMENT, NOTEBOOK, status="unreadable: not JSON", graded=False)
    broken.items = [
        ItemResult("simulator", "code", 2.0, 0.0, EXECUTED),
        ItemResult("q1", "written", 2.0, 0.0, STATIC_REVIEW, suggestion=0.0),
    ]
    results.append(broken)
    for r in results:
        r.save(out / "results" / r.student_id / f"{ASSIGNMENT}.json")
    (out / "course.yaml").write_text(COURSE, encoding="utf-8")
    if code:
        release = json.loads((LAYOUT.releases / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
        copy = (FIXTURES / "16_closed_form_renamed.py").read_text(encoding="utf-8")
        sources = {
            "s1": (LAYOUT.data_dir(ASSIGNMENT) / "mistakes" / "closed_form.py").read_text(encoding="utf-8"),
            "s2": f"# {HOSTILE}\n" + copy,
            "s3": (FIXTURES / "16_event_queue.py").read_text(encoding="utf-8"),
            "s4": (FIXTURES / "16_table_bisection.py").read_text(encoding="utf-8"),
        }
        for sid, src in sources.items():
            path = out / coursedir.SUBMITTED / sid / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(with_code(release, src), ensure_ascii=False), encoding="utf-8")
    return results
