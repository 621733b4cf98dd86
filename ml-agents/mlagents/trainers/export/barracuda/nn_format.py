"""The Barracuda model format (version 16), read by Unity's inference engine: structures and writer.

A model is a list of layers over named tensors (NHWC, always rank 4 in the file). All constants live
in one ``Load`` layer placed first; layers refer to inputs, memories, constants and other layers by
name. File layout, all little-endian (``str`` = int32 byte length + ASCII bytes; ``shape`` = int32
rank + int32 per dimension, -1 for unknown)::

    int64 version (16)
    int32 n_inputs;   n x (str name, shape)
    int32 n_outputs;  n x str
    int32 n_memories; n x (shape, str input_name, str output_name)
    int32 n_layers;   n x layer record
    weights: the float32 data of every layer tensor, in layer order then tensor order

    layer record: str name, int32 type, int32 activation, int32 0, int32 0, shape pads,
                  shape strides, shape pool_size, int32 axis, float32 alpha, float32 beta, int32 0,
                  int32 n_inputs + str inputs, int32 n_tensors +
                  n x (str name, shape (rank 4), int64 offset, int32 itemsize 4, int32 length)

``offset`` and ``length`` count float32 elements from the start of the weights.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import BinaryIO

import numpy as np

__all__ = ["BARRACUDA_VERSION", "LayerType", "Activation", "Tensor", "Layer", "Model", "write"]

BARRACUDA_VERSION = 16


class LayerType(IntEnum):
    """Layer type ids of Barracuda 0.2.x."""

    Nop = 0
    Dense = 1
    Conv2D = 20
    DepthwiseConv2D = 21
    Conv2DTrans = 22
    Upsample2D = 23
    MaxPool2D = 25
    AvgPool2D = 26
    GlobalAvgPool2D = 28
    Border2D = 29
    Activation = 50
    ScaleBias = 51
    Normalization = 52
    LRN = 53
    RandomNormal = 64
    RandomUniform = 65
    Multinomial = 66
    OneHot = 67
    Add = 100
    Sub = 101
    Mul = 102
    Div = 103
    Pow = 104
    Min = 110
    Max = 111
    ReduceMax = 124
    ReduceMean = 125
    ReduceMin = 126
    ReduceProd = 127
    ReduceSum = 128
    Flatten = 200
    Reshape = 201
    Concat = 210
    StridedSlice = 211
    Load = 255


class Activation(IntEnum):
    """Activation ids of Barracuda 0.2.x (for ``Activation`` layers)."""

    Linear = 0
    Relu = 1
    Softmax = 2
    Tanh = 3
    Sigmoid = 4
    Elu = 5
    Relu6 = 6
    LeakyRelu = 7
    Selu = 8
    Swish = 9
    LogSoftmax = 10
    Softplus = 11
    Softsign = 12
    Abs = 100
    Neg = 101
    Ceil = 102
    Floor = 104
    Sqrt = 111
    Exp = 113
    Log = 114


@dataclass
class Tensor:
    """A named constant: ``data`` float32 with the rank-4 ``shape``."""

    name: str
    data: np.ndarray

    def __post_init__(self) -> None:
        self.data = np.asarray(self.data, dtype=np.float32)
        if self.data.ndim != 4:
            raise ValueError(f"Barracuda tensor {self.name} must have rank 4, got shape {self.data.shape}")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.data.shape)


@dataclass
class Layer:
    """One layer record (field meanings per layer type, see the module docstring)."""

    name: str
    type: int
    inputs: list[str] = field(default_factory=list)
    tensors: list[Tensor] = field(default_factory=list)
    activation: int = 0
    pads: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    strides: list[int] = field(default_factory=list)
    pool_size: list[int] = field(default_factory=list)
    axis: int = -1
    alpha: float = 1.0
    beta: float = 0.0


@dataclass
class Model:
    """A whole network: input shapes (rank 4, -1 for the batch), outputs, memories and layers.

    :ivar memories: (shape, input name, output name) per recurrent state.
    """

    inputs: dict[str, list[int]] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    memories: list[tuple[list[int], str, str]] = field(default_factory=list)
    layers: list[Layer] = field(default_factory=list)


class _Writer:
    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def int32(self, value: int) -> None:
        self.stream.write(struct.pack("<i", int(value)))

    def int64(self, value: int) -> None:
        self.stream.write(struct.pack("<q", int(value)))

    def float32(self, value: float) -> None:
        self.stream.write(struct.pack("<f", float(value)))

    def string(self, value: str) -> None:
        data = value.encode("ascii")
        self.int32(len(data))
        self.stream.write(data)

    def strings(self, values: Sequence[str]) -> None:
        self.int32(len(values))
        for value in values:
            self.string(value)

    def shape(self, values: Sequence[int]) -> None:
        self.int32(len(values))
        for value in values:
            self.int32(-1 if value is None else value)


def write(model: Model, path: str) -> None:
    """Write ``model`` to ``path`` in Barracuda format version 16.

    :raises ValueError: a layer uses its own name as input, or a name is not ASCII.
    """
    with open(path, "wb") as stream:
        out = _Writer(stream)
        out.int64(BARRACUDA_VERSION)
        out.int32(len(model.inputs))
        for name, shape in model.inputs.items():
            out.string(name)
            out.shape(shape)
        out.strings(model.outputs)
        out.int32(len(model.memories))
        for shape, input_name, output_name in model.memories:
            out.shape(shape)
            out.string(input_name)
            out.string(output_name)
        out.int32(len(model.layers))
        offset = 0
        for layer in model.layers:
            if layer.name in layer.inputs:
                raise ValueError(f"Barracuda layer {layer.name} uses itself as input")
            out.string(layer.name)
            out.int32(layer.type)
            out.int32(layer.activation)
            out.int32(0)
            out.int32(0)
            out.shape(layer.pads)
            out.shape(layer.strides)
            out.shape(layer.pool_size)
            out.int32(layer.axis)
            out.float32(layer.alpha)
            out.float32(layer.beta)
            out.int32(0)
            out.strings(layer.inputs)
            out.int32(len(layer.tensors))
            for tensor in layer.tensors:
                out.string(tensor.name)
                out.shape(tensor.shape)
                out.int64(offset)
                out.int32(4)
                out.int32(tensor.data.size)
                offset += tensor.data.size
        for layer in model.layers:
            for tensor in layer.tensors:
                stream.write(np.ascontiguousarray(tensor.data, dtype="<f4").tobytes())
