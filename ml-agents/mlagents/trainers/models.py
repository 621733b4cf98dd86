"""The policy network: :class:`LearningModel` (observation encoders, LSTMs, actor-critic heads).

Everything is TensorFlow 2 (``tf.Module`` + plain ops), with the layer sizes, activations and
initializers of the 0.9 graph. The layers are in :mod:`mlagents.trainers.layers` (dense, convolution,
LSTM cell, normalizer, masking) and :mod:`mlagents.trainers.encoders` (vector and visual encoders);
this module assembles them:

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

import numpy as np
import tensorflow as tf

from mlagents.trainers.encoders import EncoderType, VectorEncoder, VisualEncoder
from mlagents.trainers.exception import UnityPolicyException
from mlagents.trainers.export.network import NetworkWeights, StreamWeights
from mlagents.trainers.layers import Dense, Initializer, LSTMCell, Normalizer, masked_log_probs

__all__ = ["ACTION_CLIP", "EncoderType", "LearningModel", "Tensors"]

Tensors = dict[str, tf.Tensor]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: A continuous action is the Gaussian sample clipped to [-ACTION_CLIP, ACTION_CLIP] and divided by it.
ACTION_CLIP = 3.0


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

    def input_signature(self) -> dict[str, tf.TensorSpec]:
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
            out["action"] = tf.clip_by_value(action_pre, -ACTION_CLIP, ACTION_CLIP) / ACTION_CLIP
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

    # ------------------------------------------------------------------ export

    def export_weights(self) -> NetworkWeights:
        """The inference part of the network as numpy data, for :mod:`mlagents.trainers.export`."""
        streams = [
            StreamWeights(
                visual=[encoder.export_weights() for encoder in visual],
                vector=None if vector is None else vector.export_weights(),
            )
            for visual, vector in zip(self.visual_encoders, self.vector_encoders)
        ]
        recurrent = self.use_recurrent
        return NetworkWeights(
            vector_observation_size=self.vec_obs_size,
            visual_observation_shapes=list(self.vis_obs_shapes),
            action_sizes=list(self.act_size),
            is_continuous=self.is_continuous,
            use_recurrent=recurrent,
            memory_size=int(self.memory_size.numpy()),
            version_number=int(self.version_number.numpy()),
            normalizer=None if self.normalizer is None else self.normalizer.export_weights(),
            streams=streams,
            lstm=self.lstm.export_weights() if recurrent and not self.is_continuous else None,
            lstm_policy=self.lstm_policy.export_weights() if recurrent and self.is_continuous else None,
            lstm_value=self.lstm_value.export_weights() if recurrent and self.is_continuous else None,
            policy_branches=[] if self.is_continuous else [b.export_weights() for b in self.policy_branches],
            mu=self.mu.export_weights() if self.is_continuous else None,
            log_sigma_squared=self.log_sigma_squared.numpy() if self.is_continuous else None,
            # Behavioural-cloning networks have no value stream.
            value_heads=[head.export_weights() for head in getattr(self, "value_heads", {}).values()],
        )
