"""The discriminator of the GAIL signal: :class:`GAILModel` (Ho & Ermon 2016; the variational
bottleneck of Peng et al. 2018 with ``use_vail``).

Input of the discriminator D for one step: the state encoding (the vector observation, normalized
with the policy's running statistics when the policy normalizes, and per camera a simple
convolutional encoder with one swish layer of ``encoding_size`` units), followed with
``use_actions`` by the action (continuous as taken, discrete one-hot per branch) and the done flag.
Then two swish layers of 128 units and a sigmoid unit; with VAIL the second layer feeds a 128-wide
Gaussian code ``z = mu(x) + sigma * xi`` (``xi`` standard normal while training, 0 when rewarding;
``sigma`` a trained vector) and the sigmoid reads ``z``. D is the probability that a step is the
expert's. With E the expert batch, P the policy batch (``mean`` over the batch)::

    L_D   = -mean(log(D(E) + eps) + log(1 - D(P) + eps))
    VAIL  KL = mean(-sum_j(1 + log(sigma_j^2 + eps) - mu_E,j^2 / 2 - mu_P,j^2 / 2 - (sigma_j^2 + eps)))
          L  = beta (KL - I_c) + L_D;   after each step beta = max(beta + alpha (KL - I_c), eps)
    GP    x~ = u E + (1 - u) P with u ~ U(0, 1) drawn per element of every input part
          L += 10 mean((sqrt(sum (dD(x~)/dx~)^2 + eps) - 1)^2)

and the reward of a policy step is ``-log(1 - D + eps)``.
"""

from __future__ import annotations

import tensorflow as tf

from mlagents.trainers.components.reward_signals.signal_layers import SignalModel, SignalShapes
from mlagents.trainers.layers import Dense, Initializer, Normalizer

__all__ = [
    "EPSILON",
    "GAILModel",
    "GRADIENT_PENALTY_WEIGHT",
    "HIDDEN_UNITS",
    "INFORMATION_CONSTRAINT",
    "VAIL_BETA_STEP",
    "Z_SIZE",
]

Tensors = dict[str, tf.Tensor]

#: Width of the discriminator's hidden layers (independent of ``encoding_size``).
HIDDEN_UNITS = 128
#: Width of the VAIL code z.
Z_SIZE = 128
#: Step size alpha of the VAIL beta update.
VAIL_BETA_STEP = 0.0005
#: The information constraint I_c of VAIL.
INFORMATION_CONSTRAINT = 0.5
#: Weight of the gradient penalty.
GRADIENT_PENALTY_WEIGHT = 10.0
#: Added inside logs and square roots.
EPSILON = 1e-7


class GAILModel(SignalModel):
    """The discriminator, its visual encoders and (VAIL) the code and its beta.

    :param vec_obs_size: length of the (stacked) vector observation, 0 for none.
    :param vis_obs_shapes: (height, width, channels) of every camera.
    :param act_size: continuous: [d]; discrete: the branch sizes.
    :param is_continuous: continuous or discrete actions.
    :param encoding_size: width of each camera's encoding.
    :param use_actions: the discriminator also sees the action and the done flag.
    :param use_vail: the variational bottleneck.
    :param init: initial values of the weights.
    :param seed: seed of the noise (VAIL code, gradient-penalty interpolation).

    A batch of steps is a dict: ``vector_observation`` (n, vec), ``visual_observation_{i}``
    (n, H, W, C), ``actions`` (continuous float32 (n, d), discrete int32 (n, n_branches)) and
    ``done`` (n,) float32.
    """

    def __init__(
        self,
        shapes: SignalShapes,
        encoding_size: int,
        use_actions: bool,
        use_vail: bool,
        init: Initializer,
        seed: int,
    ) -> None:
        super().__init__("GAIL_model", "gail", shapes, encoding_size, init)
        self.use_actions = bool(use_actions)
        self.use_vail = bool(use_vail)
        self.state_width = self.encoding_size * len(self.visual_encoders) + self.vec_obs_size
        self.input_width = self.state_width + (self.action_width + 1 if self.use_actions else 0)
        self.hidden_1 = Dense(
            self.input_width, HIDDEN_UNITS, init, ("glorot",), activation="swish", name="gail_d_hidden_1"
        )
        self.hidden_2 = Dense(
            HIDDEN_UNITS, HIDDEN_UNITS, init, ("glorot",), activation="swish", name="gail_d_hidden_2"
        )
        if self.use_vail:
            self.z_mean = Dense(HIDDEN_UNITS, Z_SIZE, init, ("vs", 0.01), name="gail_z_mean")
            self.z_sigma = tf.Variable(tf.ones([Z_SIZE]), name="gail_sigma_vail")
            self.beta = tf.Variable(1.0, trainable=False, name="gail_beta")
        self.estimate = Dense(
            Z_SIZE if self.use_vail else HIDDEN_UNITS, 1, init, ("glorot",), name="gail_d_estimate"
        )
        self.noise = tf.random.Generator.from_seed(int(seed))

    # ------------------------------------------------------------------ inputs

    def input_signature(self, prefix: str = "") -> dict[str, tf.TensorSpec]:
        """TensorSpecs of a batch of steps (keys prefixed with ``prefix``)."""
        spec: dict[str, tf.TensorSpec] = {}
        if self.vec_obs_size > 0:
            spec[f"{prefix}vector_observation"] = tf.TensorSpec([None, self.vec_obs_size], tf.float32)
        for i, (h, w, c) in enumerate(self.vis_obs_shapes):
            spec[f"{prefix}visual_observation_{i}"] = tf.TensorSpec([None, h, w, c], tf.float32)
        if self.use_actions:
            spec[f"{prefix}actions"] = self.action_spec()
            spec[f"{prefix}done"] = tf.TensorSpec([None], tf.float32)
        return spec

    def input_parts(self, batch: Tensors, normalizer: Normalizer | None, prefix: str = "") -> list[tf.Tensor]:
        """The parts of the discriminator input: the state encoding, then (``use_actions``) the
        action and the done flag, each (n, width)."""
        state = [enc(batch[f"{prefix}visual_observation_{i}"]) for i, enc in enumerate(self.visual_encoders)]
        if self.vec_obs_size > 0:
            vector = batch[f"{prefix}vector_observation"]
            state.append(normalizer(vector) if normalizer is not None else vector)
        parts = [state[0] if len(state) == 1 else tf.concat(state, axis=1)]
        if self.use_actions:
            parts.append(self.selected_actions(batch[f"{prefix}actions"]))
            parts.append(tf.reshape(batch[f"{prefix}done"], [-1, 1]))
        return parts

    # ------------------------------------------------------------------ discriminator

    def discriminate(self, x: tf.Tensor, noise: bool) -> tuple[tf.Tensor, tf.Tensor | None]:
        """D of the inputs x (n, input_width), shape (n,), and (VAIL) the code means (n, Z_SIZE).

        :param noise: sample the VAIL code (training) or use its mean (rewards).
        """
        hidden = self.hidden_2(self.hidden_1(x))
        z_mean = None
        if self.use_vail:
            z_mean = self.z_mean(hidden)
            hidden = z_mean
            if noise:
                hidden = z_mean + self.z_sigma * self.noise.normal(tf.shape(z_mean))
        return tf.sigmoid(self.estimate(hidden))[:, 0], z_mean

    def reward(self, batch: Tensors, normalizer: Normalizer | None) -> tf.Tensor:
        """``-log(1 - D + eps)`` per step, (n,), without noise."""
        estimate, _ = self.discriminate(tf.concat(self.input_parts(batch, normalizer), axis=1), noise=False)
        return -tf.math.log(1.0 - estimate + EPSILON)

    def losses(self, policy: Tensors, expert: Tensors, normalizer: Normalizer | None) -> Tensors:
        """Loss of the discriminator on a policy batch and an expert batch of the same size.

        :param expert: the expert batch, keys prefixed with ``expert_``.
        :returns: ``loss`` (what Adam minimizes), ``discriminator_loss`` L_D, ``policy_estimate``
            and ``expert_estimate`` (mean D), ``gradient_penalty`` (unweighted) and with VAIL ``kl_loss``.
        """
        policy_parts = self.input_parts(policy, normalizer)
        expert_parts = self.input_parts(expert, normalizer, "expert_")
        policy_estimate, policy_z = self.discriminate(tf.concat(policy_parts, axis=1), noise=True)
        expert_estimate, expert_z = self.discriminate(tf.concat(expert_parts, axis=1), noise=True)
        discriminator_loss = -tf.reduce_mean(
            tf.math.log(expert_estimate + EPSILON) + tf.math.log(1.0 - policy_estimate + EPSILON)
        )
        out = {
            "discriminator_loss": discriminator_loss,
            "policy_estimate": tf.reduce_mean(policy_estimate),
            "expert_estimate": tf.reduce_mean(expert_estimate),
        }
        loss = discriminator_loss
        if self.use_vail:
            assert expert_z is not None and policy_z is not None
            log_sigma_sq = tf.math.log(tf.square(self.z_sigma) + EPSILON)
            kl = tf.reduce_mean(
                -tf.reduce_sum(
                    1.0
                    + log_sigma_sq
                    - 0.5 * tf.square(expert_z)
                    - 0.5 * tf.square(policy_z)
                    - tf.exp(log_sigma_sq),
                    axis=1,
                )
            )
            out["kl_loss"] = kl
            loss = self.beta * (kl - INFORMATION_CONSTRAINT) + loss
        penalty = self.gradient_penalty(expert_parts, policy_parts)
        out["gradient_penalty"] = penalty
        out["loss"] = loss + GRADIENT_PENALTY_WEIGHT * penalty
        return out

    def gradient_penalty(self, expert_parts: list[tf.Tensor], policy_parts: list[tf.Tensor]) -> tf.Tensor:
        """``mean((sqrt(sum (dD/dx~)^2 + eps) - 1)^2)`` at inputs interpolated element-wise."""
        mixed = []
        for expert_part, policy_part in zip(expert_parts, policy_parts):
            u = self.noise.uniform(tf.shape(expert_part))
            mixed.append(u * expert_part + (1.0 - u) * policy_part)
        return self.penalty_at(tf.concat(mixed, axis=1))

    def penalty_at(self, x: tf.Tensor) -> tf.Tensor:
        """The gradient penalty at the discriminator inputs x (n, input_width)."""
        with tf.GradientTape() as tape:
            tape.watch(x)
            estimate, _ = self.discriminate(x, noise=True)
        gradient = tape.gradient(estimate, x)
        norm = tf.sqrt(tf.reduce_sum(tf.square(gradient), axis=1) + EPSILON)
        return tf.reduce_mean(tf.square(norm - 1.0))

    def update_beta(self, kl: tf.Tensor) -> None:
        """VAIL: ``beta = max(beta + alpha (KL - I_c), eps)``."""
        self.beta.assign(tf.maximum(self.beta + VAIL_BETA_STEP * (kl - INFORMATION_CONSTRAINT), EPSILON))
