"""Every SAC policy is exported like PPO's: the ``.onnx`` file run by onnxruntime and the ``.nn``
file run by the build side's runtime (:mod:`mlagents.example_envs.sdk.inference`, what the inference
brain of a build uses) give the policy's own outputs, and a short ``mlagents-learn`` SAC run on the
real 3DBall build writes both files, the build playing the ``.nn`` one.

What the exported policy computes (for a policy with memory, the memory is the policy LSTM's
``[c | h]``, the last quarter of the ``[value | Q1 | Q2 | policy]`` memory the trainer keeps):

* ``.nn`` continuous: ``action = tanh(mu + exp(clip(log_std, -20, 2)) * epsilon)`` for the input
  ``epsilon`` (the runtime feeds standard-normal noise, as for PPO), ``action_probs`` its
  log-density per dimension (their sum is the policy's ``log_prob``); discrete: ``action`` the masked
  log-probabilities, ``action_probs`` the logits;
* ``.onnx`` continuous: ``action = tanh(mu)`` (deterministic, as PPO's), ``action_mean = mu``,
  ``action_log_std``; discrete: ``action`` the most probable allowed action of each branch,
  ``action_log_probs`` the masked log-probabilities.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlagents.envs.brain import BrainParameters
from mlagents.envs.environment import UnityEnvironment
from mlagents.example_envs.sdk import inference
from mlagents.example_envs.sdk.specs import BrainSpec, CameraResolution
from mlagents.trainers.sac.policy import SACPolicy
from mlagents.trainers.tests.episode_helpers import episode_rewards
from mlagents.trainers.tests.learn_helpers import (
    BUILDS,
    SHIPPED_SAC_CONFIG,
    LearnProcess,
    assert_nothing_left,
    finish_ok,
    learn_args,
    shipped_config,
)
from mlagents.trainers.tests.policy_helpers import make_brain

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

TOLERANCE = dict(rtol=2e-4, atol=2e-5)
AGENTS = 5
MEMORY_SIZE = 32  # four LSTM states of 8 values: the exported policy memory holds 8

# name: (brain, SAC settings changed)
CASES: dict[str, tuple[BrainParameters, dict[str, Any]]] = {
    "discrete-vector": (make_brain("Grid", 6, [3, 2], "discrete"), {}),
    "continuous-vector": (make_brain("Ball", 8, [2], "continuous"), {}),
    "discrete-camera-recurrent": (
        make_brain("Hallway", 5, [4, 3], "discrete", cameras=[(20, 20, False)]),
        {"use_recurrent": True},
    ),
    "continuous-camera": (
        make_brain("Visual", 3, [2], "continuous", cameras=[(20, 20, True), (20, 24, False)]),
        {"vis_encode_type": "resnet"},
    ),
    "continuous-recurrent": (make_brain("Crawler", 6, [3], "continuous"), {"use_recurrent": True}),
    "discrete-camera-only": (make_brain("Eyes", 0, [3], "discrete", cameras=[(20, 20, False)]), {}),
}


def randomized_sac_policy(brain: BrainParameters, folder: Path, **changes: Any) -> SACPolicy:
    """A SAC policy (2 layers of 12 units, normalized observations, not training) whose weights are
    moved by N(0, 0.1) noise and whose normalizer statistics are arbitrary, so that a wrongly
    exported layer cannot pass by accident."""
    settings = {
        "trainer": "sac",
        "batch_size": 8,
        "buffer_size": 64,
        "buffer_init_steps": 0,
        "hidden_units": 12,
        "init_entcoef": 0.5,
        "learning_rate": 3e-4,
        "max_steps": 100,
        "memory_size": MEMORY_SIZE,
        "normalize": True,
        "num_layers": 2,
        "num_update": 1,
        "sequence_length": 4,
        "tau": 0.005,
        "use_recurrent": False,
        "time_horizon": 8,
        "summary_freq": 100,
        "model_path": str(folder / "models" / "run-0" / brain.brain_name),
        "summary_path": str(folder / "summaries"),
        "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.99}},
        **changes,
    }
    policy = SACPolicy(0, brain, settings, is_training=False)
    model = policy.model
    rng = np.random.default_rng(1)
    for variable in model.policy_variables:
        variable.assign(variable + rng.normal(0, 0.1, size=variable.shape).astype(np.float32))
    if model.normalizer is not None:
        size = model.vec_obs_size
        model.normalizer.running_mean.assign(rng.normal(0, 1, size=size).astype(np.float32))
        model.normalizer.running_variance.assign(rng.uniform(5, 50, size=size).astype(np.float32))
        model.normalizer.normalization_steps.assign(37)
    policy.weights_changed()
    return policy


def build_spec(brain: BrainParameters) -> BrainSpec:
    """The build side's description of ``brain`` (what a build checks a model against)."""
    return BrainSpec(
        name=brain.brain_name,
        vector_observation_size=brain.vector_observation_space_size,
        vector_action_space_type=brain.vector_action_space_type,
        vector_action_size=tuple(brain.vector_action_space_size),
        num_stacked_vector_observations=brain.num_stacked_vector_observations,
        camera_resolutions=tuple(
            CameraResolution(c["width"], c["height"], c["blackAndWhite"]) for c in brain.camera_resolutions
        ),
    )


def random_inputs(policy: SACPolicy, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random values of every input of the policy's signature for ``AGENTS`` agents: observations,
    masks forbidding one action of two agents, previous actions and the whole trainer memory."""
    model = policy.model
    feed: dict[str, np.ndarray] = {}
    for name, spec in model.input_signature().items():
        shape = (AGENTS, *spec.shape[1:])
        if name.startswith("visual_observation_"):
            feed[name] = rng.random(shape).astype(np.float32)  # pixels in [0, 1]
        elif name == "action_masks":
            feed[name] = np.ones(shape, np.float32)
            feed[name][0, 0] = feed[name][1, -1] = 0.0
        elif name == "prev_action":
            feed[name] = np.stack([rng.integers(0, size, AGENTS) for size in model.act_size], 1).astype(
                np.int32
            )
        else:  # vector observations (beyond the normalizer's clipping too) and memories
            feed[name] = rng.normal(0, 3, size=shape).astype(np.float32)
    return feed


def policy_outputs(policy: SACPolicy, feed: dict[str, np.ndarray], epsilon: np.ndarray) -> dict[str, Any]:
    """The policy network's own outputs (numpy) for ``feed`` and the noise ``epsilon``."""
    out = policy.model.inference(feed, epsilon if policy.model.is_continuous else None)
    return {key: value.numpy() for key, value in out.items() if key not in ("values",)}


def policy_memory(policy: SACPolicy, memory: np.ndarray) -> np.ndarray:
    """The policy LSTM's part of the trainer memory ``[value | Q1 | Q2 | policy]``."""
    return memory[:, 3 * policy.model.part_memory :]


def check_nn(policy: SACPolicy, feed: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    model = policy.model
    nn = inference.read_nn(policy.model_path + ".nn")
    runner = inference.ModelPolicy(nn, build_spec(policy.brain), source="the export")  # the build's checks
    assert nn.constant("version_number") == 2.0
    assert nn.constant("is_continuous_control") == float(model.is_continuous)
    assert nn.constant("memory_size") == float(model.part_memory if model.use_recurrent else 0)
    expected_outputs = model.act_size[0] if model.is_continuous else sum(model.act_size)
    assert nn.constant("action_output_shape") == float(expected_outputs)
    assert {"action", "action_probs"} <= set(nn.outputs)
    n = AGENTS
    feeds = {key: value for key, value in feed.items() if key.startswith("visual_observation_")}
    if "vector_observation" in feed:
        feeds["vector_observation"] = feed["vector_observation"].reshape(n, 1, 1, -1)
    for key in ("action_masks", "prev_action"):
        if key in feed:
            feeds[key] = feed[key].astype(np.float32).reshape(n, 1, 1, -1)
    width = model.act_size[0] if model.is_continuous else 1
    epsilon = rng.normal(size=(n, width)).astype(np.float32)
    if model.is_continuous:
        feeds["epsilon"] = epsilon.reshape(n, 1, 1, -1)
    assert set(feeds) == set(nn.inputs), (sorted(feeds), sorted(nn.inputs))
    memory = policy_memory(policy, feed["recurrent_in"]) if model.use_recurrent else None
    values = runner.run(feeds, memory)
    expected = policy_outputs(policy, feed, epsilon)
    action = values["action"].reshape(n, -1)
    action_probs = values["action_probs"].reshape(n, -1)
    if model.is_continuous:
        np.testing.assert_allclose(action, expected["action"], **TOLERANCE)
        # Where tanh saturates, -log(1 - a^2 + 1e-6) turns the last bits of a into whole units.
        conditioned = (1.0 - np.square(expected["action"])).min(axis=1) > 1e-3
        assert conditioned.sum() >= 2, expected["action"]
        np.testing.assert_allclose(
            action_probs.sum(axis=1)[conditioned], expected["log_prob"][conditioned], rtol=2e-4, atol=2e-4
        )
    else:
        np.testing.assert_allclose(action, expected["log_probs"], rtol=2e-4, atol=2e-4)
        np.testing.assert_allclose(action_probs, expected["logits"], **TOLERANCE)
    if model.use_recurrent:
        assert memory is not None and memory.shape[1] == model.part_memory == runner.memory_size
        np.testing.assert_allclose(
            runner.memory_out(values), policy_memory(policy, expected["memory_out"]), **TOLERANCE
        )
    else:
        assert nn.memories == []


def check_onnx(policy: SACPolicy, feed: dict[str, np.ndarray]) -> None:
    model = policy.model
    path = policy.model_path + ".onnx"
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    metadata = {p.key: p.value for p in proto.metadata_props}
    assert metadata["version_number"] == "2"
    assert metadata["memory_size"] == str(model.part_memory if model.use_recurrent else 0)
    assert metadata["is_continuous_control"] == str(int(model.is_continuous))
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {key: value for key, value in feed.items() if key != "recurrent_in"}
    if "prev_action" in feeds:
        feeds["prev_action"] = feeds["prev_action"].astype(np.int64)
    if model.use_recurrent:
        feeds["recurrent_in"] = policy_memory(policy, feed["recurrent_in"])
    assert {i.name for i in session.get_inputs()} == set(feeds)
    names = [o.name for o in session.get_outputs()]
    got = dict(zip(names, session.run(names, feeds)))
    width = model.act_size[0] if model.is_continuous else 1
    expected = policy_outputs(policy, feed, np.zeros((AGENTS, width), np.float32))  # no noise: the mean
    if model.is_continuous:
        assert {"action", "action_mean", "action_log_std"} <= set(names)
        np.testing.assert_allclose(got["action"], expected["action"], **TOLERANCE)
        np.testing.assert_allclose(got["action"], np.tanh(expected["mu"]), **TOLERANCE)
        np.testing.assert_allclose(got["action_mean"], expected["mu"], **TOLERANCE)
        np.testing.assert_allclose(got["action_log_std"], expected["log_std"], **TOLERANCE)
    else:
        assert {"action", "action_log_probs"} <= set(names)
        log_probs = expected["log_probs"]
        np.testing.assert_allclose(got["action_log_probs"], log_probs, rtol=2e-4, atol=2e-4)
        bounds = np.cumsum([0, *model.act_size])
        greedy = [log_probs[:, s:e].argmax(axis=1) for s, e in zip(bounds[:-1], bounds[1:])]
        np.testing.assert_array_equal(got["action"], np.stack(greedy, axis=1).astype(np.float32))
    # The critic is not part of the exported policy.
    assert "value_estimate" not in got
    if model.use_recurrent:
        expected_memory = policy_memory(policy, expected["memory_out"])
        np.testing.assert_allclose(got["recurrent_out"], expected_memory, **TOLERANCE)
    else:
        assert "recurrent_out" not in got


# The networks with LSTMs or convolutions take a second or more to build.
SLOW_CASES = {"discrete-camera-recurrent", "continuous-camera", "continuous-recurrent"}


@pytest.mark.parametrize(
    "case", [pytest.param(case, marks=[pytest.mark.slow] if case in SLOW_CASES else []) for case in CASES]
)
def test_exported_files_give_the_policy_outputs(case, tmp_path, caplog):
    brain, changes = CASES[case]
    policy = randomized_sac_policy(brain, tmp_path, **changes)
    with caplog.at_level("INFO", logger="mlagents.trainers"):
        policy.export_model()
    messages = [record.getMessage() for record in caplog.records]
    assert [m for m in messages if m.startswith("Exported")] == [
        f"Exported {policy.model_path}.nn file",
        f"Exported {policy.model_path}.onnx file",
    ]
    assert not [record for record in caplog.records if record.levelname == "WARNING"], messages
    rng = np.random.default_rng(7)
    feed = random_inputs(policy, rng)
    check_nn(policy, feed, rng)
    check_onnx(policy, feed)


# ---------------------------------------------------------------------- mlagents-learn on 3DBall

BALL = BUILDS / "3DBall.x86_64"
BALL_BRAIN = "3DBallLearning"


@pytest.mark.slow
@pytest.mark.skipif(not BALL.exists(), reason="the 3DBall build is missing")
@pytest.mark.timeout(180)
def test_learn_exports_continuous_sac_and_the_build_plays_it(tmp_path, free_port_range):
    config = shipped_config(BALL_BRAIN, source=SHIPPED_SAC_CONFIG, max_steps=300, summary_freq=100)
    (tmp_path / "config.yaml").write_text(config)
    port = free_port_range(2)
    run = LearnProcess(tmp_path, *learn_args(BALL, base_port=port, run_id="sac", seed=3))
    output = finish_ok(run, [port], timeout=120)
    model_dir = tmp_path / "models" / "sac-0"
    for extension in (".nn", ".onnx"):
        assert (model_dir / f"{BALL_BRAIN}{extension}").is_file()
        assert f"Exported ./models/sac-0/{BALL_BRAIN}{extension} file" in output
    assert "not exported" not in output

    model = model_dir / f"{BALL_BRAIN}.nn"
    env = UnityEnvironment(
        str(BALL),
        worker_id=0,
        base_port=port + 1,
        seed=5,
        no_graphics=True,
        args=["--model", f"{BALL_BRAIN}={model}", "--broadcast", BALL_BRAIN],
    )
    try:
        assert env.external_brain_names == []
        info = env.reset(train_mode=True)[BALL_BRAIN]
        rewards = episode_rewards(env, BALL_BRAIN, None, 2)
        played = env.step()[BALL_BRAIN]
    finally:
        env.close()
    assert_nothing_left([port, port + 1])
    agents = len(info.agents)
    assert agents == 12 and len(rewards) == 2 * agents
    assert all(math.isfinite(reward) for reward in rewards)
    # The model acted: squashed actions in (-1, 1) that differ between agents.
    actions = np.asarray(played.previous_vector_actions)
    assert actions.shape == (agents, 2) and np.all(np.abs(actions) < 1.0) and actions.std() > 0
    # The ONNX file runs on the build's observations: the deterministic action tanh(mean).
    session = ort.InferenceSession(str(model_dir / f"{BALL_BRAIN}.onnx"), providers=["CPUExecutionProvider"])
    observations = np.asarray(info.vector_observations, dtype=np.float32)
    action, mean = session.run(["action", "action_mean"], {"vector_observation": observations})
    assert action.shape == (agents, 2)
    np.testing.assert_allclose(action, np.tanh(mean), rtol=1e-5, atol=1e-6)
