"""The behavioural-cloning network: :class:`BehavioralCloningModel`.

One observation stream (the encoders of :class:`~mlagents.trainers.models.LearningModel`, swish dense
layers, the ``simple`` visual encoder) and, with ``use_recurrent``, an LSTM; no value heads, no
normalization. The heads:

* discrete control: one bias-free dense layer of logits per branch (VS(0.01)); the decision samples
  from the masked probabilities (the masking layer of PPO). The loss is the cross-entropy with the
  teacher's actions, **summed** over the batch and the branches::

      L = - sum_n sum_k log(softmax(logits_k)[n, a_nk] + 1e-10)

* continuous control: a bias-free dense layer (VS(0.01)) gives ``pre_action``; the action is
  deterministic, ``clip(pre_action, -1, 1)``. The loss is the squared error with the clipped teacher
  actions, summed over the batch and the dimensions::

      L = sum_n sum_d (clip(a_nd, -1, 1) - clip(pre_action_nd, -1, 1))^2

The original also had a dropout placeholder that never acted (dropout without ``training=True``);
it is left out. Two behaviours differ from it on purpose: with ``use_recurrent`` the discrete heads
read the LSTM output (the original computed the LSTM and then ignored it), and the LSTM of a
discrete policy sees the one-hot previous actions as PPO's does, so the exported ``.nn`` file has the
inputs Unity feeds a recurrent discrete model. A recurrent network for continuous actions is not
provided (the trainers refuse it with a clear error).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.export.network import DenseWeights, NetworkWeights, StreamWeights
from mlagents.trainers.layers import Dense, LSTMCell, masked_log_probs
from mlagents.trainers.models import EncoderType, LearningModel, Tensors

__all__ = ["BehavioralCloningModel", "EXPORT_SIGMA_LOG"]

#: ``log_sigma_squared`` written into the exported continuous model: the ``.nn`` graph is the
#: Gaussian policy head of PPO, ``clip(mu + sigma * epsilon, -3, 3) / 3``; with ``mu`` = 3 ×
#: ``pre_action`` and sigma = exp(-40) (far below float32 resolution of any action) it computes
#: exactly ``clip(pre_action, -1, 1)``.
EXPORT_SIGMA_LOG = -80.0


class BehavioralCloningModel(LearningModel):
    """The BC network of one brain (see the module docstring).

    :param brain: the brain's BrainParameters.
    :param h_size: units of every hidden dense layer.
    :param lr: learning rate of Adam (constant).
    :param n_layers: hidden dense layers of the vector encoder (not clamped: 0 means none).
    :param m_size: memory size when ``use_recurrent`` (LSTM of ``m_size / 2`` units).
    :param normalize: ignored (the BC network never normalizes).
    :param use_recurrent: LSTM after the encoders (discrete control only).
    :param seed: seed of the initial weights.
    :raises UnityTrainerException: ``use_recurrent`` with continuous actions.
    """

    def __init__(
        self,
        brain,
        h_size: int = 128,
        lr: float = 1e-4,
        n_layers: int = 2,
        m_size: int = 128,
        normalize: bool = False,
        use_recurrent: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(m_size, False, use_recurrent, brain, seed, name="bc_model")
        if self.use_recurrent and self.is_continuous:
            raise UnityTrainerException(
                f"Brain {brain.brain_name}: use_recurrent is not supported by the behavioural-cloning "
                "trainers for continuous actions in this version; set use_recurrent: false."
            )
        self.lr = float(lr)
        self.h_size = int(h_size)
        self.num_layers = int(n_layers)
        (width,) = self.create_observation_streams(1, self.h_size, self.num_layers, EncoderType.SIMPLE)
        if self.use_recurrent:
            self.lstm = LSTMCell(width + sum(self.act_size), self.m_size // 2, self.init, name="lstm")
            width = self.m_size // 2
        if self.is_continuous:
            self.pre_action = Dense(
                width, self.act_size[0], self.init, ("vs", 0.01), use_bias=False, name="pre_action"
            )
        else:
            self.policy_branches = [
                Dense(width, size, self.init, ("vs", 0.01), use_bias=False, name=f"policy_branch_{k}")
                for k, size in enumerate(self.act_size)
            ]

    def learning_rate(self) -> tf.Tensor:
        """The constant learning rate."""
        return tf.constant(self.lr)

    # ------------------------------------------------------------------ forward pass

    def forward(self, inputs: Tensors, sequence_length: int = 1) -> dict[str, tf.Tensor]:
        """The network on ``inputs`` (observation tensors; see :mod:`mlagents.trainers.models`).

        :returns: continuous: ``pre_action`` and ``action`` (n, d); discrete: ``logits`` and
            ``action_probs`` (n, sum(branches), the per-branch softmax probabilities) and
            ``masked_log_probs`` (the masked, renormalized log-probabilities, the 0.9 ``action``);
            ``memory_out`` (n_sequences, m) when recurrent.
        """
        hidden = self.encode_stream(0, inputs, self.normalized_vector(inputs))
        out: dict[str, tf.Tensor] = {}
        if self.use_recurrent:
            prev_action = inputs["prev_action"]
            one_hots = [tf.one_hot(prev_action[:, k], size) for k, size in enumerate(self.act_size)]
            hidden = tf.concat([hidden] + one_hots, axis=1)
            hidden, out["memory_out"] = self.lstm(hidden, inputs["recurrent_in"], sequence_length)
        if self.is_continuous:
            pre_action = self.pre_action(hidden)
            out["pre_action"] = pre_action
            out["action"] = tf.clip_by_value(pre_action, -1.0, 1.0)
        else:
            logits = tf.concat([branch(hidden) for branch in self.policy_branches], axis=1)
            out["logits"] = logits
            out["action_probs"] = tf.concat(self.branch_probabilities(logits), axis=1)
            out["masked_log_probs"] = tf.concat(
                masked_log_probs(logits, inputs["action_masks"], self.act_size), axis=1
            )
        return out

    def branch_probabilities(self, logits: tf.Tensor) -> list[tf.Tensor]:
        """Softmax of each branch's logits (unmasked)."""
        probabilities = []
        start = 0
        for size in self.act_size:
            probabilities.append(tf.nn.softmax(logits[:, start : start + size]))
            start += size
        return probabilities

    # ------------------------------------------------------------------ loss

    def loss(self, batch: Tensors, sequence_length: int) -> tf.Tensor:
        """The cloning loss on one mini-batch (see the module docstring).

        :param batch: observation tensors plus the teacher's actions: ``teacher_action`` (n, d)
            float32 for continuous, (n, n_branches) int32 for discrete control.
        :param sequence_length: steps per sequence (a Python int).
        """
        out = self.forward(batch, sequence_length)
        teacher = batch["teacher_action"]
        if self.is_continuous:
            return tf.reduce_sum(tf.square(tf.clip_by_value(teacher, -1.0, 1.0) - out["action"]))
        total = []
        for k, (probabilities, size) in enumerate(
            zip(self.branch_probabilities(out["logits"]), self.act_size)
        ):
            one_hot = tf.one_hot(teacher[:, k], size)
            total.append(-tf.reduce_sum(tf.math.log(probabilities + 1e-10) * one_hot))
        return tf.add_n(total)

    # ------------------------------------------------------------------ export

    def export_weights(self) -> NetworkWeights:
        """The network for the ``.nn`` writer.

        Discrete: the policy network of PPO without value heads. Continuous: PPO's Gaussian head with
        ``mu`` = 3 × ``pre_action`` (no bias) and a vanishing variance (:data:`EXPORT_SIGMA_LOG`),
        which the exported graph turns into ``clip(pre_action, -1, 1)``.
        """
        if not self.is_continuous:
            return super().export_weights()
        streams = [
            StreamWeights(
                visual=[encoder.export_weights() for encoder in self.visual_encoders[0]],
                vector=None if self.vector_encoders[0] is None else self.vector_encoders[0].export_weights(),
            )
        ]
        kernel = self.pre_action.kernel.numpy()
        return NetworkWeights(
            vector_observation_size=self.vec_obs_size,
            visual_observation_shapes=list(self.vis_obs_shapes),
            action_sizes=list(self.act_size),
            is_continuous=True,
            use_recurrent=False,
            memory_size=0,
            version_number=int(self.version_number.numpy()),
            normalizer=None,
            streams=streams,
            mu=DenseWeights(kernel=3.0 * kernel, bias=np.zeros(kernel.shape[1], dtype=np.float32)),
            log_sigma_squared=np.full(self.act_size[0], EXPORT_SIGMA_LOG, dtype=np.float32),
        )
