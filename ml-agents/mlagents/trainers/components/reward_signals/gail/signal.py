"""The GAIL reward signal: :class:`GAILRewardSignal`.

The discriminator (:mod:`.model`) learns to tell the expert's steps, read from the demonstrations
at ``demo_path``, from the policy's; the policy is rewarded ``strength * -log(1 - D + eps)`` for
steps that look like the expert's (0 until the discriminator was first trained; no clipping). The
discriminator has its own Adam optimizer and takes one step on every PPO mini-batch: the policy's
steps of the mini-batch against as many expert steps drawn at random (with replacement) from the
demonstrations. Its value head bootstraps at episode ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.timers import timed
from mlagents.trainers.adam import Adam
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.components.reward_signals import RewardSignal, RewardSignalResult
from mlagents.trainers.components.reward_signals.gail.demonstrations import check_demonstration_brain
from mlagents.trainers.components.reward_signals.gail.model import GAILModel
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.layers import Initializer
from mlagents.trainers.tf_policy import FixedSignatureFunction

__all__ = ["GAILRewardSignal", "check_demonstration_brain"]


class GAILRewardSignal(RewardSignal):
    """Generative adversarial imitation learning as a reward signal.

    Configuration keys: ``strength``, ``gamma``, ``demo_path`` (required), ``encoding_size``
    (default 64), ``learning_rate`` (3e-4), ``use_actions`` (false), ``use_vail`` (false).

    :param policy: the PPO policy (brain, seed, normalizer, sequence length).
    :param policy_model: the policy's network: its normalizer, when it normalizes, also
        normalizes the discriminator's vector input.
    :raises UnityTrainerException: the demonstrations do not fit the brain, or contain no step.
    :ivar has_updated: True once the discriminator took its first step (rewards are 0 before).
    :ivar demonstration_buffer: the expert's steps (field name -> array).
    """

    def __init__(
        self,
        policy: Any,
        policy_model: Any,
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
        brain = policy.brain
        self.demonstration_buffer = self._load_demonstrations(brain)
        self.normalizer = getattr(policy_model, "normalizer", None)
        self.model = GAILModel(
            vec_obs_size=policy.vec_obs_size,
            vis_obs_shapes=[
                (int(r["height"]), int(r["width"]), 1 if r["blackAndWhite"] else 3)
                for r in brain.camera_resolutions
            ],
            act_size=list(brain.vector_action_space_size),
            is_continuous=policy.use_continuous_act,
            encoding_size=int(encoding_size),
            use_actions=self.use_actions,
            use_vail=self.use_vail,
            # Its own stream of initial values: adding the signal leaves the policy's weights alone.
            init=Initializer(int(policy.seed) * 7919 + 2),
            seed=int(policy.seed) + 1,
        )
        self.optimizer = Adam(self.model.trainable_variables, name="gail_optimizer")
        self.rng = np.random.default_rng(int(policy.seed) + 2)
        self.has_updated = False
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

    def _load_demonstrations(self, brain: Any) -> dict[str, np.ndarray]:
        from mlagents.trainers.demo_loader import demo_to_buffer

        # Single steps (no sequence padding): the discriminator judges steps, and padding would add
        # all-zero "expert" steps.
        demo_brain, buffer = demo_to_buffer(self.demo_path, 1)
        check_demonstration_brain(demo_brain, brain, self.demo_path)
        update_buffer = buffer.update_buffer
        if "actions" not in update_buffer or len(update_buffer["actions"]) == 0:
            raise UnityTrainerException(
                f"The demonstrations {self.demo_path} hold no step to learn from: record longer demonstrations."
            )
        return {key: np.asarray(field) for key, field in update_buffer.items()}

    def _build_functions(self) -> None:
        model = self.model
        optimizer = self.optimizer
        learning_rate = self.learning_rate
        normalizer = self.normalizer

        def reward(batch: dict[str, tf.Tensor]) -> tf.Tensor:
            return model.reward(batch, normalizer)

        def train(policy: dict[str, tf.Tensor], expert: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            variables = model.trainable_variables
            with tf.GradientTape() as tape:
                losses = model.losses(policy, expert, normalizer)
            gradients = tape.gradient(losses["loss"], variables)
            optimizer.apply_gradients(zip(gradients, variables), learning_rate)
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

    def checkpoint_objects(self) -> dict[str, tf.Module]:
        """What a checkpoint of the policy keeps of the signal: the discriminator and its optimizer."""
        return {"model": self.model, "optimizer": self.optimizer}

    # ------------------------------------------------------------------ rewards

    @timed
    def evaluate(self, current_info: Any, next_info: Any) -> RewardSignalResult:
        """``-log(1 - D + eps)`` of each agent's step: the observation of ``current_info``, the action
        ``next_info.previous_vector_actions`` and the done flag ``next_info.local_done``."""
        n = len(agent_ids(next_info))
        if n == 0:
            empty = np.zeros(0, dtype=np.float32)
            return RewardSignalResult(empty, empty)
        feed = self.policy.observation_feed(current_info)
        batch = self._batch(
            feed.get("vector_observation"),
            [feed[f"visual_observation_{i}"] for i in range(len(self.model.vis_obs_shapes))],
            next_info.previous_vector_actions,
            next_info.local_done,
            n,
        )
        unscaled = self._reward_fn(batch).numpy().astype(np.float32)
        return RewardSignalResult(self.scale(unscaled), unscaled)

    def scale(self, unscaled: np.ndarray) -> np.ndarray:
        """``strength * r`` once the discriminator was trained, zeros before."""
        return (unscaled * (self.strength * float(self.has_updated))).astype(np.float32)

    def _batch(
        self, vector: Any, visual: list[Any], actions: Any, done: Any, n: int, prefix: str = ""
    ) -> dict[str, np.ndarray]:
        batch: dict[str, np.ndarray] = {}
        if self.model.vec_obs_size > 0:
            batch[f"{prefix}vector_observation"] = np.asarray(vector, dtype=np.float32).reshape(n, -1)
        for i, images in enumerate(visual):
            batch[f"{prefix}visual_observation_{i}"] = np.asarray(images, dtype=np.float32)
        if self.use_actions:
            if self.model.is_continuous:
                batch[f"{prefix}actions"] = np.asarray(actions, dtype=np.float32).reshape(n, -1)
            else:
                batch[f"{prefix}actions"] = np.asarray(actions).reshape(n, -1).astype(np.int32)
            batch[f"{prefix}done"] = np.asarray(done, dtype=np.float32).reshape(n)
        return batch

    # ------------------------------------------------------------------ training

    def prepare_update(
        self, policy_model: Any, mini_batch: dict[str, np.ndarray], num_sequences: int
    ) -> dict[str, Any]:
        """The discriminator's inputs: the mini-batch's policy steps (at most as many as there are
        expert steps) and as many expert steps drawn at random; from now on rewards count."""
        demo = self.demonstration_buffer
        n = min(len(mini_batch["actions"]), len(demo["actions"]))
        cameras = range(len(self.model.vis_obs_shapes))
        policy = self._batch(
            np.asarray(mini_batch["vector_obs"])[:n] if self.model.vec_obs_size > 0 else None,
            [np.asarray(mini_batch[f"visual_obs{i}"])[:n] for i in cameras],
            np.asarray(mini_batch["actions"])[:n],
            np.asarray(mini_batch["done"])[:n],
            n,
        )
        index = self.rng.integers(0, len(demo["actions"]), size=n)
        expert = self._batch(
            demo["vector_obs"][index] if self.model.vec_obs_size > 0 else None,
            [demo[f"visual_obs{i}"][index] for i in cameras],
            demo["actions"][index],
            demo["done"][index],
            n,
            prefix="expert_",
        )
        self.has_updated = True
        return {"policy": policy, "expert": expert}

    @timed
    def update(self, mini_batch: dict[str, np.ndarray], num_sequences: int) -> dict[str, float]:
        """One Adam step of the discriminator on the PPO mini-batch; returns its loss and mean estimates
        (and with VAIL the KL term and beta)."""
        inputs = self.prepare_update(self.policy_model, mini_batch, num_sequences)
        losses = self._train_fn(inputs["policy"], inputs["expert"])
        return {name: float(losses[key].numpy()) for name, key in self.update_dict.items()}
