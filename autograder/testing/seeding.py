"""Per-student hidden inputs: the random cases of a hidden test seeded from the student id and a course secret.

Without a secret (the default) nothing changes: :func:`seed` returns the test's own fixed seed, so every
submission of a class gets the same cases, as before. With one (``grade --secret FILE``, or the file
named by ``$AUTOGRADER_SECRET_FILE``), each student's random cases come from

    seed = first 8 bytes of HMAC-SHA256(secret, "<student id>\\0<the test's fixed seed>")

so two students get different inputs, one student always the same ones (a re-grade changes nothing), and
nobody can compute another student's inputs without the secret. Hidden tests opt in per case builder:

    from autograder.testing import per_submission, seed

    @per_submission                      # instead of functools.cache: cached per submission
    def _random_cases():
        rng = random.Random(seed(16_0101))   # instead of random.Random(16_0101)

Their fixed (hand-written) cases stay as they are, and they must catch each catalogued mistake:
``tests/test_seeding.py`` grades the catalogues of lessons 16 and 03 (both seeded) under several secrets
and requires the exact ``# expect:`` scores, so a mistake caught only by lucky random cases fails the suite.

The secret lives outside the repository (the instructor's file), never reaches a result, a feedback page or
a log: results carry only :func:`grader_fingerprint`, the grader's fingerprint with a 12-hex-digit SHA-256
tag of the secret, so ``merge`` refuses shards graded with different secrets and a re-grade with another
secret re-runs every submission.

What it protects against: one student's hidden inputs, once leaked (printed by their own code where a
platform shows output, posted on a forum), are worth nothing to another student, whose random cases
differ. What it does not: the fixed cases are the same for everyone; a student still sees their own inputs
wherever their code's output is shown; a leaked secret reveals everyone's inputs; in the unsandboxed
fallback student code runs as the grader's user and could read the secret file.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SECRET_ENV = "AUTOGRADER_SECRET_FILE"
MIN_SECRET_BYTES = 16
#: per-submission caches keep the cases of this many recent submissions (grading threads interleave)
CACHE_SUBMISSIONS = 32

_local = threading.local()


class SecretError(ValueError):
    """The course secret cannot be read or is too short."""


def load_secret(path: Path | str | None = None) -> bytes | None:
    """The course secret from ``path``, else from the file named by ``$AUTOGRADER_SECRET_FILE``, else None
    (no per-student seeding). Surrounding whitespace is ignored; at least 16 bytes are required."""
    if path is None:
        path = os.environ.get(SECRET_ENV) or None
    if path is None:
        return None
    try:
        secret = Path(path).read_bytes().strip()
    except OSError as exc:
        raise SecretError(f"cannot read the course secret {path} ({exc.strerror})") from None
    if len(secret) < MIN_SECRET_BYTES:
        raise SecretError(
            f"the course secret in {path} is {len(secret)} bytes; use at least {MIN_SECRET_BYTES} random "
            'bytes, e.g. python -c "import secrets; print(secrets.token_hex(32))" > FILE'
        )
    return secret


def secret_tag(secret: bytes) -> str:
    """A short public tag of the secret (SHA-256, 12 hex digits): tells secrets apart, reveals nothing."""
    return hashlib.sha256(b"autograder course secret\0" + secret).hexdigest()[:12]


def grader_fingerprint(fingerprint: str, secret: bytes | None) -> str:
    """The fingerprint a result records: the assignment's own, plus the secret's tag when there is one."""
    return fingerprint if secret is None else f"{fingerprint}+s{secret_tag(secret)}"


def base_fingerprint(grader: str) -> str:
    """The assignment's part of a recorded fingerprint (without the secret's tag)."""
    return grader.split("+s", 1)[0]


@contextmanager
def for_student(secret: bytes | None, student_id: str) -> Iterator[None]:
    """Within this block (in this thread), :func:`seed` derives the seeds of ``student_id``."""
    previous = getattr(_local, "key", None)
    _local.key = None if secret is None else (secret, str(student_id))
    try:
        yield
    finally:
        _local.key = previous


def seed(base: int) -> int:
    """The seed of a hidden test's random cases: ``base`` (its fixed seed) without a course secret, else
    the student's own (see the module docstring)."""
    key = getattr(_local, "key", None)
    if key is None:
        return base
    secret, student = key
    digest = hmac.new(secret, f"{student}\0{base}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def _current() -> tuple | None:
    key = getattr(_local, "key", None)
    return None if key is None else (secret_tag(key[0]), key[1])


def per_submission(fn):
    """``functools.cache`` for case builders that use :func:`seed`: one cache entry per submission's seeds
    (one for the whole class without a secret, as before), the last :data:`CACHE_SUBMISSIONS` kept."""
    cache: OrderedDict = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(fn)
    def cached(*args, **kwargs):
        key = (_current(), args, tuple(sorted(kwargs.items())))
        with lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        value = fn(*args, **kwargs)
        with lock:
            cache[key] = value
            while len(cache) > CACHE_SUBMISSIONS:
                cache.popitem(last=False)
        return value

    cached.cache_clear = cache.clear
    return cached
