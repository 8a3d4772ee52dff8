"""What every isolation gives the worker it starts: the resource limits (:class:`Limits`, the rubric's
``limits`` and ``$AUTOGRADER_LIMITS``), a scrubbed environment (:func:`clean_env`) and the worker script."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from autograder.core.layout import REPO

# run as a script, inside the sandbox, importing nothing of autograder
WORKER = Path(__file__).resolve().parent / "worker.py"
PROJECT_ROOT = REPO.root
LIMITS_ENV = "AUTOGRADER_LIMITS"  # JSON object overriding rubric limits (tests; an instructor's override)


@dataclass(frozen=True)
class Limits:
    call_timeout: float = 2.0  # wall clock per call into student code
    load_timeout: float = 5.0  # wall clock to run the notebook's cells
    submission_timeout: float = 60.0  # wall clock for one submission, all calls included
    cpu_seconds: int = 60
    address_space_bytes: int = 4 << 30
    file_bytes: int = 16 << 20
    processes: int = 16  # RLIMIT_NPROC (tasks, threads included) per sandbox; the kernel ignores it for
    # host root, so it binds only when the sandbox runs as an unprivileged host uid (see bwrap.sandbox_identity)
    tmpfs_bytes: int = 256 << 20
    open_files: int = 64  # RLIMIT_NOFILE per process: bounds what open files (memfds, pipes) can pin
    # the sandbox's cgroup: all its processes, their tmpfs files and memfds (autograder.sandbox.cgroups)
    memory_bytes: int = 1 << 30
    shm_bytes: int = 64 << 20  # System V shared memory in the sandbox's IPC namespace (kernel.shmall)

    @classmethod
    def from_rubric(cls, data: dict | None) -> Limits:
        """The rubric's ``limits``, then the overrides in ``$AUTOGRADER_LIMITS`` (a JSON object), if set."""
        data = dict(data or {})
        override = os.environ.get(LIMITS_ENV, "").strip()
        if override:
            try:
                extra = json.loads(override)
            except json.JSONDecodeError as exc:
                raise ValueError(f"${LIMITS_ENV} is not a JSON object: {exc}") from None
            if not isinstance(extra, dict):
                raise ValueError(f"${LIMITS_ENV} is not a JSON object")
            data.update(extra)
        defaults = cls()
        known = {k: type(getattr(defaults, k))(v) for k, v in data.items() if hasattr(defaults, k)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown limits in rubric: {', '.join(unknown)}")
        return cls(**known)

    def for_child(self) -> dict:
        return {
            "cpu_seconds": self.cpu_seconds,
            "address_space_bytes": self.address_space_bytes,
            "file_bytes": self.file_bytes,
            "processes": self.processes,
            "open_files": self.open_files,
        }


def clean_env(home: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
