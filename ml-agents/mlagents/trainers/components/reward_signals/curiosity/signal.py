"""The curiosity reward signal: :class:`CuriosityRewardSignal`.

Reward of a transition ``s -> s'`` with action ``a``: the forward model's error ``e`` (see
:mod:`.model`), scaled as ``clip(strength * e, 0, 1)``; it is 0 until the module was first trained
(the forward model of a fresh network says nothing about novelty). The module has its own Adam
optimizer and takes one step on every PPO mini-batch, on the same transitions. Its value head
bootstraps at episode ends (curiosity has no terminal state).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.timers import timed
from mlagents.trainers.adam import Adam
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.components.reward_signals import RewardSignal, RewardSignalResult
from mlagents.trainers.components.reward_signals.curiosity.model import CuriosityModel
from mlagents.trainers.layers import Initializer
from mlagents.trainers.tf_policy import FixedSignatureFunction

__all__ = ["CuriosityRewardSignal"]

#: The scaled reward is clipped to [0, REWARD_CLIP].
REWARD_CLIP = 1.0
#: the PPO policy clips its continuous sample to [-ACTION_CLIP, ACTION_CLIP] and divides by it
ACTION_CLIP = 3.0


class CuriosityRewardSignal(RewardSignal):
    """The intrinsic curiosity module as a reward signal.

    Configuration keys: ``strength``, ``gamma``, ``encoding_size`` (required), ``learning_rate``
    (default 3e-4).

    :param policy: the PPO policy (its brain, seed and observation feeds are used).
    :param policy_model: the policy's network (unused: the module has its own encoders).
    :ivar has_updated: True once the module took its first training step (rewards are 0 before).
    """

    def __init__(
        self,
        policy: Any,
        policy_model: Any,
        strength: float,
        gamma: float,
        encoding_size: int = 128,
        learning_rate: float = 3e-4,
    ) -> None:
        super().__init__(policy, policy_model, strength, gamma)
        self.use_terminal_states = False
        self.encoding_size = int(encoding_size)
        self.learning_rate = float(learning_rate)
        brain = policy.brain
        self.model = CuriosityModel(
            vec_obs_size=policy.vec_obs_size,
            vis_obs_shapes=[
                (int(r["height"]), int(r["width"]), 1 if r["blackAndWhite"] else 3)
                for r in brain.camera_resolutions
            ],
            act_size=list(brain.vector_action_space_size),
            is_continuous=policy.use_continuous_act,
            encoding_size=self.encoding_size,
            # Its own stream of initial values: adding the signal leaves the policy's weights alone.
            init=Initializer(int(policy.seed) * 7919 + 1),
        )
        self.optimizer = Adam(self.model.trainable_variables, name="curiosity_optimizer")
        self.has_updated = False
        self.update_dict = {
            "curiosity_forward_loss": "forward_loss",
            "curiosity_inverse_loss": "inverse_loss",
            "curiosity_update": "loss",
        }
        self.stats_name_to_update_name = {
            "Losses/Curiosity Forward Loss": "curiosity_forward_loss",
            "Losses/Curiosity Inverse Loss": "curiosity_inverse_loss",
        }
        self._build_functions()

    def _build_functions(self) -> None:
        model = self.model
        optimizer = self.optimizer
        learning_rate = self.learning_rate

        def reward(inputs: dict[str, tf.Tensor]) -> tf.Tensor:
            return model.outputs(inputs)["intrinsic_reward"]

        def train(inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            variables = model.trainable_variables
            with tf.GradientTape() as tape:
                losses = model.losses(inputs)
            gradients = tape.gradient(losses["loss"], variables)
            optimizer.apply_gradients(zip(gradients, variables), learning_rate)
            return losses

        self._reward_fn = FixedSignatureFunction(reward, [model.input_signature(with_masks=False)])
        self._train_fn = FixedSignatureFunction(train, [model.input_signature(with_masks=True)])

    @classmethod
    def check_config(cls, config_dict: dict[str, Any] | None, param_keys: list[str] | None = None) -> None:
        """Curiosity needs ``strength``, ``gamma`` and ``encoding_size``."""
        super().check_config(config_dict, ["strength", "gamma", "encoding_size"])

    def checkpoint_objects(self) -> dict[str, tf.Module]:
        """What a checkpoint of the policy keeps of the signal: the module and its optimizer."""
        return {"model": self.model, "optimizer": self.optimizer}

    # ------------------------------------------------------------------ rewards

    @timed
    def evaluate(self, current_info: Any, next_info: Any) -> RewardSignalResult:
        """``e`` for every agent of ``next_info`` (its action: ``next_info.previous_vector_actions``)."""
        n = len(agent_ids(next_info))
        if n == 0:
            empty = np.zeros(0, dtype=np.float32)
            return RewardSignalResult(empty, empty)
        inputs: dict[str, np.ndarray] = {}
        current = self.policy.observation_feed(current_info)
        following = self.policy.observation_feed(next_info)
        if self.model.vec_obs_size > 0:
            inputs["vector_observation"] = current["vector_observation"]
            inputs["next_vector_observation"] = following["vector_observation"]
        for i in range(len(self.model.vis_obs_shapes)):
            inputs[f"visual_observation_{i}"] = current[f"visual_observation_{i}"]
            inputs[f"next_visual_observation_{i}"] = following[f"visual_observation_{i}"]
        inputs["actions"] = self._actions(next_info.previous_vector_actions, n)
        unscaled = self._reward_fn(inputs).numpy().astype(np.float32)
        return RewardSignalResult(self.scale(unscaled), unscaled)

    def scale(self, unscaled: np.ndarray) -> np.ndarray:
        """``clip(strength * e, 0, 1)`` once trained, zeros before."""
        factor = self.strength * float(self.has_updated)
        return np.clip(unscaled * factor, 0.0, REWARD_CLIP).astype(np.float32)

    def _actions(self, actions: Any, n: int) -> np.ndarray:
        if self.model.is_continuous:
            return np.asarray(actions, dtype=np.float32).reshape(n, self.model.act_size[0])
        return np.asarray(actions).reshape(n, len(self.model.act_size)).astype(np.int32)

    # ------------------------------------------------------------------ training

    def prepare_update(
        self, policy_model: Any, mini_batch: dict[str, np.ndarray], num_sequences: int
    ) -> dict[str, Any]:
        """The module's inputs from a PPO mini-batch (buffer fields ``vector_obs``, ``next_vector_in``,
        ``visual_obs{i}``, ``next_visual_obs{i}``, ``actions``, ``masks``); from now on rewards count."""
        n = len(mini_batch["masks"])
        inputs: dict[str, Any] = {"masks": np.asarray(mini_batch["masks"], dtype=np.float32).reshape(n)}
        if self.model.vec_obs_size > 0:
            inputs["vector_observation"] = np.asarray(mini_batch["vector_obs"], dtype=np.float32).reshape(
                n, -1
            )
            inputs["next_vector_observation"] = np.asarray(
                mini_batch["next_vector_in"], dtype=np.float32
            ).reshape(n, -1)
        for i in range(len(self.model.vis_obs_shapes)):
            inputs[f"visual_observation_{i}"] = np.asarray(mini_batch[f"visual_obs{i}"], dtype=np.float32)
            inputs[f"next_visual_observation_{i}"] = np.asarray(
                mini_batch[f"next_visual_obs{i}"], dtype=np.float32
            )
        inputs["actions"] = self._actions(self._taken_actions(mini_batch), n)
        self.has_updated = True
        return inputs

    def _taken_actions(self, mini_batch: dict[str, np.ndarray]) -> np.ndarray:
        """The actions of a mini-batch as the policy's ``selected_actions``: for continuous
        control the stored unclipped sample ``actions_pre`` clipped to [-3, 3] and divided by 3
        (the action the agent was sent), else ``actions``. A buffer without ``actions_pre``
        (demonstrations) gives its ``actions`` as they are."""
        if self.model.is_continuous and "actions_pre" in mini_batch:
            pre = np.asarray(mini_batch["actions_pre"], dtype=np.float32)
            return np.clip(pre, -ACTION_CLIP, ACTION_CLIP) / np.float32(ACTION_CLIP)
        return np.asarray(mini_batch["actions"])

    @timed
    def update(self, mini_batch: dict[str, np.ndarray], num_sequences: int) -> dict[str, float]:
        """One Adam step of the module on the PPO mini-batch; returns its forward and inverse losses."""
        losses = self._train_fn(self.prepare_update(self.policy_model, mini_batch, num_sequences))
        return {name: float(losses[key].numpy()) for name, key in self.update_dict.items()}
