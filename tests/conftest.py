"""Shared pytest setup. Keep it minimal: topic-specific helpers live in their own test modules."""

import os

# Figures must not need a display; notebooks switch to the inline backend themselves.
os.environ.setdefault("MPLBACKEND", "Agg")
