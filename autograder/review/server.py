"""What the review server (``python -m autograder formgrader``) lets a page do: review, nothing more.

formgrader pages show student text in the instructor's logged-in session. The review copies are inert
(:mod:`autograder.grading.review_copy`); this module is the second line, for the day something slips through:

* :class:`ReviewOnlyAuthorizer` (``--ServerApp.authorizer_class``): Jupyter's own APIs are read-only.
  No file written through ``/api/contents``, no kernel or session started (so no code run), no terminal
  (terminals are also disabled), no ``/nbconvert`` (it renders any notebook under OUT, the unsanitised
  submissions in ``OUT/submitted`` included), no server shutdown or config change.
* The server extension in this module (``--ServerApp.jpserver_extensions``) limits nbgrader's formgrader
  API to what review needs — reading, setting a grade or a comment, flagging a submission — and refuses
  the rest (``autograde`` would run a submission's code on this machine as the instructor, outside any
  sandbox; release/collect/assign/editing students or assignments are not review). It also sets
  the :data:`CSP` header on every response.
* :data:`CSP`: formgrader's pages use inline scripts and an inline ``onclick``, so ``'unsafe-inline'`` must
  stay, and MathJax 2 evaluates the page's ``text/x-mathjax-config`` block, so ``'unsafe-eval'`` must too
  (without it no formula was typeset and formgrader's own start-up, which waits for MathJax, never ran:
  ``tests/browser/test_hostile_review.py`` typesets the hostile page with the real MathJax). Neither lets
  in a script that was not already running. What the policy does block is everything a script would need
  to reach beyond this server — scripts, styles and fonts from anywhere but this server (MathJax is
  served by it: :data:`MATHJAX_PATH`), plugins, connections, images and frames from other origins, form
  posts elsewhere, ``<base>``.
* formgrader's Generate / Release Feedback buttons write our feedback pages
  (:mod:`autograder.classroom.review_feedback`, nbgrader's layout) and release them with nbgrader's own
  release_feedback when the server was given the course's exchange; the Manage Assignments page hides
  what a review-only server refuses (Edit, Generate, "Add new assignment...") and shows nbgrader's
  "exchange missing" warning only when an exchange was configured.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from pathlib import Path

from jupyter_server.auth.authorizer import Authorizer
from tornado import web

from autograder.classroom.review_feedback import regenerate
from autograder.gradebook import coursedir, database

#: where formgrader's pages load MathJax 2 from on the review server: this server (jupyter-server-mathjax,
#: see autograder/review/templates/mathjax.html.j2), not nbconvert's CDN
MATHJAX_PATH = "/static/jupyter_server_mathjax/MathJax.js"
CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        "font-src 'self' data:",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ]
)
#: Jupyter API resources a reviewer may not touch at all
DENIED_RESOURCES = frozenset({"nbconvert", "terminals"})
#: (resource, action) pairs allowed beyond reading: CSP violation reports only
ALLOWED_WRITES = frozenset({("csp", "write")})
#: formgrader API handlers (nbgrader.server_extensions.formgrader.apihandlers) and the methods other than
#: GET that review uses; every other POST/PUT/DELETE/PATCH of that API is refused
REVIEW_METHODS = {
    "GradeHandler": {"put"},
    "CommentHandler": {"put"},
    "FlagSubmissionHandler": {"post"},
}
WRITE_METHODS = ("post", "put", "delete", "patch")
#: the same for Manage Students: no Edit Student column, no "Add new student..."
REVIEW_ONLY_STUDENTS_STYLE = (
    "<style id='autograder-review-only'>"
    "table.table thead th:nth-child(5),td.edit,table.table tfoot{display:none}</style>"
)
#: formgrader's feedback buttons, answered by this server with our pages (autograder.classroom.review_feedback)
#: instead of nbgrader's generate_feedback (which would render the review copies over them)
FEEDBACK_HANDLERS = {
    "GenerateAllFeedbackHandler": "generate",
    "GenerateFeedbackHandler": "generate",
    "ReleaseAllFeedbackHandler": "release",
    "ReleaseFeedbackHandler": "release",
}
#: formgrader's Manage Assignments page on a review-only server: no Edit (assignment metadata) or
#: Generate (student version) column, no "Add new assignment..." (their API calls are refused)
REVIEW_ONLY_STYLE = (
    "<style id='autograder-review-only'>"
    "table.table thead th:nth-child(4),table.table thead th:nth-child(5),td.edit,td.assign,"
    "table.table tfoot{display:none}</style>"
)


class ReviewOnlyAuthorizer(Authorizer):
    """Read-only access to Jupyter's APIs; no terminals, no nbconvert."""

    def is_authorized(self, handler, user, action: str, resource: str) -> bool:
        if resource in DENIED_RESOURCES:
            return False
        return action == "read" or (resource, action) in ALLOWED_WRITES


def _refuse(self, *args, **kwargs):
    raise web.HTTPError(403, "not available on the review server (python -m autograder formgrader)")


def restrict_formgrader_api() -> list[str]:
    """Replace every non-review write method of formgrader's API handlers by a 403, and the feedback
    buttons' by :func:`_feedback_post`. Returns what was refused (``Handler.method``)."""
    from nbgrader.server_extensions.formgrader import apihandlers

    refused = []
    for _pattern, cls in apihandlers.default_handlers:
        if cls.__name__ in FEEDBACK_HANDLERS:
            cls.post = _feedback_post(FEEDBACK_HANDLERS[cls.__name__])
        for method in WRITE_METHODS:
            if method in REVIEW_METHODS.get(cls.__name__, set()) or cls.__name__ in FEEDBACK_HANDLERS:
                continue
            if getattr(cls, method) is not getattr(web.RequestHandler, method):
                setattr(cls, method, _refuse)
                refused.append(f"{cls.__name__}.{method}")
    return refused


def exchange_configured(config) -> bool:
    """The course names an exchange (``c.Exchange.root`` in a config file or on the command line)."""
    try:
        return "root" in config.get("Exchange", {})
    except AttributeError:
        return False


def _feedback_post(action: str):
    """formgrader's Generate / Release Feedback for one assignment (and one student): regenerate our
    pages (:func:`autograder.classroom.review_feedback.regenerate`) in nbgrader's layout; release them with
    nbgrader's own release_feedback when the course has an exchange. Answers as nbgrader's API does
    (``{"success", "log", "error"}``, shown by formgrader's dialog)."""

    from nbgrader.server_extensions.formgrader.base import check_xsrf

    @web.authenticated
    @check_xsrf
    async def post(self, assignment_id, student_id=None):

        out = Path(self.coursedir.root)
        try:
            report = await asyncio.to_thread(regenerate, out, assignment_id, student_id)
        except Exception as exc:  # noqa: BLE001 - the dialog says what went wrong
            self.log.exception("generating feedback for %s failed", assignment_id)
            self.write(
                json.dumps(
                    {
                        "success": False,
                        "error": f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc(limit=5)}",
                        "log": f"python -m autograder feedback --out {out} failed for {assignment_id}",
                    }
                )
            )
            return
        log = report.summary(out)
        if not report.pages:
            answer = {
                "success": False,
                "log": log,
                "error": f"no graded result of {assignment_id} in {out / 'results'}: grade it first",
            }
        elif action == "generate":
            answer = {"success": True, "log": log}
        else:
            api = self.api  # (re)reads the config files
            if not exchange_configured(self.coursedir.parent.config) or api.exchange_missing:
                answer = {
                    "success": False,
                    "log": log,
                    "error": (
                        f"The feedback pages are written ({out / 'feedback'}/<student>/{assignment_id}/"
                        "<notebook>.html), but this review server has no nbgrader exchange to release "
                        "them to. Where students fetch feedback with nbgrader, start it with the "
                        "course's exchange (python -m autograder formgrader --exchange DIR, i.e. "
                        "c.Exchange.root) or run `nbgrader release_feedback` where the exchange is; "
                        "otherwise hand the pages out through your LMS."
                    ),
                }
            else:
                released = await asyncio.to_thread(api.release_feedback, assignment_id, student_id)
                answer = {**released, "log": log + "\n" + (released.get("log") or "")}
        self.write(json.dumps(answer))

    return post


def _review_only_pages() -> None:
    """formgrader's Manage Assignments page as the review server serves it: :data:`REVIEW_ONLY_STYLE`,
    and nbgrader's "exchange directory does not exist" warning only where the course names an exchange."""
    from nbgrader.server_extensions.formgrader import handlers

    cls = handlers.ManageAssignmentsHandler
    if getattr(cls, "_autograder_review_only", False):
        return
    base_render = cls.render

    def render(self, name, **ns):
        if name == "manage_assignments.tpl" and ns.get("exchange_missing"):
            ns["exchange_missing"] = exchange_configured(self.coursedir.parent.config)
        html = base_render(self, name, **ns)
        return html.replace("</head>", REVIEW_ONLY_STYLE + "</head>", 1)

    cls.render = render
    cls._autograder_review_only = True

    students = handlers.ManageStudentsHandler  # Edit Student / Add new student: refused here too
    base_students = students.render

    def render_students(self, name, **ns):
        html = base_students(self, name, **ns)
        return html.replace("</head>", REVIEW_ONLY_STUDENTS_STYLE + "</head>", 1)

    students.render = render_students

    listing = handlers.GradebookNotebookSubmissionsHandler
    base_listing = listing.render

    def render_listing(self, name, **ns):
        html = base_listing(self, name, **ns)
        tag = f'<script src="{ns.get("base_url", "")}/autograder/static/extra_credit.js"></script>'
        return html.replace("</head>", tag + "</head>", 1)

    listing.render = render_listing


def extra_credit_of(out_dir, assignment_id: str, notebook_id: str) -> dict[str, float]:
    """Submitted-notebook id -> the extra credit nbgrader adds to its score (sum of its grades'
    ``extra_credit``), for the submissions that have some."""
    from sqlalchemy import func, select

    t = database._tables()
    g, sn, nb, a = t["grade"], t["submitted_notebook"], t["notebook"], t["assignment"]
    query = (
        select(sn.c.id, func.sum(g.c.extra_credit))
        .join(g, g.c.notebook_id == sn.c.id)
        .join(nb, sn.c.notebook_id == nb.c.id)
        .join(a, nb.c.assignment_id == a.c.id)
        .where(a.c.name == assignment_id, nb.c.name == notebook_id)
        .group_by(sn.c.id)
    )
    with database.session(coursedir.db_url_for(out_dir), write=False) as db:
        return {sid: float(v) for sid, v in db.connection().execute(query) if v}


def _extra_credit_handler():
    from jupyter_server.base.handlers import JupyterHandler

    class ExtraCreditHandler(JupyterHandler):
        @web.authenticated
        def get(self, assignment_id, notebook_id):

            root = Path(self.settings["nbgrader_formgrader"].coursedir.root)
            self.set_header("Content-Type", "application/json")
            self.write(json.dumps(extra_credit_of(root, assignment_id, notebook_id)))

    return ExtraCreditHandler


#: our copy of nbconvert's mathjax macro (``base/mathjax.html.j2``: MathJax from :data:`MATHJAX_PATH`)
TEMPLATES = str(Path(__file__).parent / "templates")


#: scripts this server adds to formgrader's pages (``/autograder/static/``)
STATIC = str(Path(__file__).parent / "static")


def _submission_pages() -> None:
    """formgrader's submission pages rendered with :data:`TEMPLATES` first among the exporter's template
    base directories (formgrader sets that option itself, so a command-line value would not stay), and
    with ``accept_suggestion.js`` (the score box's suggestion, accepted in one click)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    class ReviewExporter(HTMLExporter):
        def from_filename(self, filename, resources=None, **kw):
            html, res = super().from_filename(filename, resources=resources, **kw)
            base = (resources or {}).get("base_url", "")
            tag = f'<script src="{base}/autograder/static/accept_suggestion.js"></script>'
            return html.replace("</head>", tag + "</head>", 1), res

    def exporter(self):
        found = self.settings["nbgrader_exporter"]
        if not isinstance(found, ReviewExporter):  # a new exporter: nbconvert caches its templates
            found = ReviewExporter(
                config=found.config, extra_template_basedirs=[TEMPLATES, *found.extra_template_basedirs]
            )
            self.settings["nbgrader_exporter"] = found
        return found

    handlers.SubmissionHandler.exporter = property(exporter)


def _jupyter_server_extension_points():
    return [{"module": "autograder.review.server"}]


def _load_jupyter_server_extension(serverapp) -> None:
    refused = restrict_formgrader_api()
    _review_only_pages()
    _submission_pages()
    from jupyter_server.utils import url_path_join

    base = serverapp.web_app.settings.get("base_url", "/")
    serverapp.web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, "/autograder/static/(.*)"), web.StaticFileHandler, {"path": STATIC}),
            (url_path_join(base, "/autograder/extra_credit/([^/]+)/([^/]+)"), _extra_credit_handler()),
        ],
    )
    serverapp.web_app.settings.setdefault("headers", {})["Content-Security-Policy"] = CSP
    serverapp.log.info("review server: formgrader API limited to review (refused %s); CSP set", refused)
