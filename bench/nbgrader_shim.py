"""For `make bench` only: run our hidden tests *inside* an nbgrader kernel, the way nbgrader embeds
hidden tests in a test cell, so `nbgrader autograde` can be timed on the same class. Never used for
grading: in-kernel tests share the process with student code (see SECURITY.md for why we don't)."""

from __future__ import annotations

from pathlib import Path


class InKernelSubmission:
    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace

    def call(self, target: str, *args, **kwargs):
        from autograder.sandbox.worker import _Budget, describe_exception, from_json, resolve, to_plain
        from autograder.testing import Result, encode_arg

        args = from_json([encode_arg(a) for a in args])
        kwargs = from_json({k: encode_arg(v) for k, v in kwargs.items()})
        res = Result(target=target)
        try:
            value = resolve(self.namespace, target)(*args, **kwargs)
            res.value, res.types = to_plain(value, _Budget())
        except Exception as exc:  # noqa: BLE001
            res.error = describe_exception(exc)
        res.args_after, _ = to_plain(args, _Budget())
        res.kwargs_after, _ = to_plain(kwargs, _Budget())
        from autograder.sandbox.wire import decode_floats

        res.value, res.args_after = decode_floats(res.value), decode_floats(res.args_after)
        return res

    def calls(self, target: str, arg_tuples):
        """``call`` once per ``args`` (what the engine pipelines, run here one after the other)."""
        return (self.call(target, *args) for args in list(arg_tuples))

    def calls_with(self, target: str, cases):
        return (self.call(target, *args, **kwargs) for args, kwargs in list(cases))


def run_item(namespace: dict, assignment_dir: str, item_id: str) -> None:
    """All-or-nothing, like an nbgrader test cell: raise if any hidden test of ``item_id`` fails."""
    from autograder.grading.assignment import Assignment

    assignment = Assignment.load(Path(assignment_dir))
    sub = InKernelSubmission(namespace)
    for test in assignment.tests:
        if test.item == item_id:
            test.fn(sub)
