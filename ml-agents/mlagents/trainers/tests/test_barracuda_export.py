"""The exported ``.nn`` file, read back with a reader and a numpy interpreter written here.

The reader and the interpreter follow the Barracuda v16 file layout and layer semantics, not the
writer's code: the file must say what Unity's Barracuda engine needs (names, shapes, constants,
memories), and executing its layers must give the policy's own outputs.
"""

import logging
import math
import struct

import numpy as np
import pytest

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.ppo.policy import PPOPolicy

# ---------------------------------------------------------------------- an independent reader


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def string(self):
        length = self.take("i")
        text = self.data[self.pos : self.pos + length].decode("ascii")
        self.pos += length
        return text

    def strings(self):
        return [self.string() for _ in range(self.take("i"))]

    def shape(self):
        return [self.take("i") for _ in range(self.take("i"))]


def read_nn(path):
    """Parse a Barracuda v16 file into plain dicts; tensors get their float32 data."""
    with open(path, "rb") as stream:
        data = stream.read()
    r = Reader(data)
    model = {"version": r.take("q")}
    model["inputs"] = {}
    for _ in range(r.take("i")):
        name = r.string()
        model["inputs"][name] = r.shape()
    model["outputs"] = r.strings()
    model["memories"] = []
    for _ in range(r.take("i")):
        shape = r.shape()
        model["memories"].append((shape, r.string(), r.string()))
    layers = []
    for _ in range(r.take("i")):
        layer = {"name": r.string(), "type": r.take("i"), "activation": r.take("i")}
        assert r.take("i") == 0 and r.take("i") == 0
        layer["pads"] = r.shape()
        layer["strides"] = r.shape()
        layer["pool_size"] = r.shape()
        layer["axis"] = r.take("i")
        layer["alpha"] = r.take("f")
        layer["beta"] = r.take("f")
        assert r.take("i") == 0
        layer["inputs"] = r.strings()
        layer["tensors"] = []
        for _ in range(r.take("i")):
            tensor = {"name": r.string(), "shape": r.shape()}
            tensor["offset"] = r.take("q")
            assert r.take("i") == 4  # itemsize
            tensor["length"] = r.take("i")
            layer["tensors"].append(tensor)
        layers.append(layer)
    weights_start = r.pos
    expected_offset = 0
    for layer in layers:
        for tensor in layer["tensors"]:
            assert len(tensor["shape"]) == 4
            assert tensor["offset"] == expected_offset
            assert tensor["length"] == int(np.prod(tensor["shape"]))
            start = weights_start + 4 * tensor["offset"]
            tensor["data"] = np.frombuffer(data, "<f4", tensor["length"], start).reshape(tensor["shape"])
            expected_offset += tensor["length"]
    assert len(data) == weights_start + 4 * expected_offset, "trailing or missing bytes"
    model["layers"] = layers
    return model


def constants(model):
    return {
        t["name"]: t["data"] for layer in model["layers"] if layer["type"] == 255 for t in layer["tensors"]
    }


def tensors_by_name(model):
    return {t["name"]: t["data"] for layer in model["layers"] for t in layer["tensors"]}


# ---------------------------------------------------------------------- an independent interpreter


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = {
    0: lambda x: x,
    1: lambda x: np.maximum(x, 0),
    2: lambda x: (
        np.exp(x - x.max(axis=-1, keepdims=True))
        / np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True)
    ),
    3: np.tanh,
    4: sigmoid,
    5: lambda x: np.where(x > 0, x, np.exp(np.minimum(x, 0)) - 1),
    9: lambda x: x * sigmoid(x),
    111: np.sqrt,
    113: np.exp,
    114: np.log,
}
BINARY = {100: np.add, 101: np.subtract, 102: np.multiply, 103: np.divide, 110: np.minimum, 111: np.maximum}


def same_padding(size, kernel, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def windows(x, kh, kw, sh, sw, pads, fill):
    """(N, OH, OW, kh, kw, C) patches of an NHWC tensor, TF padding rules."""
    if pads == [-1]:
        top, bottom = same_padding(x.shape[1], kh, sh)
        left, right = same_padding(x.shape[2], kw, sw)
        x = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    else:
        assert pads == [0, 0, 0, 0]
    view = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # N, H', W', C, kh, kw
    view = view[:, ::sh, ::sw]
    return np.moveaxis(view, 3, 5)


def run(model, feeds):
    """Execute the layers; feeds use the 4-D layout ([N, C] inputs become [N, 1, 1, C])."""
    env = dict(feeds)
    for layer in model["layers"]:
        kind, inputs = layer["type"], [env[name] for name in layer["inputs"]]
        tensors = [t["data"] for t in layer["tensors"]]
        if kind == 255:
            for tensor in layer["tensors"]:
                env[tensor["name"]] = tensor["data"]
            continue
        if kind == 1:
            x = inputs[0].reshape(inputs[0].shape[0], -1)
            kernel = tensors[0].reshape(tensors[0].shape[0], tensors[0].shape[3])
            out = x @ kernel + tensors[1].reshape(-1)
            out = out.reshape(out.shape[0], 1, 1, -1)
        elif kind == 20:
            kernel = tensors[0]
            kh, kw = kernel.shape[:2]
            patches = windows(inputs[0], kh, kw, *layer["strides"], layer["pads"], 0.0)
            out = np.einsum("nhwijc,ijcd->nhwd", patches, kernel) + tensors[1].reshape(-1)
        elif kind == 25:
            ph, pw = layer["pool_size"]
            out = windows(inputs[0], ph, pw, *layer["strides"], layer["pads"], -np.inf).max(axis=(3, 4))
        elif kind == 50:
            out = ACTIVATIONS[layer["activation"]](inputs[0])
        elif kind in BINARY:
            out = BINARY[kind](inputs[0], inputs[1])
        elif kind == 128:
            assert float(np.ravel(inputs[1])[0]) == 1.0  # reduce the channels of a [N, C] tensor
            out = inputs[0].sum(axis=3, keepdims=True)
        elif kind == 200:
            out = inputs[0].reshape(inputs[0].shape[0], 1, 1, -1)
        elif kind == 210:
            assert layer["axis"] == 3
            out = np.concatenate(inputs, axis=3)
        elif kind == 211:
            x = inputs[0]
            index = []
            for _axis, (start, end, step) in enumerate(
                zip(layer["pads"], layer["pool_size"], layer["strides"])
            ):
                if step == 0:
                    index.append(slice(start, start + 1))
                elif start == 0 and end == 0:
                    index.append(slice(None))
                else:
                    index.append(slice(start, end, step))
            out = x[tuple(index)]
        elif kind == 67:
            depth = layer["pool_size"][0]
            indices = inputs[0].reshape(-1).astype(int)
            out = np.where(np.arange(depth)[None, :] == indices[:, None], layer["alpha"], layer["beta"])
            out = out.reshape(-1, 1, 1, depth)
        else:
            raise AssertionError(f"layer type {kind} not expected in an ML-Agents model")
        env[layer["name"]] = out.astype(np.float64)
    return env


# ---------------------------------------------------------------------- policies to export


@pytest.fixture
def make_policy(tmp_path, ppo_params):
    """``make_policy(brain, **overrides)``: a PPO policy for ``brain`` (2 layers of 12 units unless
    overridden) whose weights and normalizer statistics are all non-trivial, with its model folder
    ``tmp_path/models/run-0/<brain name>``."""

    def make(brain, **overrides):
        settings = dict(
            hidden_units=12,
            max_steps=1000,
            num_epoch=1,
            num_layers=2,
            time_horizon=8,
            sequence_length=4,
            summary_freq=100,
            model_path=str(tmp_path / "models" / "run-0" / brain.brain_name),
            summary_path=str(tmp_path / "summaries"),
        )
        settings.update(overrides)
        return randomized_policy(brain, ppo_params(**settings))

    return make


def randomized_policy(brain, params):
    policy = PPOPolicy(0, brain, params, is_training=False)  # decisions leave the normalizer alone
    # Non-trivial weights and statistics everywhere, so that a wrong layer cannot pass by accident.
    rng = np.random.default_rng(1)
    model = policy.model
    for variable in model.trainable_variables:
        variable.assign(variable + rng.normal(0, 0.1, size=variable.shape).astype(np.float32))
    if model.normalizer is not None:
        model.normalizer.running_mean.assign(rng.normal(0, 1, size=model.vec_obs_size).astype(np.float32))
        model.normalizer.running_variance.assign(
            rng.uniform(5, 50, size=model.vec_obs_size).astype(np.float32)
        )
        model.normalizer.normalization_steps.assign(37)
    return policy


def brain(name, vec, actions, space, cameras=()):
    resolutions = [{"height": h, "width": w, "blackAndWhite": bw} for h, w, bw in cameras]
    return BrainParameters(name, vec, 1, resolutions, list(actions), [""] * len(actions), space)


def export(policy):
    policy.export_model()
    return read_nn(policy.model_path + ".nn")


def observation_feeds(policy, rng, n):
    model = policy.model
    feeds, policy_feed = {}, {}
    if model.vec_obs_size:
        vector = rng.normal(0, 3, size=(n, model.vec_obs_size)).astype(np.float32)
        policy_feed["vector_observation"] = vector
        feeds["vector_observation"] = vector.reshape(n, 1, 1, -1)
    for i, (h, w, c) in enumerate(model.vis_obs_shapes):
        image = rng.random((n, h, w, c)).astype(np.float32)
        policy_feed[f"visual_observation_{i}"] = image
        feeds[f"visual_observation_{i}"] = image
    return feeds, policy_feed


def feed_memories(nn, memory, feeds):
    """Split an agent memory vector over the memory inputs, sorted by name (what Unity does)."""
    offset = 0
    for shape, input_name, _ in sorted(nn["memories"], key=lambda m: m[1]):
        size = shape[-1]
        feeds[input_name] = memory[:, offset : offset + size].reshape(len(memory), 1, 1, size)
        offset += size
    return offset


def collect_memories(nn, env):
    parts = [env[output_name] for _, _, output_name in sorted(nn["memories"], key=lambda m: m[1])]
    return np.concatenate([p.reshape(p.shape[0], -1) for p in parts], axis=1)


def check_constants(nn, continuous, memory_size, action_output_shape):
    consts = constants(nn)
    assert nn["version"] == 16
    assert nn["layers"][0]["type"] == 255 and nn["layers"][0]["inputs"] == []
    assert float(consts["version_number"].ravel()[0]) == 2.0
    assert float(consts["is_continuous_control"].ravel()[0]) == float(continuous)
    assert float(consts["memory_size"].ravel()[0]) == float(memory_size)
    assert float(consts["action_output_shape"].ravel()[0]) == float(action_output_shape)
    assert "action" in nn["outputs"]
    assert "batch_size" not in nn["inputs"]
    allowed = {
        "vector_observation",
        "prev_action",
        "epsilon",
        "action_masks",
        "sequence_length",
        "recurrent_in",
    }
    for name in nn["inputs"]:
        assert name in allowed or name.startswith("visual_observation_"), name


# ---------------------------------------------------------------------- tests


def test_basic_discrete_layout_matches_the_shipped_model(tmp_path, make_policy, caplog):
    policy = make_policy(brain("BasicLearning", 20, [3], "discrete"), hidden_units=20, num_layers=1)
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        nn = export(policy)
    assert any("Exported" in r.getMessage() and "BasicLearning.nn" in r.getMessage() for r in caplog.records)
    assert (tmp_path / "models" / "run-0" / "BasicLearning.nn").exists()
    check_constants(nn, continuous=False, memory_size=0, action_output_shape=3)
    # The 16 layers of the BasicLearning.nn model shipped with ML-Agents 0.9.3.
    assert [layer["type"] for layer in nn["layers"]] == [
        255,
        1,
        50,
        1,
        50,
        211,
        211,
        50,
        100,
        102,
        128,
        103,
        100,
        50,
        50,
        50,
    ]
    assert nn["inputs"] == {"vector_observation": [-1, 1, 1, 20], "action_masks": [-1, 1, 1, 3]}
    assert nn["outputs"] == ["action_probs", "concat_2", "action"]
    assert nn["memories"] == []
    hidden = nn["layers"][1]
    assert hidden["name"] == "main_graph_0/hidden_0/BiasAdd" and hidden["inputs"] == ["vector_observation"]
    assert nn["layers"][2]["activation"] == 9  # swish
    weights = tensors_by_name(nn)
    model = policy.model
    np.testing.assert_array_equal(
        weights["main_graph_0/hidden_0/kernel"].reshape(20, 20),
        model.vector_encoders[0].layers[0].kernel.numpy(),
    )
    np.testing.assert_array_equal(
        weights["dense/kernel"].reshape(20, 3), model.policy_branches[0].kernel.numpy()
    )
    assert weights["dense/kernel"].shape == (20, 1, 1, 3)
    np.testing.assert_array_equal(weights["dense/MatMul/patch:0"], np.zeros((1, 1, 1, 3)))
    slice_layer = nn["layers"][5]
    assert slice_layer["pads"] == [0, 0, 0, 0] and slice_layer["pool_size"] == [0, 0, 0, 3]
    assert slice_layer["strides"] == [1, 1, 1, 1]


def compare_discrete(policy, nn, rng, n=5, memory=None):
    model = policy.model
    feeds, policy_feed = observation_feeds(policy, rng, n)
    masks = np.ones((n, sum(model.act_size)), dtype=np.float32)
    masks[0, 0] = 0
    masks[1, -1] = 0
    feeds["action_masks"] = masks.reshape(n, 1, 1, -1)
    policy_feed["action_masks"] = masks
    if model.use_recurrent:
        prev = rng.integers(0, min(model.act_size), size=(n, len(model.act_size))).astype(np.int32)
        feeds["prev_action"] = prev.reshape(n, 1, 1, -1).astype(np.float32)
        policy_feed["prev_action"] = prev
        assert feed_memories(nn, memory, feeds) == model.m_size
        policy_feed["recurrent_in"] = memory
    env = run(nn, feeds)
    expected = policy._inference_fn(policy_feed)
    np.testing.assert_allclose(
        env["action_probs"].reshape(n, -1), expected["log_probs"].numpy(), rtol=2e-4, atol=2e-5
    )
    np.testing.assert_allclose(
        env["action"].reshape(n, -1), expected["masked_log_probs"].numpy(), rtol=2e-4, atol=2e-4
    )
    if model.use_recurrent:
        np.testing.assert_allclose(
            collect_memories(nn, env), expected["memory_out"].numpy(), rtol=2e-4, atol=2e-5
        )


def compare_continuous(policy, nn, rng, n=5, memory=None):
    model = policy.model
    feeds, policy_feed = observation_feeds(policy, rng, n)
    epsilon = rng.normal(size=(n, model.act_size[0])).astype(np.float32)
    feeds["epsilon"] = epsilon.reshape(n, 1, 1, -1)
    if model.use_recurrent:
        assert feed_memories(nn, memory, feeds) == model.m_size
        policy_feed["recurrent_in"] = memory
    env = run(nn, feeds)
    expected = policy._inference_fn(policy_feed, epsilon)
    np.testing.assert_allclose(env["action"].reshape(n, -1), expected["action"].numpy(), rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(
        env["action_probs"].reshape(n, -1), expected["log_probs"].numpy(), rtol=2e-4, atol=2e-4
    )
    if model.use_recurrent:
        np.testing.assert_allclose(
            collect_memories(nn, env), expected["memory_out"].numpy(), rtol=2e-4, atol=2e-5
        )


@pytest.mark.parametrize("normalize", [False, True])
def test_discrete_forward_pass_equals_policy(make_policy, normalize):
    policy = make_policy(brain("Grid", 6, [3, 2], "discrete"), normalize=normalize)
    nn = export(policy)
    check_constants(nn, continuous=False, memory_size=0, action_output_shape=5)
    if normalize:
        consts = constants(nn)
        np.testing.assert_array_equal(
            consts["running_mean"].reshape(-1), policy.model.normalizer.running_mean.numpy()
        )
        np.testing.assert_array_equal(
            consts["running_variance"].reshape(-1), policy.model.normalizer.running_variance.numpy()
        )
        assert float(consts["normalization_steps"].ravel()[0]) == 37
        assert any(layer["name"] == "normalized_state" for layer in nn["layers"])
    compare_discrete(policy, nn, np.random.default_rng(2))


@pytest.mark.parametrize("normalize", [False, True])
def test_continuous_forward_pass_equals_policy(make_policy, normalize):
    policy = make_policy(brain("Ball", 8, [2], "continuous"), normalize=normalize)
    nn = export(policy)
    check_constants(nn, continuous=True, memory_size=0, action_output_shape=2)
    assert nn["inputs"] == {"vector_observation": [-1, 1, 1, 8], "epsilon": [-1, 1, 1, 2]}
    assert set(nn["outputs"]) == {"action", "action_probs"}
    consts = constants(nn)
    np.testing.assert_array_equal(
        consts["log_sigma_squared"].reshape(-1), policy.model.log_sigma_squared.numpy()
    )
    # The value stream is not part of the inference model.
    assert not any(layer["name"].startswith("main_graph_1") for layer in nn["layers"])
    compare_continuous(policy, nn, np.random.default_rng(3))


def test_discrete_recurrent_visual_model(make_policy):
    b = brain("Hallway", 5, [4], "discrete", cameras=[(24, 24, False)])
    policy = make_policy(b, use_recurrent=True, memory_size=16, normalize=True)
    nn = export(policy)
    check_constants(nn, continuous=False, memory_size=16, action_output_shape=4)
    assert nn["inputs"] == {
        "visual_observation_0": [-1, 24, 24, 3],
        "vector_observation": [-1, 1, 1, 5],
        "prev_action": [-1, 1, 1, 1],
        "action_masks": [-1, 1, 1, 4],
    }
    assert nn["memories"] == [
        ([1, 1, 1, 8], "recurrent_in_c", "recurrent_out_c"),
        ([1, 1, 1, 8], "recurrent_in_h", "recurrent_out_h"),
    ]
    weights = tensors_by_name(nn)
    # LSTM gates as separate dense layers over [x, h]: 12 + 12 hidden + 4 one-hot, then 8 units of h.
    assert weights["lstm/i/kernel"].shape == (12 + 12 + 4 + 8, 1, 1, 8)
    kernel = policy.model.lstm.kernel.numpy()
    np.testing.assert_array_equal(weights["lstm/f/kernel"].reshape(-1, 8), kernel[:, 16:24])
    np.testing.assert_allclose(
        weights["lstm/f/bias"].reshape(-1), policy.model.lstm.bias.numpy()[16:24] + 1.0
    )
    conv = [layer for layer in nn["layers"] if layer["type"] == 20]
    assert [layer["tensors"][0]["shape"] for layer in conv] == [[8, 8, 3, 16], [4, 4, 16, 32]]
    assert conv[0]["strides"] == [4, 4] and conv[0]["pads"] == [0, 0, 0, 0]
    memory = np.random.default_rng(4).normal(size=(5, 16)).astype(np.float32)
    compare_discrete(policy, nn, np.random.default_rng(5), memory=memory)


def test_continuous_recurrent_model_exports_both_lstms(make_policy):
    policy = make_policy(
        brain("Crawler", 6, [3], "continuous"), use_recurrent=True, memory_size=16, normalize=True
    )
    nn = export(policy)
    check_constants(nn, continuous=True, memory_size=16, action_output_shape=3)
    names = sorted(m[1] for m in nn["memories"])
    assert names == [
        "recurrent_in_policy_c",
        "recurrent_in_policy_h",
        "recurrent_in_value_c",
        "recurrent_in_value_h",
    ]
    assert sum(m[0][-1] for m in nn["memories"]) == 16
    memory = np.random.default_rng(6).normal(size=(5, 16)).astype(np.float32)
    compare_continuous(policy, nn, np.random.default_rng(7), memory=memory)


@pytest.mark.parametrize("encoder", ["nature_cnn", "resnet"])
def test_other_visual_encoders(make_policy, encoder):
    size = 36 if encoder == "nature_cnn" else 20
    b = brain("Visual", 0, [2], "continuous", cameras=[(size, size, True)])
    policy = make_policy(b, vis_encode_type=encoder, num_layers=1)
    nn = export(policy)
    assert nn["inputs"] == {"visual_observation_0": [-1, size, size, 1], "epsilon": [-1, 1, 1, 2]}
    if encoder == "resnet":
        pools = [layer for layer in nn["layers"] if layer["type"] == 25]
        assert len(pools) == 3 and pools[0]["pool_size"] == [3, 3] and pools[0]["strides"] == [2, 2]
        assert any(layer["type"] == 20 and layer["pads"] == [-1] for layer in nn["layers"])
    compare_continuous(policy, nn, np.random.default_rng(8), n=3)


def test_exported_values_follow_training(make_policy):
    """Exporting twice gives the current weights (the file is rewritten, not cached)."""
    policy = make_policy(brain("Ball", 3, [2], "continuous"))
    first = tensors_by_name(export(policy))["dense/bias"].copy()
    policy.model.mu.bias.assign(policy.model.mu.bias + 1.0)
    second = tensors_by_name(export(policy))["dense/bias"]
    np.testing.assert_allclose(second, first + 1.0, rtol=1e-6)
    assert math.isfinite(float(second.sum()))
