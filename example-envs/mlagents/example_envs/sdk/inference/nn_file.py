"""Reading a Barracuda model file (``.nn``, format version 16): the layers, inputs, outputs,
memories and constants of an exported ML-Agents network, as numpy data.

The layout (all little-endian; ``str`` = int32 byte count + ASCII bytes, ``shape`` = int32 rank +
one int32 per dimension, -1 for an open dimension)::

    int64 version
    int32 count, then count x (str name, shape)              the inputs
    int32 count, then count x str                            the outputs
    int32 count, then count x (shape, str input, str output) the memories
    int32 count, then count x layer
    the float32 data of every tensor, in layer order then tensor order

    layer: str name, int32 type, int32 activation, int32 0, int32 0, shape pads, shape strides,
           shape pool_size, int32 axis, float32 alpha, float32 beta, int32 0, int32 count + count x str
           (the inputs), int32 count + count x tensor
    tensor: str name, shape (rank 4), int64 offset, int32 item size (4), int32 length

A tensor's ``offset`` and ``length`` count float32 elements from the start of the data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

__all__ = [
    "LOAD_LAYER",
    "SUPPORTED_VERSION",
    "ModelFormatError",
    "NNLayer",
    "NNMemory",
    "NNModel",
    "NNTensor",
    "parse_nn",
    "read_nn",
]

#: The Barracuda format version this reader understands (the one ML-Agents 0.9 writes).
SUPPORTED_VERSION = 16

#: Layer type of the layer that holds the model's constants.
LOAD_LAYER = 255


class ModelFormatError(ValueError):
    """The file is not a Barracuda model this runtime can read (one-line message)."""


@dataclass(frozen=True)
class NNTensor:
    """A constant: float32 ``data`` of the rank-4 ``shape``."""

    name: str
    shape: tuple[int, ...]
    offset: int
    data: np.ndarray


@dataclass(frozen=True)
class NNLayer:
    """One layer record; the meaning of the fields depends on ``type`` (see the engine)."""

    name: str
    type: int
    activation: int
    pads: list[int]
    strides: list[int]
    pool_size: list[int]
    axis: int
    alpha: float
    beta: float
    inputs: list[str]
    tensors: list[NNTensor]


@dataclass(frozen=True)
class NNMemory:
    """A recurrent state: fed as ``input_name``, its next value computed as ``output_name``."""

    shape: list[int]
    input_name: str
    output_name: str


@dataclass(frozen=True)
class NNModel:
    """A whole model file."""

    version: int
    inputs: dict[str, list[int]]
    outputs: list[str]
    memories: list[NNMemory]
    layers: list[NNLayer]

    def constants(self) -> dict[str, np.ndarray]:
        """The tensors of the ``Load`` layers (the graph's constants), by name."""
        return {t.name: t.data for layer in self.layers if layer.type == LOAD_LAYER for t in layer.tensors}

    def tensors(self) -> dict[str, np.ndarray]:
        """Every tensor of every layer, by name."""
        return {t.name: t.data for layer in self.layers for t in layer.tensors}

    def constant(self, name: str) -> float | None:
        """The scalar constant ``name`` (e.g. ``memory_size``), or None when the model has none."""
        value = self.constants().get(name)
        return None if value is None or value.size == 0 else float(value.reshape(-1)[0])

    def sorted_memories(self) -> list[NNMemory]:
        """The memories in the order their values are laid out in an agent's memory vector
        (sorted by input name, as Unity's inference engine does)."""
        return sorted(self.memories, key=lambda memory: memory.input_name)


class _Cursor:
    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.pos = 0
        self.source = source

    def take(self, fmt: str) -> int | float:
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.data):
            raise ModelFormatError(f"{self.source} ends too early (truncated or not a Barracuda model file).")
        (value,) = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += size
        return value

    def integer(self, fmt: str = "i") -> int:
        return int(self.take(fmt))

    def count(self, what: str, limit: int = 1 << 20) -> int:
        value = self.integer()
        if not 0 <= value <= limit:
            raise ModelFormatError(
                f"{self.source}: impossible {what} count {value} (not a Barracuda model file?)."
            )
        return value

    def string(self) -> str:
        length = self.count("string length")
        raw = self.data[self.pos : self.pos + length]
        if len(raw) != length:
            raise ModelFormatError(f"{self.source} ends too early (truncated or not a Barracuda model file).")
        self.pos += length
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError:
            raise ModelFormatError(
                f"{self.source}: a name is not ASCII (not a Barracuda model file?)."
            ) from None

    def strings(self) -> list[str]:
        return [self.string() for _ in range(self.count("name"))]

    def shape(self) -> list[int]:
        return [self.integer() for _ in range(self.count("dimension", 16))]


def parse_nn(data: bytes, source: str = "the model") -> NNModel:
    """Parse the bytes of a ``.nn`` file.

    :param source: how messages name the file.
    :raises ModelFormatError: another format version, a truncated file or bytes that are no model.
    """
    r = _Cursor(data, source)
    version = r.integer("q")
    if version != SUPPORTED_VERSION:
        raise ModelFormatError(
            f"{source} is Barracuda format version {version}; this runtime reads version "
            f"{SUPPORTED_VERSION} (export the model again with this mlagents-learn)."
        )
    inputs = {}
    for _ in range(r.count("input")):
        name = r.string()
        inputs[name] = r.shape()
    outputs = r.strings()
    memories = []
    for _ in range(r.count("memory")):
        shape = r.shape()
        memories.append(NNMemory(shape, r.string(), r.string()))
    pending: list[tuple[NNLayer, list[tuple[str, tuple[int, ...], int, int]]]] = []
    for _ in range(r.count("layer")):
        name = r.string()
        layer_type, activation = r.integer(), r.integer()
        r.integer(), r.integer()  # reserved
        pads, strides, pool_size = r.shape(), r.shape(), r.shape()
        axis = r.integer()
        alpha, beta = float(r.take("f")), float(r.take("f"))
        r.integer()  # reserved
        layer = NNLayer(
            name, layer_type, activation, pads, strides, pool_size, axis, alpha, beta, r.strings(), []
        )
        records: list[tuple[str, tuple[int, ...], int, int]] = []
        for _ in range(r.count("tensor")):
            tensor_name = r.string()
            tensor_shape = tuple(r.shape())
            offset = r.integer("q")
            itemsize = r.integer()
            length = r.integer()
            if itemsize != 4 or length != int(np.prod(tensor_shape)) or offset < 0:
                raise ModelFormatError(
                    f"{source}: tensor {tensor_name} has item size {itemsize}, shape {tensor_shape} and length "
                    f"{length}; float32 tensors of a matching length were expected."
                )
            records.append((tensor_name, tensor_shape, offset, length))
        pending.append((layer, records))
    start = r.pos
    total = (len(data) - start) // 4
    for layer, records in pending:
        for tensor_name, tensor_shape, offset, length in records:
            if offset + length > total:
                raise ModelFormatError(
                    f"{source}: the data of tensor {tensor_name} lies past the end of the file."
                )
            values = (
                np.frombuffer(data, "<f4", length, start + 4 * offset)
                .reshape(tensor_shape)
                .astype(np.float32)
            )
            layer.tensors.append(NNTensor(tensor_name, tensor_shape, offset, values))
    layers = [layer for layer, _ in pending]
    return NNModel(version=version, inputs=inputs, outputs=outputs, memories=memories, layers=layers)


def read_nn(path: str) -> NNModel:
    """Read the ``.nn`` file at ``path``.

    :raises ModelFormatError: see :func:`parse_nn`.
    :raises OSError: the file cannot be read.
    """
    with open(path, "rb") as stream:
        data = stream.read()
    return parse_nn(data, path)
