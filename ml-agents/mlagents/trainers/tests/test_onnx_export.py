"""The exported ``.onnx`` file run in onnxruntime gives the TensorFlow policy's outputs."""

import logging

import numpy as np
import pytest

from mlagents.trainers import export
from mlagents.trainers.tests.policy_helpers import make_brain, randomized_policy

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

TOLERANCE = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture
def make_policy(tmp_path, ppo_params):
    """A PPO policy with non-trivial weights and normalizer statistics and its model folder under
    ``tmp_path``."""

    def make(b, **overrides):
        settings = dict(
            hidden_units=12,
            num_layers=2,
            model_path=str(tmp_path / "models" / "run-0" / b.brain_name),
        )
        settings.update(overrides)
        return randomized_policy(b, ppo_params(**settings))

    return make


def session(policy):
    policy.export_model()
    path = policy.model_path + ".onnx"
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]), proto


def feeds_for(policy, rng, n=5):
    model = policy.model
    feed = {}
    if model.vec_obs_size:
        feed["vector_observation"] = rng.normal(0, 3, size=(n, model.vec_obs_size)).astype(np.float32)
    for i, (h, w, c) in enumerate(model.vis_obs_shapes):
        feed[f"visual_observation_{i}"] = rng.random((n, h, w, c)).astype(np.float32)
    if not model.is_continuous:
        masks = np.ones((n, sum(model.act_size)), dtype=np.float32)
        masks[0, 0] = 0
        masks[1, -1] = 0
        feed["action_masks"] = masks
        if model.use_recurrent:
            feed["prev_action"] = rng.integers(0, min(model.act_size), size=(n, len(model.act_size))).astype(
                np.int32
            )
    if model.use_recurrent:
        feed["recurrent_in"] = rng.normal(size=(n, model.m_size)).astype(np.float32)
    return feed


def onnx_feeds(feed):
    return {k: (v.astype(np.int64) if k == "prev_action" else v) for k, v in feed.items()}


def check(policy, rng, n=5):
    sess, proto = session(policy)
    feed = feeds_for(policy, rng, n)
    names = [o.name for o in sess.get_outputs()]
    got = dict(zip(names, sess.run(names, onnx_feeds(feed))))
    model = policy.model
    metadata = {p.key: p.value for p in proto.metadata_props}
    assert metadata["version_number"] == "2" and metadata["memory_size"] == str(model.m_size)
    if model.is_continuous:
        expected = policy._inference_fn(feed, np.zeros((n, model.act_size[0]), np.float32))
        mu = model.forward(feed, 1)["mu"].numpy()
        np.testing.assert_allclose(got["action"], expected["action"].numpy(), **TOLERANCE)
        np.testing.assert_allclose(got["action_mean"], mu, **TOLERANCE)
        np.testing.assert_allclose(got["log_sigma_squared"], model.log_sigma_squared.numpy(), **TOLERANCE)
    else:
        expected = policy._inference_fn(feed)
        log_probs = expected["masked_log_probs"].numpy()
        np.testing.assert_allclose(got["action_log_probs"], log_probs, **TOLERANCE)
        start, greedy = 0, []
        for size in model.act_size:
            greedy.append(log_probs[:, start : start + size].argmax(axis=1))
            start += size
        np.testing.assert_array_equal(got["action"], np.stack(greedy, axis=1).astype(np.float32))
    np.testing.assert_allclose(got["value_estimate"][:, 0], expected["value"].numpy(), **TOLERANCE)
    if model.use_recurrent:
        np.testing.assert_allclose(got["recurrent_out"], expected["memory_out"].numpy(), **TOLERANCE)
    else:
        assert "recurrent_out" not in got
    return sess


def test_discrete_policy(make_policy):
    sess = check(
        make_policy(make_brain("Grid", 6, [3, 2], "discrete"), normalize=True), np.random.default_rng(2)
    )
    assert [i.name for i in sess.get_inputs()] == ["vector_observation", "action_masks"]
    assert [o.name for o in sess.get_outputs()] == ["action", "action_log_probs", "value_estimate"]
    assert sess.get_inputs()[0].shape == ["batch", 6]


def test_continuous_policy(make_policy):
    sess = check(
        make_policy(make_brain("Ball", 8, [2], "continuous"), normalize=True), np.random.default_rng(3)
    )
    assert [i.name for i in sess.get_inputs()] == ["vector_observation"]
    assert [o.name for o in sess.get_outputs()] == [
        "action",
        "action_mean",
        "log_sigma_squared",
        "value_estimate",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("encoder", ["simple", "resnet"])
def test_visual_policy(make_policy, encoder):
    # nature_cnn differs from simple only in its layer sizes (the .nn tests run it)
    size = {"simple": 24, "resnet": 20}[encoder]
    b = make_brain("Visual", 3, [2], "continuous", cameras=[(size, size, True), (size, size + 4, False)])
    sess = check(make_policy(b, vis_encode_type=encoder, num_layers=1), np.random.default_rng(8), n=3)
    inputs = {i.name: i.shape for i in sess.get_inputs()}
    assert inputs["visual_observation_0"] == ["batch", size, size, 1]
    assert inputs["visual_observation_1"] == ["batch", size, size + 4, 3]


@pytest.mark.slow
def test_recurrent_discrete_visual_policy(make_policy):
    b = make_brain("Hallway", 5, [4, 3], "discrete", cameras=[(24, 24, False)])
    sess = check(make_policy(b, use_recurrent=True, memory_size=16, normalize=True), np.random.default_rng(5))
    names = [i.name for i in sess.get_inputs()]
    assert names == [
        "vector_observation",
        "visual_observation_0",
        "prev_action",
        "recurrent_in",
        "action_masks",
    ]


def test_recurrent_continuous_policy(make_policy):
    b = make_brain("Crawler", 6, [3], "continuous")
    sess = check(make_policy(b, use_recurrent=True, memory_size=16, normalize=True), np.random.default_rng(7))
    assert [o.name for o in sess.get_outputs()][-1] == "value_estimate"
    assert {i.name: i.shape for i in sess.get_inputs()}["recurrent_in"] == ["batch", 16]


def test_export_without_onnx_writes_the_nn_and_says_so(make_policy, monkeypatch, caplog):
    def missing(weights, path):
        raise export.OnnxUnavailable(
            "The ONNX export needs the onnx package: pip install -e './ml-agents[onnx]'."
        )

    monkeypatch.setitem(export.WRITERS, ".onnx", missing)
    monkeypatch.setattr(export, "_skipped_logged", set())
    policy = make_policy(make_brain("Ball", 3, [2], "continuous"))
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        policy.export_model()
        policy.export_model()
    skipped = [r.getMessage() for r in caplog.records if "Skipped" in r.getMessage()]
    assert skipped == [
        "Skipped the .onnx file: The ONNX export needs the onnx package: pip install -e './ml-agents[onnx]'."
    ]
    assert (policy.model_path + ".nn").endswith(".nn")
    import os

    assert os.path.exists(policy.model_path + ".nn") and not os.path.exists(policy.model_path + ".onnx")
