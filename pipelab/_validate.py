"""Input validation shared by the public functions (clear ``ValueError``/``TypeError`` messages)."""

from __future__ import annotations

import math
import numbers

import numpy as np


def array(
    values, what: str = "stage_times", *, allow_empty: bool = False, positive: bool = False
) -> np.ndarray:
    """A 1-D float array of finite non-negative (or positive) numbers, with a clear error otherwise."""
    if isinstance(values, (str, bytes)) or isinstance(values, numbers.Number) or values is None:
        raise TypeError(f"{what} must be a sequence of numbers, got {values!r}")
    if not isinstance(values, np.ndarray):
        values = list(values)
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"{what}[{i}] = {v!r} is not a number")
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be a sequence of numbers") from e
    if out.ndim != 1:
        raise ValueError(f"{what} must be a flat sequence of numbers")
    if not len(out) and not allow_empty:
        raise ValueError(f"{what} must not be empty")
    bad = ~np.isfinite(out) | (out < 0) | ((out == 0) if positive else False)
    if bad.any():
        i = int(np.argmax(bad))
        v = out[i]
        if not math.isfinite(v):
            raise ValueError(f"{what}[{i}] = {v} is not finite")
        raise ValueError(f"{what}[{i}] = {v:g} must be {'positive' if positive else 'non-negative'}")
    return out


def times(
    values, what: str = "stage_times", *, allow_empty: bool = False, positive: bool = False
) -> list[float]:
    return array(values, what, allow_empty=allow_empty, positive=positive).tolist()


def count(value, what: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {value}")
    return value


def nonneg(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be a number, got {value!r}") from e
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{what} must be a finite non-negative number, got {value!r}")
    return v


def buffer(value) -> int | None:
    if value is None:
        return None
    return count(value, "buffer_size", 1)
