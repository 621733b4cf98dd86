"""The example builds the tests start: ``example-envs/builds/<Name>.x86_64`` of this checkout."""

from pathlib import Path

import pytest

BUILDS = Path(__file__).resolve().parents[4] / "example-envs" / "builds"


def example_build(name: str) -> str:
    """Path of the example build ``name`` (e.g. ``"Basic"``); skips the test when it is missing."""
    path = BUILDS / f"{name}.x86_64"
    if not path.exists():
        pytest.skip(f"example-envs/builds/{name}.x86_64 is missing")
    return str(path)
