"""Command line: ``python -m autograder {grade,merge,export,feedback,report,demo,formgrader,groups,collect,check,
gradescope,selfcheck}``."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from autograder.authoring.demo import build_sample_class
from autograder.classroom.batch import grade_class
from autograder.classroom.confirmed import load_results
from autograder.classroom.export import export
from autograder.classroom.review_feedback import regenerate
from autograder.classroom.sharding import ShardError, parse_shard
from autograder.classroom.shards import merge
from autograder.core.registry import lesson_dirs, lessons
from autograder.core.rubric import RubricError
from autograder.core.safe_text import terminal_text
from autograder.grading.assignment import load_assignment
from autograder.intake.collect import apply_times, collect
from autograder.platforms.gradescope_zip import build
from autograder.reporting.lms import (
    CANVAS,
    RosterError,
    moodle_format,
    parse_columns,
    read_roster,
    write_lms,
)
from autograder.reporting.tables import class_table
from autograder.review import report as class_report
from autograder.review.formgrader import serve
from autograder.review.groups import format_groups, review_items
from autograder.sandbox.isolation import add_isolation_argument, resolve_isolation
from autograder.student.selfcheck import main as selfcheck
from autograder.testing.seeding import SecretError, load_secret


def cmd_grade(args) -> int:

    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ShardError as exc:
        raise SystemExit(f"error: {exc}") from None
    try:
        secret = load_secret(args.secret)
    except SecretError as exc:
        raise SystemExit(f"error: {exc}") from None
    results = grade_class(
        Path(args.submissions),
        Path(args.out),
        isolation=args.isolation,
        jobs=args.jobs,
        only=args.assignment,
        force=args.force,
        quiet=args.quiet,
        shard=shard,
        course=Path(args.course) if args.course else None,
        secret=secret,
    )
    if not args.quiet:
        print(class_table(results, Path(args.out).resolve()))
        if shard is None:
            _print_report(Path(args.out))
        if shard is not None:
            print(
                f"shard {shard}: {len(results)} submissions; merge all {shard.count} outputs with "
                "`python -m autograder merge OUT_1 ... OUT_N --out OUT`"
            )
    return 0


def cmd_merge(args) -> int:

    try:
        results = merge([Path(d) for d in args.shards], Path(args.out), quiet=args.quiet)
    except ShardError as exc:
        raise SystemExit(f"error: {exc}") from None
    if not args.quiet:
        print(class_table(results, Path(args.out).resolve()))
        _print_report(Path(args.out))
    return 0


def _print_report(out: Path) -> None:
    """Build the class report (``autograder.review.report``) after a batch and print its path; a report that
    cannot be built is said so, never fails the batch (the grades are already written)."""
    try:
        print(f"class report: {class_report.build(out)}")
    except Exception as exc:  # noqa: BLE001
        print(
            f"class report: not written ({type(exc).__name__}: {exc}); retry with "
            f"`python -m autograder report --out {out}`",
            file=sys.stderr,
        )


def cmd_report(args) -> int:
    out = Path(args.out)
    if not (out / "results").is_dir():
        print(
            f"error: {out} has no graded results (grade into it first: python -m autograder grade ...)",
            file=sys.stderr,
        )
        return 2
    print(class_report.build(out, similarity=not args.no_similarity))
    return 0


def cmd_export(args) -> int:

    path = export(Path(args.out))
    if args.format != "csv":
        return _export_lms(args)
    print(path)
    if not args.quiet:  # the cells are csv_cell()-safe for a terminal too
        print(path.read_text(encoding="utf-8"), end="")
    return 0


def cmd_feedback(args) -> int:

    out = Path(args.out)
    if not (out / "results").is_dir():
        print(
            f"error: {out} has no graded results (grade into it first: python -m autograder grade ...)",
            file=sys.stderr,
        )
        return 2
    report = regenerate(out, assignment=args.assignment, student=args.student)
    print(report.summary(out.resolve()))
    if not report.pages:
        print("error: no result matched --assignment / --student", file=sys.stderr)
        return 2
    return 0


def _export_lms(args) -> int:
    """``export --format canvas|moodle``: the LMS import CSV (``autograder.reporting.lms``), what was not
    matched reported on stderr; exit 3 when graded students are missing from the roster."""

    if not args.roster:
        raise SystemExit(f"error: --format {args.format} needs --roster FILE (student_id + the LMS ids)")
    results = [r for _, r in load_results(Path(args.out))]
    try:
        roster, columns = read_roster(Path(args.roster)), parse_columns(args.column)
        fmt = CANVAS if args.format == "canvas" else moodle_format(args.moodle_id)
        done = write_lms(fmt, Path(args.out), results, roster, columns, args.output)
    except RosterError as exc:
        raise SystemExit(f"error: {exc}") from None
    for line in done.report:
        print(terminal_text(line), file=sys.stderr)
    print(done.path)
    if done.unknown:
        print(
            f"error: {len(done.unknown)} graded student(s) are not in the roster (listed above)",
            file=sys.stderr,
        )
        return 3
    return 0


def cmd_gradescope(args) -> int:
    try:
        secret = load_secret(args.secret) if args.secret else None
    except SecretError as exc:
        raise SystemExit(f"error: {exc}") from None
    for assignment in args.assignment or list(lessons()):
        path = build(
            assignment,
            Path(args.out),
            isolation=args.isolation,
            visibility=args.visibility,
            written_visibility=args.written_visibility,
            address_space_mb=args.address_space_mb,
            secret=secret,
        )
        print(path)
    return 0


def cmd_demo(args) -> int:

    out = Path(args.out).resolve()
    submissions = build_sample_class(out / "sample-class")
    print(f"sample class: {submissions}", file=sys.stderr)
    try:
        mode, _ = resolve_isolation(args.isolation)
    except RuntimeError as exc:
        raise SystemExit(f"error: {exc}") from None
    if mode == "fallback":
        print(
            "demo: grading the sample class WITHOUT a sandbox (the fallback). That is fine for these "
            "notebooks, built from the release and the reference; real submissions need bubblewrap "
            "(`grade` refuses to run without it unless given --isolation none).",
            file=sys.stderr,
        )
    results = grade_class(submissions, out / "grading", isolation=args.isolation, jobs=args.jobs, force=True)
    print(class_table(results, out / "grading"))
    _print_report(out / "grading")
    print(f"\nReview written answers: make formgrader OUT={out / 'grading'}")
    print(f"Answer groups (what you review): .venv/bin/python -m autograder groups --out {out / 'grading'}")
    return 0


def cmd_formgrader(args) -> int:

    serve(Path(args.out), port=args.port, open_browser=not args.no_browser, exchange=args.exchange)
    return 0


def cmd_groups(args) -> int:

    out = Path(args.out)
    if not (out / "results").is_dir():
        print(
            f"error: {out} has no graded results (grade into it first: python -m autograder grade ...)",
            file=sys.stderr,
        )
        return 2
    print(format_groups(review_items(out, args.assignment, args.item), detail=args.detail))
    return 0


def cmd_collect(args) -> int:

    if not args.zips and not args.times:
        raise SystemExit("error: give LMS zip files, --times CSV, or both")
    report = (
        collect(
            [Path(p) for p in args.zips],
            Path(args.dest),
            assignment=args.assignment,
            zone=args.timezone,
            ids=args.canvas_ids,
        )
        if args.zips
        else []
    )
    if args.times:
        report += apply_times(Path(args.times), Path(args.dest), args.assignment, args.timezone)
    for line in report:
        print(terminal_text(line))
    return 0


def cmd_check(args) -> int:
    """Validate rubrics and hidden tests of every assignment (what an instructor runs after editing)."""

    bad = 0
    for directory in lesson_dirs():
        name = directory.name
        try:
            a = load_assignment(directory)
            print(f"ok  {name}: {len(a.tests)} hidden tests, items {[it.id for it in a.items]}")
        except RubricError as exc:
            bad += 1
            print(f"BAD {name}: {exc}")
    return 1 if bad else 0


def cmd_selfcheck(args) -> int:

    return selfcheck(args.notebook, args.isolation)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb into OUT")
    g.add_argument("submissions")
    g.add_argument("--out", required=True, help="output course directory (gradebook, feedback, grades.csv)")
    g.add_argument("--assignment", action="append", help="grade only this assignment (repeatable)")
    g.add_argument("--jobs", type=int, default=None, help="parallel sandboxes (default: number of cores + 1)")
    add_isolation_argument(g, default="bwrap", choices=("bwrap", "none"))
    g.add_argument("--force", action="store_true", help="regrade even unchanged submissions")
    g.add_argument("--quiet", action="store_true")
    g.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only shard K of N (students split by a stable hash "
        "of their id); merge the N outputs with `merge`",
    )
    g.add_argument(
        "--course",
        help="course file with due dates and late policies (course.yaml; kept as "
        "OUT/course.yaml for later runs)",
    )
    g.add_argument(
        "--secret",
        metavar="FILE",
        help="course secret (kept outside the repository): each student's random hidden cases are "
        "seeded from it and their id (default: the file named by $AUTOGRADER_SECRET_FILE; none: "
        "the tests' fixed seeds). Keep it for re-grades: another secret re-grades everyone",
    )
    g.set_defaults(func=cmd_grade)

    m = sub.add_parser("merge", help="merge the outputs of sharded runs (grade --shard K/N) into one OUT")
    m.add_argument("shards", nargs="+", help="the N shard output directories")
    m.add_argument(
        "--out", required=True, help="the merged course directory (gradebook, feedback, grades.csv)"
    )
    m.add_argument("--quiet", action="store_true")
    m.set_defaults(func=cmd_merge)

    e = sub.add_parser(
        "export",
        help="write OUT/grades.csv with the scores confirmed in formgrader (and regenerate the feedback pages)",
    )
    e.add_argument("--out", default="build/grading")
    e.add_argument("--quiet", action="store_true")
    e.add_argument(
        "--format",
        choices=["csv", "canvas", "moodle"],
        default="csv",
        help="csv: OUT/grades.csv (default); canvas / moodle: that LMS's grade import CSV too",
    )
    e.add_argument("--roster", help="CSV mapping student_id (folder id) to LMS ids (canvas / moodle)")
    e.add_argument(
        "--column",
        action="append",
        metavar="ASSIGNMENT=NAME",
        help="LMS column name of an assignment, e.g. '<lesson-id>=Lesson 16 (4711)'",
    )
    e.add_argument(
        "--moodle-id",
        choices=["email", "idnumber", "username"],
        default="email",
        help="the user field Moodle matches on (and the roster column holding it)",
    )
    e.add_argument(
        "--output", type=Path, help="where to write the LMS file (default OUT/grades-<format>.csv)"
    )
    e.set_defaults(func=cmd_export)

    fb = sub.add_parser(
        "feedback",
        help="after review: regenerate every feedback page with the confirmed scores and the instructor's "
        "comments, in nbgrader's layout OUT/feedback/<student>/<assignment>/<notebook>.html "
        "(what `nbgrader release_feedback` publishes)",
    )
    fb.add_argument("--out", default="build/grading")
    fb.add_argument("--assignment", default=None, help="only this assignment")
    fb.add_argument("--student", default=None, help="only this student")
    fb.set_defaults(func=cmd_feedback)
    rp = sub.add_parser(
        "report",
        help="write OUT/report/index.html (class report: item analytics, similar submissions) and items.csv",
    )
    rp.add_argument("--out", default="build/grading", help="a graded output directory")
    rp.add_argument("--no-similarity", action="store_true", help="skip the similarity check")
    rp.set_defaults(func=cmd_report)

    d = sub.add_parser("demo", help="build a sample class from the release and grade it")
    d.add_argument("--out", default="build/demo")
    d.add_argument("--jobs", type=int, default=None)
    add_isolation_argument(d, default="auto")
    d.set_defaults(func=cmd_demo)

    f = sub.add_parser("formgrader", help="open nbgrader's formgrader on a grading output directory")
    f.add_argument("--out", default="build/grading")
    f.add_argument("--port", type=int, default=None)
    f.add_argument("--no-browser", action="store_true")
    f.add_argument(
        "--exchange",
        default=None,
        help="the course's nbgrader exchange root (c.Exchange.root): Release Feedback publishes the "
        "pages there for `nbgrader fetch_feedback`",
    )
    f.set_defaults(func=cmd_formgrader)

    gr = sub.add_parser("groups", help="answer groups of the written items: what an instructor reviews")
    gr.add_argument("--out", default="build/grading", help="a graded output directory")
    gr.add_argument("--assignment", default=None, help="only this assignment")
    gr.add_argument("--item", default=None, help="only this written item (e.g. q2)")
    gr.add_argument("--detail", action="store_true", help="list every group: size, score, representative")
    gr.set_defaults(func=cmd_groups)

    c = sub.add_parser("collect", help="unpack LMS zip downloads into the submitted layout")
    c.add_argument("zips", nargs="*")
    c.add_argument(
        "--times",
        help="CSV of submission times (student_id,submitted_at[,assignment_id]) for "
        "downloads without them; overrides the zip's times",
    )
    c.add_argument(
        "--timezone",
        default="UTC",
        help="time zone of zip entry times and of --times values written without an offset "
        "(default UTC; e.g. Asia/Shanghai)",
    )
    c.add_argument(
        "--canvas-ids",
        choices=("user", "login"),
        default="user",
        help="student id of a Canvas file: its user id (default; what Canvas's gradebook calls ID) or "
        "its name slug; DEST/roster.csv records both",
    )
    c.add_argument("--dest", required=True)
    c.add_argument("--assignment", required=True)
    c.set_defaults(func=cmd_collect)

    gs = sub.add_parser(
        "gradescope", help="build each LESSON's Gradescope autograder zip (see docs/SCALING.md)"
    )
    gs.add_argument("assignment", nargs="*", metavar="LESSON", help="default: every lesson")
    gs.add_argument("--out", default="dist", help="directory for <assignment>-gradescope.zip")
    add_isolation_argument(gs, default="bwrap")
    gs.add_argument(
        "--visibility", default="visible", help="Gradescope visibility of the code tests and total"
    )
    gs.add_argument(
        "--written-visibility",
        default="after_published",
        help="visibility of the written items' suggested scores (graded by hand on Gradescope)",
    )
    gs.add_argument(
        "--address-space-mb",
        type=int,
        default=512,
        help="virtual memory per sandboxed process; keep it below the container's memory limit",
    )
    gs.add_argument(
        "--secret",
        metavar="FILE",
        help="course secret to put in the zip (mode 0600): each student's random hidden cases are then "
        "seeded from it and their Gradescope user id",
    )
    gs.set_defaults(func=cmd_gradescope)

    k = sub.add_parser("check", help="validate every rubric and its hidden tests")
    k.set_defaults(func=cmd_check)

    sc = sub.add_parser(
        "selfcheck",
        help="students: check a notebook can be graded before submitting "
        "(runs your code in the grader's sandbox on the visible scenarios only)",
    )
    sc.add_argument("notebook", help="lessons/<lesson>/<notebook>.ipynb")
    add_isolation_argument(sc, default="auto")
    sc.set_defaults(func=cmd_selfcheck)

    args = parser.parse_args(argv)
    in_main = threading.current_thread() is threading.main_thread()  # signals reach the main thread only
    previous = signal.signal(signal.SIGTERM, _interrupt) if in_main else None
    try:
        return args.func(args)
    except (
        KeyboardInterrupt
    ) as exc:  # Ctrl-C or SIGTERM: the finally blocks removed sandboxes and temp folders
        signum = exc.args[0] if exc.args and isinstance(exc.args[0], int) else signal.SIGINT
        print(
            f"\ninterrupted ({signal.Signals(signum).name}): sandboxes and temporary folders removed; "
            "results committed so far are kept, a re-run continues from them",
            file=sys.stderr,
        )
        return 128 + signum
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, _frame):
    """SIGTERM unwinds like Ctrl-C, so every finally block (sandboxes, temporary folders) runs; a second
    one while that cleanup runs is ignored (SIGKILL still works)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(signum)
