"""The imitation checks that need the environment's brains, run before an example build starts.

A demonstration recorded with other observations or actions than its brain's, or a
``brain_to_imitate`` the environment lacks, can be found only once the brains are known. For an
example build (``example-envs/builds/<Name>.x86_64``, a link to the ``unity-build-launcher``
script) the brains are known without starting it: the launcher runs the scene registered as
``<Name>`` in the example catalogue, with the brain options of ``$MLAGENTS_BUILD_ARGS``. For those
builds :func:`check_imitation_before_launch` runs the checks from the scene's description; other
builds are checked once they reported their brains, as before.
"""

from __future__ import annotations

import logging
import os

from mlagents.envs.brain import BrainParameters
from mlagents.envs.exception import UnityException
from mlagents.trainers.components.bc.compatibility import check_brain_to_imitate, check_demo_compatible
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import OfflineBCSettings, OnlineBCSettings, PPOSettings, TrainerConfig

__all__ = ["LAUNCHER_NAME", "check_imitation_before_launch", "demonstration_brain", "example_build_brains"]

logger = logging.getLogger("mlagents.trainers")

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


def check_imitation_before_launch(config: TrainerConfig, env_path: str | None) -> bool:
    """For an example build, check every external brain's demonstrations (offline BC, PPO
    pretraining) and ``brain_to_imitate`` (online BC) against the build's brains.

    :returns: True when ``env_path`` is an example build and was checked.
    :raises UnityTrainerException: the first problem found (the same one-line message as after the
        build started).
    """
    brains = example_build_brains(env_path)
    if brains is None:
        return False
    for name, (brain, external) in brains.items():
        if not external:
            continue
        try:
            settings = config.for_brain(name)
        except (UnityException, UnityTrainerException):
            continue  # a brain without usable configuration is reported once the build started
        demo_path = None
        if isinstance(settings, OfflineBCSettings):
            demo_path = settings.demo_path
        elif isinstance(settings, PPOSettings) and settings.pretraining is not None:
            demo_path = settings.pretraining.demo_path
        elif isinstance(settings, OnlineBCSettings):
            check_brain_to_imitate(name, settings.brain_to_imitate, brains)
        if demo_path is not None:
            check_demo_compatible(demonstration_brain(demo_path), brain, demo_path)
    logger.debug("Imitation settings checked against the brains of %s before it starts.", env_path)
    return True
