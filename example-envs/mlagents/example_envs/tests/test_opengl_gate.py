"""The suite on a machine without offscreen OpenGL: the tests that need it are skipped with what to
install, unless MLAGENTS_REQUIRE_RENDERING=1 (CI) makes them run and fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlagents.example_envs.sdk.rendering import offscreen_opengl_missing

REPO = Path(__file__).resolve().parents[4]

# Loaded before the project's root conftest: this machine "has no OpenGL".
WITHOUT_OPENGL = """
from mlagents.example_envs.sdk import rendering
rendering.offscreen_opengl_missing = lambda: "no OpenGL in this test: install the packages"
"""

TESTS = """
import pytest

@pytest.mark.opengl
def test_films_a_mujoco_scene():
    raise AssertionError("ran without OpenGL")

@pytest.mark.renders
def test_renders_in_process():
    raise AssertionError("ran without OpenGL")

def test_needs_nothing():
    pass
"""


def run_suite(tmp_path: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "without_opengl.py").write_text(WITHOUT_OPENGL)
    (tmp_path / "test_gated.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if k != "MLAGENTS_REQUIRE_RENDERING"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(REPO)])
    command = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"]
    command += ["-p", "without_opengl", "-p", "conftest", "test_gated.py"]
    return subprocess.run(
        command, cwd=tmp_path, env={**env, **environ}, capture_output=True, text=True, timeout=120
    )


def test_without_opengl_the_rendering_tests_are_skipped_with_what_to_install(tmp_path: Path) -> None:
    done = run_suite(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 passed, 2 skipped" in done.stdout
    assert done.stdout.count("no OpenGL in this test: install the packages") == 2


@pytest.mark.slow
def test_ci_requires_rendering(tmp_path: Path) -> None:
    done = run_suite(tmp_path, MLAGENTS_REQUIRE_RENDERING="1")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "ran without OpenGL" in done.stdout and "skipped" not in done.stdout


def test_missing_opengl_is_found_without_loading_a_library() -> None:
    found = {"EGL": "libEGL.so.1", "OSMesa": "libOSMesa.so.8"}
    assert offscreen_opengl_missing({}, found.get) is None
    assert offscreen_opengl_missing({}, {"OSMesa": "libOSMesa.so.8"}.get) is None
    reason = offscreen_opengl_missing({}, {}.get)
    assert reason is not None and "\n" not in reason and "libegl1 libgl1-mesa-dri" in reason
    # a chosen backend or a display: rendering is up to them, nothing is skipped
    assert offscreen_opengl_missing({"MUJOCO_GL": "osmesa"}, {}.get) is None
    assert offscreen_opengl_missing({"DISPLAY": ":0"}, {}.get) is None
