"""The hand-written layers of the policy network (TensorFlow 2 ``tf.Module``\\ s, the sizes,
activations and initializers of the 0.9 graph).

* hidden dense layers: swish ``x * sigmoid(x)``, kernel "VS(1.0)" (truncated normal cut at 2 sigma,
  stddev ``sqrt(1.3 * factor / fan_in)``, the TF1 ``variance_scaling_initializer``), zero bias;
* NHWC convolutions with Glorot-uniform kernels;
* an LSTM cell with the TF1 ``BasicLSTMCell`` gate order ``i, j, f, o`` and forget bias +1.0, whose
  state travels in ``BrainInfo.memories`` as ``[c | h]``;
* running normalization of vector observations
  ``clip((x - mean) / sqrt(variance / (steps + 1)), -5, 5)``, whose statistics may be computed
  outside TensorFlow and written into its variables only when something reads them
  (:meth:`Normalizer.stage`, :func:`recording_normalizer_reads`);
* the discrete masking layer that turns branch logits into renormalized log-probabilities.

Each layer hands its weights to the exporters as numpy data (``export_weights``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.trainers.export.network import (
    MASK_EPSILON,
    ConvWeights,
    DenseWeights,
    LSTMWeights,
    NormalizerState,
)

__all__ = [
    "Initializer",
    "Dense",
    "Conv2D",
    "LSTMCell",
    "Normalizer",
    "branch_bounds",
    "recording_normalizer_reads",
    "swish",
    "masked_log_probs",
    "MASK_EPSILON",
]


def swish(x: tf.Tensor) -> tf.Tensor:
    """The activation of every hidden dense layer: ``x * sigmoid(x)``."""
    return x * tf.sigmoid(x)


class Initializer:
    """Deterministic initial values for one model, drawn from ``seed`` and a running counter.

    Stateless random ops keep the model independent of TensorFlow's global seed, so two policies in
    one process (two brains) do not disturb each other and the same seed always gives the same net.
    """

    def __init__(self, seed: int) -> None:
        self._seed = int(seed)
        self._count = 0

    def _next(self) -> tf.Tensor:
        self._count += 1
        return tf.constant([self._seed, self._count], dtype=tf.int64)

    def variance_scaling(self, shape: Sequence[int], factor: float, fan_in: int) -> tf.Tensor:
        """TF1 ``variance_scaling_initializer(factor)``: truncated normal, stddev sqrt(1.3 f / fan_in)."""
        stddev = math.sqrt(1.3 * factor / max(1, fan_in))
        return tf.random.stateless_truncated_normal(shape, seed=self._next(), stddev=stddev)

    def glorot_uniform(self, shape: Sequence[int], fan_in: int, fan_out: int) -> tf.Tensor:
        """Glorot uniform, limit sqrt(6 / (fan_in + fan_out)) (the ``tf.layers`` default kernel)."""
        limit = math.sqrt(6.0 / max(1, fan_in + fan_out))
        return tf.random.stateless_uniform(shape, seed=self._next(), minval=-limit, maxval=limit)


class Dense(tf.Module):
    """``y = activation(x @ kernel + bias)``; kernel (in, out), bias (out,) or no bias.

    :param kernel_init: ``("vs", factor)`` for TF1 variance scaling, ``("glorot",)`` for Glorot uniform.
    :param activation: None (linear) or ``"swish"``.
    """

    def __init__(
        self,
        in_size: int,
        out_size: int,
        init: Initializer,
        kernel_init: tuple = ("glorot",),
        use_bias: bool = True,
        activation: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        if kernel_init[0] == "vs":
            kernel = init.variance_scaling([in_size, out_size], kernel_init[1], in_size)
        else:
            kernel = init.glorot_uniform([in_size, out_size], in_size, out_size)
        self.kernel = tf.Variable(kernel, name="kernel")
        self.bias = tf.Variable(tf.zeros([out_size]), name="bias") if use_bias else None
        self.activation = activation
        self.in_size = in_size
        self.out_size = out_size

    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        y = tf.matmul(x, self.kernel)
        if self.bias is not None:
            y = y + self.bias
        if self.activation == "swish":
            y = swish(y)
        return y

    def export_weights(self) -> DenseWeights:
        return DenseWeights(self.kernel.numpy(), None if self.bias is None else self.bias.numpy())


class Conv2D(tf.Module):
    """NHWC convolution with Glorot-uniform kernel (kh, kw, cin, cout) and zero bias.

    :param padding: ``"VALID"`` or ``"SAME"``.
    :param activation: None, ``"elu"`` or ``"relu"``.
    """

    def __init__(
        self,
        in_channels: int,
        filters: int,
        kernel_size: int,
        stride: int,
        padding: str,
        init: Initializer,
        activation: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        receptive = kernel_size * kernel_size
        self.kernel = tf.Variable(
            init.glorot_uniform(
                [kernel_size, kernel_size, in_channels, filters], in_channels * receptive, filters * receptive
            ),
            name="kernel",
        )
        self.bias = tf.Variable(tf.zeros([filters]), name="bias")
        self.stride = stride
        self.padding = padding
        self.activation = activation
        self.kernel_size = kernel_size
        self.filters = filters

    def output_size(self, size: int) -> int:
        """Spatial output length for an input of length ``size``."""
        if self.padding == "SAME":
            return -(-size // self.stride)
        return (size - self.kernel_size) // self.stride + 1

    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        y = tf.nn.conv2d(x, self.kernel, strides=self.stride, padding=self.padding) + self.bias
        if self.activation == "elu":
            y = tf.nn.elu(y)
        elif self.activation == "relu":
            y = tf.nn.relu(y)
        return y

    def export_weights(self) -> ConvWeights:
        return ConvWeights(self.kernel.numpy(), self.bias.numpy(), self.stride, self.padding)


class LSTMCell(tf.Module):
    """The TF1 ``BasicLSTMCell``: one kernel (in + units, 4 units) over ``[x, h]``, gates ``i, j, f, o``.

    ``c' = c * sigmoid(f + 1) + sigmoid(i) * tanh(j)``, ``h' = tanh(c') * sigmoid(o)``. The state is
    carried as one memory vector ``[c | h]`` of length ``2 * units``.
    """

    forget_bias = 1.0

    def __init__(self, input_size: int, units: int, init: Initializer, name: str | None = None) -> None:
        super().__init__(name=name)
        self.units = units
        self.input_size = input_size
        self.kernel = tf.Variable(
            init.glorot_uniform([input_size + units, 4 * units], input_size + units, 4 * units), name="kernel"
        )
        self.bias = tf.Variable(tf.zeros([4 * units]), name="bias")

    def __call__(self, x: tf.Tensor, memory: tf.Tensor, sequence_length: int) -> tuple[tf.Tensor, tf.Tensor]:
        """Run the cell over sequences.

        :param x: (n, input_size), n = n_sequences * sequence_length, sequences one after another.
        :param memory: (n_sequences, 2 * units), the ``[c | h]`` state at the start of each sequence.
        :param sequence_length: steps per sequence (a Python int: 1 at inference).
        :returns: the outputs h for every step (n, units) and the final state (n_sequences, 2 * units).
        """
        units = self.units
        c, h = memory[:, :units], memory[:, units:]
        w_x, w_h = self.kernel[: self.input_size], self.kernel[self.input_size :]
        # The input part of the gates does not depend on the recurrence: one matmul for all steps.
        x_gates = tf.matmul(x, w_x) + self.bias
        if sequence_length == 1:
            c, h = self._step(x_gates, c, h, w_h)
            return h, tf.concat([c, h], axis=1)
        x_gates = tf.reshape(x_gates, [-1, sequence_length, 4 * units])
        x_gates = tf.transpose(x_gates, [1, 0, 2])

        def step(state: tuple[tf.Tensor, tf.Tensor, tf.Tensor], gates: tf.Tensor) -> tuple:
            new_c, new_h = self._step(gates, state[0], state[1], w_h)
            return new_c, new_h, new_h

        c_all, h_all, out = tf.scan(step, x_gates, initializer=(c, h, h))
        out = tf.reshape(tf.transpose(out, [1, 0, 2]), [-1, units])
        return out, tf.concat([c_all[-1], h_all[-1]], axis=1)

    def _step(
        self, x_gates: tf.Tensor, c: tf.Tensor, h: tf.Tensor, w_h: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        gates = x_gates + tf.matmul(h, w_h)
        i, j, f, o = tf.split(gates, 4, axis=1)
        new_c = c * tf.sigmoid(f + self.forget_bias) + tf.sigmoid(i) * tf.tanh(j)
        new_h = tf.tanh(new_c) * tf.sigmoid(o)
        return new_c, new_h

    def export_weights(self) -> LSTMWeights:
        return LSTMWeights(self.kernel.numpy(), self.bias.numpy(), self.units, self.forget_bias)


# The names of the normalizer's statistics: reading one of them first writes staged statistics.
_STATISTICS = frozenset({"running_mean", "running_variance", "normalization_steps"})
# One list per active recording_normalizer_reads(): the normalizers whose statistics were read.
_recorders: list[list[Normalizer]] = []


@contextmanager
def recording_normalizer_reads() -> Iterator[list[Normalizer]]:
    """Collect the normalizers whose statistics are read inside the ``with`` block.

    Used while a ``tf.function`` is traced: the traced graph reads the variables later, when it runs,
    without passing through Python, so its caller writes the staged statistics of exactly these
    normalizers (:meth:`Normalizer.flush`) before each run.
    """
    readers: list[Normalizer] = []
    _recorders.append(readers)
    try:
        yield readers
    finally:
        _recorders.remove(readers)


class _StagedStatistics:
    """Statistics computed outside TensorFlow, not yet in the variables (None: nothing staged)."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: tuple[np.ndarray, np.ndarray, int] | None = None


class Normalizer(tf.Module):
    """Running mean/variance of vector observations (not trainable; saved in checkpoints and ``.nn``).

    ``normalization_steps`` starts at 1, ``running_mean`` at 0, ``running_variance`` at 1. One
    :meth:`update` per inference call with the mean m of the batch:
    ``mean' = mean + (m - mean) / (steps + 1)``, ``var' = var + (m - mean') * (m - mean)``, ``steps' = steps + 1``.

    A faster copy of the same update outside TensorFlow (the numpy decisions of the policy) hands
    its results to :meth:`stage` instead of assigning the three variables at every decision. The
    staged values are written (:meth:`flush`) before anything can see the variables: reading the
    attribute ``running_mean``, ``running_variance`` or ``normalization_steps`` (which every
    TensorFlow use of the normalizer does while it is built, eager code each time, the exporters and
    the numpy copy when it re-reads the weights), saving a checkpoint (the checkpoint walks the
    normalizer's variables through :meth:`_trackable_children`), and before each run of a traced
    function that reads them (:class:`~mlagents.trainers.fixed_signature.FixedSignatureFunction`, through
    :func:`recording_normalizer_reads`). The variables then hold exactly what immediate assigns
    would have written.
    """

    def __init__(self, size: int) -> None:
        super().__init__(name="normalizer")
        self._staged = _StagedStatistics()
        self.normalization_steps = tf.Variable(1, dtype=tf.int32, trainable=False, name="normalization_steps")
        self.running_mean = tf.Variable(tf.zeros([size]), trainable=False, name="running_mean")
        self.running_variance = tf.Variable(tf.ones([size]), trainable=False, name="running_variance")

    def __getattribute__(self, name: str) -> Any:
        if name in _STATISTICS:
            staged = object.__getattribute__(self, "_staged")
            if staged.values is not None:
                object.__getattribute__(self, "flush")()
            for readers in _recorders:  # every active recording: an inner trace reads for the outer too
                if all(self is not seen for seen in readers):
                    readers.append(self)
        return super().__getattribute__(name)

    def stage(self, running_mean: np.ndarray, running_variance: np.ndarray, normalization_steps: int) -> None:
        """Hold new statistics (computed with the update formula above) for the variables; they are
        written by :meth:`flush`, before any read. The arrays must not be changed afterwards."""
        self._staged.values = (running_mean, running_variance, int(normalization_steps))

    @property
    def has_staged(self) -> bool:
        """Whether statistics wait to be written into the variables."""
        return self._staged.values is not None

    def flush(self) -> None:
        """Write the staged statistics into the variables (nothing when none are staged)."""
        values = self._staged.values
        if values is None:
            return
        self._staged.values = None  # first: the reads below do not flush again
        running_mean, running_variance, normalization_steps = values
        self.running_mean.assign(running_mean, read_value=False)
        self.running_variance.assign(running_variance, read_value=False)
        self.normalization_steps.assign(normalization_steps, read_value=False)

    def _trackable_children(self, save_type: Any = "checkpoint", **kwargs: Any) -> Any:
        # A checkpoint save (or any walk of the object graph) sees the current statistics.
        self.flush()
        return super()._trackable_children(save_type, **kwargs)

    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        """The normalized observations (tensor ``normalized_state`` of the 0.9 graph), same shape as x."""
        steps = tf.cast(self.normalization_steps, tf.float32) + 1.0
        return tf.clip_by_value((x - self.running_mean) / tf.sqrt(self.running_variance / steps), -5.0, 5.0)

    def update(self, x: tf.Tensor) -> None:
        """Fold the batch mean of ``x`` (n, size) into the statistics."""
        batch_mean = tf.reduce_mean(x, axis=0)
        steps = tf.cast(self.normalization_steps, tf.float32) + 1.0
        new_mean = self.running_mean + (batch_mean - self.running_mean) / steps
        new_variance = self.running_variance + (batch_mean - new_mean) * (batch_mean - self.running_mean)
        self.running_mean.assign(new_mean)
        self.running_variance.assign(new_variance)
        self.normalization_steps.assign_add(1)

    def export_weights(self) -> NormalizerState:
        return NormalizerState(
            self.running_mean.numpy(),
            self.running_variance.numpy(),
            float(self.normalization_steps.numpy()),
        )


def branch_bounds(act_size: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """(start, end) of each discrete branch in the concatenated logits, as Python ints."""
    edges = np.cumsum([0, *act_size]).tolist()
    return tuple(zip(edges[:-1], edges[1:]))


def masked_log_probs(logits: tf.Tensor, masks: tf.Tensor, act_size: Sequence[int]) -> list[tf.Tensor]:
    """The discrete masking layer, per branch k: ``log(p / sum(p) + ε)`` with
    ``p = (softmax(logits_k) + ε) * mask_k``, ε = ``MASK_EPSILON`` (1e-7).

    :param logits: (n, sum(act_size)) raw branch logits, concatenated.
    :param masks: (n, sum(act_size)), 1 allowed / 0 masked.
    :returns: one (n, act_size[k]) tensor of masked, renormalized log-probabilities per branch.
    """
    out = []
    start = 0
    for size in act_size:
        branch_logits = logits[:, start : start + size]
        branch_mask = masks[:, start : start + size]
        probs = (tf.nn.softmax(branch_logits) + MASK_EPSILON) * branch_mask
        probs = probs / tf.reduce_sum(probs, axis=1, keepdims=True)
        out.append(tf.math.log(probs + MASK_EPSILON))
        start += size
    return out
