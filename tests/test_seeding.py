"""Per-student hidden inputs (autograder/testing/seeding.py): two students' random cases differ under a course
secret, nothing changes without one, lessons 16's and 03's catalogues keep their exact scores under several
secrets, the secret reaches no output, and results / shards graded with different secrets are told apart."""

from __future__ import annotations

import json

import pytest

from autograder.authoring.demo import mistake_code, parse_expectations, reference_code, with_code
from autograder.classroom import sharding, shards
from autograder.classroom.batch import Phases, grade_class
from autograder.core.layout import REPO as LAYOUT
from autograder.core.registry import lessons
from autograder.core.results import SubmissionResult
from autograder.gradebook import coursedir
from autograder.grading.assignment import load_assignment
from autograder.grading.engine import grade_extracted
from autograder.grading.notebook import Extracted
from autograder.grading.submission import shutdown_workers
from autograder.sandbox.isolation import resolve_isolation
from autograder.testing import seeding

ROOT = LAYOUT.root
LESSON16 = "16-asymmetric-pipeline"
LESSON03 = "03-load-imbalance"
GRADING = "grading (sandbox + hidden tests, thread-seconds)"
SECRETS = [b"course-secret-number-one-0123456789", b"another-course-secret-abcdefghijkl", b"x" * 16]


class _Stop(BaseException):
    """Raised by the recording stand-in at the first call: the test's inputs are all we want."""


class Recorder:
    """Stands in for ``sub``: records what a hidden test sends, then stops the test."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def call(self, target, *args, **kwargs):
        self.sent.append(repr((target, args, kwargs)))
        raise _Stop

    def calls(self, target, arg_tuples):
        self.sent.append(repr((target, [tuple(a) for a in arg_tuples])))
        raise _Stop

    def calls_with(self, target, cases):
        self.sent.append(repr((target, list(cases))))
        raise _Stop


def inputs(secret: bytes | None, student: str, lesson: str = LESSON16) -> dict[str, str]:
    """What each hidden test of ``lesson`` sends first, for ``student`` under ``secret``, by "item:test"."""
    assignment = load_assignment(lessons()[lesson].directory)
    sent = {}
    with seeding.for_student(secret, student):
        for test in assignment.tests:
            rec = Recorder()
            try:
                test.fn(rec)
            except _Stop:
                pass
            sent[f"{test.item}:{test.name}"] = rec.sent[0] if rec.sent else ""
    return sent


def test_without_a_secret_every_student_gets_the_fixed_cases():
    assert seeding.seed(16_0101) == 16_0101
    with seeding.for_student(None, "alice"):
        assert seeding.seed(16_0101) == 16_0101
    plain = inputs(None, "")
    assert inputs(None, "alice") == inputs(None, "bob") == plain


def test_two_students_get_different_hidden_inputs_and_each_always_the_same():
    alice, bob = inputs(SECRETS[0], "alice"), inputs(SECRETS[0], "bob")
    differ = sorted(name for name in alice if alice[name] != bob[name])
    # every test that draws random cases: 2 + 6 simulator, 3 solver, 6 challenge tests
    assert len(differ) >= 12, differ
    assert {
        "solver:test_small_sizes_match_brute_force",
        "solver:test_larger_sizes_match_water_filling",
    } <= set(differ)
    # fixed cases stay fixed: the lesson's own scenario is the same for everyone
    assert alice["solver:test_heavy_ends_and_seed_case"] == bob["solver:test_heavy_ends_and_seed_case"]
    assert inputs(SECRETS[0], "alice") == alice  # a re-grade sends the same
    other = inputs(SECRETS[1], "alice")
    assert all(other[name] != alice[name] for name in differ)  # another secret, other inputs
    plain = inputs(None, "alice")
    assert all(alice[name] != plain[name] for name in differ)


def test_two_students_get_different_lesson03_inputs():
    """Lesson 03's random cases are seeded too; its fixed cases come first, so what a test sends first
    (the whole batch for the tests that send one) differs wherever random cases are in it."""
    alice, bob = inputs(SECRETS[0], "alice", LESSON03), inputs(SECRETS[0], "bob", LESSON03)
    differ = sorted(name for name in alice if alice[name] != bob[name])
    # the tests with random cases in their first call: 2 stage_times, 2 partition, 3 scheduling, 1 frontier
    assert {
        "stage_times:test_random_partitions",
        "partition:test_small_against_enumeration",
        "partition:test_heavy_layers_against_dp",
        "scheduling:test_static_one_f_one_b",
        "scheduling:test_dynamic_same_memory",
        "scheduling:test_dynamic_extra_memory",
        "frontier:test_random_configurations",
    } <= set(differ), differ
    assert inputs(SECRETS[0], "alice", LESSON03) == alice  # a re-grade sends the same
    plain = inputs(None, "alice", LESSON03)
    assert inputs(None, "bob", LESSON03) == plain  # without a secret: the fixed seeds, for everyone
    assert all(alice[name] != plain[name] for name in differ)
    assert alice["partition:test_validation"] == bob["partition:test_validation"]  # hand-written: the same


@pytest.fixture(scope="module")
def isolation():
    mode, _ = resolve_isolation("auto")
    yield mode
    shutdown_workers()


@pytest.mark.slow
@pytest.mark.parametrize("lesson", [LESSON16, LESSON03])
@pytest.mark.parametrize("n", range(len(SECRETS)))
def test_catalogue_scores_stay_exact_under_several_secrets(n, lesson, isolation):
    """Every catalogued mistake of the lesson loses exactly its ``# expect:`` points, and the reference earns
    every point, whatever the random cases: fixed cases catch the mistakes, random ones come on top."""
    directory = lessons()[lesson].directory
    assignment = load_assignment(directory)
    codes = {p.stem: mistake_code(p) for p in sorted((directory / "mistakes").glob("*.py"))}
    codes["reference"] = reference_code(directory)
    wrong = {}
    for name, code in codes.items():
        items, _, _ = grade_extracted(
            assignment,
            Extracted(code_cells=[(0, code)]),
            isolation,
            student_id=f"student-{n}-{name}",
            secret=SECRETS[n],
        )
        got = {it.id: it.score for it in items if it.kind == "code"}
        want = parse_expectations(code) if name != "reference" else {}
        want = want or {it.id: it.points for it in items if it.kind == "code"}
        off = {k: (v, got.get(k)) for k, v in want.items() if abs(v - got.get(k, -1)) > 1e-9}
        if off:
            wrong[name] = off
    assert wrong == {}


def test_load_secret(tmp_path, monkeypatch):
    monkeypatch.delenv(seeding.SECRET_ENV, raising=False)
    assert seeding.load_secret() is None
    short = tmp_path / "short"
    short.write_text("abc\n")
    with pytest.raises(seeding.SecretError, match="at least 16"):
        seeding.load_secret(short)
    good = tmp_path / "secret"
    good.write_text(SECRETS[0].decode() + "\n")
    monkeypatch.setenv(seeding.SECRET_ENV, str(good))
    assert seeding.load_secret() == SECRETS[0]
    with pytest.raises(seeding.SecretError, match="cannot read"):
        seeding.load_secret(tmp_path / "missing")


def test_fingerprint_tells_secrets_apart_and_hides_them():
    fp = "0123456789abcdef"
    tagged = [seeding.grader_fingerprint(fp, s) for s in SECRETS]
    assert len(set(tagged)) == len(SECRETS) and seeding.grader_fingerprint(fp, None) == fp
    for s, t in zip(SECRETS, tagged, strict=True):
        assert s.decode() not in t and seeding.base_fingerprint(t) == fp


def _tiny_class(root):
    release = json.loads(
        (LAYOUT.releases / LESSON16 / "asymmetric_pipeline.ipynb").read_text(encoding="utf-8")
    )
    code = reference_code(lessons()[LESSON16].directory)
    for sid in ("alice", "bob"):
        path = root / sid / LESSON16 / "asymmetric_pipeline.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(with_code(release, code), ensure_ascii=False), encoding="utf-8")
    return root


def test_grade_with_a_secret(tmp_path):
    """``grade`` with a secret: results carry its tag (never the secret), full marks for the reference, a
    re-run with the same secret reuses every result, another secret re-grades everyone."""
    subs, out = _tiny_class(tmp_path / "subs"), tmp_path / "out"
    secret = SECRETS[0]
    first = grade_class(subs, out, isolation="auto", quiet=True, secret=secret)
    tag = seeding.secret_tag(secret)
    assert all(r.grader.endswith("+s" + tag) and r.code_total == 4 for r in first)
    for path in out.rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path
    cached = Phases()
    grade_class(subs, out, isolation="auto", quiet=True, secret=secret, phases=cached)
    assert GRADING not in cached.seconds  # nothing graded again: every result reused
    regraded = Phases()
    again = grade_class(subs, out, isolation="auto", quiet=True, secret=SECRETS[1], phases=regraded)
    assert all(r.grader.endswith("+s" + seeding.secret_tag(SECRETS[1])) for r in again)
    assert GRADING in regraded.seconds  # another secret: graded again


def test_merge_refuses_shards_graded_with_different_secrets(tmp_path):
    assignment = load_assignment(lessons()[LESSON16].directory)
    students = {}
    n = 0
    while len(students) < 2:  # one student in each of two shards
        sid = f"student{n}"
        students.setdefault(sharding.shard_of(sid, 2), sid)
        n += 1
    dirs = []
    for k, secret in ((1, SECRETS[0]), (2, SECRETS[1])):
        d = tmp_path / f"shard{k}"
        coursedir.prepare_course_dir(d, ROOT)
        res = SubmissionResult(students[k], LESSON16, assignment.notebook)
        res.grader = seeding.grader_fingerprint(assignment.fingerprint, secret)
        res.save(d / "results" / res.student_id / f"{LESSON16}.json")
        sharding.write_manifest(d, sharding.Shard(k, 2), [res])
        dirs.append(d)
    with pytest.raises(sharding.ShardError, match="secret"):
        shards.merge(dirs, tmp_path / "merged", quiet=True)
    # the same secret on both: the grader check passes (this checkout's fingerprint, the secret's tag)
    shards._check_same_grader(
        {LESSON16: (seeding.grader_fingerprint(assignment.fingerprint, SECRETS[0]), dirs[0])}
    )


def test_cli_refuses_a_bad_secret(tmp_path):
    from autograder.cli.main import main

    bad = tmp_path / "secret"
    bad.write_text("short")
    with pytest.raises(SystemExit, match="at least 16"):
        main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--secret", str(bad), "--quiet"])
    assert not (tmp_path / "out").exists()


def test_gradescope_zip_carries_the_secret_and_seeds_by_gradescope_user(tmp_path):
    """``gradescope --secret``: the zip holds the secret readable by root only, its fingerprint the tag;
    run_autograder seeds from the user id in submission_metadata.json (the reference earns its code points)
    and refuses to guess when the metadata names nobody."""
    import stat
    import zipfile

    from autograder.platforms import gradescope, gradescope_run, gradescope_zip

    secret_file = tmp_path / "secret"
    secret_file.write_bytes(SECRETS[0])
    isolation = "bwrap" if resolve_isolation("auto")[0] == "bwrap" else "none"
    zip_path = gradescope_zip.build(
        LESSON16, tmp_path / "dist", isolation=isolation, secret=seeding.load_secret(secret_file)
    )
    with zipfile.ZipFile(zip_path) as zf:
        info = zf.getinfo(gradescope_run.SECRET_NAME)
        assert stat.S_IMODE(info.external_attr >> 16) == 0o600
        config = json.loads(zf.read(gradescope_run.CONFIG_NAME))
    assert config["grader"].endswith("+s" + seeding.secret_tag(SECRETS[0]))
    root = tmp_path / "autograder"
    gradescope.install(zip_path, root)
    (root / "submission").mkdir()
    (root / "submission" / "asymmetric_pipeline.ipynb").write_bytes(
        (ROOT / "solutions" / LESSON16 / "asymmetric_pipeline.ipynb").read_bytes()
    )
    (root / "submission_metadata.json").write_text(
        json.dumps({"id": 1, "users": [{"email": "a@example.com", "id": 4242, "name": "A"}]})
    )
    data, stdout = gradescope.invoke(root, timeout=300)
    assert data["score"] == 6, data.get("output")  # simulator 2 + solver 2 + challenge 2 (extra credit)
    assert SECRETS[0].decode() not in json.dumps(data) and SECRETS[0].decode() not in stdout
    (root / "submission_metadata.json").write_text(json.dumps({"id": 2, "users": []}))
    data, _ = gradescope.invoke(root, timeout=300)
    assert data["score"] == 0 and "names no user" in data["output"]
