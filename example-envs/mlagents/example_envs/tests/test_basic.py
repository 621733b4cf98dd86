"""The Basic scene through LocalEnvironment. Its brain and random actions against the optimum:
test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.basic import Basic, walk_to_large_goal
from mlagents.example_envs.sdk.local import LocalEnvironment

BRAIN = "BasicLearning"
STAY, LEFT, RIGHT = 0, 1, 2


def act(value: int) -> dict[str, np.ndarray]:
    return {BRAIN: np.array([[value]], dtype=np.float32)}


def run_episode(env: LocalEnvironment, policy) -> tuple[float, int]:
    """Return and length of one episode under ``policy(position) -> action``."""
    batch = env.reset()[BRAIN]
    total, steps = 0.0, 0
    while True:
        position = int(batch.vector_observations[0].argmax())
        batch = env.step(act(policy(position)))[BRAIN]
        total += float(batch.rewards[0])
        steps += 1
        if batch.local_done[0]:
            return total, steps


def test_observation_is_one_hot_position_starting_at_ten():
    env = LocalEnvironment("Basic")
    batch = env.reset()[BRAIN]
    expected = np.zeros((1, 20), dtype=np.float32)
    expected[0, 10] = 1.0
    np.testing.assert_array_equal(batch.vector_observations, expected)
    assert batch.action_masks is None
    batch = env.step(act(LEFT))[BRAIN]
    assert batch.vector_observations[0].argmax() == 9
    batch = env.step(act(STAY))[BRAIN]
    assert batch.vector_observations[0].argmax() == 9


def test_optimal_policy_earns_0_93_per_episode():
    env = LocalEnvironment("Basic")
    one_hot = np.eye(20, dtype=np.float32)
    for _ in range(3):
        # The scene's heuristic is the optimal policy.
        total, steps = run_episode(env, lambda position: int(walk_to_large_goal(one_hot[[position]])[0, 0]))
        assert steps == 7
        assert total == pytest.approx(0.93, abs=1e-5)


def test_small_goal_and_reward_constants():
    env = LocalEnvironment("Basic")
    env.reset()
    rewards = [float(env.step(act(LEFT))[BRAIN].rewards[0]) for _ in range(3)]
    assert rewards == pytest.approx([-0.01, -0.01, 0.09], abs=1e-6)
    batch = env.step(act(RIGHT))[BRAIN]
    assert not batch.local_done[0]

    env.reset()
    for _ in range(6):
        assert env.step(act(RIGHT))[BRAIN].rewards[0] == pytest.approx(-0.01)
    last = env.step(act(RIGHT))[BRAIN]
    assert last.rewards[0] == pytest.approx(0.99)
    assert last.local_done[0] and not last.max_reached[0]
    # The done info carries the first observation of the next episode (back at 10).
    assert last.vector_observations[0].argmax() == 10


def test_no_time_limit_and_unknown_actions_do_not_move():
    env = LocalEnvironment("Basic")
    env.reset()
    for _ in range(300):
        batch = env.step(act(STAY))[BRAIN]
        assert not batch.local_done[0]
    batch = env.step({BRAIN: np.array([[7.0]], dtype=np.float32)})[BRAIN]
    assert batch.vector_observations[0].argmax() == 10


def test_training_mode_decides_every_physics_step_inference_every_ninth():
    env = LocalEnvironment(Basic, train_mode=True)
    env.reset()
    before = env.academy.total_step_count
    env.step(act(STAY))
    assert env.academy.total_step_count - before == 1

    env = LocalEnvironment(Basic, train_mode=False)
    env.reset()
    counts = [env.academy.total_step_count]
    for _ in range(3):
        env.step(act(STAY))
        counts.append(env.academy.total_step_count)
    # 0.15 s between decisions with a timer advanced by 0.02 s per undecided step: every 9th step.
    assert np.diff(counts).tolist() == [9, 9, 9]
