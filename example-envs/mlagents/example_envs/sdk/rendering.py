"""Offscreen rendering of MuJoCo scenes: camera observations of the visual examples and videos.

:class:`OffscreenRenderer` wraps ``mujoco.Renderer`` for one model at one resolution and returns
uint8 ``(H, W, 3)`` RGB images, row 0 = top of the picture (what a Unity camera sends). Create it
once per process and reuse it for every frame: creating the OpenGL context is the costly part.

MuJoCo needs an OpenGL context, which works without a display through EGL (Mesa's libEGL with its
software rasteriser, or a GPU driver) or OSMesa. The backend is chosen once per process, before the
first context is made:

* ``MUJOCO_GL`` set (``egl``, ``osmesa``, ``glfw``, ``glx``): that one;
* a display (``DISPLAY`` or ``WAYLAND_DISPLAY``): ``glfw``, MuJoCo's own default;
* otherwise ``egl`` when libEGL loads, else ``osmesa`` when libOSMesa loads;
* otherwise :class:`RenderingUnavailable` with a one-line message naming the system packages.

MuJoCo reads ``MUJOCO_GL`` when it is imported, and the example scenes import it long before they
render; so the chosen backend's context class is also installed where ``mujoco.Renderer`` looks it
up (``mujoco.rendering.classic.gl_context.GLContext``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
from collections.abc import Callable

import mujoco
import numpy as np

from .closing import Closable

#: what to install when no OpenGL backend works (Debian/Ubuntu package names)
SYSTEM_PACKAGES = "libegl1 libgl1-mesa-dri"
_INSTALL_HINT = (
    f"install the system packages {SYSTEM_PACKAGES} (Debian/Ubuntu: apt-get install {SYSTEM_PACKAGES}; "
    "or libosmesa6 with MUJOCO_GL=osmesa)"
)
_BACKEND_MODULES = {
    "egl": "mujoco.egl",
    "osmesa": "mujoco.osmesa",
    "glfw": "mujoco.glfw",
    "glx": "mujoco.glfw",
}
_LIBRARIES = {
    "egl": ("libEGL.so.1", "libEGL.so"),
    "osmesa": ("libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so"),
}

_backend: str | None = None


class RenderingUnavailable(RuntimeError):
    """No OpenGL backend can render offscreen on this machine (the message says what to install)."""


def _loads(names: tuple[str, ...]) -> bool:
    """Whether one of the shared libraries ``names`` can be loaded."""
    for name in names:
        try:
            ctypes.CDLL(name)
        except OSError:
            continue
        return True
    return False


def choose_gl_backend(environ: dict[str, str] | None = None) -> str:
    """The OpenGL backend rendering should use here: "egl", "osmesa", "glfw" or "glx" (see the
    module docstring for the order). ``environ`` defaults to ``os.environ``.

    :raises RenderingUnavailable: when none is usable.
    """
    env = os.environ if environ is None else environ
    requested = env.get("MUJOCO_GL", "").strip().lower()
    if requested:
        if requested not in _BACKEND_MODULES:
            raise RenderingUnavailable(
                f"MUJOCO_GL={requested!r} is not an OpenGL backend MuJoCo renders with here; "
                f"use one of {', '.join(sorted(_BACKEND_MODULES))} or unset it."
            )
        return requested
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return "glfw"
    for backend in ("egl", "osmesa"):
        if _loads(_LIBRARIES[backend]):
            return backend
    raise RenderingUnavailable(
        f"Offscreen rendering needs OpenGL but neither libEGL nor libOSMesa loads: {_INSTALL_HINT}."
    )


def offscreen_opengl_missing(
    environ: dict[str, str] | None = None, find: Callable[[str], str | None] = ctypes.util.find_library
) -> str | None:
    """Why this machine cannot render offscreen, in one line, or None when it likely can.

    Unlike :func:`choose_gl_backend` it loads no library (it asks the linker's cache through
    ``find``), so it is safe in a process that imported TensorFlow: the test suite uses it to skip
    the tests that need OpenGL on a machine without it.
    """
    env = os.environ if environ is None else environ
    if env.get("MUJOCO_GL", "").strip() or env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    if find("EGL") or find("OSMesa"):
        return None
    return f"this machine has no offscreen OpenGL (neither libEGL nor libOSMesa): {_INSTALL_HINT}"


def gl_backend() -> str:
    """The backend of this process: chosen on the first call and installed for ``mujoco.Renderer``."""
    global _backend
    if _backend is None:
        backend = choose_gl_backend()
        os.environ.setdefault("MUJOCO_GL", backend)
        try:
            context_class = importlib.import_module(_BACKEND_MODULES[backend]).GLContext
        except Exception as error:  # ImportError, or PyOpenGL already bound to another platform
            raise RenderingUnavailable(
                f"Cannot load MuJoCo's {backend} OpenGL backend ({type(error).__name__}: {error}); {_INSTALL_HINT}."
            ) from error
        from mujoco.rendering.classic import gl_context

        gl_context.GLContext = context_class
        _backend = backend
    return _backend


#: set to 1 to render in a process that imported TensorFlow (safe with a GPU driver's OpenGL)
ALLOW_WITH_TENSORFLOW_VARIABLE = "MLAGENTS_RENDER_WITH_TENSORFLOW"


def _refuse_next_to_tensorflow(backend: str) -> None:
    """Mesa's software OpenGL and TensorFlow each bring their own LLVM; in one process the second
    to start crashes the interpreter. Refuse with a clear message instead of a segmentation fault."""
    import sys

    allowed = os.environ.get(ALLOW_WITH_TENSORFLOW_VARIABLE) == "1"
    if backend in ("egl", "osmesa") and "tensorflow" in sys.modules and not allowed:
        raise RenderingUnavailable(
            "Offscreen rendering with Mesa's software OpenGL cannot run in a process that imported "
            "TensorFlow (both bring LLVM and the process crashes): render in a process of its own, "
            "e.g. run the example as a build (example-envs/builds/<Name>.x86_64); with a GPU "
            f"driver's OpenGL set {ALLOW_WITH_TENSORFLOW_VARIABLE}=1."
        )


class OffscreenRenderer(Closable):
    """Renders ``model`` at ``width`` x ``height`` pixels from its cameras (or a free camera).

    The model's offscreen buffer is set to exactly that size, without multisampling (software
    OpenGL pays for every sample) and with shadows off (a shadow map costs a second pass); the
    pictures are then identical from run to run for the same state.

    :raises RenderingUnavailable: when no OpenGL context can be created (see the module docstring).
    """

    def __init__(self, model: mujoco.MjModel, width: int, height: int, shadows: bool = False) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"A camera image needs a positive size; got {width} x {height}.")
        backend = gl_backend()
        _refuse_next_to_tensorflow(backend)
        model.vis.global_.offwidth = max(int(width), 1)
        model.vis.global_.offheight = max(int(height), 1)
        model.vis.quality.offsamples = 0
        self.width, self.height = int(width), int(height)
        try:
            self._renderer = mujoco.Renderer(model, self.height, self.width)
        except Exception as error:
            raise RenderingUnavailable(
                f"Cannot create a {backend} OpenGL context for offscreen rendering "
                f"({type(error).__name__}: {error}); {_INSTALL_HINT}."
            ) from error
        self._renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = int(shadows)
        self._shadows = bool(shadows)

    def render(self, data: mujoco.MjData, camera: int | str | mujoco.MjvCamera = -1) -> np.ndarray:
        """The picture of ``data``'s current state (positions and cameras must be up to date: after
        ``mj_forward``, or ``mj_kinematics`` then ``mj_camlight``) from ``camera`` (id, name, an ``MjvCamera``, or -1 for the free
        camera): uint8 ``(height, width, 3)``, row 0 = top."""
        renderer = self._renderer
        renderer.update_scene(data, camera)
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = int(self._shadows)
        return renderer.render()

    def close(self) -> None:
        """Free the OpenGL context (also done when the renderer is garbage collected)."""
        self._renderer.close()
