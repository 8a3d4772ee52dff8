"""The host-wide pool of sandbox uids: each live sandbox (a root grader's bubblewrap, or the ``uid``
isolation) runs as a host uid of its own, held through an flock'd file."""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time
from pathlib import Path

from autograder.sandbox.worker import _pids_of_uid

SANDBOX_UID = 65534  # host uid ("nobody") the sandbox runs as when the grader runs as root
# Each live sandbox gets its own uid below SANDBOX_UID, so RLIMIT_NPROC (counted per host uid) is a
# per-sandbox budget: a fork storm in one slot cannot make another student's fork or thread fail.
# The pool is host-wide: a uid is held through an flock'd file, so two grader processes on one machine
# (shards, a second course, parallel test runs) never share a uid; a dead holder releases it.
_UID_POOL = range(SANDBOX_UID, SANDBOX_UID - 256, -1)
# A fixed host path (not $TMPDIR, which a grader may set privately): only a root grader takes uids.
_UID_LOCK_DIR = Path(
    "/run/autograder-sandbox-uids" if os.access("/run", os.W_OK) else "/tmp/autograder-sandbox-uids"
)
_uids_held: dict[int, int] = {}  # uid -> fd of its lock file
_uid_lock = threading.Lock()


def take_uid(exclude: tuple[int, ...] = ()) -> int:
    _UID_LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    with _uid_lock:
        for uid in _UID_POOL:
            if uid in _uids_held or uid in exclude:
                continue
            fd = os.open(_UID_LOCK_DIR / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            _uids_held[uid] = fd
            return uid
    raise RuntimeError(f"more than {len(_UID_POOL)} sandboxes at once on this host")


def give_uid(uid: int) -> None:
    with _uid_lock:
        fd = _uids_held.pop(uid, None)
        if fd is not None:
            os.close(fd)


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (the uid isolation's), in rounds until none is left."""

    for _ in range(100):
        pids = _pids_of_uid(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)
