"""Offscreen rendering: the OpenGL backend choice, its errors, and pictures of a small MuJoCo scene."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mlagents.example_envs.sdk import rendering
from mlagents.example_envs.sdk.rendering import OffscreenRenderer, RenderingUnavailable, choose_gl_backend

# OpenGL and TensorFlow cannot share a process: these run in one of their own (see conftest.py).
pytestmark = pytest.mark.renders

# A white floor, a red box 3 m ahead of a camera on a turnable body, a green box to its left.
SCENE = """
<mujoco>
  <visual><headlight ambient="0.5 0.5 0.5" diffuse="0.4 0.4 0.4"/></visual>
  <worldbody>
    <light directional="true" dir="0 0 -1" castshadow="false"/>
    <geom type="plane" size="20 20 0.1" rgba="1 1 1 1"/>
    <geom type="box" size="0.5 0.5 0.5" pos="0 3 0.5" rgba="1 0 0 1"/>
    <geom type="box" size="0.5 0.5 0.5" pos="-3 0 0.5" rgba="0 1 0 1"/>
    <body name="eye" mocap="true" pos="0 0 0.5">
      <camera name="eye" pos="0 0 0" xyaxes="1 0 0 0 0 1" fovy="60"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.slow
def test_backend_choice() -> None:
    assert choose_gl_backend({"MUJOCO_GL": "osmesa"}) == "osmesa"
    assert choose_gl_backend({"MUJOCO_GL": " EGL "}) == "egl"
    assert choose_gl_backend({"DISPLAY": ":0"}) == "glfw"
    with pytest.raises(RenderingUnavailable, match="MUJOCO_GL='vulkan'"):
        choose_gl_backend({"MUJOCO_GL": "vulkan"})


def test_backend_without_display_prefers_egl_then_osmesa(monkeypatch: pytest.MonkeyPatch) -> None:
    loadable: set[str] = {"egl", "osmesa"}
    monkeypatch.setattr(
        rendering, "_loads", lambda names: any(names == rendering._LIBRARIES[b] for b in loadable)
    )
    assert choose_gl_backend({}) == "egl"
    loadable.discard("egl")
    assert choose_gl_backend({}) == "osmesa"
    loadable.clear()
    with pytest.raises(RenderingUnavailable) as error:
        choose_gl_backend({})
    message = str(error.value)
    assert "\n" not in message and "libegl1" in message and "libgl1-mesa-dri" in message


def test_this_machine_renders_headless() -> None:
    """CI has no display: EGL (or OSMesa) must be installed (see docs/Installation.md)."""
    assert rendering.gl_backend() in ("egl", "osmesa", "glfw", "glx")


def test_pictures_follow_the_camera_and_repeat_exactly() -> None:
    model = mujoco.MjModel.from_xml_string(SCENE)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_camlight(model, data)
    renderer = OffscreenRenderer(model, 84, 64)
    ahead = renderer.render(data, "eye")
    assert ahead.shape == (64, 84, 3) and ahead.dtype == np.uint8
    centre = ahead[28:36, 38:46].astype(int)
    assert np.all(centre[..., 0] > 2 * centre[..., 1])  # the red box straight ahead
    np.testing.assert_array_equal(ahead, renderer.render(data, "eye"))  # the same state, the same picture
    # turn the camera body 90 degrees to the left (about +z): now the green box is ahead
    data.mocap_quat[0] = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]
    mujoco.mj_kinematics(model, data)
    mujoco.mj_camlight(model, data)
    left = renderer.render(data, "eye")
    centre = left[28:36, 38:46].astype(int)
    assert np.all(centre[..., 1] > 2 * centre[..., 0])
    # the bottom rows show the floor below the horizon, the top rows the background
    assert left[-1].mean() > left[0].mean()
    renderer.close()


def test_bad_size() -> None:
    model = mujoco.MjModel.from_xml_string(SCENE)
    with pytest.raises(ValueError, match="positive size"):
        OffscreenRenderer(model, 0, 84)
