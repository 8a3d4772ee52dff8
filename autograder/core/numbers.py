"""The one way a score is written for people and programs: rounded to 4 decimals, no trailing zeros
(``1.5``, ``0.875``, ``2``), and one mark for a score that is not there.

``MISSING`` (an en dash) stands for a missing score on every page, table and comment people read. A CSV
cell for a missing score is empty instead (``score(x, missing="")``): spreadsheets and LMS imports read
an empty cell as "no grade" and any mark as text.
"""

from __future__ import annotations

MISSING = "–"


def score(x: float | None, missing: str = MISSING) -> str:
    """``x`` as text: ``round(x, 4)`` without trailing zeros; ``missing`` when there is none."""
    if x is None:
        return missing
    return f"{round(float(x), 4):g}"


def score_cell(x: float | None) -> str:
    """A score in a CSV cell: :func:`score`, empty when missing."""
    return score(x, missing="")
