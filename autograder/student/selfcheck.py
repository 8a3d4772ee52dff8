"""A student's check before submitting: ``python -m autograder selfcheck lessons/<lesson>/<nb>.ipynb``.

It reads the notebook exactly as the grader does (``notebook.extract`` against the release), runs its
code in the grader's sandbox (``grading.submission.open_submission``: the same zygote and limits), and calls each
exercise method on the *visible* scenarios only: the literal calls written in the notebook's own check
cells. It never loads or runs the hidden tests, so it cannot show their names, inputs or scores; it
says whether the submission can be graded at all, in Chinese with the English terms students see in
JupyterLab.

Checks, each a :class:`Finding`: which assignment it is (by its cells; the folder's and file's names
are notes and warnings, never failures: ``grade`` grades a folder's only notebook, and a student
submits the file, not the folder); code
loads; no import of a module the grader lacks (``pipelab``, the grader, anything not installed);
each exercise method answers every visible scenario within the per-call limit (an infinite loop is a
timeout, not a hang; an unattempted extra-credit item is a warning, "不扣分"; private helpers are not
exercises); locked and check cells untouched; written answers not empty.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.registry import lessons
from autograder.core.safe_text import terminal_text
from autograder.grading.assignment import Assignment, load_assignment
from autograder.grading.imports import missing_modules
from autograder.grading.notebook import UnreadableNotebook, extract, neutralise_magics, read_notebook_bytes
from autograder.grading.submission import Submission, open_submission, shutdown_workers
from autograder.sandbox.isolation import resolve_isolation
from autograder.testing import Array, CallTimeout, WorkerCrashed

#: modules the grading sandbox hides on purpose (see sandbox_worker._harden_imports)
PLACEHOLDER = "YOUR ANSWER HERE"
OK, FAIL, WARN, NOTE = "ok", "fail", "warn", "note"
_MARK = {OK: "✅", FAIL: "❌", WARN: "⚠️ ", NOTE: "ℹ️ "}
#: the caveat every verdict carries: what the self-check does not know
CAVEAT = "自检只运行题目里的可视场景，不代表隐藏测试 (hidden tests) 的得分。"


@dataclass
class Finding:
    status: str  # ok | fail | warn | note
    topic: str  # short English term: naming, load, imports, timing, locked cells, answers
    text: str  # Chinese, for the student


@dataclass
class Report:
    notebook: Path
    assignment: str | None
    isolation: str = ""
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.status == FAIL for f in self.findings)

    def add(self, status: str, topic: str, text: str) -> None:
        self.findings.append(Finding(status, topic, text))

    def format(self) -> str:
        lines = [f"自检 (selfcheck)：{terminal_text(self.notebook)}"]
        if self.assignment:
            lines.append(f"作业 (assignment)：{self.assignment}")
        for f in self.findings:
            lines.append(f"{_MARK[f.status]} [{f.topic}] {terminal_text(f.text)}")
        if self.isolation:
            lines.append(f"沙箱 (sandbox)：{terminal_text(self.isolation)}")
        lines.append("")
        lines.append(self.verdict())
        return "\n".join(lines)

    def verdict(self) -> str:
        """One line: can the grader grade it, and the caveat."""
        if not self.ok:
            return "结论：请先修正标 ❌ 的问题再提交，否则评分器会给 0 分或无法评分。"
        warned = any(f.status == WARN for f in self.findings)
        return (
            "结论：可以提交。评分器能读取并运行这份 notebook"
            + ("（标 ⚠️ 的地方请看一眼）" if warned else "")
            + f"。（{CAVEAT}）"
        )


# -- which assignment is this? ------------------------------------------------------------------------
def _assignments() -> dict[str, Assignment]:
    return {name: load_assignment(found.directory) for name, found in lessons().items()}


def _grade_ids(path: Path) -> set[str]:

    nb = read_notebook_bytes(path)
    ids = set()
    for cell in nb.get("cells", []):
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
        if isinstance(nbg, dict) and isinstance(nbg.get("grade_id"), str):
            ids.add(nbg["grade_id"])
    return ids


def identify(path: Path, report: Report) -> Assignment | None:
    """The assignment the notebook belongs to, with findings on its file and folder names."""
    known = _assignments()
    folder, stem = path.parent.name, path.stem
    by_folder = known.get(folder)
    ids = _grade_ids(path)
    by_cells = max(known.values(), key=lambda a: len(ids & {c.grade_id for c in a.cells.cells}), default=None)
    if by_cells is not None and not ids & {c.grade_id for c in by_cells.cells.cells}:
        by_cells = None
    assignment = by_folder or by_cells
    if assignment is None:
        report.add(
            FAIL,
            "naming",
            f"认不出这是哪一次作业：文件夹名 '{folder}' 不是作业名 (assignment id)，"
            f"notebook 里也没有任何作业的单元格。作业名：{', '.join(sorted(known))}",
        )
        return None
    if by_folder is None:  # the student's own folder (Downloads/, a personal copy): not their concern
        report.add(
            NOTE,
            "naming",
            f"按 notebook 的单元格认出这是作业 {assignment.id}（所在文件夹 '{folder}' 的名字不影响评分："
            "提交时只上传 .ipynb 文件）",
        )
    elif by_cells is not None and by_cells.id != by_folder.id:
        report.add(
            WARN,
            "naming",
            f"文件夹 '{folder}' 是作业 {by_folder.id}，但 notebook 的单元格属于作业 "
            f"{by_cells.id}：按 {by_cells.id} 检查；提交时请交到 {by_cells.id} 的作业里",
        )
        assignment = by_cells
    if stem != assignment.notebook:
        report.add(
            WARN,
            "naming",
            f"notebook 文件名是 '{path.name}'，作业的文件名是 '{assignment.notebook}.ipynb'："
            "作业文件夹里只有这一个 notebook 时照样评分（并注明），最好改回原名",
        )
    if not any(f.topic == "naming" and f.status != NOTE for f in report.findings):
        where = f"{assignment.id}/" if by_folder is not None else ""
        report.add(OK, "naming", f"文件名正确：{where}{assignment.notebook}.ipynb")
    return assignment


# -- visible scenarios: the literal calls in the check cells --------------------------------------------
class _NotLiteral(Exception):
    pass


_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Pow: lambda a, b: a**b,
}


def _value(node: ast.AST, env: dict):
    """A data value written in a check cell (constants, lists, arithmetic, ``np.array(...)``, names
    bound earlier in the cell to such values); anything else is not a visible scenario's input."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool | type(None)):
        return node.value
    if isinstance(node, ast.List):
        return [_value(e, env) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, env) for e in node.elts)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_value(k, env): _value(v, env) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _value(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _value(node.left, env), _value(node.right, env)
        if isinstance(left, list | tuple) or isinstance(right, list | tuple):
            n = right if isinstance(left, list | tuple) else left
            if not isinstance(n, int) or n > 10_000:
                raise _NotLiteral
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "array"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in ("np", "numpy")
        and len(node.args) == 1
        and not node.keywords
    ):
        values = _value(node.args[0], env)
        flat = values if isinstance(values, list | tuple) else []
        dtype = "int64" if flat and all(isinstance(v, int) for v in flat) else "float64"
        return Array(list(values), dtype)
    raise _NotLiteral


def exercise_targets(assignment: Assignment) -> dict[str, str]:
    """{name as called in a check cell: target for the sandbox} for every function and method that the
    release's exercise cells define (a function ``f`` → ``f``, a method ``m`` of class ``C`` →
    ``C.m``)."""
    targets: dict[str, str] = {}
    for cell in assignment.cells.cells:
        if cell.role != "solution" or cell.cell_type != "code":
            continue
        tree = ast.parse(neutralise_magics(cell.source)[0])
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):  # not private helpers
                targets[node.name] = node.name
            elif isinstance(node, ast.ClassDef):
                for m in node.body:
                    if isinstance(m, ast.FunctionDef) and not m.name.startswith("_"):
                        targets[m.name] = f"{node.name}.{m.name}"
    return targets


def extra_credit_targets(assignment: Assignment) -> set[str]:
    """Targets whose every call in a check cell is in the check cell of an extra-credit item (lesson 16's
    challenge ``simulate_1f1b``): optional, so an unattempted one costs nothing."""
    bonus = {it.id for it in assignment.items if it.extra_credit}
    targets = exercise_targets(assignment)
    called: dict[str, set[bool]] = {}
    for cell in assignment.cells.cells:
        if cell.role != "check" or cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(neutralise_magics(cell.source)[0])):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in targets:
                    called.setdefault(targets[name], set()).add(cell.grade_id in bonus)
    return {t for t, kinds in called.items() if kinds == {True}}


def visible_scenarios(assignment: Assignment) -> dict[str, list[tuple[tuple, dict]]]:
    """{target: [(args, kwargs), ...]} from the check cells' calls whose inputs are written out."""
    targets = exercise_targets(assignment)
    found: dict[str, list[tuple[tuple, dict]]] = {t: [] for t in dict.fromkeys(targets.values())}
    for cell in assignment.cells.cells:
        if cell.role != "check" or cell.cell_type != "code":
            continue
        tree = ast.parse(neutralise_magics(cell.source)[0])
        env: dict = {}
        for stmt in tree.body:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call):
                    continue
                name = (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                )
                if name not in targets:
                    continue
                try:
                    args = tuple(_value(a, env) for a in node.args)
                    kwargs = {k.arg: _value(k.value, env) for k in node.keywords if k.arg}
                except (_NotLiteral, TypeError, ValueError, ZeroDivisionError):
                    continue
                if (args, kwargs) not in found[targets[name]]:
                    found[targets[name]].append((args, kwargs))
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                try:
                    env[stmt.targets[0].id] = _value(stmt.value, env)
                except (_NotLiteral, TypeError, ValueError, ZeroDivisionError):
                    env.pop(stmt.targets[0].id, None)
    return found


# -- imports ------------------------------------------------------------------------------------------
# -- the check ----------------------------------------------------------------------------------------
_LOCKED = re.compile(r"locked cell '([^']*)' was edited")


def _problem_text(problem: str) -> tuple[str, str, str]:
    m = _LOCKED.search(problem)
    if m:
        return (
            FAIL,
            "locked cells",
            (
                f"锁定单元格 (locked cell) '{m.group(1)}' 被改动了：评分时不会运行它。"
                "请从 lessons/ 里的原始 notebook 把这个单元格复制回来"
            ),
        )
    if problem.startswith("tampered"):
        return FAIL, "locked cells", f"notebook 的结构被改动 (tampered)：{problem.split(': ', 1)[1]}"
    return WARN, "notebook", problem.removeprefix("note: ")


def selfcheck(path: Path, isolation: str = "auto") -> Report:

    path = Path(path)
    report = Report(path, None)
    if path.suffix != ".ipynb" or not path.is_file():
        report.add(FAIL, "naming", f"找不到 notebook 文件 {path}（应是 lessons/<课>/<notebook>.ipynb）")
        return report
    try:
        assignment = identify(path, report)
    except UnreadableNotebook as exc:
        report.add(FAIL, "notebook", f"评分器读不了这个文件：{exc}")
        return report
    if assignment is None:
        return report
    report.assignment = assignment.id
    try:
        extracted = extract(path, assignment.cells, assignment.written_ids)
    except UnreadableNotebook as exc:
        report.add(FAIL, "notebook", f"评分器读不了这个文件：{exc}")
        return report
    problems = [_problem_text(p) for p in extracted.problems]
    for p in problems:
        report.add(*p)
    if not any(topic == "locked cells" for _, topic, _ in problems):
        report.add(OK, "locked cells", "锁定单元格 (locked cells) 与检查单元格都没有被改动")

    missing = missing_modules(extracted.code_cells)
    for name, cell in missing.items():
        why = "课程库只用于画图，评分沙箱里没有它" if name == "pipelab" else "评分环境里没有这个模块"
        report.add(
            FAIL, "imports", f"代码单元 {cell} 导入了 '{name}'：{why}。练习只能用 numpy 和 Python 标准库"
        )
    if not missing:
        report.add(OK, "imports", "没有导入评分环境缺少的模块（只用 numpy 与标准库）")

    mode, report.isolation = resolve_isolation(isolation)
    _run_visible(assignment, extracted.code_cells, mode, report)

    empty = [
        gid
        for gid in assignment.written_ids
        if not re.sub(r"\s+", "", extracted.answers.get(gid, "").replace(PLACEHOLDER, ""))
    ]
    for gid in empty:
        report.add(FAIL, "answers", f"书面回答 (written answer) {gid} 还是空的（或只有 “{PLACEHOLDER}”）")
    if not empty:
        report.add(OK, "answers", f"书面回答都不为空：{', '.join(assignment.written_ids)}")
    return report


def _run_visible(assignment: Assignment, cells: list[tuple[int, str]], mode: str, report: Report) -> None:
    limits = assignment.limits
    sub = open_submission(limits, cells, mode)
    try:
        try:
            sub._ensure()
        except (CallTimeout, WorkerCrashed) as exc:
            report.add(
                FAIL, "load", f"代码加载失败 (load)：{exc}。检查代码单元最外层是否有死循环或退出进程的语句"
            )
            return
        errors = sub.cell_errors
        for err in errors:
            report.add(FAIL, "load", f"代码单元 {err['cell']} 运行时出错：{err['error']}")
        if not errors:
            report.add(OK, "load", "所有代码单元都能运行 (code loads)")
        optional = extra_credit_targets(assignment)
        for target, scenarios in visible_scenarios(assignment).items():
            _call_scenarios(sub, target, scenarios, limits.call_timeout, report, target in optional)
    finally:
        sub.close()


def _call_scenarios(
    sub: Submission, target: str, scenarios: list, timeout: float, report: Report, optional: bool = False
) -> None:
    name = target.rsplit(".", 1)[-1]
    if not scenarios:
        report.add(WARN, "timing", f"{name}：notebook 的检查单元里没有可直接调用的场景，未检查")
        return
    missing = 0
    for args, kwargs in scenarios:
        try:
            result = sub.call(target, *args, **kwargs)
        except CallTimeout:
            report.add(
                FAIL,
                "timing",
                f"{name} 在题目的可视场景 (visible scenario) 上 {timeout:g} 秒内没有返回："
                "死循环或算法太慢？评分时每次调用 (per call) 最多 "
                f"{timeout:g} 秒",
            )
            return
        except WorkerCrashed as exc:
            report.add(FAIL, "timing", f"{name} 在题目的可视场景上让进程崩溃了：{exc}")
            return
        if result.raised("NotImplementedError"):
            missing += 1
        elif (
            result.error
            and "LookupError" in result.error.get("mro", [])
            and "defines no name" in str(result.error.get("message"))
        ):
            report.add(FAIL, "timing", f"notebook 里没有定义 {target}：评分器找不到它")
            return
    if missing and optional:
        report.add(
            WARN, "timing", f"挑战题（附加分）{name} 未作答（抛出 NotImplementedError）：不扣分，做对了加分"
        )
    elif missing:
        report.add(FAIL, "timing", f"{name} 还没有实现（抛出 NotImplementedError）")
    else:
        report.add(
            OK,
            "timing",
            f"{name} 在 {len(scenarios)} 个可视场景上都在 {timeout:g} 秒内返回"
            "（是否正确请看 notebook 里的可视检查）",
        )


def main(path: str, isolation: str = "auto") -> int:

    try:
        report = selfcheck(Path(path), isolation)
    finally:
        shutdown_workers()
    print(report.format())
    return 0 if report.ok else 1
