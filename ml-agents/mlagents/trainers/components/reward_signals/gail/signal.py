"""The GAIL reward signal: :class:`GAILRewardSignal`.

The discriminator (:mod:`.model`) learns to tell the expert's steps, read from the demonstrations
at ``demo_path``, from the policy's; the policy is rewarded ``strength * -log(1 - D + eps)`` for
steps that look like the expert's (0 until the discriminator was first trained; no clipping). The
discriminator has its own Adam optimizer and takes one step on every PPO mini-batch: the policy's
steps of the mini-batch against as many expert steps drawn at random (with replacement) from the
demonstrations. Its value head bootstraps at episode ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import tensorflow as tf

from mlagents.trainers.adam import Adam
from mlagents.trainers.buffer import MiniBatch, float_images
from mlagents.trainers.components.reward_signals import LearnedRewardSignal, SignalPolicy
from mlagents.trainers.components.reward_signals.gail.model import GAILModel
from mlagents.trainers.components.reward_signals.signal_layers import SignalShapes, signal_initializer
from mlagents.trainers.demo_loader import load_demonstrations_for
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.fixed_signature import FixedSignatureFunction

if TYPE_CHECKING:
    from mlagents.trainers.models import LearningModel

__all__ = ["GAILRewardSignal"]


class GAILRewardSignal(LearnedRewardSignal):
    """Generative adversarial imitation learning as a reward signal.

    Configuration keys: ``strength``, ``gamma``, ``demo_path`` (required), ``encoding_size``
    (default 64), ``learning_rate`` (3e-4), ``use_actions`` (false), ``use_vail`` (false).

    :param policy: the PPO policy (brain, seed, normalizer, sequence length).
    :param policy_model: the policy's network: its normalizer, when it normalizes, also
        normalizes the discriminator's vector input.
    :raises UnityTrainerException: the demonstrations cannot be read, do not fit the brain
        (:func:`~mlagents.trainers.demo_loader.load_demonstrations_for`), or contain no step.
    :ivar has_updated: True once the discriminator took its first step (rewards are 0 before).
    :ivar demonstration_buffer: the expert's steps (field name -> array; camera images as the
        update buffer stores them, see :func:`~mlagents.trainers.buffer.float_images`).
    """

    model: GAILModel

    def __init__(
        self,
        policy: SignalPolicy,
        policy_model: LearningModel,
        strength: float,
        gamma: float,
        demo_path: str,
        encoding_size: int = 64,
        learning_rate: float = 3e-4,
        use_actions: bool = False,
        use_vail: bool = False,
    ) -> None:
        super().__init__(policy, policy_model, strength, gamma)
        self.use_terminal_states = False
        self.demo_path = str(demo_path)
        self.learning_rate = float(learning_rate)
        self.use_actions = bool(use_actions)
        self.use_vail = bool(use_vail)
        self.demonstration_buffer = self._load_demonstrations()
        self.normalizer = policy_model.normalizer
        self.model = GAILModel(
            SignalShapes.of(policy_model),
            int(encoding_size),
            use_actions=self.use_actions,
            use_vail=self.use_vail,
            init=signal_initializer(policy.seed, 2),
            seed=policy.seed + 1,
        )
        self.optimizer = Adam(self.model.trainable_variables, name="gail_optimizer")
        self.rng = np.random.default_rng(policy.seed + 2)
        self.update_dict = {
            "gail_loss": "loss",
            "gail_policy_estimate": "policy_estimate",
            "gail_expert_estimate": "expert_estimate",
        }
        if self.use_vail:
            self.update_dict["kl_loss"] = "kl_loss"
            self.update_dict["gail_beta"] = "beta"
        self.stats_name_to_update_name = {
            "Losses/GAIL Loss": "gail_loss",
            "Policy/GAIL Policy Estimate": "gail_policy_estimate",
            "Policy/GAIL Expert Estimate": "gail_expert_estimate",
        }
        self._build_functions()

    # ------------------------------------------------------------------ set-up

    def _load_demonstrations(self) -> MiniBatch:
        # Single steps (no sequence padding): the discriminator judges steps, and padding would add
        # all-zero "expert" steps.
        _, buffer = load_demonstrations_for(self.policy.brain, self.demo_path, 1)
        update_buffer = buffer.update_buffer
        if "actions" not in update_buffer or len(update_buffer["actions"]) == 0:
            raise UnityTrainerException(
                f"The demonstrations {self.demo_path} hold no step to learn from: record longer demonstrations."
            )
        return update_buffer.stored_arrays()

    def _build_functions(self) -> None:
        model = self.model
        optimizer = self.optimizer
        learning_rate = self.learning_rate
        normalizer = self.normalizer

        def reward(batch: dict[str, tf.Tensor]) -> tf.Tensor:
            return model.reward(batch, normalizer)

        def train(policy: dict[str, tf.Tensor], expert: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            losses = optimizer.minimize(
                lambda: model.losses(policy, expert, normalizer), model.trainable_variables, learning_rate
            )
            if model.use_vail:
                model.update_beta(losses["kl_loss"])
                losses["beta"] = model.beta.read_value()
            return losses

        self._reward_fn = FixedSignatureFunction(reward, [model.input_signature()])
        self._train_fn = FixedSignatureFunction(
            train, [model.input_signature(), model.input_signature("expert_")]
        )

    @classmethod
    def check_config(cls, config_dict: dict[str, Any] | None, param_keys: list[str] | None = None) -> None:
        """GAIL needs ``strength``, ``gamma`` and ``demo_path``."""
        super().check_config(config_dict, ["strength", "gamma", "demo_path"])

    # ------------------------------------------------------------------ rewards

    def unscaled_rewards(self, mini_batch: MiniBatch, n: int) -> np.ndarray:
        """``-log(1 - D + eps)`` of the n steps of ``mini_batch``: the observations ``vector_obs`` and
        ``visual_obs{i}`` the step decided on and, with ``use_actions``, its ``actions`` and ``done``."""
        return self._reward_fn(self._discriminator_input(mini_batch, n)).numpy()

    def scale(self, unscaled: np.ndarray) -> np.ndarray:
        """``strength * r`` once the discriminator was trained, zeros before."""
        return (unscaled * (self.strength * float(self.has_updated))).astype(np.float32)

    def _columns(self) -> list[str]:
        """The buffer columns the discriminator reads of a step."""
        columns = [f"visual_obs{i}" for i in range(len(self.model.vis_obs_shapes))]
        if self.model.vec_obs_size > 0:
            columns.append("vector_obs")
        if self.use_actions:
            columns += ["actions", "done"]
        return columns

    def _discriminator_input(self, mini_batch: MiniBatch, n: int, prefix: str = "") -> MiniBatch:
        """The discriminator's input of the first n steps of ``mini_batch`` (its :meth:`_columns`), the
        names prefixed with ``prefix``."""
        steps = {key: np.asarray(mini_batch[key])[:n] for key in self._columns()}
        batch: dict[str, np.ndarray] = {}
        if "vector_obs" in steps:
            batch[f"{prefix}vector_observation"] = steps["vector_obs"].astype(np.float32).reshape(n, -1)
        for i in range(len(self.model.vis_obs_shapes)):
            batch[f"{prefix}visual_observation_{i}"] = float_images(steps[f"visual_obs{i}"])
        if self.use_actions:
            batch[f"{prefix}actions"] = self.model.action_array(steps["actions"], n)
            batch[f"{prefix}done"] = steps["done"].astype(np.float32).reshape(n)
        return batch

    # ------------------------------------------------------------------ training

    def prepare_update(
        self, policy_model: LearningModel, mini_batch: MiniBatch, num_sequences: int
    ) -> dict[str, MiniBatch]:
        """The discriminator's inputs: the mini-batch's policy steps (at most as many as there are
        expert steps) and as many expert steps drawn at random; from now on rewards count."""
        demo = self.demonstration_buffer
        n = min(len(mini_batch["actions"]), len(demo["actions"]))
        index = self.rng.integers(0, len(demo["actions"]), size=n)
        expert = {key: demo[key][index] for key in self._columns()}
        self.has_updated = True
        return {
            "policy": self._discriminator_input(mini_batch, n),
            "expert": self._discriminator_input(expert, n, prefix="expert_"),
        }

    def train(self, inputs: Mapping[str, object]) -> Mapping[str, tf.Tensor]:
        """One Adam step of the discriminator on the ``policy`` and ``expert`` batches; its loss and
        mean estimates (and with VAIL the KL term and beta)."""
        losses: Mapping[str, tf.Tensor] = self._train_fn(inputs["policy"], inputs["expert"])
        return losses
