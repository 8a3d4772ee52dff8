"""``python -m bench``: run ``main()`` of every ``bench/bench_*.py`` module, in name order."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    root = str(here.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    failed = 0
    for path in sorted(here.glob("bench_*.py")):
        name = f"bench.{path.stem}"
        print(f"== {name} ==", flush=True)
        try:
            mod = importlib.import_module(name)
            mod.main()
        except Exception as e:  # keep going: one broken bench should not hide the others
            failed += 1
            print(f"{name} failed: {type(e).__name__}: {e}", file=sys.stderr)
        print(flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
