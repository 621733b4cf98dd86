"""The examples' public functions (``mlagents.example_envs``), which the trainers use: what an
example build shows Python, known without starting it, and the examples' names."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mlagents.envs.brain import BrainParameters
from mlagents.envs.environment import UnityEnvironment
from mlagents.example_envs import describe_build, example_name, example_names

BUILDS = Path(__file__).resolve().parents[3] / "builds"
TEACHER = "--teacher BasicTeacher=BasicLearning"


def test_importing_the_package_imports_nothing_else() -> None:
    # The launcher imports it to find a usable interpreter; the SDK can be used without the examples.
    code = (
        "import sys, mlagents.example_envs\n"
        "loaded = [m for m in sys.modules if m.startswith('mlagents.example_envs.')]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_example_build_is_described(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    assert example_names() == sorted(path.name.removesuffix(".x86_64") for path in BUILDS.glob("*.x86_64"))
    for name in example_names():
        build = describe_build(str(BUILDS / f"{name}.x86_64"))
        assert build is not None and build.scene == name
        assert build.brains and all(brain.external for brain in build.brains.values())
    ball = describe_build(str(BUILDS / "3DBall"))  # the extension may be left out, as for UnityEnvironment
    assert (
        ball is not None and ball.academy_name == "Ball3DAcademy" and list(ball.brains) == ["3DBallLearning"]
    )
    assert list(ball.brains["3DBallLearning"].parameters.vector_action_size) == [2]


def test_the_build_options_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "MLAGENTS_BUILD_ARGS", "--brain-type BasicLearning=heuristic --broadcast BasicLearning"
    )
    build = describe_build(str(BUILDS / "Basic.x86_64"))
    assert build is not None and not build.brains["BasicLearning"].external
    # Options the build would refuse: the build says why when it starts.
    monkeypatch.setenv("MLAGENTS_BUILD_ARGS", "--brain-type Nobody=heuristic")
    assert describe_build(str(BUILDS / "Basic.x86_64")) is None


def test_other_paths_are_no_example_build(tmp_path: Path) -> None:
    wrapper = tmp_path / "Basic.x86_64"
    wrapper.write_text(f'#!/bin/sh\nexec "{BUILDS / "Basic.x86_64"}" "$@"\n')
    assert describe_build(str(wrapper)) is None
    assert describe_build(str(tmp_path / "Missing.x86_64")) is None
    unknown = tmp_path / "Unknown.x86_64"
    unknown.symlink_to(BUILDS / "unity-build-launcher")
    assert describe_build(str(unknown)) is None


def test_example_names_of_paths() -> None:
    assert example_name("example-envs/builds/3DBall.x86_64") == "3DBall"
    assert example_name("/somewhere/else/WallJump.exe") == "WallJump"
    assert example_name("GridWorld/") == "GridWorld"
    assert example_name("example-envs/builds/RollerBall.x86_64") is None


def test_the_description_is_what_the_build_sends(
    monkeypatch: pytest.MonkeyPatch, free_port_range: Callable[[int], int]
) -> None:
    monkeypatch.setenv("MLAGENTS_BUILD_ARGS", TEACHER)
    build = describe_build(str(BUILDS / "Basic.x86_64"))
    assert build is not None
    env = UnityEnvironment(str(BUILDS / "Basic.x86_64"), base_port=free_port_range(1), no_graphics=True)
    try:
        assert env.academy_name == build.academy_name
        assert list(env.brains) == list(build.brains) == ["BasicLearning", "BasicTeacher"]
        for name, brain in build.brains.items():
            assert vars(env.brains[name]) == vars(BrainParameters.from_proto(brain.parameters))
        assert env.external_brain_names == [name for name, brain in build.brains.items() if brain.external]
    finally:
        env.close()
