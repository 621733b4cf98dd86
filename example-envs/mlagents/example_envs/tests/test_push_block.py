"""PushBlock: reset rules and parameters, physics rules, rewards. Its brain, the push toward the
goal against the benchmark, determinism, the build over gRPC and two workers:
test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.push_block import PushBlock, PushBlockWorld, goal_axes
from mlagents.example_envs.sdk.local import LocalEnvironment

BRAIN = "PushBlockLearning"
N = 32
RAY = 5  # floats per ray: block, goal, wall, nothing-hit, distance


def newest(batch) -> np.ndarray:
    """The newest of the three stacked 70-float frames."""
    return batch.vector_observations[:, -70:]


def test_observation_layout_and_the_high_sweep_passes_over_the_block() -> None:
    env = LocalEnvironment("PushBlock", seed=0)
    batch = env.reset()[BRAIN]
    assert batch.vector_observations.shape == (N, 210)
    assert np.all(batch.vector_observations[:, :140] == 0.0)
    rays = newest(batch).reshape(N, 2, 7, RAY)
    tags, nothing, distance = rays[..., :3], rays[..., 3], rays[..., 4]
    assert np.all(tags.sum(-1) + nothing == 1.0)  # everything in the area is tagged
    assert np.all((distance > 0) == (tags.sum(-1) == 1)) and np.all(distance <= 1.0)
    assert np.all(rays[:, 1, :, 0] == 0.0)  # 1.5 higher the rays pass over the block

    scene: PushBlock = env.academy.scene
    toward, _ = goal_axes(scene.world)
    # stand 4 m from the block on the far side from the goal, facing the goal: the low
    # ray at 90 degrees touches the block after 4 - 1 - 0.5 m; the high one sees the goal
    block = scene.world.block_positions
    scene.world.place_agents(np.arange(N), block * [1, 0, 1] + [0, 1.0, 0] - 4.0 * toward)
    scene.world.turn(np.arange(N), scene.world.area_yaws - scene.world.agent_yaws)
    rays = newest(env.step({BRAIN: np.zeros((N, 1), np.float32)})[BRAIN]).reshape(N, 2, 7, RAY)
    low_ahead, high_ahead = rays[:, 0, 2], rays[:, 1, 2]
    np.testing.assert_array_equal(low_ahead[:, 0], 1.0)
    np.testing.assert_allclose(low_ahead[:, 4], 2.5 / 12.0, atol=1e-4)
    assert np.all(high_ahead[:, 0] == 0.0) and np.all(high_ahead[:, 1] + high_ahead[:, 3] == 1.0)


def test_reset_turns_the_area_and_spawns_clear_of_everything() -> None:
    env = LocalEnvironment("PushBlock", seed=3)
    env.reset()
    scene: PushBlock = env.academy.scene
    w = scene.world
    areas = np.arange(N)
    yaw_steps, goal_sides = [], []
    for _ in range(6):
        area_before, agent_before = w.area_yaws.copy(), w.agent_yaws.copy()
        scene.agent_reset(areas)
        turned = (w.area_yaws - area_before) % 360.0
        assert np.all(np.isin(turned, [0.0, 90.0, 180.0, 270.0]))
        np.testing.assert_allclose((w.agent_yaws - agent_before) % 360.0, turned)  # the agent turns along
        yaw_steps.append(turned)
        goal_sides.append(w.area_yaws.copy())
        toward, across = goal_axes(w)
        for position in (w.block_positions - scene.origins, w.agent_positions - scene.origins):
            assert np.all(np.abs(position[:, [0, 2]]) <= 6.25)
            assert np.all((position * toward).sum(1) <= 5.0 + 1e-9)  # the spawn box stays off the goal
        # the agent's 2.5 x 2.5 spawn square was clear of the block (placed first)
        gap = np.abs((w.block_positions - w.agent_positions)[:, [0, 2]])
        assert np.all(np.max(gap - (2.5 + w.block_halves), axis=1) > 0.0)
        np.testing.assert_allclose(w.block_velocities, 0.0)
        np.testing.assert_allclose(w.agent_velocities, 0.0)
    assert len(np.unique(np.concatenate(goal_sides))) == 4


def test_block_drag_and_floor_friction_follow_unity_rules() -> None:
    world = PushBlockWorld(1)
    area = np.array([0])
    world.place_agents(area, world.origins + [0.0, 1.0, -10.0])
    world.place_blocks(area, world.origins + [0.0, 0.875, -3.0])
    world.set_block_velocities(area, np.array([[5.0, 0.0, 0.0]]))
    world.step()
    # drag 0.5: v * (1 - 0.5 * 0.02); floor: Average(0.6, 0) = 0.3 -> minus 0.3 * 9.81 * 0.02
    np.testing.assert_allclose(
        world.block_velocities[0], [5.0 * 0.99 - 0.3 * 9.81 * 0.02, 0.0, 0.0], atol=1e-9
    )

    world.floor_mu[0] = 0.5 * (0.6 + 1.0)
    world.block_decay[0] = 0.0  # a block_drag of 2000 clamps Unity's factor at 0
    world.set_block_velocities(area, np.array([[5.0, 0.0, 0.0]]))
    world.step()
    np.testing.assert_allclose(world.block_velocities[0], 0.0, atol=1e-12)


def test_agent_pushes_the_block() -> None:
    world = PushBlockWorld(1)
    area = np.array([0])
    world.place_agents(area, world.origins + [0.0, 1.0, -6.0])
    world.place_blocks(area, world.origins + [0.0, 0.875, -3.0])
    gaps = []
    for _ in range(30):
        world.add_velocity(area, np.array([[0.0, 0.0, 2.0]]))
        world.step()
        # block back face at z - 1, agent nose tip at z + 0.6
        gaps.append(world.block_positions[0, 2] - 1.0 - (world.agent_positions[0, 2] + 0.6))
    assert world.block_positions[0, 2] > 0.0  # pushed 3 m and more toward the goal strip
    assert world.block_positions[0, 0] == pytest.approx(0.0, abs=1e-9)  # straight: rotations frozen
    # MuJoCo's soft contact lets the 12 m/s impact sink in a little, then they move together
    assert min(gaps) > -0.2 and abs(gaps[-1]) < 0.02
    assert world.block_velocities[0, 2] == pytest.approx(world.agent_velocities[0, 2], abs=0.5)


def test_reset_parameters_take_effect_at_the_next_reset() -> None:
    env = LocalEnvironment("PushBlock", seed=0)
    env.reset()
    scene: PushBlock = env.academy.scene
    w = scene.world
    np.testing.assert_allclose(w.block_halves, 1.0)
    np.testing.assert_allclose(w.floor_mu, 0.3)
    np.testing.assert_allclose(w.block_decay, 0.99)
    env.reset({"block_scale": 3.0, "dynamic_friction": 1.0, "static_friction": 0.5, "block_drag": 10.0})
    np.testing.assert_allclose(w.block_halves, 1.5)
    block_geoms = w._block_geoms
    np.testing.assert_allclose(w.model.geom_size[block_geoms, :2], 1.5)
    np.testing.assert_allclose(w.floor_mu, 0.8)
    np.testing.assert_allclose(scene.static_friction, 0.5)
    np.testing.assert_allclose(w.block_decay, 0.8)
    # the ray sensor sees the bigger block: 4 m in front of it the sphere touches after 4 - 1.5 - 0.5
    toward, _ = goal_axes(w)
    w.place_agents(np.arange(N), w.block_positions * [1, 0, 1] + [0, 1.0, 0] - 4.0 * toward)
    w.turn(np.arange(N), w.area_yaws - w.agent_yaws)
    rays = newest(env.step({BRAIN: np.zeros((N, 1), np.float32)})[BRAIN]).reshape(N, 2, 7, RAY)
    np.testing.assert_allclose(rays[:, 0, 2, 4], 2.0 / 12.0, atol=1e-4)
    with pytest.raises(ValueError, match="block_scale"):
        w.set_block_scale(np.arange(N), 0.0)


def test_goal_reward_and_step_penalty() -> None:
    env = LocalEnvironment("PushBlock", seed=6)
    batch = env.reset()[BRAIN]
    batch = env.step({BRAIN: np.zeros((N, 1), np.float32)})[BRAIN]
    np.testing.assert_allclose(batch.rewards, -5 / 5000, rtol=1e-5)
    scene: PushBlock = env.academy.scene
    w = scene.world
    toward, _ = goal_axes(w)
    areas = np.arange(N)
    # block 0.5 m short of the goal strip (which starts 7.5 from the centre), agent behind it
    w.place_blocks(areas, scene.origins + [0, 0.875, 0] + (7.5 - 1.0 - 0.5) * toward)
    w.place_agents(areas, scene.origins + [0, 1.0, 0] + (7.5 - 1.0 - 0.5 - 1.0 - 0.7) * toward)
    w.turn(areas, w.area_yaws - w.agent_yaws)
    forward = np.ones((N, 1), np.float32)
    for _ in range(3):
        batch = env.step({BRAIN: forward})[BRAIN]
        if batch.local_done.any():
            break
    assert batch.local_done.all() and not batch.max_reached.any()
    # AddReward(+5) on top of the five -1/5000 step penalties of the decision
    np.testing.assert_allclose(batch.rewards, 5.0 - 5 / 5000, rtol=1e-6)
