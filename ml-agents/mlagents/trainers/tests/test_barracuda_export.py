"""The exported ``.nn`` file, read back and executed by the build side's runtime
(:mod:`mlagents.example_envs.sdk.inference`).

The runtime follows the Barracuda v16 file layout and layer semantics, not the writer's code: the
file must say what Unity's Barracuda engine needs (names, shapes, constants, memories), and
executing its layers must give the policy's own outputs.
"""

import logging
import math

import numpy as np
import pytest

from mlagents.example_envs.sdk import inference
from mlagents.trainers.tests.policy_helpers import make_brain, randomized_policy

# ---------------------------------------------------------------------- reading and running the file
# The build side's runtime (mlagents.example_envs.sdk.inference) reads the file and executes its
# layers: what it needs from the file is what Unity's Barracuda engine needs.


def read_nn(path):
    """Parse the file with the runtime's reader and check that the tensors' data is laid out
    back to back with nothing after it."""
    model = inference.read_nn(path)
    expected_offset = 0
    for layer in model.layers:
        for tensor in layer.tensors:
            assert len(tensor.shape) == 4
            assert tensor.offset == expected_offset
            expected_offset += tensor.data.size
    return model


def constants(model):
    return model.constants()


def tensors_by_name(model):
    return model.tensors()


def run(model, feeds):
    """Execute the layers; feeds use the 4-D layout ([N, C] inputs become [N, 1, 1, C])."""
    return inference.Engine(model).run(feeds)


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
    for item in nn.sorted_memories():
        size = item.shape[-1]
        feeds[item.input_name] = memory[:, offset : offset + size].reshape(len(memory), 1, 1, size)
        offset += size
    return offset


def collect_memories(nn, env):
    parts = [env[item.output_name] for item in nn.sorted_memories()]
    return np.concatenate([p.reshape(p.shape[0], -1) for p in parts], axis=1)


def check_constants(nn, continuous, memory_size, action_output_shape):
    consts = constants(nn)
    assert nn.version == 16
    assert nn.layers[0].type == 255 and nn.layers[0].inputs == []
    assert float(consts["version_number"].ravel()[0]) == 2.0
    assert float(consts["is_continuous_control"].ravel()[0]) == float(continuous)
    assert float(consts["memory_size"].ravel()[0]) == float(memory_size)
    assert float(consts["action_output_shape"].ravel()[0]) == float(action_output_shape)
    assert "action" in nn.outputs
    assert "batch_size" not in nn.inputs
    allowed = {
        "vector_observation",
        "prev_action",
        "epsilon",
        "action_masks",
        "sequence_length",
        "recurrent_in",
    }
    for name in nn.inputs:
        assert name in allowed or name.startswith("visual_observation_"), name


# ---------------------------------------------------------------------- tests


def test_basic_discrete_layout_matches_the_shipped_model(tmp_path, make_policy, caplog):
    policy = make_policy(make_brain("BasicLearning", 20, [3], "discrete"), hidden_units=20, num_layers=1)
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        nn = export(policy)
    assert any("Exported" in r.getMessage() and "BasicLearning.nn" in r.getMessage() for r in caplog.records)
    assert (tmp_path / "models" / "run-0" / "BasicLearning.nn").exists()
    check_constants(nn, continuous=False, memory_size=0, action_output_shape=3)
    # The 16 layers of the BasicLearning.nn model shipped with ML-Agents 0.9.3.
    assert [layer.type for layer in nn.layers] == [
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
    assert nn.inputs == {"vector_observation": [-1, 1, 1, 20], "action_masks": [-1, 1, 1, 3]}
    assert nn.outputs == ["action_probs", "concat_2", "action"]
    assert nn.memories == []
    hidden = nn.layers[1]
    assert hidden.name == "main_graph_0/hidden_0/BiasAdd" and hidden.inputs == ["vector_observation"]
    assert nn.layers[2].activation == 9  # swish
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
    slice_layer = nn.layers[5]
    assert slice_layer.pads == [0, 0, 0, 0] and slice_layer.pool_size == [0, 0, 0, 3]
    assert slice_layer.strides == [1, 1, 1, 1]


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
        env["action_probs"].reshape(n, -1), expected["action_probs"].numpy(), rtol=2e-4, atol=2e-5
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
        env["action_probs"].reshape(n, -1), expected["action_probs"].numpy(), rtol=2e-4, atol=2e-4
    )
    if model.use_recurrent:
        np.testing.assert_allclose(
            collect_memories(nn, env), expected["memory_out"].numpy(), rtol=2e-4, atol=2e-5
        )


@pytest.mark.parametrize("normalize", [False, True])
def test_discrete_forward_pass_equals_policy(make_policy, normalize):
    policy = make_policy(make_brain("Grid", 6, [3, 2], "discrete"), normalize=normalize)
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
        assert any(layer.name == "normalized_state" for layer in nn.layers)
    compare_discrete(policy, nn, np.random.default_rng(2))


@pytest.mark.parametrize("normalize", [False, True])
def test_continuous_forward_pass_equals_policy(make_policy, normalize):
    policy = make_policy(make_brain("Ball", 8, [2], "continuous"), normalize=normalize)
    nn = export(policy)
    check_constants(nn, continuous=True, memory_size=0, action_output_shape=2)
    assert nn.inputs == {"vector_observation": [-1, 1, 1, 8], "epsilon": [-1, 1, 1, 2]}
    assert set(nn.outputs) == {"action", "action_probs"}
    consts = constants(nn)
    np.testing.assert_array_equal(
        consts["log_sigma_squared"].reshape(-1), policy.model.log_sigma_squared.numpy()
    )
    # The value stream is not part of the inference model.
    assert not any(layer.name.startswith("main_graph_1") for layer in nn.layers)
    compare_continuous(policy, nn, np.random.default_rng(3))


def test_discrete_recurrent_visual_model(make_policy):
    b = make_brain("Hallway", 5, [4], "discrete", cameras=[(24, 24, False)])
    policy = make_policy(b, use_recurrent=True, memory_size=16, normalize=True)
    nn = export(policy)
    check_constants(nn, continuous=False, memory_size=16, action_output_shape=4)
    assert nn.inputs == {
        "visual_observation_0": [-1, 24, 24, 3],
        "vector_observation": [-1, 1, 1, 5],
        "prev_action": [-1, 1, 1, 1],
        "action_masks": [-1, 1, 1, 4],
    }
    assert [(m.shape, m.input_name, m.output_name) for m in nn.memories] == [
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
    conv = [layer for layer in nn.layers if layer.type == 20]
    assert [list(layer.tensors[0].shape) for layer in conv] == [[8, 8, 3, 16], [4, 4, 16, 32]]
    assert conv[0].strides == [4, 4] and conv[0].pads == [0, 0, 0, 0]
    memory = np.random.default_rng(4).normal(size=(5, 16)).astype(np.float32)
    compare_discrete(policy, nn, np.random.default_rng(5), memory=memory)


@pytest.mark.slow
def test_continuous_recurrent_model_exports_both_lstms(make_policy):
    policy = make_policy(
        make_brain("Crawler", 6, [3], "continuous"), use_recurrent=True, memory_size=16, normalize=True
    )
    nn = export(policy)
    check_constants(nn, continuous=True, memory_size=16, action_output_shape=3)
    names = sorted(m.input_name for m in nn.memories)
    assert names == [
        "recurrent_in_policy_c",
        "recurrent_in_policy_h",
        "recurrent_in_value_c",
        "recurrent_in_value_h",
    ]
    assert sum(m.shape[-1] for m in nn.memories) == 16
    memory = np.random.default_rng(6).normal(size=(5, 16)).astype(np.float32)
    compare_continuous(policy, nn, np.random.default_rng(7), memory=memory)


@pytest.mark.slow
@pytest.mark.parametrize("encoder", ["nature_cnn", "resnet"])
def test_other_visual_encoders(make_policy, encoder):
    size = 36 if encoder == "nature_cnn" else 20
    b = make_brain("Visual", 0, [2], "continuous", cameras=[(size, size, True)])
    policy = make_policy(b, vis_encode_type=encoder, num_layers=1)
    nn = export(policy)
    assert nn.inputs == {"visual_observation_0": [-1, size, size, 1], "epsilon": [-1, 1, 1, 2]}
    if encoder == "resnet":
        pools = [layer for layer in nn.layers if layer.type == 25]
        assert len(pools) == 3 and pools[0].pool_size == [3, 3] and pools[0].strides == [2, 2]
        assert any(layer.type == 20 and layer.pads == [-1] for layer in nn.layers)
    compare_continuous(policy, nn, np.random.default_rng(8), n=3)


def test_exported_values_follow_training(make_policy):
    """Exporting twice gives the current weights (the file is rewritten, not cached)."""
    policy = make_policy(make_brain("Ball", 3, [2], "continuous"))
    first = tensors_by_name(export(policy))["dense/bias"].copy()
    policy.model.mu.bias.assign(policy.model.mu.bias + 1.0)
    second = tensors_by_name(export(policy))["dense/bias"]
    np.testing.assert_allclose(second, first + 1.0, rtol=1e-6)
    assert math.isfinite(float(second.sum()))
