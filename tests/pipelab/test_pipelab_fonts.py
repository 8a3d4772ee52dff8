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


def test_simulations_alone_never_import_matplotlib_and_a_notebook_gets_the_font():
    import subprocess
    import sys

    probe = (
        "import sys, pipelab; assert 'matplotlib' not in sys.modules\n"
        "import matplotlib.pyplot, importlib; importlib.reload(pipelab)\n"
        "import matplotlib; assert matplotlib.rcParams['font.sans-serif'][0] == 'Noto Sans CJK SC'\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    setup_cell_order = (  # the lessons' setup cell: matplotlib first, then pipelab
        "import matplotlib.pyplot as plt\nimport pipelab\n"
        "assert plt.rcParams['font.sans-serif'][0] == 'Noto Sans CJK SC'\n"
    )
    r = subprocess.run([sys.executable, "-c", setup_cell_order], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
