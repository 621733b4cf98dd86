"""The build side's model runtime (mlagents.example_envs.sdk.inference) on exported policies: the
checks against a brain, refusals in one line, and decisions as the policy makes them."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from mlagents.envs.brain import BrainParameters
from mlagents.example_envs.sdk.academy import DecisionBatch
from mlagents.example_envs.sdk.inference import (
    ModelFormatError,
    ModelMismatchError,
    load_model_policy,
    parse_nn,
    read_nn,
)
from mlagents.example_envs.sdk.scene import BrainSpec, CameraResolution
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.tests.policy_helpers import small_ppo_params


def spec(vec, actions, space, stack=1, cameras=()):
    return BrainSpec(
        "Brain",
        vec,
        space,
        tuple(actions),
        num_stacked_vector_observations=stack,
        camera_resolutions=tuple(cameras),
    )


def exported(tmp_path, ppo_params, brain: BrainSpec, **overrides):
    """Export a PPO policy (initial weights, biases shifted so that outputs are non-trivial) for ``brain``."""
    resolutions = [
        {"height": c.height, "width": c.width, "blackAndWhite": c.gray_scale}
        for c in brain.camera_resolutions
    ]
    params = BrainParameters(
        brain.name,
        brain.vector_observation_size,
        brain.num_stacked_vector_observations,
        resolutions,
        list(brain.vector_action_size),
        [""] * len(brain.vector_action_size),
        brain.vector_action_space_type,
    )
    policy = PPOPolicy(
        0, params, ppo_params(model_path=str(tmp_path / "Brain"), **overrides), is_training=False
    )
    rng = np.random.default_rng(0)
    for variable in policy.model.trainable_variables:
        variable.assign(variable + rng.normal(0, 0.3, size=variable.shape).astype(np.float32))
    policy.export_model()
    return policy, str(tmp_path / "Brain.nn")


def batch_for(brain: BrainSpec, k, rng, masks=None, done=None):
    return DecisionBatch(
        agents=np.arange(k, dtype=np.int64) - 1000,
        vector_observations=rng.normal(
            size=(k, brain.vector_observation_size * brain.num_stacked_vector_observations)
        ).astype(np.float32),
        visual_observations=[
            rng.integers(0, 256, (k, c.height, c.width, 3), dtype=np.uint8) for c in brain.camera_resolutions
        ],
        rewards=np.zeros(k, np.float32),
        local_done=np.zeros(k, bool) if done is None else done,
        max_reached=np.zeros(k, bool),
        action_masks=masks,
        previous_vector_actions=np.zeros((k, brain.action_length), np.float32),
    )


@pytest.fixture(scope="module")
def discrete(tmp_path_factory):
    """One exported discrete policy shared by the tests of this module (building one costs seconds)."""
    tmp_path = tmp_path_factory.mktemp("discrete")

    def ppo_params(**overrides):
        return small_ppo_params(tmp_path, **{"max_steps": 100, "keep_checkpoints": 1, **overrides})

    brain = spec(4, [3, 2], "discrete", stack=2)
    return brain, *exported(tmp_path, ppo_params, brain, normalize=True)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            dict(vector_observation_size=5),
            "the model reads 8 vector observations, the brain sends 10 (5 x 2 stacked)",
        ),
        (
            dict(num_stacked_vector_observations=1),
            "the model reads 8 vector observations, the brain sends 4 (4 x 1 stacked)",
        ),
        (
            dict(vector_action_space_type="continuous", vector_action_size=(2,)),
            "the model has discrete actions, the brain continuous actions",
        ),
        (
            dict(vector_action_size=(3, 3)),
            "the model outputs 5 action values, the brain's action space needs 6",
        ),
        (
            dict(camera_resolutions=(CameraResolution(20, 20),)),
            "the model reads 0 visual observations, the brain has 1",
        ),
    ],
)
def test_a_model_of_another_brain_is_refused(discrete, change, message):
    brain, _, path = discrete
    other = dataclasses.replace(brain, **change)
    with pytest.raises(ModelMismatchError) as error:
        load_model_policy(path, other)
    assert str(error.value) == f"The model {path} does not fit brain 'Brain': {message}."


def test_files_that_are_no_model_are_refused(discrete, tmp_path):
    brain, _, path = discrete
    data = Path(path).read_bytes()
    with pytest.raises(ModelFormatError, match="version 17; this runtime reads version 16"):
        parse_nn((17).to_bytes(8, "little") + data[8:])
    with pytest.raises(ModelFormatError, match="ends too early"):
        parse_nn(data[:100])
    with pytest.raises(FileNotFoundError, match="There is no model file"):
        load_model_policy(str(tmp_path / "missing.nn"), brain)
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(ModelFormatError, match="is not a .nn file"):
        load_model_policy(str(tmp_path / "model.onnx"), brain)
    assert read_nn(path).version == 16


def test_discrete_decisions_follow_the_policy_and_the_masks(discrete):
    brain, policy, path = discrete
    model = load_model_policy(path, brain, seed=1)
    rng = np.random.default_rng(2)
    k = 4
    masks = np.zeros((k, 5), dtype=bool)
    masks[:, 0] = True  # action 0 of branch 0 is forbidden
    batch = batch_for(brain, k, rng, masks)
    values = model.run(model.feeds(batch))
    feed = {"vector_observation": batch.vector_observations, "action_masks": (~masks).astype(np.float32)}
    expected = policy._inference_fn(feed)["masked_log_probs"].numpy()
    np.testing.assert_allclose(values["action"].reshape(k, -1), expected, rtol=1e-4, atol=1e-4)
    draws = np.concatenate([model.decide(batch) for _ in range(300)])
    assert draws.shape == (300 * k, 2) and draws.dtype == np.float32
    assert set(draws[:, 0].tolist()) == {1.0, 2.0} and set(draws[:, 1].tolist()) == {0.0, 1.0}
    # the sampled frequencies follow the model's probabilities
    probs = np.exp(expected[0, 1:3]) / np.exp(expected[0, 1:3]).sum()
    freq = np.mean(np.concatenate([model.decide(batch)[:1, 0] for _ in range(2000)]) == 1.0)
    assert abs(freq - probs[0]) < 0.05


def test_continuous_recurrent_memories_per_agent(tmp_path, ppo_params):
    brain = spec(3, [2], "continuous")
    policy, path = exported(tmp_path, ppo_params, brain, use_recurrent=True, memory_size=8)
    model = load_model_policy(path, brain, seed=0)
    rng = np.random.default_rng(3)
    batch = batch_for(brain, 3, rng)
    first = model.decide(batch)
    assert first.shape == (3, 2) and np.all(np.abs(first) <= 1.0)
    memory = {agent: row.copy() for agent, row in model._agent_memory.items()}
    feed = {"vector_observation": batch.vector_observations, "recurrent_in": np.zeros((3, 8), np.float32)}
    expected = policy._inference_fn(feed, np.zeros((3, 2), np.float32))["memory_out"].numpy()
    np.testing.assert_allclose(
        np.stack([memory[int(a)] for a in batch.agents]), expected, rtol=1e-4, atol=1e-5
    )
    # an agent whose episode ended starts its next one with an empty memory
    model.decide(batch._replace(local_done=np.array([True, False, False])))
    assert int(batch.agents[0]) not in model._agent_memory and len(model._agent_memory) == 2
