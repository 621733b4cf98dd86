"""The pretraining loss on the PPO network and its learning-rate schedule: :class:`BCModel`.

The loss uses the policy network itself (no copy), with the demonstration's actions as targets:

* continuous control: the policy's action ``clip(mu + sigma * epsilon, -3, 3) / 3``, with one
  standard-normal row ``epsilon`` (1, d) drawn per mini-batch and shared by its steps, against the
  expert's action; mean over the batch and the dimensions of the squared difference;
* discrete control: ``-log(softmax_k(logits) + 1e-7)`` times the one-hot expert action of each
  branch k, mean over the (n, sum(branches)) matrix (all actions allowed). The original took one
  softmax across the logits of all branches together; here each branch has its own, which gives the
  same loss with one branch and the right one with several.

Learning rate, with ``lr0 = learning_rate * strength`` and ``t`` the policy's ``global_step``::

    lr(t) = lr0 * (1 - min(t, steps) / steps)     if steps > 0   (0 once t >= steps)
    lr(t) = lr0                                  if steps == 0

An own Adam optimizer (not the PPO one) updates every variable the loss depends on.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

from mlagents.trainers.adam import Adam
from mlagents.trainers.models import ACTION_CLIP, LearningModel, Tensors

__all__ = ["BCModel", "pretraining_learning_rate"]


def pretraining_learning_rate(initial: float, step: int, steps: int) -> float:
    """lr(step) of the schedule in the module docstring, computed in float32."""
    if steps <= 0:
        return float(np.float32(initial))
    return LearningModel.polynomial_decay_value(initial, 0.0, step, float(steps))


class BCModel:
    """The pretraining loss and update of a policy network.

    :param policy_model: the PPO network (a :class:`~mlagents.trainers.models.LearningModel`).
    :param learning_rate: ``lr0`` = the PPO learning rate times ``strength``.
    :param anneal_steps: ``steps`` of the schedule (0: constant).
    """

    def __init__(self, policy_model: LearningModel, learning_rate: float, anneal_steps: int) -> None:
        self.policy_model = policy_model
        self.initial_learning_rate = float(learning_rate)
        self.anneal_steps = int(anneal_steps)
        self.optimizer = Adam(policy_model.trainable_variables, name="bc_adam")

    def learning_rate_value(self, step: int) -> float:
        """lr(step) as a Python float."""
        return pretraining_learning_rate(self.initial_learning_rate, step, self.anneal_steps)

    def loss(self, batch: Tensors, sequence_length: int) -> tf.Tensor:
        """The loss of the module docstring on ``batch``: observation tensors, ``expert_action``
        ((n, d) float32 or (n, n_branches) int32) and, for continuous control, ``epsilon`` (1, d)."""
        model = self.policy_model
        out = model.forward(batch, sequence_length)
        expert = batch["expert_action"]
        if model.is_continuous:
            sigma = tf.sqrt(tf.exp(model.log_sigma_squared))
            action = (
                tf.clip_by_value(out["mu"] + sigma * batch["epsilon"], -ACTION_CLIP, ACTION_CLIP)
                / ACTION_CLIP
            )
            return tf.reduce_mean(tf.square(action - expert))
        logits = out["logits"]
        terms = []
        start = 0
        for k, size in enumerate(model.act_size):
            probabilities = tf.nn.softmax(logits[:, start : start + size])
            terms.append(-tf.math.log(probabilities + 1e-7) * tf.one_hot(expert[:, k], size))
            start += size
        return tf.reduce_mean(tf.concat(terms, axis=1))

    def update_function(self, sequence_length: int) -> Callable[[Tensors, tf.Tensor], tf.Tensor]:
        """``update(batch, learning_rate) -> loss``: one Adam step (a plain function to wrap in a
        ``tf.function``)."""
        variables = self.policy_model.trainable_variables

        def update(batch: Tensors, learning_rate: tf.Tensor) -> tf.Tensor:
            losses = self.optimizer.minimize(
                lambda: {"loss": self.loss(batch, sequence_length)}, variables, learning_rate
            )
            return losses["loss"]

        return update
