"""The scene catalogue: names under which scenes can be started (``python -m mlagents.example_envs
<Name>``, ``LocalEnvironment("<Name>")``).

The SDK knows no scene: a collection of scenes registers its names here when it is imported
(the example environments do so in ``mlagents.example_envs.registry``). A name maps to a Scene
subclass or to a ``"package.module:Class"`` path that is imported only when the scene is looked
up, so that starting one build does not import every scene.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from .scene import Scene

__all__ = ["find_scene", "import_scene", "register_scene", "registered_scenes", "resolve_scene"]

_SCENES: dict[str, str | type[Scene]] = {}


def register_scene(name: str, scene: str | type[Scene]) -> None:
    """Make ``scene`` (a Scene subclass or a ``"package.module:Class"`` path) known as ``name``.

    :raises ValueError: ``name`` is already registered for another scene, or a path lacks ``:``.
    """
    if isinstance(scene, str) and ":" not in scene:
        raise ValueError(f"A scene path is 'package.module:Class', not {scene!r}.")
    known = _SCENES.get(name)
    if known is not None and known != scene:
        raise ValueError(f"The scene name '{name}' is already registered for {known!r}.")
    _SCENES[name] = scene


def registered_scenes() -> Mapping[str, str | type[Scene]]:
    """A copy of the catalogue: name -> Scene subclass or ``"module:Class"`` path."""
    return dict(_SCENES)


def find_scene(name: str) -> type[Scene]:
    """The Scene class registered as ``name``.

    :raises KeyError: ``name`` is not registered (the message lists the registered names).
    :raises ValueError: the registered path cannot be imported or is not a Scene subclass.
    """
    try:
        scene = _SCENES[name]
    except KeyError:
        known = ", ".join(sorted(_SCENES)) or "none (import the module that registers them)"
        raise KeyError(f"There is no example environment called '{name}'. Known examples: {known}.") from None
    return import_scene(scene) if isinstance(scene, str) else scene


def import_scene(path: str) -> type[Scene]:
    """The Scene subclass at ``"package.module:Class"``.

    :raises ValueError: the module or class cannot be imported, or it is not a Scene subclass.
    """
    module_name, _, class_name = path.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"Cannot load the scene '{path}': {error}") from error
    if not (isinstance(found, type) and issubclass(found, Scene)):
        raise ValueError(f"'{path}' is not a Scene subclass (mlagents.example_envs.sdk.scene.Scene).")
    return found


def resolve_scene(scene: str | type[Scene]) -> type[Scene]:
    """The Scene class a build or a LocalEnvironment runs: for a registered name ("3DBall"), a
    "package.module:Class" path (your own environment) or a Scene subclass (returned as it is).

    :raises KeyError: for an unknown name (the message lists the registered ones).
    :raises ValueError: when a "module:Class" path cannot be imported or is not a Scene.
    """
    if not isinstance(scene, str):
        return scene
    if ":" not in scene:
        return find_scene(scene)
    return import_scene(scene)
