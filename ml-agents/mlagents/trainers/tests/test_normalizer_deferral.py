"""The observation normalizer's statistics computed by numpy decisions are staged and written into
its TensorFlow variables only when something reads them: the statistics a reader sees, the
checkpoints and the exported files are exactly those of writing them at every decision."""

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.layers import Normalizer
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.tests.policy_helpers import make_info, update_batch

VEC = 4


def make_brain(space: str) -> BrainParameters:
    actions = [2] if space == "continuous" else [3, 2]
    return BrainParameters("Brain", VEC, 1, [], actions, [""] * len(actions), space)


def observations(seed: int, count: int, n: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(2.0, 3.0, size=(n, VEC)).astype(np.float32) for _ in range(count)]


@pytest.mark.slow
def test_decisions_stage_the_statistics_and_a_read_writes_them(ppo_params):
    brain = make_brain("discrete")
    policy = PPOPolicy(0, brain, ppo_params(normalize=True), True)
    assert policy.inference_path == "numpy"
    normalizer = policy.model.normalizer
    batches = observations(1, 3)
    mean, var, steps = np.zeros(VEC), np.ones(VEC), 1
    for obs in batches:
        policy.evaluate(make_info(brain, obs))
        assert normalizer.has_staged  # no TensorFlow op at the decision
        m = obs.mean(axis=0)
        new_mean = mean + (m - mean) / (steps + 1)
        var = var + (m - new_mean) * (m - mean)
        mean, steps = new_mean, steps + 1
    np.testing.assert_allclose(normalizer.running_mean.numpy(), mean, rtol=1e-5)
    assert not normalizer.has_staged
    np.testing.assert_allclose(normalizer.running_variance.numpy(), var, rtol=1e-5)
    assert int(normalizer.normalization_steps.numpy()) == 4
    # Without training the decisions leave the normalizer alone.
    frozen = PPOPolicy(0, brain, ppo_params(normalize=True), False)
    frozen.evaluate(make_info(brain, batches[0]))
    assert not frozen.model.normalizer.has_staged
    assert int(frozen.model.normalizer.normalization_steps.numpy()) == 1


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("space", ["discrete", "continuous"])
def test_updates_checkpoints_and_exports_equal_those_of_immediate_writes(ppo_params, tmp_path, space):
    """Two policies with the same seed take the same decisions; one writes the statistics into the
    variables after every decision (what the policy did before the deferral), the other only stages
    them. Updates, value estimates through TensorFlow, checkpoints and exports right after decisions
    are identical, to the byte."""
    brain = make_brain(space)
    policies = {}
    for name in ("immediate", "deferred"):
        params = ppo_params(normalize=True, model_path=str(tmp_path / name / "Brain"))
        policies[name] = PPOPolicy(4, brain, params, True)
    immediate, deferred = policies["immediate"], policies["deferred"]
    batches = observations(2, 6, n=4)
    for round_ in range(2):
        outs = {}
        for obs in batches[round_ * 3 : round_ * 3 + 3]:
            info = make_info(brain, obs)
            outs = {name: policy.evaluate(info) for name, policy in policies.items()}
            immediate.model.normalizer.flush()
            for key in ("value", "action_probs", "entropy"):
                np.testing.assert_array_equal(outs["immediate"][key], outs["deferred"][key])
            np.testing.assert_array_equal(outs["immediate"]["action"], outs["deferred"]["action"])
        assert deferred.model.normalizer.has_staged and not immediate.model.normalizer.has_staged
        # The update's graph normalizes with the current statistics.
        stats = {
            name: policy.update(update_batch(brain, policy, obs, outs[name], np.random.default_rng(5)), 4)
            for name, policy in policies.items()
        }
        assert stats["immediate"] == stats["deferred"]
    for obs in batches[:2]:
        info = make_info(brain, obs)
        for policy in policies.values():
            policy.evaluate(info)
        immediate.model.normalizer.flush()
    # Value estimates through the TensorFlow graph see the staged statistics.
    feed = deferred.observation_feed(make_info(brain, batches[5]))
    tf_values = deferred.tensorflow_values(feed)
    for head, values in deferred.numpy_values(feed).items():
        np.testing.assert_allclose(tf_values[head], values, rtol=1e-5, atol=1e-6)
    for policy in policies.values():
        policy.evaluate(make_info(brain, batches[5]))
    immediate.model.normalizer.flush()
    assert deferred.model.normalizer.has_staged
    for policy in policies.values():
        policy.increment_step(17)
        policy.save_model(17)
    assert deferred.model.normalizer.has_staged is False
    deferred.evaluate(make_info(brain, batches[4]))
    immediate.evaluate(make_info(brain, batches[4]))
    immediate.model.normalizer.flush()
    for policy in policies.values():
        policy.export_model()
    saved = {name: files_of(tmp_path / name) for name in policies}
    assert any(name.endswith(".nn") for name in saved["deferred"])
    assert any(name.endswith(".index") for name in saved["deferred"])
    assert saved["immediate"].keys() == saved["deferred"].keys()
    for name, content in saved["immediate"].items():
        assert content == saved["deferred"][name], name


def test_loading_a_checkpoint_drops_nothing_and_wins_over_staged_statistics(ppo_params):
    brain = make_brain("continuous")
    params = ppo_params(normalize=True)
    policy = PPOPolicy(6, brain, params, True)
    for obs in observations(3, 2):
        policy.evaluate(make_info(brain, obs))
    policy.save_model(2)
    saved_mean = policy.model.normalizer.running_mean.numpy()
    for obs in observations(4, 3):
        policy.evaluate(make_info(brain, obs))
    assert policy.model.normalizer.has_staged
    policy._load_graph()
    normalizer = policy.model.normalizer
    np.testing.assert_array_equal(normalizer.running_mean.numpy(), saved_mean)
    assert int(normalizer.normalization_steps.numpy()) == 3
    # The numpy copy decides with the restored statistics too.
    feed = policy.observation_feed(make_info(brain, observations(5, 1)[0]))
    tf_values = policy.tensorflow_values(feed)
    for head, values in policy.numpy_values(feed).items():
        np.testing.assert_allclose(tf_values[head], values, rtol=1e-5, atol=1e-6)


def test_traced_functions_and_checkpoints_write_staged_statistics_first(tmp_path):
    normalizer = Normalizer(2)
    spec = [tf.TensorSpec([None, 2], tf.float32)]
    reads = FixedSignatureFunction(lambda x: normalizer(x), spec)
    ignores = FixedSignatureFunction(lambda x: x * 2.0, spec)
    mean, variance = np.array([1.0, -1.0], np.float32), np.array([8.0, 2.0], np.float32)
    normalizer.stage(mean, variance, 3)
    ignores(np.zeros((1, 2), np.float32))
    assert normalizer.has_staged  # a graph that does not read the normalizer leaves it staged
    x = np.array([[3.0, 0.0]], np.float32)
    expected = np.clip((x - mean) / np.sqrt(variance / 4.0), -5.0, 5.0)
    np.testing.assert_allclose(reads(x).numpy(), expected, rtol=1e-6)
    assert not normalizer.has_staged
    # A checkpoint of the normalizer alone holds the staged statistics.
    normalizer.stage(mean * 2, variance * 2, 9)
    path = tf.train.Checkpoint(normalizer=normalizer).save(str(tmp_path / "norm"))
    restored = Normalizer(2)
    tf.train.Checkpoint(normalizer=restored).restore(path).assert_existing_objects_matched()
    np.testing.assert_array_equal(restored.running_mean.numpy(), mean * 2)
    np.testing.assert_array_equal(restored.running_variance.numpy(), variance * 2)
    assert int(restored.normalization_steps.numpy()) == 9
