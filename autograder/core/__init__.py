"""What every other package builds on and which imports nothing of theirs: the repository and course
layouts (``layout``), the lesson registry (``registry``), the typed rubric model (``rubric``)."""
