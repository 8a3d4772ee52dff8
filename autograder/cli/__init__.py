"""The command line: ``python -m autograder <command>`` (commands in ``autograder/cli/main.py``)."""
