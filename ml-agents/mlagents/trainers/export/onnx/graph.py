"""A network's weights as an ONNX graph (built with the ``onnx`` package's helper functions).

The interface (the batch dimension is the symbolic ``batch``; see docs/ONNX-Export.md):

========================= ======================== ============================================
input                     shape, type              meaning
========================= ======================== ============================================
``vector_observation``    (batch, n) float32       the stacked vector observation, raw (the
                                                   normalizer is inside the graph)
``visual_observation_i``  (batch, H, W, C) float32 camera i, NHWC, values in [0, 1] (C = 1 for
                                                   a black-and-white camera)
``action_masks``          (batch, sum) float32     discrete: 1 allowed / 0 forbidden, all branches
``prev_action``           (batch, branches) int64  discrete recurrent: the previous actions
``recurrent_in``          (batch, m) float32       recurrent: the memory (zeros at episode start)
========================= ======================== ============================================

========================= ======================== ============================================
output                    shape, type              meaning
========================= ======================== ============================================
``action``                (batch, d) float32       continuous: the deterministic action, the
                                                   mean squashed: ``clip(mean, -3, 3) / 3``
                                                   (PPO) or ``tanh(mean)`` (SAC); discrete: the
                                                   most probable allowed action of each branch
``action_log_probs``      (batch, sum) float32     discrete: the masked log-probabilities of
                                                   every action of every branch (sample from them)
``action_mean``           (batch, d) float32       continuous: the Gaussian's mean, unsquashed
``log_sigma_squared``     (d,) float32             continuous, state-independent variance (PPO):
                                                   the Gaussian's log-variance
``action_log_std``        (batch, d) float32       continuous, state-dependent variance (SAC): the
                                                   Gaussian's log standard deviation, clipped
``value_estimate``        (batch, 1) float32       when the value heads are exported (PPO): mean
                                                   of the value heads (one per reward signal)
``recurrent_out``         (batch, m) float32       recurrent: the next memory
========================= ======================== ============================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mlagents.trainers.export import network
from mlagents.trainers.export.network import MASK_EPSILON, NetworkWeights

__all__ = ["ONNX_IR_VERSION", "ONNX_OPSET", "build_onnx_model"]

#: Operator set of the written graphs (onnxruntime 1.14 and later, Barracuda/Sentis importers).
ONNX_OPSET = 17
#: IR version of the written files (read by onnxruntime 1.14 and later).
ONNX_IR_VERSION = 8

_BATCH = "batch"


def _same_pads(size: int, kernel: int, stride: int) -> tuple[int, int, int]:
    """TensorFlow's SAME padding of one axis: (before, after, output size)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2, out


class _Graph:
    """Nodes, constants, inputs and outputs with unique names; needs the ``onnx`` module."""

    def __init__(self, onnx: Any) -> None:
        self.onnx = onnx
        self.helper = onnx.helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        self._count = 0

    def name(self, base: str) -> str:
        self._count += 1
        return f"{base}_{self._count}"

    def const(self, base: str, value: Any, dtype: Any = np.float32) -> str:
        name = self.name(base)
        array = np.asarray(value, dtype=dtype)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, inputs: Sequence[str], output: str | None = None, **attributes: Any) -> str:
        output = output or self.name(op_type)
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def input(self, name: str, shape: Sequence[int | str], elem_type: int | None = None) -> str:
        elem = self.onnx.TensorProto.FLOAT if elem_type is None else elem_type
        self.inputs.append(self.helper.make_tensor_value_info(name, elem, list(shape)))
        return name

    def output(self, name: str, value: str, shape: Sequence[int | str]) -> None:
        self.op("Identity", [value], name)
        self.outputs.append(
            self.helper.make_tensor_value_info(name, self.onnx.TensorProto.FLOAT, list(shape))
        )

    def dense(self, x: str, layer: network.DenseWeights) -> str:
        y = self.op("MatMul", [x, self.const("kernel", layer.kernel)])
        return y if layer.bias is None else self.op("Add", [y, self.const("bias", layer.bias)])

    def swish(self, x: str) -> str:
        return self.op("Mul", [x, self.op("Sigmoid", [x])])

    def columns(self, x: str, start: int, end: int) -> str:
        starts, ends, axes = (
            self.const(n, [v], np.int64) for n, v in (("start", start), ("end", end), ("axis", 1))
        )
        return self.op("Slice", [x, starts, ends, axes])


def _dense_stack(g: _Graph, x: str, layers: list[network.DenseWeights]) -> str:
    for layer in layers:
        x = g.swish(g.dense(x, layer))
    return x


def _conv(g: _Graph, x: str, conv: network.ConvWeights, size: tuple[int, int]) -> tuple[str, tuple[int, int]]:
    """NCHW convolution with TensorFlow's padding; returns the output and its (H, W)."""
    kh, kw = conv.kernel.shape[:2]
    if conv.padding == "SAME":
        top, bottom, oh = _same_pads(size[0], kh, conv.stride)
        left, right, ow = _same_pads(size[1], kw, conv.stride)
    else:
        top = bottom = left = right = 0
        oh, ow = (size[0] - kh) // conv.stride + 1, (size[1] - kw) // conv.stride + 1
    kernel = np.transpose(conv.kernel, (3, 2, 0, 1))  # (kh, kw, cin, cout) -> (cout, cin, kh, kw)
    y = g.op(
        "Conv",
        [x, g.const("conv_kernel", kernel), g.const("conv_bias", conv.bias)],
        kernel_shape=[kh, kw],
        strides=[conv.stride, conv.stride],
        pads=[top, left, bottom, right],
    )
    return y, (oh, ow)


def _visual_encoder(
    g: _Graph, x: str, encoder: network.VisualEncoderWeights, shape: tuple[int, int, int]
) -> str:
    size = (shape[0], shape[1])
    x = g.op("Transpose", [x], perm=[0, 3, 1, 2])  # NHWC -> NCHW
    if encoder.encoder_type == "resnet":
        for stack in encoder.res_stacks:
            x, size = _conv(g, x, stack.first, size)
            top, bottom, oh = _same_pads(size[0], 3, 2)
            left, right, ow = _same_pads(size[1], 3, 2)
            x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[top, left, bottom, right])
            size = (oh, ow)
            for conv_a, conv_b in stack.blocks:
                y, _ = _conv(g, g.op("Relu", [x]), conv_a, size)
                y, _ = _conv(g, g.op("Relu", [y]), conv_b, size)
                x = g.op("Add", [x, y])
        x = g.op("Relu", [x])
    else:
        for conv in encoder.convs:
            x, size = _conv(g, x, conv, size)
            x = g.op("Elu", [x], alpha=1.0)
    # Flatten in TensorFlow's NHWC order, which the first dense layer's kernel expects.
    x = g.op("Flatten", [g.op("Transpose", [x], perm=[0, 2, 3, 1])], axis=1)
    return _dense_stack(g, x, encoder.dense)


def _stream(g: _Graph, model: NetworkWeights, stream: int, vector: str | None) -> str:
    weights = model.streams[stream]
    parts = [
        _visual_encoder(g, f"visual_observation_{i}", encoder, model.visual_observation_shapes[i])
        for i, encoder in enumerate(weights.visual)
    ]
    if weights.vector is not None:
        if vector is None:
            raise ValueError("the network weights have a vector encoder but no vector observation")
        parts.append(_dense_stack(g, vector, weights.vector))
    joined = parts[0] if len(parts) == 1 else g.op("Concat", parts, axis=1)
    return _dense_stack(g, joined, weights.dense)


def _normalized_vector(g: _Graph, model: NetworkWeights) -> str | None:
    if model.vector_observation_size == 0:
        return None
    x = g.input("vector_observation", [_BATCH, model.vector_observation_size])
    normalizer = model.normalizer
    if normalizer is None:
        return x
    steps = np.float32(normalizer.normalization_steps) + np.float32(1.0)
    std = np.sqrt(np.asarray(normalizer.running_variance, np.float32) / steps)
    centered = g.op("Sub", [x, g.const("running_mean", normalizer.running_mean)])
    scaled = g.op("Div", [centered, g.const("running_std", std)])
    return g.op("Clip", [scaled, g.const("min", -5.0), g.const("max", 5.0)])


def _lstm(g: _Graph, cell: network.LSTMWeights, x: str, memory: str) -> tuple[str, str]:
    """One LSTM step on the ``[c | h]`` memory; returns (h, the new ``[c | h]``)."""
    units = cell.units
    c = g.columns(memory, 0, units)
    h = g.columns(memory, units, 2 * units)
    kernel = np.asarray(cell.kernel, np.float32)
    in_size = kernel.shape[0] - units  # the kernel's rows: x, then h
    gates = g.op("MatMul", [x, g.const("lstm_kernel_x", kernel[:in_size])])
    gates = g.op("Add", [gates, g.const("lstm_bias", cell.bias)])
    gates = g.op("Add", [gates, g.op("MatMul", [h, g.const("lstm_kernel_h", kernel[in_size:])])])
    i, j, f, o = (g.columns(gates, k * units, (k + 1) * units) for k in range(4))
    forget = g.op("Sigmoid", [g.op("Add", [f, g.const("forget_bias", cell.forget_bias)])])
    kept = g.op("Mul", [c, forget])
    written = g.op("Mul", [g.op("Sigmoid", [i]), g.op("Tanh", [j])])
    new_c = g.op("Add", [kept, written])
    new_h = g.op("Mul", [g.op("Tanh", [new_c]), g.op("Sigmoid", [o])])
    return new_h, g.op("Concat", [new_c, new_h], axis=1)


def _required(value: Any, what: str) -> Any:
    if value is None:
        raise ValueError(f"the network weights have no {what}")
    return value


def _value_estimate(g: _Graph, model: NetworkWeights, hidden: str) -> None:
    if not model.value_heads:
        return
    heads = [g.dense(hidden, head) for head in model.value_heads]
    total = heads[0] if len(heads) == 1 else g.op("Sum", heads)
    g.output("value_estimate", g.op("Div", [total, g.const("heads", float(len(heads)))]), [_BATCH, 1])


def _discrete(g: _Graph, model: NetworkWeights, vector: str | None) -> None:
    hidden = _stream(g, model, 0, vector)
    branches = len(model.action_sizes)
    if model.use_recurrent:
        prev = g.input("prev_action", [_BATCH, branches], g.onnx.TensorProto.INT64)
        memory = g.input("recurrent_in", [_BATCH, model.memory_size])
        parts = [hidden]
        for k, size in enumerate(model.action_sizes):
            column = g.op("Gather", [prev, g.const("branch", k, np.int64)], axis=1)
            parts.append(
                g.op(
                    "OneHot",
                    [column, g.const("depth", size, np.int64), g.const("off_on", [0.0, 1.0])],
                    axis=-1,
                )
            )
        joined = g.op("Concat", parts, axis=1)
        hidden, new_memory = _lstm(
            g, _required(model.lstm, "LSTM of a recurrent discrete policy"), joined, memory
        )
        g.output("recurrent_out", new_memory, [_BATCH, model.memory_size])
    masks = g.input("action_masks", [_BATCH, sum(model.action_sizes)])
    log_probs, actions = [], []
    start = 0
    for layer, size in zip(model.policy_branches, model.action_sizes):
        logits = g.dense(hidden, layer)
        probs = g.op("Add", [g.op("Softmax", [logits], axis=1), g.const("epsilon", MASK_EPSILON)])
        masked = g.op("Mul", [probs, g.columns(masks, start, start + size)])
        total = g.op("ReduceSum", [masked, g.const("axes", [1], np.int64)], keepdims=1)
        normalized = g.op("Div", [masked, total])
        branch = g.op("Log", [g.op("Add", [normalized, g.const("epsilon", MASK_EPSILON)])])
        log_probs.append(branch)
        actions.append(
            g.op("Cast", [g.op("ArgMax", [branch], axis=1, keepdims=1)], to=g.onnx.TensorProto.FLOAT)
        )
        start += size
    g.output("action", actions[0] if branches == 1 else g.op("Concat", actions, axis=1), [_BATCH, branches])
    joined_log_probs = log_probs[0] if branches == 1 else g.op("Concat", log_probs, axis=1)
    g.output("action_log_probs", joined_log_probs, [_BATCH, sum(model.action_sizes)])
    _value_estimate(g, model, hidden)


def _continuous(g: _Graph, model: NetworkWeights, vector: str | None) -> None:
    hidden = _stream(g, model, 0, vector)
    value_hidden = _stream(g, model, 1, vector) if model.value_heads else None
    if model.use_recurrent:
        memory = g.input("recurrent_in", [_BATCH, model.memory_size])
        policy_cell = _required(model.lstm_policy, "policy LSTM of a recurrent continuous policy")
        value_cell = model.lstm_value
        # [policy c | policy h], then the value cell's [c | h] when it is exported.
        policy_size = 2 * policy_cell.units
        hidden, new_memory = _lstm(g, policy_cell, hidden, g.columns(memory, 0, policy_size))
        if value_cell is not None:
            if value_hidden is None:
                value_hidden = _stream(g, model, 1, vector)
            value_hidden, value_memory = _lstm(
                g, value_cell, value_hidden, g.columns(memory, policy_size, model.memory_size)
            )
            new_memory = g.op("Concat", [new_memory, value_memory], axis=1)
        g.output("recurrent_out", new_memory, [_BATCH, model.memory_size])
    size = model.action_sizes[0]
    mu = g.dense(hidden, _required(model.mu, "mean layer (mu) of a continuous policy"))
    if model.tanh_squash:
        action = g.op("Tanh", [mu])
    else:
        clipped = g.op("Clip", [mu, g.const("min", -3.0), g.const("max", 3.0)])
        action = g.op("Div", [clipped, g.const("scale", 3.0)])
    g.output("action", action, [_BATCH, size])
    g.output("action_mean", mu, [_BATCH, size])
    if model.log_std is None:
        log_sigma = _required(model.log_sigma_squared, "log_sigma_squared or log_std of a continuous policy")
        g.output("log_sigma_squared", g.const("log_sigma_squared", log_sigma), [size])
    else:
        low, high = model.log_std_bounds
        log_std = g.op("Clip", [g.dense(hidden, model.log_std), g.const("min", low), g.const("max", high)])
        g.output("action_log_std", log_std, [_BATCH, size])
    if value_hidden is not None:
        _value_estimate(g, model, value_hidden)


def build_onnx_model(model: NetworkWeights, onnx: Any, name: str = "policy") -> Any:
    """The ``onnx.ModelProto`` of the network ``model`` (``onnx`` is the imported module).

    Metadata: ``version_number``, ``memory_size``, ``is_continuous_control``, ``action_output_shape``
    and ``action_sizes`` (comma-separated), as in the ``.nn`` file's constants.
    """
    g = _Graph(onnx)
    vector = _normalized_vector(g, model)
    for i, (h, w, c) in enumerate(model.visual_observation_shapes):
        g.input(f"visual_observation_{i}", [_BATCH, h, w, c])
    if model.is_continuous:
        _continuous(g, model, vector)
    else:
        _discrete(g, model, vector)
    graph = onnx.helper.make_graph(g.nodes, name, g.inputs, g.outputs, g.initializers)
    proto = onnx.helper.make_model(
        graph,
        producer_name="mlagents",
        opset_imports=[onnx.helper.make_opsetid("", ONNX_OPSET)],
        ir_version=ONNX_IR_VERSION,
    )
    metadata = {
        "version_number": str(model.version_number),
        "memory_size": str(model.memory_size),
        "is_continuous_control": str(int(model.is_continuous)),
        "action_output_shape": str(model.action_output_shape),
        "action_sizes": ",".join(str(size) for size in model.action_sizes),
    }
    onnx.helper.set_model_props(proto, metadata)
    return proto
