"""Fixtures shared by the mlagents.envs tests: process and port checks, example builds (free ports come
from the fixtures ``free_port`` and ``free_port_range`` of the root conftest.py)."""

import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[4]
BUILDS = REPO_ROOT / "example-envs" / "builds"


def process_group_members(pgid: int) -> list[int]:
    """Pids of live (not zombie) processes whose process group is ``pgid``, read from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # Fields after the command name (which may contain spaces) start after the last ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry))
    return members


def assert_process_gone(popen: subprocess.Popen) -> None:
    """The build ended, was reaped, and nothing of its session survives."""
    assert popen is not None
    assert popen.poll() is not None, "the build process is still running"
    assert not Path(f"/proc/{popen.pid}").exists() or _is_other_process(popen.pid)
    # A killed grandchild dies asynchronously (SIGKILL is delivered, then the kernel tears it down).
    assert wait_until(lambda: process_group_members(popen.pid) == [], timeout=2.0), process_group_members(
        popen.pid
    )


def _is_other_process(pid: int) -> bool:
    # The pid was recycled by an unrelated process: it is not in the build's session.
    try:
        return os.getsid(pid) != pid
    except ProcessLookupError:
        return True


def port_is_free(port: int) -> bool:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.fixture(scope="session")
def basic_build() -> str:
    """Path of the Basic example build (skips when the launcher is missing)."""
    path = BUILDS / "Basic.x86_64"
    if not path.exists():
        pytest.skip("example-envs/builds/Basic.x86_64 is missing")
    return str(path)


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
