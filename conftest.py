"""Registers one pytest marker per rubric item, so `pytest -m solver autograder/` selects an item's tests."""

from pathlib import Path

import yaml


def pytest_configure(config):
    for rubric in sorted(Path(__file__).parent.glob("autograder/*/rubric.yaml")):
        for item in yaml.safe_load(rubric.read_text(encoding="utf-8")).get("items", []):
            config.addinivalue_line("markers", f"{item['id']}: rubric item of {rubric.parent.name}")
