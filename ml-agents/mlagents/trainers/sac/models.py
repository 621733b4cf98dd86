"""The Soft Actor-Critic networks and losses: :class:`SACModel`.

Three parts, each with observation encoders of its own (visual: convolutions then flatten; vector:
the normalized observation as it is), followed by ``num_layers`` swish dense layers of ``h_size``
units and, when recurrent, an LSTM:

* the **policy**: continuous control: a squashed Gaussian, ``mu`` and a state-dependent ``log_std``
  (dense layers, VS(0.01) kernels), ``log_std`` clipped to [-20, 2], the action
  ``tanh(mu + exp(log_std) * epsilon)``; discrete control: one bias-free VS(0.01) dense layer of
  logits per branch, turned into masked, renormalized probabilities;
* the **critic** (:class:`CriticNetwork`): its observation stream feeds a value network (one head per
  reward signal) and two Q networks. A continuous Q network sees the stream with the action
  concatenated and gives one value per signal; a discrete one sees the stream only and gives one
  value per action of every branch and signal;
* the **target** value network, a copy of the critic's value part that follows it slowly:
  ``target = (1 - tau) target + tau value`` after every update.

The entropy coefficient ``alpha = exp(log_ent_coef)`` is learned, one per branch for discrete
control, from ``log(init_entcoef)``; its target entropy is ``-dim(action)`` (continuous) or
``0.2 log(branch size)`` per branch (discrete).

Losses on a mini-batch, per reward signal k (``M[x]`` the mean over the steps of ``masks * x``;
``d`` = done, used only for signals that use terminal states)::

    backup_k = r_k + gamma_k (1 - d) V_target_k(s')
    L_Q1     = mean_k 0.5 M[(backup_k - Q1_k(s, a))^2]        (L_Q2 alike)
    L_V      = mean_k 0.5 M[(V_k(s) - (min(Q1_k, Q2_k)(s, a~pi) - alpha log pi(a~pi|s)))^2]
    L_pi     = M[alpha log pi(a~pi|s) - Q1(s, a~pi)]          (Q1: the mean over the signals)
    L_alpha  = -M[log_ent_coef (log pi(a~pi|s) + target_entropy)]

For discrete control the expectations over the policy's actions are exact sums weighted by the
probabilities, per branch, then averaged over the branches; a Q value of a taken action is the
branch's Q of that action, averaged over the branches. The gradients of the three losses
(policy, ``L_Q1 + L_Q2 + L_V`` for the critic, entropy) are taken on the same forward pass and
applied by three Adam optimizers with the constant learning rate.

Inputs (shapes for n steps, as :class:`~mlagents.trainers.models.LearningModel`'s, plus):

============================== ================================== ====================================
key                            shape, dtype                        meaning
============================== ================================== ====================================
``recurrent_in``               (n / seq, memory_size) f32          ``[value | Q1 | Q2 | policy]`` state
``epsilon``                    (n, d) f32                          continuous: standard normal noise
``actions``                    (n, d) f32 / (n, n_branches) int32  the taken actions
``next_vector_observation``    (n, vec) f32                        the observation after the step
``next_visual_observation_i``  (n, H, W, C) f32                    the camera image after the step
``next_recurrent_in``          (n / seq, memory_size / 4) f32      the target's value state
``masks``, ``done``            (n,) f32                            real step (1) / padding; episode end
``{k}_rewards``                (n,) f32                            the reward of signal k
============================== ================================== ====================================
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from mlagents.trainers.encoders import EncoderType, VectorEncoder, VisualEncoder
from mlagents.trainers.exception import UnityPolicyException
from mlagents.trainers.export.network import NetworkWeights, StreamWeights
from mlagents.trainers.layers import MASK_EPSILON, Dense, Initializer, LSTMCell, branch_bounds
from mlagents.trainers.models import LearningModel, Tensors

__all__ = [
    "CONTINUOUS_TARGET_ENTROPY_SCALE",
    "DISCRETE_TARGET_ENTROPY_SCALE",
    "LOG_STD_MAX",
    "LOG_STD_MIN",
    "CriticNetwork",
    "SACModel",
    "ValueNetwork",
]

LOG_STD_MAX = 2.0
LOG_STD_MIN = -20.0
#: Keeps divisions and logarithms of the squashed Gaussian finite.
EPSILON = 1e-6
#: Discrete target entropy per branch: this times log(branch size) (about an epsilon-greedy 0.05).
DISCRETE_TARGET_ENTROPY_SCALE = 0.2
#: Continuous target entropy: minus this times the action dimension.
CONTINUOUS_TARGET_ENTROPY_SCALE = 1.0

_HALF_LOG_2PI_E = 0.5 * math.log(2.0 * math.pi * math.e)
_LOG_2PI = math.log(2.0 * math.pi)


def _observation_encoders(
    model: LearningModel, h_size: int, encode_type: EncoderType, init: Initializer, prefix: str
) -> list[VisualEncoder]:
    """One visual encoder per camera with no dense layer after the flattening (the dense stack
    follows the concatenation of all observations)."""
    return [
        VisualEncoder(h, w, c, h_size, 0, encode_type, init, name=f"{prefix}_visual_{i}")
        for i, (h, w, c) in enumerate(model.vis_obs_shapes)
    ]


def _encode(
    encoders: Sequence[VisualEncoder], inputs: Tensors, vector: tf.Tensor | None, prefix: str
) -> tf.Tensor:
    """``[visual_0, ..., visual_k, vector]`` concatenated (n, width); ``prefix`` selects the current
    (``visual_observation_``) or next (``next_visual_observation_``) images."""
    parts = [enc(inputs[f"{prefix}{i}"]) for i, enc in enumerate(encoders)]
    if vector is not None:
        parts.append(vector)
    return parts[0] if len(parts) == 1 else tf.concat(parts, axis=1)


def _stream_width(model: LearningModel, encoders: Sequence[VisualEncoder]) -> int:
    return sum(enc.out_size for enc in encoders) + model.vec_obs_size


class _HeadsNetwork(tf.Module):
    """A dense encoder (``encoder``), an optional LSTM (``lstm``) and one dense head per reward
    signal (``heads``): the part the value network and the Q networks share."""

    def __init__(
        self,
        in_size: int,
        h_size: int,
        num_layers: int,
        memory_size: int,
        stream_names: Sequence[str],
        outputs: int,
        init: Initializer,
        name: str,
        layers_name: str | None = None,
    ) -> None:
        """The layers are named after ``layers_name`` (default ``name``): ``{layers_name}_encoder``,
        ``lstm_{layers_name}``, ``{signal}_{layers_name}``; ``memory_size`` is the length of the
        LSTM state (0: feed-forward), ``outputs`` the values of each head."""
        super().__init__(name=name)
        name = name if layers_name is None else layers_name
        self.encoder = VectorEncoder(in_size, h_size, num_layers, init, name=f"{name}_encoder")
        width = self.encoder.out_size
        self.lstm = LSTMCell(width, memory_size // 2, init, name=f"lstm_{name}") if memory_size else None
        if self.lstm is not None:
            width = self.lstm.units
        self.heads = {
            stream: Dense(width, outputs, init, ("glorot",), use_bias=True, name=f"{stream}_{name}")
            for stream in stream_names
        }

    def _heads(
        self, x: tf.Tensor, memory: tf.Tensor | None, sequence_length: int
    ) -> tuple[dict[str, tf.Tensor], tf.Tensor | None]:
        """Per signal (n, outputs), and the new LSTM state (None when feed-forward)."""
        hidden = self.encoder(x)
        memory_out = None
        if self.lstm is not None:
            assert memory is not None
            hidden, memory_out = self.lstm(hidden, memory, sequence_length)
        return {name: head(hidden) for name, head in self.heads.items()}, memory_out


class ValueNetwork(_HeadsNetwork):
    """Observation encoders, the value encoder, an optional LSTM and one value head per signal
    (the critic's value part, and the target network: two instances with identical layouts, so
    their variables pair up in order).

    :param memory_size: length of its LSTM state (0: feed-forward).
    """

    def __init__(
        self,
        model: LearningModel,
        h_size: int,
        num_layers: int,
        encode_type: EncoderType,
        memory_size: int,
        init: Initializer,
        name: str,
    ) -> None:
        # The camera encoders' weights are drawn first, then the dense layers'.
        visual_encoders = _observation_encoders(model, h_size, encode_type, init, "critic")
        stream_width = _stream_width(model, visual_encoders)
        super().__init__(
            stream_width, h_size, num_layers, memory_size, model.stream_names, 1, init, name, "value"
        )
        self.visual_encoders = visual_encoders
        self.stream_width = stream_width

    def stream(
        self, inputs: Tensors, vector: tf.Tensor | None, prefix: str = "visual_observation_"
    ) -> tf.Tensor:
        """The observation stream (n, stream_width)."""
        return _encode(self.visual_encoders, inputs, vector, prefix)

    def values(
        self, stream: tf.Tensor, memory: tf.Tensor | None, sequence_length: int
    ) -> tuple[dict[str, tf.Tensor], tf.Tensor | None]:
        """Value (n,) of each signal, and the new LSTM state (None when feed-forward)."""
        heads, memory_out = self._heads(stream, memory, sequence_length)
        return {name: value[:, 0] for name, value in heads.items()}, memory_out


class QNetwork(_HeadsNetwork):
    """One Q network: dense encoder over the critic's stream (and the action, for continuous
    control), optional LSTM, one head per signal with ``outputs`` values."""

    def __call__(
        self, x: tf.Tensor, memory: tf.Tensor | None, sequence_length: int
    ) -> tuple[dict[str, tf.Tensor], tf.Tensor | None]:
        """Per signal (n, outputs), and the new LSTM state (None when feed-forward)."""
        return self._heads(x, memory, sequence_length)


class CriticNetwork(tf.Module):
    """The value network and the twin Q networks on the value network's observation stream."""

    def __init__(
        self,
        model: LearningModel,
        h_size: int,
        num_layers: int,
        encode_type: EncoderType,
        memory_size: int,
        init: Initializer,
    ) -> None:
        super().__init__(name="critic")
        self.value = ValueNetwork(model, h_size, num_layers, encode_type, memory_size, init, name="value")
        if model.is_continuous:
            q_in, outputs = self.value.stream_width + model.act_size[0], 1
        else:
            q_in, outputs = self.value.stream_width, sum(model.act_size)
        names = model.stream_names
        self.q1 = QNetwork(q_in, h_size, num_layers, memory_size, names, outputs, init, name="q1")
        self.q2 = QNetwork(q_in, h_size, num_layers, memory_size, names, outputs, init, name="q2")


class SACModel(LearningModel):
    """The SAC networks of one brain (see the module docstring).

    :param brain: the brain's BrainParameters.
    :param lr: learning rate of the three optimizers (constant).
    :param h_size: units of every hidden dense layer.
    :param init_entcoef: initial entropy coefficient alpha (> 0).
    :param max_step: the trainer's ``max_steps`` (kept for reference; the rate does not decay).
    :param normalize: running normalization of vector observations (shared by all parts).
    :param use_recurrent: LSTMs after the encoders; ``m_size`` must then be divisible by 8 (four
        LSTM states ``[c | h]`` of ``m_size / 4`` each).
    :param num_layers: dense layers per encoder (values < 1 mean 1).
    :param m_size: memory size.
    :param seed: seed of the initial weights.
    :param stream_names: reward-signal names, one value/Q head each, in configuration order.
    :param tau: how far the target follows the value network per update.
    :param gammas: discount of each signal (same order as ``stream_names``).
    :param vis_encode_type: the visual encoder.
    :raises UnityPolicyException: recurrent with a memory size not divisible by 8.
    """

    def __init__(
        self,
        brain,
        lr: float = 3e-4,
        h_size: int = 128,
        init_entcoef: float = 1.0,
        max_step: float = 5e6,
        normalize: bool = False,
        use_recurrent: bool = False,
        num_layers: int = 2,
        m_size: int | None = None,
        seed: int = 0,
        stream_names: list[str] | None = None,
        tau: float = 0.005,
        gammas: list[float] | None = None,
        vis_encode_type: EncoderType = EncoderType.SIMPLE,
    ) -> None:
        super().__init__(m_size, normalize, use_recurrent, brain, seed, stream_names, name="sac_model")
        if self.use_recurrent and self.m_size % 8 != 0:
            raise UnityPolicyException(
                f"The memory size of a recurrent SAC policy must be divisible by 8 (four LSTM states of "
                f"memory_size / 4 values, each [c | h]); it is {self.m_size}."
            )
        self.lr = float(lr)
        self.h_size = int(h_size)
        self.num_layers = max(1, int(num_layers))
        self.max_step = float(max_step)
        self.tau = float(tau)
        self.init_entcoef = float(init_entcoef)
        self.gammas = [float(g) for g in (gammas if gammas is not None else [0.99] * len(self.stream_names))]
        self.vis_encode_type = EncoderType(vis_encode_type)
        self.part_memory = self.m_size // 4  # the state of each of the four LSTMs
        self.branches = branch_bounds(self.act_size)

        init = self.init
        # ---- policy
        self.policy_visual = _observation_encoders(self, self.h_size, self.vis_encode_type, init, "policy")
        width = _stream_width(self, self.policy_visual)
        self.policy_encoder = VectorEncoder(width, self.h_size, self.num_layers, init, name="policy_encoder")
        width = self.policy_encoder.out_size
        if self.use_recurrent:
            lstm_in = width if self.is_continuous else width + sum(self.act_size)
            self.lstm_policy = LSTMCell(lstm_in, self.part_memory // 2, init, name="lstm_policy")
            width = self.lstm_policy.units
        if self.is_continuous:
            act = self.act_size[0]
            self.mu = Dense(width, act, init, ("vs", 0.01), use_bias=True, name="mu")
            self.log_std = Dense(width, act, init, ("vs", 0.01), use_bias=True, name="log_std")
            self.target_entropy = -CONTINUOUS_TARGET_ENTROPY_SCALE * float(act)
            initial = np.log(np.float32(self.init_entcoef))
        else:
            self.policy_branches = [
                Dense(width, size, init, ("vs", 0.01), use_bias=False, name=f"policy_branch_{k}")
                for k, size in enumerate(self.act_size)
            ]
            self.target_entropies = [
                float(DISCRETE_TARGET_ENTROPY_SCALE * np.log(size).astype(np.float32))
                for size in self.act_size
            ]
            initial = np.log(np.full(len(self.act_size), self.init_entcoef, dtype=np.float32))
        # ---- entropy coefficient, critic, target
        self.log_ent_coef = tf.Variable(initial, dtype=tf.float32, name="log_ent_coef")
        memory = self.part_memory if self.use_recurrent else 0
        self.critic = CriticNetwork(self, self.h_size, self.num_layers, self.vis_encode_type, memory, init)
        self.target = ValueNetwork(
            self, self.h_size, self.num_layers, self.vis_encode_type, memory, init, name="target_value"
        )
        # 1.0 for the signals whose value is 0 after an episode end; 0.0 to bootstrap through it.
        self.use_dones_in_backup = tf.Variable(
            np.ones(len(self.stream_names), np.float32), trainable=False, name="use_dones_in_backup"
        )
        self.initialize_target()

    # ------------------------------------------------------------------ variables

    @property
    def policy_variables(self) -> list[tf.Variable]:
        """What the policy loss trains: its encoders, LSTM and heads."""
        modules: list[tf.Module] = [*self.policy_visual, self.policy_encoder]
        if self.use_recurrent:
            modules.append(self.lstm_policy)
        if self.is_continuous:
            modules += [self.mu, self.log_std]
        else:
            modules += self.policy_branches
        return [v for module in modules for v in module.trainable_variables]

    @property
    def critic_variables(self) -> list[tf.Variable]:
        """What ``L_Q1 + L_Q2 + L_V`` trains: the value network and both Q networks."""
        return list(self.critic.trainable_variables)

    def initialize_target(self) -> None:
        """Copy the value network into the target network."""
        for target, source in zip(self.target.trainable_variables, self.critic.value.trainable_variables):
            target.assign(source)

    def update_target(self, tau: tf.Tensor | float) -> None:
        """``target = (1 - tau) target + tau value``."""
        for target, source in zip(self.target.trainable_variables, self.critic.value.trainable_variables):
            target.assign((1.0 - tau) * target + tau * source)

    def entropy_coefficient(self) -> tf.Tensor:
        """alpha: () continuous, (n_branches,) discrete."""
        return tf.exp(self.log_ent_coef)

    # ------------------------------------------------------------------ inputs

    def update_signature(self) -> dict[str, tf.TensorSpec]:
        """TensorSpecs of the update step's inputs (see the module docstring)."""
        spec = dict(self.input_signature())
        n_act = self.act_size[0] if self.is_continuous else len(self.act_size)
        if self.is_continuous:
            spec["epsilon"] = tf.TensorSpec([None, n_act], tf.float32)
            spec["actions"] = tf.TensorSpec([None, n_act], tf.float32)
        else:
            spec["actions"] = tf.TensorSpec([None, n_act], tf.int32)
        if self.vec_obs_size > 0:
            spec["next_vector_observation"] = tf.TensorSpec([None, self.vec_obs_size], tf.float32)
        for i, (h, w, c) in enumerate(self.vis_obs_shapes):
            spec[f"next_visual_observation_{i}"] = tf.TensorSpec([None, h, w, c], tf.float32)
        if self.use_recurrent:
            spec["next_recurrent_in"] = tf.TensorSpec([None, self.part_memory], tf.float32)
        spec["masks"] = tf.TensorSpec([None], tf.float32)
        spec["done"] = tf.TensorSpec([None], tf.float32)
        for name in self.stream_names:
            spec[f"{name}_rewards"] = tf.TensorSpec([None], tf.float32)
        return spec

    def _memory_parts(self, inputs: Tensors) -> list[tf.Tensor | None]:
        """The ``[value, Q1, Q2, policy]`` states of ``recurrent_in`` (Nones when feed-forward)."""
        if not self.use_recurrent:
            return [None] * 4
        memory = inputs["recurrent_in"]
        m = self.part_memory
        return [memory[:, i * m : (i + 1) * m] for i in range(4)]

    # ------------------------------------------------------------------ forward pass

    def policy(
        self,
        inputs: Tensors,
        vector: tf.Tensor | None,
        memory: tf.Tensor | None,
        sequence_length: int,
        epsilon: tf.Tensor | None,
    ) -> dict[str, tf.Tensor]:
        """The policy's outputs.

        :returns: continuous: ``mu``, ``log_std``, ``action`` (n, d) the squashed sample,
            ``log_prob`` (n,) its log-density with the tanh correction, ``entropy`` (n,) of the
            Gaussian; discrete: ``logits``, ``probs`` and ``log_probs`` (n, sum(branches)) masked and
            renormalized, ``entropy`` (n,); and ``memory_out`` when recurrent.
        """
        hidden = self.policy_encoder(_encode(self.policy_visual, inputs, vector, "visual_observation_"))
        out: dict[str, tf.Tensor] = {}
        if self.use_recurrent:
            if not self.is_continuous:
                prev_action = inputs["prev_action"]
                one_hots = [tf.one_hot(prev_action[:, k], size) for k, size in enumerate(self.act_size)]
                hidden = tf.concat([hidden] + one_hots, axis=1)
            hidden, out["memory_out"] = self.lstm_policy(hidden, memory, sequence_length)
        if self.is_continuous:
            assert epsilon is not None
            mu = self.mu(hidden)
            log_std = tf.clip_by_value(self.log_std(hidden), LOG_STD_MIN, LOG_STD_MAX)
            std = tf.exp(log_std)
            pre = mu + epsilon * std
            gaussian = -0.5 * (tf.square((pre - mu) / (std + EPSILON)) + 2.0 * log_std + _LOG_2PI)
            action = tf.tanh(pre)
            log_prob = tf.reduce_sum(gaussian, axis=1) - tf.reduce_sum(
                tf.math.log(1.0 - tf.square(action) + EPSILON), axis=1
            )
            out.update(
                mu=mu,
                log_std=log_std,
                action=action,
                log_prob=log_prob,
                entropy=tf.reduce_sum(log_std + _HALF_LOG_2PI_E, axis=1),
            )
        else:
            logits = tf.concat([branch(hidden) for branch in self.policy_branches], axis=1)
            masks = inputs["action_masks"]
            probs, log_probs = [], []
            for start, end in self.branches:
                kept = (tf.nn.softmax(logits[:, start:end]) + MASK_EPSILON) * masks[:, start:end]
                branch_probs = kept / tf.reduce_sum(kept, axis=1, keepdims=True)
                probs.append(branch_probs)
                log_probs.append(tf.math.log(branch_probs + MASK_EPSILON))
            all_probs = tf.concat(probs, axis=1)
            all_log_probs = tf.concat(log_probs, axis=1)
            out.update(
                logits=logits,
                probs=all_probs,
                log_probs=all_log_probs,
                entropy=-tf.reduce_sum(all_probs * all_log_probs, axis=1),
            )
        return out

    def _branch_sums(self, x: tf.Tensor) -> tf.Tensor:
        """Per branch, the sum over its actions: (n, sum(branches)) -> (n, n_branches)."""
        return tf.stack([tf.reduce_sum(x[:, s:e], axis=1) for s, e in self.branches], axis=1)

    def inference(self, inputs: Tensors, epsilon: tf.Tensor | None = None) -> dict[str, tf.Tensor]:
        """Everything a decision needs: the policy's outputs (:meth:`policy`), ``values`` (dict
        name -> (n,)), ``value`` (n,) their mean and, when recurrent, ``memory_out`` (n, memory_size)
        the new ``[value | Q1 | Q2 | policy]`` state (the Q networks see the sampled action)."""
        vector = self.normalized_vector(inputs)
        mem_value, mem_q1, mem_q2, mem_policy = self._memory_parts(inputs)
        out = self.policy(inputs, vector, mem_policy, 1, epsilon)
        critic = self.critic
        stream = critic.value.stream(inputs, vector)
        values, value_memory = critic.value.values(stream, mem_value, 1)
        out["values"] = values
        out["value"] = tf.add_n(list(values.values())) / float(len(values))
        if self.use_recurrent:
            q_in = tf.concat([stream, out["action"]], axis=1) if self.is_continuous else stream
            _, q1_memory = critic.q1(q_in, mem_q1, 1)
            _, q2_memory = critic.q2(q_in, mem_q2, 1)
            out["memory_out"] = tf.concat([value_memory, q1_memory, q2_memory, out["memory_out"]], axis=1)
        return out

    def value_estimates(self, inputs: Tensors) -> dict[str, tf.Tensor]:
        """The value network's estimate (n,) per signal (no sampling)."""
        vector = self.normalized_vector(inputs)
        mem_value = self._memory_parts(inputs)[0]
        stream = self.critic.value.stream(inputs, vector)
        return self.critic.value.values(stream, mem_value, 1)[0]

    # ------------------------------------------------------------------ losses

    def losses(self, batch: Tensors, sequence_length: int) -> dict[str, tf.Tensor]:
        """The SAC losses on one mini-batch (module docstring); also ``entropy`` (mean policy
        entropy) and ``entropy_coef`` (mean alpha)."""
        vector = self.normalized_vector(batch)
        mem_value, mem_q1, mem_q2, mem_policy = self._memory_parts(batch)
        policy = self.policy(batch, vector, mem_policy, sequence_length, batch.get("epsilon"))
        critic = self.critic
        stream = critic.value.stream(batch, vector)
        values, _ = critic.value.values(stream, mem_value, sequence_length)
        # The target sees the next observations (normalized alike) from the stored value state.
        next_inputs = {key[len("next_") :]: value for key, value in batch.items() if key.startswith("next_")}
        next_vector = self.normalized_vector(next_inputs)
        next_stream = self.target.stream(next_inputs, next_vector)
        target_values, _ = self.target.values(next_stream, next_inputs.get("recurrent_in"), sequence_length)

        masks = batch["masks"]
        done = batch["done"]
        alpha = self.entropy_coefficient()

        def masked_mean(x: tf.Tensor) -> tf.Tensor:
            return tf.reduce_mean(masks * x)

        if self.is_continuous:
            taken = batch["actions"]
            q1, _ = critic.q1(tf.concat([stream, taken], axis=1), mem_q1, sequence_length)
            q2, _ = critic.q2(tf.concat([stream, taken], axis=1), mem_q2, sequence_length)
            on_policy = tf.concat([stream, policy["action"]], axis=1)
            q1_p, _ = critic.q1(on_policy, mem_q1, sequence_length)
            q2_p, _ = critic.q2(on_policy, mem_q2, sequence_length)
            q1_taken = {name: q[:, 0] for name, q in q1.items()}
            q2_taken = {name: q[:, 0] for name, q in q2.items()}
            min_policy_q = {name: tf.minimum(q1_p[name][:, 0], q2_p[name][:, 0]) for name in q1_p}
            log_prob = policy["log_prob"]
            entropy_bonus = alpha * log_prob
            q1_p_mean = tf.add_n([q[:, 0] for q in q1_p.values()]) / float(len(q1_p))
            policy_loss = masked_mean(alpha * log_prob - q1_p_mean)
            entropy_loss = -masked_mean(self.log_ent_coef * tf.stop_gradient(log_prob + self.target_entropy))
        else:
            taken_one_hot = tf.concat(
                [tf.one_hot(batch["actions"][:, k], size) for k, size in enumerate(self.act_size)], axis=1
            )
            q1, _ = critic.q1(stream, mem_q1, sequence_length)
            q2, _ = critic.q2(stream, mem_q2, sequence_length)
            probs = policy["probs"]
            per_action_entropy = probs * policy["log_probs"]  # p log p, (n, sum(branches))

            def branch_mean(x: tf.Tensor) -> tf.Tensor:
                return tf.reduce_mean(self._branch_sums(x), axis=1)

            q1_taken = {name: branch_mean(taken_one_hot * q) for name, q in q1.items()}
            q2_taken = {name: branch_mean(taken_one_hot * q) for name, q in q2.items()}
            min_policy_q = {
                name: tf.minimum(branch_mean(probs * q1[name]), branch_mean(probs * q2[name])) for name in q1
            }
            branch_neg_entropy = self._branch_sums(per_action_entropy)  # (n, n_branches)
            entropy_bonus = tf.reduce_mean(alpha * branch_neg_entropy, axis=1)
            q1_mean = tf.add_n(list(q1.values())) / float(len(q1))
            policy_loss = masked_mean(
                tf.reduce_mean(alpha * branch_neg_entropy - self._branch_sums(probs * q1_mean), axis=1)
            )
            targets = tf.constant(self.target_entropies, dtype=tf.float32)
            entropy_loss = -masked_mean(
                tf.reduce_mean(self.log_ent_coef * tf.stop_gradient(branch_neg_entropy + targets), axis=1)
            )

        q1_losses, q2_losses, value_losses = [], [], []
        for k, name in enumerate(self.stream_names):
            backup = tf.stop_gradient(
                batch[f"{name}_rewards"]
                + (1.0 - self.use_dones_in_backup[k] * done) * self.gammas[k] * target_values[name]
            )
            q1_losses.append(0.5 * masked_mean(tf.square(backup - q1_taken[name])))
            q2_losses.append(0.5 * masked_mean(tf.square(backup - q2_taken[name])))
            value_backup = tf.stop_gradient(min_policy_q[name] - entropy_bonus)
            value_losses.append(0.5 * masked_mean(tf.square(values[name] - value_backup)))
        q1_loss = tf.add_n(q1_losses) / float(len(q1_losses))
        q2_loss = tf.add_n(q2_losses) / float(len(q2_losses))
        value_loss = tf.add_n(value_losses) / float(len(value_losses))
        return {
            "q1_loss": q1_loss,
            "q2_loss": q2_loss,
            "value_loss": value_loss,
            "total_value_loss": q1_loss + q2_loss + value_loss,
            "policy_loss": policy_loss,
            "entropy_loss": entropy_loss,
            "entropy": tf.reduce_mean(policy["entropy"]),
            "entropy_coef": tf.reduce_mean(alpha),
        }

    # ------------------------------------------------------------------ export

    def export_weights(self) -> NetworkWeights:
        """The policy part as :class:`NetworkWeights`, what the inference engine runs: the policy's
        observation encoders (convolutions that only flatten, the normalized vector as it is), the
        dense stack over their concatenation, the policy LSTM (its state alone is the exported
        memory: the policy quarter of ``[value | Q1 | Q2 | policy]``, ``memory_size / 4`` values)
        and the head.
        Discrete: the masked log-probabilities the engine samples from. Continuous: the squashed
        Gaussian, ``tanh(mu + exp(clip(log_std)) * epsilon)``. The critic is not exported.
        """
        recurrent = self.use_recurrent
        stream = StreamWeights(
            visual=[encoder.export_weights() for encoder in self.policy_visual],
            vector=[] if self.vec_obs_size > 0 else None,
            dense=self.policy_encoder.export_weights(),
        )
        lstm = self.lstm_policy.export_weights() if recurrent else None
        continuous = self.is_continuous
        branches = [] if continuous else [branch.export_weights() for branch in self.policy_branches]
        return NetworkWeights(
            vector_observation_size=self.vec_obs_size,
            visual_observation_shapes=list(self.vis_obs_shapes),
            action_sizes=list(self.act_size),
            is_continuous=continuous,
            use_recurrent=recurrent,
            memory_size=self.part_memory if recurrent else 0,
            version_number=int(self.version_number.numpy()),
            normalizer=None if self.normalizer is None else self.normalizer.export_weights(),
            streams=[stream],
            lstm=None if continuous else lstm,
            lstm_policy=lstm if continuous else None,
            policy_branches=branches,
            mu=self.mu.export_weights() if continuous else None,
            log_std=self.log_std.export_weights() if continuous else None,
            log_std_bounds=(LOG_STD_MIN, LOG_STD_MAX),
            gaussian_epsilon=EPSILON,
            tanh_squash=continuous,
        )
