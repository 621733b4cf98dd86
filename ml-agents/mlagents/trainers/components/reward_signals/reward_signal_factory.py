"""Builds the reward signals named in a trainer configuration: :func:`create_reward_signal`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mlagents.trainers.components.reward_signals import RewardSignal
from mlagents.trainers.components.reward_signals.curiosity.signal import CuriosityRewardSignal
from mlagents.trainers.components.reward_signals.extrinsic.signal import ExtrinsicRewardSignal
from mlagents.trainers.components.reward_signals.gail.signal import GAILRewardSignal
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import SIGNALS_NOT_YET_AVAILABLE, RewardSignalSettings

LOGGER = logging.getLogger("mlagents.trainers")

NAME_TO_CLASS: dict[str, type[RewardSignal]] = {
    "extrinsic": ExtrinsicRewardSignal,
    "curiosity": CuriosityRewardSignal,
    "gail": GAILRewardSignal,
}

# Signals of the 0.9 toolkit that this version does not provide yet.
NOT_YET_AVAILABLE = SIGNALS_NOT_YET_AVAILABLE


def create_reward_signal(
    policy: Any,
    policy_model: Any,
    name: str,
    config_entry: RewardSignalSettings | Mapping[str, Any] | None,
) -> RewardSignal:
    """Create the reward signal ``name`` with its settings.

    :param policy: the policy the signal belongs to.
    :param policy_model: the policy's network.
    :param name: key of the ``reward_signals`` section (``extrinsic``, ...).
    :param config_entry: the signal's :class:`~mlagents.trainers.settings.RewardSignalSettings`, or
        its hyper-parameters as a dict (parsed here, with the same checks).
    :raises UnityTrainerException: unknown signal name ("Unknown reward signal type <name>"), a
        missing required hyper-parameter, or an unexpected one
        ("Unknown parameters given for reward signal <name>").
    """
    if isinstance(config_entry, RewardSignalSettings):
        settings = config_entry
    else:
        settings = RewardSignalSettings.from_dict(name, config_entry)
    signal_class = NAME_TO_CLASS.get(name)
    if signal_class is None:
        raise UnityTrainerException(f"Unknown reward signal type {name}")
    return signal_class(policy, policy_model, **settings.signal_kwargs())
