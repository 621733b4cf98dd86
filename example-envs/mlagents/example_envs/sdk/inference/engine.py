"""Executing a Barracuda model in numpy: the layer types an exported ML-Agents network uses.

Tensors are NHWC and rank 4, as in the file: a vector of ``n`` values per agent is ``(batch, 1, 1,
n)``. :class:`Engine` turns the layers into a list of numpy steps once, so that running the model
costs one Python call per layer and no lookups of layer fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from mlagents.envs.blas_threads import use_single_blas_thread

from .nn_file import LOAD_LAYER, ModelFormatError, NNLayer, NNModel

__all__ = ["Engine", "UnsupportedLayerError"]

Array = np.ndarray
Step = Callable[[list[Array]], Array]

# Layer type ids of Barracuda's format (those an ML-Agents network uses).
DENSE, CONV2D, MAXPOOL2D, ACTIVATION = 1, 20, 25, 50
ADD, SUB, MUL, DIV, MIN, MAX = 100, 101, 102, 103, 110, 111
REDUCE_SUM, FLATTEN, CONCAT, STRIDED_SLICE, ONE_HOT = 128, 200, 210, 211, 67


class UnsupportedLayerError(ModelFormatError):
    """The model uses a layer type or activation this runtime does not execute."""


def _sigmoid(x: Array) -> Array:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def _softmax(x: Array) -> Array:
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _elu(x: Array) -> Array:
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


ACTIVATIONS: dict[int, Callable[[Array], Array]] = {
    0: lambda x: x,
    1: lambda x: np.maximum(x, 0),
    2: _softmax,
    3: np.tanh,
    4: _sigmoid,
    5: _elu,
    9: lambda x: x * _sigmoid(x),
    111: np.sqrt,
    113: np.exp,
    114: np.log,
}

BINARY: dict[int, Callable[[Array, Array], Array]] = {
    ADD: np.add,
    SUB: np.subtract,
    MUL: np.multiply,
    DIV: np.divide,
    MIN: np.minimum,
    MAX: np.maximum,
}


def _same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """TensorFlow's SAME padding (before, after) of one spatial axis."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def _patches(x: Array, kh: int, kw: int, stride: tuple[int, int], pads: list[int], fill: float) -> Array:
    """(N, OH, OW, kh, kw, C) windows of an NHWC tensor; ``pads == [-1]`` means SAME padding."""
    if pads == [-1]:
        top, bottom = _same_padding(x.shape[1], kh, stride[0])
        left, right = _same_padding(x.shape[2], kw, stride[1])
        x = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    view = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # N, H', W', C, kh, kw
    return np.moveaxis(view[:, :: stride[0], :: stride[1]], 3, 5)


def _dense(layer: NNLayer) -> Step:
    kernel_tensor, bias_tensor = layer.tensors[0].data, layer.tensors[1].data
    kernel = kernel_tensor.reshape(kernel_tensor.shape[0], kernel_tensor.shape[3])
    bias = bias_tensor.reshape(-1)

    def dense(inputs: list[Array]) -> Array:
        x = inputs[0].reshape(inputs[0].shape[0], -1)
        return (x @ kernel + bias).reshape(x.shape[0], 1, 1, -1)

    return dense


def _conv(layer: NNLayer) -> Step:
    kernel, bias = layer.tensors[0].data, layer.tensors[1].data.reshape(-1)
    kh, kw = kernel.shape[:2]
    stride = (layer.strides[0], layer.strides[1])
    pads = list(layer.pads)
    if pads not in ([-1], [0, 0, 0, 0]):
        raise UnsupportedLayerError(f"convolution {layer.name} has padding {pads}; SAME or VALID expected.")

    def conv(inputs: list[Array]) -> Array:
        patches = _patches(inputs[0], kh, kw, stride, pads, 0.0)
        return np.einsum("nhwijc,ijcd->nhwd", patches, kernel, optimize=True) + bias

    return conv


def _maxpool(layer: NNLayer) -> Step:
    ph, pw = layer.pool_size
    stride = (layer.strides[0], layer.strides[1])
    pads = list(layer.pads)

    def maxpool(inputs: list[Array]) -> Array:
        return _patches(inputs[0], ph, pw, stride, pads, -np.inf).max(axis=(3, 4))

    return maxpool


def _strided_slice(layer: NNLayer) -> Step:
    index: list[slice] = []
    for start, end, step in zip(layer.pads, layer.pool_size, layer.strides):
        if step == 0:  # a single index that keeps its axis
            index.append(slice(start, start + 1))
        elif start == 0 and end == 0:
            index.append(slice(None))
        else:
            index.append(slice(start, end, step))
    key = tuple(index)

    def strided_slice(inputs: list[Array]) -> Array:
        return inputs[0][key]

    return strided_slice


def _one_hot(layer: NNLayer) -> Step:
    depth = layer.pool_size[0]
    on, off = np.float32(layer.alpha), np.float32(layer.beta)
    columns = np.arange(depth)[None, :]

    def one_hot(inputs: list[Array]) -> Array:
        indices = inputs[0].reshape(-1).astype(np.int64)
        return np.where(columns == indices[:, None], on, off).reshape(-1, 1, 1, depth)

    return one_hot


def _reduce_sum(layer: NNLayer) -> Step:
    # ML-Agents sums the channels of an (N, 1, 1, C) tensor; the second input is the axis constant.
    def reduce_sum(inputs: list[Array]) -> Array:
        return inputs[0].sum(axis=3, keepdims=True)

    return reduce_sum


def _step(layer: NNLayer) -> Step:
    kind = layer.type
    if kind == DENSE:
        return _dense(layer)
    if kind == CONV2D:
        return _conv(layer)
    if kind == MAXPOOL2D:
        return _maxpool(layer)
    if kind == ACTIVATION:
        function = ACTIVATIONS.get(layer.activation)
        if function is None:
            raise UnsupportedLayerError(
                f"layer {layer.name} uses activation {layer.activation}, which this runtime does not run."
            )
        return lambda inputs: function(inputs[0])
    if kind in BINARY:
        operation = BINARY[kind]
        return lambda inputs: operation(inputs[0], inputs[1])
    if kind == REDUCE_SUM:
        return _reduce_sum(layer)
    if kind == FLATTEN:
        return lambda inputs: inputs[0].reshape(inputs[0].shape[0], 1, 1, -1)
    if kind == CONCAT:
        if layer.axis not in (3, -1):
            raise UnsupportedLayerError(
                f"layer {layer.name} concatenates along axis {layer.axis}; 3 expected."
            )
        return lambda inputs: np.concatenate(inputs, axis=3)
    if kind == STRIDED_SLICE:
        return _strided_slice(layer)
    if kind == ONE_HOT:
        return _one_hot(layer)
    raise UnsupportedLayerError(f"layer {layer.name} has type {kind}, which this runtime does not run.")


class Engine:
    """A model made executable.

    :raises UnsupportedLayerError: a layer this runtime does not execute.
    :raises ModelFormatError: a layer reads a tensor that nothing produces.
    """

    def __init__(self, model: NNModel) -> None:
        # Small products: BLAS threads only wait for each other next to the environment's processes.
        use_single_blas_thread()
        self.model = model
        self.constants: dict[str, Array] = {}
        for layer in model.layers:
            if layer.type == LOAD_LAYER:
                for tensor in layer.tensors:
                    self.constants[tensor.name] = tensor.data
        known = set(self.constants) | set(model.inputs) | {m.input_name for m in model.memories}
        self.steps: list[tuple[str, list[str], Step]] = []
        for layer in model.layers:
            if layer.type == LOAD_LAYER:
                continue
            missing = [name for name in layer.inputs if name not in known]
            if missing:
                raise ModelFormatError(
                    f"layer {layer.name} reads {missing}, which no earlier layer or input produces."
                )
            self.steps.append((layer.name, list(layer.inputs), _step(layer)))
            known.add(layer.name)

    def run(self, feeds: Mapping[str, Array]) -> dict[str, Array]:
        """Execute every layer; ``feeds`` hold the inputs and memories (rank 4, float32).

        :returns: every tensor computed (by layer name) with the feeds and constants.
        :raises KeyError: an input the model reads was not fed.
        """
        values: dict[str, Array] = dict(self.constants)
        values.update(feeds)
        for name, inputs, step in self.steps:
            values[name] = step([values[i] for i in inputs])
        return values
