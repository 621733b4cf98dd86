"""Finding the Scene class a build or a LocalEnvironment should run."""

from __future__ import annotations

from .catalogue import find_scene, import_scene
from .scene import Scene


def resolve_scene(scene: str | type[Scene]) -> type[Scene]:
    """The Scene class for a registered name ("3DBall", see :mod:`.catalogue`), a
    "package.module:Class" path (your own environment) or a Scene subclass (returned as it is).

    :raises KeyError: for an unknown name (the message lists the registered ones).
    :raises ValueError: when a "module:Class" path cannot be imported or is not a Scene.
    """
    if not isinstance(scene, str):
        return scene
    if ":" not in scene:
        return find_scene(scene)
    return import_scene(scene)
