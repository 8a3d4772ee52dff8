"""What a submission imports that grading cannot give it, read from its source (never from a run): the
self-check warns about it, the feedback page names it."""

from __future__ import annotations

import ast
import importlib.util
import sys

#: importable where students work, hidden from the grading sandbox
HIDDEN_MODULES = ("pipelab", "autograder")


def _imported(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module.split(".")[0])
    return names


def missing_modules(code_cells: list[tuple[int, str]]) -> dict[str, int]:
    """{module: first cell} for imports the grader cannot satisfy: the hidden course library and grader,
    and anything not installed in the grader's environment."""
    out: dict[str, int] = {}
    for index, code in code_cells:
        for name in _imported(code):
            if name in out:
                continue
            if name in HIDDEN_MODULES or (
                name not in sys.stdlib_module_names and importlib.util.find_spec(name) is None
            ):
                out[name] = index
    return out
