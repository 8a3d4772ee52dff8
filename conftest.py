"""Registers one pytest marker per rubric item of every lesson (the registry), so `pytest -m solver
autograder/` selects an item's hidden tests."""

from autograder.core.registry import lessons


def pytest_configure(config):
    for found in lessons().values():
        for item in found.rubric.items:
            config.addinivalue_line("markers", f"{item.id}: rubric item of {found.id}")
