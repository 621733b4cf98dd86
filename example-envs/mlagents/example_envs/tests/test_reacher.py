"""Reacher: the observation layout, goal motion, torques, the angular drag and the 7 rad/s cap, the
reward, reset parameters. Its brain, the scripted reach against the benchmark, determinism, the
build over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.reacher import (
    A_CENTER,
    ANGULAR_DRAG,
    B_CENTER,
    HAND_CENTER,
    MAX_ANGULAR_SPEED,
    PIVOT_HEIGHT,
    SEGMENT_LENGTH,
    TIMESTEP,
    Reacher,
    ReacherWorld,
    _volumes,
)
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tests.playing import scene_of

BRAIN = "ReacherLearning"
N = 20


def test_observation_layout_of_the_hanging_arm() -> None:
    env = LocalEnvironment("Reacher", seed=0)
    obs = env.reset()[BRAIN].vector_observations
    assert obs.shape == (N, 33)
    np.testing.assert_allclose(obs[:, 0:3], np.tile([0.0, -4.0, 0.0], (N, 1)), atol=1e-6)
    np.testing.assert_allclose(obs[:, 13:16], np.tile([0.0, -10.0, 0.0], (N, 1)), atol=1e-6)
    # both segments turned 180 degrees about x (local up points down), at rest
    for start in (3, 16):
        np.testing.assert_allclose(
            np.abs(obs[:, start : start + 4]), np.tile([1.0, 0, 0, 0], (N, 1)), atol=1e-6
        )
    np.testing.assert_allclose(obs[:, [7, 8, 9, 10, 11, 12, 20, 21, 22, 23, 24, 25]], 0.0, atol=1e-6)
    goal = obs[:, 26:29]
    np.testing.assert_allclose(np.hypot(goal[:, 0], goal[:, 2]), 8.0, atol=1e-5)
    np.testing.assert_allclose(goal[:, 1], 0.0)
    np.testing.assert_allclose(obs[:, 29:32], np.tile([0.0, 1.0, 0.0], (N, 1)))  # the hand, in B's frame
    assert np.all(np.abs(obs[:, 32]) <= 1.0) and np.ptp(obs[:, 32]) > 0.5
    # theta is a whole number of degrees
    theta = np.degrees(np.arctan2(goal[:, 0], goal[:, 2])) % 360.0
    np.testing.assert_allclose(theta, np.round(theta), atol=1e-3)


def test_goal_turns_by_its_speed_every_physics_step() -> None:
    env = LocalEnvironment("Reacher", seed=1)
    first = env.reset()[BRAIN].vector_observations
    second = env.step({BRAIN: np.zeros((N, 4), np.float32)})[BRAIN].vector_observations
    before = np.degrees(np.arctan2(first[:, 26], first[:, 28]))
    after = np.degrees(np.arctan2(second[:, 26], second[:, 28]))
    turned = (after - before + 180.0) % 360.0 - 180.0
    np.testing.assert_allclose(turned, 4 * first[:, 32], atol=1e-3)  # 4 physics steps per decision


def test_torques_turn_the_segments_the_unity_way_and_speed_is_capped() -> None:
    world = ReacherWorld()
    world.set_gravity(0.0)
    torques = np.zeros((N, 2, 3))
    torques[:10, 0, 0] = 150.0  # about +x: down turns toward -z
    torques[10:, 0, 2] = 150.0  # about +z: down turns toward +x
    for _ in range(5):
        world.apply_torques(np.arange(N), torques)
        world.step()
    positions = world.positions()
    assert np.all(positions[:10, 0, 2] < -0.1) and np.allclose(positions[:10, 0, 0], 0.0, atol=1e-9)
    assert np.all(positions[10:, 0, 0] > 0.1) and np.allclose(positions[10:, 0, 2], 0.0, atol=1e-9)
    omega = world.angular_velocities()
    assert np.all(omega[:10, 0, 0] > 0.0) and np.all(omega[10:, 0, 2] > 0.0)
    # full torque on both segments for 4 s: the cap holds each segment near 7 rad/s; the lower one
    # overshoots for a moment (the cap acts before the joints, see the test below)
    torques[:, 1] = torques[:, 0]
    speeds = []
    for _ in range(200):
        world.apply_torques(np.arange(N), torques)
        world.step()
        speeds.append(np.linalg.norm(world.angular_velocities(), axis=2))
    fastest = np.max(speeds, axis=(0, 1))
    assert MAX_ANGULAR_SPEED - 0.5 < fastest[0] <= MAX_ANGULAR_SPEED
    assert MAX_ANGULAR_SPEED < fastest[1] < 1.25 * MAX_ANGULAR_SPEED  # measured 8.18
    assert np.all((speeds[-1] > MAX_ANGULAR_SPEED - 0.5) & (speeds[-1] <= MAX_ANGULAR_SPEED))


def _swing_mass_matrix(world: ReacherWorld) -> np.ndarray:
    """Joint-space inertia of the straight hanging arm for its two swings about world z, from the
    segments' masses (1), centres of mass and own inertias (parallel axis theorem)."""
    inertia_a, inertia_b = world.model.body_inertia[world.bodies[0], 0]
    capsule, hand = _volumes()
    com_b = B_CENTER + (HAND_CENTER - B_CENTER) * hand / (capsule + hand)
    elbow = A_CENTER - SEGMENT_LENGTH / 2
    r_a, upper, r_b = PIVOT_HEIGHT - A_CENTER, PIVOT_HEIGHT - elbow, elbow - com_b
    coupling = inertia_b + r_b * (upper + r_b)
    return np.array(
        [[inertia_a + r_a**2 + inertia_b + (upper + r_b) ** 2, coupling], [coupling, inertia_b + r_b**2]]
    )


@pytest.mark.parametrize("spin", [2.0, 20.0])
def test_drag_and_cap_act_on_each_segments_own_spin_before_the_joints(spin: float) -> None:
    """PhysX scales each body's world angular velocity by 1 - 0.05 x 0.02 and clamps it to 7 rad/s
    before its joint solver, which then restores the joints by impulses (equal and opposite at
    each joint). For the straight arm turning rigidly about the shoulder's z hinge (no gravity,
    no torque, so MuJoCo's step alone would keep the rate), the new joint rates are the old ones
    plus M^-1 (J^T I dw): M the joint-space inertia, I dw the change of each segment's angular
    momentum about its centre of mass."""
    world = ReacherWorld()
    world.set_gravity(0.0)
    world._qvel[:, 0, 0] = spin  # A's swing; B turns with A
    world._update_frames()
    world.step()
    inertia_a, inertia_b = world.model.body_inertia[world.bodies[0], 0]
    change = min((1.0 - ANGULAR_DRAG * TIMESTEP) * spin, MAX_ANGULAR_SPEED) - spin  # both segments
    impulse = np.array([(inertia_a + inertia_b) * change, inertia_b * change])
    expected = np.array([spin, 0.0]) + np.linalg.solve(_swing_mass_matrix(world), impulse)
    np.testing.assert_allclose(world._qvel[:, :, 0], np.tile(expected, (N, 1)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(world._qvel[:, :, 1], 0.0, atol=1e-12)  # nothing turns about x
    energy = 0.5 * expected @ _swing_mass_matrix(world) @ expected
    assert energy < 0.5 * spin**2 * _swing_mass_matrix(world)[0, 0]
    for _ in range(150):
        world.step()
    speeds = np.linalg.norm(world.angular_velocities(), axis=2)
    if spin < MAX_ANGULAR_SPEED:  # the drag alone: 150 steps lose about 1 % of the speed
        assert np.all((speeds > 0.97 * spin) & (speeds < spin))
    else:  # a spin far above the cap settles at it within 3 s
        assert np.all((speeds > MAX_ANGULAR_SPEED - 0.2) & (speeds < MAX_ANGULAR_SPEED + 0.3))


def test_reward_while_the_hand_overlaps_the_goal_and_reset_parameters() -> None:
    env = LocalEnvironment("Reacher", seed=2)
    # deviation -13 with frequency 0 puts the goal 13 below the root, 8 beside the hanging hand
    still = np.zeros((N, 4), np.float32)
    env.reset({"deviation": -13.0, "gravity": 0.0, "goal_size": 16.0})
    batch = env.step({BRAIN: still})[BRAIN]
    np.testing.assert_allclose(batch.vector_observations[:, 27], -13.0, atol=1e-5)
    np.testing.assert_allclose(batch.rewards, 0.04, atol=1e-6)  # radius 1 + 8 reaches 8 away
    assert not batch.local_done.any()
    env.reset({"goal_size": 12.0})  # radius 1 + 6 does not
    batch = env.step({BRAIN: still})[BRAIN]
    np.testing.assert_allclose(batch.rewards, 0.0)
    scene = scene_of(env, Reacher)
    assert scene.world.model.opt.gravity[2] == 0.0
    env.reset({"goal_speed": 0.0, "deviation": 2.0, "deviation_freq": 1.0})
    obs = env.step({BRAIN: still})[BRAIN].vector_observations
    np.testing.assert_allclose(obs[:, 32], 0.0)
    theta = np.arctan2(obs[:, 26], obs[:, 28])
    np.testing.assert_allclose(obs[:, 27], 2.0 * np.cos(theta), atol=1e-5)
    with pytest.raises(ValueError, match="goal_size"):
        env.reset({"goal_size": 0.0})


def test_gravity_pulls_a_raised_arm_down() -> None:
    env = LocalEnvironment("Reacher", seed=3)
    env.reset({"gravity": 9.81})
    world = scene_of(env, Reacher).world
    world._qpos[:, 0, 1] = np.pi / 2  # A turned up to horizontal
    world._update_frames()
    before = world.positions()[:, 0, 1].copy()
    env.step({BRAIN: np.zeros((N, 4), np.float32)})
    assert np.all(world.positions()[:, 0, 1] < before - 0.01)
