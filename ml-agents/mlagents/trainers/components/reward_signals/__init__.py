"""Reward signals: what a PPO policy is rewarded for, one value head each.

The ``reward_signals`` section of a brain's trainer configuration names the signals
(``extrinsic``, ``curiosity``, ``gail``) and their hyper-parameters, read into
:class:`~mlagents.trainers.settings.RewardSignalSettings`. Each signal
turns a transition ``current_info -> next_info`` into a reward per agent
(:meth:`RewardSignal.evaluate`), and the buffered steps of a mini-batch into a reward per step
(:meth:`RewardSignal.evaluate_batch`: an off-policy trainer re-evaluates the rewards of the steps it
replays); the policy learns a value head per signal with the signal's own discount ``gamma``.

The buffer columns a signal reads of a mini-batch, one row per step:

* ``environment_rewards``: the environment's reward after the step (extrinsic);
* ``vector_obs``, ``visual_obs{i}``: the observations the step decided on (curiosity, GAIL);
* ``next_vector_in``, ``next_visual_obs{i}``: the observations after it (curiosity);
* ``actions``: the action taken (curiosity, GAIL; curiosity prefers PPO's ``actions_pre``);
* ``done``: the episode ended with the step (GAIL with ``use_actions``).

Camera columns may hold the update buffer's codes (:func:`~mlagents.trainers.buffer.float_images`
decodes them). :func:`transition_batch` gives these columns of a transition, so that ``evaluate``
of the learned signals is ``evaluate_batch`` of the transition's columns.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.timers import hierarchical_timer
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.buffer import MiniBatch
from mlagents.trainers.exception import UnityTrainerException

if TYPE_CHECKING:
    import tensorflow as tf

    from mlagents.trainers.adam import Adam
    from mlagents.trainers.models import LearningModel

__all__ = [
    "LearnedRewardSignal",
    "RewardSignal",
    "RewardSignalResult",
    "SignalPolicy",
    "batch_length",
    "signal_tags",
    "transition_batch",
]


class SignalPolicy(Protocol):
    """What a reward signal reads of the policy it belongs to (a
    :class:`~mlagents.trainers.tf_policy.TFPolicy`)."""

    brain: BrainParameters
    seed: int


class RewardSignalResult(NamedTuple):
    """Rewards of the agents of ``next_info`` (same order), or of the steps of a mini-batch, float32
    arrays of shape (n,)."""

    scaled_reward: np.ndarray
    unscaled_reward: np.ndarray


def signal_tags(class_name: str) -> tuple[str, str]:
    """The TensorBoard tags of the reward signal class ``class_name``: ``Policy/<Short> Reward``
    and ``Policy/<Short> Value Estimate``, Short being the class name without ``RewardSignal``."""
    short_name = class_name.replace("RewardSignal", "")
    return f"Policy/{short_name} Reward", f"Policy/{short_name} Value Estimate"


def batch_length(mini_batch: MiniBatch) -> int:
    """The number of steps of a mini-batch: the length of its ``actions`` column, or of its first
    column when it has none (0 for no column)."""
    if "actions" in mini_batch:
        return len(mini_batch["actions"])
    return len(next(iter(mini_batch.values()))) if mini_batch else 0


def transition_batch(current_info: BrainInfo, next_info: BrainInfo) -> MiniBatch:
    """The buffer columns of the transitions ``current_info -> next_info`` (aligned: same agents, same
    order), one row per agent, as a trainer stores the step: ``visual_obs{i}``, ``vector_obs`` of
    ``current_info``; ``next_visual_obs{i}``, ``next_vector_in`` of ``next_info``; ``actions``
    (``next_info.previous_vector_actions``, the action taken), ``done`` (``next_info.local_done``)
    and ``environment_rewards`` (``next_info.rewards``)."""
    n = len(agent_ids(next_info))
    batch: MiniBatch = {
        "vector_obs": np.asarray(current_info.vector_observations),
        "next_vector_in": np.asarray(next_info.vector_observations),
        "done": np.asarray(next_info.local_done, dtype=bool).reshape(n),
        "environment_rewards": np.asarray(next_info.rewards, dtype=np.float32).reshape(n),
    }
    if next_info.previous_vector_actions is not None:
        batch["actions"] = np.asarray(next_info.previous_vector_actions).reshape(n, -1)
    for i, (camera, next_camera) in enumerate(
        zip(current_info.visual_observations, next_info.visual_observations)
    ):
        batch[f"visual_obs{i}"] = np.asarray(camera)
        batch[f"next_visual_obs{i}"] = np.asarray(next_camera)
    return batch


class RewardSignal(abc.ABC):
    """Base class of the reward signals.

    :param policy: the policy the signal belongs to.
    :param policy_model: that policy's network (GAIL normalizes with its normalizer).
    :param strength: multiplier of the reward.
    :param gamma: discount factor of this signal's value head.

    :ivar stat_name: TensorBoard tag of the episode sum of the scaled reward, ``Policy/<Short> Reward``.
    :ivar value_name: TensorBoard tag of the value estimate, ``Policy/<Short> Value Estimate``
        (Short = the class name without ``RewardSignal``).
    :ivar use_terminal_states: True if the value after an episode end is 0 (no bootstrapping).
    :ivar update_dict: key of the dict returned by :meth:`update` -> the loss it reports (empty
        when the signal has no network).
    :ivar stats_name_to_update_name: TensorBoard tag -> key of the dict returned by :meth:`update`.
    """

    def __init__(
        self, policy: SignalPolicy, policy_model: LearningModel, strength: float, gamma: float
    ) -> None:
        self.stat_name, self.value_name = signal_tags(self.__class__.__name__)
        self.policy = policy
        self.policy_model = policy_model
        self.strength = strength
        self.gamma = gamma
        self.use_terminal_states = True
        self.update_dict: dict[str, str] = {}
        self.stats_name_to_update_name: dict[str, str] = {}

    def evaluate(self, current_info: BrainInfo, next_info: BrainInfo) -> RewardSignalResult:
        """Rewards of the transition ``current_info -> next_info`` for the agents of ``next_info``.

        ``current_info`` is aligned with ``next_info`` (same agents, same order). The base signal
        gives zeros.
        """
        zeros = np.zeros(len(next_info.agents or []), dtype=np.float32)
        return RewardSignalResult(self.strength * zeros, zeros)

    def evaluate_batch(self, mini_batch: MiniBatch) -> RewardSignalResult:
        """Rewards of the n steps of ``mini_batch`` (buffer columns, see the module docstring), what
        :meth:`evaluate` gives for the same transitions. The base signal gives zeros."""
        zeros = np.zeros(batch_length(mini_batch), dtype=np.float32)
        return RewardSignalResult(self.strength * zeros, zeros)

    def checkpoint_objects(self) -> dict[str, tf.Module]:
        """The signal's TensorFlow objects a policy checkpoint keeps (name -> trackable); none here."""
        return {}

    def prepare_update(
        self, policy_model: LearningModel, mini_batch: MiniBatch, num_sequences: int
    ) -> Mapping[str, object]:
        """The inputs the signal's update takes from a PPO mini-batch (none by default)."""
        return {}

    def update(self, mini_batch: MiniBatch, num_sequences: int) -> dict[str, float]:
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


class LearnedRewardSignal(RewardSignal):
    """Base of the signals with a network of their own (curiosity, GAIL).

    A subclass builds ``model`` and its ``optimizer`` (both kept in the policy's checkpoints), gives
    :meth:`unscaled_rewards`, :meth:`scale`, :meth:`prepare_update` and :meth:`train`, and fills
    ``update_dict``. The reward is 0 until the first update (``has_updated``). Both :meth:`evaluate`
    and :meth:`evaluate_batch` read buffer columns (:func:`transition_batch`), through
    :meth:`unscaled_rewards`.
    """

    model: tf.Module
    optimizer: Adam
    has_updated: bool = False

    def checkpoint_objects(self) -> dict[str, tf.Module]:
        """What a checkpoint of the policy keeps of the signal: its network and optimizer."""
        return {"model": self.model, "optimizer": self.optimizer}

    def evaluate(self, current_info: BrainInfo, next_info: BrainInfo) -> RewardSignalResult:
        """(scaled, unscaled) rewards of every agent of ``next_info``, timed as
        ``<Signal>.evaluate``."""
        with hierarchical_timer(f"{type(self).__name__}.evaluate"):
            n = len(agent_ids(next_info))
            return self._rewards_of(transition_batch(current_info, next_info) if n else {}, n)

    def evaluate_batch(self, mini_batch: MiniBatch) -> RewardSignalResult:
        """(scaled, unscaled) rewards of the steps of ``mini_batch``, timed as
        ``<Signal>.evaluate_batch``; 0 (scaled) before the first update, as :meth:`evaluate`."""
        with hierarchical_timer(f"{type(self).__name__}.evaluate_batch"):
            return self._rewards_of(mini_batch, batch_length(mini_batch))

    def _rewards_of(self, mini_batch: MiniBatch, n: int) -> RewardSignalResult:
        if n == 0:
            empty = np.zeros(0, dtype=np.float32)
            return RewardSignalResult(empty, empty)
        unscaled = np.asarray(self.unscaled_rewards(mini_batch, n), dtype=np.float32).reshape(n)
        return RewardSignalResult(self.scale(unscaled), unscaled)

    def unscaled_rewards(self, mini_batch: MiniBatch, n: int) -> np.ndarray:
        """The rewards of the n steps of ``mini_batch`` before :meth:`scale` (float32, (n,))."""
        raise NotImplementedError

    def scale(self, unscaled: np.ndarray) -> np.ndarray:
        """The rewards the policy learns from."""
        raise NotImplementedError

    def train(self, inputs: Mapping[str, object]) -> Mapping[str, tf.Tensor]:
        """One step of the network on the inputs of :meth:`prepare_update`; returns its losses."""
        raise NotImplementedError

    def update(self, mini_batch: MiniBatch, num_sequences: int) -> dict[str, float]:
        """One step of the network on the PPO mini-batch, timed as ``<Signal>.update``; returns the
        values named by ``update_dict``."""
        with hierarchical_timer(f"{type(self).__name__}.update"):
            losses = self.train(self.prepare_update(self.policy_model, mini_batch, num_sequences))
            return {name: float(losses[key].numpy()) for name, key in self.update_dict.items()}
