"""The PPO network with its schedules and losses: :class:`PPOModel`.

The actor-critic network itself (streams, LSTMs, heads) is the one of
:class:`~mlagents.trainers.models.LearningModel`; PPO adds the decaying learning rate, clip range and
entropy coefficient and the clipped-surrogate objective.

Losses (``M[x]`` = mean over real steps, ``masks == 1``; t = ``global_step``, T = ``max_step``)::

    lr(t)   = (lr0 - 1e-10) (1 - min(t, T)/T) + 1e-10
    eps(t)  = (eps0 - 0.1)  (1 - min(t, T)/T) + 0.1
    beta(t) = (beta0 - 1e-5)(1 - min(t, T)/T) + 1e-5
    r       = exp(log pi(a|s) - log pi_old(a|s))
    L_pi    = -M[min(r A, clip(r, 1 - eps, 1 + eps) A)]
    L_V     = mean_k M[max((R_k - v_k)^2, (R_k - v_old_k - clip(v_k - v_old_k, -eps, eps))^2)]
    loss    = L_pi + 0.5 L_V - beta M[entropy]
"""

from __future__ import annotations

import tensorflow as tf

from mlagents.trainers.models import EncoderType, LearningModel, Tensors

__all__ = ["PPOModel"]


class PPOModel(LearningModel):
    """The PPO actor-critic of one brain (see the module docstring).

    :param brain: the brain's BrainParameters.
    :param lr: initial learning rate.
    :param h_size: units of every hidden dense layer.
    :param epsilon: initial clip range of the ratio (and of the value change).
    :param beta: initial entropy-bonus coefficient.
    :param max_step: decay horizon of lr, epsilon and beta (the trainer's ``max_steps``).
    :param normalize: running normalization of vector observations.
    :param use_recurrent: LSTM after the encoders (``memory_size`` must then be > 0 and divisible by 4).
    :param num_layers: hidden dense layers per encoder (values < 1 mean 1).
    :param m_size: memory size.
    :param seed: seed of the initial weights.
    :param stream_names: reward-signal names, one value head each, in configuration order.
    :param vis_encode_type: the visual encoder.
    """

    def __init__(
        self,
        brain,
        lr: float = 1e-4,
        h_size: int = 128,
        epsilon: float = 0.2,
        beta: float = 1e-3,
        max_step: float = 5e6,
        normalize: bool = False,
        use_recurrent: bool = False,
        num_layers: int = 2,
        m_size: int | None = None,
        seed: int = 0,
        stream_names: list[str] | None = None,
        vis_encode_type: EncoderType = EncoderType.SIMPLE,
    ) -> None:
        super().__init__(m_size, normalize, use_recurrent, brain, seed, stream_names, name="ppo_model")
        self.lr = float(lr)
        self.epsilon = float(epsilon)
        self.beta = float(beta)
        self.max_step = float(max_step)
        self.h_size = int(h_size)
        self.num_layers = max(1, int(num_layers))
        self.vis_encode_type = EncoderType(vis_encode_type)
        if self.is_continuous:
            self.create_cc_actor_critic(self.h_size, self.num_layers, self.vis_encode_type)
        else:
            self.create_dc_actor_critic(self.h_size, self.num_layers, self.vis_encode_type)

    # ------------------------------------------------------------------ schedules

    def learning_rate(self) -> tf.Tensor:
        """lr(global_step)."""
        return self.polynomial_decay(self.lr, 1e-10, self.global_step, self.max_step)

    def learning_rate_value(self, step: int) -> float:
        """lr(step) as a Python float, without a TensorFlow op (see :meth:`polynomial_decay_value`)."""
        return self.polynomial_decay_value(self.lr, 1e-10, step, self.max_step)

    def clip_epsilon(self) -> tf.Tensor:
        """epsilon(global_step)."""
        return self.polynomial_decay(self.epsilon, 0.1, self.global_step, self.max_step)

    def entropy_beta(self) -> tf.Tensor:
        """beta(global_step)."""
        return self.polynomial_decay(self.beta, 1e-5, self.global_step, self.max_step)

    # ------------------------------------------------------------------ losses

    def losses(self, batch: Tensors, sequence_length: int) -> dict[str, tf.Tensor]:
        """PPO losses on one mini-batch (see the module docstring).

        :param batch: observation tensors plus ``masks`` (n,), ``advantages`` (n,), per stream k
            ``{k}_returns`` and ``{k}_value_estimates`` (n,), ``action_probs`` (the stored logits or
            per-dimension log-densities) and the taken action: ``actions`` (n, n_branches) int32 for
            discrete, ``actions_pre`` (n, d) for continuous control.
        :param sequence_length: steps per sequence (a Python int).
        :returns: ``loss`` (scalar to minimize), ``policy_loss``, ``value_loss``, ``entropy``.
        """
        out = self.forward(batch, sequence_length)
        masks = batch["masks"]
        n_real = tf.reduce_sum(masks)

        def masked_mean(x: tf.Tensor) -> tf.Tensor:
            return tf.math.divide_no_nan(tf.reduce_sum(x * masks), n_real)

        if self.is_continuous:
            log_prob = tf.reduce_sum(self.continuous_log_probs(batch["actions_pre"], out["mu"]), axis=1)
            old_log_prob = tf.reduce_sum(batch["action_probs"], axis=1)
            entropy = self.continuous_entropy(out["mu"])
        else:
            log_prob = self.discrete_action_log_prob(out["logits"], batch["action_masks"], batch["actions"])
            old_log_prob = self.discrete_action_log_prob(
                batch["action_probs"], batch["action_masks"], batch["actions"]
            )
            entropy = self.discrete_entropy(out["logits"])

        epsilon = self.clip_epsilon()
        value_losses = []
        for name, value in out["values"].items():
            old_value = batch[f"{name}_value_estimates"]
            returns = batch[f"{name}_returns"]
            clipped = old_value + tf.clip_by_value(value - old_value, -epsilon, epsilon)
            value_losses.append(
                masked_mean(tf.maximum(tf.square(returns - value), tf.square(returns - clipped)))
            )
        value_loss = tf.add_n(value_losses) / float(len(value_losses))

        advantages = batch["advantages"]
        ratio = tf.exp(log_prob - old_log_prob)
        surrogate = tf.minimum(
            ratio * advantages, tf.clip_by_value(ratio, 1.0 - epsilon, 1.0 + epsilon) * advantages
        )
        policy_loss = -masked_mean(surrogate)
        mean_entropy = masked_mean(entropy)
        loss = policy_loss + 0.5 * value_loss - self.entropy_beta() * mean_entropy
        return {"loss": loss, "policy_loss": policy_loss, "value_loss": value_loss, "entropy": mean_entropy}
