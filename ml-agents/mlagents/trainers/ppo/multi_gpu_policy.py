"""PPO updates split over several devices (``mlagents-learn --multi-gpu``): :class:`MultiGpuPPOPolicy`.

Each update of the policy network splits the mini-batch into one shard per device (a "tower"):
whole sequences, consecutive, as equal in size as the number of sequences allows. Each tower
computes the PPO loss of its shard and that loss's gradients on its device; the gradients are
averaged and one Adam step of the policy's optimizer applies them. The average weighs each tower
by its share of the mini-batch's real (unmasked) steps, the denominator of the loss's masked means,
so it is the gradient of the loss on the whole mini-batch (to rounding), also for unequal shards;
the losses reported are averaged the same way. The reward signals update as with
:class:`~mlagents.trainers.ppo.policy.PPOPolicy`, on the whole mini-batch.

The towers run on the visible GPUs (:func:`tower_devices`) unless given. With fewer than two
devices the policy is a :class:`~mlagents.trainers.ppo.policy.PPOPolicy`: the same update step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.buffer import MiniBatch
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.settings import PPOSettings

__all__ = ["MultiGpuPPOPolicy", "shard_bounds", "tower_devices"]

Gradients = list[tf.Tensor | None]


def tower_devices() -> list[str]:
    """The devices of the towers when none are given: the names of the logical GPU devices
    TensorFlow sees (``/device:GPU:0``, ...), none on a machine without a usable GPU."""
    return [device.name for device in tf.config.list_logical_devices("GPU")]


def shard_bounds(num_sequences: int, towers: int) -> list[tuple[int, int]]:
    """The (start, stop) sequence ranges of ``towers`` consecutive shards of ``num_sequences``
    sequences, whose sizes differ by one at the most (the first ones take the remainder)."""
    size, remainder = divmod(num_sequences, towers)
    bounds: list[tuple[int, int]] = []
    start = 0
    for tower in range(towers):
        stop = start + size + (1 if tower < remainder else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def _weighted_sum(values: Sequence[tf.Tensor], weights: Sequence[tf.Tensor]) -> tf.Tensor:
    return tf.add_n([weight * tf.convert_to_tensor(value) for value, weight in zip(values, weights)])


class MultiGpuPPOPolicy(PPOPolicy):
    """A :class:`~mlagents.trainers.ppo.policy.PPOPolicy` whose PPO update is computed in towers,
    one per device (see the module docstring); decisions, value estimates, reward signals,
    pretraining and checkpoints are those of the PPO policy (checkpoints of either load in the other).

    :param devices: the devices of the towers (TensorFlow device names); None: :func:`tower_devices`.
        Fewer than two: the update is the PPO policy's.

    The other parameters are those of :class:`~mlagents.trainers.ppo.policy.PPOPolicy`.

    :ivar devices: the devices of the towers.
    """

    def __init__(
        self,
        seed: int,
        brain: BrainParameters,
        trainer_params: PPOSettings | Mapping[str, Any],
        is_training: bool,
        load: bool = False,
        devices: Sequence[str] | None = None,
    ) -> None:
        # Read by the update step, which the PPO policy's constructor builds.
        self.devices: list[str] = list(tower_devices() if devices is None else devices)
        self._gradients_fn: FixedSignatureFunction | None = None
        super().__init__(seed, brain, trainer_params, is_training, load)

    @property
    def uses_towers(self) -> bool:
        """Whether the updates are split over the devices (two or more of them)."""
        return len(self.devices) >= 2

    @property
    def _placements(self) -> list[str | None]:
        # None: one tower, on TensorFlow's choice of device.
        return list(self.devices) if self.uses_towers else [None]

    # ------------------------------------------------------------------ the update step

    def _build_update_function(self) -> FixedSignatureFunction:
        if not self.uses_towers:
            return super()._build_update_function()
        model = self.model
        optimizer = self.optimizer

        def update_step(*shards: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            losses, gradients = self._tower_gradients(shards)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables), model.learning_rate())
            return losses

        return FixedSignatureFunction(update_step, [self.update_signature()] * len(self.devices))

    def _run_update(self, batch: dict[str, np.ndarray]) -> Mapping[str, tf.Tensor]:
        if not self.uses_towers:
            return super()._run_update(batch)
        return self._update_fn(*self.shard_feed(batch))

    def _tower_gradients(
        self, shards: Sequence[dict[str, tf.Tensor]]
    ) -> tuple[dict[str, tf.Tensor], Gradients]:
        """Per tower, the PPO loss of its shard and its gradients (with respect to the network's
        trainable variables, in order) on its device; returns both averaged, each tower weighted
        by its share of the real steps."""
        model = self.model
        variables = model.trainable_variables
        tower_losses: list[dict[str, tf.Tensor]] = []
        tower_gradients: list[Gradients] = []
        real_steps: list[tf.Tensor] = []
        for device, shard in zip(self._placements, shards):
            with tf.device(device) if device is not None else contextlib.nullcontext():
                with tf.GradientTape() as tape:
                    losses = model.losses(shard, self.sequence_length)
                tower_gradients.append(tape.gradient(losses["loss"], variables))
                tower_losses.append(losses)
                real_steps.append(tf.reduce_sum(shard["masks"]))
        total = tf.add_n(real_steps)
        weights = [tf.math.divide_no_nan(steps, total) for steps in real_steps]
        averaged_losses = {
            name: _weighted_sum([losses[name] for losses in tower_losses], weights)
            for name in tower_losses[0]
        }
        averaged_gradients: Gradients = [
            None if gradients[0] is None else _weighted_sum(gradients, weights)
            for gradients in zip(*tower_gradients)
        ]
        return averaged_losses, averaged_gradients

    def shard_feed(self, batch: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
        """The update inputs ``batch`` (:meth:`update_feed`) cut into one shard per tower
        (:func:`shard_bounds` over its sequences; ``recurrent_in`` has one row per sequence)."""
        steps = self.sequence_length
        shards: list[dict[str, np.ndarray]] = []
        for start, stop in shard_bounds(len(batch["masks"]) // steps, len(self._placements)):
            shards.append(
                {
                    key: value[start:stop] if key == "recurrent_in" else value[start * steps : stop * steps]
                    for key, value in batch.items()
                }
            )
        return shards

    def gradients(self, mini_batch: MiniBatch) -> tuple[dict[str, float], list[np.ndarray | None]]:
        """What the update step computes on ``mini_batch`` before its Adam step, without taking it:
        the averaged loss values and gradients (one per trainable variable of the network, None
        where the loss does not depend on it), as the towers compute them (one tower on TensorFlow's
        choice of device with fewer than two devices)."""
        if self._gradients_fn is None:
            self._gradients_fn = FixedSignatureFunction(
                lambda *shards: self._tower_gradients(shards),
                [self.update_signature()] * len(self._placements),
            )
        self.write_step_count()  # the schedules read global_step
        losses, gradients = self._gradients_fn(*self.shard_feed(self.update_feed(mini_batch)))
        return (
            {name: float(value.numpy()) for name, value in losses.items()},
            [None if gradient is None else gradient.numpy() for gradient in gradients],
        )
