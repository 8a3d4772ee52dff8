"""What the review server (``python -m autograder formgrader``) lets a page do: review, nothing more.

formgrader pages show student text in the instructor's logged-in session. The review copies are inert
(:mod:`autograder.gradebook.review_copy`); this module is the second line, for the day something slips through:

* :class:`ReviewOnlyAuthorizer` (``--ServerApp.authorizer_class``): Jupyter's own APIs are read-only.
  No file written through ``/api/contents``, no kernel or session started (so no code run), no terminal
  (terminals are also disabled), no ``/nbconvert`` (it renders any notebook under OUT, the unsanitised
  submissions in ``OUT/submitted`` included), no server shutdown or config change.
* The server extension in this module (``--ServerApp.jpserver_extensions``) limits nbgrader's formgrader
  API to what review needs — reading, setting a grade or a comment, flagging a submission — and refuses
  the rest (``autograde`` would run a submission's code on this machine as the instructor, outside any
  sandbox; release/collect/assign/feedback/editing students or assignments are not review). It also sets
  the :data:`CSP` header on every response.
* :data:`CSP`: formgrader's pages use inline scripts and an inline ``onclick``, so ``'unsafe-inline'`` must
  stay, and MathJax 2 evaluates the page's ``text/x-mathjax-config`` block, so ``'unsafe-eval'`` must too
  (without it no formula was typeset and formgrader's own start-up, which waits for MathJax, never ran:
  ``tests/browser/test_hostile_review.py`` typesets the hostile page with the real MathJax). Neither lets
  in a script that was not already running. What the policy does block is everything a script would need
  to reach beyond this server — scripts, styles and fonts from anywhere but this server and the MathJax
  CDN nbconvert's template loads, plugins, connections, images and frames from other origins, form posts
  elsewhere, ``<base>``.
"""

from __future__ import annotations

from jupyter_server.auth.authorizer import Authorizer
from tornado import web

#: where nbconvert's templates load MathJax 2 from (with its ``Safe`` extension)
MATHJAX_ORIGIN = "https://cdnjs.cloudflare.com"
CSP = "; ".join(
    [
        "default-src 'self'",
        f"script-src 'self' 'unsafe-inline' 'unsafe-eval' {MATHJAX_ORIGIN}",
        f"style-src 'self' 'unsafe-inline' {MATHJAX_ORIGIN}",
        f"font-src 'self' data: {MATHJAX_ORIGIN}",
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


class ReviewOnlyAuthorizer(Authorizer):
    """Read-only access to Jupyter's APIs; no terminals, no nbconvert."""

    def is_authorized(self, handler, user, action: str, resource: str) -> bool:
        if resource in DENIED_RESOURCES:
            return False
        return action == "read" or (resource, action) in ALLOWED_WRITES


def _refuse(self, *args, **kwargs):
    raise web.HTTPError(403, "not available on the review server (python -m autograder formgrader)")


def restrict_formgrader_api() -> list[str]:
    """Replace every non-review write method of formgrader's API handlers by a 403. Returns what was
    refused (``Handler.method``)."""
    from nbgrader.server_extensions.formgrader import apihandlers

    refused = []
    for _pattern, cls in apihandlers.default_handlers:
        for method in WRITE_METHODS:
            if method in REVIEW_METHODS.get(cls.__name__, set()):
                continue
            if getattr(cls, method) is not getattr(web.RequestHandler, method):
                setattr(cls, method, _refuse)
                refused.append(f"{cls.__name__}.{method}")
    return refused


def _jupyter_server_extension_points():
    return [{"module": "autograder.review.server"}]


def _load_jupyter_server_extension(serverapp) -> None:
    refused = restrict_formgrader_api()
    serverapp.web_app.settings.setdefault("headers", {})["Content-Security-Policy"] = CSP
    serverapp.log.info("review server: formgrader API limited to review (refused %s); CSP set", refused)
