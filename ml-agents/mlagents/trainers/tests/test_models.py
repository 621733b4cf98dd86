"""The network's layers, encoders and LearningModel against the 0.9 graph's definitions, computed
independently with numpy."""

import math

import numpy as np
import pytest
import tensorflow as tf

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.encoders import EncoderType, VisualEncoder
from mlagents.trainers.exception import UnityPolicyException
from mlagents.trainers.layers import Dense, Initializer, LSTMCell, Normalizer, masked_log_probs, swish
from mlagents.trainers.models import LearningModel
from mlagents.trainers.ppo.models import PPOModel


def brain(vec=3, stack=1, cameras=(), actions=(2,), space="discrete"):
    resolutions = [{"height": h, "width": w, "blackAndWhite": bw} for h, w, bw in cameras]
    return BrainParameters("Brain", vec, stack, resolutions, list(actions), [""] * len(actions), space)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_swish():
    x = np.linspace(-4, 4, 9).astype(np.float32)
    np.testing.assert_allclose(swish(tf.constant(x)).numpy(), x * sigmoid(x), rtol=1e-6)


def test_variance_scaling_is_tf1_truncated_normal():
    init = Initializer(seed=1)
    fan_in = 200
    values = init.variance_scaling([fan_in, 500], factor=1.0, fan_in=fan_in).numpy()
    stddev = math.sqrt(1.3 / fan_in)
    assert np.abs(values).max() <= 2 * stddev + 1e-6
    # A normal truncated at 2 sigma has a standard deviation of 0.8796 sigma.
    assert abs(values.std() / (stddev * 0.8796) - 1) < 0.02
    small = init.variance_scaling([fan_in, 500], factor=0.01, fan_in=fan_in).numpy()
    assert abs(small.std() / (math.sqrt(0.013 / fan_in) * 0.8796) - 1) < 0.02


def test_glorot_uniform_and_determinism():
    values = Initializer(seed=1).glorot_uniform([300, 100], 300, 100).numpy()
    limit = math.sqrt(6 / 400)
    assert np.abs(values).max() <= limit
    assert abs(values.std() - limit / math.sqrt(3)) < 0.01 * limit
    again = Initializer(seed=1).glorot_uniform([300, 100], 300, 100).numpy()
    other = Initializer(seed=2).glorot_uniform([300, 100], 300, 100).numpy()
    np.testing.assert_array_equal(values, again)
    assert not np.allclose(values, other)


def test_dense_layer():
    layer = Dense(3, 2, Initializer(0), ("vs", 1.0), activation="swish")
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    expected = x @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(
        layer(tf.constant(x)).numpy(), expected * sigmoid(expected), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(layer.bias.numpy(), 0)
    no_bias = Dense(3, 2, Initializer(0), use_bias=False)
    assert no_bias.bias is None
    assert len(no_bias.trainable_variables) == 1


def test_normalizer_update_and_output():
    rng = np.random.default_rng(0)
    norm = Normalizer(3)
    mean, var, steps = np.zeros(3), np.ones(3), 1
    for _ in range(4):
        batch = rng.normal(2.0, 3.0, size=(5, 3)).astype(np.float32)
        norm.update(tf.constant(batch))
        m = batch.mean(axis=0)
        new_mean = mean + (m - mean) / (steps + 1)
        var = var + (m - new_mean) * (m - mean)
        mean, steps = new_mean, steps + 1
    np.testing.assert_allclose(norm.running_mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(norm.running_variance.numpy(), var, rtol=1e-5)
    assert int(norm.normalization_steps.numpy()) == steps == 5
    x = rng.normal(0, 50, size=(6, 3)).astype(np.float32)
    expected = np.clip((x - mean) / np.sqrt(var / (steps + 1)), -5, 5)
    np.testing.assert_allclose(norm(tf.constant(x)).numpy(), expected, rtol=1e-4, atol=1e-5)
    assert not norm.trainable_variables


def numpy_lstm(x, memory, kernel, bias, units, sequence_length):
    """BasicLSTMCell in numpy: gates i, j, f, o over [x, h]; forget bias 1."""
    n_seq = memory.shape[0]
    x = x.reshape(n_seq, sequence_length, -1)
    c, h = memory[:, :units], memory[:, units:]
    outputs = []
    for t in range(sequence_length):
        gates = np.concatenate([x[:, t], h], axis=1) @ kernel + bias
        i, j, f, o = np.split(gates, 4, axis=1)
        c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * sigmoid(o)
        outputs.append(h)
    return np.stack(outputs, axis=1).reshape(n_seq * sequence_length, units), np.concatenate([c, h], axis=1)


@pytest.mark.parametrize("sequence_length", [1, 4])
def test_lstm_matches_numpy(sequence_length):
    rng = np.random.default_rng(1)
    cell = LSTMCell(5, 3, Initializer(3))
    cell.bias.assign(rng.normal(size=12).astype(np.float32))
    x = rng.normal(size=(2 * sequence_length, 5)).astype(np.float32)
    memory = rng.normal(size=(2, 6)).astype(np.float32)
    out, memory_out = cell(tf.constant(x), tf.constant(memory), sequence_length)
    expected_out, expected_memory = numpy_lstm(
        x, memory, cell.kernel.numpy(), cell.bias.numpy(), 3, sequence_length
    )
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(memory_out.numpy(), expected_memory, rtol=1e-5, atol=1e-6)
    assert cell.kernel.shape == (8, 12)


@pytest.mark.parametrize(
    "encoder, size, flat",
    [
        (EncoderType.SIMPLE, 84, 9 * 9 * 32),
        (EncoderType.NATURE_CNN, 84, 7 * 7 * 64),
        (EncoderType.RESNET, 40, 4 * 4 * 32),
    ],
)
def test_visual_encoders_shapes(encoder, size, flat):
    enc = VisualEncoder(size, size, 3, 16, 2, encoder, Initializer(0), name="enc")
    assert enc.flat_size == flat
    out = enc(tf.zeros([2, size, size, 3]))
    assert out.shape == (2, 16)
    assert len(enc.dense.layers) == 2


def test_simple_encoder_layout_and_elu():
    enc = VisualEncoder(84, 84, 3, 8, 1, EncoderType.SIMPLE, Initializer(0), name="enc")
    assert [tuple(c.kernel.shape) for c in enc.convs] == [(8, 8, 3, 16), (4, 4, 16, 32)]
    assert [c.stride for c in enc.convs] == [4, 2]


def test_too_small_camera_is_a_clear_error():
    with pytest.raises(UnityPolicyException, match="too small for the 'nature_cnn' visual encoder"):
        VisualEncoder(30, 30, 3, 8, 1, EncoderType.NATURE_CNN, Initializer(0), name="enc")


def test_masked_log_probs_renormalize_and_suppress_masked_actions():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 5)).astype(np.float32)
    masks = np.ones((4, 5), dtype=np.float32)
    masks[:, 1] = 0
    masks[2, 3] = 0
    branches = masked_log_probs(tf.constant(logits), tf.constant(masks), [3, 2])
    for (start, end), branch in zip([(0, 3), (3, 5)], branches):
        z = logits[:, start:end]
        p = (np.exp(z) / np.exp(z).sum(axis=1, keepdims=True) + 1e-7) * masks[:, start:end]
        expected = np.log(p / p.sum(axis=1, keepdims=True) + 1e-7)
        np.testing.assert_allclose(branch.numpy(), expected, rtol=1e-5, atol=1e-6)
    first = branches[0].numpy()
    np.testing.assert_allclose(first[:, 1], np.log(1e-7), rtol=1e-5)
    np.testing.assert_allclose(np.exp(first).sum(axis=1), 1.0, atol=1e-5)


def test_no_observation_brain_is_rejected():
    with pytest.raises(UnityPolicyException, match="No valid network configuration possible"):
        LearningModel(0, False, False, brain(vec=0), 0)


def test_schedule_is_linear_then_constant():
    for step, expected in [(0, 1.0), (50, 0.55), (100, 0.1), (1000, 0.1)]:
        value = LearningModel.polynomial_decay(1.0, 0.1, tf.constant(step), 100.0).numpy()
        assert value == pytest.approx(expected, rel=1e-6)


def test_ppo_model_structure_discrete_recurrent():
    # Hallway-like: 2 x 128 hidden... kept small: hidden 16, 5 actions, memory 8 -> LSTM of 4 units.
    model = PPOModel(
        brain(vec=6, actions=(5,)),
        h_size=16,
        num_layers=2,
        use_recurrent=True,
        m_size=8,
        stream_names=["extrinsic", "other"],
    )
    assert len(model.vector_encoders) == 1
    assert model.lstm.kernel.shape == (16 + 5 + 4, 16)
    assert model.policy_branches[0].bias is None
    assert set(model.value_heads) == {"extrinsic", "other"}
    inputs = {
        "vector_observation": tf.zeros([6, 6]),
        "action_masks": tf.ones([6, 5]),
        "prev_action": tf.zeros([6, 1], tf.int32),
        "recurrent_in": tf.zeros([2, 8]),
    }
    out = model.forward(inputs, sequence_length=3)
    assert out["logits"].shape == (6, 5)
    assert out["memory_out"].shape == (2, 8)
    np.testing.assert_allclose(
        out["value"].numpy(), (out["values"]["extrinsic"] + out["values"]["other"]).numpy() / 2
    )
    assert int(model.version_number.numpy()) == 2
    assert int(model.memory_size.numpy()) == 8
    assert int(model.action_output_shape.numpy()) == 5
    assert int(model.is_continuous_control.numpy()) == 0


def test_ppo_model_structure_continuous():
    model = PPOModel(
        brain(vec=4, actions=(2,), space="continuous"),
        h_size=8,
        num_layers=0,
        use_recurrent=True,
        m_size=8,
        normalize=True,
    )
    # num_layers < 1 is clamped to 1; two separate streams; two LSTMs of memory_size / 4 units.
    assert len(model.vector_encoders) == 2
    assert len(model.vector_encoders[0].layers) == 1
    assert model.vector_encoders[0].layers[0] is not model.vector_encoders[1].layers[0]
    assert model.lstm_policy.units == model.lstm_value.units == 2
    np.testing.assert_array_equal(model.log_sigma_squared.numpy(), [0, 0])
    assert int(model.is_continuous_control.numpy()) == 1
    assert int(model.action_output_shape.numpy()) == 2
    out = model.inference(
        {"vector_observation": tf.ones([3, 4]), "recurrent_in": tf.zeros([3, 8])}, epsilon=tf.zeros([3, 2])
    )
    np.testing.assert_allclose(out["action"].numpy(), np.clip(out["mu"].numpy(), -3, 3) / 3, rtol=1e-6)
    expected_entropy = 0.5 * math.log(2 * math.pi * math.e)
    np.testing.assert_allclose(out["entropy"].numpy(), expected_entropy, rtol=1e-6)
    np.testing.assert_allclose(out["action_probs"].numpy(), -0.5 * math.log(2 * math.pi), rtol=1e-6)
