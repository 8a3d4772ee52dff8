"""Shared pytest setup. Keep it minimal: topic-specific helpers live in their own test modules."""

import os
import time
from pathlib import Path

import pytest

# Figures must not need a display; notebooks switch to the inline backend themselves.
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def executed_notebook():
    """``executed_notebook(path)`` → (notebook, seconds): every cell run in a fresh python3 kernel,
    continuing after errors, ONCE per path and session (lesson 16's source, ~15 s, serves both
    test_lesson16_notebook and test_lesson16_extension). The notebook is shared: read it, never modify it."""
    import nbformat
    from nbclient import NotebookClient

    cache: dict[Path, tuple] = {}

    def run(path: Path) -> tuple:
        path = Path(path).resolve()
        if path not in cache:
            nb = nbformat.read(path, as_version=4)
            client = NotebookClient(nb, kernel_name="python3", timeout=60, allow_errors=True,
                                    resources={"metadata": {"path": str(path.parent)}})
            start = time.perf_counter()
            client.execute()
            cache[path] = (nb, time.perf_counter() - start)
        return cache[path]

    return run
