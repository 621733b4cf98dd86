"""The numpy decision path of PPOPolicy against its TensorFlow graph: the same outputs and actions for
the same weights and noise (discrete with one or several branches and masks, continuous, with and
without normalization, several value heads, after an update and after a checkpoint load), samples from
the same distributions, the fallback to TensorFlow for visual and recurrent networks, and exports
that do not depend on the path."""

import logging

import numpy as np
import pytest

from mlagents.envs.brain import BrainParameters
from mlagents.envs.timers import get_timer_tree, reset_timers
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.tests.policy_helpers import make_info, update_batch

CURIOSITY = {"strength": 0.5, "gamma": 0.9, "encoding_size": 6}
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def make_brain(vec=5, actions=(3,), space="discrete", cameras=()):
    resolutions = [{"height": h, "width": w, "blackAndWhite": bw} for h, w, bw in cameras]
    return BrainParameters("Brain", vec, 1, resolutions, list(actions), [""] * len(actions), space)


def random_masks(rng, n, act_size):
    """Masks with at least one allowed action per branch, some branches fully allowed; with 7 agents
    or more, the first agent's first branch is fully masked (NaN log-probabilities on both paths)."""
    parts = []
    for size in act_size:
        mask = (rng.random((n, size)) > 0.4).astype(np.float32)
        mask[np.arange(n), rng.integers(0, size, n)] = 1.0
        parts.append(mask)
    masks = np.concatenate(parts, axis=1)
    if n >= 7:
        masks[0, : act_size[0]] = 0.0
    return masks


def perturb(policy, seed):
    """Move the weights (and the normalizer) away from their initial values, the same for the same seed."""
    rng = np.random.default_rng(seed)
    for variable in policy.model.trainable_variables:
        variable.assign(variable + rng.normal(0, 0.3, size=variable.shape).astype(np.float32))
    normalizer = policy.model.normalizer
    if normalizer is not None:
        size = policy.model.vec_obs_size
        normalizer.running_mean.assign(rng.normal(0, 1, size).astype(np.float32))
        normalizer.running_variance.assign(rng.uniform(0.5, 4.0, size).astype(np.float32) * 6)
        normalizer.normalization_steps.assign(5)
    policy.weights_changed()


CASES = {
    "discrete-one-branch": dict(actions=(3,), space="discrete"),
    "discrete-branches": dict(actions=(3, 2, 4), space="discrete"),
    "continuous": dict(actions=(2,), space="continuous"),
}


@pytest.fixture
def pair(ppo_params):
    """``pair(case, normalize, curiosity)``: two policies with the same seed and weights, the first
    deciding in numpy, the second in TensorFlow (None with ``single=True``), and their parameters."""

    def make(case, normalize=False, curiosity=False, is_training=True, single=False, **overrides):
        signals = {"extrinsic": {"strength": 1.0, "gamma": 0.99}}
        if curiosity:
            signals["curiosity"] = dict(CURIOSITY)
        params = ppo_params(
            normalize=normalize, reward_signals=signals, hidden_units=16, num_layers=2, **overrides
        )
        brain = make_brain(**CASES[case])
        fast = PPOPolicy(3, brain, params, is_training)
        perturb(fast, 11)
        assert fast.inference_path == "numpy"
        if single:
            return brain, fast, None, params
        slow = PPOPolicy(3, brain, params, is_training)
        slow.set_fast_inference(False)
        assert slow.inference_path == "tensorflow"
        perturb(slow, 11)
        return brain, fast, slow, params

    return make


def assert_same_outputs(fast_out, slow_out):
    assert set(fast_out) == set(slow_out)
    for key, expected in slow_out.items():
        actual = fast_out[key]
        if isinstance(expected, dict):
            assert set(actual) == set(expected)
            for name in expected:
                np.testing.assert_allclose(actual[name], expected[name], **TOLERANCE, err_msg=f"{key}/{name}")
                assert actual[name].dtype == expected[name].dtype == np.float32
        elif key == "action" and np.asarray(expected).dtype == np.int32:
            np.testing.assert_array_equal(actual, expected)
            assert actual.dtype == np.int32
        else:
            np.testing.assert_allclose(actual, expected, **TOLERANCE, err_msg=key)
            assert np.asarray(actual).shape == np.asarray(expected).shape


def assert_same_normalizer(fast, slow):
    if fast.model.normalizer is None:
        return
    a, b = fast.model.normalizer, slow.model.normalizer
    np.testing.assert_allclose(a.running_mean.numpy(), b.running_mean.numpy(), **TOLERANCE)
    np.testing.assert_allclose(a.running_variance.numpy(), b.running_variance.numpy(), **TOLERANCE)
    assert int(a.normalization_steps.numpy()) == int(b.normalization_steps.numpy())


def random_info(brain, rng, n):
    obs = rng.normal(1.0, 3.0, size=(n, brain.vector_observation_space_size)).astype(np.float32)
    masks = None
    if brain.vector_action_space_type == "discrete":
        masks = random_masks(rng, n, brain.vector_action_space_size)
    return obs, make_info(brain, obs, masks)


def decide_once(brain, policy, rng, n):
    obs, info = random_info(brain, rng, n)
    return obs, policy.evaluate(info)


def decide_both(brain, fast, slow, rng, n):
    obs, info = random_info(brain, rng, n)
    fast_out, slow_out = fast.evaluate(info), slow.evaluate(info)
    assert_same_outputs(fast_out, slow_out)
    assert_same_normalizer(fast, slow)
    rows = [(info, i) for i in range(n)]
    dones = [i % 3 == 0 for i in range(n)]
    fast_values = fast.get_batched_value_estimates(rows, dones)
    slow_values = slow.get_batched_value_estimates(rows, dones)
    assert set(fast_values) == set(slow_values)
    for name in slow_values:
        np.testing.assert_allclose(fast_values[name], slow_values[name], **TOLERANCE)
    return obs, fast_out


@pytest.mark.slow
@pytest.mark.parametrize(
    "case, normalize", [("discrete-one-branch", False), ("discrete-branches", True), ("continuous", True)]
)
def test_numpy_decisions_equal_tensorflow(pair, ppo_params, case, normalize):
    """Decisions and value estimates; weights assigned by hand; an update; a checkpoint load; the
    export; the timers."""
    reset_timers()
    # Normalizing policies also get a second value head (curiosity).
    brain, fast, slow, params = pair(case, normalize=normalize, curiosity=normalize)
    rng = np.random.default_rng(5)
    for n in (1, 7, 12):
        decide_both(brain, fast, slow, rng, n)
    names = timer_names(get_timer_tree())
    assert {"PPOPolicy.numpy_inference", "PPOPolicy.numpy_values"} <= names
    assert {"PPOPolicy.tensorflow_inference", "PPOPolicy.tensorflow_values"} <= names

    # Weights assigned by hand count once the policy is told.
    for policy in (fast, slow):
        weights = (
            policy.model.mu.kernel if policy.use_continuous_act else policy.model.policy_branches[0].kernel
        )
        weights.assign(weights * 3.0)
        policy.weights_changed()
    obs, out = decide_both(brain, fast, slow, rng, 12)

    # After an update (the same on both), the numpy copy follows the new weights.
    batch = update_batch(brain, fast, obs, out, rng)
    fast.update(batch, len(obs))
    slow.update(batch, len(obs))
    for a, b in zip(fast.model.trainable_variables, slow.model.trainable_variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    for n in (3, 12):
        decide_both(brain, fast, slow, rng, n)

    # The statistics the numpy copy wrote back are those the TensorFlow functions read.
    _, info = random_info(brain, rng, 4)
    feed = fast.observation_feed(info)
    expected = fast.tensorflow_values(feed)
    for name, values in fast.numpy_values(feed).items():
        np.testing.assert_allclose(values, expected[name], **TOLERANCE)

    # A policy restored from a checkpoint of the numpy-deciding one decides like the TensorFlow one,
    # and exports the same bytes (the numpy copy never changes the model).
    fast.save_model(10)
    fast.export_model()
    with open(fast.model_path + ".nn", "rb") as exported:
        fast_export = exported.read()
    restored = PPOPolicy(9, brain, dict(params, load=True), True)
    assert restored.inference_path == "numpy"
    for a, b in zip(fast.model.variables, restored.model.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    restored.export_model()
    with open(restored.model_path + ".nn", "rb") as exported:
        assert exported.read() == fast_export
    restored.rng.bit_generator.state = slow.rng.bit_generator.state  # the same noise from here on
    for n in (1, 5):
        decide_both(brain, restored, slow, rng, n)


def test_discrete_samples_follow_the_masked_probabilities(pair):
    brain, fast, _, _ = pair("discrete-branches", is_training=False, single=True)
    for branch in fast.model.policy_branches:
        branch.kernel.assign(branch.kernel * 4.0)  # far from uniform
    fast.weights_changed()
    n = 20_000
    obs = np.tile(np.random.default_rng(1).normal(size=(1, 5)).astype(np.float32), (n, 1))
    masks = np.ones((n, 9), np.float32)
    masks[:, [1, 5]] = 0.0  # one masked action in the first and in the second branch
    info = make_info(brain, obs, masks)
    actions = fast.evaluate(info)["action"]
    # The distribution from the TensorFlow graph.
    probabilities = np.exp(fast._inference_fn(fast.observation_feed(info))["masked_log_probs"].numpy()[0])
    start = 0
    for k, size in enumerate(brain.vector_action_space_size):
        expected = probabilities[start : start + size]
        expected = expected / expected.sum()
        frequencies = np.bincount(actions[:, k], minlength=size) / n
        # 5.7 standard errors at p = 0.5; a sampler ignoring the mask or the logits is off by > 0.05.
        np.testing.assert_allclose(frequencies, expected, atol=0.02)
        assert expected.max() - expected.min() > 0.1
        start += size
    assert not np.any(actions[:, 0] == 1) and not np.any(actions[:, 1] == 2)


def test_continuous_samples_have_the_gaussian_moments(pair):
    brain, fast, _, _ = pair("continuous", is_training=False, single=True)
    fast.model.log_sigma_squared.assign([0.4, -1.0])
    fast.weights_changed()
    n = 20_000
    obs = np.tile(np.random.default_rng(1).normal(size=(1, 5)).astype(np.float32), (n, 1))
    out = fast.evaluate(make_info(brain, obs))
    feed = fast.observation_feed(make_info(brain, obs[:1]))
    mu = fast._inference_fn(feed, np.zeros((1, 2), np.float32))["pre_action"].numpy()[0]
    sigma = np.sqrt(np.exp([0.4, -1.0]))
    pre = out["pre_action"]
    # Standard errors: sigma / 141 for the mean, sigma / 200 for the deviation.
    np.testing.assert_allclose(pre.mean(axis=0), mu, atol=0.05 * sigma.min())
    np.testing.assert_allclose(pre.std(axis=0), sigma, rtol=0.03)
    np.testing.assert_allclose(out["action"], np.clip(pre, -3, 3) / 3, rtol=1e-6)


@pytest.mark.parametrize(
    "kind, overrides, brain",
    [
        ("visual", {}, dict(vec=0, cameras=[(20, 20, True)])),
        ("recurrent", {"use_recurrent": True}, dict()),
    ],
)
def test_visual_and_recurrent_networks_decide_in_tensorflow(ppo_params, caplog, kind, overrides, brain):
    reset_timers()
    with caplog.at_level(logging.DEBUG, logger="mlagents.trainers"):
        policy = PPOPolicy(0, make_brain(**brain), ppo_params(**overrides), True)
    assert policy.inference_path == "tensorflow"
    assert any("decides in TensorFlow" in record.getMessage() for record in caplog.records)
    policy.set_fast_inference(True)  # nothing to switch to
    assert policy.inference_path == "tensorflow"
    n = 2
    visual = [np.zeros((n, 20, 20, 1), np.float32)] if kind == "visual" else None
    obs = np.zeros((n, 0)) if kind == "visual" else np.ones((n, 5))
    policy.get_action(make_info(policy.brain, obs, visual=visual))
    names = timer_names(get_timer_tree())
    assert "PPOPolicy.tensorflow_inference" in names and "PPOPolicy.numpy_inference" not in names


def timer_names(node):
    names = {node.get("name")}
    for child in node.get("children", []):
        names |= timer_names(child)
    return names
