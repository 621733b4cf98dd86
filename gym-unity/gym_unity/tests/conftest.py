"""Fixtures of the gym_unity tests: example builds, test-scene builds, and environments
that are closed after each test with a check that no build process is left behind."""

import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mlagents.envs.tests.example_builds import example_build as example_build_path
from mlagents.envs.tests.processes import assert_nothing_left
from mlagents.example_envs.ports import find_free_port_range

TESTS_DIR = Path(__file__).resolve().parent


@pytest.fixture
def example_build() -> Callable[[str], str]:
    """``example_build("Basic")``: path of an example build (the test is skipped when it is missing)."""
    return example_build_path


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
    assert_nothing_left(ports=ports, timeout=10.0)
