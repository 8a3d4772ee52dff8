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
