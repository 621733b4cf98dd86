"""The checks of the trainer configuration that need the environment's brains, run before an
example build starts: :func:`check_before_launch`.

A setting that names a file recorded by a brain (the ``demo_path`` of offline BC, of PPO's
``pretraining`` and of the ``gail`` reward signal) or another brain (online BC's
``brain_to_imitate``) can be checked only against the brains the environment has. For an example
build those are read from the example catalogue without starting it
(:func:`mlagents.trainers.build_brains.example_build_brains`), so such errors show at once, one
line, before anything is launched. Only the brains the build trains are checked: a shared
configuration (``config/gail_config.yaml``) may name demonstrations of brains it does not have.
Other builds are checked by the trainers once the build reported its brains, before the first step.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

from mlagents.envs.brain import BrainParameters
from mlagents.envs.exception import UnityException
from mlagents.trainers.build_brains import demonstration_brain, example_build_brains
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import NOT_AVAILABLE_ERRORS, TrainerConfig, TrainerSettings

__all__ = ["check_before_launch", "trained_brains"]

logger = logging.getLogger("mlagents.trainers")


def trained_brains(
    config: TrainerConfig, brains: Mapping[str, tuple[BrainParameters, bool]]
) -> Iterator[tuple[str, TrainerSettings, BrainParameters]]:
    """(name, settings, parameters) of every external brain of ``brains`` (name -> (parameters,
    external)) that has usable settings.

    :raises UnityTrainerException, UnityEnvironmentException: the brain's section asks for what is
        missing here (a demonstration that does not exist, a signal or trainer type this version
        lacks), which the trainer of that brain would report after the start.
    """
    for name, (brain, external) in brains.items():
        if not external:
            continue
        try:
            settings = config.for_brain(name)
        except NOT_AVAILABLE_ERRORS:
            raise
        except (UnityException, UnityTrainerException):
            continue  # a brain without usable configuration is reported once the build started
        yield name, settings, brain


def check_before_launch(config: TrainerConfig, env_path: str | None) -> bool:
    """For an example build, check the settings of every brain it trains that need the brain: its
    section's missing demonstrations, its imitation settings and its reward signals' demonstrations.

    :returns: True when ``env_path`` is an example build and was checked.
    :raises UnityTrainerException, UnityEnvironmentException: the first problem found, with the
        message the trainers give when they find it after the start.
    """
    from mlagents.trainers.components.bc.prelaunch import check_imitation_of_brain
    from mlagents.trainers.components.reward_signals.prelaunch import check_signals_of_brain

    brains = example_build_brains(env_path)
    if brains is None:
        return False
    # A demonstration named twice (pretraining and gail of one brain) is read once.
    recorded_by: dict[str, BrainParameters] = {}

    def read_brain(demo_path: str) -> BrainParameters:
        if demo_path not in recorded_by:
            recorded_by[demo_path] = demonstration_brain(demo_path)
        return recorded_by[demo_path]

    for name, settings, brain in trained_brains(config, brains):
        check_imitation_of_brain(name, settings, brain, brains, read_brain)
        check_signals_of_brain(settings, brain, read_brain)
    logger.debug("Settings that need the brains checked against %s before it starts.", env_path)
    return True
