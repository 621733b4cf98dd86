"""Pictures of a whole scene for videos (not the agents' camera observations).

:func:`frame_source` picks, for a scene instance, a function that draws its current state as uint8
``(height, width, 3)`` RGB (row 0 = top):

1. the scene's own ``draw_frame(width, height)`` method, when it has one;
2. a MuJoCo scene (one whose attributes, or its attributes' attributes, hold an ``MjModel`` and its
   ``MjData``): MuJoCo's offscreen renderer (:mod:`.rendering`, headless through EGL) from a free
   camera, placed by the :class:`View` registered for the scene's class name or a base class's
   (:func:`register_view`), or else looking at the whole model;
3. a scene with cameras: the first agent's first camera image, scaled up;
4. otherwise a chart of the first agents' vector observations (one row per agent, one column per
   value; what the agents perceive, for scenes without any picture).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .scene import Scene

__all__ = ["FrameSource", "View", "frame_source", "register_view", "resize_nearest"]

#: ``draw()`` -> uint8 (height, width, 3)
FrameSource = Callable[[], np.ndarray]

#: Headlight of video pictures (MuJoCo's default, 0.1 / 0.4, leaves unlit scenes dark).
VIDEO_AMBIENT = (0.45, 0.45, 0.45)
VIDEO_DIFFUSE = (0.6, 0.6, 0.6)


@dataclass(frozen=True)
class View:
    """A free camera: the point it looks at (MuJoCo coordinates), its distance, and its azimuth and
    elevation in degrees (elevation -90 looks straight down)."""

    lookat: tuple[float, float, float]
    distance: float
    azimuth: float = 90.0
    elevation: float = -30.0


_VIEWS: dict[str, View] = {}


def register_view(scene_class_name: str, view: View) -> None:
    """Use ``view`` for videos of scenes of the class called ``scene_class_name``."""
    _VIEWS[scene_class_name] = view


def resize_nearest(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """``image`` (h, w, 3) scaled to (height, width, 3) by repeating pixels."""
    rows = (np.arange(height) * image.shape[0] // height).clip(0, image.shape[0] - 1)
    columns = (np.arange(width) * image.shape[1] // width).clip(0, image.shape[1] - 1)
    return np.ascontiguousarray(image[rows][:, columns])


def _find_mujoco(obj: Any, depth: int = 2) -> tuple[Any, Any] | None:
    """The first (MjModel, MjData) pair among ``obj``'s attributes (searched ``depth`` levels deep)."""
    import mujoco

    attributes = getattr(obj, "__dict__", None)
    if not attributes:
        return None
    model = next((v for v in attributes.values() if isinstance(v, mujoco.MjModel)), None)
    data = next((v for v in attributes.values() if isinstance(v, mujoco.MjData)), None)
    if model is not None and data is not None:
        return model, data
    if depth > 0:
        for value in attributes.values():
            if isinstance(value, (np.ndarray, type, str, bytes, int, float, dict, list, tuple)):
                continue
            found = _find_mujoco(value, depth - 1)
            if found is not None:
                return found
    return None


def _mujoco_source(scene: Scene, model: Any, data: Any, width: int, height: int) -> FrameSource:
    import mujoco

    from .rendering import OffscreenRenderer

    renderer = OffscreenRenderer(model, width, height, shadows=False)
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    # The view of the scene's class, or of the class it extends (a visual variant of an example).
    view = next((_VIEWS[c.__name__] for c in type(scene).__mro__ if c.__name__ in _VIEWS), None)
    if view is None:
        center = model.stat.center
        view = View((float(center[0]), float(center[1]), float(center[2])), 1.6 * float(model.stat.extent))
    camera.lookat[:] = view.lookat
    camera.distance = view.distance
    camera.azimuth = view.azimuth
    camera.elevation = view.elevation

    headlight = model.vis.headlight

    def draw() -> np.ndarray:
        mujoco.mj_kinematics(model, data)
        mujoco.mj_camlight(model, data)
        # A brighter headlight for the video only: the model's own lighting (which the agents'
        # cameras see) is put back right after the picture is taken.
        ambient, diffuse = headlight.ambient.copy(), headlight.diffuse.copy()
        headlight.ambient[:] = VIDEO_AMBIENT
        headlight.diffuse[:] = VIDEO_DIFFUSE
        try:
            return renderer.render(data, camera)
        finally:
            headlight.ambient[:] = ambient
            headlight.diffuse[:] = diffuse

    return draw


def _camera_source(scene: Scene, width: int, height: int) -> FrameSource | None:
    for spec in scene.academy.brains.values():
        if spec.camera_resolutions:
            agents = scene.academy.agents_of_brain(spec.name)
            if agents.size == 0:
                continue
            first = agents[:1]

            def draw(first: np.ndarray = first) -> np.ndarray:
                return resize_nearest(np.asarray(scene.render(first, 0))[0], width, height)

            return draw
    return None


_PALETTE = np.array([[33, 102, 172], [247, 247, 247], [178, 24, 43]], dtype=np.float64)


def _observation_source(scene: Scene, width: int, height: int, rows: int = 4) -> FrameSource:
    """A heat map of the first ``rows`` agents' current observations (blue < 0 < red, white 0)."""
    academy = scene.academy
    agents = academy.agents_of_brain(next(iter(academy.brains)))[:rows]

    def draw() -> np.ndarray:
        values = np.asarray(scene.collect_observations(agents), dtype=np.float64)
        if values.size == 0:
            return np.full((height, width, 3), 255, dtype=np.uint8)
        scale = max(float(np.abs(values).max()), 1e-6)
        t = (values / scale + 1.0) / 2.0 * (len(_PALETTE) - 1)
        low = np.floor(t).astype(int).clip(0, len(_PALETTE) - 2)
        fraction = (t - low)[..., None]
        colours = _PALETTE[low] * (1 - fraction) + _PALETTE[low + 1] * fraction
        return resize_nearest(colours.astype(np.uint8), width, height)

    return draw


def frame_source(scene: Scene, width: int = 320, height: int = 240) -> FrameSource:
    """How to draw ``scene`` (see the module docstring).

    :raises RenderingUnavailable: a MuJoCo scene on a machine without offscreen OpenGL.
    """
    own = getattr(scene, "draw_frame", None)
    if callable(own):
        return lambda: np.asarray(own(width, height), dtype=np.uint8)
    found = _find_mujoco(scene)
    if found is not None:
        return _mujoco_source(scene, found[0], found[1], width, height)
    camera = _camera_source(scene, width, height)
    if camera is not None:
        return camera
    return _observation_source(scene, width, height)


def even(size: int) -> int:
    """``size`` rounded up to an even number (H.264 needs even frame sizes)."""
    return int(math.ceil(size / 2.0) * 2)
