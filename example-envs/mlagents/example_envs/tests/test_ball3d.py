"""3DBall and 3DBallHard: physics pieces and scene rules. Their brains, the balancing controller
against the benchmark, determinism, the build over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest

from mlagents.example_envs.ball3d import Ball3D, Ball3DHard, balance
from mlagents.example_envs.ball3d_physics import (
    BallPlatformWorld,
    axis_angle_quaternions,
    quaternion_multiply,
    rotate_local,
    to_mujoco_quaternions,
)
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.vector3 import to_mujoco

SCENES = {"3DBall": Ball3D, "3DBallHard": Ball3DHard}
BRAINS = {"3DBall": "3DBallLearning", "3DBallHard": "3DBallHardLearning"}
ALL = np.arange(12)


def unity_rotation_matrix(q: np.ndarray) -> np.ndarray:
    """The 3x3 matrix of a Unity (x, y, z, w) quaternion, acting on Unity vectors."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


# ---------------------------------------------------------------- frames and rotations
def test_unity_rotations_map_to_the_same_mujoco_rotations() -> None:
    rng = np.random.default_rng(3)
    for q in rng.normal(size=(20, 4)):
        q /= np.linalg.norm(q)
        v = rng.normal(size=3)
        expected = to_mujoco(unity_rotation_matrix(q) @ v)
        rotated = np.zeros(3)
        mujoco.mju_rotVecQuat(rotated, to_mujoco(v), to_mujoco_quaternions(q))
        np.testing.assert_allclose(rotated, expected, atol=1e-12)


def test_rotate_local_composes_like_unity_transform_rotate() -> None:
    # Rotate(x, 90) then Rotate(z, 90) in local space: rotation = Rx(90) * Rz(90).
    q = np.array([[0.0, 0.0, 0.0, 1.0]])
    q = rotate_local(rotate_local(q, 0, np.array([90.0])), 2, np.array([90.0]))
    matrix = unity_rotation_matrix(q[0])
    rx = unity_rotation_matrix(axis_angle_quaternions(0, np.array([90.0]))[0])
    rz = unity_rotation_matrix(axis_angle_quaternions(2, np.array([90.0]))[0])
    np.testing.assert_allclose(matrix, rx @ rz, atol=1e-12)
    # A positive turn about z lifts the platform's +x edge (Unity: right goes toward up).
    np.testing.assert_allclose(rz @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-12)
    # The folded-in fast path equals the general product for every axis.
    rng = np.random.default_rng(0)
    q = rng.normal(size=(6, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    angles = rng.uniform(-30, 30, 6)
    for axis in range(3):
        general = quaternion_multiply(q, axis_angle_quaternions(axis, angles))
        np.testing.assert_allclose(rotate_local(q, axis, angles), general, atol=1e-12)


# ---------------------------------------------------------------- physics
def _drop_test(world: BallPlatformWorld) -> tuple[float, float, float]:
    """Impact speed, rebound speed and deepest penetration of balls falling from the reset height."""
    velocities, heights = [], []
    for _ in range(150):
        world.step()
        velocities.append(world.ball_velocities[0, 1])
        heights.append(world.ball_positions[0, 1] - world.platform_positions[0, 1])
    velocities = np.array(velocities)
    impact = int(np.argmin(velocities))
    radius = 0.5 * world.ball_scales[0]
    return -velocities[impact], velocities[impact:].max(), 0.1 + radius - min(heights)


def test_restitution_is_about_five_percent() -> None:
    world = BallPlatformWorld(1)
    impact, rebound, penetration = _drop_test(world)
    assert impact == pytest.approx(np.sqrt(2 * 9.81 * 3.4), rel=0.03)  # a 3.4 m free fall
    assert 0.03 < rebound / impact < 0.07
    assert penetration < 0.015
    # At rest the ball sits on the top surface (0.1 above the platform centre).
    rest = world.ball_positions[0, 1] - world.platform_positions[0, 1]
    assert rest == pytest.approx(0.6, abs=2e-3)


def _place_on_tilted_platform(world: BallPlatformWorld, degrees: float, x: float = 0.0) -> None:
    rotation = rotate_local(
        np.tile([0.0, 0, 0, 1], (world.num_areas, 1)), 2, np.full(world.num_areas, degrees)
    )
    world.set_platform_rotations(np.arange(world.num_areas), rotation)
    normal = unity_rotation_matrix(rotation[0]) @ [0.0, 1.0, 0.0]
    along = unity_rotation_matrix(rotation[0]) @ [1.0, 0.0, 0.0]
    world.place_balls(np.arange(world.num_areas), world.platform_positions + (0.1 + 0.5) * normal + x * along)
    world.data.qvel[:] = 0.0


def test_ball_rolls_down_the_slope_at_five_sevenths_g() -> None:
    world = BallPlatformWorld(1)
    _place_on_tilted_platform(world, 10.0)
    for _ in range(5):
        world.step()
    v0 = world.ball_velocities[0].copy()
    for _ in range(25):
        world.step()
    acceleration = (world.ball_velocities[0] - v0) / 0.5
    # Rolling without slipping (solid sphere): a = 5/7 g sin(theta), down the slope; +z tilt lifts +x.
    assert np.linalg.norm(acceleration) == pytest.approx(5 / 7 * 9.81 * np.sin(np.radians(10)), rel=0.03)
    assert acceleration[0] < 0


def test_platform_turning_at_full_speed_lifts_the_ball_instead_of_swallowing_it() -> None:
    world = BallPlatformWorld(1)
    _place_on_tilted_platform(world, 0.0, x=-1.4)
    for _ in range(20):
        world.step()
    rotation = world.platform_rotations.copy()
    deepest = 0.0
    for _ in range(14):  # 2 degrees per step lifts the ball's side by ~0.05 per step
        rotation = rotate_local(rotation, 2, np.array([-2.0]))
        world.set_platform_rotations(np.array([0]), rotation)
        world.step()
        normal = unity_rotation_matrix(rotation[0]) @ [0.0, 1.0, 0.0]
        height = (world.ball_positions[0] - world.platform_positions[0]) @ normal - 0.1
        deepest = max(deepest, 0.5 - height)
    assert deepest < 0.05
    assert height > 0.45


def test_angular_drag_decays_spin_by_unity_rule() -> None:
    world = BallPlatformWorld(1)
    world.place_balls(np.array([0]), world.platform_positions + [0.0, 50.0, 0.0])  # free fall, no contact
    world.data.qvel[3:6] = [0.0, 0.0, 10.0]
    for _ in range(50):
        world.step()
    assert world.ball_angular_velocities[0, 2] == pytest.approx(10.0 * (1 - 0.01 * 0.02) ** 50, rel=1e-9)


def test_ball_properties_match_what_mujoco_would_precompute() -> None:
    world = BallPlatformWorld(2)
    world.set_ball_properties(np.array([1]), mass=7.0, scale=2.5)
    # mj_setConst recomputes these from the new masses and inertias (on a copy: it moves the state).
    model = copy.deepcopy(world.model)
    mujoco.mj_setConst(model, mujoco.MjData(model))
    np.testing.assert_allclose(model.body_invweight0, world.model.body_invweight0, rtol=1e-9)
    np.testing.assert_allclose(model.dof_invweight0, world.model.dof_invweight0, rtol=1e-9)
    np.testing.assert_allclose(model.body_subtreemass, world.model.body_subtreemass, rtol=1e-9)
    ball = world._ball_bodies[1]
    assert world.model.body_mass[ball] == 7.0
    np.testing.assert_allclose(world.model.body_inertia[ball], 0.4 * 7.0 * 1.25**2)
    with pytest.raises(ValueError, match="positive"):
        world.set_ball_properties(np.array([0]), mass=0.0, scale=1.0)


# ---------------------------------------------------------------- scene through the engine
@pytest.mark.parametrize("name", ["3DBall", "3DBallHard"])
def test_first_observation_and_one_decision(name: str) -> None:
    env = LocalEnvironment(name, seed=0)
    size, stack = (8, 1) if name == "3DBall" else (5, 9)
    batch = env.reset()[BRAINS[name]]
    assert batch.vector_observations.shape == (12, size * stack)
    assert batch.vector_observations.dtype == np.float32
    # First observation: tilt within +-10 degrees about each axis, ball 4 above, within +-1.5.
    frame = batch.vector_observations[:, -size:]
    assert np.all(np.abs(frame[:, :2]) <= np.sin(np.radians(5.0)) + 1e-6)
    np.testing.assert_allclose(frame[:, 3], 4.0, atol=1e-5)
    assert np.all(np.abs(frame[:, [2, 4]]) <= 1.5)
    if name == "3DBall":
        np.testing.assert_allclose(frame[:, 5:8], 0.0)  # ball velocity (the stack is zero-filled before)
    else:
        np.testing.assert_array_equal(batch.vector_observations[:, :-size], 0.0)
    # One decision = 5 physics steps; balanced reward is +0.1 per decision (SetReward, not summed).
    steps = env.academy.total_step_count
    batch = env.step({BRAINS[name]: np.zeros((12, 2), np.float32)})[BRAINS[name]]
    assert env.academy.total_step_count - steps == 5
    np.testing.assert_allclose(batch.rewards, 0.1)


def test_action_turns_two_degrees_per_unit_z_first_and_stops_at_the_limit() -> None:
    env = LocalEnvironment("3DBall", seed=0)
    env.reset()
    scene = env.academy.scene
    start = scene.world.platform_rotations.copy()
    actions = np.zeros((12, 2), np.float32)
    actions[:, 0] = 7.0  # clipped to 1: +2 degrees about z per physics step
    actions[:, 1] = -0.5  # -1 degree about x per physics step
    env.step({"3DBallLearning": actions})
    expected = start
    for _ in range(5):
        expected = rotate_local(expected, 2, np.full(12, 2.0))
        expected = rotate_local(expected, 0, np.full(12, -1.0))
    np.testing.assert_allclose(scene.world.platform_rotations, expected, atol=1e-9)

    # Keep turning: quaternion z stops growing once it reached 0.25, but may turn back.
    for _ in range(10):
        env.step({"3DBallLearning": np.tile([[1.0, 0.0]], (12, 1)).astype(np.float32)})
    z = scene.world.platform_rotations[:, 2]
    assert np.all(z >= 0.25) and np.all(z < 0.25 + np.sin(np.radians(1.0)) + 1e-9)
    before = scene.world.platform_rotations.copy()
    env.step({"3DBallLearning": np.tile([[-1.0, 0.0]], (12, 1)).astype(np.float32)})
    assert np.all(scene.world.platform_rotations[:, 2] < before[:, 2])


def test_fall_gives_minus_one_and_the_next_episode_starts_at_once() -> None:
    env = LocalEnvironment("3DBall", seed=1)
    env.reset()
    finished = np.zeros(12, dtype=bool)
    for _ in range(300):  # tilt hard about z until every ball has rolled off the -x edge
        batch = env.step({"3DBallLearning": np.tile([[1.0, 0.0]], (12, 1)).astype(np.float32)})[
            "3DBallLearning"
        ]
        first_done = batch.local_done & ~finished
        running = ~finished & ~batch.local_done
        np.testing.assert_allclose(batch.rewards[running], 0.1)
        np.testing.assert_allclose(batch.rewards[first_done], -1.0)
        assert not batch.max_reached[first_done].any()
        # The done info carries the first observation of the next episode: ball back 4 above, at rest.
        np.testing.assert_allclose(batch.vector_observations[first_done, 3], 4.0, atol=1e-5)
        np.testing.assert_allclose(batch.vector_observations[first_done, 5:8], 0.0)
        finished |= batch.local_done
        if finished.all():
            break
    assert finished.all(), "a platform tilted ~29 degrees must drop the ball"


def test_reset_parameters_take_effect_when_the_original_reads_them() -> None:
    env = LocalEnvironment("3DBall", seed=0)
    env.reset()
    world = env.academy.scene.world
    np.testing.assert_allclose(world.model.opt.gravity, [0, 0, -9.81])
    batch = env.reset({"mass": 3.0, "scale": 2.0, "gravity": 4.0})["3DBallLearning"]
    np.testing.assert_allclose(world.model.opt.gravity, [0, 0, -4.0])  # academy reset
    np.testing.assert_allclose(world.ball_masses, 3.0)  # agent reset
    np.testing.assert_allclose(world.model.geom_size[world._ball_geoms, 0], 1.0)
    # Bigger ball: at rest its centre sits 0.1 + 1.0 above the platform centre.
    for _ in range(40):
        batch = env.step({"3DBallLearning": balance(batch.vector_observations)})["3DBallLearning"]
    assert not batch.local_done.any()
    heights = batch.vector_observations[:, 3]
    np.testing.assert_allclose(heights, 1.1, atol=0.03)

    hard = LocalEnvironment("3DBallHard", seed=0)
    hard.reset({"mass": 3.0, "scale": 2.0, "gravity": 4.0})
    world = hard.academy.scene.world
    np.testing.assert_allclose(hard.academy.scene.world.model.opt.gravity, [0, 0, -4.0])
    np.testing.assert_allclose(world.ball_masses, 1.0)  # Ball3DHardAgent reads them only at start-up
    np.testing.assert_allclose(world.ball_scales, 1.0)


def test_gravity_is_read_only_on_academy_reset() -> None:
    env = LocalEnvironment("3DBall", seed=0)
    env.reset()
    scene = env.academy.scene
    env.academy.reset_parameters["gravity"] = 20.0  # changed behind the academy's back
    scene.agent_reset(ALL)
    np.testing.assert_allclose(scene.world.model.opt.gravity, [0, 0, -9.81])
