"""The network of the curiosity signal: :class:`CuriosityModel` (Pathak et al. 2017).

Both observations of a transition ``s -> s'`` are encoded by the same encoders ``phi`` (one simple
convolutional encoder with one swish layer of ``encoding_size`` units per camera, two swish layers of
``encoding_size`` units for the raw vector observation; ``phi(s)`` is their concatenation, of width
``D``). Two heads learn from the encodings (``M[x]`` = mean over real steps, ``masks == 1``)::

    inverse model   h = swish(W [phi(s), phi(s')])      (256 units)
                    continuous: a_hat = W h             L_inv = M[sum_d (a_hat - a)^2]
                    discrete:   p_hat = softmax per branch
                                L_inv = M[-sum log(p_hat + 1e-10) * onehot(a)]
    forward model   h = swish(W [phi(s), a])            (256 units; a one-hot for discrete actions)
                    phi_hat' = W h                      (D units)
                    e = 0.5 * sum (phi_hat' - phi(s'))^2    L_fwd = M[e]
    loss            10 * (0.2 L_fwd + 0.8 L_inv)

``e`` of a transition is the intrinsic reward: the surprise of the forward model. The encoders learn
from both losses; the inverse model makes them keep what the agent's actions influence. The action
``a`` is the one the agent took: for continuous control the clipped action in [-1, 1].
"""

from __future__ import annotations

import tensorflow as tf

from mlagents.trainers.components.reward_signals.signal_layers import SignalModel, SignalShapes
from mlagents.trainers.encoders import VectorEncoder
from mlagents.trainers.layers import Dense, Initializer

__all__ = ["CuriosityModel", "FORWARD_WEIGHT", "INVERSE_WEIGHT", "LOSS_SCALE", "HIDDEN_UNITS"]

Tensors = dict[str, tf.Tensor]

#: Width of the hidden layer of the inverse and forward models.
HIDDEN_UNITS = 256
#: loss = LOSS_SCALE * (FORWARD_WEIGHT * forward loss + INVERSE_WEIGHT * inverse loss)
LOSS_SCALE = 10.0
FORWARD_WEIGHT = 0.2
INVERSE_WEIGHT = 0.8


class CuriosityModel(SignalModel):
    """Encoders, inverse and forward models of the curiosity signal (see the module docstring).

    :param vec_obs_size: length of the (stacked) vector observation, 0 for none.
    :param vis_obs_shapes: (height, width, channels) of every camera.
    :param act_size: the action size (continuous: one entry, the dimension; discrete: branch sizes).
    :param is_continuous: continuous or discrete actions.
    :param encoding_size: width of each encoder's output.
    :param init: initial values of the weights.

    Inputs (dict of tensors, n transitions): ``vector_observation``/``next_vector_observation``
    (n, vec), ``visual_observation_{i}``/``next_visual_observation_{i}`` (n, H, W, C), ``actions``
    (continuous: float32 (n, d); discrete: int32 (n, n_branches)), and for the losses ``masks`` (n,).
    """

    def __init__(self, shapes: SignalShapes, encoding_size: int, init: Initializer) -> None:
        super().__init__("curiosity", "curiosity", shapes, encoding_size, init)
        self.vector_encoder = (
            VectorEncoder(self.vec_obs_size, self.encoding_size, 2, init, name="curiosity_vector_obs_encoder")
            if self.vec_obs_size > 0
            else None
        )
        self.encoded_size = self.encoding_size * (
            len(self.visual_encoders) + (1 if self.vector_encoder else 0)
        )
        self.inverse_hidden = Dense(
            2 * self.encoded_size, HIDDEN_UNITS, init, ("glorot",), activation="swish", name="inverse_hidden"
        )
        if self.is_continuous:
            self.inverse_heads = [
                Dense(HIDDEN_UNITS, self.act_size[0], init, ("glorot",), name="inverse_action")
            ]
        else:
            self.inverse_heads = [
                Dense(HIDDEN_UNITS, size, init, ("glorot",), name=f"inverse_branch_{k}")
                for k, size in enumerate(self.act_size)
            ]
        self.forward_hidden = Dense(
            self.encoded_size + self.action_width,
            HIDDEN_UNITS,
            init,
            ("glorot",),
            activation="swish",
            name="forward_hidden",
        )
        self.forward_out = Dense(HIDDEN_UNITS, self.encoded_size, init, ("glorot",), name="forward_state")

    def input_signature(self, with_masks: bool) -> dict[str, tf.TensorSpec]:
        """TensorSpecs of the inputs (batch dimension left open)."""
        spec: dict[str, tf.TensorSpec] = {}
        if self.vec_obs_size > 0:
            for key in ("vector_observation", "next_vector_observation"):
                spec[key] = tf.TensorSpec([None, self.vec_obs_size], tf.float32)
        for i, (h, w, c) in enumerate(self.vis_obs_shapes):
            for key in (f"visual_observation_{i}", f"next_visual_observation_{i}"):
                spec[key] = tf.TensorSpec([None, h, w, c], tf.float32)
        spec["actions"] = self.action_spec()
        if with_masks:
            spec["masks"] = tf.TensorSpec([None], tf.float32)
        return spec

    def encode(self, inputs: Tensors, prefix: str = "") -> tf.Tensor:
        """phi of the observations ``{prefix}visual_observation_{i}`` and ``{prefix}vector_observation``."""
        parts = [enc(inputs[f"{prefix}visual_observation_{i}"]) for i, enc in enumerate(self.visual_encoders)]
        if self.vector_encoder is not None:
            parts.append(self.vector_encoder(inputs[f"{prefix}vector_observation"]))
        return parts[0] if len(parts) == 1 else tf.concat(parts, axis=1)

    def outputs(self, inputs: Tensors) -> Tensors:
        """Per transition: ``intrinsic_reward`` (n,) = e, ``inverse_error`` (n,), and the encodings."""
        phi = self.encode(inputs)
        phi_next = self.encode(inputs, "next_")
        actions = self.selected_actions(inputs["actions"])
        hidden = self.inverse_hidden(tf.concat([phi, phi_next], axis=1))
        if self.is_continuous:
            predicted = self.inverse_heads[0](hidden)
            inverse_error = tf.reduce_sum(tf.square(predicted - actions), axis=1)
        else:
            predicted = tf.concat([tf.nn.softmax(head(hidden)) for head in self.inverse_heads], axis=1)
            inverse_error = tf.reduce_sum(-tf.math.log(predicted + 1e-10) * actions, axis=1)
        forward_hidden = self.forward_hidden(tf.concat([phi, actions], axis=1))
        predicted_next = self.forward_out(forward_hidden)
        surprise = 0.5 * tf.reduce_sum(tf.square(predicted_next - phi_next), axis=1)
        return {
            "intrinsic_reward": surprise,
            "inverse_error": inverse_error,
            "phi": phi,
            "phi_next": phi_next,
        }

    def losses(self, inputs: Tensors) -> Tensors:
        """``forward_loss``, ``inverse_loss`` (means over real steps) and ``loss`` (what Adam minimizes)."""
        out = self.outputs(inputs)
        masks = inputs["masks"]
        n_real = tf.reduce_sum(masks)
        forward_loss = tf.math.divide_no_nan(tf.reduce_sum(out["intrinsic_reward"] * masks), n_real)
        inverse_loss = tf.math.divide_no_nan(tf.reduce_sum(out["inverse_error"] * masks), n_real)
        loss = LOSS_SCALE * (FORWARD_WEIGHT * forward_loss + INVERSE_WEIGHT * inverse_loss)
        return {"forward_loss": forward_loss, "inverse_loss": inverse_loss, "loss": loss}
