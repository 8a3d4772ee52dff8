"""The grader's side of the socket protocol with the worker: length-prefixed JSON out, and in, replies
from the sandbox read as untrusted (bounded in size and cost before they are parsed, made encodable)."""

from __future__ import annotations

import json
import select
import socket
import time

from autograder.core.untrusted import JSON_ESCAPE_TO_CLEAN_BYTES, clean_tree
from autograder.sandbox.worker import MAX_REPLY_BYTES, MAX_REPLY_TOKENS, reply_cost
from autograder.testing import Result

HEADER_SIZE = 4


def send(sock: socket.socket, obj) -> int:
    """Send one message; returns its size in bytes."""
    data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
    sock.settimeout(10)
    sock.sendall(len(data).to_bytes(4, "big") + data)
    return len(data) + 4


def result(target: str, answer: dict, body: bytes) -> Result:
    # non-finite floats come tagged; a reply without the tag (even escaped) has nothing to decode
    decode = decode_floats if (b"__float__" in body or b"\\u" in body) else _same
    return Result(
        target=target,
        value=decode(answer.get("value")),
        types=answer.get("types"),
        error=answer.get("error"),
        args_after=decode(answer.get("args_after")) or [],
        kwargs_after=decode(answer.get("kwargs_after")) or {},
    )


def _same(x):
    return x


class ReplyTooLarge(OSError):
    """The sandbox sent more than the grader parses (refused before reading or parsing it)."""


def recv(sock: socket.socket, timeout: float, with_body: bool = False):
    """One message (with ``with_body``: the message and its raw bytes) from the sandbox: untrusted, so its cost is bounded before it is paid (size from the
    length prefix, then an upper bound on its JSON values counted in C) and its strings are made
    encodable (a forged reply may hold escaped lone surrogates or NUL)."""
    deadline = time.monotonic() + timeout
    head = _recv_exact(sock, 4, deadline)
    if head is None:
        return None
    size = int.from_bytes(head, "big")
    if size > MAX_REPLY_BYTES:
        raise ReplyTooLarge(f"{size} bytes, over the limit of {MAX_REPLY_BYTES}")
    body = _recv_exact(sock, size, deadline)
    if body is None:
        return None
    cost = reply_cost(body)
    if cost > MAX_REPLY_TOKENS:
        raise ReplyTooLarge(f"about {cost} values, over the limit of {MAX_REPLY_TOKENS}")
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise OSError("garbled message from worker") from None
    obj = clean_tree(obj) if JSON_ESCAPE_TO_CLEAN_BYTES.search(body) else obj
    return (obj, body) if with_body else obj


# A reply that is already waiting when the deadline is checked counts as in time: the grader's thread
# may have been kept from running (another thread holding the GIL, a loaded CPU), and that is not the
# student's delay. Reading on past the deadline is capped, so a trickling sender gains at most this.
LATE_READ_GRACE = 2.0


def _waiting(sock: socket.socket) -> bool:
    """Whether data (or the peer's close) is waiting on ``sock`` right now."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # closed meanwhile (the sandbox was stopped)
        return True  # recv then reports the closed socket


def _recv_exact(sock: socket.socket, size: int, deadline: float):
    chunks, got = [], 0
    while got < size:
        left = deadline - time.monotonic()
        if left <= 0:
            if -left > LATE_READ_GRACE or not _waiting(sock):
                raise TimeoutError
            left = 0.05  # readable now: recv returns at once
        sock.settimeout(left)
        try:
            chunk = sock.recv(min(size - got, 1 << 20))
        except TimeoutError:
            continue  # the deadline check above decides (a late but waiting reply still counts)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def decode_floats(x):
    """Undo the worker's tagging of non-finite floats."""
    if isinstance(x, list):
        return [decode_floats(v) for v in x]
    if isinstance(x, dict):
        if set(x) == {"__float__"}:
            return float(x["__float__"])
        return {k: decode_floats(v) for k, v in x.items()}
    return x
