"""Hallway: observation layout, rays, the reset's randomisation, physics rules and rewards. Its
brain, the shortest path against the benchmark, determinism, the build over gRPC and two workers:
test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.hallway import Hallway, HallwayWorld
from mlagents.example_envs.sdk.local import LocalEnvironment

BRAIN = "HallwayLearning"
RAY = 7  # floats per ray: 5 tags, nothing-hit, distance


def newest(batch) -> np.ndarray:
    """The newest of the three stacked 36-float frames."""
    return batch.vector_observations[:, -36:]


def test_observation_layout_and_episode_clock() -> None:
    env = LocalEnvironment("Hallway", seed=0)
    batch = env.reset()[BRAIN]
    assert batch.vector_observations.shape == (16, 108)
    assert np.all(batch.vector_observations[:, :72] == 0.0)  # older frames zero-filled at reset
    obs = newest(batch)
    assert np.all(obs[:, 0] == 0.0)
    rays = obs[:, 1:].reshape(16, 5, RAY)
    tags, nothing, distance = rays[..., :5], rays[..., 5], rays[..., 6]
    # each ray: exactly one tag with a distance in (0, 1], or the nothing-hit flag
    assert np.all(tags.sum(-1) + nothing == 1.0)
    assert np.all((distance > 0) == (tags.sum(-1) == 1)) and np.all(distance <= 1.0)
    for step in range(1, 4):
        batch = env.step({BRAIN: np.zeros((16, 1), np.float32)})[BRAIN]
        np.testing.assert_allclose(newest(batch)[:, 0], 6 * step / 3000, rtol=1e-6)
        np.testing.assert_allclose(batch.rewards, -6 / 3000, rtol=1e-5)


def test_rays_see_the_shown_block_straight_ahead() -> None:
    env = LocalEnvironment("Hallway", seed=5)
    env.reset()
    scene: Hallway = env.academy.scene
    areas = np.arange(16)
    block = np.where((scene.selection == 0)[:, None], scene.orange_block, scene.red_block)
    # 5 m in front of the block's centre, facing +z: the cast sphere touches its face after 3 m
    scene.world.place_agents(areas, block - [0.0, 1.0, 5.0], np.zeros(16))
    obs = newest(env.step({BRAIN: np.zeros((16, 1), np.float32)})[BRAIN])
    ahead = obs[:, 1 + 2 * RAY : 1 + 3 * RAY]  # third ray: 90 degrees
    expected_tag = np.where(scene.selection == 0, 2, 3)  # orangeBlock, redBlock
    np.testing.assert_array_equal(ahead[np.arange(16), expected_tag], 1.0)
    np.testing.assert_allclose(ahead[:, 6], 3.0 / 12.0, atol=1e-4)


def test_reset_randomises_block_goals_and_agent_as_the_spec_says() -> None:
    env = LocalEnvironment("Hallway", seed=2)
    env.reset()
    scene: Hallway = env.academy.scene
    selections, goal_sides, agents = [], [], []
    for _ in range(8):
        scene.agent_reset(np.arange(16))
        local_block = (
            np.where((scene.selection == 0)[:, None], scene.orange_block, scene.red_block) - scene.origins
        )
        hidden = (
            np.where((scene.selection == 0)[:, None], scene.red_block, scene.orange_block) - scene.origins
        )
        assert np.all(np.abs(local_block[:, 1] - 2.0) < 1e-9) and np.all(hidden[:, 1] == -1000.0)
        assert np.all(np.abs(local_block[:, 2] + 12.3) <= 5.0)
        assert np.all(local_block[scene.selection == 1, 0] == 0.0)  # red is never shifted sideways
        assert np.all(np.abs(local_block[:, 0]) <= 3.0)
        local_agent = scene.world.agent_positions - scene.origins
        assert np.all(np.abs(local_agent[:, 0]) <= 3.0) and np.all(np.abs(local_agent[:, 2] + 27.3) <= 5.0)
        selections.append(scene.selection.copy())
        goal_sides.append(scene.orange_goal_right.copy())
        agents.append(local_agent)
        orange_goal, red_goal = scene.goal_positions()
        np.testing.assert_allclose(np.abs(orange_goal[:, 0] - scene.origins[:, 0]), 7.0)
        np.testing.assert_allclose(
            orange_goal[:, 0] + red_goal[:, 0] - 2 * scene.origins[:, 0], 0.0, atol=1e-9
        )
    assert 0.3 < np.mean(selections) < 0.7 and 0.3 < np.mean(goal_sides) < 0.7


def test_movement_follows_unity_velocity_change_drag_and_floor_friction() -> None:
    world = HallwayWorld(1)
    world.place_agents(np.array([0]), world.origins + [0.0, 1.0, -27.3], np.array([90.0]))
    world.add_velocity(np.array([0]), np.array([[1.5, 0.0, 0.0]]))
    world.step()
    # v = (0 + 1.5) * (1 - 2 * 0.02) - 0.6 * 19.62 * 0.02
    expected = 1.5 * 0.96 - 0.6 * 2 * 9.81 * 0.02
    np.testing.assert_allclose(world.agent_velocities[0], [expected, 0.0, 0.0], atol=1e-9)
    assert world.agent_positions[0, 0] == pytest.approx(expected * 0.02, abs=1e-9)
    for _ in range(10):
        world.step()
    np.testing.assert_allclose(world.agent_velocities[0], 0.0, atol=1e-12)  # friction stops it


def test_walls_stop_the_agent() -> None:
    world = HallwayWorld(1)
    world.place_agents(np.array([0]), world.origins + [0.0, 1.0, -20.0], np.array([90.0]))
    for _ in range(100):
        world.add_velocity(np.array([0]), np.array([[1.5, 0.0, 0.0]]))
        world.step()
    # the right wall's inner face is at x = 9.5; the agent (half 0.5) stays inside
    assert 8.5 < world.agent_positions[0, 0] < 9.1


@pytest.mark.parametrize("correct", [True, False])
def test_goal_rewards_replace_the_step_penalties(correct: bool) -> None:
    env = LocalEnvironment("Hallway", seed=4)
    env.reset()
    scene: Hallway = env.academy.scene
    orange_goal, red_goal = scene.goal_positions()
    right_goal = np.where((scene.selection == 0)[:, None], orange_goal, red_goal)
    wrong_goal = np.where((scene.selection == 0)[:, None], red_goal, orange_goal)
    target = right_goal if correct else wrong_goal
    scene.world.place_agents(np.arange(16), target * [1, 0, 1] + [0.0, 1.0, -5.0], np.zeros(16))
    forward = np.ones((16, 1), np.float32)
    for _ in range(4):  # about 2 m to go from rest: three decisions
        batch = env.step({BRAIN: forward})[BRAIN]
        if batch.local_done.any():
            break
    assert batch.local_done.all() and not batch.max_reached.any()
    base = 1.0 if correct else -0.1
    # SetReward(base) at the collision, then -1/3000 for each remaining physics step of the decision
    assert np.all(batch.rewards <= base + 1e-6) and np.all(batch.rewards >= base - 5 / 3000 - 1e-6)
    assert np.all(newest(batch)[:, 0] == 0.0)  # the done info carries the next episode's first frame
