"""What an exporter reads from a network: its weights, constants and the brain's spaces as numpy data.

A model implements :class:`ExportableModel` (``export_weights()``); the writers of this package
turn the returned :class:`NetworkWeights` into a file. Nothing here knows TensorFlow, the trainers
or a file format, so every writer (``.nn`` today, ONNX next) reads the same description.

The layers mirror the policy networks of :mod:`mlagents.trainers.models` (PPO, BC) and
:mod:`mlagents.trainers.sac.models`: per observation stream the visual encoders (one per camera) and
the vector encoder (swish dense layers; either may have none, passing its input through), their
concatenation, optionally swish dense layers over it (SAC), then optionally LSTM cells, then the
policy head (discrete: one bias-free dense layer of logits per action branch; continuous: a Gaussian
with the mean ``mu`` and either the state-independent ``log_sigma_squared`` or a state-dependent,
clipped ``log_std`` dense layer, its sample squashed by ``clip(x, -3, 3) / 3`` or by ``tanh``) and the
value heads (one per reward signal; the ``.nn`` writer leaves them out, the ONNX writer outputs their
mean).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

__all__ = [
    "ConvWeights",
    "DenseWeights",
    "ExportableModel",
    "LSTMWeights",
    "MASK_EPSILON",
    "NetworkWeights",
    "NormalizerState",
    "ResidualStack",
    "StreamWeights",
    "VisualEncoderWeights",
]

#: The discrete masking layer's epsilon, per branch ``log(p / sum(p) + ε)`` with ``p = (softmax +
#: ε) * mask``, so that a masked action keeps a finite log-probability (v0.9's value). The
#: network (:func:`mlagents.trainers.layers.masked_log_probs`), the numpy fast path and both
#: writers use this one value.
MASK_EPSILON = 1.0e-7


@dataclass(frozen=True)
class DenseWeights:
    """``x @ kernel + bias``: kernel (in, out), bias (out,) or None for a bias-free layer."""

    kernel: np.ndarray
    bias: np.ndarray | None


@dataclass(frozen=True)
class ConvWeights:
    """NHWC convolution: kernel (kh, kw, cin, cout), bias (cout,), square stride,
    padding ``"VALID"`` or ``"SAME"``."""

    kernel: np.ndarray
    bias: np.ndarray
    stride: int
    padding: str


@dataclass(frozen=True)
class ResidualStack:
    """One stack of the ``resnet`` encoder: a linear convolution, a 3x3/2 SAME max pool, then per
    block ``x + conv_b(relu(conv_a(relu(x))))``."""

    first: ConvWeights
    blocks: list[tuple[ConvWeights, ConvWeights]]


@dataclass(frozen=True)
class VisualEncoderWeights:
    """The encoder of one camera.

    :ivar encoder_type: ``"simple"``, ``"nature_cnn"`` (``convs``, each followed by ELU) or
        ``"resnet"`` (``res_stacks``, then ReLU).
    :ivar dense: the swish dense layers after the flattening.
    """

    encoder_type: str
    convs: list[ConvWeights]
    res_stacks: list[ResidualStack]
    dense: list[DenseWeights]


@dataclass(frozen=True)
class LSTMWeights:
    """A ``BasicLSTMCell``: kernel (in + units, 4 units) over ``[x, h]``, bias (4 units), gate order
    ``i, j, f, o``, ``forget_bias`` added to ``f``."""

    kernel: np.ndarray
    bias: np.ndarray
    units: int
    forget_bias: float


@dataclass(frozen=True)
class NormalizerState:
    """Running statistics: ``clip((x - mean) / sqrt(variance / (steps + 1)), -5, 5)``."""

    running_mean: np.ndarray
    running_variance: np.ndarray
    normalization_steps: float


@dataclass(frozen=True)
class StreamWeights:
    """One observation stream: a visual encoder per camera and the vector encoder's dense layers
    (None without vector observations; an empty list passes the normalized vector through); their
    outputs are concatenated in that order, then go through the swish dense layers ``dense`` (none
    for PPO, whose encoders end in dense layers of their own)."""

    visual: list[VisualEncoderWeights]
    vector: list[DenseWeights] | None
    dense: list[DenseWeights] = field(default_factory=list)


@dataclass(frozen=True)
class NetworkWeights:
    """The inference network of one brain.

    :ivar vector_observation_size: vector observation length times stacks (0 for none).
    :ivar visual_observation_shapes: (height, width, channels) per camera.
    :ivar action_sizes: branch sizes (discrete) or ``[action dimension]`` (continuous).
    :ivar use_recurrent: LSTM cells follow the encoders.
    :ivar memory_size: LSTM state length (0 without recurrence).
    :ivar version_number: the API version of the model file's consumers (2 for ML-Agents 0.9).
    :ivar streams: discrete control has one stream; continuous control two (policy, value).
    :ivar lstm: discrete and recurrent: the cell fed with the stream and the one-hot previous actions.
    :ivar lstm_policy: continuous and recurrent: the cell of the policy stream.
    :ivar lstm_value: continuous and recurrent: the cell of the value stream (its state is part of
        the memory even though the value head is not exported); None when the value stream is not
        part of the exported network (the memory is then the policy cell's state alone).
    :ivar policy_branches: discrete: the logits layer of each branch.
    :ivar mu: continuous: the mean of the Gaussian policy.
    :ivar log_sigma_squared: continuous: the state-independent log-variance per action dimension
        (None when ``log_std`` is given).
    :ivar log_std: continuous: the state-dependent log standard deviation, a dense layer over the
        policy's hidden state clipped to ``log_std_bounds`` (instead of ``log_sigma_squared``); the
        density divides by ``std + gaussian_epsilon``.
    :ivar tanh_squash: continuous: the action is ``tanh(sample)`` (its density gets the change of
        variables ``- log(1 - action^2 + gaussian_epsilon)``) instead of ``clip(sample, -3, 3) / 3``.
    :ivar value_heads: one 1-unit dense layer per reward signal over the value stream's encoding
        (discrete: the shared encoding; recurrent: after the LSTM); the value estimate is their mean.
    """

    vector_observation_size: int
    visual_observation_shapes: list[tuple[int, int, int]]
    action_sizes: list[int]
    is_continuous: bool
    use_recurrent: bool
    memory_size: int
    version_number: int
    normalizer: NormalizerState | None
    streams: list[StreamWeights]
    lstm: LSTMWeights | None = None
    lstm_policy: LSTMWeights | None = None
    lstm_value: LSTMWeights | None = None
    policy_branches: list[DenseWeights] = field(default_factory=list)
    mu: DenseWeights | None = None
    log_sigma_squared: np.ndarray | None = None
    log_std: DenseWeights | None = None
    log_std_bounds: tuple[float, float] = (-20.0, 2.0)
    gaussian_epsilon: float = 0.0
    tanh_squash: bool = False
    value_heads: list[DenseWeights] = field(default_factory=list)

    @property
    def action_output_shape(self) -> int:
        """The length of the action output: the action dimension or the sum of the branch sizes."""
        return self.action_sizes[0] if self.is_continuous else sum(self.action_sizes)


class ExportableModel(Protocol):
    """A network the exporters can write."""

    def export_weights(self) -> NetworkWeights:
        """The current weights and statistics (a snapshot: later training does not change it)."""
        ...
