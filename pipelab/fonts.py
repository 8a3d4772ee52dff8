"""The course's Chinese font, registered with matplotlib by ``import pipelab`` (when matplotlib is in use)
and by ``import pipelab.plot``.

Lesson figures carry Chinese titles and labels. A system CJK font cannot be relied on (a fresh laptop
has none; a matplotlib font cache built before one was installed does not list it), so the course
ships its font through a pip dependency: ``mplfonts`` carries Noto Sans CJK SC (SIL Open Font
License) inside its wheel, nothing is downloaded at install or run time. :func:`register` adds that
file to matplotlib's font manager (whatever its cache says) and puts the font first in
``font.sans-serif``; matplotlib's per-glyph fallback still uses DejaVu Sans for what the CJK font lacks.

Missing glyphs are never hidden: if the font package is absent, :func:`register` says so with a
warning and matplotlib's own "Glyph … missing from font(s)" warnings stay on
(``tests/test_figure_glyphs.py`` turns them into errors while rendering every lesson figure).
"""

from __future__ import annotations

import warnings
from pathlib import Path

__all__ = ["COURSE_FONT", "font_path", "register"]

#: family name of the shipped font (what ``font.sans-serif`` lists first)
COURSE_FONT = "Noto Sans CJK SC"
_FONT_FILE = "NotoSansCJKsc-Regular.otf"


def font_path() -> Path | None:
    """The shipped font file, or ``None`` when the ``mplfonts`` package is not installed."""
    try:
        from mplfonts.conf import FONT_DIR
    except ImportError:
        return None
    path = Path(FONT_DIR) / _FONT_FILE
    return path if path.is_file() else None


def register() -> str | None:
    """Register the course font with matplotlib and make it the first sans-serif family.

    Idempotent and cheap after the first call. Returns the family name, or ``None`` (with a warning)
    when the font package is missing; returns ``None`` silently when matplotlib itself is not installed.
    """
    try:
        from matplotlib import font_manager
    except ImportError:
        return None
    path = font_path()
    if path is None and any(f.name == COURSE_FONT for f in font_manager.fontManager.ttflist):
        _put_first()  # the same font installed system-wide serves (an environment set up before mplfonts)
        return COURSE_FONT
    if path is None:
        warnings.warn(
            f"pipelab: the course font {COURSE_FONT} is not installed (it comes with the `mplfonts` "
            "package: run `make setup` or `pip install -e .`); Chinese labels may show as empty boxes",
            stacklevel=2,
        )
        return None
    fname = str(path)
    if not any(f.fname == fname for f in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(fname)
    _put_first()
    return COURSE_FONT


def _put_first() -> None:
    import matplotlib

    families = [f for f in matplotlib.rcParams["font.sans-serif"] if f != COURSE_FONT]
    matplotlib.rcParams["font.sans-serif"] = [COURSE_FONT, *families]
    matplotlib.rcParams["font.family"] = ["sans-serif"]
    matplotlib.rcParams["axes.unicode_minus"] = False
