"""The answer-group review page, served by the same Jupyter server as nbgrader's formgrader.

A Jupyter server extension (``python -m autograder formgrader`` enables it with
``--ServerApp.jpserver_extensions=autograder.review.group_page=True``; the server's root_dir is the grading
output directory OUT):

* ``GET  <base>/autograder/groups`` — every written item of OUT: answers, groups, outliers, reviews.
* ``GET  <base>/autograder/groups/<assignment>/<item>`` — the item's groups (representative answer,
  member count, suggested score, evidence, the members with links to their formgrader pages, a confirm
  form), then its outliers, one by one with the same form.
* ``POST <base>/autograder/groups/<assignment>/<item>/confirm`` — confirm one group
  (:func:`autograder.review.groups.confirm_group`), then back to the item page (303).

Authentication is the server's (token or login cookie; forms carry Jupyter's ``_xsrf`` field). Everything
that comes from a submission (answers, evidence quotes, student ids) is rendered as inert text: Jinja2
autoescaping, control and bidirectional-override characters shown as visible escapes (``\\u202e``), and a
Content-Security-Policy with no script source at all (``default-src 'none'``; the one stylesheet is
allowed by its hash), so even a missed escape could not run anything.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading
from pathlib import Path
from urllib.parse import urlencode

from jinja2 import DictLoader, Environment, StrictUndefined
from markupsafe import Markup
from tornado import web

from autograder.core import numbers
from autograder.review.groups import StaleGroup, confirm_group, review_items, shown, summary_rows

__all__ = ["render_index", "render_item"]

SAFE_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"

CSS = """
body { font: 15px/1.45 system-ui, "Noto Sans CJK SC", sans-serif; margin: 1.5rem 2rem; color: #1b1b1b; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; } h3 { font-size: 1rem; margin: 0; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .25rem .6rem; text-align: left; }
td.n, th.n { text-align: right; }
.group { border: 1px solid #bbb; border-radius: 6px; padding: .8rem 1rem; margin: 1rem 0; }
.group.done { border-color: #3a7d44; background: #f3faf4; }
.answer { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; border-left: 3px solid #999;
          padding: .5rem .7rem; margin: .5rem 0; max-height: 22rem; overflow: auto; font-size: 14px; }
.meta { color: #444; } .met { color: #1f6b2c; } .miss { color: #8a2a1a; }
.notice { padding: .6rem .9rem; border-radius: 6px; background: #e8f1fb; border: 1px solid #7aa7d8; }
.error { background: #fbeaea; border-color: #d87a7a; }
form.confirm { margin-top: .6rem; display: flex; gap: .6rem; align-items: flex-start; flex-wrap: wrap; }
form.confirm textarea { width: 32rem; height: 3.2rem; }
details summary { cursor: pointer; }
ul.members { columns: 3; }
"""
CSS_HASH = "sha256-" + base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
CSP = "; ".join(
    [
        "default-src 'none'",
        f"style-src '{CSS_HASH}'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'self'",
    ]
)


_env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_env.filters["v"] = shown
_env.filters["num"] = numbers.score

_LAYOUT = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>{{ title|v }}</title>
<meta name="referrer" content="same-origin"><style>{{ css }}</style></head>
<body>
<p><a href="{{ base }}formgrader">formgrader</a> · <a href="{{ base }}autograder/groups">答案组 / answer groups</a></p>
{% block body %}{% endblock %}
</body></html>"""

_INDEX = """{% extends "layout" %}{% block body %}
<h1>答案组 / Answer groups</h1>
<p class="meta">Answers of each written item, grouped by the criteria the static review found met and by
similar text. Confirm one score per group; outliers are reviewed one by one. Every score can still be
changed on its own in formgrader.</p>
<table id="items">
<tr><th>assignment</th><th>item</th><th class="n">answers</th><th class="n">groups</th>
<th class="n">in groups</th><th class="n">outliers</th><th class="n">reviews</th><th class="n">confirmed</th></tr>
{% for r in rows %}
<tr><td>{{ r.assignment|v }}</td>
<td><a href="{{ base }}autograder/groups/{{ r.assignment|urlencode }}/{{ r.item|urlencode }}">{{ r.item|v }}</a></td>
<td class="n">{{ r.answers }}</td><td class="n">{{ r.groups }}</td><td class="n">{{ r.in_groups }}</td>
<td class="n">{{ r.outliers }}</td><td class="n">{{ r.reviews }}</td><td class="n">{{ r.confirmed }}</td></tr>
{% else %}
<tr><td colspan="8">No graded written answers in this directory yet.</td></tr>
{% endfor %}
</table>
{% endblock %}"""

_ITEM = """{% extends "layout" %}{% block body %}
{% macro answer_block(g, n) %}
<section class="group{% if g.confirmed|length == g.size %} done{% endif %}" id="group-{{ g.key }}"
         data-key="{{ g.key }}" data-size="{{ g.size }}">
<h3>{% if g.low_confidence %}<span class="low-confidence">⚠ 低置信度 / low confidence</span> {% endif %}
{% if g.doubtful %}<span class="medium-confidence">? 置信度中等 / medium confidence</span> {% endif %}
{% if g.outlier %}Outlier {{ n }}{% else %}Group {{ n }}{% endif %}:
 <span class="size">{{ g.size }}</span> answer{% if g.size != 1 %}s{% endif %} ·
 suggested <span class="suggestion">{{ g.suggestion|num }}</span>/{{ g.points|num }}
 {% if not g.outlier %}· similarity ≥ {{ '%.2f'|format(g.similarity) }}{% endif %}
 · confirmed <span class="confirmed">{{ g.confirmed|length }}</span>/{{ g.size }}
 {% set scores = g.confirmed|map(attribute='confirmed')|map('num')|unique|list %}
 {% if scores %}(score{% if scores|length > 1 %}s{% endif %} {{ scores|join(', ') }}){% endif %}</h3>
{% if g.representative.flags %}<ul class="flags">
{% for f in g.representative.flags %}<li class="miss">⚠ {{ f|v }}</li>{% endfor %}
</ul>{% endif %}
{% if g.representative.doubts %}<ul class="doubts">
{% for d in g.representative.doubts %}<li class="miss">? {{ d|v }}</li>{% endfor %}
</ul>{% endif %}
<div class="answer representative">{{ g.representative.text|v }}</div>
<ul class="evidence">
{% for e in g.representative.evidence %}
<li class="{{ 'met' if e.met else 'miss' }}">{{ '✓' if e.met else '✗' }} {{ e.criterion|v }}{% if e.quote %}:
{% if not e.met and e.note %}{{ e.note|v }} {% endif %}「{{ e.quote|v }}」{% elif e.note %}: {{ e.note|v }}{% endif %}</li>
{% endfor %}
</ul>
<details><summary>{{ 'member' if g.outlier else 'members' }} ({{ g.size }})</summary>
<ul class="members">
{% for a in g.members %}
<li>{% if a.submission_id %}<a href="{{ base }}formgrader/submissions/{{ a.submission_id|urlencode }}/">{{ a.student_id|v }}</a>
{% else %}{{ a.student_id|v }}{% endif %}{% if a.confirmed is not none %} ({{ a.confirmed|num }}){% endif %}</li>
{% endfor %}
</ul>
{% if not g.outlier %}
{% for a in g.members[1:] %}<div class="answer member">{{ a.student_id|v }}: {{ a.text|v }}</div>{% endfor %}
{% endif %}
</details>
<form class="confirm" method="post" action="{{ base }}autograder/groups/{{ aid|urlencode }}/{{ iid|urlencode }}/confirm">
{{ xsrf }}<input type="hidden" name="key" value="{{ g.key }}">
<input type="hidden" name="label" value="{% if g.outlier %}Outlier {{ n }}{% else %}Group {{ n }}{% endif %}">
{% set value = scores[0] if scores|length == 1 and g.confirmed|length == g.size else g.suggestion|num %}
<label>score <input type="number" name="score" min="0" max="{{ g.points|num }}" step="0.25"
 value="{{ value }}" required></label>
<textarea name="comment" placeholder="comment for every member (empty: each keeps its own static-review evidence)"></textarea>
<label><input type="checkbox" name="overwrite" value="1"> also change members already confirmed</label>
<button type="submit">确认 / Confirm {{ g.size }}</button>
</form>
</section>
{% endmacro %}
{% set n_groups, n_outliers = review.multi|length, review.outliers|length %}
<h1>{{ aid|v }} · {{ iid|v }}: {{ review.answers }} answer{% if review.answers != 1 %}s{% endif %} →
 {{ n_groups }} group{% if n_groups != 1 %}s{% endif %} + {{ n_outliers }} outlier{% if n_outliers != 1 %}s{% endif %}</h1>
{% if notice %}<p class="notice{% if error %} error{% endif %}" id="notice">{{ notice|v }}</p>{% endif %}
{% if review.item.question %}<p class="meta">{{ review.item.question|v }}</p>{% endif %}
<p class="meta">Criteria: {% for c in review.item.criteria %}{{ c.id|v }} ({{ c.points|num }}){% if not loop.last %}, {% endif %}{% endfor %}.
 {% if review.unreadable %}Not grouped (no answers to read): {{ review.unreadable|join('; ')|v }}.{% endif %}</p>
<h2>Groups ({{ review.multi|length }})</h2>
{% for g in review.multi %}{{ answer_block(g, loop.index) }}{% else %}<p>none</p>{% endfor %}
<h2 id="outliers">Outliers ({{ review.outliers|length }})</h2>
{% for g in review.outliers %}{{ answer_block(g, loop.index) }}{% else %}<p>none</p>{% endfor %}
{% endblock %}"""

_env.loader = DictLoader({"layout": _LAYOUT, "index": _INDEX, "item": _ITEM})


def render_index(rows: list[dict], base: str = "/") -> str:
    return _env.get_template("index").render(
        rows=rows, base=base, css=Markup(CSS), title="答案组 / Answer groups"
    )


def render_item(review, base: str = "/", xsrf: str = "", notice: str = "", error: bool = False) -> str:
    return _env.get_template("item").render(
        review=review,
        aid=review.assignment_id,
        iid=review.item_id,
        base=base,
        xsrf=Markup(xsrf),
        notice=notice,
        error=error,
        css=Markup(CSS),
        title=f"{review.assignment_id} {review.item_id} · answer groups",
    )


# --------------------------------------------------------------------------------------------- server


def _handler_base():
    from jupyter_server.base.handlers import JupyterHandler

    class Base(JupyterHandler):
        def initialize(self, out: Path) -> None:
            self.out = out

        @property
        def content_security_policy(self) -> str:
            return CSP

        def set_default_headers(self) -> None:
            super().set_default_headers()
            self.set_header("Cache-Control", "no-store")
            self.set_header(
                "Referrer-Policy", "same-origin"
            )  # no-referrer would send Origin: null, which Jupyter refuses

        async def reviews(self, aid: str | None = None, iid: str | None = None):
            return await asyncio.get_running_loop().run_in_executor(None, review_items, self.out, aid, iid)

        def page(self, html: str, status: int = 200) -> None:
            self.set_status(status)
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.finish(html)

    return Base


def _handlers(out: Path, base_url: str):
    from jupyter_server.utils import url_path_join

    Base = _handler_base()

    class Index(Base):
        @web.authenticated
        async def get(self) -> None:
            self.page(render_index(summary_rows(await self.reviews()), self.base_url))

    class Item(Base):
        @web.authenticated
        async def get(self, aid: str, iid: str) -> None:
            found = await self.reviews(aid, iid)
            if not found:
                raise web.HTTPError(404, "no such written item in this grading directory")
            notice = self.get_argument("notice", "")
            error = self.get_argument("error", "") == "1"
            self.page(render_item(found[0], self.base_url, self.xsrf_form_html(), notice, error))

    class Confirm(Base):
        @web.authenticated
        async def post(self, aid: str, iid: str) -> None:
            key = self.get_body_argument("key", "")
            comment = self.get_body_argument("comment", "")
            overwrite = self.get_body_argument("overwrite", "") == "1"
            error = False
            try:
                score = float(self.get_body_argument("score", ""))
                report = await asyncio.get_running_loop().run_in_executor(
                    None, confirm_group, self.out, aid, iid, key, score, comment, overwrite
                )
                label = self.get_body_argument("label", "")[:40]  # "Group 2" as the page numbers it
                n = len(report.written)
                notice = f"Confirmed {numbers.score(report.score)} for {n} answer(s) ({label or 'the group'}"
                notice += f": {', '.join(report.written[:8])}{', ...' if n > 8 else ''})" if n else ")"
                if report.kept:
                    notice += f"; {len(report.kept)} already confirmed, left as they were"
            except (StaleGroup, ValueError) as exc:
                notice, error = str(exc), True
            query = urlencode({"notice": notice, **({"error": "1"} if error else {})})
            target = url_path_join(self.base_url, "autograder/groups", aid, iid)
            self.redirect(f"{target}?{query}#{'notice' if error else 'group-' + key}", status=303)

    prefix = url_path_join(base_url, "autograder/groups")
    return [
        (prefix + "/?", Index, {"out": out}),
        (url_path_join(prefix, f"({SAFE_ID})", f"({SAFE_ID})") + "/?", Item, {"out": out}),
        (url_path_join(prefix, f"({SAFE_ID})", f"({SAFE_ID})", "confirm"), Confirm, {"out": out}),
    ]


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "autograder.review.group_page"}]


def _warm_up() -> None:
    """Import what the first page needs (scikit-learn, the grader's rubric loading) ahead of the first
    request, which would otherwise wait for it (seconds on a busy machine). Importing in this background
    thread is the point, so these imports stay inside the function."""
    import sklearn.cluster  # noqa: F401
    import sklearn.feature_extraction.text  # noqa: F401

    from autograder.grading import assignment  # noqa: F401


def _load_jupyter_server_extension(serverapp) -> None:
    threading.Thread(target=_warm_up, name="answer-groups-warm-up", daemon=True).start()
    out = Path(serverapp.root_dir).resolve()
    base_url = serverapp.web_app.settings.get("base_url", "/")
    serverapp.web_app.add_handlers(".*$", _handlers(out, base_url))
    serverapp.log.info("autograder answer groups: %sautograder/groups (grading directory %s)", base_url, out)
