"""Observation encoders of the policy network: :class:`VectorEncoder` (swish dense stack) and
:class:`VisualEncoder` (``simple``, ``nature_cnn`` or ``resnet`` convolutions, then a dense stack).
"""

from __future__ import annotations

from enum import Enum

import tensorflow as tf

from mlagents.trainers.exception import UnityPolicyException
from mlagents.trainers.export.network import DenseWeights, ResidualStack, VisualEncoderWeights
from mlagents.trainers.layers import Conv2D, Dense, Initializer

__all__ = ["EncoderType", "VectorEncoder", "VisualEncoder"]


class EncoderType(Enum):
    """The visual encoder (``vis_encode_type`` in the trainer configuration)."""

    SIMPLE = "simple"
    NATURE_CNN = "nature_cnn"
    RESNET = "resnet"


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

    def export_weights(self) -> list[DenseWeights]:
        return [layer.export_weights() for layer in self.layers]


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

    def export_weights(self) -> VisualEncoderWeights:
        return VisualEncoderWeights(
            encoder_type=self.encoder_type.value,
            convs=[conv.export_weights() for conv in self.convs],
            res_stacks=[
                ResidualStack(
                    first.export_weights(), [(a.export_weights(), b.export_weights()) for a, b in blocks]
                )
                for first, blocks in self.res_stacks
            ],
            dense=self.dense.export_weights(),
        )
