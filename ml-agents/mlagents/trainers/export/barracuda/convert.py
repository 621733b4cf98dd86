"""A network's weights as the Barracuda layer graph that Unity ML-Agents 0.9 runs (``.nn`` files).

The original froze its TF1 graph and converted the graph node by node. Here the same layer graph is
built directly from the network's weights (:class:`~mlagents.trainers.export.network.NetworkWeights`):
the layers, names and constants the 0.9 converter produced for the inference part of the policy
graph (the value heads are not exported), so Unity's ``BarracudaModelParamLoader`` accepts the file:

* inputs ``vector_observation`` ``[-1,1,1,n]``, ``visual_observation_{i}`` ``[-1,H,W,C]``,
  ``action_masks`` (discrete), ``epsilon`` (continuous), ``prev_action`` (discrete recurrent);
* constants (one ``Load`` layer first): ``version_number`` = 2, ``memory_size``,
  ``is_continuous_control``, ``action_output_shape``, the normalizer's ``running_mean``,
  ``running_variance``, ``normalization_steps``, ``log_sigma_squared`` and literal operands;
* outputs ``action`` (discrete: the masked log-probabilities Unity samples from; continuous: the
  sample ``mu + std * epsilon`` squashed, ``clip(sample, -3, 3) / 3`` with the state-independent
  ``std = sqrt(exp(log_sigma_squared))`` of PPO, ``tanh(sample)`` with the state-dependent
  ``std = exp(clip(log_std, min, max))`` of SAC) and ``action_probs`` (discrete: the logits;
  continuous: the log-density of the action per dimension);
* recurrent: the LSTM unrolled into dense/activation layers, with memories
  ``recurrent_in_c -> recurrent_out_c`` and ``recurrent_in_h -> recurrent_out_h`` (their order, by
  name, is the ``[c | h]`` layout of ``BrainInfo.memories``). Continuous control has a policy LSTM and,
  when the value stream is exported, a value LSTM; their memories are ``recurrent_in_policy_{c,h}``
  and ``recurrent_in_value_{c,h}`` so that, sorted by name, they again give the
  ``[policy c | policy h | value c | value h]`` layout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from mlagents.trainers.export import network
from mlagents.trainers.export.barracuda.nn_format import Activation, Layer, LayerType, Model, Tensor
from mlagents.trainers.export.network import MASK_EPSILON, NetworkWeights

__all__ = ["convert_model"]

T = TypeVar("T")


def _required(value: T | None, what: str) -> T:
    """``value``, which the network's layout says is there (see :class:`NetworkWeights`).

    :raises ValueError: it is missing (the weights do not describe a network of that layout).
    """
    if value is None:
        raise ValueError(f"the network weights have no {what}")
    return value


def _rank4(value: float | np.ndarray) -> np.ndarray:
    array = np.asarray(value, dtype=np.float32)
    return array.reshape((1,) * (4 - array.ndim) + array.shape)


class _GraphBuilder:
    """Collects layers, constants, inputs and memories; names are made unique on the way."""

    def __init__(self) -> None:
        self.layers: list[Layer] = []
        self.constants: dict[str, np.ndarray] = {}
        self.input_shapes: dict[str, list[int]] = {}
        self.memories: list[tuple[list[int], str, str]] = []
        self._taken: set = set()

    def unique(self, base: str) -> str:
        name, i = base, 0
        while name in self._taken:
            i += 1
            name = f"{base}_{i}"
        self._taken.add(name)
        return name

    def input(self, name: str, shape: Sequence[int]) -> str:
        self.input_shapes[name] = list(shape)
        self._taken.add(name)
        return name

    def const(self, name: str, value: float | np.ndarray) -> str:
        name = self.unique(name)
        self.constants[name] = _rank4(value)
        return name

    def layer(self, name: str, layer_type: int, inputs: Sequence[str], **fields) -> str:
        name = self.unique(name)
        self.layers.append(Layer(name=name, type=int(layer_type), inputs=list(inputs), **fields))
        return name

    def activation(self, name: str, x: str, activation: Activation) -> str:
        return self.layer(name, LayerType.Activation, [x], activation=int(activation))

    def binary(self, name: str, layer_type: LayerType, a: str, b: str) -> str:
        return self.layer(name, layer_type, [a, b])

    def binary_const(
        self, name: str, layer_type: LayerType, x: str, value: float, const_first: bool = False
    ) -> str:
        """``x (op) value`` with the constant named after the layer (``<layer>/y``, or ``<layer>/x``
        when it is the first operand)."""
        name = self.unique(name)
        const = self.const(f"{name}/{'x' if const_first else 'y'}", value)
        inputs = [const, x] if const_first else [x, const]
        self.layers.append(Layer(name=name, type=int(layer_type), inputs=inputs))
        return name

    def dense(self, scope: str, x: str, kernel: np.ndarray, bias: np.ndarray | None) -> str:
        kernel = np.asarray(kernel, dtype=np.float32)
        name = self.unique(f"{scope}/BiasAdd" if bias is not None else f"{scope}/MatMul")
        bias_name = f"{scope}/bias" if bias is not None else f"{name}/patch:0"
        bias = np.zeros(kernel.shape[1], dtype=np.float32) if bias is None else bias
        tensors = [
            Tensor(f"{scope}/kernel", kernel.reshape(kernel.shape[0], 1, 1, kernel.shape[1])),
            Tensor(bias_name, _rank4(bias)),
        ]
        self.layers.append(Layer(name=name, type=int(LayerType.Dense), inputs=[x], tensors=tensors))
        return name

    def conv(self, scope: str, x: str, conv: network.ConvWeights) -> str:
        name = self.unique(f"{scope}/BiasAdd")
        tensors = [
            Tensor(f"{scope}/kernel", conv.kernel),
            Tensor(f"{scope}/bias", _rank4(conv.bias)),
        ]
        pads = [0, 0, 0, 0] if conv.padding == "VALID" else [-1]
        self.layers.append(
            Layer(
                name=name,
                type=int(LayerType.Conv2D),
                inputs=[x],
                tensors=tensors,
                pads=pads,
                strides=[conv.stride, conv.stride],
            )
        )
        return name

    def channel_slice(self, name: str, x: str, start: int, end: int) -> str:
        return self.layer(
            name,
            LayerType.StridedSlice,
            [x],
            pads=[0, 0, 0, start],
            pool_size=[0, 0, 0, end],
            strides=[1, 1, 1, 1],
        )

    def concat(self, name: str, inputs: Sequence[str]) -> str:
        if len(inputs) == 1:
            return inputs[0]
        return self.layer(name, LayerType.Concat, inputs, axis=3)

    def build(self) -> Model:
        layers = list(self.layers)
        if self.constants:
            first = next(iter(self.constants))
            load = Layer(
                name=first,
                type=int(LayerType.Load),
                tensors=[Tensor(name, value) for name, value in self.constants.items()],
                strides=[],
                pool_size=[],
            )
            layers.insert(0, load)
        produced = {layer.name for layer in self.layers}
        memory_inputs = {memory[1] for memory in self.memories}
        inputs: dict[str, list[int]] = {}
        consumed = set()
        for layer in self.layers:
            for name in layer.inputs:
                consumed.add(name)
                if name in produced or name in memory_inputs or name in self.constants or name in inputs:
                    continue
                inputs[name] = self.input_shapes[name]
        outputs = [
            layer.name
            for layer in self.layers
            if layer.name not in consumed
            or (layer.type == LayerType.Activation and layer.activation == Activation.Linear)
        ]
        return Model(inputs=inputs, outputs=outputs, memories=list(self.memories), layers=layers)


def _vector_encoder(g: _GraphBuilder, layers: list[network.DenseWeights], x: str, scope: str) -> str:
    for j, dense in enumerate(layers):
        y = g.dense(f"{scope}/hidden_{j}", x, dense.kernel, dense.bias)
        x = g.activation(f"{scope}/hidden_{j}/Mul", y, Activation.Swish)
    return x


def _visual_encoder(g: _GraphBuilder, encoder: network.VisualEncoderWeights, x: str, scope: str) -> str:
    if encoder.encoder_type == "resnet":
        for n, stack in enumerate(encoder.res_stacks):
            x = g.conv(f"{scope}/stack_{n}/conv2d", x, stack.first)
            x = g.layer(
                f"{scope}/stack_{n}/max_pooling2d/MaxPool",
                LayerType.MaxPool2D,
                [x],
                pads=[-1],
                strides=[2, 2],
                pool_size=[3, 3],
            )
            for m, (conv_a, conv_b) in enumerate(stack.blocks):
                block = f"{scope}/stack_{n}/res_{m}"
                y = g.activation(f"{block}/Relu", x, Activation.Relu)
                y = g.conv(f"{block}/conv2d", y, conv_a)
                y = g.activation(f"{block}/Relu_1", y, Activation.Relu)
                y = g.conv(f"{block}/conv2d_1", y, conv_b)
                x = g.binary(f"{block}/add", LayerType.Add, x, y)
        x = g.activation(f"{scope}/Relu", x, Activation.Relu)
    else:
        for n, conv in enumerate(encoder.convs):
            y = g.conv(f"{scope}/conv_{n + 1}", x, conv)
            x = g.activation(f"{scope}/conv_{n + 1}/Elu", y, Activation.Elu)
    x = g.layer(f"{scope}/flatten/Reshape", LayerType.Flatten, [x])
    return _vector_encoder(g, encoder.dense, x, f"{scope}/flat_encoding/{scope}")


def _normalized_vector(g: _GraphBuilder, model: NetworkWeights) -> str | None:
    if model.vector_observation_size == 0:
        return None
    x = g.input("vector_observation", [-1, 1, 1, model.vector_observation_size])
    normalizer = model.normalizer
    if normalizer is None:
        return x
    mean = g.const("running_mean", normalizer.running_mean)
    variance = g.const("running_variance", normalizer.running_variance)
    steps = g.const("normalization_steps", normalizer.normalization_steps)
    centered = g.binary("sub", LayerType.Sub, x, mean)
    steps_plus_one = g.binary_const("add", LayerType.Add, steps, 1.0)
    scaled_variance = g.binary("truediv", LayerType.Div, variance, steps_plus_one)
    std = g.activation("Sqrt", scaled_variance, Activation.Sqrt)
    normalized = g.binary("truediv", LayerType.Div, centered, std)
    upper = g.binary_const("normalized_state/Minimum", LayerType.Min, normalized, 5.0)
    return g.binary_const("normalized_state", LayerType.Max, upper, -5.0)


def _stream(g: _GraphBuilder, model: NetworkWeights, stream: int, vector: str | None) -> str:
    parts = []
    weights = model.streams[stream]
    for i, encoder in enumerate(weights.visual):
        name = f"visual_observation_{i}"
        h, w, c = model.visual_observation_shapes[i]
        g.input(name, [-1, h, w, c])
        parts.append(_visual_encoder(g, encoder, name, f"main_graph_{stream}_encoder{i}"))
    vector_encoder = weights.vector
    if vector_encoder is not None:
        vector_input = _required(vector, "vector observation for the vector encoder")
        parts.append(_vector_encoder(g, vector_encoder, vector_input, f"main_graph_{stream}"))
    joined = g.concat(f"main_graph_{stream}/concat", parts)
    return _vector_encoder(g, weights.dense, joined, f"main_graph_{stream}/encoder")


def _lstm(g: _GraphBuilder, cell: network.LSTMWeights, x: str, scope: str, memory_suffix: str) -> str:
    """Unroll one LSTM step into layers; registers its two memories; returns the new h."""
    units = cell.units
    in_c, in_h = f"recurrent_in{memory_suffix}_c", f"recurrent_in{memory_suffix}_h"
    out_c, out_h = f"recurrent_out{memory_suffix}_c", f"recurrent_out{memory_suffix}_h"
    g.memories.append(([1, 1, 1, units], in_c, out_c))
    g.memories.append(([1, 1, 1, units], in_h, out_h))
    kernel = cell.kernel
    bias = cell.bias
    joined = g.layer(f"{scope}/concat", LayerType.Concat, [x, in_h], axis=3)
    gates = {}
    for k, gate in enumerate("ijfo"):
        gate_bias = bias[k * units : (k + 1) * units] + (cell.forget_bias if gate == "f" else 0.0)
        gate_kernel = kernel[:, k * units : (k + 1) * units]
        pre = g.dense(f"{scope}/{gate}", joined, gate_kernel, gate_bias)
        act = Activation.Tanh if gate == "j" else Activation.Sigmoid
        gates[gate] = g.activation(f"{scope}/{gate}/{act.name}", pre, act)
    kept = g.binary(f"{scope}/mul", LayerType.Mul, in_c, gates["f"])
    written = g.binary(f"{scope}/mul_1", LayerType.Mul, gates["i"], gates["j"])
    new_c = g.binary(f"{scope}/add", LayerType.Add, kept, written)
    squashed = g.activation(f"{scope}/Tanh", new_c, Activation.Tanh)
    new_h = g.binary(f"{scope}/mul_2", LayerType.Mul, gates["o"], squashed)
    g.activation(out_c, new_c, Activation.Linear)
    g.activation(out_h, new_h, Activation.Linear)
    return new_h


def _discrete_head(g: _GraphBuilder, model: NetworkWeights, hidden: str) -> None:
    branch_logits = []
    for k, branch_layer in enumerate(model.policy_branches):
        scope = "dense" if k == 0 else f"dense_{k}"
        branch_logits.append(g.dense(scope, hidden, branch_layer.kernel, None))
    logits = g.concat("concat", branch_logits)
    action_probs = g.activation("action_probs", logits, Activation.Linear)
    masks = g.input("action_masks", [-1, 1, 1, sum(model.action_sizes)])
    log_probs = []
    start = 0
    for size in model.action_sizes:
        end = start + size
        branch = g.channel_slice("strided_slice", action_probs, start, end)
        mask = g.channel_slice("strided_slice", masks, start, end)
        probs = g.activation("Softmax", branch, Activation.Softmax)
        shifted = g.binary_const("add", LayerType.Add, probs, MASK_EPSILON)
        masked = g.binary("mul", LayerType.Mul, shifted, mask)
        total = g.layer("Sum", LayerType.ReduceSum, [masked, g.const("Sum/reduction_indices", 1.0)])
        normalized = g.binary("truediv", LayerType.Div, masked, total)
        shifted = g.binary_const("add", LayerType.Add, normalized, MASK_EPSILON)
        log_probs.append(g.activation("Log", shifted, Activation.Log))
        start = end
    if len(log_probs) == 1:
        joined = g.activation("concat_2", log_probs[0], Activation.Linear)
    else:
        joined = g.concat("concat_2", log_probs)
    g.activation("action", joined, Activation.Linear)


def _continuous_head(g: _GraphBuilder, model: NetworkWeights, hidden: str) -> None:
    """``action`` (the squashed sample for the input ``epsilon``) and ``action_probs`` (its
    log-density per dimension)."""
    mu_layer = _required(model.mu, "mean layer (mu) of a continuous policy")
    mu = g.dense("dense", hidden, mu_layer.kernel, mu_layer.bias)
    log_std_layer = model.log_std
    if log_std_layer is None:
        log_sigma_sq = g.const(
            "log_sigma_squared",
            _required(model.log_sigma_squared, "log_sigma_squared or log_std of a continuous policy"),
        )
        epsilon = g.input("epsilon", [-1, 1, 1, model.action_sizes[0]])
        sigma_sq = g.activation("Exp", log_sigma_sq, Activation.Exp)
        sigma = g.activation("Sqrt", sigma_sq, Activation.Sqrt)
    else:
        epsilon = g.input("epsilon", [-1, 1, 1, model.action_sizes[0]])
        log_std = g.dense("log_std", hidden, log_std_layer.kernel, log_std_layer.bias)
        low, high = model.log_std_bounds
        log_std = g.binary_const("log_std/clip_by_value/Minimum", LayerType.Min, log_std, high)
        log_std = g.binary_const("log_std/clip_by_value", LayerType.Max, log_std, low)
        sigma = g.activation("Exp", log_std, Activation.Exp)
    noise = g.binary("mul", LayerType.Mul, sigma, epsilon)
    action_pre = g.binary("add", LayerType.Add, mu, noise)
    if model.tanh_squash:
        action = g.activation("Tanh", action_pre, Activation.Tanh)
    else:
        clipped = g.binary_const("clip_by_value/Minimum", LayerType.Min, action_pre, 3.0)
        clipped = g.binary_const("clip_by_value", LayerType.Max, clipped, -3.0)
        action = g.binary_const("truediv", LayerType.Div, clipped, 3.0)
    g.activation("action", action, Activation.Linear)
    diff = g.binary("sub", LayerType.Sub, action_pre, mu)
    if log_std_layer is None:
        # -0.5 (a_pre - mu)^2 / sigma^2 - 0.5 log(2 pi) - 0.5 log_sigma_squared
        square = g.binary("Square", LayerType.Mul, diff, diff)
        scaled_square = g.binary_const("mul", LayerType.Mul, square, -0.5, const_first=True)
        density = g.binary("truediv", LayerType.Div, scaled_square, sigma_sq)
        density = g.binary_const("sub", LayerType.Sub, density, 0.5 * math.log(2.0 * math.pi))
        half_log_sigma = g.binary_const("mul", LayerType.Mul, log_sigma_sq, 0.5, const_first=True)
        density = g.binary("sub", LayerType.Sub, density, half_log_sigma)
    else:
        # -0.5 ((a_pre - mu) / (std + eps))^2 - log_std - 0.5 log(2 pi)
        padded = g.binary_const("add", LayerType.Add, sigma, model.gaussian_epsilon)
        z = g.binary("truediv", LayerType.Div, diff, padded)
        square = g.binary("Square", LayerType.Mul, z, z)
        density = g.binary_const("mul", LayerType.Mul, square, -0.5, const_first=True)
        density = g.binary("sub", LayerType.Sub, density, log_std)
        density = g.binary_const("sub", LayerType.Sub, density, 0.5 * math.log(2.0 * math.pi))
    if model.tanh_squash:
        # the change of variables: - log(1 - tanh(a_pre)^2 + eps)
        square = g.binary("Square", LayerType.Mul, action, action)
        remaining = g.binary_const("sub", LayerType.Sub, square, 1.0, const_first=True)
        remaining = g.binary_const("add", LayerType.Add, remaining, model.gaussian_epsilon)
        density = g.binary("sub", LayerType.Sub, density, g.activation("Log", remaining, Activation.Log))
    g.activation("action_probs", density, Activation.Linear)


def convert_model(model: NetworkWeights) -> Model:
    """The Barracuda model of the inference network ``model``."""
    g = _GraphBuilder()
    for name, value in (
        ("action_output_shape", model.action_output_shape),
        ("memory_size", model.memory_size),
        ("version_number", model.version_number),
        ("is_continuous_control", int(model.is_continuous)),
    ):
        g.const(name, float(value))
    vector = _normalized_vector(g, model)
    if model.is_continuous:
        hidden = _stream(g, model, 0, vector)
        if model.use_recurrent:
            lstm_policy = _required(model.lstm_policy, "policy LSTM of a recurrent continuous policy")
            value_hidden = _stream(g, model, 1, vector) if model.lstm_value is not None else None
            hidden = _lstm(g, lstm_policy, hidden, "lstm_policy", "_policy")
            if model.lstm_value is not None and value_hidden is not None:
                _lstm(g, model.lstm_value, value_hidden, "lstm_value", "_value")
        _continuous_head(g, model, hidden)
    else:
        hidden = _stream(g, model, 0, vector)
        if model.use_recurrent:
            prev_action = g.input("prev_action", [-1, 1, 1, len(model.action_sizes)])
            parts = [hidden]
            for k, size in enumerate(model.action_sizes):
                column = g.layer(
                    "strided_slice",
                    LayerType.StridedSlice,
                    [prev_action],
                    pads=[0, 0, 0, k],
                    pool_size=[0, 0, 0, k],
                    strides=[1, 1, 1, 0],
                )
                parts.append(
                    g.layer("one_hot", LayerType.OneHot, [column], pool_size=[size], alpha=1.0, beta=0.0)
                )
            hidden = g.layer("concat_1", LayerType.Concat, parts, axis=3)
            hidden = _lstm(
                g, _required(model.lstm, "LSTM of a recurrent discrete policy"), hidden, "lstm", ""
            )
        _discrete_head(g, model, hidden)
    return g.build()
