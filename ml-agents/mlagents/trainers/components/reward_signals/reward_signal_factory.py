"""Builds the reward signals named in a trainer configuration: :func:`create_reward_signal`."""

from __future__ import annotations

import logging
from typing import Any

from mlagents.trainers.components.reward_signals import RewardSignal
from mlagents.trainers.components.reward_signals.extrinsic.signal import ExtrinsicRewardSignal
from mlagents.trainers.exception import UnityTrainerException

LOGGER = logging.getLogger("mlagents.trainers")

NAME_TO_CLASS: dict[str, type[RewardSignal]] = {"extrinsic": ExtrinsicRewardSignal}

# Signals of the 0.9 toolkit that this version does not provide yet.
NOT_YET_AVAILABLE = ("curiosity", "gail")


def create_reward_signal(
    policy: Any, policy_model: Any, name: str, config_entry: dict[str, Any] | None
) -> RewardSignal:
    """Create the reward signal ``name`` with the hyper-parameters ``config_entry``.

    :param policy: the policy the signal belongs to.
    :param policy_model: the policy's network.
    :param name: key of the ``reward_signals`` section (``extrinsic``, ...).
    :param config_entry: the signal's hyper-parameters.
    :raises UnityTrainerException: unknown signal name ("Unknown reward signal type <name>"), a
        missing required hyper-parameter, or an unexpected one
        ("Unknown parameters given for reward signal <name>").
    """
    signal_class = NAME_TO_CLASS.get(name)
    if signal_class is None:
        if name in NOT_YET_AVAILABLE:
            raise UnityTrainerException(
                f"Unknown reward signal type {name}: the {name} reward signal is not available in this version; "
                f"available signals: {', '.join(NAME_TO_CLASS)}."
            )
        raise UnityTrainerException(f"Unknown reward signal type {name}")
    signal_class.check_config(config_entry)
    try:
        return signal_class(policy, policy_model, **(config_entry or {}))
    except TypeError:
        raise UnityTrainerException(f"Unknown parameters given for reward signal {name}") from None
