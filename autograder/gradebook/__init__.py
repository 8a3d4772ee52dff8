"""nbgrader's gradebook and course directory: what the grader records and formgrader reads."""
