"""The curiosity reward signal: :class:`CuriosityRewardSignal`.

Reward of a transition ``s -> s'`` with action ``a``: the forward model's error ``e`` (see
:mod:`.model`), scaled as ``clip(strength * e, 0, 1)``; it is 0 until the module was first trained
(the forward model of a fresh network says nothing about novelty). The module has its own Adam
optimizer and takes one step on every PPO mini-batch, on the same transitions. Its value head
bootstraps at episode ends (curiosity has no terminal state).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import tensorflow as tf

from mlagents.trainers.adam import Adam
from mlagents.trainers.buffer import MiniBatch, float_images
from mlagents.trainers.components.reward_signals import LearnedRewardSignal, SignalPolicy
from mlagents.trainers.components.reward_signals.curiosity.model import CuriosityModel
from mlagents.trainers.components.reward_signals.signal_layers import SignalShapes, signal_initializer
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.models import ACTION_CLIP

if TYPE_CHECKING:
    from mlagents.trainers.models import LearningModel

__all__ = ["CuriosityRewardSignal"]

#: The scaled reward is clipped to [0, REWARD_CLIP].
REWARD_CLIP = 1.0


class CuriosityRewardSignal(LearnedRewardSignal):
    """The intrinsic curiosity module as a reward signal.

    Configuration keys: ``strength``, ``gamma``, ``encoding_size`` (required), ``learning_rate``
    (default 3e-4).

    :param policy: the PPO policy (its brain, seed and observation feeds are used).
    :param policy_model: the policy's network (its inputs; the module has its own encoders).
    :ivar has_updated: True once the module took its first training step (rewards are 0 before).
    """

    model: CuriosityModel

    def __init__(
        self,
        policy: SignalPolicy,
        policy_model: LearningModel,
        strength: float,
        gamma: float,
        encoding_size: int = 128,
        learning_rate: float = 3e-4,
    ) -> None:
        super().__init__(policy, policy_model, strength, gamma)
        self.use_terminal_states = False
        self.encoding_size = int(encoding_size)
        self.learning_rate = float(learning_rate)
        self.model = CuriosityModel(
            SignalShapes.of(policy_model), self.encoding_size, signal_initializer(policy.seed, 1)
        )
        self.optimizer = Adam(self.model.trainable_variables, name="curiosity_optimizer")
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
            return optimizer.minimize(lambda: model.losses(inputs), model.trainable_variables, learning_rate)

        self._reward_fn = FixedSignatureFunction(reward, [model.input_signature(with_masks=False)])
        self._train_fn = FixedSignatureFunction(train, [model.input_signature(with_masks=True)])

    @classmethod
    def check_config(cls, config_dict: dict[str, Any] | None, param_keys: list[str] | None = None) -> None:
        """Curiosity needs ``strength``, ``gamma`` and ``encoding_size``."""
        super().check_config(config_dict, ["strength", "gamma", "encoding_size"])

    # ------------------------------------------------------------------ rewards

    def unscaled_rewards(self, mini_batch: MiniBatch, n: int) -> np.ndarray:
        """``e`` of the n steps of ``mini_batch`` (buffer fields ``vector_obs``, ``next_vector_in``,
        ``visual_obs{i}``, ``next_visual_obs{i}``, ``actions`` or ``actions_pre``)."""
        return self._reward_fn(self._transition_inputs(mini_batch, n)).numpy()

    def scale(self, unscaled: np.ndarray) -> np.ndarray:
        """``clip(strength * e, 0, 1)`` once trained, zeros before."""
        factor = self.strength * float(self.has_updated)
        return np.clip(unscaled * factor, 0.0, REWARD_CLIP).astype(np.float32)

    # ------------------------------------------------------------------ training

    def prepare_update(
        self, policy_model: LearningModel, mini_batch: MiniBatch, num_sequences: int
    ) -> dict[str, np.ndarray]:
        """The module's inputs from a PPO mini-batch (the fields of :meth:`unscaled_rewards` and
        ``masks``); from now on rewards count."""
        n = len(mini_batch["masks"])
        inputs = self._transition_inputs(mini_batch, n)
        inputs["masks"] = np.asarray(mini_batch["masks"], dtype=np.float32).reshape(n)
        self.has_updated = True
        return inputs

    def _transition_inputs(self, mini_batch: MiniBatch, n: int) -> dict[str, np.ndarray]:
        """The module's inputs of the n steps of ``mini_batch``: both observations and the action."""
        inputs: dict[str, np.ndarray] = {}
        if self.model.vec_obs_size > 0:
            inputs["vector_observation"] = np.asarray(mini_batch["vector_obs"], dtype=np.float32).reshape(
                n, -1
            )
            inputs["next_vector_observation"] = np.asarray(
                mini_batch["next_vector_in"], dtype=np.float32
            ).reshape(n, -1)
        for i in range(len(self.model.vis_obs_shapes)):
            inputs[f"visual_observation_{i}"] = float_images(mini_batch[f"visual_obs{i}"])
            inputs[f"next_visual_observation_{i}"] = float_images(mini_batch[f"next_visual_obs{i}"])
        inputs["actions"] = self.model.action_array(self._taken_actions(mini_batch), n)
        return inputs

    def _taken_actions(self, mini_batch: MiniBatch) -> np.ndarray:
        """The actions of a mini-batch as the policy's ``selected_actions``: for continuous
        control the stored unclipped sample ``actions_pre`` clipped to [-3, 3] and divided by 3
        (the action the agent was sent), else ``actions``. A buffer without ``actions_pre``
        (demonstrations) gives its ``actions`` as they are."""
        if self.model.is_continuous and "actions_pre" in mini_batch:
            pre = np.asarray(mini_batch["actions_pre"], dtype=np.float32)
            return np.clip(pre, -ACTION_CLIP, ACTION_CLIP) / np.float32(ACTION_CLIP)
        return np.asarray(mini_batch["actions"])

    def train(self, inputs: Mapping[str, object]) -> Mapping[str, tf.Tensor]:
        """One Adam step of the module; its forward and inverse losses."""
        losses: Mapping[str, tf.Tensor] = self._train_fn(inputs)
        return losses
