"""Grading one submission: read the notebook, run the hidden tests against the sandbox, score the items."""
