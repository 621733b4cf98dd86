"""Finding the Scene class a build or a LocalEnvironment should run."""

from __future__ import annotations

import importlib

from ..registry import load_scene
from .scene import Scene


def resolve_scene(scene: str | type[Scene]) -> type[Scene]:
    """The Scene class for a registry name ("3DBall"), a "package.module:Class" path (your own
    environment) or a Scene subclass (returned as it is).

    :raises KeyError: for an unknown registry name (the message lists the known ones).
    :raises ValueError: when a "module:Class" path cannot be imported or is not a Scene.
    """
    if not isinstance(scene, str):
        return scene
    if ":" not in scene:
        return load_scene(scene)
    module_name, _, class_name = scene.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"Cannot load the scene '{scene}': {error}") from error
    if not (isinstance(found, type) and issubclass(found, Scene)):
        raise ValueError(f"'{scene}' is not a Scene subclass (mlagents.example_envs.sdk.scene.Scene).")
    return found
