"""The brains a run will train, known before any environment starts.

For an example build (``example-envs/builds/<Name>.x86_64``, a link to the ``unity-build-launcher``
script) the brains are known without starting it: the launcher runs the scene registered as
``<Name>`` in the example catalogue, with the brain options of ``$MLAGENTS_BUILD_ARGS``
(:func:`example_build_brains`). A demonstration file tells the brain it was recorded with
(:func:`demonstration_brain`). Together they let the checks of settings that name files run before
launch.
"""

from __future__ import annotations

import os

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.exception import UnityTrainerException

__all__ = ["LAUNCHER_NAME", "demonstration_brain", "example_build_brains"]

#: The script every example build links to; the link's name selects the scene.
LAUNCHER_NAME = "unity-build-launcher"
#: The file names a build path may stand for (the environment adds the platform's extension).
_EXTENSIONS = ("", ".x86_64", ".x86")


def _example_scene_name(env_path: str) -> str | None:
    """The catalogue name of the example build at ``env_path`` (with or without its extension), or
    None when it is not a link to the launcher."""
    base = env_path.strip()
    for extension in (".x86_64", ".x86"):
        if base.endswith(extension):
            base = base[: -len(extension)]
    for extension in _EXTENSIONS:
        candidate = base + extension
        if os.path.isfile(candidate):
            if os.path.basename(os.path.realpath(candidate)) != LAUNCHER_NAME:
                return None
            return os.path.basename(base)
    return None


def example_build_brains(env_path: str | None) -> dict[str, tuple[BrainParameters, bool]] | None:
    """The brains Python will see from the example build at ``env_path``: name -> (parameters,
    external), read from the example catalogue without starting the build; None when ``env_path`` is
    not an example build, the examples are not installed, or the build would refuse its options
    (the build itself reports that when it starts)."""
    if env_path is None:
        return None
    name = _example_scene_name(env_path)
    if name is None:
        return None
    try:
        import mlagents.example_envs.registry  # noqa: F401  (registers the examples' names)
        from mlagents.example_envs.sdk.brains import BrainSetupError
        from mlagents.example_envs.sdk.cli import brain_settings, build_arguments
        from mlagents.example_envs.sdk.loading import resolve_scene
        from mlagents.example_envs.sdk.wire import brain_parameters_proto
    except ImportError:
        return None
    try:
        scene = resolve_scene(name)
        settings = brain_settings(build_arguments([]), scene)
    except (KeyError, ValueError, BrainSetupError):
        return None
    spec = settings.visible_spec(settings.scene_spec(scene.spec()))
    return {
        brain.name: (BrainParameters.from_proto(brain_parameters_proto(brain)), brain.is_training)
        for brain in spec.brains
    }


def demonstration_brain(demo_path: str) -> BrainParameters:
    """The brain parameters a demonstration (a ``.demo`` file, or the last of a folder's, as the
    loader takes them) was recorded with.

    :raises UnityTrainerException: no readable demonstration at ``demo_path``.
    """
    from mlagents.trainers.demo_loader import DemonstrationError, load_demonstration

    try:
        brain, _, _ = load_demonstration(demo_path)
    except DemonstrationError as error:
        raise UnityTrainerException(str(error)) from None
    return brain
