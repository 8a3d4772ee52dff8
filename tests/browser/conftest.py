"""Fixtures for the browser tests: a real JupyterLab / formgrader driven by Debian's Chromium via Playwright.

* ``chromium_path``: Chromium's executable (``$CHROMIUM``, else ``chromium`` on PATH, else
  ``/usr/bin/chromium``); every browser test is skipped, saying so, only when none is installed.
* ``browser``: one headless Chromium for the session, launched from that executable (Playwright downloads
  nothing) with a fresh temporary profile (``--user-data-dir`` is Playwright's own temporary directory,
  deleted on close).
* ``page``: a fresh browser context + page per test; a test that fails leaves ``FAILED.png`` next to its
  other screenshots.
* ``artifacts``: the test's output folder for screenshots,
  ``build/test-artifacts/browser/<test name>/`` (``$BROWSER_ARTIFACTS`` overrides the root); emptied at
  the start of the test so a run leaves only its own pictures. ``steps`` writes ``steps.txt`` there.
* ``lab``: a JupyterLab server (loopback, free port, random token) on a temporary COPY of ``lessons/``;
  the repository's lessons are never touched. Its config, settings, workspaces, runtime and IPython
  directories are temporary too, so nothing of the user's or of concurrent sessions leaks in.
* ``notebook_ui``: opens a notebook in ``page`` and returns a :class:`NotebookUI` (run cells through the
  menus, type into a cell's editor, read outputs, take screenshots).
* ``export_grades``: ``export_grades(OUT)`` runs ``python -m autograder export`` and returns grades.csv's rows.
* ``graded_class``: lesson 16's ``reference-notebook`` and one student with partial written answers from
  the sample class, graded with ``grade_class`` into a temporary OUT, with formgrader
  (``autograder.review.formgrader.start``) running on it.

Speed (the suite must stay under 3 minutes on a loaded 2-core machine): at the first browser test, the
servers the selected tests need are started in the background — JupyterLab boots, and the class is graded
and formgrader started in a worker thread — and the student-path tests are ordered before the instructor
path, so that grading overlaps with them.

Every server is started in its own process group and stopped in a ``finally`` (SIGTERM, then SIGKILL),
together with the kernels it started, also when a test fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder.review.formgrader import FormgraderServer, free_port

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
LESSONS = REPO / "lessons"
ARTIFACTS_ROOT = Path(os.environ.get("BROWSER_ARTIFACTS") or REPO / "build" / "test-artifacts" / "browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}
# JupyterLab user settings for the test server: no "get Jupyter news?" / update toasts over the page.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}
ASSIGNMENT_16, NOTEBOOK_16 = "16-asymmetric-pipeline", "asymmetric_pipeline"


# --------------------------------------------------------------------------------------------- browser


def find_chromium() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        pytest.skip(
            "browser tests skipped: no Chromium installed (apt-get install chromium, or set $CHROMIUM "
            "to its executable)"
        )
    return path


@pytest.fixture(scope="session")
def browser(chromium_path, early):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
    finally:
        pw.stop()


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


def _in_here(item) -> bool:
    return HERE in Path(str(item.path)).resolve().parents


def pytest_collection_modifyitems(session, config, items):
    """Within this folder's tests, run the student paths first: the instructor's class is graded in the
    background meanwhile (see ``early``). Other tests keep their places."""
    slots = [i for i, item in enumerate(items) if _in_here(item)]
    ours = [items[i] for i in slots]
    ours.sort(key=lambda item: "graded_class" in getattr(item, "fixturenames", ()))  # stable
    for i, item in zip(slots, ours, strict=True):
        items[i] = item


@pytest.fixture()
def artifacts(request) -> Path:
    folder = ARTIFACTS_ROOT / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture()
def steps(artifacts):
    """``steps("label")`` records the time since the previous step into ``<artifacts>/steps.txt``."""
    last = [time.monotonic()]
    lines: list[str] = []

    def step(label: str) -> None:
        now = time.monotonic()
        lines.append(f"{now - last[0]:7.2f} s  {label}")
        last[0] = now

    try:
        yield step
    finally:
        (artifacts / "steps.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture()
def page(browser, artifacts, request):
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN")
    context.set_default_timeout(30_000)
    pg = context.new_page()
    try:
        yield pg
    finally:
        if request.node.stash.get(_FAILED, False):
            try:
                pg.screenshot(path=str(artifacts / "FAILED.png"))
            except Exception as exc:  # noqa: BLE001 - a diagnostic must not hide the failure
                print(f"could not save FAILED.png: {exc}")
        context.close()


# -------------------------------------------------------------------------------------------- MathJax

# --------------------------------------------------------------------------------------------- export


@pytest.fixture(scope="session")
def export_grades():
    """``export_grades(OUT)`` runs ``python -m autograder export --out OUT`` as an instructor would and
    returns ``grades.csv`` as {(student_id, assignment_id): row}."""
    import csv

    def run(out: Path) -> dict[tuple[str, str], dict]:
        done = subprocess.run(
            [sys.executable, "-m", "autograder", "export", "--out", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
            return {(r["student_id"], r["assignment_id"]): r for r in csv.DictReader(fh)}

    return run


# --------------------------------------------------------------------------------------------- servers


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Jupyter's kernels run in their own sessions, not in its group)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def stop_process_group(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM the group ``proc`` leads (it was started with ``start_new_session``), SIGKILL if it stays,
    then SIGKILL any child of it (a kernel) that outlived it. Only processes these fixtures started."""
    kids = _children(proc.pid) if proc.poll() is None else []
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
    for pid in kids:
        try:
            os.killpg(pid, signal.SIGKILL)  # a kernel leads its own session
        except (ProcessLookupError, PermissionError):
            pass


def isolated_jupyter_env(home: Path) -> dict[str, str]:
    """Environment for a Jupyter server: temporary user config/settings/workspaces/runtime/IPython dirs
    (the venv's ``etc/jupyter`` still enables nbgrader), the venv's bin first on PATH."""
    dirs = {
        "JUPYTER_CONFIG_DIR": home / "config",
        "JUPYTER_RUNTIME_DIR": home / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": home / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": home / "lab-workspaces",
        "IPYTHONDIR": home / "ipython",
    }
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    for rel, value in LAB_SETTINGS.items():
        path = dirs["JUPYTERLAB_SETTINGS_DIR"] / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    env = dict(os.environ)  # MPLBACKEND as `make lab` / `make test` set it: notebooks must cope
    env.update({k: str(v) for k, v in dirs.items()})
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


class LabServer:
    """``jupyter lab`` on ``root_dir``, 127.0.0.1, a free port, a random token, in its own session.
    ``launch()`` returns at once; ``wait_ready()`` blocks until the API answers (relaunching on another
    port if someone took ours before the server bound it)."""

    def __init__(self, root_dir: Path, home: Path):
        self.root_dir, self.home = root_dir, home
        self.log_path = home / "jupyterlab.log"
        self.token = os.urandom(24).hex()
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.env = isolated_jupyter_env(home)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def launch(self) -> LabServer:
        self.port = free_port()
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.open_browser=False",
            f"--IdentityProvider.token={self.token}",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to read cell models back
        ]
        if os.geteuid() == 0:
            cmd.append("--ServerApp.allow_root=True")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                cwd=self.root_dir,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def wait_ready(self, timeout: float = 90.0, attempts: int = 3) -> LabServer:
        for attempt in range(attempts):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                status, _ = self.request("GET", "/api/status", timeout=2.0)
                if status == 200:
                    return self
                time.sleep(0.2)
            if self.proc.poll() is None or attempt == attempts - 1:
                break
            self.launch()  # it exited: most likely the port was taken meanwhile
        self.stop()
        raise RuntimeError(f"JupyterLab did not start; log {self.log_path}:\n{self.log_tail()}")

    def request(self, method: str, path: str, timeout: float = 10.0) -> tuple[int, object]:
        req = urllib.request.Request(
            self.base + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            return e.code, None
        except (OSError, ValueError):
            return 0, None

    def shutdown_kernels(self) -> None:
        """Free the CPU for the next test: delete every session (which shuts its kernel down)."""
        status, sessions = self.request("GET", "/api/sessions")
        if status == 200 and isinstance(sessions, list):
            for s in sessions:
                self.request("DELETE", f"/api/sessions/{s['id']}")

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc)


def start_lab(tmp: Path) -> LabServer:
    """Copy lessons/ into ``tmp`` and launch JupyterLab on the copy (returns at once)."""
    root = tmp / "lessons"
    shutil.copytree(LESSONS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    return LabServer(root, tmp / "home").launch()


# --------------------------------------------------------------------------------------------- instructor


@dataclass
class GradedClass:
    out: Path
    submissions: Path
    student: str  # the student with partial written answers
    results: dict = field(default_factory=dict)  # student_id -> SubmissionResult
    server: FormgraderServer | None = None


def _q1_answer(path: Path) -> str | None:
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:  # the sample class has a truncated file on purpose
        return None
    for cell in nb["cells"]:
        if (cell["metadata"].get("nbgrader") or {}).get("grade_id") == "q1":
            return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return None


def small_class(dest: Path, scratch: Path) -> tuple[Path, str]:
    """The sample class cut down to lesson 16's ``reference-notebook`` and the first student whose written
    answers are partial (the first paragraph of the reference). Returns (submissions dir, that student)."""
    from autograder.authoring.demo import build_sample_class, first_sentence_answers, reference_answers
    from autograder.core.layout import REPO as LAYOUT

    everyone = build_sample_class(scratch)
    source = json.loads((LAYOUT.sources / ASSIGNMENT_16 / f"{NOTEBOOK_16}.ipynb").read_text(encoding="utf-8"))
    partial_q1 = first_sentence_answers(reference_answers(source))["q1"]
    nb = Path(ASSIGNMENT_16) / f"{NOTEBOOK_16}.ipynb"
    students = sorted(p.name for p in everyone.iterdir() if (p / nb).is_file())
    reference = [s for s in students if s.endswith("-reference-notebook")]
    partial = [s for s in students if _q1_answer(everyone / s / nb) == partial_q1]
    assert reference and partial, f"the sample class changed: {students}"
    dest.mkdir(parents=True)
    for student in (reference[0], partial[0]):
        shutil.copytree(everyone / student / ASSIGNMENT_16, dest / student / ASSIGNMENT_16)
    return dest, partial[0]


def prepare_graded_class(tmp: Path, holder: GradedClass) -> GradedClass:
    """Build, grade, start formgrader on OUT and wait until it answers (runs in a worker thread)."""
    from autograder.classroom.batch import grade_class
    from autograder.review import formgrader

    holder.submissions, holder.student = small_class(tmp / "submitted", tmp / "everyone")
    holder.results = {
        r.student_id: r for r in grade_class(holder.submissions, holder.out, isolation="auto", quiet=True)
    }
    holder.server = formgrader.start(holder.out, app="lab", log_path=tmp / "formgrader.log")
    holder.server.wait_ready(timeout=90)
    return holder


# --------------------------------------------------------------------------------------------- early start


@dataclass
class Early:
    lab: LabServer | None = None
    graded: GradedClass | None = None
    grading: Future | None = None
    pool: ThreadPoolExecutor | None = None

    def stop(self) -> None:
        if self.grading is not None:
            try:
                self.grading.result(timeout=300)  # let the thread finish before stopping its server
            except Exception:  # noqa: BLE001 - reported by the test that uses it
                pass
        if self.pool is not None:
            self.pool.shutdown(wait=True)
        if self.graded is not None and self.graded.server is not None:
            self.graded.server.stop()
        if self.lab is not None:
            self.lab.stop()


@pytest.fixture(scope="session")
def early(request, tmp_path_factory, chromium_path):
    """Start, in the background, the servers the selected browser tests need (see the module docstring);
    stop them all at the end of the session, whatever happened."""
    needs = set()
    for item in request.session.items:
        if _in_here(item):
            needs.update(getattr(item, "fixturenames", ()))
    state = Early()
    try:
        if "lab" in needs:
            state.lab = start_lab(tmp_path_factory.mktemp("lab"))
        if "graded_class" in needs:
            tmp = tmp_path_factory.mktemp("instructor")
            state.graded = GradedClass(out=tmp / "out", submissions=tmp / "submitted", student="")
            state.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graded-class")
            state.grading = state.pool.submit(prepare_graded_class, tmp, state.graded)
        yield state
    finally:
        state.stop()
        for proc in (
            state.lab and state.lab.proc,
            state.graded and state.graded.server and state.graded.server.proc,
        ):
            assert proc is None or proc.poll() is not None, (
                "a server the browser tests started is still running"
            )


@pytest.fixture(scope="session")
def lab(early, tmp_path_factory):
    """JupyterLab on a temporary copy of lessons/ (shared by the student-path tests)."""
    if early.lab is None:  # not foreseen at collection: start it now (``early`` still stops it)
        early.lab = start_lab(tmp_path_factory.mktemp("lab"))
    return early.lab.wait_ready()


@pytest.fixture()
def graded_class(early, tmp_path_factory) -> GradedClass:
    """The graded small class with formgrader running on its OUT; formgrader is stopped after each test and
    started again on the same OUT for the next one (the gradebook keeps what earlier tests saved)."""
    if early.grading is None:  # not foreseen at collection: do it now (``early`` still stops it)
        tmp = tmp_path_factory.mktemp("instructor")
        early.graded = GradedClass(out=tmp / "out", submissions=tmp / "submitted", student="")
        early.grading = Future()
        early.grading.set_result(prepare_graded_class(tmp, early.graded))
    graded = early.grading.result(timeout=300)
    if graded.server.proc.poll() is not None:  # an earlier test stopped it: a fresh server on the same OUT
        from autograder.review import formgrader

        log = graded.server.log_path
        graded.server = formgrader.start(
            graded.out, app="lab", log_path=log.with_name(log.stem + "-again.log")
        )
        graded.server.wait_ready(timeout=90)
    try:
        yield graded
    finally:
        graded.server.stop()


# --------------------------------------------------------------------------------------------- notebook UI


def cell_index(notebook: Path) -> dict[str, int]:
    """grade_id → index of the cell in the notebook (the order JupyterLab renders them in)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    out = {}
    for i, cell in enumerate(nb["cells"]):
        gid = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
        if gid:
            out[gid] = i
    return out


class NotebookUI:
    """One notebook open in JupyterLab, driven as a person would: the menus, clicks on cells, the keyboard
    in the cell editor. The page's ``window.jupyterapp`` (``--LabApp.expose_app_in_browser``) is only
    read: to find this notebook's panel, its kernel status, and the cell models (to check that what was
    typed is what the notebook holds)."""

    def __init__(self, page, lab: LabServer, path: str):
        self.page, self.lab, self.path = page, lab, path
        self.index = cell_index(lab.root_dir / path)
        self.panel_id = ""

    # -- page scripts run against this notebook's panel (found by id among the main-area widgets)
    def _fn(self, body: str) -> str:
        return (
            "([id, arg]) => { const panel = [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id);"
            " if (!panel) return null; " + body + " }"
        )

    def js(self, body: str, arg=None):
        return self.page.evaluate(self._fn(body), [self.panel_id, arg])

    def wait_js(self, body: str, arg=None, timeout: float = 90_000) -> None:
        self.page.wait_for_function(self._fn(body), arg=[self.panel_id, arg], timeout=timeout)

    def _i(self, key: str | int) -> int:
        return self.index[key] if isinstance(key, str) else key

    # -- opening / waiting
    def open(self, workspace: str, timeout: float = 90_000) -> NotebookUI:
        """Open the notebook in a fresh JupyterLab workspace (``?reset``: nothing restored from an earlier
        page) and wait until its kernel is idle."""
        self.page.goto(
            f"{self.lab.base}/lab/workspaces/{workspace}/tree/{self.path}?reset&token={self.lab.token}"
        )
        self.page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=timeout)
        self.panel_id = self.page.wait_for_function(
            """(path) => {
              const w = [...window.jupyterapp.shell.widgets('main')].find(
                w => w.context && w.context.path === path && w.content && w.sessionContext);
              const kernel = w && w.context.isReady && w.sessionContext.session && w.sessionContext.session.kernel;
              return kernel && kernel.status === 'idle' ? w.id : false;
            }""",
            arg=self.path,
            timeout=timeout,
        ).json_value()
        self.cell(0).wait_for()
        return self

    def wait_idle(self, timeout: float = 90_000) -> None:
        """Kernel idle and no cell queued or running (Run All marks every queued cell as running at once);
        checked twice, 0.25 s apart."""
        body = """const k = panel.sessionContext.session && panel.sessionContext.session.kernel;
                  return !!k && k.status === 'idle'
                    && !panel.content.widgets.some(c => c.model.type === 'code' && c.model.executionState === 'running');"""
        self.wait_js(body, timeout=timeout)
        self.page.wait_for_timeout(250)
        self.wait_js(body, timeout=timeout)

    # -- cells
    def cell(self, key: str | int):
        return self.page.locator(
            f'[id="{self.panel_id}"] .jp-Cell[data-windowed-list-index="{self._i(key)}"]'
        )

    def scroll_to(self, key: str | int) -> None:
        """Scroll the cell to the top of the notebook and let the page lay it out (two animation frames)."""
        self.cell(key).wait_for(state="attached")
        self.cell(key).evaluate(
            "e => { e.scrollIntoView({block: 'start'});"
            " return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); }"
        )

    def select(self, key: str | int) -> None:
        """Select a cell in command mode by clicking its prompt area (not its editor)."""
        self.scroll_to(key)
        self.cell(key).locator(".jp-InputPrompt").click()
        self.page.keyboard.press("Escape")

    def source(self, key: str | int) -> str:
        return self.js("return panel.content.widgets[arg].model.sharedModel.getSource();", self._i(key))

    def set_source(self, key: str | int, code: str) -> None:
        """Replace the cell's code through its CodeMirror editor: click, select all, insert the text
        (one input event, as a paste would be; typing key by key would trigger auto-indentation)."""
        self.scroll_to(key)
        self.cell(key).locator(".cm-content").click()
        self.page.keyboard.press("ControlOrMeta+a")
        self.page.keyboard.insert_text(code)
        self.page.keyboard.press("Escape")  # back to command mode
        got = self.source(key)
        assert got == code, (
            f"the editor of cell {key!r} holds something else than what was inserted:\n{got[:500]}"
        )

    def outputs(self, key: str | int) -> str:
        """The cell's outputs as displayed (scrolled into view first)."""
        self.scroll_to(key)
        return self.cell(key).locator(".jp-OutputArea").inner_text()

    def wait_output(self, key: str | int, pattern: str, timeout: float = 90_000) -> str:
        """Wait until the cell's output matches the regex ``pattern``, scroll it into view and wait until
        the text as displayed matches too; returns that text. (Off-screen cells are not laid out —
        JupyterLab's windowing uses ``content-visibility`` — so the first wait reads ``textContent``.)"""
        body = """const out = panel.content.widgets[arg[0]].node.querySelector('.jp-OutputArea');
                  return !!out && new RegExp(arg[1]).test(out[arg[2]]);"""
        i = self._i(key)
        try:
            self.wait_js(body, [i, pattern, "textContent"], timeout=timeout)
            self.scroll_to(key)
            self.wait_js(body, [i, pattern, "innerText"], timeout=10_000)
        except Exception as exc:
            text = self.js(
                "const o = panel.content.widgets[arg].node.querySelector('.jp-OutputArea');"
                " return o ? o.textContent : '<no output area>';",
                i,
            )
            raise AssertionError(
                f"cell {key!r}: no output matching {pattern!r}; it shows:\n{text}\n"
                f"first error in the notebook: {self.first_error()}"
            ) from exc
        return self.outputs(key)

    def first_error(self) -> str | None:
        """The first cell whose outputs hold an error (index, grade_id, ename: evalue), for diagnostics."""
        found = self.js(
            """const cells = panel.content.widgets;
               for (let i = 0; i < cells.length; i++) {
                 if (cells[i].model.type !== 'code') continue;
                 const err = cells[i].model.outputs.toJSON().find(o => o.output_type === 'error');
                 if (err) return [i, `${err.ename}: ${err.evalue}`];
               }
               return null;"""
        )
        if not found:
            return None
        names = {i: k for k, i in self.index.items()}
        return f"cell {found[0]} ({names.get(found[0], '?')}): {found[1]}"

    _FIGURES = """return [...panel.content.widgets[arg].node.querySelectorAll('.jp-OutputArea-output img')]
                    .map(img => [img.complete, img.naturalWidth, img.naturalHeight]);"""

    def figures(self, key: str | int) -> list[list]:
        """[complete, naturalWidth, naturalHeight] of each image in the cell's outputs."""
        return self.js(self._FIGURES, self._i(key))

    def wait_figure(self, key: str | int, timeout: float = 15_000) -> list[list]:
        """Scroll the figure into view and wait until every image in its output has decoded with a
        non-zero size (and there is at least one)."""
        self.scroll_to(key)
        body = (
            "const f = (() => { " + self._FIGURES + " })();"
            " return f.length > 0 && f.every(x => x[0] && x[1] > 0 && x[2] > 0);"
        )
        try:
            self.wait_js(body, self._i(key), timeout=timeout)
        except Exception as exc:
            hint = ""
            if os.environ.get("MPLBACKEND", "").lower() == "agg":
                hint = (
                    "\nhint: the kernel inherits MPLBACKEND=Agg (the Makefile exports it, `make lab` too); a "
                    "notebook that does not run `%matplotlib inline` then draws nothing on plt.show()"
                )
            raise AssertionError(
                f"cell {key!r}: no rendered figure; images {self.figures(key)}, output:\n{self.outputs(key)}{hint}"
            ) from exc
        return self.figures(key)

    # -- menus
    def menu(self, menu: str, item: str) -> None:
        """Click ``menu`` in the menu bar, then ``item`` in the menu that opens."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(menu)}$")).click()
        entry = self.page.locator(".lm-Menu-content .lm-Menu-item:not(.lm-mod-hidden)").filter(
            has=self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$"))
        )
        entry.click()

    def run_all(self) -> None:
        self.menu("Run", "Run All Cells")

    def run_from(self, key: str | int) -> None:
        """Select the cell and Run → Run Selected Cell and All Below."""
        self.select(key)
        self.menu("Run", "Run Selected Cell and All Below")

    def screenshot(self, path: Path, key: str | int | None = None) -> Path:
        """The whole page, with the cell ``key`` scrolled to the top of the notebook."""
        if key is not None:
            self.scroll_to(key)
        self.page.screenshot(path=str(path))
        return path


@pytest.fixture()
def notebook_ui(page, lab):
    """``notebook_ui(path)`` opens ``lessons/<path>`` (the temporary copy) in ``page``; the kernels are
    shut down after the test."""
    opened: list[NotebookUI] = []

    def open_notebook(path: str) -> NotebookUI:
        ui = NotebookUI(page, lab, path).open(workspace=f"test-{len(opened)}-{os.urandom(4).hex()}")
        opened.append(ui)
        return ui

    try:
        yield open_notebook
    finally:
        lab.shutdown_kernels()
