"""Visible checks for lesson notebooks: print ``✅ …`` on success, raise a friendly ``AssertionError``.

Every message says what was checked, what was expected and what came back, in Chinese, e.g.
``❌ 总时间：期望 280.0，实际得到 290.0``.

A failed check raises :class:`CheckFailed` (an ``AssertionError``). In IPython/Jupyter, importing this
module installs a handler for it that shows the message first and then only the line of the student's
cell that failed, never this module's frames (issue 21); anywhere else it is an ordinary
``AssertionError`` with an ordinary traceback.
"""

from __future__ import annotations

import math
import numbers
import os
import traceback

__all__ = ["CheckFailed", "check_close", "check_equal", "check_true", "check_raises"]

_HERE = os.path.dirname(os.path.abspath(__file__))


class CheckFailed(AssertionError):
    """A visible check did not pass; its message says what was checked, expected and obtained."""


def _student_frames(tb) -> list[traceback.FrameSummary]:
    return [f for f in traceback.extract_tb(tb) if not os.path.abspath(f.filename).startswith(_HERE + os.sep)]


def _show_check_failure(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """IPython custom-exception handler: the message, then where in the cell the check failed."""
    lines = [str(value)]
    frames = _student_frames(tb)
    if frames:
        where = frames[-1]
        code = f"：{where.line.strip()}" if where.line else ""
        lines.append(f"（没有通过的检查在单元格第 {where.lineno} 行{code}）")
    shell._showtraceback(etype, value, lines)  # IPython leaves the display to the handler
    return lines


def _install_ipython_handler() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - pipelab works without IPython
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((CheckFailed,), _show_check_failure)


_install_ipython_handler()


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:.12g}"
    if isinstance(x, (list, tuple)) and len(x) <= 64:
        inner = ", ".join(_fmt(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
    return repr(x) if isinstance(x, str) else str(x)


def _ok(what: str) -> None:
    print(f"✅ {what}")


def _close(a, b, rel, abs_tol) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return False
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)
    return None  # not scalars


def _flatten(x):
    try:
        import numpy as np

        if isinstance(x, np.ndarray):
            return x.tolist()
        if isinstance(x, np.generic):
            return x.item()
    except ImportError:  # pragma: no cover
        pass
    return x


def _all_close(got, expected, rel, abs_tol) -> bool:
    got, expected = _flatten(got), _flatten(expected)
    r = _close(got, expected, rel, abs_tol)
    if r is not None:
        return r
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(
            _all_close(g, e, rel, abs_tol) for g, e in zip(got, expected, strict=True)
        )
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(
            _all_close(got[k], expected[k], rel, abs_tol) for k in got
        )
    return False


def check_close(got, expected, what: str, rel: float = 1e-9, abs_tol: float = 1e-9) -> None:
    """Numbers (or nested lists of numbers) equal within ``rel``/``abs_tol``."""
    if not _all_close(got, expected, rel, abs_tol):
        raise CheckFailed(
            f"❌ {what}：期望 {_fmt(_flatten(expected))}，实际得到 {_fmt(_flatten(got))}"
            f"（允许误差：相对 {rel:g}，绝对 {abs_tol:g}）"
        )
    _ok(what)


def check_equal(got, expected, what: str) -> None:
    """Exact equality (lists/tuples compared element-wise, numpy arrays converted to lists)."""
    g, e = _flatten(got), _flatten(expected)
    if isinstance(g, tuple):
        g = list(g)
    if isinstance(e, tuple):
        e = list(e)
    if type(g) is not type(e) and not (isinstance(g, numbers.Number) and isinstance(e, numbers.Number)):
        raise CheckFailed(
            f"❌ {what}：期望 {_fmt(e)}（{type(e).__name__}），实际得到 {_fmt(g)}（{type(g).__name__}）"
        )
    if not bool(g == e):
        raise CheckFailed(f"❌ {what}：期望 {_fmt(e)}，实际得到 {_fmt(g)}")
    _ok(what)


def check_true(condition, what: str, detail: str | None = None) -> None:
    """A condition that must hold; ``detail`` (optional) is shown when it does not."""
    if not _truthy(condition):
        extra = f"（{detail}）" if detail else ""
        raise CheckFailed(f"❌ {what}：期望条件成立，实际不成立{extra}")
    _ok(what)


def _truthy(x) -> bool:
    try:
        return bool(x)
    except Exception:  # e.g. numpy arrays with more than one element
        return False


def check_raises(fn, exc_type, what: str) -> None:
    """``fn()`` must raise ``exc_type`` (or a subclass)."""
    name = getattr(exc_type, "__name__", str(exc_type))
    try:
        fn()
    except exc_type:
        _ok(what)
        return
    except Exception as e:  # noqa: BLE001 - report the wrong exception type
        raise CheckFailed(f"❌ {what}：期望抛出 {name}，实际抛出了 {type(e).__name__}: {e}") from e
    raise CheckFailed(f"❌ {what}：期望抛出 {name}，实际没有抛出任何异常")
