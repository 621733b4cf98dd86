"""Walker: the observation layout of the spawn pose, reset parameters, drives and physics sanity,
the fall that ends an episode, the stand-still heuristic. Its brain, determinism, the build over
gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.walker import HIPS_SCALE, Walker, spawn_height, walker_heuristic
from mlagents.example_envs.walker_body import PART_INDEX, PARTS
from mlagents.example_envs.walker_world import _HINGE_RANGES, _TARGET_HINGE, WalkerWorld

BRAIN = "WalkerLearning"
N = 11


def world_of(env: LocalEnvironment) -> WalkerWorld:
    scene = env.academy.scene
    assert isinstance(scene, Walker)
    return scene.world


def current(obs: np.ndarray) -> np.ndarray:
    """The newest of the 5 stacked frames."""
    return np.asarray(obs, dtype=np.float64)[:, -212:]


def test_the_body_weighs_94_kilograms() -> None:
    assert sum(p.mass for p in PARTS) == pytest.approx(94.0)


def test_observation_of_the_spawn_pose() -> None:
    env = LocalEnvironment("Walker", seed=0)
    obs = current(env.reset()[BRAIN].vector_observations)
    assert obs.shape == (N, 212)
    np.testing.assert_allclose(obs[:, 0:3], 0.0)  # no direction before the first physics step
    lanes = np.arange(-250.0, 300.0, 50.0)
    np.testing.assert_allclose(
        obs[:, 3:6], np.stack([np.full(N, -500.0), np.full(N, spawn_height()), lanes], 1), atol=1e-4
    )
    np.testing.assert_allclose(obs[:, 6:9], np.tile([1.0, 0.0, 0.0], (N, 1)), atol=1e-9)
    np.testing.assert_allclose(obs[:, 9:12], np.tile([0.0, 1.0, 0.0], (N, 1)), atol=1e-9)
    parts = obs[:, 12:172].reshape(N, 16, 10)
    np.testing.assert_allclose(parts[:, :, :7], 0.0, atol=1e-9)
    for i, part in enumerate(PARTS):
        f, u, left = part.centre
        expected = np.array([-left, u, f]) / HIPS_SCALE  # hips frame: right, up, forward
        np.testing.assert_allclose(parts[:, i, 7:10], np.tile(expected, (N, 1)), atol=1e-5, err_msg=part.name)
    np.testing.assert_allclose(obs[:, 172:], 0.0)  # no action yet


def test_direction_drive_observations_and_reward_of_a_standing_walker() -> None:
    env = LocalEnvironment("Walker", seed=0)
    env.reset()
    stand = walker_heuristic(np.zeros((N, 212)))
    batch = env.step({BRAIN: stand})[BRAIN]
    obs = current(batch.vector_observations)
    world = world_of(env)
    hips = world.positions()[:, 0]
    to_target = np.stack([1300.0 - hips[:, 0], -hips[:, 1], np.zeros(N)], 1)
    np.testing.assert_allclose(
        obs[:, 0:3], to_target / np.linalg.norm(to_target, axis=1, keepdims=True), atol=1e-3
    )
    drives = obs[:, 172:].reshape(N, 10, 4)
    np.testing.assert_allclose(drives[:, :, 3], 1.0)  # full strength
    np.testing.assert_allclose(drives[:, 0, :3], 0.5, atol=1e-6)  # chest: middle of symmetric ranges
    np.testing.assert_allclose(drives[:, 2, 0], 90.0 / 150.0, atol=1e-6)  # thighL X = 0 in [-90, 60]
    for _ in range(30):
        batch = env.step({BRAIN: stand})[BRAIN]
    assert not batch.local_done.any()
    # facing 0.01 + head above hips 0.02 x 2.874 per physics step, 5 per decision
    np.testing.assert_allclose(batch.rewards, 5 * (0.01 + 0.02 * 2.874), atol=0.01)


def test_reset_parameters_take_effect() -> None:
    env = LocalEnvironment("Walker", seed=0)
    env.reset({"hip_mass": 30.0, "chest_mass": 4.0, "spine_mass": 12.0, "gravity": 0.0})
    world = world_of(env)
    for name, mass in (("hips", 30.0), ("chest", 4.0), ("spine", 12.0)):
        np.testing.assert_allclose(world.model.body_mass[world.parts[:, PART_INDEX[name]]], mass)
    start = world.positions()[:, 0, 1].copy()
    for _ in range(10):
        env.step({BRAIN: walker_heuristic(np.zeros((N, 212)))})
    np.testing.assert_allclose(world.positions()[:, 0, 1], start, atol=1e-6)  # no gravity: floats
    with pytest.raises(ValueError, match="hip_mass"):
        env.reset({"hip_mass": 0.0})


def test_drives_reach_their_targets_within_the_limits() -> None:
    env = LocalEnvironment("Walker", seed=0)
    env.reset({"gravity": 0.0})
    world = world_of(env)
    world.model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    rng = np.random.default_rng(0)
    a = np.ones((N, 39), np.float32)
    a[:, :26] = rng.uniform(-1.5, 1.5, (N, 26))
    world.set_drives(np.arange(N), a)
    for _ in range(150):  # 2 s
        world.step()
    t = np.clip((a[:, :26] + 1) / 2, 0, 1)
    ranges = _HINGE_RANGES[_TARGET_HINGE]
    target = ranges[:, 0] + (ranges[:, 1] - ranges[:, 0]) * t
    angles = np.degrees(world._qpos[:, 7:])[:, _TARGET_HINGE]
    np.testing.assert_allclose(angles, target, atol=1.0)


@pytest.mark.slow
def test_limp_walker_falls_ends_the_episode_and_comes_to_rest() -> None:
    env = LocalEnvironment("Walker", seed=0)
    env.reset()
    world = world_of(env)
    limp = np.zeros((N, 39), np.float32)
    limp[:, 26:] = -1.0
    ended = np.zeros(N, bool)
    for _ in range(60):  # 4 s
        batch = env.step({BRAIN: limp})[BRAIN]
        ended |= batch.local_done
        assert np.all(batch.rewards[batch.local_done] < -0.9)
    assert ended.all() and not batch.max_reached.any()
    # without the episode's reset: a limp body on the floor comes to rest, its energy never grows
    world.reset_bodies(np.arange(N))
    world.set_drives(np.arange(N), limp)
    for _ in range(300):
        world.step()

    def energy() -> float:
        mujoco.mj_forward(world.model, world.data)
        mujoco.mj_energyPos(world.model, world.data)
        mujoco.mj_energyVel(world.model, world.data)
        return float(world.data.energy.sum())

    before = energy()
    for _ in range(150):
        world.step()
        now = energy()
        assert now <= before + 1e-3
        before = now
    assert np.abs(world.velocities()[1]).max() < 0.05


@pytest.mark.slow
def test_heuristic_stands_still_without_jitter() -> None:
    env = LocalEnvironment("Walker", seed=0)
    batch = env.reset()[BRAIN]
    total = np.zeros(N)
    heights = []
    for decision in range(150):  # 10 s
        batch = env.step({BRAIN: walker_heuristic(batch.vector_observations)})[BRAIN]
        total += batch.rewards
        assert not batch.local_done.any()
        if decision >= 60:
            heights.append(current(batch.vector_observations)[:, 4].copy())
    assert np.ptp(np.array(heights), axis=0).max() < 1e-3  # the hips do not bob
    assert np.all(total > 140 * 5 * 0.06), total
