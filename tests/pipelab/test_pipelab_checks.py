"""Visible-check helpers used in lesson notebooks."""

import pytest

from pipelab.checks import check_close, check_equal, check_raises, check_true


def test_success_prints_tick(capsys):
    check_close(0.1 + 0.2, 0.3, "加法")
    check_equal([1, 2], (1, 2), "列表")
    check_true(3 > 2, "比较")
    check_raises(lambda: int("x"), ValueError, "解析失败")
    out = capsys.readouterr().out.splitlines()
    assert out == ["✅ 加法", "✅ 列表", "✅ 比较", "✅ 解析失败"]


def test_failure_messages():
    with pytest.raises(AssertionError, match="❌ 总时间：期望 280，实际得到 290"):
        check_close(290.0, 280.0, "总时间")
    with pytest.raises(AssertionError, match="期望 \\[1, 2\\]"):
        check_equal([2, 1], [1, 2], "顺序")
    with pytest.raises(AssertionError, match="❌ 条件"):
        check_true(False, "条件", "细节")
    with pytest.raises(AssertionError, match="没有抛出"):
        check_raises(lambda: None, ValueError, "负数")
    with pytest.raises(AssertionError, match="TypeError"):
        check_raises(lambda: len(1), ValueError, "类型")
    with pytest.raises(AssertionError):
        check_close([1.0, 2.0], [1.0], "长度")


def test_in_jupyter_a_failed_check_shows_the_message_first_without_library_frames():
    """Issue 21, point 9: in a kernel a failed check's output starts with the Chinese message and names the
    cell's line; no frame of pipelab appears. A student's own exception keeps its ordinary traceback."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from pipelab.checks import check_close\nx = 1.0\ncheck_close(x, 2.0, '总时间')"
        ),
        nbformat.v4.new_code_cell("def f():\n    raise NotImplementedError()\nf()"),
    ]
    NotebookClient(nb, kernel_name="python3", timeout=60, allow_errors=True).execute()
    (err,) = [o for o in nb.cells[0].outputs if o.output_type == "error"]
    assert err.ename == "CheckFailed"
    text = "\n".join(err.traceback)
    assert err.traceback[0].startswith("❌ 总时间：期望 2，实际得到 1")
    assert "第 3 行" in text and "check_close(x, 2.0, '总时间')" in text
    assert "checks.py" not in text and "pipelab" not in text.replace("from pipelab.checks", "")
    (own,) = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert own.ename == "NotImplementedError" and len(own.traceback) > 1  # ordinary traceback
