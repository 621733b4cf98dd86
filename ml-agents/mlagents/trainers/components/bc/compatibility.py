"""Demonstrations for a brain: named by the configuration and present (:func:`check_demo_paths`, before
any environment starts), read (:func:`load_demonstrations_for`) and checked to fit the brain
(:func:`check_demo_compatible`)."""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

from mlagents.envs.brain import BrainParameters
from mlagents.envs.exception import UnityException
from mlagents.trainers.buffer import Buffer
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import OfflineBCSettings, PPOSettings, TrainerConfig, TrainerSettings

__all__ = [
    "COMPARED_FIELDS",
    "brain_differences",
    "check_brain_to_imitate",
    "check_demo_compatible",
    "check_demo_paths",
    "demo_paths_of",
    "load_demonstrations_for",
]

#: BrainParameters fields a demonstration must share with the brain that learns from it (all but
#: the name).
COMPARED_FIELDS = (
    "vector_observation_space_size",
    "num_stacked_vector_observations",
    "camera_resolutions",
    "vector_action_space_size",
    "vector_action_descriptions",
    "vector_action_space_type",
)


def _normalized(value: Any) -> Any:
    """Lists and tuples alike, whole floats as ints: ``(3,)`` equals ``[3.0]``."""
    if isinstance(value, list | tuple):
        return [_normalized(item) for item in value]
    if isinstance(value, dict):
        return {key: _normalized(item) for key, item in value.items()}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def brain_differences(demo: BrainParameters, brain: BrainParameters) -> list[str]:
    """The compared fields in which ``demo`` and ``brain`` differ, as readable texts."""
    differences = []
    for name in COMPARED_FIELDS:
        demo_value, brain_value = getattr(demo, name), getattr(brain, name)
        if _normalized(demo_value) != _normalized(brain_value):
            differences.append(
                f"{name} is {demo_value!r} in the demonstration but {brain_value!r} in the brain"
            )
    return differences


def check_demo_compatible(demo: BrainParameters, brain: BrainParameters, demo_path: str) -> None:
    """:raises UnityTrainerException: the demonstration at ``demo_path`` was recorded with other
    observations or actions than ``brain`` has."""
    differences = brain_differences(demo, brain)
    if differences:
        raise UnityTrainerException(
            "The provided demonstration is not compatible with the brain being used for performance "
            f"evaluation: {demo_path} was recorded by brain {demo.brain_name} and its "
            f"{'; '.join(differences)} {brain.brain_name}. Record a demonstration with this brain."
        )


def check_brain_to_imitate(brain_name: str, brain_to_imitate: str, brain_names: Collection[str]) -> None:
    """:raises UnityTrainerException: ``brain_to_imitate`` (the teacher of online BC for
    ``brain_name``) is not among ``brain_names``, the brains Python sees."""
    if brain_to_imitate not in brain_names:
        raise UnityTrainerException(
            f"The brain_to_imitate {brain_to_imitate} of brain {brain_name} is not a brain "
            f"of the environment, or it is not broadcast (brains sending observations: "
            f"{', '.join(sorted(brain_names)) or 'none'}). Name the teacher brain and start the "
            "environment with it broadcast."
        )


def load_demonstrations_for(
    brain: BrainParameters, demo_path: str, sequence_length: int
) -> tuple[BrainParameters, Buffer]:
    """The demonstrations at ``demo_path`` as a buffer (:func:`mlagents.trainers.demo_loader.demo_to_buffer`)
    for ``brain``, checked with :func:`check_demo_compatible`.

    :raises UnityTrainerException: no readable demonstration at ``demo_path`` (the loader's message),
        or one recorded with other observations or actions.
    """
    from mlagents.trainers.demo_loader import demo_to_buffer

    try:
        demo_brain, buffer = demo_to_buffer(demo_path, sequence_length)
    except UnityTrainerException:
        raise
    except (OSError, ValueError, UnityException) as error:
        raise UnityTrainerException(
            f"The demonstrations of brain {brain.brain_name} could not be read: {error}"
        ) from None
    check_demo_compatible(demo_brain, brain, demo_path)
    return demo_brain, buffer


def demo_paths_of(config: TrainerConfig) -> list[tuple[str, str, str]]:
    """The demonstrations a trainer configuration reads: (section, key, path) for every brain section
    with ``trainer: offline_bc`` (``demo_path``) or a PPO ``pretraining`` section
    (``pretraining.demo_path``); the ``default`` section's only when there are no brain sections
    (otherwise it is checked when a brain without a section uses it)."""
    sections: list[tuple[str, TrainerSettings]] = list(config.sections.items())
    if not sections and config.default is not None:
        sections = [("default", config.default)]
    found = []
    for name, settings in sections:
        if isinstance(settings, OfflineBCSettings):
            found.append((name, "demo_path", settings.demo_path))
        elif isinstance(settings, PPOSettings) and settings.pretraining is not None:
            found.append((name, "pretraining demo_path", settings.pretraining.demo_path))
    return found


def check_demo_paths(config: TrainerConfig) -> None:
    """Check, before any environment starts, that every demonstration the configuration names exists:
    a ``.demo`` file, or a folder holding ``.demo`` files.

    :raises UnityTrainerException: naming the brain, the key and the path.
    """
    for section, key, path in demo_paths_of(config):
        where = "the default section" if section == "default" else f"brain {section}"
        in_file = f" (trainer config {config.path})" if config.path else ""
        if os.path.isfile(path):
            if not path.endswith(".demo"):
                raise UnityTrainerException(
                    f"The {key} {path} of {where}{in_file} is not a '.demo' file. Please provide a file "
                    "with the correct extension."
                )
        elif os.path.isdir(path):
            if not any(name.endswith(".demo") for name in os.listdir(path)):
                raise UnityTrainerException(
                    f"The {key} {path} of {where}{in_file} is a folder without '.demo' files."
                )
        else:
            raise UnityTrainerException(
                f"The {key} {path} of {where}{in_file} does not exist: give the path of a '.demo' file "
                "(e.g. demos/ExpertBasic.demo) or of a folder of them, relative to where you run mlagents-learn."
            )
