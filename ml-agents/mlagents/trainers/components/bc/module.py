"""Pretraining inside PPO (the ``pretraining:`` section of a PPO brain): :class:`BCModule`.

After every PPO update the policy also takes behavioural-cloning steps on the demonstrations at
``demo_path`` (loss and learning-rate schedule in :mod:`mlagents.trainers.components.bc.model`):
``num_epoch`` passes, each over the demonstrations shuffled in whole sequences, in mini-batches of
``n_sequences`` sequences, ``n_sequences = max(min(batch_size, demo steps) // sequence_length, 1)``;
``samples_per_update`` > 0 caps the steps used per pass. Once the learning rate reached 0 (after
``steps`` policy steps) nothing is trained and the loss is reported as 0. The mean loss is recorded as
``Losses/Pretraining Loss``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf

from mlagents.trainers.buffer import Buffer, MiniBatch
from mlagents.trainers.components.bc.model import BCModel
from mlagents.trainers.demo_loader import load_demonstrations_for
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.settings import PretrainingSettings

if TYPE_CHECKING:
    from mlagents.trainers.models import Tensors
    from mlagents.trainers.tf_policy import TFPolicy

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["BCModule", "PRETRAINING_LOSS_TAG"]

PRETRAINING_LOSS_TAG = "Losses/Pretraining Loss"


class BCModule:
    """Behavioural cloning on a PPO policy's network.

    :param policy: the PPO policy (its network is trained; its ``global_step`` drives the schedule).
    :param settings: the ``pretraining`` section.
    :param policy_learning_rate: the PPO ``learning_rate`` (times ``strength`` = initial BC rate).
    :param default_batch_size: ``batch_size`` when the section has none (PPO's).
    :param default_num_epoch: ``num_epoch`` when the section has none (PPO's).
    :param demo_buffer: the demonstrations already as a buffer (tests); read from ``demo_path``
        otherwise.
    :param seed: seed of the shuffling and of the continuous-action noise.
    :raises UnityTrainerException: no readable demonstration at ``demo_path`` or one recorded with
        other observations or actions than the policy's brain.
    """

    def __init__(
        self,
        policy: TFPolicy,
        settings: PretrainingSettings,
        policy_learning_rate: float,
        default_batch_size: int,
        default_num_epoch: int,
        demo_buffer: Buffer | None = None,
        seed: int = 0,
    ) -> None:
        self.policy = policy
        self.settings = settings
        sequence_length = policy.sequence_length
        if demo_buffer is None:
            _, demo_buffer = load_demonstrations_for(policy.brain, settings.demo_path, sequence_length)
        self.demonstration_buffer = demo_buffer
        self.batch_size = settings.batch_size if settings.batch_size is not None else int(default_batch_size)
        self.num_epoch = settings.num_epoch if settings.num_epoch is not None else int(default_num_epoch)
        self.samples_per_update = settings.samples_per_update
        demo_length = len(demo_buffer.update_buffer["actions"])
        # The demonstrations never change: converted to arrays once (camera images as stored,
        # decoded by the feed of each mini-batch).
        self._arrays = demo_buffer.update_buffer.stored_arrays(demo_length)
        self.n_sequences = max(min(self.batch_size, demo_length) // sequence_length, 1)
        self.model = BCModel(policy.model, float(policy_learning_rate) * settings.strength, settings.steps)
        # A stream of its own: the policy samples its actions from a generator of the same seed.
        self.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3,)))
        self.current_lr = self.model.learning_rate_value(policy.step_count())
        self._build_function()

    def _build_function(self) -> None:
        model = self.policy.model
        spec = dict(model.input_signature())
        if model.is_continuous:
            spec["expert_action"] = tf.TensorSpec([None, model.act_size[0]], tf.float32)
            spec["epsilon"] = tf.TensorSpec([1, model.act_size[0]], tf.float32)
        else:
            spec["expert_action"] = tf.TensorSpec([None, len(model.act_size)], tf.int32)
        self._update_fn = FixedSignatureFunction(self.update_step(), [spec, tf.TensorSpec([], tf.float32)])

    def update_step(self) -> Callable[[Tensors, tf.Tensor], tf.Tensor]:
        """``update(batch, learning_rate) -> loss``, one step on a mini-batch of demonstrations (the
        batch: the policy's inputs, ``expert_action`` and, for continuous control, ``epsilon``);
        :class:`~mlagents.trainers.components.bc.model.BCModel`'s loss unless a policy's module
        overrides it."""
        return self.model.update_function(self.policy.sequence_length)

    def learning_rate(self) -> float:
        """The learning rate at the policy's current step."""
        return self.model.learning_rate_value(self.policy.step_count())

    def update(self) -> dict[str, float]:
        """The pretraining steps after a PPO update (see the module docstring); they change the
        policy's weights, so its numpy copy is refreshed afterwards.

        :returns: ``{"Losses/Pretraining Loss": mean loss}`` (0 when nothing was trained).
        """
        try:
            return self._update()
        finally:
            self.policy.weights_changed()

    def _update(self) -> dict[str, float]:
        self.current_lr = self.learning_rate()
        if self.current_lr <= 0.0:
            return {PRETRAINING_LOSS_TAG: 0.0}
        arrays = self._arrays
        sequence_length = self.policy.sequence_length
        length = len(arrays["actions"])
        possible_batches = length // self.n_sequences
        max_batches = self.samples_per_update // self.n_sequences
        num_batches = possible_batches if max_batches == 0 else min(possible_batches, max_batches)
        batch_steps = self.n_sequences * sequence_length
        losses = []
        for _ in range(self.num_epoch):
            order = self.rng.permutation(length // sequence_length)
            steps = (order[:, None] * sequence_length + np.arange(sequence_length)).ravel()
            for i in range(num_batches // sequence_length):
                index = steps[i * batch_steps : (i + 1) * batch_steps]
                if len(index) < batch_steps:
                    break
                mini_batch = {key: array[index] for key, array in arrays.items()}
                losses.append(self._update_batch(mini_batch))
        return {PRETRAINING_LOSS_TAG: float(np.mean(losses)) if losses else 0.0}

    def _update_batch(self, mini_batch: MiniBatch) -> float:
        model = self.policy.model
        feed, actions = self.policy.demonstration_feed(mini_batch)
        feed["expert_action"] = actions
        if model.is_continuous:
            feed["epsilon"] = self.rng.standard_normal((1, model.act_size[0])).astype(np.float32)
        loss = self._update_fn(feed, np.float32(self.current_lr))
        return float(loss.numpy())
