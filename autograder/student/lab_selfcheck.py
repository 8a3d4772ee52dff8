"""The self-check in JupyterLab: nbgrader's **Validate** button runs ``autograder.student.selfcheck``.

A Jupyter server extension (enabled by ``jupyter-config/autograder.json``, installed into the
environment's ``etc/jupyter/jupyter_server_config.d``). nbgrader's Validate toolbar button saves the
notebook and POSTs its path to ``/assignments/validate``; this extension registers that route before
nbgrader's own (server extensions load in name order, and tornado takes the first route that matches), with
a subclass of nbgrader's handler: a notebook of one of this course's assignments gets the self-check
(the same sandbox as grading; visible scenarios only), anything else nbgrader's own validator. No
frontend code: the button, the dialog and their upgrades stay nbgrader's.

The dialog is nbgrader's, and it shows the self-check's own verdict, never nbgrader's stock "Success!
Your notebook passes all the tests." (which reads as full marks and hides the caveat that the hidden
tests were not run): the reply is nbgrader's one-failed-entry shape whatever the outcome, its
``source`` the verdict line (``自检 (selfcheck) ✅ …`` or ``❌ …``, with the caveat) and its ``error`` the
whole report, every text HTML-escaped (nbgrader puts ``error`` into ``innerHTML``). A small prebuilt
lab extension (``jupyter-config/labextension/autograder-selfcheck``, installed next to this one)
replaces nbgrader's heading for that entry ("The following cell failed:") with the verdict's and gives
a ready notebook nbgrader's success style.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from jupyter_server.utils import url_path_join
from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler
from tornado import web

from autograder.core.safe_text import html_text
from autograder.grading.submission import shutdown_workers
from autograder.student.selfcheck import Report, identify, selfcheck

_lock = threading.Lock()  # one self-check at a time: the sandbox pool is stopped after each


def run_selfcheck(path: Path) -> dict | None:
    """nbgrader's validate reply for ``path``, or None when the notebook is not one of our assignments."""

    probe = Report(path, None)
    try:
        if identify(path, probe) is None:
            return None
    except Exception:  # noqa: BLE001 - unreadable: let the self-check say so below
        pass
    with _lock:
        try:
            report = selfcheck(path)
        finally:
            shutdown_workers()
    return reply_for(report)


VERDICT_MARK = "自检 (selfcheck)"  # the lab extension recognises the self-check's entry by this


def reply_for(report) -> dict:
    """nbgrader's validate reply carrying the self-check's verdict (module docstring)."""
    mark = "✅" if report.ok else "❌"
    entry = {"source": f"{VERDICT_MARK} {mark} {report.verdict()}", "error": html_text(report.format())}
    return {"success": True, "value": {"failed": [entry]}}


class SelfcheckValidateHandler(ValidateAssignmentHandler):
    @web.authenticated
    async def post(self):
        try:
            rel = self.get_argument("path")
        except web.MissingArgumentError:
            rel = (self.get_json_body() or {}).get("path", "")
        root = Path(self.root_dir).resolve()
        target = (root / rel).resolve()
        if not target.is_relative_to(root):
            raise web.HTTPError(403, "Access denied: path outside allowed directory")
        loop = asyncio.get_running_loop()
        reply = await loop.run_in_executor(None, run_selfcheck, target)
        if reply is None:  # not a course notebook: nbgrader's own validator
            reply = await loop.run_in_executor(None, self.validate_notebook, rel)
        self.finish(json.dumps(reply))


def _jupyter_server_extension_points():
    return [{"module": "autograder.student.lab_selfcheck"}]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    web_app.settings.setdefault("root_dir", serverapp.root_dir)
    route = url_path_join(web_app.settings["base_url"], "/assignments/validate")
    web_app.add_handlers(".*$", [(route, SelfcheckValidateHandler)])
    serverapp.log.info(
        "autograder: nbgrader's Validate button runs the self-check (python -m autograder selfcheck)"
    )
