"""Reward signals: what a PPO policy is rewarded for, one value head each.

The ``reward_signals`` section of a brain's trainer configuration names the signals
(``extrinsic``, ``curiosity``, ``gail``) and their hyper-parameters, read into
:class:`~mlagents.trainers.settings.RewardSignalSettings`. Each signal
turns a transition ``current_info -> next_info`` into a reward per agent
(:meth:`RewardSignal.evaluate`); the policy learns a value head per signal with the signal's own
discount ``gamma``, and the advantages of all signals are averaged.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

import numpy as np

from mlagents.trainers.exception import UnityTrainerException

__all__ = ["RewardSignal", "RewardSignalResult"]


class RewardSignalResult(NamedTuple):
    """Rewards of the agents of ``next_info`` (same order), float32 arrays of shape (n_agents,)."""

    scaled_reward: np.ndarray
    unscaled_reward: np.ndarray


class RewardSignal(abc.ABC):
    """Base class of the reward signals.

    :param policy: the policy the signal belongs to (a :class:`~mlagents.trainers.tf_policy.TFPolicy`).
    :param policy_model: that policy's network (signals with their own network read its inputs).
    :param strength: multiplier of the reward.
    :param gamma: discount factor of this signal's value head.

    :ivar stat_name: TensorBoard tag of the episode sum of the scaled reward, ``Policy/<Short> Reward``.
    :ivar value_name: TensorBoard tag of the value estimate, ``Policy/<Short> Value Estimate``
        (Short = the class name without ``RewardSignal``).
    :ivar use_terminal_states: True if the value after an episode end is 0 (no bootstrapping).
    :ivar update_dict: what the signal's own update computes (empty when it has no network).
    :ivar stats_name_to_update_name: TensorBoard tag -> key of the dict returned by :meth:`update`.
    """

    def __init__(self, policy: Any, policy_model: Any, strength: float, gamma: float) -> None:
        short_name = self.__class__.__name__.replace("RewardSignal", "")
        self.stat_name = f"Policy/{short_name} Reward"
        self.value_name = f"Policy/{short_name} Value Estimate"
        self.policy = policy
        self.policy_model = policy_model
        self.strength = strength
        self.gamma = gamma
        self.use_terminal_states = True
        self.update_dict: dict[str, Any] = {}
        self.stats_name_to_update_name: dict[str, str] = {}

    def evaluate(self, current_info: Any, next_info: Any) -> RewardSignalResult:
        """Rewards of the transition ``current_info -> next_info`` for the agents of ``next_info``.

        ``current_info`` is aligned with ``next_info`` (same agents, same order). The base signal
        gives zeros.
        """
        zeros = np.zeros(len(next_info.agents), dtype=np.float32)
        return RewardSignalResult(self.strength * zeros, zeros)

    def checkpoint_objects(self) -> dict[str, Any]:
        """The signal's TensorFlow objects a policy checkpoint keeps (name -> trackable); none here."""
        return {}

    def prepare_update(
        self, policy_model: Any, mini_batch: dict[str, np.ndarray], num_sequences: int
    ) -> dict[str, Any]:
        """Extra inputs the signal's update needs from a PPO mini-batch (none by default)."""
        return {}

    def update(self, mini_batch: dict[str, np.ndarray], num_sequences: int) -> dict[str, float]:
        """Train the signal's own network on the PPO mini-batch; returns the values named by
        :attr:`stats_name_to_update_name`. Signals without a network do nothing."""
        return {}

    @classmethod
    def check_config(cls, config_dict: dict[str, Any] | None, param_keys: list[str] | None = None) -> None:
        """Check that every key of ``param_keys`` is in ``config_dict``.

        :raises UnityTrainerException: naming the first missing key and the signal class.
        """
        config = config_dict or {}
        for key in param_keys or []:
            if key not in config:
                raise UnityTrainerException(
                    f"The hyper-parameter {key} could not be found for {cls.__name__}."
                )
