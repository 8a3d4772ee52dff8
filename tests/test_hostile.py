"""The adversarial suite: every submission in ``tests/hostile/`` graded in ONE batch by the real engine,
hidden tests and sandbox, each with the exact score it must get.

Besides the scores, the batch must leave no trace outside its output: no process survives it (the
hostile ones exec ``sleep <marker>`` so the host's /proc can be scanned for them), no submission file
changes, nothing connects to the test's listening sockets, and every report names the isolation used.
Limits are lowered for speed through ``$AUTOGRADER_LIMITS`` (the lesson's rubric is not touched).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from autograder import engine, sandbox
from autograder.batch import grade_class
from autograder.demo import mistake_code, parse_expectations, reference_code, with_code
from autograder.sandbox import LIMITS_ENV, resolve_isolation

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).resolve().parent / "hostile"
ASSIGNMENT = "16-asymmetric-pipeline"
RELEASE = ROOT / "lessons" / ASSIGNMENT / "asymmetric_pipeline.ipynb"
REFERENCE = reference_code(ROOT / "autograder" / ASSIGNMENT)  # the source notebook's solution cells
TEST_LIMITS = {
    "call_timeout": 1.0,
    "load_timeout": 3.0,
    "submission_timeout": 40,
    "address_space_bytes": 512 << 20,
}


def _bwrap_or_skip() -> str:
    try:
        return resolve_isolation("bwrap")[1]
    except RuntimeError as exc:
        pytest.skip(f"the adversarial suite needs the sandbox: {exc}")


def snippets() -> dict[str, Path]:
    return {p.stem: p for p in sorted(HOSTILE.glob("*.py"))}


def build_code(path: Path, values: dict[str, str]) -> str:
    text = mistake_code(path, reference=REFERENCE)  # `# include: reference` → lesson 16's reference code first
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


class Listener:
    """TCP (IPv4 and, if available, IPv6 loopback) and an abstract Unix socket that record connections."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.sockets = []
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        self.port = tcp.getsockname()[1]
        self.sockets.append(tcp)
        try:
            tcp6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            tcp6.bind(("::1", self.port))
            self.sockets.append(tcp6)
        except OSError:
            pass
        self.abstract = f"grader-hostile-{uuid.uuid4().hex[:12]}"
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind("\0" + self.abstract)
        self.sockets.append(unix)
        for s in self.sockets:
            s.listen(16)
            threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, s: socket.socket) -> None:
        while True:
            try:
                conn, addr = s.accept()
            except OSError:
                return
            self.hits.append(repr(addr))
            conn.close()

    def close(self) -> None:
        for s in self.sockets:
            s.close()


def tree_digest(top: Path) -> dict[str, str]:
    return {
        str(p.relative_to(top)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(top.rglob("*"))
        if p.is_file()
    }


def processes_with(marker: str) -> list[str]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(name + ": " + cmdline.replace(b"\0", b" ").decode(errors="replace"))
    return found


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    isolation_text = _bwrap_or_skip()
    if not RELEASE.is_file():
        pytest.skip("the lesson 16 release notebook is missing (make release)")
    tmp = tmp_path_factory.mktemp("hostile")
    subs, out = tmp / "submitted", tmp / "out"
    listener = Listener()
    marker = f"98{uuid.uuid4().int % 10**7:07d}"  # `sleep <marker>`: a number sleep accepts, unique per run
    values = {
        "OUT": str(out),
        "SUBS": str(subs),
        "ROOT": str(ROOT),
        "VENV": str(Path(sys.prefix).resolve()),
        "PORT": str(listener.port),
        "MARKER": marker,
        "ABSTRACT": listener.abstract,
    }
    release = json.loads(RELEASE.read_text(encoding="utf-8"))
    expected = {}
    for student, path in snippets().items():
        expected[student] = parse_expectations(path.read_text(encoding="utf-8"))
        nb = with_code(release, build_code(path, values))
        dest = subs / student / ASSIGNMENT / "asymmetric_pipeline.ipynb"
        dest.parent.mkdir(parents=True)
        dest.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
    before = tree_digest(subs)
    mp = pytest.MonkeyPatch()
    mp.setenv(LIMITS_ENV, json.dumps(TEST_LIMITS))
    mp.setattr(engine, "_assignments", {})  # load the assignment afresh, with the lowered limits
    started = time.monotonic()
    try:
        results = grade_class(subs, out, isolation="bwrap", jobs=2, quiet=True)
    finally:
        elapsed = time.monotonic() - started
        mp.undo()
        engine._assignments.clear()
    time.sleep(0.3)  # let the kernel finish tearing the PID namespaces down
    leftovers = processes_with(marker)
    listener.close()
    return {
        "results": {r.student_id: r for r in results},
        "expected": expected,
        "before": before,
        "after": tree_digest(subs),
        "subs": subs,
        "out": out,
        "leftovers": leftovers,
        "hits": listener.hits,
        "elapsed": elapsed,
        "isolation": isolation_text,
    }


def test_at_least_thirty_hostile_submissions():
    hostile = [s for s in snippets() if "honest" not in s]
    assert len(hostile) >= 30
    for student, path in snippets().items():
        assert set(parse_expectations(path.read_text(encoding="utf-8"))) == {"simulator", "solver"}, student


@pytest.mark.parametrize("student", sorted(snippets()))
def test_exact_score(batch, student):
    res = batch["results"][student]
    got = {it.id: it.score for it in res.items if it.kind == "code"}
    assert got == batch["expected"][student], (
        student,
        res.status,
        res.messages[-3:],
        [(t.name, t.message) for it in res.items for t in it.tests if not t.passed][:6],
    )


def test_batch_completed_every_student(batch):
    assert set(batch["results"]) == set(snippets())
    for student, res in batch["results"].items():
        assert not res.status.startswith("error"), (student, res.status)


def test_no_process_outlives_the_batch(batch):
    assert batch["leftovers"] == []


def test_submissions_never_modified(batch):
    assert batch["after"] == batch["before"]


def test_nothing_reached_the_network(batch):
    assert batch["hits"] == []


GRADEBOOK_ROWS = (
    "SELECT submitted_assignment.student_id, base_cell.name, grade.auto_score FROM grade "
    "JOIN base_cell ON grade.cell_id = base_cell.id "
    "JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id "
    "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id"
)


def test_gradebook_has_exactly_one_row_per_student_with_the_engine_scores(batch):
    db = sqlite3.connect(batch["out"] / "gradebook.db")
    try:
        rows = db.execute(GRADEBOOK_ROWS + " WHERE base_cell.name IN ('simulator', 'solver')").fetchall()
    finally:
        db.close()
    seen: dict[tuple[str, str], float] = {}
    for student, cell, score in rows:
        assert (student, cell) not in seen, f"duplicate gradebook row for {student}/{cell}"
        seen[(student, cell)] = score
    expected = {(s, k): v for s, exp in batch["expected"].items() for k, v in exp.items()}
    assert seen == pytest.approx(expected)


def test_every_report_names_the_isolation(batch):
    for student, res in batch["results"].items():
        assert res.isolation == batch["isolation"] and "bubblewrap" in res.isolation
        page = (batch["out"] / "feedback" / student / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
        assert "bubblewrap" in page, student
        saved = json.loads(
            (batch["out"] / "results" / student / f"{ASSIGNMENT}.json").read_text(encoding="utf-8")
        )
        assert "bubblewrap" in saved["isolation"], student


def test_output_was_counted_not_graded(batch):
    res = batch["results"]["a23_100mb_output"]
    assert any("printed" in m for m in res.messages), res.messages


def test_suite_wall_time(batch):
    # timeouts dominate (1 s per call here); generous bound so a loaded CI machine does not flake
    assert batch["elapsed"] < 150, batch["elapsed"]


def test_fallback_without_bwrap_is_reported_and_still_contains_processes(tmp_path, capsys):
    """``--isolation none``: rlimits, scrubbed environment, temporary directory; the CLI output and every
    report say so; orphaned processes are still reaped (the zygote is a child subreaper)."""
    if not RELEASE.is_file():
        pytest.skip("the lesson 16 release notebook is missing (make release)")
    marker = f"97{uuid.uuid4().int % 10**7:07d}"
    release = json.loads(RELEASE.read_text(encoding="utf-8"))
    subs = tmp_path / "submitted"
    cases = {
        "honest": "a07h_honest_reference",
        "daemon": "a27_double_fork_sleeper",
        "stderr": "a26_honest_prints_to_stderr",
    }
    for student, stem in cases.items():
        dest = subs / student / ASSIGNMENT / "asymmetric_pipeline.ipynb"
        dest.parent.mkdir(parents=True)
        code = build_code(HOSTILE / f"{stem}.py", {"MARKER": marker})
        dest.write_text(json.dumps(with_code(release, code), ensure_ascii=False), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv(LIMITS_ENV, json.dumps(TEST_LIMITS))
    mp.setattr(engine, "_assignments", {})
    try:
        results = grade_class(subs, tmp_path / "out", isolation="none", jobs=1)
    finally:
        mp.undo()
        engine._assignments.clear()
    assert "isolation: fallback" in capsys.readouterr().err
    time.sleep(0.3)
    assert processes_with(marker) == []
    for res in results:
        assert {it.id: it.score for it in res.items if it.kind == "code"} == {"simulator": 2.0, "solver": 2.0}
        assert res.isolation.startswith("fallback") and "NOT a sandbox" in res.isolation
        page = (tmp_path / "out" / "feedback" / res.student_id / f"{ASSIGNMENT}.html").read_text(
            encoding="utf-8"
        )
        assert "NOT a sandbox" in page


def grade_snippets(tmp_path: Path, cases: dict[str, str], *, jobs: int, isolation: str = "bwrap",
                   values: dict[str, str] | None = None, quiet: bool = True):
    """Grade a small class: student -> snippet stem in tests/hostile/, with the suite's lowered limits."""
    release = json.loads(RELEASE.read_text(encoding="utf-8"))
    subs = tmp_path / "submitted"
    for student, stem in cases.items():
        dest = subs / student / ASSIGNMENT / "asymmetric_pipeline.ipynb"
        dest.parent.mkdir(parents=True)
        code = build_code(HOSTILE / f"{stem}.py", values or {})
        dest.write_text(json.dumps(with_code(release, code), ensure_ascii=False), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv(LIMITS_ENV, json.dumps(TEST_LIMITS))
    mp.setattr(engine, "_assignments", {})
    try:
        results = grade_class(subs, tmp_path / "out", isolation=isolation, jobs=jobs, quiet=quiet)
    finally:
        mp.undo()
        engine._assignments.clear()
    return {r.student_id: r for r in results}


def code_scores(res) -> dict[str, float]:
    return {it.id: it.score for it in res.items if it.kind == "code"}


def expected_scores(stem: str) -> dict[str, float]:
    return parse_expectations((HOSTILE / f"{stem}.py").read_text(encoding="utf-8"))


def test_honest_students_beside_a_flooding_submission_keep_their_scores(tmp_path):
    """Attack 3: a submission answering every call with 48 MB of nested empty lists is graded beside
    honest ones (two sandboxes at once). Its replies are refused before they are read or parsed, so the
    honest students' calls never wait behind it: they keep exactly their scores."""
    _bwrap_or_skip()
    honest = {f"honest{i}": "a07h_honest_reference" for i in range(8)}
    results = grade_snippets(tmp_path, {"flood": "a37_reply_flood", **honest}, jobs=2)
    assert code_scores(results["flood"]) == expected_scores("a37_reply_flood")
    for student in honest:
        assert code_scores(results[student]) == expected_scores("a07h_honest_reference"), (
            student, results[student].status, [t.message for it in results[student].items for t in it.tests][:3])
        assert results[student].status == "ok"


def test_sysv_ipc_does_not_persist_into_the_next_submission(tmp_path):
    """Attack 4: one sandbox (one job) grades the plant, then the reader. The reader finds none of the
    plant's shared memory, message queue or semaphore set, and the plant could not take more System V
    shared memory than the sandbox's limit (each expectation is 0 unless the attack worked)."""
    _bwrap_or_skip()
    results = grade_snippets(tmp_path, {"a_plant": "a38_sysv_ipc_plant", "b_read": "z98_read_sysv_ipc"}, jobs=1)
    assert code_scores(results["a_plant"]) == expected_scores("a38_sysv_ipc_plant"), results["a_plant"].status
    assert code_scores(results["b_read"]) == expected_scores("z98_read_sysv_ipc"), results["b_read"].status


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:  # the reader refused the rest and closed its end
        pass


def test_a_reply_waiting_at_the_deadline_counts_as_in_time():
    """Attack 3, the deadline side: a starved grader thread (another thread holding the GIL, a loaded
    CPU) may look at the channel only after the deadline; a reply already waiting then still counts. A
    sender that has sent nothing still times out."""
    ours, theirs = socket.socketpair()
    try:
        theirs.sendall(_frame(b'{"value": 1}'))
        assert sandbox._recv(ours, timeout=0.0) == {"value": 1}
        with pytest.raises(TimeoutError):
            sandbox._recv(ours, timeout=0.05)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize(
    "body",
    [
        b"[" + b"[]," * 300_000 + b"[]]",  # 0.9 MB, 600 000 values: refused by counting, before json.loads
        b"[" + b"0," * 2_500_000 + b"0]",  # 5 MB: refused from the length prefix
    ],
    ids=["many-values", "many-bytes"],
)
def test_a_costly_reply_is_refused_before_it_is_parsed(body):
    ours, theirs = socket.socketpair()
    try:
        threading.Thread(target=_send_quietly, args=(theirs, _frame(body)), daemon=True).start()
        with pytest.raises(OSError, match="over the limit"):
            sandbox._recv(ours, timeout=5.0)
    finally:
        ours.close()
        theirs.close()
