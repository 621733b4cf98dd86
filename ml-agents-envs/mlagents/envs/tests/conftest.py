"""Fixtures shared by the mlagents.envs tests: process and port checks (from ``processes.py``) and
the example builds (from ``example_builds.py``). Free ports come from the fixtures ``free_port`` and
``free_port_range`` of the root conftest.py."""

import subprocess
from collections.abc import Callable

import pytest

from mlagents.envs.tests.example_builds import example_build
from mlagents.envs.tests.processes import assert_process_gone, port_is_free, process_group_members


@pytest.fixture(scope="session")
def basic_build() -> str:
    """Path of the Basic example build (skips when the launcher is missing)."""
    return example_build("Basic")


@pytest.fixture
def assert_gone() -> Callable[[subprocess.Popen], None]:
    """``assert_gone(popen)``: the build and its whole session are gone."""
    return assert_process_gone


@pytest.fixture
def port_free() -> Callable[[int], bool]:
    """``port_free(port)``: True when the port can be bound again on loopback."""
    return port_is_free


@pytest.fixture
def group_members() -> Callable[[int], list[int]]:
    """``group_members(pgid)``: live pids of that process group."""
    return process_group_members
