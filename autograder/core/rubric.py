"""The rubric model: one lesson's ``rubric.yaml`` (schema: docs/ARCHITECTURE.md, "Rubric file"), loaded and
validated here and nowhere else.

``load_rubric(path)`` returns a :class:`Rubric` of :class:`Item` objects or raises :class:`RubricError`
naming the file and the problem. Written items keep their criteria as loaded (``Item.spec``): the scorer
(``autograder.grading.written``) reads them; their shape (ids, points, concepts, regular expressions,
deductions) is checked here by :func:`validate_written_item`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

KINDS = ("code", "written")


class RubricError(Exception):
    """The rubric or the hidden tests of an assignment are inconsistent (an instructor's error)."""


@dataclass(frozen=True)
class Item:
    id: str
    kind: str
    points: float
    title: str = ""
    summary: str = ""
    description: str = ""
    question: str = ""
    extra_credit: bool = False
    #: the item as written in rubric.yaml (criteria, deductions, concepts: what the written scorer reads)
    spec: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_code(self) -> bool:
        return self.kind == "code"

    @property
    def is_written(self) -> bool:
        return self.kind == "written"

    @property
    def criteria(self) -> list[dict]:
        return list(self.spec.get("criteria") or [])


@dataclass(frozen=True)
class Rubric:
    assignment: str
    notebook: str
    items: tuple[Item, ...]
    title: str = ""
    pass_line: float = 0.0
    limits: dict = field(default_factory=dict, compare=False)
    path: Path | None = field(default=None, compare=False)

    @property
    def code_items(self) -> list[Item]:
        return [it for it in self.items if it.is_code]

    @property
    def written_items(self) -> list[Item]:
        return [it for it in self.items if it.is_written]

    @property
    def written_ids(self) -> list[str]:
        return [it.id for it in self.written_items]

    @property
    def max_total(self) -> float:
        """Regular items' points (extra credit is on top)."""
        return sum(it.points for it in self.items if not it.extra_credit)

    def item(self, item_id: str) -> Item:
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)


def load_rubric(path: Path | str) -> Rubric:
    """Read and validate ``path`` (a rubric.yaml)."""
    path = Path(path)
    if not path.is_file():
        raise RubricError(f"{path.parent} has no rubric.yaml")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RubricError(f"{path}: not valid YAML ({exc})") from None
    return parse_rubric(data, path)


def parse_rubric(data: object, path: Path | str = "rubric.yaml") -> Rubric:
    path = Path(path)
    if not isinstance(data, dict):
        raise RubricError(f"{path}: expected a mapping at the top")
    for key in ("assignment", "notebook", "items"):
        if key not in data:
            raise RubricError(f"{path}: missing '{key}'")
    if not isinstance(data["items"], list) or not data["items"]:
        raise RubricError(f"{path}: 'items' must be a non-empty list")
    items, ids = [], set()
    for raw in data["items"]:
        if not isinstance(raw, dict):
            raise RubricError(f"{path}: every item must be a mapping")
        for key in ("id", "kind", "points"):
            if key not in raw:
                raise RubricError(f"{path}: an item lacks '{key}'")
        iid = raw["id"]
        if raw["kind"] not in KINDS:
            raise RubricError(f"{path}: item {iid}: kind must be code or written")
        if not isinstance(raw.get("extra_credit", False), bool):
            raise RubricError(f"{path}: item {iid}: extra_credit must be true or false")
        if raw.get("extra_credit") and raw["kind"] != "code":
            raise RubricError(
                f"{path}: item {iid}: only code items can be extra credit "
                "(written answers are confirmed in formgrader against their points)"
            )
        if iid in ids:
            raise RubricError(f"{path}: duplicate item id {iid}")
        ids.add(iid)
        if raw["kind"] == "written":
            try:
                validate_written_item(raw)
            except ValueError as exc:
                raise RubricError(f"{path}: {exc}") from None
            total = sum(float(c.get("points", 0)) for c in raw.get("criteria", []))
            if abs(total - float(raw["points"])) > 1e-9:
                raise RubricError(
                    f"{path}: item {iid}: criteria points {total} != item points {raw['points']}"
                )
        items.append(
            Item(
                id=str(iid),
                kind=raw["kind"],
                points=float(raw["points"]),
                title=str(raw.get("title", "")),
                summary=str(raw.get("summary", "")),
                description=str(raw.get("description", "")),
                question=str(raw.get("question", "")),
                extra_credit=bool(raw.get("extra_credit", False)),
                spec=raw,
            )
        )
    rubric = Rubric(
        assignment=str(data["assignment"]),
        notebook=str(data["notebook"]),
        items=tuple(items),
        title=str(data.get("title", "")),
        pass_line=float(data.get("pass_line", 0)),
        limits=dict(data.get("limits") or {}),
        path=path,
    )
    if rubric.pass_line > rubric.max_total:
        raise RubricError(
            f"{path}: pass_line above the total of {rubric.max_total} (extra credit not counted)"
        )
    return rubric


def criterion_units(crit: dict) -> list[dict]:
    """A criterion's alternatives: its ``options`` (any ``need`` of them), or the criterion itself."""
    return list(crit.get("options") or [crit])


def validate_written_item(item: dict) -> None:
    """Raise ``ValueError`` if a written rubric item is malformed (missing fields, bad regex, a deduction
    naming an unknown criterion, ``need`` larger than the number of options)."""
    iid = item.get("id", "?")
    if item.get("kind", "written") != "written":
        raise ValueError(f"item {iid}: not a written item")
    if not isinstance(item.get("points"), int | float) or item["points"] <= 0:
        raise ValueError(f"item {iid}: points must be a positive number")
    criteria = item.get("criteria") or []
    if not criteria:
        raise ValueError(f"item {iid}: no criteria")
    ids = set()
    for c in criteria:
        cid = c.get("id")
        if not cid or cid in ids:
            raise ValueError(f"item {iid}: criterion without id or duplicate id {cid!r}")
        ids.add(cid)
        if not isinstance(c.get("points"), int | float) or c["points"] < 0:
            raise ValueError(f"item {iid}/{cid}: points must be a non-negative number")
        if "options" in c and not 1 <= int(c.get("need", 1)) <= len(c["options"]):
            raise ValueError(f"item {iid}/{cid}: need must be between 1 and the number of options")
        for unit in criterion_units(c):
            if not unit.get("concepts"):
                raise ValueError(f"item {iid}/{cid}: no concepts")
            for entry in unit.get("misreadings") or []:
                try:
                    re.compile(entry["pattern"])
                except (KeyError, TypeError, re.error) as exc:
                    raise ValueError(f"item {iid}/{cid}: bad misreading {entry!r}: {exc}") from None
                if not str(entry.get("why") or "").strip():
                    raise ValueError(f"item {iid}/{cid}: a misreading needs a why (the note of its ✗)")
                if not isinstance(entry.get("half", False), bool):
                    raise ValueError(f"item {iid}/{cid}: a misreading's half must be true or false")
            for entry in unit.get("figures") or []:
                try:
                    re.compile(entry["cue"])
                    values = [float(v) for v in entry["values"]]
                except (KeyError, TypeError, ValueError, re.error) as exc:
                    raise ValueError(f"item {iid}/{cid}: bad figures entry {entry!r}: {exc}") from None
                if not values or entry.get("unit", "") not in ("", "%"):
                    raise ValueError(f"item {iid}/{cid}: figures need values and a unit of '' or '%'")
            for concept in unit["concepts"]:
                if not concept.get("name") or not concept.get("patterns"):
                    raise ValueError(f"item {iid}/{cid}: a concept needs a name and patterns")
                for p in concept["patterns"]:
                    try:
                        re.compile(p)
                    except re.error as exc:
                        raise ValueError(
                            f"item {iid}/{cid}/{concept['name']}: bad regex {p!r}: {exc}"
                        ) from None
    for d in item.get("deductions") or []:
        if d.get("when_missing") not in ids:
            raise ValueError(f"item {iid}: deduction names unknown criterion {d.get('when_missing')!r}")
