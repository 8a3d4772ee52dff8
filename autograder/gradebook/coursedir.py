"""The grading output as an nbgrader course directory: its folders, its config, where its gradebook is."""

from __future__ import annotations

from pathlib import Path

from autograder.core.files import atomic_write_text

COURSE_ID = "pp-course"
DB_NAME = "gradebook.db"
CONFIG_NAME = "nbgrader_config.py"
#: sub-directories of OUT, as nbgrader's CourseDirectory names them
SUBMITTED, AUTOGRADED, FEEDBACK, RELEASE = "submitted", "autograded", "feedback", "release"


def db_url_for(out_dir: Path | str) -> str:
    """The SQLAlchemy URL of OUT's gradebook (absolute, so it works from any working directory)."""
    return "sqlite:///" + str(Path(out_dir).resolve() / DB_NAME)


def _solutions_dir(source_root: Path | str) -> Path:
    """``source_root`` is the source directory itself (``<assignment>/<notebook>.ipynb`` below it) or the
    repository root holding ``solutions/``."""
    root = Path(source_root).resolve()
    if (root / "solutions").is_dir() and (root / CONFIG_NAME).is_file():
        return root / "solutions"
    return root


def prepare_course_dir(out_dir: Path | str, source_root: Path | str) -> Path:
    """Make OUT an nbgrader course directory: ``OUT/nbgrader_config.py`` and the folders. Returns OUT.

    The config is rewritten only when its content changes (an open formgrader keeps working)."""
    out = Path(out_dir).resolve()
    source = _solutions_dir(source_root)
    for sub in (SUBMITTED, AUTOGRADED, FEEDBACK, "results"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    text = (
        '"""nbgrader course directory of a grading run (written by autograder.gradebook.coursedir; do not edit)."""\n\n'
        "c = get_config()  # noqa: F821  (injected by traitlets)\n\n"
        f"c.CourseDirectory.root = {str(out)!r}\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.CourseDirectory.db_url = {db_url_for(out)!r}\n"
        f"c.CourseDirectory.source_directory = {str(source)!r}\n"
        f"c.CourseDirectory.release_directory = {RELEASE!r}\n"
        f"c.CourseDirectory.submitted_directory = {SUBMITTED!r}\n"
        f"c.CourseDirectory.autograded_directory = {AUTOGRADED!r}\n"
        f"c.CourseDirectory.feedback_directory = {FEEDBACK!r}\n"
    )
    cfg = out / CONFIG_NAME
    if not cfg.is_file() or cfg.read_text(encoding="utf-8") != text:
        atomic_write_text(cfg, text)
    return out


def source_directory(out_dir: Path | str) -> Path:
    """The source directory recorded in OUT's nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader(CONFIG_NAME, path=str(Path(out_dir).resolve())).load_config()
    return Path(cfg.CourseDirectory.source_directory)
