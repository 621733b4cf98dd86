"""``RewardSignal.evaluate_batch``: the rewards of buffered steps, as an off-policy trainer
re-evaluates them on replayed mini-batches. For every signal, the rewards of steps stored in a real
``Buffer`` (the trainer's experience columns, moved to the update buffer, camera images kept as
their uint8 codes) equal what ``evaluate`` gave for the same transitions, before and after the
signal's first update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo
from mlagents.trainers.buffer import Buffer
from mlagents.trainers.components.reward_signals import RewardSignal, RewardSignalResult, transition_batch
from mlagents.trainers.ppo.trainer import PPOTrainer
from mlagents.trainers.tests.demo_files import write_demo
from mlagents.trainers.tests.policy_helpers import make_brain

AGENTS = ["a", "b", "c"]
STEPS = 6
EXTRINSIC = {"strength": 0.5, "gamma": 0.99}


def random_info(rng: np.random.Generator, brain: Any, done: bool = False) -> BrainInfo:
    """One step of the three agents: camera images of whole 8-bit levels (as a build's PNGs decode,
    so that the update buffer stores them as uint8 codes), random vector observations, rewards and
    previous actions."""
    n = len(AGENTS)
    continuous = brain.vector_action_space_type == "continuous"
    sizes = brain.vector_action_space_size
    if continuous:
        actions = rng.uniform(-1, 1, (n, sizes[0]))
    else:
        actions = np.stack([rng.integers(0, size, n) for size in sizes], axis=1).astype(float)
    cameras = [
        [rng.integers(0, 256, (r["height"], r["width"], 3)) / 255.0 for _ in AGENTS]
        for r in brain.camera_resolutions
    ]
    return BrainInfo(
        visual_observation=cameras,
        vector_observation=rng.normal(size=(n, brain.vector_observation_space_size)),
        text_observations=[""] * n,
        memory=np.zeros((0, 0)),
        reward=list(rng.normal(size=n)),
        agents=list(AGENTS),
        local_done=[done, False, done],
        vector_action=actions,
        text_action=[[] for _ in AGENTS],
        max_reached=[False] * n,
        action_mask=np.ones((n, 0 if continuous else sum(sizes))),
    )


def buffered_steps(trainer: PPOTrainer, infos: list[BrainInfo]) -> Buffer:
    """The transitions ``infos[t] -> infos[t + 1]`` of every agent in a Buffer, as an off-policy
    trainer stores them (the trainer's experience columns, the action taken, the environment's
    reward), moved to the update buffer: agent a's steps, then b's, then c's."""
    buffer = Buffer()
    for current, following in zip(infos, infos[1:]):
        columns = trainer.experience_columns(current, following, None, None)
        columns["actions"] = following.previous_vector_actions
        columns["environment_rewards"] = list(following.rewards or [])
        buffer.append_rows(AGENTS, columns, {"action_mask": 1})
    buffer.append_all_agent_batch_to_update_buffer(training_length=1)
    return buffer


def replayed(buffer: Buffer, index: np.ndarray) -> dict[str, np.ndarray]:
    """The steps ``index`` of the update buffer, camera images as stored (their codes)."""
    return {key: field.take(index, decode=False) for key, field in buffer.update_buffer.items()}


def assert_same_rewards(signal: RewardSignal, infos: list[BrainInfo], buffer: Buffer) -> RewardSignalResult:
    """evaluate_batch on a shuffled mini-batch of the buffered steps equals evaluate on the
    BrainInfos of the same steps; returns the batch result."""
    expected = [signal.evaluate(current, following) for current, following in zip(infos, infos[1:])]
    # Row of agent j at step t in the update buffer: j * STEPS + t.
    scaled = np.array([[result.scaled_reward[j] for j in range(len(AGENTS))] for result in expected]).T
    unscaled = np.array([[result.unscaled_reward[j] for j in range(len(AGENTS))] for result in expected]).T
    index = np.random.default_rng(9).permutation(len(AGENTS) * STEPS)
    result = signal.evaluate_batch(replayed(buffer, index))
    assert isinstance(result, RewardSignalResult)
    assert result.scaled_reward.dtype == result.unscaled_reward.dtype == np.float32
    assert result.unscaled_reward.shape == (len(index),)
    np.testing.assert_allclose(result.unscaled_reward, unscaled.ravel()[index], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(result.scaled_reward, scaled.ravel()[index], rtol=2e-5, atol=1e-6)
    return result


def make_trainer(ppo_params: Any, brain: Any, signals: dict[str, Any]) -> PPOTrainer:
    params = ppo_params(reward_signals={"extrinsic": EXTRINSIC, **signals})
    return PPOTrainer(brain, 1, params, True, False, 0, "run")


def episode(brain: Any, seed: int) -> list[BrainInfo]:
    rng = np.random.default_rng(seed)
    return [random_info(rng, brain, done=t == STEPS) for t in range(STEPS + 1)]


def test_extrinsic_rewards_of_buffered_steps_are_the_environment_rewards_scaled(ppo_params: Any) -> None:
    brain = make_brain("Brain", 3, [2], "continuous")
    trainer = make_trainer(ppo_params, brain, {})
    infos = episode(brain, 0)
    buffer = buffered_steps(trainer, infos)
    signal = trainer.policy.reward_signals["extrinsic"]
    result = assert_same_rewards(signal, infos, buffer)
    rewards = np.asarray(buffer.update_buffer["environment_rewards"])
    np.testing.assert_array_equal(result.scaled_reward, 0.5 * result.unscaled_reward)
    batch = signal.evaluate_batch({"environment_rewards": rewards})
    np.testing.assert_array_equal(batch.unscaled_reward, rewards.astype(np.float32))
    empty = signal.evaluate_batch({"environment_rewards": np.zeros(0)})
    assert empty.scaled_reward.shape == empty.unscaled_reward.shape == (0,)


def test_the_base_signal_gives_zeros_for_every_step() -> None:
    class NothingRewardSignal(RewardSignal):
        pass

    signal = NothingRewardSignal(None, None, 2.0, 0.5)  # type: ignore[arg-type]
    result = signal.evaluate_batch({"actions": np.ones((4, 2)), "done": np.zeros(4)})
    np.testing.assert_array_equal(result.scaled_reward, np.zeros(4))
    assert signal.evaluate_batch({}).unscaled_reward.shape == (0,)


@pytest.mark.parametrize(
    "space, cameras",
    [
        ("discrete", []),
        ("continuous", []),
        ("discrete", [(20, 24, False)]),
        ("continuous", [(20, 24, False)]),
    ],
    ids=["discrete", "continuous", "discrete-camera", "continuous-camera"],
)
def test_curiosity_rewards_of_buffered_steps_equal_evaluate(
    ppo_params: Any, space: str, cameras: list
) -> None:
    brain = make_brain("Brain", 3, [3, 2] if space == "discrete" else [2], space, cameras)
    trainer = make_trainer(
        ppo_params, brain, {"curiosity": {"strength": 0.5, "gamma": 0.9, "encoding_size": 6}}
    )
    infos = episode(brain, 1)
    buffer = buffered_steps(trainer, infos)
    for i in range(len(cameras)):
        for key in (f"visual_obs{i}", f"next_visual_obs{i}"):
            assert buffer.update_buffer[key][0].dtype == np.uint8, key
    signal = trainer.policy.reward_signals["curiosity"]
    # Before the first update: the surprise is there, the reward is 0, as with evaluate.
    before = assert_same_rewards(signal, infos, buffer)
    assert (before.unscaled_reward > 0).all() and not before.scaled_reward.any()
    mini_batch = replayed(buffer, np.arange(len(AGENTS) * STEPS))
    signal.update({**mini_batch, "masks": np.ones(len(AGENTS) * STEPS)}, len(AGENTS) * STEPS)
    after = assert_same_rewards(signal, infos, buffer)
    assert after.scaled_reward.any()
    np.testing.assert_allclose(after.scaled_reward, np.clip(0.5 * after.unscaled_reward, 0, 1), rtol=1e-6)


@pytest.mark.parametrize("space", ["discrete", "continuous"])
@pytest.mark.parametrize("use_actions", [False, True], ids=["observations", "with-actions"])
def test_gail_rewards_of_buffered_steps_equal_evaluate(
    ppo_params: Any, tmp_path: Path, space: str, use_actions: bool
) -> None:
    actions = [3, 2] if space == "discrete" else [2]
    brain = make_brain("Brain", 4, actions, space)
    demo = write_demo(tmp_path / "expert.demo", actions=actions, continuous=space == "continuous")
    gail = {"strength": 0.5, "gamma": 0.9, "demo_path": demo, "use_actions": use_actions}
    trainer = make_trainer(ppo_params, brain, {"gail": gail})
    infos = episode(brain, 2)
    buffer = buffered_steps(trainer, infos)
    # Some steps end an episode: the discriminator that reads the actions also reads ``done``.
    assert np.asarray(buffer.update_buffer["done"]).any()
    signal = trainer.policy.reward_signals["gail"]
    before = assert_same_rewards(signal, infos, buffer)
    assert not before.scaled_reward.any()
    signal.update(replayed(buffer, np.arange(len(AGENTS) * STEPS)), len(AGENTS) * STEPS)
    after = assert_same_rewards(signal, infos, buffer)
    np.testing.assert_allclose(after.scaled_reward, 0.5 * after.unscaled_reward, rtol=1e-6)
    assert after.scaled_reward.any()


def test_evaluate_reads_the_columns_of_the_transition(ppo_params: Any) -> None:
    """``transition_batch``: the buffer columns of a transition, as the trainer stores the step."""
    brain = make_brain("Brain", 3, [3, 2], "discrete", [(20, 24, False)])
    trainer = make_trainer(ppo_params, brain, {})
    current, following = episode(brain, 3)[:2]
    batch = transition_batch(current, following)
    stored = trainer.experience_columns(current, following, None, None)
    for key in ("vector_obs", "next_vector_in", "visual_obs0", "next_visual_obs0", "done"):
        np.testing.assert_array_equal(batch[key], np.asarray(stored[key]), err_msg=key)
    np.testing.assert_array_equal(batch["actions"], following.previous_vector_actions)
    np.testing.assert_array_equal(batch["environment_rewards"], np.float32(following.rewards))
