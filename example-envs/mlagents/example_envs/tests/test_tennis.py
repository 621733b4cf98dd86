"""Tennis: mirrored observations, racket moves (run, jump, net clamp), the elastic ball, rewards
and the fault table, reset parameters. Its brain, the scripted rally against the benchmark,
determinism, the build over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tennis import Tennis
from mlagents.example_envs.tennis_physics import FLOOR_A, NET, TennisWorld, racket_rest_height
from mlagents.example_envs.tests.playing import scene_of

BRAIN = "TennisLearning"
N = 36


def still(k: int = N) -> np.ndarray:
    return np.zeros((k, 2), np.float32)


def park_ball(world: TennisWorld) -> None:
    """Serve every ball high above the left court, out of everybody's way for a while."""
    areas = np.arange(world.num_areas)
    world.serve(areas, np.tile([-6.0, 60.0], (world.num_areas, 1)))


def test_observations_are_mirrored_for_player_b() -> None:
    env = LocalEnvironment("Tennis", seed=0)
    batch = env.reset()[BRAIN]
    obs = batch.vector_observations
    assert obs.shape == (N, 24) and np.all(obs[:, :16] == 0.0)
    frame = obs[:, 16:]
    # both players see themselves on the left, 6 to 8 from the net, dropped at y = -1.5
    assert np.all((frame[:, 0] >= -8.0) & (frame[:, 0] <= -6.0))
    np.testing.assert_allclose(frame[:, 1], -1.5)
    np.testing.assert_allclose(frame[:, [2, 3]], 0.0)
    # one ball per court, seen mirrored by B; served from 6 above a random side at rest
    np.testing.assert_allclose(frame[0::2, 4], -frame[1::2, 4])
    np.testing.assert_allclose(frame[0::2, 5], frame[1::2, 5])
    np.testing.assert_allclose(frame[0::2, 5], 6.0, atol=0.01)
    assert np.all((np.abs(frame[:, 4]) >= 6.0) & (np.abs(frame[:, 4]) <= 8.0))
    world = scene_of(env, Tennis).world
    np.testing.assert_allclose(frame[0::2, 0], world.racket_positions[:, 0, 0], atol=1e-5)
    np.testing.assert_allclose(frame[1::2, 0], -world.racket_positions[:, 1, 0], atol=1e-5)


def test_rackets_run_jump_only_from_low_and_stop_at_the_net() -> None:
    env = LocalEnvironment("Tennis", seed=1)
    env.reset()
    world = scene_of(env, Tennis).world
    park_ball(world)
    for _ in range(4):  # a 0.35 m drop from the start height
        env.step(still())
    # standing on the court: the lowest corner of the turned box touches y = -3.25
    np.testing.assert_allclose(world.racket_positions[:, :, 1], racket_rest_height(55.0), atol=0.005)
    assert racket_rest_height(55.0) == pytest.approx(-1.852, abs=0.001)
    action = still()
    action[:, 0] = 0.5  # 15 m/s toward the net for both players
    before = world.racket_positions[:, :, 0].copy()
    env.step(action)
    np.testing.assert_allclose(world.racket_velocities[:, 0, 0], 15.0, atol=1e-6)
    np.testing.assert_allclose(world.racket_velocities[:, 1, 0], -15.0, atol=1e-6)
    np.testing.assert_allclose(world.racket_positions[:, :, 0] - before, [[1.5, -1.5]] * 18, atol=1e-6)
    action[:, 0] = 1.0
    env.step(action)
    env.step(action)
    # 1.5 + 2 x 0.1 s x 30 m/s = 7.5 m, more than the 5 to 7 m to the net line: every action puts
    # the racket back onto the line, from where the physics step carries it on by up to 0.6 m
    assert np.all(world.racket_positions[:, 0, 0] <= -0.4) and np.all(world.racket_positions[:, 0, 0] > -1.0)
    env.step(still())
    np.testing.assert_allclose(world.racket_positions[:, 0, 0], -1.0, atol=1e-9)
    np.testing.assert_allclose(world.racket_positions[:, 1, 0], 1.0, atol=1e-9)
    jump = still()
    jump[:, 1] = 1.0
    batch = env.step(jump)[BRAIN]
    # the jump sets vy = 7 at every physics step while the racket is low (y < -1.5, the first two
    # steps from -1.852 at 0.14 m per step), then gravity slows it for the remaining three
    np.testing.assert_allclose(batch.vector_observations[:, -5], 7.0 - 3 * 9.81 * 0.02, atol=1e-3)
    heights = world.racket_positions[:, :, 1].copy()
    assert np.all(heights > -1.5)
    batch = env.step(jump)[BRAIN]  # high: no new jump, still rising more slowly
    assert np.all(batch.vector_observations[:, -5] < 7.0 - 5 * 9.81 * 0.02)


def test_ball_bounces_elastically_off_a_standing_racket_and_the_hit_is_recorded() -> None:
    world = TennisWorld(1)
    area = np.array([0])
    world.place_rackets(area, 0, np.array([[-6.0, racket_rest_height(55.0)]]))
    world.place_rackets(area, 1, np.array([[6.0, racket_rest_height(55.0)]]))
    for _ in range(5):
        world.step()
    # drop the ball onto the middle of A's face
    normal = np.array([np.cos(np.radians(55.0)), np.sin(np.radians(55.0))])
    contact = world.racket_positions[0, 0] + 0.5 * normal
    world.serve(area, (contact + [0.0, 1.0])[None])
    world._qvel[0, 2] = [0.0, -6.0]
    hits = []
    for _ in range(12):
        hit, fault, _ = world.step()
        hits.append(hit[0].copy())
        assert fault[0] == -1
        if hit[0, 0]:
            break
    assert hits[-1][0] and not any(h[1] for h in hits)
    v = world.ball_velocities[0]
    # a reflection off the face keeps the speed (at the moment of the hit ~6.2 m/s)
    assert np.linalg.norm(v) == pytest.approx(6.0 + 9.81 * 0.02 * len(hits), abs=0.3)
    assert v[0] > 0.0 and v @ normal > 0.0


def test_crossing_the_net_pays_the_last_hitter_and_a_fault_ends_the_point() -> None:
    env = LocalEnvironment("Tennis", seed=2)
    env.reset()
    scene = scene_of(env, Tennis)
    world = scene.world
    areas = np.arange(18)
    # every ball flies from A's side over the net (leaving the zone above it within 4 steps), A hit it last
    world.serve(areas, np.tile([-0.1, 2.0], (18, 1)))
    world._qvel[:, 2] = [9.0, 2.0]
    scene.last_hitter[:] = 0
    batch = env.step(still())[BRAIN]
    np.testing.assert_allclose(batch.rewards[0::2], 0.1, atol=1e-7)
    np.testing.assert_allclose(batch.rewards[1::2], 0.0)
    assert np.all(scene.last_hitter == 0)
    # now B hits one over; the original then charges A with whatever follows
    world.serve(areas, np.tile([0.1, 2.0], (18, 1)))
    world._qvel[:, 2] = [-9.0, 2.0]
    scene.last_hitter[:] = 1
    batch = env.step(still())[BRAIN]
    np.testing.assert_allclose(batch.rewards[1::2], 0.1, atol=1e-7)
    assert np.all(scene.last_hitter == 0)

    # the ball lands on A's court: A -0.01, B's interval reward wiped, both done, new serve
    world.serve(areas, np.tile([-4.0, -2.6], (18, 1)))
    world._qvel[:, 2] = [0.0, -3.0]
    scene.academy.add_reward(np.arange(N), 0.05)
    batch = env.step(still())[BRAIN]
    np.testing.assert_allclose(batch.rewards[0::2], 0.05 - 0.01, atol=1e-7)
    np.testing.assert_allclose(batch.rewards[1::2], 0.0)
    assert batch.local_done.all() and not batch.max_reached.any()
    assert np.all(scene.last_hitter == -1)
    ball = world.ball_positions
    np.testing.assert_allclose(np.abs(ball[:, 0]) >= 6.0, True)
    assert np.all(ball[:, 1] <= 6.0) and np.all(ball[:, 1] > 5.0)  # served from 6, falling since


@pytest.mark.parametrize(
    "surface_ball, last, faulty",
    [
        ((-0.52, -2.5), 0, 0),  # the net (its side, below the zone over it) after A's shot: A
        ((-0.52, -2.5), 1, 1),  # the net after B's shot: B
        ((-0.52, -2.5), -1, 1),  # nobody hit yet: B (the original's "else")
        ((-12.0, 5.0), 1, 1),  # A's back wall after B's shot: B
        ((4.0, -2.6), 0, 1),  # B's court: B, whoever hit last
    ],
)
def test_fault_table(surface_ball: tuple[float, float], last: int, faulty: int) -> None:
    env = LocalEnvironment("Tennis", seed=3)
    env.reset()
    scene = scene_of(env, Tennis)
    world = scene.world
    areas = np.arange(18)
    world.serve(areas, np.tile(surface_ball, (18, 1)))
    world._qvel[:, 2] = [0.0, -1.0] if surface_ball[0] > -12.0 else [-3.0, 0.0]
    scene.last_hitter[:] = last
    batch = env.step(still())[BRAIN]
    assert batch.local_done.all()
    rewards = batch.rewards.reshape(18, 2)
    np.testing.assert_allclose(rewards[:, faulty], -0.01, atol=1e-7)
    np.testing.assert_allclose(rewards[:, 1 - faulty], 0.0)


def test_surface_codes() -> None:
    world = TennisWorld(1)
    park_ball(world)
    world.serve(np.array([0]), np.array([[0.0, -1.2]]))
    assert world.step()[1][0] == NET
    world.serve(np.array([0]), np.array([[-5.0, -2.8]]))
    assert world.step()[1][0] == FLOOR_A


def test_reset_parameters_take_effect() -> None:
    env = LocalEnvironment("Tennis", seed=4)
    env.reset({"angle": 30.0, "scale": 2.0, "gravity": 5.0})
    world = scene_of(env, Tennis).world
    np.testing.assert_allclose(world.angles, np.tile([30.0, -30.0], (18, 1)))
    np.testing.assert_allclose(world.ball_radius, 1.0)
    assert world.model.opt.gravity[2] == pytest.approx(-5.0)
    park_ball(world)  # a serve puts the ball back to scale 1
    np.testing.assert_allclose(world.ball_radius, 0.5)
    for _ in range(8):  # a 0.41 m drop at g = 5
        env.step(still())
    np.testing.assert_allclose(world.racket_positions[:, :, 1], racket_rest_height(30.0), atol=0.005)
    with pytest.raises(ValueError, match="scale"):
        env.reset({"scale": 0.0})
