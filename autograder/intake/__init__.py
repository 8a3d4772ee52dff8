"""Submissions in: LMS downloads to nbgrader's layout, submission times and the late policy."""
