"""Project-wide test settings and fixtures."""

import tempfile
from collections.abc import Callable

import pytest

from mlagents.example_envs.ports import find_free_port_range


@pytest.fixture(autouse=True)
def _temporary_files_under_tmp_path(tmp_path, monkeypatch):
    """Build logs and other temporary folders of a test go under its own tmp_path (which pytest
    rotates), never into the machine's /tmp: also in worker processes, which read TMPDIR."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.fixture(scope="session")
def free_port_range() -> Callable[[int], int]:
    """``free_port_range(count)``: a base port whose ``count`` consecutive loopback ports are
    free right now (for ``UnityEnvironment(base_port=...)`` with ``count`` workers)."""
    return find_free_port_range
