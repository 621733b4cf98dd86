"""The ML-Agents example environments, written in Python and started like Unity builds.

Every ``example-envs/builds/<Name>.x86_64`` is a link to the ``unity-build-launcher`` script, which
runs ``python -m mlagents.example_envs <Name>``. What other packages may ask of the examples is
here, answered without starting a build:

* :func:`describe_build`: what an example build would show Python: its scene, and its brains with
  the parameters it would send at initialization (as the build reads ``$MLAGENTS_BUILD_ARGS``);
* :func:`example_name` and :func:`example_names`: which examples there are, by name.

The SDK (``sdk/``), the scenes and their catalogue (``registry.py``) are imported by these
functions only when they are called, so that importing this package stays cheap (the launcher
does it to find a usable interpreter) and the SDK can be imported without the examples.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from mlagents.envs.communicator_objects import BrainParametersProto

__all__ = [
    "LAUNCHER_NAME",
    "BuildBrain",
    "BuildDescription",
    "describe_build",
    "example_name",
    "example_names",
]

#: The script every example build links to; the link's name selects the scene.
LAUNCHER_NAME = "unity-build-launcher"
#: What a build path may end with (the name of the example is what comes before).
_BUILD_EXTENSIONS = (".x86_64", ".x86", ".exe", ".app")
#: The extensions a build path given to UnityEnvironment may leave out (it adds the platform's).
_LAUNCHER_EXTENSIONS = (".x86_64", ".x86")


@dataclass(frozen=True)
class BuildBrain:
    """One brain an example build shows Python.

    :ivar parameters: what the build sends for it at initialization.
    :ivar external: True when Python decides for the brain and trains it (``is_training`` of the
        parameters); False for a brain the build decides for and only broadcasts (a teacher).
    """

    parameters: BrainParametersProto
    external: bool


@dataclass(frozen=True)
class BuildDescription:
    """What an example build shows Python, known without starting it.

    :ivar scene: the example's name in the catalogue (``"3DBall"``).
    :ivar academy_name: the academy name the build reports.
    :ivar brains: brain name -> :class:`BuildBrain`, in the order the build reports them.
    """

    scene: str
    academy_name: str
    brains: Mapping[str, BuildBrain]


def _launched_scene(path: str) -> str | None:
    """The scene name of the launcher link at ``path`` (with or without its extension), or None
    when there is no such file or it is not a link to the launcher."""
    base = path.strip()
    for extension in _LAUNCHER_EXTENSIONS:
        base = base.removesuffix(extension)
    for extension in ("", *_LAUNCHER_EXTENSIONS):
        candidate = base + extension
        if os.path.isfile(candidate):
            if os.path.basename(os.path.realpath(candidate)) != LAUNCHER_NAME:
                return None
            return os.path.basename(base)
    return None


def describe_build(path: str) -> BuildDescription | None:
    """What the example build at ``path`` (``example-envs/builds/3DBall.x86_64``, the extension may
    be left out) would show Python if it were started now: the brains Python sees with the options
    of ``$MLAGENTS_BUILD_ARGS`` (a teacher is added, a brain the build decides for is not
    external), their parameters and the academy name. Nothing is started.

    :returns: None when ``path`` is not a link to the launcher, its name is no example, or the
        build would refuse the options of ``$MLAGENTS_BUILD_ARGS`` (the build itself says why
        when it is started).
    """
    name = _launched_scene(path)
    if name is None:
        return None
    from . import registry  # noqa: F401  (registers the examples' names, as the launcher does)
    from .sdk.arguments import brain_settings, build_arguments
    from .sdk.catalogue import resolve_scene
    from .sdk.wire import initialization_output

    try:
        scene = resolve_scene(name)
        settings = brain_settings(build_arguments([]), scene)
    except (KeyError, ValueError):  # an unknown scene, or options the build refuses (BrainSetupError)
        return None
    sent = initialization_output(settings.initialization_spec(scene.spec()))
    brains = {proto.brain_name: BuildBrain(proto, proto.is_training) for proto in sent.brain_parameters}
    return BuildDescription(scene=name, academy_name=sent.name, brains=brains)


def example_names() -> list[str]:
    """The names of the example environments (``"3DBall"``, ``"Basic"``, ...), sorted."""
    from .registry import SCENES

    return sorted(SCENES)


def example_name(path: str) -> str | None:
    """The example a build path names: its file name without ``.x86_64``, ``.x86``, ``.exe`` or
    ``.app`` (``.../3DBall.x86_64`` -> ``"3DBall"``), or None when no example has that name. The
    path need not exist."""
    name = os.path.basename(path.rstrip("/"))
    for extension in _BUILD_EXTENSIONS:
        name = name.removesuffix(extension)
    return name if name in example_names() else None
