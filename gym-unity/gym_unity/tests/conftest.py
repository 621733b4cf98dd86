"""Fixtures of the gym_unity tests: example builds, test-scene builds, and environments
that are closed after each test with a check that no build process is left behind."""

import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mlagents.example_envs.ports import find_free_port_range

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parents[2]
BUILDS = REPO_ROOT / "example-envs" / "builds"

# The tests import the scene constants; the builds import the scenes through scene_build.py.
sys.path.insert(0, str(TESTS_DIR))


def processes_on_port(port: int) -> list[int]:
    """Pids of live processes started with ``--port <port>`` (the builds of that port)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            arguments = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for i, argument in enumerate(arguments[:-1]):
            if argument == b"--port" and arguments[i + 1] == str(port).encode():
                found.append(int(entry))
                break
    return found


def assert_no_build_left(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while processes_on_port(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_on_port(port) == [], f"a build process of port {port} is still running"


@pytest.fixture
def example_build() -> Callable[[str], str]:
    """``example_build("Basic")``: path of an example build (the test is skipped when it is missing)."""

    def path_of(name: str) -> str:
        path = BUILDS / f"{name}.x86_64"
        if not path.exists():
            pytest.skip(f"example-envs/builds/{name}.x86_64 does not exist yet")
        return str(path)

    return path_of


@pytest.fixture(scope="session")
def scene_build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """``scene_build("Branched")``: path of a build running that class of ``gym_test_scenes``.

    The build is a ``<Name>.x86_64`` script that execs ``scene_build.py`` under this interpreter.
    """
    folder = tmp_path_factory.mktemp("gym_scene_builds")
    launcher = TESTS_DIR / "scene_build.py"

    def path_of(name: str) -> str:
        path = folder / f"{name}.x86_64"
        if not path.exists():
            path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{launcher}" {name} "$@"\n')
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return str(path)

    return path_of


@pytest.fixture
def make_env() -> Iterator[Callable[..., Any]]:
    """``make_env(EnvClass, build_path, **kwargs)``: the environment on a free port without graphics
    (free ports for each build with ``n_envs=``, as ``UnityVecEnv`` takes).

    Every environment is closed at the end of the test, and no build process of its port may
    survive (also for environments whose constructor raised).
    """
    created: list[Any] = []
    ports: list[int] = []

    def make(env_class: type, build: str, **kwargs: Any) -> Any:
        n_builds = kwargs.get("n_envs", 1) if isinstance(kwargs.get("n_envs", 1), int) else 1
        kwargs.setdefault("base_port", find_free_port_range(max(n_builds, 1)))
        kwargs.setdefault("no_graphics", True)
        first = kwargs["base_port"] + kwargs.get("worker_id", 0)
        ports.extend(range(first, first + max(n_builds, 1)))
        env = env_class(build, **kwargs)
        created.append(env)
        return env

    yield make
    for env in created:
        env.close()
    for port in ports:
        assert_no_build_left(port)
