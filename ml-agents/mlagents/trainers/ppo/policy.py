"""The PPO policy: decisions, value estimates and gradient steps of one brain (:class:`PPOPolicy`).

Every TensorFlow entry point is a ``tf.function`` with a fixed input signature (the batch dimension
left open), so neither a new number of agents nor a new mini-batch size causes a retrace; it is called
through :class:`~mlagents.trainers.fixed_signature.FixedSignatureFunction` (numpy in, one traced call).

Outputs of :meth:`PPOPolicy.evaluate` (numpy, agents on axis 0):

=================== =================================================================
``action``          discrete: sampled int32 (n, n_branches); continuous: float32 (n, d) in [-1, 1]
``action_probs``    discrete: raw logits (n, sum(branches)); continuous: per-dimension
                    log-densities (n, d) (the exported tensor and the buffer field of that name)
``value_heads``     dict reward-signal name -> (n,)
``value``           (n,) mean of the value heads
``entropy``         (n,)
``learning_rate``   float, lr(global_step)
``pre_action``      continuous only: the unclipped sample (n, d)
``random_normal_epsilon``  continuous only: the noise used (n, d)
``memory_out``      recurrent only: the new memories (n, memory_size)
=================== =================================================================
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.adam import Adam
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.buffer import MiniBatch
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.ppo.models import PPOModel
from mlagents.trainers.settings import PPOSettings
from mlagents.trainers.tf_policy import TFPolicy

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["PPOPolicy"]


class PPOPolicy(TFPolicy):
    """Policy of the PPO trainer.

    :param seed: seed of the weights and of the action sampling.
    :param brain: the brain's parameters.
    :param trainer_params: the brain's :class:`~mlagents.trainers.settings.PPOSettings`, or its
        hyper-parameters as a dict (parsed once here, with the same checks).
    :param is_training: True when learning: the normalizer is updated at every decision.
    :param load: restore the newest checkpoint of ``model_path`` (also when the settings say ``load``).
    :raises UnityPolicyException: invalid memory size, no checkpoint to load, or a checkpoint that
        does not fit.
    :raises UnityTrainerException: a missing or invalid hyper-parameter or ``reward_signals`` section
        (an unknown ``vis_encode_type`` is also a ``ValueError``).
    :ivar load: whether the policy was restored from a checkpoint.
    """

    settings_class = PPOSettings
    settings: PPOSettings
    model: PPOModel
    optimizer: Adam

    def __init__(
        self,
        seed: int,
        brain: BrainParameters,
        trainer_params: PPOSettings | Mapping[str, Any],
        is_training: bool,
        load: bool = False,
    ) -> None:
        super().__init__(seed, brain, trainer_params, load)
        settings = self.settings
        self.is_training = bool(is_training)
        self.model = PPOModel(
            brain, epsilon=settings.epsilon, beta=settings.beta, **self._network_arguments()
        )
        self.optimizer = Adam(self.model.trainable_variables)
        # Reward signals, and pretraining (behavioural cloning) after every PPO update.
        self._create_learning_parts(default_num_epoch=settings.num_epoch)
        self._build_functions()
        if self.load:
            self._load_graph()

    # ------------------------------------------------------------------ tf.functions

    def _build_functions(self) -> None:
        model = self.model
        observation_spec = model.input_signature()
        # While training, every decision also folds its observations into the normalizer (after the
        # decision was computed with the old statistics), in the same call.
        update_normalizer = model.normalizer if self.is_training else None
        if self.use_continuous_act:
            epsilon_spec = tf.TensorSpec([None, model.act_size[0]], tf.float32)

            def inference(inputs: dict[str, tf.Tensor], epsilon: tf.Tensor) -> dict[str, Any]:
                outputs = self._inference_outputs(model.inference(inputs, epsilon))
                if update_normalizer is not None:
                    update_normalizer.update(inputs["vector_observation"])
                return outputs

            self._inference_fn = FixedSignatureFunction(inference, [observation_spec, epsilon_spec])
        else:

            def inference_discrete(inputs: dict[str, tf.Tensor]) -> dict[str, Any]:
                outputs = self._inference_outputs(model.inference(inputs))
                if update_normalizer is not None:
                    update_normalizer.update(inputs["vector_observation"])
                return outputs

            self._inference_fn = FixedSignatureFunction(inference_discrete, [observation_spec])

        def values(inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            return model.forward(inputs, 1)["values"]

        self._tf_value_fn = FixedSignatureFunction(values, [observation_spec])

        if model.normalizer is not None:
            normalizer = model.normalizer

            def update_normalization(vector: tf.Tensor) -> tf.Tensor:
                normalizer.update(vector)
                return normalizer.normalization_steps.read_value()

            self._normalize_fn = FixedSignatureFunction(
                update_normalization, [tf.TensorSpec([None, model.vec_obs_size], tf.float32)]
            )

        self._update_fn = self._build_update_function()
        self._create_fast_network()

    def update_signature(self) -> dict[str, tf.TensorSpec]:
        """The inputs of the update step (:meth:`update_feed`'s keys), the batch dimension open."""
        model = self.model
        spec = dict(model.input_signature())
        spec["masks"] = tf.TensorSpec([None], tf.float32)
        spec["advantages"] = tf.TensorSpec([None], tf.float32)
        for name in model.stream_names:
            spec[f"{name}_returns"] = tf.TensorSpec([None], tf.float32)
            spec[f"{name}_value_estimates"] = tf.TensorSpec([None], tf.float32)
        if self.use_continuous_act:
            spec["actions_pre"] = tf.TensorSpec([None, model.act_size[0]], tf.float32)
            spec["action_probs"] = tf.TensorSpec([None, model.act_size[0]], tf.float32)
        else:
            spec["actions"] = tf.TensorSpec([None, len(model.act_size)], tf.int32)
            spec["action_probs"] = tf.TensorSpec([None, sum(model.act_size)], tf.float32)
        return spec

    def _build_update_function(self) -> FixedSignatureFunction:
        """The update step: one Adam step on the PPO loss of the batch (:meth:`update_signature`),
        returning the loss values. Called by the constructor (subclasses may update otherwise)."""
        model = self.model
        sequence_length = self.sequence_length
        optimizer = self.optimizer

        def update_step(batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            return optimizer.minimize(
                lambda: model.losses(batch, sequence_length), model.trainable_variables, model.learning_rate()
            )

        return FixedSignatureFunction(update_step, [self.update_signature()])

    def _inference_outputs(self, out: dict[str, Any]) -> dict[str, Any]:
        result = {
            "action_probs": out["action_probs"],
            "value_heads": out["values"],
            "value": out["value"],
            "entropy": out["entropy"],
        }
        if self.use_continuous_act:
            result["action"] = out["action"]
            result["pre_action"] = out["action_pre"]
        else:
            result["masked_log_probs"] = out["masked_log_probs"]
        if self.use_recurrent:
            result["memory_out"] = out["memory_out"]
        return result

    # ------------------------------------------------------------------ decisions

    def evaluate(self, brain_info: BrainInfo) -> dict[str, Any]:
        """Decide for every agent of ``brain_info`` (see the module docstring for the outputs).

        When training with normalization, the normalizer then folds in this batch of observations
        (one update per call, with the batch mean).
        """
        feed = self.observation_feed(brain_info)
        n = len(agent_ids(brain_info))
        epsilon = None
        if self.use_continuous_act:
            epsilon = self.rng.standard_normal((n, self.model.act_size[0])).astype(np.float32)
        if self._use_numpy:
            out = self.numpy_inference(feed, epsilon)
        else:
            out = self.tensorflow_inference(feed, epsilon)
        run_out: dict[str, Any] = {
            "action_probs": out["action_probs"],
            "value_heads": out["value_heads"],
            "value": out["value"],
            "entropy": out["entropy"],
            # Computed in Python: reading global_step in the graph would need the step count
            # written into it before every decision (a TensorFlow op per step).
            "learning_rate": self.model.learning_rate_value(self.step_count()),
        }
        if self.use_continuous_act:
            run_out["action"] = out["action"]
            run_out["pre_action"] = out["pre_action"]
            run_out["random_normal_epsilon"] = epsilon
        else:
            run_out["action"] = self.sample_discrete_actions(out["masked_log_probs"], feed["action_masks"])
        if self.use_recurrent:
            run_out["memory_out"] = out["memory_out"]
        return run_out

    def update_normalization(self, vector_obs: np.ndarray) -> None:
        """Fold the batch mean of ``vector_obs`` (n, vec_size) into the running statistics."""
        if self.model.normalizer is None or len(vector_obs) == 0:
            return
        if self._use_numpy and self._fast_network is not None:
            self._fast_network.update_normalizer(np.asarray(vector_obs, dtype=np.float32))
        else:
            self._normalize_fn(vector_obs)
            self.weights_changed()

    # ------------------------------------------------------------------ learning

    def update(self, mini_batch: MiniBatch, num_sequences: int) -> dict[str, float]:
        """One Adam step of PPO on ``mini_batch``, then the updates of the reward signals.

        :param mini_batch: buffer field name -> array of n steps (``vector_obs``, ``visual_obs{i}``,
            ``memory``, ``prev_action``, ``action_mask``, ``actions``/``actions_pre``,
            ``action_probs``, ``masks``, ``advantages``, ``{k}_returns``, ``{k}_value_estimates``).
        :param num_sequences: sequences in the batch (n / sequence_length).
        :returns: ``value_loss``, ``policy_loss`` (absolute value) and the signals' statistics.
        """
        batch = self.update_feed(mini_batch)
        self.write_step_count()  # the schedules read global_step
        losses = self._run_update(batch)
        self.weights_changed()
        stats = {
            "value_loss": float(losses["value_loss"].numpy()),
            "policy_loss": abs(float(losses["policy_loss"].numpy())),
        }
        for signal in self.reward_signals.values():
            stats.update(signal.update(mini_batch, num_sequences))
        return stats

    def _run_update(self, batch: dict[str, np.ndarray]) -> Mapping[str, tf.Tensor]:
        """Run the update step on the inputs ``batch`` (:meth:`update_feed`); returns its loss
        values (at least ``value_loss`` and ``policy_loss``)."""
        return self._update_fn(batch)

    def update_feed(self, mini_batch: MiniBatch) -> dict[str, np.ndarray]:
        """The inputs of the update step from buffer fields."""
        n = len(mini_batch["masks"])
        feed = self.mini_batch_observations(mini_batch, n)
        if self.use_recurrent:
            memory = np.asarray(mini_batch["memory"], dtype=np.float32).reshape(n, -1)
            feed["recurrent_in"] = memory[:: self.sequence_length]
        feed["masks"] = np.asarray(mini_batch["masks"], dtype=np.float32).reshape(n)
        feed["advantages"] = np.asarray(mini_batch["advantages"], dtype=np.float32).reshape(n)
        for name in self.model.stream_names:
            feed[f"{name}_returns"] = np.asarray(mini_batch[f"{name}_returns"], dtype=np.float32).reshape(n)
            feed[f"{name}_value_estimates"] = np.asarray(
                mini_batch[f"{name}_value_estimates"], dtype=np.float32
            ).reshape(n)
        feed["action_probs"] = np.asarray(mini_batch["action_probs"], dtype=np.float32).reshape(n, -1)
        if self.use_continuous_act:
            feed["actions_pre"] = np.asarray(mini_batch["actions_pre"], dtype=np.float32).reshape(n, -1)
        else:
            feed["actions"] = np.asarray(mini_batch["actions"]).reshape(n, -1).astype(np.int32)
            feed["action_masks"] = np.asarray(mini_batch["action_mask"], dtype=np.float32).reshape(n, -1)
        return feed
