"""What hidden tests import: the rubric-item decorator, argument wrappers and the call result.

Tests run in the grader process. They never see a student's objects, only plain JSON data that the
sandboxed worker sent back, so nothing a student returns is compared with its own ``__eq__``.
"""

from __future__ import annotations

import builtins
import contextvars
import functools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from autograder.testing.seeding import per_submission, seed  # noqa: F401 - hidden tests import them from here


class CallTimeout(AssertionError):
    """The student's code did not answer within the per-call time limit."""


class WorkerCrashed(AssertionError):
    """The student's process died (crash, sys.exit, os._exit, killed by a resource limit)."""


def item(item_id: str, weight: float = 1.0, edge: bool = False, parts: dict[str, float] | None = None):
    """Attach a hidden test to a rubric item. ``edge=True`` marks edge-case/validation tests.

    ``parts`` splits the test's weight between the parts of the contract it checks (e.g. each returned
    value): ``{"total_time": 1, "bubble_ratio": 1}``. The test then wraps each check in
    ``with part(name):``; a part earns its share if it was checked and none of its checks failed, so a
    submission that gets one returned value right earns that value's share. An exception escaping the
    test (outside every ``part``: a call that raised, the wrong shape, a timeout) earns nothing."""
    if parts is not None and (not parts or any(float(w) <= 0 for w in parts.values())):
        raise ValueError(f"{item_id}: parts must be a non-empty mapping of positive weights")

    def mark(fn):
        fn.rubric_item = item_id
        fn.rubric_weight = float(weight)
        fn.rubric_edge = bool(edge)
        fn.rubric_parts = {str(k): float(v) for k, v in parts.items()} if parts else None
        try:  # also visible to pytest as a marker, so ``pytest -m simulator`` selects an item's tests
            import pytest

            fn = getattr(pytest.mark, item_id)(fn)
        except ImportError:  # pragma: no cover - pytest is always installed with the grader
            pass
        return fn

    return mark


@dataclass
class PartRecord:
    """What the engine collects while one test with parts runs: which parts were checked, which failed."""

    declared: dict[str, float]
    checked: set = field(default_factory=set)
    failed: dict = field(default_factory=dict)  # part -> first failure message

    def earned(self) -> float:
        """The share of the test's weight earned (0..1)."""
        got = sum(w for name, w in self.declared.items() if name in self.checked and name not in self.failed)
        return got / sum(self.declared.values())


_record: contextvars.ContextVar[PartRecord | None] = contextvars.ContextVar("autograder_part", default=None)


@contextmanager
def recording_parts(declared: dict[str, float]) -> Iterator[PartRecord]:
    """Used by the engine around one test: ``part`` blocks inside report to the record yielded."""
    record = PartRecord(dict(declared))
    token = _record.set(record)
    try:
        yield record
    finally:
        _record.reset(token)


@contextmanager
def part(name: str) -> Iterator[None]:
    """Attribute the checks inside to one part of the test (see ``item(parts=...)``). A failed check
    fails that part and the test carries on with the next; timeouts and crashes still end the test.
    Outside the engine (plain pytest on the reference) the assertions simply propagate."""
    record = _record.get()
    if record is None:
        yield
        return
    if name not in record.declared:
        raise KeyError(f"part {name!r} is not declared in the test's @item(parts=...)")
    record.checked.add(name)
    try:
        yield
    except (CallTimeout, WorkerCrashed):
        raise
    except AssertionError as exc:
        record.failed.setdefault(name, str(exc.args[0]) if exc.args else "结果与预期不符")


def memo(fn):
    """Cache an oracle's results by the repr of its arguments (lists welcome), for the grader process's
    life: hidden tests draw their cases from fixed seeds, so every submission of a class asks the same
    questions. The cached value is shared: tests must not modify it."""
    cache: dict[str, Any] = {}

    @functools.wraps(fn)
    def cached(*args, **kwargs):
        key = repr((args, sorted(kwargs.items())))
        if key not in cache:
            cache[key] = fn(*args, **kwargs)
        return cache[key]

    return cached


def approx(got: Any, expected: float, rel: float = 1e-9, abs_tol: float = 1e-9) -> bool:
    """True if ``got`` is a real number (not bool) close to ``expected``."""
    if isinstance(got, bool) or not isinstance(got, int | float):
        return False
    if math.isnan(expected):
        return isinstance(got, float) and math.isnan(got)
    return math.isclose(float(got), float(expected), rel_tol=rel, abs_tol=abs_tol)


@dataclass(frozen=True)
class Tuple:
    """Pass this argument to the student's code as a ``tuple``."""

    items: tuple

    def __init__(self, *items):
        object.__setattr__(self, "items", tuple(items[0]) if len(items) == 1 else tuple(items))


@dataclass(frozen=True)
class Array:
    """Pass this argument to the student's code as a ``numpy.ndarray``."""

    values: list
    dtype: str = "float64"


_PLAIN_ARG = frozenset({int, float, str, bool, type(None)})


def encode_arg(value: Any) -> Any:
    """Turn a test's argument into tagged JSON for the worker (tuples, arrays, non-finite floats)."""
    if isinstance(value, Tuple):
        return {"__tuple__": [encode_arg(v) for v in value.items]}
    if isinstance(value, Array):
        return {"__ndarray__": [encode_arg(v) for v in value.values], "dtype": value.dtype}
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, tuple):
        return {"__tuple__": [encode_arg(v) for v in value]}
    if isinstance(value, list):
        if all(type(v) in _PLAIN_ARG and (type(v) is not float or math.isfinite(v)) for v in value):
            return list(value)  # the common case: a flat list of plain numbers or strings, as is
        return [encode_arg(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[encode_arg(k), encode_arg(v)] for k, v in value.items()]}
    raise TypeError(f"hidden tests may only pass JSON-like data, not {type(value).__name__}")


#: builtin exception names: the only exception text of a call that a test may show (see :func:`public_error`)
BUILTIN_EXCEPTIONS = frozenset(
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
)


def public_error(error: dict | None) -> dict | None:
    """A call's error as tests may use and show it: ``type`` is the first builtin exception in the
    reported MRO (a student's ``class Leak_<input>(ValueError)`` shows as ``ValueError``), ``mro`` keeps
    only builtin names (``raised("ValueError")`` still matches subclasses), and the message is dropped.
    The student's code chose the class name and the message, and anything it chose could carry the hidden
    inputs it was called with back to the feedback page."""
    if error is None:
        return None
    mro = error.get("mro") if isinstance(error, dict) else None
    names = [
        n for n in (mro if isinstance(mro, list) else []) if isinstance(n, str) and n in BUILTIN_EXCEPTIONS
    ]
    first = error.get("type") if isinstance(error, dict) else None
    if isinstance(first, str) and first in BUILTIN_EXCEPTIONS and first not in names:
        names.insert(0, first)
    return {"type": names[0] if names else "Exception", "mro": names, "message": ""}


@dataclass
class Result:
    """What came back from one call into the student's code. ``error`` is always :func:`public_error`'s
    form: a builtin type name, never text the student's code chose."""

    target: str
    value: Any = None
    types: Any = None
    error: dict | None = None  # {"type": name, "mro": [names], "message": str}
    args_after: list = field(default_factory=list)
    kwargs_after: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.error = public_error(self.error)

    @property
    def ok(self) -> bool:
        return self.error is None

    def raised(self, exc_name: str) -> bool:
        """True if the call raised an instance of the builtin exception ``exc_name``."""
        return self.error is not None and exc_name in self.error.get("mro", [])

    def describe_failure(self) -> str:
        """The feedback line for a call that raised: the method and the builtin exception type only."""
        if self.error is None:
            return ""
        short = self.target.rsplit(".", 1)[-1]
        if self.raised("ImportError"):  # the module's name is not shown (a message is a channel): the notes
            return (
                f"{short} 抛出了 {self.error.get('type')}：它导入的模块评分时不可用（见“提示”）/ a module "
                "it imports is not available when grading (see the notes)"
            )
        return f"{short} 抛出了 {self.error.get('type')}（异常信息不显示 / message not shown）"


def type_name(types: Any) -> str:
    """The top-level type name of a ``Result.types`` tree."""
    return types[0] if isinstance(types, list) else str(types)


def is_real(types: Any) -> bool:
    """A Python float/int or a numpy floating/integer scalar (bool excluded)."""
    name = type_name(types)
    return name in {"float", "int"} or (name.startswith("numpy.") and ("float" in name or "int" in name))


def is_float(types: Any) -> bool:
    """A Python float, or a numpy floating scalar (``numpy.float64`` …)."""
    name = type_name(types)
    return name == "float" or (name.startswith("numpy.float"))
