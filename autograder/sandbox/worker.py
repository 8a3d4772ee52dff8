"""The process that runs a submission's code. It is started inside the sandbox and imports nothing
from the grader: this file is bind-mounted alone, read-only.

It is a *zygote*: it starts once per worker slot, pays for the interpreter and numpy once, then forks
one child per submission (and again after a crash or timeout). Only the child runs student code.

Channels:
  * ``ctrl`` (fd given on the command line): a Unix socket to the grader. Length-prefixed JSON.
    The zygote answers ``spawn`` by forking a child and passing the grader the child's own socket
    (SCM_RIGHTS), and ``reap`` by killing every process the child left and cleaning its files.
  * the child's socket: ``ready`` after the notebook's cells ran, then one answer per ``call``.
  * the child's stdout/stderr go to a pipe the zygote drains and caps; they never reach a channel
    the grader reads results from, so printing cannot change a score.

Longer than 500 lines because it is one file by design: the sandbox mounts this script alone at
``/grader/worker.py``, with nothing of the package beside it (the worker contract in pyproject.toml).
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import json
import math
import os
import resource
import shutil
import signal
import socket
import struct
import sys
import threading
import time
import traceback

try:  # paid once here, not once per submission
    import numpy as np
except Exception:  # pragma: no cover - numpy is always installed
    np = None

HEADER = struct.Struct("!I")
MAX_MESSAGE = 64 * 1024 * 1024  # what the worker accepts from the grader (the notebook's cells)
OUTPUT_KEEP = 8 * 1024
MAX_ITEMS = 40_000  # values per converted result
# What the grader accepts from the sandbox, checked on the length prefix and with bytes.count before
# json.loads: parsing holds the GIL, so an unbounded reply would stall every other student's calls.
# One answer carries value, types, args_after and kwargs_after: at most ~4 tokens per item. The
# reference's largest answer (both lessons) is 32 KB and 5 700 tokens.
MAX_REPLY_BYTES = 4 * 1024 * 1024
MAX_REPLY_TOKENS = 200_000


def reply_cost(data: bytes) -> int:
    """An upper bound on the JSON values in ``data``: every value but the first follows a ',', '[' or
    '{' (or ':' in an object, which a ',' or '{' precedes). Counted in C, milliseconds for 4 MB."""
    return data.count(b",") + data.count(b"[") + data.count(b"{") + 1


# -- framing ----------------------------------------------------------------------------------------
def _encode(obj) -> bytes:
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates in a student's string: escaped; the grader replaces them
        return json.dumps(obj, ensure_ascii=True, allow_nan=False).encode("utf-8")


def send(sock: socket.socket, obj) -> None:
    _send_bytes(sock, _encode(obj))


def _send_bytes(sock: socket.socket, data: bytes) -> None:
    sock.sendall(HEADER.pack(len(data)) + data)


def send_answer(sock: socket.socket, answer: dict) -> None:
    """Send one call's answer; one the grader would refuse as too large becomes the student's error."""
    data = _encode(answer)
    if len(data) > MAX_REPLY_BYTES or reply_cost(data) > MAX_REPLY_TOKENS:
        data = _encode(
            {
                "id": answer.get("id"),
                "error": {
                    "type": "OverflowError",
                    "mro": ["OverflowError", "ArithmeticError", "Exception", "BaseException"],
                    "message": "result too large",
                },
            }
        )
    _send_bytes(sock, data)


def recv(sock: socket.socket):
    head = _recv_exact(sock, HEADER.size)
    if head is None:
        return None
    (size,) = HEADER.unpack(head)
    if size > MAX_MESSAGE:
        raise ValueError("message too large")
    body = _recv_exact(sock, size)
    return None if body is None else json.loads(body.decode("utf-8"))


def _recv_exact(sock: socket.socket, size: int):
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# -- plain data out -----------------------------------------------------------------------------------
def _qualname(obj) -> str:
    """``module.qualname`` of a subclass, always with a dot, so it never reads as a builtin's name."""
    cls = type(obj)
    try:
        module = type.__dict__["__module__"].__get__(cls)
        qual = type.__dict__["__qualname__"].__get__(cls)
    except Exception:
        return "<unknown type>"
    module = str.__str__(module)[:100] if isinstance(module, str) else "?"
    qual = str.__str__(qual)[:100] if isinstance(qual, str) else "?"
    return f"{module}.{qual}"


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_ITEMS

    def take(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise OverflowError("result too large")


def to_plain(x, budget: _Budget, depth: int = 0):
    """Return (value, types): ``value`` holds only JSON types, read through the base classes' own
    slots, so a subclass's ``__eq__``, ``__iter__``, ``__float__`` … are never consulted."""
    budget.take()
    if depth > 50:
        raise OverflowError("result nested too deeply")
    exact = type(x)
    if x is None:
        return None, "NoneType"
    if exact is bool:
        return (x is True), "bool"
    if isinstance(x, float):  # float, numpy.float64 and any subclass
        value = float.__float__(x)
        name = "float" if exact is float else _qualname(x)
        return _finite(value), name
    if isinstance(x, int):
        name = "int" if exact is int else _qualname(x)
        return int.__index__(x), name
    if isinstance(x, str):
        return str.__str__(x), ("str" if exact is str else _qualname(x))
    if exact is list or exact is tuple:  # the common case, a flat sequence of plain scalars: one pass
        flat = _flat(x)
        if flat is not None:
            budget.take(len(x))
            return flat, [exact.__name__, [_SCALARS[type(v)] for v in x]]
    if isinstance(x, list | tuple):
        base = list if isinstance(x, list) else tuple
        n = base.__len__(x)
        values, types = [], []
        for i in range(n):
            v, t = to_plain(base.__getitem__(x, i), budget, depth + 1)
            values.append(v)
            types.append(t)
        name = base.__name__ if exact is base else _qualname(x)
        return values, [name, types]
    if isinstance(x, dict):
        values, types = {}, {}
        for k, v in dict.items(x):
            if not isinstance(k, str):  # no user __repr__: through the base classes only
                if isinstance(k, bool) or k is None:
                    k = repr(k is True) if k is not None else "None"
                elif isinstance(k, int):
                    k = int.__repr__(k)
                elif isinstance(k, float):
                    k = float.__repr__(k)
                else:
                    k = "<key>"
            pv, pt = to_plain(v, budget, depth + 1)
            values[str.__str__(k)] = pv
            types[str.__str__(k)] = pt
        return values, ["dict" if exact is dict else _qualname(x), types]
    if np is not None and isinstance(x, np.generic):
        item = np.generic.item(x)
        if isinstance(item, complex) or not isinstance(item, bool | int | float):
            return None, f"unsupported:{_qualname(x)}"
        v, _ = to_plain(item, budget, depth + 1)
        return v, _qualname(x)
    if np is not None and isinstance(x, np.ndarray):
        base = np.asarray(x)  # a plain ndarray view: a subclass's dtype/size/shape/tolist are not consulted
        if type(base) is not np.ndarray:
            return None, f"unsupported:{_qualname(x)}"
        dtype = np.ndarray.__dict__["dtype"].__get__(base)
        if dtype.kind not in "biuf":
            return None, f"unsupported:numpy.ndarray[{dtype}]"
        budget.take(int(np.ndarray.__dict__["size"].__get__(base)))
        v, _ = to_plain(np.ndarray.tolist(base), budget, depth + 1)
        name = "numpy.ndarray" if exact is np.ndarray else _qualname(x)
        return v, [name, str(dtype), list(np.ndarray.__dict__["shape"].__get__(base))]
    return None, f"unsupported:{_qualname(x)}"


_SCALARS = {float: "float", int: "int", str: "str", bool: "bool", type(None): "NoneType"}


def _flat(x: list | tuple) -> list | None:
    """The values of an exact list or tuple whose items are all exact builtin scalars (no subclass, so
    nothing of the student's is consulted) and finite, else None (the general path converts it)."""
    for v in x:
        t = type(v)
        if t not in _SCALARS or (t is float and not math.isfinite(v)):
            return None
    return list(x)


def _finite(value: float):
    if math.isfinite(value):
        return value
    return {"__float__": repr(value)}


# -- tagged JSON in ----------------------------------------------------------------------------------
def from_json(x):
    if isinstance(x, list):
        if not any(isinstance(v, list | dict) for v in x):  # scalars as parsed: nothing tagged inside
            return x
        return [from_json(v) for v in x]
    if isinstance(x, dict):
        if "__tuple__" in x:
            return tuple(from_json(v) for v in x["__tuple__"])
        if "__ndarray__" in x:
            return np.array(from_json(x["__ndarray__"]), dtype=x.get("dtype", "float64"))
        if "__float__" in x:
            return float(x["__float__"])
        if "__dict__" in x:
            return {from_json(k): from_json(v) for k, v in x["__dict__"]}
        return {k: from_json(v) for k, v in x.items()}
    return x


# -- the child: one submission -------------------------------------------------------------------------
# by identity (id → name), taken before any student code runs: no __eq__/__hash__/__name__ of a
# student's class (or metaclass) is ever consulted
_BUILTIN_EXCEPTIONS = {
    id(v): k
    for k, v in vars(builtins).items()
    if isinstance(v, type) and issubclass(v, BaseException) and v.__name__ == k  # no aliases (IOError)
}


def describe_exception(exc: BaseException) -> dict:
    mro = []
    try:  # the real MRO (type's own slot: a metaclass property named __mro__ is not consulted)
        for cls in type.__dict__["__mro__"].__get__(type(exc)):
            name = _BUILTIN_EXCEPTIONS.get(id(cls))
            if name is not None:
                mro.append(name)
    except Exception:
        pass
    try:
        message = str(exc)[:2000]
    except BaseException:
        message = "<unprintable>"
    try:
        name = type.__getattribute__(type(exc), "__name__")
    except Exception:
        name = "<exception>"
    return {
        "type": str.__str__(name) if isinstance(name, str) else "<exception>",
        "mro": mro,
        "message": message,
    }


def resolve(namespace: dict, target: str):
    head, *rest = target.split(".")
    if head not in namespace:
        raise LookupError(f"the notebook defines no name {head!r}")
    obj = namespace[head]
    if isinstance(obj, type) and rest:
        obj = obj()
    for part in rest:
        obj = getattr(obj, part)
    return obj


def run_child(chan: socket.socket, cells: list, limits: dict) -> None:
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    cell_errors = []
    for index, source in cells:
        try:
            code = compile(source, f"<cell {index}>", "exec")
            exec(code, namespace)  # noqa: S102 - running the submission is the point
        except BaseException as exc:  # SystemExit and KeyboardInterrupt in a cell cost only that cell
            tb = traceback.format_exception_only(type(exc), exc)
            cell_errors.append({"cell": index, "error": "".join(tb).strip()[-600:]})
    names = sorted(k for k in namespace if not k.startswith("__"))[:200]
    send(chan, {"ready": True, "cell_errors": cell_errors, "names": names})
    while True:
        request = recv(chan)
        if request is None or request.get("op") == "end":
            return
        answer = {"id": request.get("id")}
        try:
            args = from_json(request.get("args", []))
            kwargs = from_json(request.get("kwargs", {}))
            fn = resolve(namespace, request["target"])
            result = fn(*args, **kwargs)
            answer["value"], answer["types"] = to_plain(result, _Budget())
        except BaseException as exc:  # noqa: BLE001 - any failure is the student's answer
            if isinstance(exc, SystemExit):
                answer["error"] = {
                    "type": "SystemExit",
                    "mro": ["SystemExit", "BaseException"],
                    "message": str(exc),
                }
            else:
                answer["error"] = describe_exception(exc)
        try:
            answer["args_after"], _ = to_plain(args, _Budget())
            answer["kwargs_after"], _ = to_plain(kwargs, _Budget())
        except BaseException:
            answer["args_after"], answer["kwargs_after"] = None, None
        send_answer(chan, answer)


def _die_with_parent() -> None:
    """SIGKILL this process when its parent dies (bubblewrap's --die-with-parent, also for the fallback)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except Exception:
        pass


def child_main(chan: socket.socket, out_w: int, workdir: str, cells: list, limits: dict) -> None:
    os.setsid()
    _die_with_parent()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    keep = {0, 1, 2, chan.fileno()}
    for fd in _open_fds():
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    os.chdir(workdir)
    cpu = int(limits.get("cpu_seconds", 60))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    fsize = int(limits.get("file_bytes", 16 << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    mem = int(limits.get("address_space_bytes", 0))
    if mem:
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    nproc = int(limits.get("processes", 0))
    if nproc:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    nofile = int(limits.get("open_files", 0))
    if nofile:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="replace")  # noqa: SIM115
    code = 0
    try:
        run_child(chan, cells, limits)
    except BaseException:
        code = 3
    finally:
        try:
            sys.stdout.flush()
        except BaseException:
            pass
    os._exit(code)


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


# -- the zygote --------------------------------------------------------------------------------------
class Zygote:
    def __init__(self, ctrl: socket.socket, scratch: str, in_sandbox: bool) -> None:
        self.ctrl = ctrl
        self.scratch = scratch
        self.in_sandbox = in_sandbox
        self.child_pid = 0
        self.counter = 0
        self.output = bytearray()
        self.output_bytes = 0
        self.drain = None
        self.workdir = ""
        self.own_uid = False  # every process of this uid is the sandbox's (the uid isolation)

    def serve(self) -> None:
        while True:
            msg = recv(self.ctrl)
            if msg is None or msg.get("op") == "quit":
                self.reap()
                return
            if msg["op"] == "spawn":
                self.reap()
                self.spawn(msg)
            elif msg["op"] == "reap":
                send(self.ctrl, self.reap())

    def spawn(self, msg: dict) -> None:
        self.counter += 1
        self.workdir = os.path.join(self.scratch, f"sub-{self.counter}")
        os.makedirs(self.workdir, mode=0o700)
        for name, text in msg.get("files", {}).items():
            with open(os.path.join(self.workdir, os.path.basename(name)), "w", encoding="utf-8") as fh:
                fh.write(text)
        parent_end, child_end = socket.socketpair()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            try:
                self.ctrl.close()
                parent_end.close()
                os.close(out_r)
                child_main(child_end, out_w, self.workdir, msg.get("cells", []), msg.get("limits", {}))
            finally:
                os._exit(4)
        child_end.close()
        os.close(out_w)
        self.child_pid = pid
        self.output = bytearray()
        self.output_bytes = 0
        self.drain = threading.Thread(target=self._drain, args=(out_r,), daemon=True)
        self.drain.start()
        socket.send_fds(self.ctrl, [HEADER.pack(0)], [parent_end.fileno()])
        parent_end.close()

    def _drain(self, fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            self.output_bytes += len(chunk)
            room = OUTPUT_KEEP - len(self.output)
            if room > 0:
                self.output += chunk[:room]
        os.close(fd)

    def reap(self) -> dict:
        report = {"reaped": True, "exit": None, "stray": 0}
        if not self.child_pid:
            return report
        report["stray"] = self._kill_everything()
        try:
            _, status = os.waitpid(self.child_pid, 0)
            report["exit"] = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            pass
        self.child_pid = 0
        if self.drain is not None:
            self.drain.join(timeout=2.0)
        report["output"] = self.output.decode("utf-8", "replace")
        report["output_bytes"] = self.output_bytes
        report["clean"] = self._clean_files() and self._clean_ipc()
        return report

    def _kill_everything(self) -> int:
        """Kill the child and every process it started, even those that changed session."""
        me = os.getpid()
        stray = 0
        for _round in range(50):
            victims = self._descendants(me)
            if not victims:
                return stray
            stray = max(stray, len(victims))
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._reap_zombies()
            time.sleep(0.002)
        return -1  # could not converge: the grader tears the sandbox down

    def _descendants(self, me: int) -> list[int]:
        if self.in_sandbox:  # our own PID namespace: everything but bwrap's init and us
            pids = []
            for name in os.listdir("/proc"):
                if name.isdigit() and int(name) not in (1, me):
                    pids.append(int(name))
            return pids
        if self.own_uid:  # a host uid of our own: every process of it but us
            return [pid for pid in _pids_of_uid(os.getuid()) if pid != me]
        # fallback: the child's session (processes that left it escape; SECURITY.md says so)
        pids = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
                ppid, sid = int(fields[1]), int(fields[3])
            except (OSError, IndexError, ValueError):
                continue
            if sid == self.child_pid or ppid == me:
                pids.append(int(name))
        return pids

    @staticmethod
    def _reap_zombies() -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def _clean_files(self) -> bool:
        """Remove everything a child wrote where the next child could see it (scratch and /tmp)."""
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        try:
            leftovers = os.listdir(self.scratch)
        except FileNotFoundError:
            leftovers = []
        except OSError:  # the child took the folder's permissions away (chmod 0o300): give them back
            try:
                os.chmod(self.scratch, 0o700)
                leftovers = os.listdir(self.scratch)
            except OSError:
                return False  # a scratch folder that cannot be emptied fails the reap: a fresh sandbox
        ok = _remove_entries(self.scratch, leftovers)
        if self.own_uid:  # what our uid left in the world-writable directories
            for top in ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue"):
                try:
                    names = os.listdir(top)
                except OSError:
                    continue
                ok = _remove_entries(top, names, keep=self.scratch, owner=os.getuid()) and ok
        if self.in_sandbox:  # our own /tmp: all of it (a /tmp we cannot list fails the reap)
            ok = _remove_entries("/tmp", os.listdir("/tmp"), keep=self.scratch) and ok
        return ok

    def _clean_ipc(self) -> bool:
        """Remove every System V IPC object (shared memory, message queues, semaphore sets) in the
        sandbox's IPC namespace, so the next child finds none. All of them belong to our uid (the
        only one mapped in the sandbox), so IPC_RMID is allowed; every process that had a segment
        attached is already dead, so its memory is freed now. False if any is left."""
        owner = os.getuid() if self.own_uid else None  # the uid isolation: the host's namespace, our uid's
        if not self.in_sandbox and owner is None:  # the fallback shares the host's IPC namespace
            return True
        libc = ctypes.CDLL(None, use_errno=True)
        remove = {
            "shm": lambda ident: libc.shmctl(ident, 0, None),  # IPC_RMID = 0
            "msg": lambda ident: libc.msgctl(ident, 0, None),
            "sem": lambda ident: libc.semctl(ident, 0, 0),
        }
        for kind, rm in remove.items():
            for ident in _ipc_ids(kind, owner):
                rm(ident)
        return not any(_ipc_ids(kind, owner) for kind in remove)


def _remove_entries(top: str, names: list[str], keep: str = "", owner: int | None = None) -> bool:
    """Remove the entries ``names`` of directory ``top`` but ``keep`` (with ``owner``: only those that
    uid owns); a symbolic link is removed, never followed. False if any could not be removed. The one
    cleanup of what a child left in scratch and /tmp (:meth:`Zygote._clean_files`)."""
    ok = True
    for name in names:
        path = os.path.join(top, name)
        try:
            if (owner is not None and os.lstat(path).st_uid != owner) or path == keep:
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError:
            ok = False
    return ok


def _ipc_ids(kind: str, owner: int | None = None) -> list[int]:
    """The ids of System V IPC objects of one kind; with ``owner``, only those whose uid it is."""
    try:
        with open(f"/proc/sysvipc/{kind}") as fh:
            header, *lines = fh.read().splitlines()
    except (OSError, ValueError):
        return []
    col = header.split().index("uid") if "uid" in header.split() else None
    return [
        int(line.split()[1])
        for line in lines
        if len(line.split()) > 1 and (owner is None or (col is not None and int(line.split()[col]) == owner))
    ]


def _pids_of_uid(uid: int) -> list[int]:
    """Processes whose real, effective or saved uid is ``uid`` (from /proc/<pid>/status, which a process
    cannot hide by making itself non-dumpable)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as fh:
                line = next(x for x in fh if x.startswith(b"Uid:"))
            if uid in {int(v) for v in line.split()[1:4]}:
                pids.append(int(name))
        except (OSError, StopIteration, ValueError):
            continue
    return pids


def _harden_imports(hidden: list[str]) -> None:
    """Make the course library and the grader unimportable (the sandbox already hides their files;
    this matters for the fallback without a sandbox)."""
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__name__.lower()]
    hidden_real = {os.path.realpath(h) for h in hidden}
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) not in hidden_real]
    for name in list(sys.modules):
        if name.split(".")[0] in {"pipelab", "autograder"}:
            del sys.modules[name]


def load_seccomp(fd: int) -> None:
    """Install the grader's compiled seccomp filter (``autograder.sandbox.seccomp_policy``, read from ``fd``) on
    this process and everything it will start; ``no_new_privs`` first, as the kernel requires."""

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    buf = ctypes.create_string_buffer(data, len(data))
    prog = _Prog(len(data) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(22, 2, ctypes.addressof(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


def main(argv: list[str]) -> None:
    ctrl_fd = int(argv[1])
    scratch = argv[2]
    in_sandbox = argv[3] == "sandbox"
    own_uid = argv[3] == "uid"  # the uid isolation: a host uid of our own, our seccomp filter in argv[4]
    hidden = argv[5:] if own_uid else argv[4:]
    if own_uid:
        load_seccomp(int(argv[4]))  # before anything else runs: no student code ever runs without it
    _harden_imports(hidden)
    try:  # a child must not be able to read this process's memory or ptrace it
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER = 36
    except Exception:
        pass
    _die_with_parent()  # a grader killed with SIGKILL leaves no zygote behind (the fallback has no bwrap)
    os.makedirs(scratch, exist_ok=True)
    ctrl = socket.socket(fileno=ctrl_fd)
    send(ctrl, {"hello": True, "pid": os.getpid(), "numpy": bool(np)})
    # everything loaded so far (the interpreter, numpy) is shared with each child copy-on-write: frozen,
    # the collector never walks it, so a child's collections do not write to (and copy) those pages
    gc.collect()
    gc.freeze()
    zygote = Zygote(ctrl, scratch, in_sandbox)
    zygote.own_uid = own_uid
    zygote.serve()


if __name__ == "__main__":
    main(sys.argv)
