"""Render figures with no system font visible to matplotlib; a missing glyph is an error.

Run by ``tests/test_figure_glyphs.py`` in a subprocess whose environment has a fresh matplotlib
config/cache directory and an empty fontconfig configuration. Before anything draws, this script
removes from matplotlib's font list every font that is not bundled with matplotlib itself (so a
system-wide CJK font such as fonts-noto-cjk cannot help), and turns matplotlib's
"Glyph … missing from font(s)" warning into an exception.

    python tests/glyph_probe.py NOTEBOOK.ipynb …   every code cell in order; every figure rendered to PNG
    python tests/glyph_probe.py --bare TEXT        control: draw TEXT without importing pipelab
    python tests/glyph_probe.py --bare-silenced TEXT   the same after silencing the warning

Prints one JSON line (figures rendered per notebook, the font file used for sans-serif text) and exits
0, or exits 1 naming the notebook cell whose figure lacked a glyph.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.font_manager as fm  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

MISSING_GLYPH = r"Glyph \d+ .*missing from"


def hide_system_fonts() -> int:
    """Keep only the fonts shipped inside matplotlib; returns how many others were hidden."""
    bundled = Path(matplotlib.get_data_path()).resolve()
    mgr = fm.fontManager
    before = len(mgr.ttflist) + len(mgr.afmlist)
    mgr.ttflist = [f for f in mgr.ttflist if Path(f.fname).resolve().is_relative_to(bundled)]
    mgr.afmlist = [f for f in mgr.afmlist if Path(f.fname).resolve().is_relative_to(bundled)]
    mgr._findfont_cached.cache_clear()
    return before - len(mgr.ttflist) - len(mgr.afmlist)


class MissingGlyph(Exception):
    pass


def render_open_figures() -> int:
    """Draw every open figure to PNG (as the inline backend does) and close it; returns how many.

    Warnings are recorded with every filter overridden, so code that silenced the missing-glyph
    warning (as pipelab once did) cannot hide a miss here."""
    nums = plt.get_fignums()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for num in nums:
            plt.figure(num).savefig(io.BytesIO(), format="png", dpi=72)
    plt.close("all")
    missing = sorted({str(w.message) for w in caught if re.search(MISSING_GLYPH, str(w.message))})
    if missing:
        raise MissingGlyph("; ".join(missing))
    return len(nums)


def run_notebook(path: Path) -> int:
    import nbformat

    from autograder.grading.notebook import neutralise_magics

    nb = nbformat.read(path, as_version=4)
    os.chdir(path.parent)
    namespace = {"__name__": "__main__"}
    rendered = 0

    def show(*_args, **_kwargs):
        nonlocal rendered
        rendered += render_open_figures()

    plt.show = show
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        label = f"{path.name} cell {cell.get('id') or index}"
        try:
            exec(compile(neutralise_magics(cell.source)[0], label, "exec"), namespace)  # noqa: S102
            rendered += render_open_figures()
        except (UserWarning, MissingGlyph) as exc:
            print(f"{label}: {exc}", file=sys.stderr)
            sys.exit(1)
    return rendered


def main(argv: list[str]) -> None:
    hidden = hide_system_fonts()
    warnings.filterwarnings("error", message=MISSING_GLYPH, category=UserWarning)
    report: dict = {"hidden_system_fonts": hidden, "figures": {}}
    if argv[:1] in (["--bare"], ["--bare-silenced"]):
        if argv[0] == "--bare-silenced":
            warnings.filterwarnings("ignore", message=MISSING_GLYPH)
        fig, ax = plt.subplots()
        ax.set_title(" ".join(argv[1:]))
        try:
            report["figures"]["bare"] = render_open_figures()
        except (UserWarning, MissingGlyph) as exc:
            print(f"bare: {exc}", file=sys.stderr)
            sys.exit(1)
    else:
        for arg in argv:
            path = Path(arg).resolve()
            sys.path.insert(0, str(path.parent))
            report["figures"][path.name] = run_notebook(path)
    report["sans_serif_file"] = fm.findfont(
        fm.FontProperties(family=["sans-serif"]), fallback_to_default=False
    )
    print(json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
