"""Crawler (static and dynamic target): the observation layout for known poses, the joint drives
and the physics' sanity, rewards and episode ends, target touches, the trotting heuristic. Their
brains, determinism, the build over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import mujoco
import numpy as np

from mlagents.example_envs.crawler import CrawlerDynamic, CrawlerStatic, crawler_heuristic
from mlagents.example_envs.crawler_body import HINGE_RANGES, LEG_DIRECTIONS, TIMESTEP
from mlagents.example_envs.crawler_world import CrawlerWorld
from mlagents.example_envs.sdk.local import LocalEnvironment

STATIC = "CrawlerStaticLearning"
DYNAMIC = "CrawlerDynamicLearning"


def world_of(env: LocalEnvironment) -> CrawlerWorld:
    scene = env.academy.scene
    assert isinstance(scene, (CrawlerStatic, CrawlerDynamic))
    return scene.world


def actions(
    n: int, hips_x: float = 0.0, hips_y: float = 0.0, knees: float = 0.0, strength: float = 1.0
) -> np.ndarray:
    a = np.zeros((n, 20), np.float32)
    a[:, 0:8:2], a[:, 1:8:2], a[:, 8:12], a[:, 12:20] = hips_x, hips_y, knees, strength
    return a


def energy(world: CrawlerWorld) -> float:
    """Kinetic plus gravitational energy of every crawler (the targets excluded)."""
    m, d = world.model, world.data
    mujoco.mj_forward(m, d)  # the mass matrix of the current state
    mujoco.mj_energyPos(m, d)
    mujoco.mj_energyVel(m, d)
    return float(d.energy.sum())


def test_observation_of_the_spawn_pose() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    obs = env.reset()[STATIC].vector_observations.astype(np.float64)
    assert obs.shape == (12, 126)
    np.testing.assert_allclose(obs[:, 0], 1.75, atol=1e-6)  # ray from the body centre to the floor
    # the target is 1375 ahead and 1.75 above the body centre: forward in L tilts by that much
    tilt = np.arctan2(4.0 - 2.25, 1375.0)
    np.testing.assert_allclose(obs[:, 1:4], np.tile([0.0, -np.sin(tilt), np.cos(tilt)], (12, 1)), atol=1e-6)
    np.testing.assert_allclose(obs[:, 4:7], np.tile([0.0, np.cos(tilt), np.sin(tilt)], (12, 1)), atol=1e-6)
    np.testing.assert_allclose(obs[:, 7:14], 0.0, atol=1e-9)  # not touching, at rest
    parts = obs[:, 14:].reshape(12, 8, 14)
    for leg, u in enumerate(LEG_DIRECTIONS):
        for lower, along in ((0, 0.9), (1, 2.073)):
            centre = along * u + [0.0, -0.15, 0.0]  # Unity body frame: right = -z, up = y, forward = x
            local = np.array([-centre[2], centre[1], centre[0]]) / 1.05
            np.testing.assert_allclose(parts[:, 2 * leg + lower, 7:10], np.tile(local, (12, 1)), atol=1e-5)
    np.testing.assert_allclose(parts[:, :, :7], 0.0, atol=1e-9)
    np.testing.assert_allclose(parts[:, :, 10:], 0.0)  # no drive until the first action


def test_observation_of_drives_velocities_and_a_turned_body() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    env.reset()
    a = actions(12, hips_x=0.5, hips_y=-0.5, knees=1.0, strength=0.0)
    a[:, 16:20] = 3.0  # strength is not clamped (the cap then exceeds the maximum)
    obs = env.step({STATIC: a})[STATIC].vector_observations
    parts = obs[:, 14:].reshape(12, 8, 14)
    np.testing.assert_allclose(parts[:, 0::2, 10:13], np.tile([0.75, 0.25, 0.0], (12, 4, 1)))
    np.testing.assert_allclose(parts[:, 1::2, 10:13], np.tile([1.0, 0.0, 0.0], (12, 4, 1)))
    np.testing.assert_allclose(parts[:, 0::2, 13], 0.5)
    np.testing.assert_allclose(parts[:, 1::2, 13], 2.0)
    # a known motion: the whole crawler turned 90 degrees left (about up) and moving at (1, 2, 3)
    world = world_of(env)
    world.reset_bodies(np.arange(12))
    world._qpos[:, 3:7] = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]
    world._qvel[:, 0:3] = [1.0, 3.0, 2.0]  # MuJoCo axes of Unity (1, 2, 3)
    world._qvel[:, 3:6] = [0.0, 0.0, 0.5]  # MuJoCo +z = Unity -y (a pseudo-vector)
    world._update_frames()
    obs = env.academy.scene.collect_observations(np.arange(12)).astype(np.float64)
    tilt = np.arctan2(1.75, 1375.0)
    right, up, forward = (
        [0.0, 0.0, -1.0],
        [-np.sin(tilt), np.cos(tilt), 0.0],
        [np.cos(tilt), np.sin(tilt), 0.0],
    )
    frame = np.array([right, up, forward])
    np.testing.assert_allclose(obs[0, 1:4], frame @ [0.0, 0.0, 1.0], atol=1e-6)  # body forward = world +z
    np.testing.assert_allclose(obs[0, 8:11], frame @ [1.0, 2.0, 3.0], atol=1e-6)
    np.testing.assert_allclose(obs[0, 11:14], frame @ [0.0, -0.5, 0.0], atol=1e-6)
    # positions in the body frame do not change with the body's turn
    np.testing.assert_allclose(
        obs[0, 14 + 7 : 14 + 10], [0.636396 / 1.05, -0.15 / 1.05, -0.636396 / 1.05], atol=1e-5
    )


def test_dropped_crawler_without_drive_comes_to_rest_and_energy_never_grows() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    env.reset()
    world = world_of(env)
    world.set_drives(np.arange(12), actions(12, strength=-1.0))
    dropped = before = energy(world)
    for step in range(300):  # 4 s
        world.step()
        now = energy(world)
        assert now <= dropped
        # after the landing (the soft contact gives back a little of its penetration at first)
        if step > 100:
            assert now <= before + 1e-3
        before = now
    _, velocity = world.velocities()
    assert np.abs(velocity).max() < 1e-3
    assert np.abs(world._qvel).max() < 1e-2


def test_zero_actions_stand_still_without_jitter_and_energy_does_not_grow() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    env.reset()
    world = world_of(env)
    still = np.zeros((12, 20), np.float32)
    for _ in range(60):  # settle: 300 physics steps, 4 s
        batch = env.step({STATIC: still})[STATIC]
    assert not batch.local_done.any()
    settled = energy(world)
    heights, feet = [], []
    for _ in range(60):  # another 4 s, observed at every decision (0.067 s)
        batch = env.step({STATIC: still})[STATIC]
        heights.append(batch.vector_observations[:, 0].copy())
        feet.append(batch.vector_observations[:, 14:].reshape(12, 8, 14)[:, 1::2, 0].copy())
        assert energy(world) <= settled + 1e-3
    assert np.ptp(np.array(heights), axis=0).max() < 1e-3  # the body does not bob
    np.testing.assert_array_equal(np.array(feet), 1.0)  # every foot stays on the ground
    assert not np.array([world.touching_ground[:, [0, 1, 3, 5, 7]]]).any()
    np.testing.assert_allclose(batch.rewards, 5 * 0.01, atol=2e-3)  # facing the target, not moving


def test_drives_reach_their_targets_within_the_limits() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    env.reset()
    world = world_of(env)
    world.set_gravity(0.0)  # in the air, legs passing through each other: only the drives act
    world.model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    rng = np.random.default_rng(0)
    for _ in range(3):
        a = actions(12)
        a[:, :12] = rng.uniform(-1.5, 1.5, (12, 12))  # beyond +-1 targets clamp to the limits
        world.set_drives(np.arange(12), a)
        for _ in range(75):  # 1 s
            world.step()
        per_hinge = np.empty((12, 12))
        per_hinge[:, 0::3], per_hinge[:, 1::3], per_hinge[:, 2::3] = a[:, 1:8:2], a[:, 0:8:2], a[:, 8:12]
        t = np.clip((per_hinge + 1) / 2, 0, 1)
        target = HINGE_RANGES[:, 0] + (HINGE_RANGES[:, 1] - HINGE_RANGES[:, 0]) * t
        angles = np.degrees(world._qpos[:, 7:])
        np.testing.assert_allclose(angles, target, atol=0.5)
        assert np.all(angles >= HINGE_RANGES[:, 0] - 0.5) and np.all(angles <= HINGE_RANGES[:, 1] + 0.5)


def test_a_held_pose_stays_and_falls_when_strength_is_zero() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    env.reset()
    world = world_of(env)
    world.set_drives(np.arange(12), actions(12))  # thighs 30 degrees up, knees bent 75: standing
    for _ in range(150):
        world.step()
    standing = world.positions()[:, 0, 1].copy()
    angles = world._qpos[:, 7:].copy()
    for _ in range(150):  # held for 2 s more: nothing moves
        world.step()
    np.testing.assert_allclose(world.positions()[:, 0, 1], standing, atol=1e-3)
    np.testing.assert_allclose(world._qpos[:, 7:], angles, atol=1e-3)
    assert np.all(standing > 1.2)
    world.set_drives(np.arange(12), actions(12, strength=-1.0))
    for _ in range(150):  # no strength: the body sinks to the ground on its straightened legs
        world.step()
    assert np.all(world.positions()[:, 0, 1] < 0.9)


def test_falling_on_the_body_ends_the_episode_with_minus_one() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    env.reset()
    limp = actions(12, strength=-1.0)
    decisions = 0
    while decisions < 40:
        batch = env.step({STATIC: limp})[STATIC]
        decisions += 1
        if batch.local_done.all():
            break
    assert batch.local_done.all() and not batch.max_reached.any()
    # set to -1 at the contact; the physics steps left in that decision add their small rewards
    assert np.all(np.abs(batch.rewards + 1.0) < 0.06), batch.rewards
    assert decisions < 20
    # the next decision starts a new episode from the spawn pose
    obs = env.step({STATIC: limp})[STATIC].vector_observations
    np.testing.assert_allclose(obs[:, 0], 1.75, atol=0.2)


def test_touching_the_dynamic_target_pays_and_moves_it() -> None:
    env = LocalEnvironment("CrawlerDynamic", seed=0)
    env.reset()
    world = world_of(env)
    platforms = CrawlerDynamic.platforms()
    start = world.target_positions()
    np.testing.assert_allclose(start[:, [0, 2]], platforms[:, [0, 2]] + [6.2, 0.0], atol=1e-6)
    # put agent 4's target right on its front-left lower leg
    foot = world.positions()[4, 6]
    world.place_target(4, foot + [0.0, 0.6, 0.0])
    batch = env.step({DYNAMIC: np.zeros((9, 20), np.float32)})[DYNAMIC]
    assert batch.rewards[4] > 0.8  # +1, plus the small per-step rewards of the decision
    moved = world.target_positions()[4] - platforms[4]
    assert np.hypot(moved[0], moved[2]) <= 50.0 and moved[1] > 1.0
    assert np.all(batch.rewards[np.arange(9) != 4] < 0.5)


def test_seed_decides_where_the_dynamic_target_respawns() -> None:
    spots = []
    for seed in (0, 0, 1):
        env = LocalEnvironment("CrawlerDynamic", seed=seed)
        env.reset()
        world = world_of(env)
        world.place_target(0, world.positions()[0, 2] + [0.0, 0.6, 0.0])
        env.step({DYNAMIC: np.zeros((9, 20), np.float32)})
        spots.append(world.target_positions()[0])
    np.testing.assert_array_equal(spots[0], spots[1])
    assert not np.allclose(spots[0], spots[2])


def test_heuristic_trots_toward_the_target() -> None:
    env = LocalEnvironment("CrawlerStatic", seed=0)
    batch = env.reset()[STATIC]
    world = world_of(env)
    start = world.positions()[:, 0].copy()
    total = np.zeros(12)
    for _ in range(150):  # 10 s
        steps = env.academy.agent_step_counts
        batch = env.step({STATIC: crawler_heuristic(batch.vector_observations, steps * TIMESTEP)})[STATIC]
        total += batch.rewards
        assert not batch.local_done.any()
    progress = world.positions()[:, 0, 0] - start[:, 0]
    assert np.all(progress > 3.0), progress
    assert np.all(total > 12.0), total  # about 20: facing (0.01 per step) and 0.5 m/s toward it
