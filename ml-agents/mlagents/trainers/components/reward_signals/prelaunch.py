"""The checks of a brain's reward signals that need the brain's parameters, run before an example
build starts (:mod:`mlagents.trainers.prelaunch`); without TensorFlow.

The settings already checked what needs no brain: required keys, values, and that a ``demo_path``
exists. Here a gail signal's demonstrations are read and compared with the brain, with the same
one-line message as when the signal is built after the environment started.
"""

from __future__ import annotations

from collections.abc import Callable

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.build_brains import demonstration_brain
from mlagents.trainers.components.reward_signals.gail.demonstrations import check_demonstration_brain
from mlagents.trainers.settings import GAILSettings, PPOSettings, TrainerSettings

__all__ = ["check_signals_of_brain", "signal_demo_paths"]


def signal_demo_paths(settings: TrainerSettings) -> list[tuple[str, str]]:
    """(signal name, demonstration path) of every reward signal of ``settings`` that reads a file."""
    if not isinstance(settings, PPOSettings):
        return []
    return [
        (name, signal.demo_path)
        for name, signal in settings.reward_signals.items()
        if isinstance(signal, GAILSettings)
    ]


def check_signals_of_brain(
    settings: TrainerSettings,
    brain: BrainParameters,
    read_brain: Callable[[str], BrainParameters] = demonstration_brain,
) -> None:
    """Check that the demonstrations of every gail signal of ``settings`` fit ``brain``
    (``read_brain`` gives the brain a demonstration was recorded with).

    :raises UnityTrainerException: a demonstration cannot be read, or was recorded with other
        observations or actions.
    """
    for _, demo_path in signal_demo_paths(settings):
        check_demonstration_brain(read_brain(demo_path), brain, demo_path)
