"""The imitation checks that need the environment's brains, run before an example build starts.

A demonstration recorded with other observations or actions than its brain's, or a
``brain_to_imitate`` the environment lacks, can be found only once the brains are known. For an
example build they are known without starting it (:mod:`mlagents.trainers.build_brains`), and
:func:`check_imitation_of_brain` runs for each of its brains from
:func:`mlagents.trainers.prelaunch.check_before_launch`; other builds are checked once they
reported their brains.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.build_brains import LAUNCHER_NAME, demonstration_brain, example_build_brains
from mlagents.trainers.components.bc.compatibility import check_brain_to_imitate, check_demo_compatible
from mlagents.trainers.settings import (
    OfflineBCSettings,
    OnlineBCSettings,
    PPOSettings,
    TrainerConfig,
    TrainerSettings,
)

__all__ = [
    "LAUNCHER_NAME",
    "check_imitation_before_launch",
    "check_imitation_of_brain",
    "demonstration_brain",
    "example_build_brains",
]


def check_imitation_of_brain(
    name: str,
    settings: TrainerSettings,
    brain: BrainParameters,
    brain_names: Collection[str],
    read_brain: Callable[[str], BrainParameters] = demonstration_brain,
) -> None:
    """Check the demonstrations (offline BC, PPO pretraining) or the ``brain_to_imitate`` (online
    BC) of the brain ``name`` against its parameters ``brain`` and the environment's ``brain_names``;
    ``read_brain`` gives the brain a demonstration was recorded with.

    :raises UnityTrainerException: the first problem found (the same one-line message as after the
        build started).
    """
    demo_path = None
    if isinstance(settings, OfflineBCSettings):
        demo_path = settings.demo_path
    elif isinstance(settings, PPOSettings) and settings.pretraining is not None:
        demo_path = settings.pretraining.demo_path
    elif isinstance(settings, OnlineBCSettings):
        check_brain_to_imitate(name, settings.brain_to_imitate, brain_names)
    if demo_path is not None:
        check_demo_compatible(read_brain(demo_path), brain, demo_path)


def check_imitation_before_launch(config: TrainerConfig, env_path: str | None) -> bool:
    """For an example build, the imitation checks of every brain it trains (reward signals aside:
    :func:`mlagents.trainers.prelaunch.check_before_launch` runs both).

    :returns: True when ``env_path`` is an example build and was checked.
    :raises UnityTrainerException: the first problem found.
    """
    from mlagents.trainers.prelaunch import trained_brains

    brains = example_build_brains(env_path)
    if brains is None:
        return False
    for name, settings, brain in trained_brains(config, brains):
        check_imitation_of_brain(name, settings, brain, brains)
    return True
