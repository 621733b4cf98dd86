"""The policy network: :class:`LearningModel` (observation encoders, LSTMs, actor-critic heads) and its layers.

Everything is TensorFlow 2 (``tf.Module`` + plain ops), with the layer sizes, activations and
initializers of the 0.9 graph:

* hidden dense layers: swish ``x * sigmoid(x)``, kernel "VS(1.0)" (truncated normal cut at 2 sigma,
  stddev ``sqrt(1.3 * factor / fan_in)``, the TF1 ``variance_scaling_initializer``), zero bias;
* visual encoders (``simple``, ``nature_cnn``, ``resnet``) with Glorot-uniform convolutions, NHWC;
* an LSTM cell with the TF1 ``BasicLSTMCell`` gate order ``i, j, f, o`` and forget bias +1.0, whose
  state travels in ``BrainInfo.memories`` as ``[c | h]``;
* running normalization of vector observations
  ``clip((x - mean) / sqrt(variance / (steps + 1)), -5, 5)``;
* discrete control: one observation stream shared by the policy and the value heads; per action branch
  a bias-free dense layer (VS(0.01)) gives the logits, which the masking layer turns into renormalized
  log-probabilities;
* continuous control: two separate streams (policy, value); the policy emits the mean ``mu`` (dense,
  VS(0.01), bias) and a state-independent ``log_sigma_squared`` (init 0); the action is
  ``clip(mu + sqrt(exp(log_sigma_squared)) * epsilon, -3, 3) / 3``;
* one value head (dense 1, Glorot, bias) per reward signal; the value is their mean.

A model holds its variables; the policies wrap its methods into ``tf.function``\\ s. Observations are
passed as a dict of tensors (shapes for n agents/steps):

=========================== ============================ =========================================
key                         shape, dtype                 when
=========================== ============================ =========================================
``vector_observation``      (n, vec_size * stacks) f32    the brain has vector observations
``visual_observation_{i}``  (n, H, W, C) f32 in [0, 1]    one per camera, C = 1 for black and white
``action_masks``            (n, sum(branches)) f32        discrete: 1 allowed, 0 masked
``prev_action``             (n, n_branches) int32         discrete and recurrent
``recurrent_in``            (n / sequence_length, m) f32  recurrent: the state at each sequence start
=========================== ============================ =========================================
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum

import numpy as np
import tensorflow as tf

from mlagents.trainers.exception import UnityPolicyException

__all__ = [
    "EncoderType",
    "LearningModel",
    "Initializer",
    "Dense",
    "Conv2D",
    "LSTMCell",
    "Normalizer",
    "VectorEncoder",
    "VisualEncoder",
    "swish",
    "masked_log_probs",
]

Tensors = dict[str, tf.Tensor]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


class EncoderType(Enum):
    """The visual encoder (``vis_encode_type`` in the trainer configuration)."""

    SIMPLE = "simple"
    NATURE_CNN = "nature_cnn"
    RESNET = "resnet"


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


class Normalizer(tf.Module):
    """Running mean/variance of vector observations (not trainable; saved in checkpoints and ``.nn``).

    ``normalization_steps`` starts at 1, ``running_mean`` at 0, ``running_variance`` at 1. One
    :meth:`update` per inference call with the mean m of the batch:
    ``mean' = mean + (m - mean) / (steps + 1)``, ``var' = var + (m - mean') * (m - mean)``, ``steps' = steps + 1``.
    """

    def __init__(self, size: int) -> None:
        super().__init__(name="normalizer")
        self.normalization_steps = tf.Variable(1, dtype=tf.int32, trainable=False, name="normalization_steps")
        self.running_mean = tf.Variable(tf.zeros([size]), trainable=False, name="running_mean")
        self.running_variance = tf.Variable(tf.ones([size]), trainable=False, name="running_variance")

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


class VectorEncoder(tf.Module):
    """``num_layers`` swish dense layers of ``h_size`` units with VS(1.0) kernels (``hidden_{j}``)."""

    def __init__(self, in_size: int, h_size: int, num_layers: int, init: Initializer, name: str) -> None:
        super().__init__(name=name)
        self.layers: list[Dense] = []
        for j in range(num_layers):
            self.layers.append(
                Dense(in_size, h_size, init, ("vs", 1.0), activation="swish", name=f"hidden_{j}")
            )
            in_size = h_size
        self.out_size = in_size

    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class VisualEncoder(tf.Module):
    """Convolutions for one camera, then flatten and the dense stack of :class:`VectorEncoder`.

    ============ ===============================================================================
    simple       Conv 16 8x8/4 VALID ELU, Conv 32 4x4/2 VALID ELU
    nature_cnn   Conv 32 8x8/4 VALID ELU, Conv 64 4x4/2 VALID ELU, Conv 64 3x3/1 VALID ELU
    resnet       for c in 16, 32, 32: Conv c 3x3/1 VALID (linear), MaxPool 3x3/2 SAME, two residual
                 blocks x + Conv(ReLU(Conv(ReLU(x)))) (3x3/1 SAME); then ReLU
    ============ ===============================================================================

    :raises UnityPolicyException: the camera is too small for the encoder.
    """

    def __init__(
        self,
        height: int,
        width: int,
        channels: int,
        h_size: int,
        num_layers: int,
        encoder_type: EncoderType,
        init: Initializer,
        name: str,
    ) -> None:
        super().__init__(name=name)
        self.encoder_type = encoder_type
        self.convs: list[Conv2D] = []
        # resnet: per stack (first conv, [(conv_a, conv_b), (conv_a, conv_b)])
        self.res_stacks: list[tuple[Conv2D, list[tuple[Conv2D, Conv2D]]]] = []
        h, w, c = height, width, channels
        if encoder_type == EncoderType.RESNET:
            for filters in (16, 32, 32):
                first = Conv2D(c, filters, 3, 1, "VALID", init, name="conv")
                h, w = first.output_size(h), first.output_size(w)
                self._check_size(h, w, height, width)
                h, w = -(-h // 2), -(-w // 2)  # max pool 3x3 stride 2 SAME
                blocks = []
                for _ in range(2):
                    blocks.append(
                        (
                            Conv2D(filters, filters, 3, 1, "SAME", init, name="res_a"),
                            Conv2D(filters, filters, 3, 1, "SAME", init, name="res_b"),
                        )
                    )
                self.res_stacks.append((first, blocks))
                c = filters
        else:
            if encoder_type == EncoderType.SIMPLE:
                spec = [(16, 8, 4), (32, 4, 2)]
            else:
                spec = [(32, 8, 4), (64, 4, 2), (64, 3, 1)]
            for n, (filters, size, stride) in enumerate(spec):
                conv = Conv2D(c, filters, size, stride, "VALID", init, activation="elu", name=f"conv_{n + 1}")
                h, w = conv.output_size(h), conv.output_size(w)
                self._check_size(h, w, height, width)
                self.convs.append(conv)
                c = filters
        self.flat_size = h * w * c
        self.dense = VectorEncoder(self.flat_size, h_size, num_layers, init, name="flat_encoding")
        self.out_size = self.dense.out_size

    def _check_size(self, h: int, w: int, height: int, width: int) -> None:
        if h < 1 or w < 1:
            raise UnityPolicyException(
                f"The visual observation of {width}x{height} pixels is too small for the "
                f"'{self.encoder_type.value}' visual encoder; use larger cameras or another vis_encode_type."
            )

    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        if self.encoder_type == EncoderType.RESNET:
            for first, blocks in self.res_stacks:
                x = first(x)
                x = tf.nn.max_pool2d(x, ksize=3, strides=2, padding="SAME")
                for conv_a, conv_b in blocks:
                    x = x + conv_b(tf.nn.relu(conv_a(tf.nn.relu(x))))
            x = tf.nn.relu(x)
        else:
            for conv in self.convs:
                x = conv(x)
        x = tf.reshape(x, [-1, self.flat_size])
        return self.dense(x)


def masked_log_probs(logits: tf.Tensor, masks: tf.Tensor, act_size: Sequence[int]) -> list[tf.Tensor]:
    """The discrete masking layer, per branch k: ``log(p / sum(p) + 1e-7)`` with
    ``p = (softmax(logits_k) + 1e-7) * mask_k``.

    :param logits: (n, sum(act_size)) raw branch logits, concatenated.
    :param masks: (n, sum(act_size)), 1 allowed / 0 masked.
    :returns: one (n, act_size[k]) tensor of masked, renormalized log-probabilities per branch.
    """
    out = []
    start = 0
    for size in act_size:
        branch_logits = logits[:, start : start + size]
        branch_mask = masks[:, start : start + size]
        probs = (tf.nn.softmax(branch_logits) + 1.0e-7) * branch_mask
        probs = probs / tf.reduce_sum(probs, axis=1, keepdims=True)
        out.append(tf.math.log(probs + 1.0e-7))
        start += size
    return out


class LearningModel(tf.Module):
    """A policy network (the 0.9 ``LearningModel``): inputs, normalizer, observation encoders and, once
    :meth:`create_cc_actor_critic` or :meth:`create_dc_actor_critic` ran, LSTMs and heads.

    :param m_size: memory size (LSTM state length) when ``use_recurrent``.
    :param normalize: running normalization of vector observations.
    :param use_recurrent: add LSTM(s) after the encoders.
    :param brain: the brain's BrainParameters.
    :param seed: seed of the initial weights.
    :param stream_names: names of the value heads (one per reward signal, in configuration order).
    :raises UnityPolicyException: the brain has neither vector nor visual observations.
    """

    _version_number_ = 2

    def __init__(
        self,
        m_size: int | None,
        normalize: bool,
        use_recurrent: bool,
        brain,
        seed: int,
        stream_names: list[str] | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.brain = brain
        self.seed = int(seed)
        self.init = Initializer(self.seed)
        self.vec_obs_size = int(brain.vector_observation_space_size) * int(
            brain.num_stacked_vector_observations
        )
        self.vis_obs_shapes: list[tuple[int, int, int]] = [
            (int(res["height"]), int(res["width"]), 1 if res["blackAndWhite"] else 3)
            for res in brain.camera_resolutions
        ]
        if self.vec_obs_size == 0 and not self.vis_obs_shapes:
            raise UnityPolicyException(
                "No valid network configuration possible. There are no states or observations in this brain"
            )
        self.act_size: list[int] = [int(a) for a in brain.vector_action_space_size]
        self.is_continuous = brain.vector_action_space_type == "continuous"
        self.use_recurrent = bool(use_recurrent)
        self.m_size = int(m_size) if (use_recurrent and m_size) else 0
        self.normalize = bool(normalize) and self.vec_obs_size > 0
        self.stream_names: list[str] = list(stream_names) if stream_names else ["extrinsic"]
        self.global_step = tf.Variable(0, dtype=tf.int32, trainable=False, name="global_step")
        # Graph constants of the 0.9 model, kept in checkpoints and written into the .nn file.
        self.version_number = tf.Variable(
            self._version_number_, dtype=tf.int32, trainable=False, name="version_number"
        )
        self.memory_size = tf.Variable(self.m_size, dtype=tf.int32, trainable=False, name="memory_size")
        self.is_continuous_control = tf.Variable(
            int(self.is_continuous), dtype=tf.int32, trainable=False, name="is_continuous_control"
        )
        self.action_output_shape = tf.Variable(
            self.act_size[0] if self.is_continuous else sum(self.act_size),
            dtype=tf.int32,
            trainable=False,
            name="action_output_shape",
        )
        self.normalizer: Normalizer | None = Normalizer(self.vec_obs_size) if self.normalize else None
        self.vector_encoders: list[VectorEncoder | None] = []
        self.visual_encoders: list[list[VisualEncoder]] = []

    def create_observation_streams(
        self,
        num_streams: int,
        h_size: int,
        num_layers: int,
        vis_encode_type: EncoderType = EncoderType.SIMPLE,
    ) -> list[int]:
        """Build ``num_streams`` independent encoders of all observations.

        :returns: the width of each stream's encoding (visual encodings then the vector encoding).
        """
        widths = []
        for s in range(num_streams):
            visual = [
                VisualEncoder(
                    h, w, c, h_size, num_layers, vis_encode_type, self.init, name=f"main_graph_{s}_encoder{i}"
                )
                for i, (h, w, c) in enumerate(self.vis_obs_shapes)
            ]
            vector = (
                VectorEncoder(self.vec_obs_size, h_size, num_layers, self.init, name=f"main_graph_{s}")
                if self.vec_obs_size > 0
                else None
            )
            self.visual_encoders.append(visual)
            self.vector_encoders.append(vector)
            widths.append(sum(enc.out_size for enc in visual) + (vector.out_size if vector else 0))
        return widths

    def normalized_vector(self, inputs: Tensors) -> tf.Tensor | None:
        """The vector observation, normalized when the model normalizes (None without vector obs)."""
        if self.vec_obs_size == 0:
            return None
        vector = inputs["vector_observation"]
        return self.normalizer(vector) if self.normalizer is not None else vector

    def encode_stream(self, stream: int, inputs: Tensors, vector: tf.Tensor | None) -> tf.Tensor:
        """Encoding of stream ``stream``: ``[visual_0, ..., visual_k, vector]`` concatenated, (n, width)."""
        parts = [enc(inputs[f"visual_observation_{i}"]) for i, enc in enumerate(self.visual_encoders[stream])]
        vector_encoder = self.vector_encoders[stream]
        if vector_encoder is not None:
            parts.append(vector_encoder(vector))
        return parts[0] if len(parts) == 1 else tf.concat(parts, axis=1)

    def input_signature(self, training_length: int | None = None) -> dict[str, tf.TensorSpec]:
        """TensorSpecs of the observation inputs (batch dimension left open)."""
        spec: dict[str, tf.TensorSpec] = {}
        if self.vec_obs_size > 0:
            spec["vector_observation"] = tf.TensorSpec([None, self.vec_obs_size], tf.float32)
        for i, (h, w, c) in enumerate(self.vis_obs_shapes):
            spec[f"visual_observation_{i}"] = tf.TensorSpec([None, h, w, c], tf.float32)
        if not self.is_continuous:
            spec["action_masks"] = tf.TensorSpec([None, sum(self.act_size)], tf.float32)
            if self.use_recurrent:
                spec["prev_action"] = tf.TensorSpec([None, len(self.act_size)], tf.int32)
        if self.use_recurrent:
            spec["recurrent_in"] = tf.TensorSpec([None, self.m_size], tf.float32)
        return spec

    def increment_step(self, n: int) -> int:
        """Add ``n`` to ``global_step``; returns the new value."""
        return int(self.global_step.assign_add(int(n)).numpy())

    @staticmethod
    def polynomial_decay(initial: float, end: float, step: tf.Tensor, max_step: float) -> tf.Tensor:
        """Linear decay from ``initial`` to ``end`` over ``max_step`` steps, then constant."""
        max_step = max(float(max_step), 1.0)
        fraction = tf.minimum(tf.cast(step, tf.float32), max_step) / max_step
        return (initial - end) * (1.0 - fraction) + end

    @staticmethod
    def polynomial_decay_value(initial: float, end: float, step: int, max_step: float) -> float:
        """:meth:`polynomial_decay` at the integer ``step``, computed in float32 with numpy (no
        TensorFlow op): the value the traced graphs compute (their optimizer turns ``x / c`` into
        ``x * (1 / c)``)."""
        limit = np.float32(max(float(max_step), 1.0))
        fraction = np.minimum(np.float32(step), limit) * (np.float32(1.0) / limit)
        return float(np.float32(initial - end) * (np.float32(1.0) - fraction) + np.float32(end))

    # ------------------------------------------------------------------ actor-critic heads

    def create_value_heads(self, in_size: int) -> None:
        """One dense head (1 unit, Glorot kernel, bias) per reward signal, named ``{name}_value``."""
        self.value_heads = {
            name: Dense(in_size, 1, self.init, ("glorot",), use_bias=True, name=f"{name}_value")
            for name in self.stream_names
        }

    def create_cc_actor_critic(self, h_size: int, num_layers: int, vis_encode_type: EncoderType) -> None:
        """Continuous control: separate policy and value streams, Gaussian policy with a
        state-independent ``log_sigma_squared``, optional LSTMs of ``memory_size / 4`` units each."""
        widths = self.create_observation_streams(2, h_size, num_layers, vis_encode_type)
        policy_width, value_width = widths
        if self.use_recurrent:
            units = self.m_size // 4
            self.lstm_policy = LSTMCell(policy_width, units, self.init, name="lstm_policy")
            self.lstm_value = LSTMCell(value_width, units, self.init, name="lstm_value")
            policy_width = value_width = units
        act = self.act_size[0]
        self.mu = Dense(policy_width, act, self.init, ("vs", 0.01), use_bias=True, name="mu")
        self.log_sigma_squared = tf.Variable(tf.zeros([act]), name="log_sigma_squared")
        self.create_value_heads(value_width)

    def create_dc_actor_critic(self, h_size: int, num_layers: int, vis_encode_type: EncoderType) -> None:
        """Discrete control: one stream shared by policy and values, optional LSTM of
        ``memory_size / 2`` units fed with the one-hot previous actions, one bias-free dense layer of
        logits per branch."""
        (width,) = self.create_observation_streams(1, h_size, num_layers, vis_encode_type)
        if self.use_recurrent:
            units = self.m_size // 2
            self.lstm = LSTMCell(width + sum(self.act_size), units, self.init, name="lstm")
            width = units
        self.policy_branches = [
            Dense(width, size, self.init, ("vs", 0.01), use_bias=False, name=f"policy_branch_{k}")
            for k, size in enumerate(self.act_size)
        ]
        self.create_value_heads(width)

    # ------------------------------------------------------------------ forward pass

    def forward(self, inputs: Tensors, sequence_length: int = 1) -> dict[str, tf.Tensor]:
        """The deterministic part of the network.

        :param inputs: observation tensors (see :mod:`mlagents.trainers.models`).
        :param sequence_length: steps per sequence (1 at inference), a Python int.
        :returns: ``logits`` (n, sum(branches)) for discrete or ``mu`` (n, d) for continuous control,
            ``values`` (dict name -> (n,)), ``value`` (n,) the mean of the heads, and ``memory_out``
            (n_sequences, m) when recurrent.
        """
        vector = self.normalized_vector(inputs)
        out: dict[str, tf.Tensor] = {}
        if self.is_continuous:
            hidden_policy = self.encode_stream(0, inputs, vector)
            hidden_value = self.encode_stream(1, inputs, vector)
            if self.use_recurrent:
                memory = inputs["recurrent_in"]
                half = self.m_size // 2
                hidden_policy, memory_policy = self.lstm_policy(
                    hidden_policy, memory[:, :half], sequence_length
                )
                hidden_value, memory_value = self.lstm_value(hidden_value, memory[:, half:], sequence_length)
                out["memory_out"] = tf.concat([memory_policy, memory_value], axis=1)
            out["mu"] = self.mu(hidden_policy)
        else:
            hidden = self.encode_stream(0, inputs, vector)
            if self.use_recurrent:
                prev_action = inputs["prev_action"]
                one_hots = [tf.one_hot(prev_action[:, k], size) for k, size in enumerate(self.act_size)]
                hidden = tf.concat([hidden] + one_hots, axis=1)
                hidden, out["memory_out"] = self.lstm(hidden, inputs["recurrent_in"], sequence_length)
            out["logits"] = tf.concat([branch(hidden) for branch in self.policy_branches], axis=1)
            hidden_value = hidden
        values = {name: head(hidden_value)[:, 0] for name, head in self.value_heads.items()}
        out["values"] = values
        out["value"] = tf.add_n(list(values.values())) / float(len(values))
        return out

    def continuous_log_probs(self, action_pre: tf.Tensor, mu: tf.Tensor) -> tf.Tensor:
        """Per-dimension Gaussian log-density of ``action_pre`` (n, d) (tensor ``action_probs``)."""
        sigma_sq = tf.exp(self.log_sigma_squared)
        return (
            -0.5 * tf.square(tf.stop_gradient(action_pre) - mu) / sigma_sq
            - _HALF_LOG_2PI
            - 0.5 * self.log_sigma_squared
        )

    def continuous_entropy(self, batch_like: tf.Tensor) -> tf.Tensor:
        """``0.5 * mean(log(2 pi e) + log_sigma_squared)`` broadcast to (n,) like ``batch_like[:, 0]``."""
        entropy = 0.5 * tf.reduce_mean(math.log(2.0 * math.pi * math.e) + self.log_sigma_squared)
        return tf.ones_like(batch_like[:, 0]) * entropy

    def discrete_entropy(self, logits: tf.Tensor) -> tf.Tensor:
        """Sum over branches of the entropy of softmax(logits) (unmasked), shape (n,)."""
        entropies = []
        start = 0
        for size in self.act_size:
            branch = logits[:, start : start + size]
            entropies.append(-tf.reduce_sum(tf.nn.softmax(branch) * tf.nn.log_softmax(branch), axis=1))
            start += size
        return tf.add_n(entropies)

    def discrete_action_log_prob(self, logits: tf.Tensor, masks: tf.Tensor, actions: tf.Tensor) -> tf.Tensor:
        """Log-probability (n,) of the taken ``actions`` (n, n_branches) under the masking layer."""
        log_probs = masked_log_probs(logits, masks, self.act_size)
        total = []
        for k, (branch, size) in enumerate(zip(log_probs, self.act_size)):
            # Like the original, the masked log-probs are renormalized once more (log_softmax).
            one_hot = tf.one_hot(actions[:, k], size)
            total.append(tf.reduce_sum(one_hot * tf.nn.log_softmax(branch), axis=1))
        return tf.add_n(total)

    def inference(self, inputs: Tensors, epsilon: tf.Tensor | None = None) -> dict[str, tf.Tensor]:
        """Everything a decision needs.

        :param inputs: observation tensors.
        :param epsilon: continuous control: standard normal noise (n, d).
        :returns: the tensors of :meth:`forward` plus ``entropy`` (n,) and, for discrete control,
            ``action_probs`` (the logits) and ``masked_log_probs`` (the masked log-probabilities, the
            0.9 ``action`` output); for continuous control ``action`` (n, d) in [-1, 1], ``action_pre``
            (the unclipped sample) and ``action_probs`` (per-dimension log-densities).
        """
        out = self.forward(inputs, 1)
        if self.is_continuous:
            mu = out["mu"]
            action_pre = mu + tf.sqrt(tf.exp(self.log_sigma_squared)) * epsilon
            out["action_pre"] = action_pre
            out["action"] = tf.clip_by_value(action_pre, -3.0, 3.0) / 3.0
            out["action_probs"] = self.continuous_log_probs(action_pre, mu)
            out["entropy"] = self.continuous_entropy(mu)
        else:
            logits = out["logits"]
            out["action_probs"] = logits
            out["masked_log_probs"] = tf.concat(
                masked_log_probs(logits, inputs["action_masks"], self.act_size), axis=1
            )
            out["entropy"] = self.discrete_entropy(logits)
        return out
