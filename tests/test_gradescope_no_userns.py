"""The Gradescope zip in a container without user namespaces (issue 20).

Gradescope runs autograders in Docker containers, whose default seccomp profile (moby's
``profiles/seccomp/default.json``) refuses ``unshare``, ``setns``, ``mount`` and ``clone`` with any
``CLONE_NEW*`` flag to a container without ``CAP_SYS_ADMIN``: bubblewrap cannot start there. Here that
container is emulated without Docker:

* **the profile**: the calls it refuses to such a container (the ``CAP_SYS_ADMIN``, ``CAP_SYS_BOOT``,
  ``CAP_SYS_MODULE``, ``CAP_SYS_PACCT``, ``CAP_SYS_PTRACE``-only, ``CAP_SYS_RAWIO``, ``CAP_SYS_TIME``,
  ``CAP_SYS_TTY_CONFIG``, ``CAP_SYS_NICE``, ``CAP_DAC_READ_SEARCH`` rules, the calls absent from its
  allow-list, ``clone`` with namespace flags, ``clone3`` → ``ENOSYS``) fail with ``EPERM`` under a
  filter built with libseccomp and loaded before ``run_autograder`` starts, as runc loads it before the
  container's first process;
* **the file system**: a private mount namespace (made before the filter, as Docker's is) in which
  ``/tmp``, ``/root``, ``/home``, the checkout's top directory and every other top-level folder that is
  not the operating system's (``OS_DIRS``: a second checkout elsewhere is hidden too) are empty, but for the interpreter
  and the Gradescope root: a container holds nothing but the autograder.

The default zip (``--isolation bwrap``) then builds (setup.sh's check passes) and grades with the ``uid``
isolation, and the Gradescope attacks (results forgery, hidden-test reads, disk search, writes to the
grader's files, surviving processes) gain nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from autograder.authoring.demo import reference_code, with_code
from autograder.platforms import gradescope, gradescope_run
from autograder.sandbox import seccomp_policy
from tests.test_gradescope import (
    ASSIGNMENT,
    FORGERY,
    HOSTILE,
    NB,
    NO_CHALLENGE,
    RELEASE_NB,
    REPO,
    SCHEMA,
    SOURCE_NB,
    code_of,
    notebook_bytes,
)

MARKER = "86400.2020"  # a sleeper's argument: a process still running it survived its submission

#: what moby's default profile refuses to a container with Docker's default capabilities (no
#: CAP_SYS_ADMIN); every other call the grader makes is on its allow-list
DOCKER_REFUSED = (
    # allowed only with CAP_SYS_ADMIN
    "bpf", "fanotify_init", "fsconfig", "fsmount", "fsopen", "fspick", "lookup_dcookie", "mount",
    "mount_setattr", "move_mount", "open_tree", "perf_event_open", "quotactl", "quotactl_fd",
    "setdomainname", "sethostname", "setns", "syslog", "umount", "umount2", "unshare",
    # allowed only with other capabilities Docker does not grant by default
    "reboot", "delete_module", "init_module", "finit_module", "acct", "kcmp", "pidfd_getfd",
    "process_madvise", "iopl", "ioperm", "settimeofday", "clock_settime", "vhangup", "get_mempolicy",
    "mbind", "set_mempolicy", "open_by_handle_at",
    # not on the allow-list at all
    "keyctl", "add_key", "request_key", "userfaultfd", "kexec_load", "kexec_file_load", "swapon",
    "swapoff", "pivot_root", "uselib", "nfsservctl",
)  # fmt: skip
CLONE_NEW_MASK = 2114060288  # the profile's mask for clone's flags without CAP_SYS_ADMIN

LAUNCHER = textwrap.dedent(
    """
    import errno, json, os, sys
    import pyseccomp as sc

    refused, mask = json.loads(sys.argv[1]), int(sys.argv[2])
    f = sc.SyscallFilter(sc.ALLOW)
    f.set_attr(sc.Attr.CTL_NNP, 0)  # runc loads it without no_new_privs (root in the container)
    for name in refused:
        try:
            f.add_rule(sc.ERRNO(errno.EPERM), name)
        except (ValueError, OSError):
            pass
    f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, mask, mask))
    for bit in range(32):
        if mask >> bit & 1:
            f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, 1 << bit, 1 << bit))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    f.add_rule(sc.ERRNO(errno.EPERM), "socket", sc.Arg(0, sc.EQ, 40))  # AF_VSOCK
    f.load()
    os.execvp(sys.argv[3], sys.argv[3:])
    """
)

CONTAINER = textwrap.dedent(
    """
    set -e
    mount -t tmpfs -o mode=755 tmpfs /mnt
    i=0
    for keep in $KEEP; do mkdir -p /mnt/k$i; mount --bind "$keep" /mnt/k$i; i=$((i+1)); done
    for hide in $HIDE; do mount -t tmpfs -o mode=1777 tmpfs "$hide"; done
    i=0
    for keep in $KEEP; do mkdir -p "$keep"; mount --bind /mnt/k$i "$keep"; i=$((i+1)); done
    umount -l /mnt
    exec "$@"
    """
)


#: top-level directories of the operating system, kept in the emulated container (``/mnt`` is its scratch)
OS_DIRS = {
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "media", "mnt", "opt", "proc", "run",
    "sbin", "srv", "sys", "usr", "var",
}  # fmt: skip


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def in_container(root: Path, cmd: list[str], tmp: Path, **kw) -> subprocess.CompletedProcess:
    """``cmd`` in the emulated Gradescope container (see the module docstring)."""
    launcher = tmp / "docker_seccomp.py"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    # everything but the operating system's own directories: the checkout's top directory, and any other
    # folder of this machine (a second checkout, shared data) that a container would not hold
    top = "/" + Path(REPO).parts[1]
    others = sorted("/" + d for d in os.listdir("/") if d not in OS_DIRS)
    hide = [d for d in dict.fromkeys(("/tmp", "/root", "/home", top, *others)) if os.path.isdir(d)]
    keep = sorted(
        {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, str(root))} | {str(launcher.parent)},
        key=len,
    )
    keep = [k for k in keep if any(_under(k, h) for h in hide)]
    env = {
        **os.environ,
        "KEEP": " ".join(keep),
        "HIDE": " ".join(hide),
        gradescope_run.ROOT_ENV: str(root),
        gradescope_run.PYTHON_ENV: sys.executable,
    }
    env.pop("PYTHONPATH", None)
    full = [
        "unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", CONTAINER, "container",
        sys.executable, str(launcher), json.dumps(DOCKER_REFUSED), str(CLONE_NEW_MASK), *cmd,
    ]  # fmt: skip
    return subprocess.run(full, env=env, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def container_root(tmp_path_factory):
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv"):
        pytest.skip("emulating the container needs root (a private mount namespace), unshare and setpriv")
    if not seccomp_policy.available()[0]:
        pytest.skip(seccomp_policy.available()[1])
    base = tmp_path_factory.mktemp("gs-no-userns")
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "gradescope", ASSIGNMENT, "--out", str(base / "dist")],
        capture_output=True,
        text=True,
        timeout=180,
    )
    if proc.returncode != 0 and "bubblewrap" in proc.stderr:
        pytest.skip("the default zip needs bubblewrap where it is built")
    assert proc.returncode == 0, proc.stderr[-2000:]
    root = base / "autograder"
    gradescope.install(Path(proc.stdout.strip()), root)
    return root, base


def run_in_container(container_root, files: dict[str, bytes]) -> tuple[dict, str]:
    root, base = container_root
    sub = root / "submission"
    if sub.exists():
        shutil.rmtree(sub)
    sub.mkdir()
    for name, data in files.items():
        (sub / name).write_bytes(data)
    proc = in_container(root, [str(root / "run_autograder")], base, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)
    return data, proc.stdout


def _hostile(container_root, code: str) -> dict[str, bytes]:
    release = json.loads(RELEASE_NB.read_text(encoding="utf-8"))
    return {NB: notebook_bytes(with_code(release, code + NO_CHALLENGE))}


def test_bubblewrap_cannot_start_in_the_emulated_container(container_root, tmp_path):
    root, base = container_root
    if not shutil.which("bwrap"):
        pytest.skip("needs bubblewrap")
    probe = ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"]
    assert subprocess.run(probe, capture_output=True).returncode == 0  # outside it runs
    inside = in_container(root, probe, base)
    assert inside.returncode != 0, inside.stderr
    unshare = in_container(root, ["unshare", "--user", "true"], base)
    assert unshare.returncode != 0 and "Operation not permitted" in unshare.stderr


def test_the_default_zip_builds_and_grades_with_the_uid_isolation(container_root):
    root, base = container_root
    check = in_container(
        root, [sys.executable, "-m", "autograder.platforms.gradescope", "check"], base, cwd=root / "source"
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "isolation: separate uid" in check.stdout
    data, stdout = run_in_container(container_root, {NB: SOURCE_NB.read_bytes()})
    assert data["extra_data"]["isolation"].startswith("separate uid"), data["extra_data"]["isolation"]
    assert "isolation: separate uid" in stdout
    assert data["score"] >= 4 and data["extra_data"]["status"] == "ok", data["output"]
    items = data["extra_data"]["items"]
    assert {k: items[k]["score"] for k in ("simulator", "min_microbatches", "solver")} == {
        "simulator": 1.0,
        "min_microbatches": 1.0,
        "solver": 2.0,
    }, items


def test_hostile_submissions_gain_nothing_without_user_namespaces(container_root):
    root, _ = container_root
    hidden_test = root / "source" / "autograder" / "lessons" / ASSIGNMENT / "test_simulator.py"
    before = hidden_test.read_bytes()
    reference = reference_code(REPO / "autograder" / "lessons" / ASSIGNMENT)
    writes = reference + textwrap.dedent(
        f"""
            WROTE = []
            for path in ({str(hidden_test)!r}, {str(root / "run_autograder")!r}, {str(root / "results" / "x")!r},
                         {str(root / "source" / "autograder" / "grading" / "engine.py")!r}):
                try:
                    with open(path, "a") as fh:
                        fh.write("# planted")
                    WROTE.append(path)
                except OSError:
                    pass
            if not WROTE:
                class AsymmetricPipelineScheduler(AsymmetricPipelineScheduler):
                    def simulate_1f1b_execution(self, *a, **k):
                        raise NotImplementedError
                    def solve_optimal_layer_partition(self, *a, **k):
                        raise NotImplementedError
                    def min_microbatches_for_bubble(self, *a, **k):
                        raise NotImplementedError
            """
    )
    cases = {
        "forgery": reference + FORGERY.replace("{{ROOT}}", str(root)),
        "search": code_of(HOSTILE / "a10_search_disk_for_tests.py", root),
        "network": code_of(HOSTILE / "a25_network.py", root),
        "writes": writes,
    }
    for name, code in cases.items():
        data, _ = run_in_container(container_root, _hostile(container_root, code))
        assert data["extra_data"]["isolation"].startswith("separate uid"), name
        items = data["extra_data"]["items"]
        scores = [items[k]["score"] for k in ("simulator", "min_microbatches", "solver")]
        assert scores == [0, 0, 0], (name, data["output"])
        assert "forged" not in json.dumps(data), name
    assert hidden_test.read_bytes() == before
    assert "planted" not in (root / "run_autograder").read_text()


def _survivors() -> list[str]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        if MARKER in cmdline:
            out.append(f"{name} {status.splitlines()[:1]} {cmdline}")
    return out


def test_no_process_survives_its_submission_without_user_namespaces(container_root):
    root, _ = container_root
    code = code_of(HOSTILE / "a27_double_fork_sleeper.py", root).replace("gradescope-hostile", MARKER)
    data, _ = run_in_container(container_root, _hostile(container_root, code))
    assert data["extra_data"]["isolation"].startswith("separate uid")
    assert _survivors() == []


INSIDE = textwrap.dedent(
    r'''
    import json, sys, time
    sys.path.insert(0, sys.argv[1] + "/source")
    from autograder.grading.submission import Submission
    from autograder.platforms import gradescope_run
    from autograder.sandbox.isolation import Worker, resolve_isolation
    from autograder.sandbox.limits import Limits

    mode, _ = resolve_isolation("bwrap", container=True)
    gradescope_run.lock_down(gradescope_run.Path(sys.argv[1]))
    code = """
    import ctypes, os, socket
    def probe(paths):
        seen = {}
        for p in paths:
            try:
                seen[p] = sorted(os.listdir(p)) if os.path.isdir(p) else open(p).read()[:20]
            except OSError as e:
                seen[p] = e.strerror
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            seen["inet"] = "ok"
        except OSError as e:
            seen["inet"] = e.strerror
        status = open("/proc/self/status").read()
        seen["uid"] = os.getuid()
        seen["seccomp"] = status.split("Seccomp:")[1].split()[0]
        seen["no_new_privs"] = status.split("NoNewPrivs:")[1].split()[0]
        seen["unshare"] = ctypes.CDLL(None, use_errno=True).unshare(0x10000000)
        return seen
    """
    limits = Limits(call_timeout=20, load_timeout=20)
    worker = Worker(limits=limits, mode=mode)
    sub = Submission(worker=worker, cells=[(0, code)], limits=limits, deadline=time.monotonic() + 60)
    res = sub.call("probe", sys.argv[2:])
    sub.close()
    worker.stop(close=True)
    print(json.dumps({"mode": mode, "seen": res.value, "error": res.error}))
    '''
)


def test_inside_the_uid_isolation(container_root):
    """What student code sees there: no grader file, no network, its own uid, the filter, no namespace."""
    root, base = container_root
    script = base / "inside.py"
    script.write_text(INSIDE, encoding="utf-8")
    hidden = str(root / "source" / "autograder" / "lessons" / ASSIGNMENT / "test_simulator.py")
    paths = [hidden, str(root / "source"), str(root / "results"), str(root / "submission")]
    proc = in_container(root, [sys.executable, str(script), str(root), *paths], base)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["mode"] == "uid" and got["error"] is None, got
    seen = got["seen"]
    assert all(seen[p] == "Permission denied" for p in paths), seen
    assert seen["inet"] == "Operation not permitted"
    assert seen["uid"] not in (0, 65534) and seen["seccomp"] == "2" and seen["no_new_privs"] == "1"
    assert seen["unshare"] == -1
