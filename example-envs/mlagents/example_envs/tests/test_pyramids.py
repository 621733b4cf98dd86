"""Pyramids: observation layout, the room shuffle at reset, the switch, the brick pyramid and the
gold brick, rewards. Its brain, the scripted player against the benchmark, determinism, the build
over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.pyramids import SQUARES, Pyramids
from mlagents.example_envs.pyramids_physics import BrickPyramid
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tests.playing import reset_scene

BRAIN = "PyramidsLearning"
N = 16
RAY = 8  # floats per ray: 6 tags, nothing-hit, distance


def still() -> np.ndarray:
    return np.zeros((N, 1), np.float32)


def square_of(local: np.ndarray) -> np.ndarray:
    """Index of the spawn square (0..8) holding each area-frame point ``(k, 3)``."""
    return np.argmin(((local[:, None, [0, 2]] - SQUARES[None]) ** 2).sum(-1), axis=1)


def centre_switches(scene: Pyramids) -> np.ndarray:
    """Move every switch to the middle of its room; returns the rooms' centres (at y = 0)."""
    room = square_of(scene.switch_positions - scene.origins)
    center = scene.origins + np.stack([SQUARES[room, 0], np.zeros(N), SQUARES[room, 1]], 1)
    scene.switch_positions[:] = center + [0.0, 1.0, 0.0]
    scene.world.place_switches(np.arange(N), scene.switch_positions)
    return center


def test_reset_shuffles_the_nine_rooms() -> None:
    env, scene = reset_scene("Pyramids", 0, Pyramids)
    w = scene.world
    for _ in range(3):
        scene.agent_reset(np.arange(N))
        rooms = np.stack(
            [
                square_of(w.agent_positions - scene.origins),
                square_of(scene.switch_positions - scene.origins),
                square_of(scene.brick_roots - scene.origins),
                *(square_of(scene.stone_roots[:, s] - scene.origins) for s in range(6)),
            ],
            axis=1,
        )
        assert all(sorted(row) == list(range(9)) for row in rooms.tolist())  # one thing per room
        local = w.agent_positions - scene.origins
        assert np.all(np.abs(local[:, [0, 2]] - SQUARES[rooms[:, 0]]) <= 25.0 / 2.1)
        np.testing.assert_allclose(w.agent_velocities, 0.0)
        assert not scene.switch_on.any() and not any(p.active for p in scene.pyramids)
    assert len(np.unique(rooms[:, 0])) > 3


def test_observation_layout_sees_switch_stones_and_walls() -> None:
    env = LocalEnvironment("Pyramids", seed=1)
    batch = env.reset()[BRAIN]
    obs = batch.vector_observations
    assert obs.shape == (N, 172)
    rays = obs[:, :168].reshape(N, 21, RAY)
    tags, nothing, distance = rays[..., :6], rays[..., 6], rays[..., 7]
    assert np.all(tags.sum(-1) + nothing == 1.0)  # the floor is never hit
    assert np.all((distance > 0) == (tags.sum(-1) == 1)) and np.all(distance <= 1.0)
    assert tags[..., 1].any() and tags[..., 3].any() and tags[..., 5].any()  # walls, switch (off), stones
    assert not tags[..., 4].any() and not tags[..., 0].any() and not tags[..., 2].any()
    np.testing.assert_array_equal(obs[:, 168:], 0.0)  # switch off, at rest

    scene: Pyramids = env.academy.scene
    w = scene.world
    # the switch in the middle of its room, the agent 6 m in front of it, facing it: the level
    # ray at 90 degrees (second) sees it 6 - 2 - 0.5 m away
    center = centre_switches(scene)
    w.place_agents(np.arange(N), center + [0.0, 1.0, -6.0], np.zeros(N))
    obs = env.step({BRAIN: still()})[BRAIN].vector_observations
    ahead = obs[:, :168].reshape(N, 21, RAY)[:, 1]
    assert np.all(ahead[:, 3] == 1.0)
    np.testing.assert_allclose(ahead[:, 7], (6.0 - 2.0 - 0.5) / 35.0, atol=1e-4)


def test_moves_drag_and_floor_friction() -> None:
    env, scene = reset_scene("Pyramids", 2, Pyramids)
    w = scene.world
    yaw0 = w.agent_yaws.copy()
    env.step({BRAIN: np.full((N, 1), 3.0, np.float32)})
    np.testing.assert_allclose(w.agent_yaws - yaw0, 20.0)
    env.step({BRAIN: np.full((N, 1), 4.0, np.float32)})
    np.testing.assert_allclose(w.agent_yaws, yaw0)
    # place every agent in the middle of an empty spot: the centre of its own (agent) square
    local = w.agent_positions - scene.origins
    room = square_of(local)
    w.place_agents(
        np.arange(N),
        scene.origins + np.stack([SQUARES[room, 0], np.ones(N), SQUARES[room, 1]], 1),
        w.agent_yaws,
    )
    batch = env.step({BRAIN: np.ones((N, 1), np.float32)})[BRAIN]
    expected = 0.0
    for _ in range(5):
        expected = (expected + 2.0) * (1.0 - 2.0 * 0.02) - 0.6 * 9.81 * 0.02
    np.testing.assert_allclose(np.linalg.norm(w.agent_velocities, axis=1), expected, rtol=1e-6)
    np.testing.assert_allclose(batch.vector_observations[:, 171], expected, rtol=1e-5)  # local z: forward
    np.testing.assert_allclose(batch.vector_observations[:, 169:171], 0.0, atol=1e-4)


def test_switch_spawns_the_brick_pyramid_which_stands_until_rammed() -> None:
    env, scene = reset_scene("Pyramids", 3, Pyramids)
    w = scene.world
    # the switch in the middle of its room; the agent just in front of it, running at it
    center = centre_switches(scene)
    w.place_agents(np.arange(N), center + [0.0, 1.0, -2.6], np.zeros(N))
    batch = env.step({BRAIN: np.ones((N, 1), np.float32)})[BRAIN]
    assert scene.switch_on.all() and all(p.active for p in scene.pyramids)
    assert np.all(batch.vector_observations[:, 168] == 1.0)
    w.place_agents(np.arange(N), center + [0.0, 1.0, -6.0], np.zeros(N))
    rays = env.step({BRAIN: still()})[BRAIN].vector_observations[:, :168].reshape(N, 21, RAY)
    assert rays[:, 1, 4].all()  # the switch now reads switchOn
    for _ in range(40):
        env.step({BRAIN: still()})
    pyramid: BrickPyramid = scene.pyramids[0]
    assert pyramid.gold_position[1] > 5.0  # the pyramid settled and stands with the gold on top
    # the rays see the bricks ("block") from the agent's place once it faces the pyramid
    root = scene.brick_roots
    w.place_agents(np.arange(N), root * [1, 0, 1] + [0.6, 1.0, -6.0], np.zeros(N))
    rays = env.step({BRAIN: still()})[BRAIN].vector_observations[:, :168].reshape(N, 21, RAY)
    # (a pyramid next to a wall of its room may have the agent on the wall's far side)
    assert rays[:, 1, 0].sum() >= 13


def test_brick_pyramid_topples_and_touching_the_gold_pays_two_and_ends_the_episode() -> None:
    pyramid = BrickPyramid()
    pyramid.set_scenery(np.array([30.0, 0.0, 30.0]), np.tile([-30.0, 0.0, -30.0], (6, 1)))
    pyramid.spawn(np.array([0.0, 2.0, 0.0]))
    for _ in range(60):
        assert not pyramid.step(np.array([20.0, 1.0, 20.0]), np.zeros(3), 0.0)
    assert pyramid.gold_position[1] > 5.0
    position, velocity = np.array([-8.0, 1.0, 0.8]), np.array([8.0, 0.0, 0.0])
    for _ in range(200):
        pyramid.step(position, velocity, 90.0)
        position = position + velocity * 0.02
        if position[0] > 6.0:
            velocity = -velocity
    assert pyramid.gold_position[1] < 3.0  # knocked down onto the floor (or a brick)

    env, scene = reset_scene("Pyramids", 4, Pyramids)
    w = scene.world
    for _ in range(3):
        batch = env.step({BRAIN: still()})[BRAIN]
    # switch on in every area, then the gold dropped straight in front of the agent
    areas = np.arange(N)
    w.agent_yaws[:] = 0.0
    for a in areas.tolist():
        scene.switch_on[a] = True
        scene.pyramids[a].spawn(scene.brick_roots[a] - scene.origins[a])
        local = w.agent_positions[a] - scene.origins[a]
        scene.pyramids[a]._free_qpos[25, :3] = [local[0], local[2] + 1.6, 1.5]
    batch = env.step({BRAIN: np.ones((N, 1), np.float32)})[BRAIN]
    assert batch.local_done.all() and not batch.max_reached.any()
    # SetReward(2) replaces the step penalties so far; the agent keeps acting (and paying
    # -1/5000 a step) until the decision
    assert np.all((batch.rewards <= 2.0) & (batch.rewards > 2.0 - 5 / 5000))
    assert not scene.switch_on.any() and not any(p.active for p in scene.pyramids)  # reset


@pytest.mark.slow
def test_step_penalty_and_timeout() -> None:
    env = LocalEnvironment("Pyramids", seed=5)
    env.reset()
    total = np.zeros(N)
    for decision in range(1, 1002):
        batch = env.step({BRAIN: still()})[BRAIN]
        total += batch.rewards
        if decision < 1001:
            assert not batch.local_done.any()
    assert batch.local_done.all() and batch.max_reached.all()
    np.testing.assert_allclose(total, -5005 / 5000, rtol=1e-4)


def test_reset_between_switch_and_gold_removes_the_pyramid() -> None:
    env, scene = reset_scene("Pyramids", 8, Pyramids)
    scene.switch_on[:] = True
    for a in range(N):
        scene.pyramids[a].spawn(scene.brick_roots[a] - scene.origins[a])
    env.reset()
    assert not scene.switch_on.any()
    assert not any(p.active for p in scene.pyramids)
