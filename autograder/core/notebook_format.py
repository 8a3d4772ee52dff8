"""The committed form of a notebook file: what ``make release`` writes and what the drift checks compare."""

from __future__ import annotations

import json


def normalise_notebook(text: str) -> str:
    """Outputs cleared, execution counts null, stable JSON (indent 1, UTF-8 kept, sorted keys, ``\\n``)."""
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        for key in ("execution", "collapsed", "scrolled"):
            cell.get("metadata", {}).pop(key, None)
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
