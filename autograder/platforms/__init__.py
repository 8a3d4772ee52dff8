"""Grading on hosted platforms: the Gradescope autograder."""
