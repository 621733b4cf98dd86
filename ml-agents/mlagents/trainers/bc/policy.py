"""The behavioural-cloning policy: decisions and gradient steps of one brain (:class:`BCPolicy`).

Outputs of :meth:`BCPolicy.evaluate` (numpy, agents on axis 0):

================= ====================================================================
``action``        discrete: sampled int32 (n, n_branches); continuous: float32 (n, d) in [-1, 1]
``action_probs``  discrete only: the per-branch probabilities (n, sum(branches))
``memory_out``    recurrent only: the new memories (n, memory_size)
================= ====================================================================

:meth:`BCPolicy.update` takes a mini-batch of buffer fields (``vector_obs``, ``visual_obs{i}``,
``actions``, and when recurrent ``prev_action``) and returns ``{"policy_loss": L}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.timers import timed
from mlagents.trainers.adam import Adam
from mlagents.trainers.bc.models import BehavioralCloningModel
from mlagents.trainers.buffer import MiniBatch
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.settings import BCSettings
from mlagents.trainers.tf_policy import TFPolicy

__all__ = ["BCPolicy"]


class BCPolicy(TFPolicy):
    """A :class:`BehavioralCloningModel` with its Adam optimizer and checkpoints.

    :param seed: seed of the weights and of the action sampling.
    :param brain: the brain's parameters.
    :param trainer_parameters: the brain's :class:`~mlagents.trainers.settings.BCSettings` (or a dict).
    :param load: restore the newest checkpoint of ``model_path``.
    """

    settings_class = BCSettings
    settings: BCSettings
    model: BehavioralCloningModel
    optimizer: Adam

    def __init__(
        self,
        seed: int,
        brain: BrainParameters,
        trainer_parameters: BCSettings | Mapping[str, Any],
        load: bool,
    ) -> None:
        super().__init__(seed, brain, trainer_parameters, load)
        settings = self.settings
        self.normalize = False
        self.model = BehavioralCloningModel(
            brain,
            h_size=settings.hidden_units,
            lr=settings.learning_rate,
            n_layers=settings.num_layers,
            m_size=self.m_size,
            use_recurrent=self.use_recurrent,
            seed=self.seed,
        )
        self.optimizer = Adam(self.model.trainable_variables)
        self._build_functions()
        if self.load:
            self._load_graph()

    def _build_functions(self) -> None:
        model = self.model
        observation_spec = model.input_signature()

        def inference(inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            out = model.forward(inputs, 1)
            result = {}
            if model.is_continuous:
                result["action"] = out["action"]
            else:
                result["action_probs"] = out["action_probs"]
                result["masked_log_probs"] = out["masked_log_probs"]
            if model.use_recurrent:
                result["memory_out"] = out["memory_out"]
            return result

        self._inference_fn = FixedSignatureFunction(inference, [observation_spec])
        update_spec = dict(observation_spec)
        if model.is_continuous:
            update_spec["teacher_action"] = tf.TensorSpec([None, model.act_size[0]], tf.float32)
        else:
            update_spec["teacher_action"] = tf.TensorSpec([None, len(model.act_size)], tf.int32)
        sequence_length = self.sequence_length
        optimizer = self.optimizer

        def update_step(batch: dict[str, tf.Tensor]) -> tf.Tensor:
            losses = optimizer.minimize(
                lambda: {"loss": model.loss(batch, sequence_length)},
                model.trainable_variables,
                model.learning_rate(),
            )
            return losses["loss"]

        self._update_fn = FixedSignatureFunction(update_step, [update_spec])

    # ------------------------------------------------------------------ decisions

    def evaluate(self, brain_info: BrainInfo) -> dict[str, Any]:
        """Decide for every agent of ``brain_info`` (see the module docstring for the outputs)."""
        feed = self.observation_feed(brain_info)
        out = self._inference_fn(feed)
        run_out: dict[str, Any] = {}
        if self.use_continuous_act:
            run_out["action"] = out["action"].numpy()
        else:
            run_out["action_probs"] = out["action_probs"].numpy()
            run_out["action"] = self.sample_discrete_actions(
                out["masked_log_probs"].numpy(), feed["action_masks"]
            )
        if self.use_recurrent:
            run_out["memory_out"] = out["memory_out"].numpy()
        return run_out

    # ------------------------------------------------------------------ learning

    @timed
    def update(self, mini_batch: MiniBatch, num_sequences: int) -> dict[str, float]:
        """One Adam step of the cloning loss on ``mini_batch``; returns ``policy_loss``."""
        loss = self._update_fn(self.update_feed(mini_batch))
        return {"policy_loss": float(loss.numpy())}

    def update_feed(self, mini_batch: MiniBatch) -> dict[str, np.ndarray]:
        """The inputs of the update step: observations, the teacher's actions ``actions``, all
        actions allowed, and zero memories at every sequence start."""
        feed, actions = self.demonstration_feed(mini_batch)
        feed["teacher_action"] = actions
        return feed

    def tracing_counts(self) -> dict[str, int]:
        """How often each tf.function was traced (1 each: no retracing per batch size)."""
        return {"inference": self._inference_fn.tracing_count(), "update": self._update_fn.tracing_count()}
