"""The SAC policy: decisions and gradient steps of one brain (:class:`SACPolicy`).

Decisions sample from the policy network with the policy's numpy generator (continuous: Gaussian
noise squashed by tanh; discrete: :meth:`~mlagents.trainers.tf_policy.TFPolicy.sample_discrete_actions`
on the masked log-probabilities), so a run is a function of its seed. A feed-forward network over
vector observations decides in numpy (:class:`NumpySACNetwork`), like PPO's; the others through a
``tf.function``. One update is one traced call (:class:`~mlagents.trainers.fixed_signature.FixedSignatureFunction`):
the three losses and their gradients on one forward pass, three Adam steps (policy, critic,
entropy coefficient), then the target network moves towards the value network.

Outputs of :meth:`SACPolicy.evaluate` (numpy, agents on axis 0):

=================== =================================================================
``action``          discrete: sampled int32 (n, n_branches); continuous: float32 (n, d) in [-1, 1]
``log_probs``       discrete: masked log-probabilities (n, sum(branches)); continuous: the
                    log-density of the action (n,)
``value_heads``     dict reward-signal name -> (n,), the value network's estimates
``value``           (n,) mean of the value heads
``entropy``         (n,)
``learning_rate``   float (constant)
``memory_out``      recurrent only: the new memories (n, memory_size)
=================== =================================================================
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.timers import timed
from mlagents.trainers import export
from mlagents.trainers.adam import Adam
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.buffer import MiniBatch, float_images
from mlagents.trainers.components.bc.module import BCModule
from mlagents.trainers.fast_inference import (
    NumpyNetwork,
    Weights,
    head_variables,
    layer_variables,
    side_by_side,
    stream_of,
)
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.layers import MASK_EPSILON
from mlagents.trainers.models import Tensors
from mlagents.trainers.sac.models import EPSILON, LOG_STD_MAX, LOG_STD_MIN, SACModel
from mlagents.trainers.settings import SACSettings
from mlagents.trainers.tf_policy import TFPolicy

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["SACPolicy", "NumpySACNetwork", "UPDATE_STATS"]

#: TensorBoard tag -> loss value of an update.
UPDATE_STATS = {
    "Losses/Value Loss": "total_value_loss",
    "Losses/Policy Loss": "policy_loss",
    "Losses/Q1 Loss": "q1_loss",
    "Losses/Q2 Loss": "q2_loss",
    "Policy/Entropy Coeff": "entropy_coef",
}

_HALF_LOG_2PI_E = np.float32(0.5 * math.log(2.0 * math.pi * math.e))
_LOG_2PI = np.float32(math.log(2.0 * math.pi))


class NumpySACNetwork(NumpyNetwork):
    """The decisions of a feed-forward, vector-only :class:`SACModel` in numpy (the same outputs as
    its ``inference``, up to float32 rounding), over a copy of the weights re-read after each change
    (:meth:`invalidate`). While training, the normalizer's running update is computed here and staged
    in the model's normalizer (written into its variables before anything reads them)."""

    model: SACModel

    def __init__(self, model: SACModel) -> None:
        self._policy = stream_of([])
        self._value = stream_of([])
        super().__init__(model)

    def _weights(self) -> Weights:
        model = self.model
        value = model.critic.value
        weights: Weights = {
            "policy": layer_variables(model.policy_encoder.layers),
            "value": layer_variables(value.encoder.layers),
            "value_heads": head_variables([value.heads[name] for name in self.stream_names]),
        }
        if self.is_continuous:
            weights["mu"] = [model.mu.kernel, model.mu.bias]
            weights["log_std"] = [model.log_std.kernel, model.log_std.bias]
        else:
            weights["logits"] = [branch.kernel for branch in model.policy_branches]
        return weights

    def _load(self, values: dict[str, list[np.ndarray]]) -> None:
        self._policy = stream_of(values["policy"])
        self._value = stream_of(values["value"])
        self._value_kernel, self._value_bias = side_by_side(values["value_heads"], len(self.stream_names))
        if self.is_continuous:
            self._mu = (values["mu"][0], values["mu"][1])
            self._log_std = (values["log_std"][0], values["log_std"][1])
        else:
            self._logits = np.concatenate(values["logits"], axis=1)

    def values(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        if not self.synced:
            self.sync()
        return self._values(self._value(self.normalized(np.asarray(vector, dtype=np.float32))))[0]

    def inference(
        self, vector: np.ndarray, action_masks: np.ndarray | None = None, epsilon: np.ndarray | None = None
    ) -> dict[str, Any]:
        """``action`` (continuous) or ``log_probs`` (discrete, masked), ``entropy``, ``value_heads``,
        ``value`` of n agents."""
        if not self.synced:
            self.sync()
        x = self.normalized(np.asarray(vector, dtype=np.float32))
        hidden = self._policy(x)
        out: dict[str, Any] = {}
        if self.model.is_continuous:
            assert epsilon is not None
            mu = hidden @ self._mu[0] + self._mu[1]
            log_std = np.clip(hidden @ self._log_std[0] + self._log_std[1], LOG_STD_MIN, LOG_STD_MAX)
            std = np.exp(log_std)
            pre = mu + epsilon * std
            action = np.tanh(pre)
            gaussian = np.float32(-0.5) * (
                np.square((pre - mu) / (std + np.float32(EPSILON))) + np.float32(2.0) * log_std + _LOG_2PI
            )
            correction = np.log(np.float32(1.0) - np.square(action) + np.float32(EPSILON))
            out["action"] = action
            out["log_probs"] = gaussian.sum(axis=1) - correction.sum(axis=1)
            out["entropy"] = (log_std + _HALF_LOG_2PI_E).sum(axis=1)
        else:
            assert action_masks is not None
            logits = hidden @ self._logits
            masks = np.asarray(action_masks, dtype=np.float32)
            parts, entropy = [], np.zeros(len(x), dtype=np.float32)
            for start, end in self._branches:
                branch = logits[:, start:end]
                exp = np.exp(branch - branch.max(axis=1, keepdims=True))
                softmax = exp / exp.sum(axis=1, keepdims=True)
                kept = (softmax + np.float32(MASK_EPSILON)) * masks[:, start:end]
                with np.errstate(invalid="ignore", divide="ignore"):
                    probs = kept / kept.sum(axis=1, keepdims=True)
                    log_probs = np.log(probs + np.float32(MASK_EPSILON))
                entropy -= (probs * log_probs).sum(axis=1)
                parts.append(log_probs)
            out["log_probs"] = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
            out["entropy"] = entropy
        out["value_heads"], out["value"] = self._values(self._value(x))
        return out


class _PretrainingModule(BCModule):
    """Behavioural cloning on the SAC policy network: the mean squared difference between the
    policy's squashed sample (one noise row per mini-batch) and the expert's action for continuous
    control, the cross-entropy of the policy's probabilities against the expert's one-hot actions
    for discrete control. Its own Adam updates the policy's weights; the numpy copy is then refreshed."""

    def update_step(self) -> Callable[[Tensors, tf.Tensor], tf.Tensor]:
        policy = self.policy
        model = policy.model
        assert isinstance(model, SACModel)
        sequence_length = policy.sequence_length
        optimizer = self.model.optimizer
        variables = model.trainable_variables

        def loss(batch: Tensors) -> tf.Tensor:
            vector = model.normalized_vector(batch)
            memory = batch["recurrent_in"][:, 3 * model.part_memory :] if model.use_recurrent else None
            out = model.policy(batch, vector, memory, sequence_length, batch.get("epsilon"))
            expert = batch["expert_action"]
            if model.is_continuous:
                return tf.reduce_mean(tf.square(out["action"] - expert))
            one_hot = tf.concat([tf.one_hot(expert[:, k], n) for k, n in enumerate(model.act_size)], axis=1)
            return tf.reduce_mean(-tf.math.log(out["probs"] + 1e-7) * one_hot)

        def update(batch: Tensors, learning_rate: tf.Tensor) -> tf.Tensor:
            return optimizer.minimize(lambda: {"loss": loss(batch)}, variables, learning_rate)["loss"]

        return update


class SACPolicy(TFPolicy):
    """Policy of the SAC trainer.

    :param seed: seed of the weights, the action sampling and the update noise.
    :param brain: the brain's parameters.
    :param trainer_params: the brain's :class:`~mlagents.trainers.settings.SACSettings`, or its
        hyper-parameters as a dict (parsed here, with the same checks).
    :param is_training: True when learning: the normalizer is updated at every decision.
    :param load: restore the newest checkpoint of ``model_path`` (also when the settings say ``load``).
    :raises UnityPolicyException: invalid memory size, no checkpoint to load, or one that does not fit.
    :raises UnityTrainerException: a missing or invalid hyper-parameter or ``reward_signals`` section.
    """

    settings_class = SACSettings
    pretraining_class = _PretrainingModule
    fast_network_class = NumpySACNetwork
    settings: SACSettings
    model: SACModel

    def __init__(
        self,
        seed: int,
        brain: BrainParameters,
        trainer_params: SACSettings | Mapping[str, Any],
        is_training: bool,
        load: bool = False,
    ) -> None:
        super().__init__(seed, brain, trainer_params, load)
        settings = self.settings
        self.is_training = bool(is_training)
        self.model = SACModel(
            brain,
            init_entcoef=settings.init_entcoef,
            tau=settings.tau,
            gammas=[signal.gamma for signal in settings.reward_signals.values()],
            **self._network_arguments(),
        )
        self.policy_optimizer = Adam(self.model.policy_variables, name="sac_policy_opt")
        self.value_optimizer = Adam(self.model.critic_variables, name="sac_value_opt")
        self.entropy_optimizer = Adam([self.model.log_ent_coef], name="sac_entropy_opt")
        # The update noise has a stream of its own, apart from the one that samples the actions.
        self.update_rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(5,)))
        self._create_learning_parts(default_num_epoch=1)
        # Signals that do not use terminal states bootstrap through episode ends (no survivor bonus
        # for curiosity or GAIL from ending episodes early).
        self.model.use_dones_in_backup.assign(
            [1.0 if signal.use_terminal_states else 0.0 for signal in self.reward_signals.values()]
        )
        if self.bc_module is not None:
            # One mini-batch of demonstrations per update, not a pass over all of them.
            if self.bc_module.settings.samples_per_update:
                LOGGER.warning(
                    "Pretraining: samples_per_update is not a valid setting for SAC; it is ignored."
                )
            self.bc_module.samples_per_update = settings.batch_size
        self._build_functions()
        if self.load:
            self._load_graph()

    # ------------------------------------------------------------------ checkpoints

    def _optimizers(self) -> dict[str, tf.Module]:
        return {
            "policy_optimizer": self.policy_optimizer,
            "value_optimizer": self.value_optimizer,
            "entropy_optimizer": self.entropy_optimizer,
        }

    # ------------------------------------------------------------------ tf.functions

    def _build_functions(self) -> None:
        model = self.model
        observation_spec = model.input_signature()
        update_normalizer = model.normalizer if self.is_training else None

        def outputs(out: dict[str, Any]) -> dict[str, Any]:
            result = {"value_heads": out["values"], "value": out["value"], "entropy": out["entropy"]}
            if model.is_continuous:
                result["action"] = out["action"]
                result["log_probs"] = out["log_prob"]
            else:
                result["log_probs"] = out["log_probs"]
            if model.use_recurrent:
                result["memory_out"] = out["memory_out"]
            return result

        def inference(inputs: dict[str, tf.Tensor], epsilon: tf.Tensor) -> dict[str, Any]:
            result = outputs(model.inference(inputs, epsilon))
            if update_normalizer is not None:
                update_normalizer.update(inputs["vector_observation"])
            return result

        epsilon_spec = tf.TensorSpec([None, model.act_size[0] if model.is_continuous else 1], tf.float32)
        self._inference_fn = FixedSignatureFunction(inference, [observation_spec, epsilon_spec])
        self._tf_value_fn = FixedSignatureFunction(model.value_estimates, [observation_spec])

        sequence_length = self.sequence_length
        policy_optimizer, value_optimizer = self.policy_optimizer, self.value_optimizer
        entropy_optimizer = self.entropy_optimizer
        policy_variables, critic_variables = model.policy_variables, model.critic_variables
        entropy_variables = [model.log_ent_coef]
        learning_rate = model.lr

        def update_step(batch: dict[str, tf.Tensor], tau: tf.Tensor) -> dict[str, tf.Tensor]:
            # The three gradients come from one forward pass, all before any weight changes.
            with tf.GradientTape(persistent=True) as tape:
                losses = model.losses(batch, sequence_length)
            policy_grads = tape.gradient(losses["policy_loss"], policy_variables)
            critic_grads = tape.gradient(losses["total_value_loss"], critic_variables)
            entropy_grads = tape.gradient(losses["entropy_loss"], entropy_variables)
            del tape
            policy_optimizer.apply_gradients(zip(policy_grads, policy_variables), learning_rate)
            value_optimizer.apply_gradients(zip(critic_grads, critic_variables), learning_rate)
            entropy_optimizer.apply_gradients(zip(entropy_grads, entropy_variables), learning_rate)
            model.update_target(tau)
            return losses

        self._update_fn = FixedSignatureFunction(
            update_step, [model.update_signature(), tf.TensorSpec([], tf.float32)]
        )
        self._create_fast_network()

    # ------------------------------------------------------------------ decisions

    def evaluate(self, brain_info: BrainInfo) -> dict[str, Any]:
        """Decide for every agent of ``brain_info`` (see the module docstring for the outputs)."""
        feed = self.observation_feed(brain_info)
        n = len(agent_ids(brain_info))
        width = self.model.act_size[0] if self.use_continuous_act else 1
        epsilon = (
            self.rng.standard_normal((n, width)).astype(np.float32)
            if self.use_continuous_act
            else np.zeros((n, 1), dtype=np.float32)
        )
        if self._use_numpy:
            out = self.numpy_inference(feed, epsilon)
        else:
            out = self.tensorflow_inference(feed, epsilon)
        run_out: dict[str, Any] = {
            "value_heads": out["value_heads"],
            "value": out["value"],
            "entropy": out["entropy"],
            "log_probs": out["log_probs"],
            "learning_rate": self.model.lr,
        }
        if self.use_continuous_act:
            run_out["action"] = out["action"]
        else:
            run_out["action"] = self.sample_discrete_actions(out["log_probs"], feed["action_masks"])
        if self.use_recurrent:
            run_out["memory_out"] = out["memory_out"]
        return run_out

    # ------------------------------------------------------------------ learning

    def update_feed(self, mini_batch: MiniBatch) -> dict[str, np.ndarray]:
        """The inputs of the update step from buffer fields (``vector_obs``, ``next_vector_in``,
        ``visual_obs{i}``, ``next_visual_obs{i}``, ``memory``, ``prev_action``, ``action_mask``,
        ``actions``, ``masks``, ``done``, ``{k}_rewards``); the policy's noise is drawn here."""
        n = len(mini_batch["masks"])
        model = self.model
        feed = self.mini_batch_observations(mini_batch, n)
        if self.use_vec_obs:
            feed["next_vector_observation"] = np.asarray(
                mini_batch["next_vector_in"], dtype=np.float32
            ).reshape(n, -1)
        for i in range(self.vis_obs_size):
            feed[f"next_visual_observation_{i}"] = float_images(mini_batch[f"next_visual_obs{i}"])
        if self.use_recurrent:
            memory = np.asarray(mini_batch["memory"], dtype=np.float32).reshape(n, -1)
            feed["recurrent_in"] = memory[:: self.sequence_length]
            # The target starts each sequence from the value state stored with its second step (the
            # state after the first), or the first step's when sequences are single steps.
            offset = 1 if self.sequence_length > 1 else 0
            feed["next_recurrent_in"] = memory[offset :: self.sequence_length, : model.part_memory]
        feed["masks"] = np.asarray(mini_batch["masks"], dtype=np.float32).reshape(n)
        feed["done"] = np.asarray(mini_batch["done"], dtype=np.float32).reshape(n)
        for name in model.stream_names:
            feed[f"{name}_rewards"] = np.asarray(mini_batch[f"{name}_rewards"], dtype=np.float32).reshape(n)
        if self.use_continuous_act:
            feed["actions"] = np.asarray(mini_batch["actions"], dtype=np.float32).reshape(n, -1)
            feed["epsilon"] = self.update_rng.standard_normal((n, model.act_size[0])).astype(np.float32)
        else:
            feed["actions"] = np.asarray(mini_batch["actions"]).reshape(n, -1).astype(np.int32)
            feed["action_masks"] = np.asarray(mini_batch["action_mask"], dtype=np.float32).reshape(n, -1)
        return feed

    @timed
    def update(
        self, mini_batch: MiniBatch, num_sequences: int, update_target: bool = True
    ) -> dict[str, float]:
        """One SAC step on ``mini_batch`` (whose ``{k}_rewards`` the trainer filled in).

        :param num_sequences: sequences in the batch (n / sequence_length).
        :param update_target: move the target network towards the value network afterwards.
        :returns: TensorBoard tag -> value (:data:`UPDATE_STATS`).
        """
        feed = self.update_feed(mini_batch)
        tau = np.float32(self.model.tau if update_target else 0.0)
        losses = self._update_fn(feed, tau)
        self.weights_changed()
        return {tag: float(losses[key].numpy()) for tag, key in UPDATE_STATS.items()}

    def update_reward_signals(
        self, reward_signal_minibatches: Mapping[str, MiniBatch], num_sequences: int
    ) -> dict[str, float]:
        """Train the named reward signals, each on its own mini-batch; returns TensorBoard tag -> value."""
        stats: dict[str, float] = {}
        for name, mini_batch in reward_signal_minibatches.items():
            signal = self.reward_signals[name]
            values = signal.update(mini_batch, num_sequences)
            for tag, update_name in signal.stats_name_to_update_name.items():
                if update_name in values:
                    stats[tag] = values[update_name]
        return stats

    # ------------------------------------------------------------------ export

    def export_model(self) -> None:
        """Write the policy part (:meth:`SACModel.export_weights`) for Unity inference beside
        ``model_path`` (``.nn``, ``.onnx``); the checkpoints hold the whole network."""
        self.write_step_count()
        for path in export.export_model(self.model, self.model_path):
            LOGGER.info("Exported %s file", path)
        self.weights_changed()
