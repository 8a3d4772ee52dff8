"""pipelab registers the course's Chinese font at import (the glyph test itself: tests/test_figure_glyphs.py)."""

import matplotlib
from matplotlib import font_manager

import pipelab
from pipelab import fonts


def test_font_is_shipped_by_the_dependency_and_registered_at_import():
    path = fonts.font_path()
    assert path is not None and path.is_file() and "mplfonts" in path.parts
    assert font_manager.FontProperties(fname=str(path)).get_name() == fonts.COURSE_FONT
    assert any(f.fname == str(path) for f in font_manager.fontManager.ttflist)
    assert matplotlib.rcParams["font.sans-serif"][0] == fonts.COURSE_FONT
    assert pipelab.fonts is fonts


def test_register_is_idempotent_and_restores_the_font_order():
    matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans", fonts.COURSE_FONT]
    before = len(font_manager.fontManager.ttflist)
    assert fonts.register() == fonts.COURSE_FONT
    assert fonts.register() == fonts.COURSE_FONT
    assert len(font_manager.fontManager.ttflist) == before
    assert matplotlib.rcParams["font.sans-serif"] == [fonts.COURSE_FONT, "DejaVu Sans"]
