"""A memory and process cgroup for each sandbox, where the grader can make one.

Per-process limits (``RLIMIT_AS``) do not see memory that no process maps: a ``memfd`` or a tmpfs file
held open, System V segments, pipe buffers. A cgroup's memory limit charges all of it to the sandbox
(page cache and shmem included), and its pids limit bounds tasks whatever uid they run as.

* **cgroup v2** (``/sys/fs/cgroup/cgroup.controllers``): a child of the grader's own cgroup with
  ``memory.max``, ``memory.swap.max`` 0 and ``pids.max`` (the grader's cgroup must delegate the memory
  and pids controllers: root, or a systemd ``Delegate=yes`` unit);
* **cgroup v1** (separate ``memory`` and ``pids`` hierarchies, as on this course's grading hosts):
  ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes``, no swap) and ``pids.max``.

The sandbox enters it before anything runs: :meth:`SandboxCgroup.wrap` prefixes the command with a shell
that writes its own pid into the cgroup and then execs the sandbox, so every process it starts is
inside. Where no cgroup can be made, :func:`usable` says why and the isolation text says so.
"""

from __future__ import annotations

import functools
import itertools
import os
import time
from pathlib import Path

from autograder.sandbox.limits import Limits

__all__ = ["NO_CGROUP_ENV", "SandboxCgroup", "new_cgroup", "usable"]

ROOT = Path("/sys/fs/cgroup")
_serial = itertools.count()

_ENTER = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done\nshift\nexec "$@"\n'


def _own_path(controller: str) -> str:
    """The grader's own cgroup in one hierarchy (v1: ``controller``; v2: ``""``), from /proc/self/cgroup."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return "/"


def _parents() -> tuple[str, list[Path]]:
    """("v2"|"v1", the directories new cgroups are made in)."""
    if (ROOT / "cgroup.controllers").is_file():
        own = ROOT / _own_path("").lstrip("/")
        return "v2", [own]
    out = []
    for controller in ("memory", "pids"):
        top = ROOT / controller
        own = top / _own_path(controller).lstrip("/")
        out.append(own if own.is_dir() else top)
    return "v1", out


class SandboxCgroup:
    """The cgroup(s) of one sandbox; :meth:`remove` once the sandbox's processes are gone."""

    def __init__(self, memory_bytes: int, pids: int) -> None:
        self.version, parents = _parents()
        name = f"autograder-{os.getpid()}-{next(_serial)}"
        self.dirs: list[Path] = []
        try:
            if self.version == "v2":
                parent = parents[0]
                _write(parent / "cgroup.subtree_control", "+memory +pids")
                d = parent / name
                d.mkdir()
                self.dirs.append(d)
                _write(d / "memory.max", str(memory_bytes))
                if (d / "memory.swap.max").exists():
                    _write(d / "memory.swap.max", "0")
                _write(d / "pids.max", str(pids))
            else:
                memory, pid_parent = parents
                d = memory / name
                d.mkdir()
                self.dirs.append(d)
                _write(d / "memory.limit_in_bytes", str(memory_bytes))
                if (d / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
                    _write(d / "memory.memsw.limit_in_bytes", str(memory_bytes))
                p = pid_parent / name
                p.mkdir()
                self.dirs.append(p)
                _write(p / "pids.max", str(pids))
        except OSError:
            self.remove()
            raise

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def wrap(self, cmd: list[str]) -> list[str]:
        """``cmd`` started inside this cgroup (a shell moves itself in, then execs ``cmd``)."""
        return ["/bin/sh", "-c", _ENTER, "cgroup", *self.procs_files, "--", *cmd]

    def memory_peak(self) -> int:
        """Most memory the sandbox held at once (bytes), 0 if unknown."""
        for name in ("memory.max_usage_in_bytes", "memory.peak"):
            try:
                return int((self.dirs[0] / name).read_text())
            except (OSError, ValueError, IndexError):
                continue
        return 0

    def remove(self) -> None:
        """Remove the cgroup(s); waits briefly for the last processes of a killed sandbox to go."""
        for d in reversed(self.dirs):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
        self.dirs = []


def _write(path: Path, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


@functools.lru_cache(maxsize=1)
def usable() -> tuple[bool, str]:
    """Whether the grader can give each sandbox a cgroup here, and a phrase for the isolation text."""
    try:
        probe = SandboxCgroup(64 << 20, 16)
    except OSError as exc:
        return False, f"no cgroup ({exc.strerror or exc}: the grader cannot create one here)"
    version = probe.version
    probe.remove()
    return True, f"own cgroup per sandbox ({version}: memory and pids limits, memfd and tmpfs charged)"


NO_CGROUP_ENV = "AUTOGRADER_NO_CGROUP"  # "1": no cgroup even where one could be made (tests, comparisons)


def new_cgroup(limits: Limits):
    """The sandbox's own memory and pids cgroup (:class:`SandboxCgroup`), or None where none can be made."""

    if os.environ.get(NO_CGROUP_ENV) == "1" or not usable()[0]:
        return None
    try:
        # pids: the student's tasks plus bubblewrap, its init, the zygote and the staging shell
        return SandboxCgroup(limits.memory_bytes, limits.processes + 8)
    except OSError:
        return None
