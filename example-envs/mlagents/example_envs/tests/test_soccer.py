"""SoccerTwos: observation layout per team, moves, kicks, role walls, goals and the reward split,
reset parameters, scripted strikers against random opponents. Its brains, determinism, the build
over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.soccer import SoccerTwos, SoccerWorld, goalie_heuristic, striker_heuristic

STRIKER, GOALIE = "StrikerLearning", "GoalieLearning"
BENCHMARK = 0.0
RAY = 8  # floats per ray: 6 tags, nothing-hit, distance
STRIKERS, GOALIES = np.arange(16), np.arange(16, 32)


def random_actions(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        STRIKER: rng.integers(0, 7, (16, 1)).astype(np.float32),
        GOALIE: rng.integers(0, 5, (16, 1)).astype(np.float32),
    }


def still() -> dict[str, np.ndarray]:
    return {STRIKER: np.zeros((16, 1), np.float32), GOALIE: np.zeros((16, 1), np.float32)}


def red_scripted_blue_random(scene: SoccerTwos, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Red plays the scripted striker and goalie, blue plays uniformly random actions."""
    actions = random_actions(rng)
    red = scene.world.agent_team[STRIKERS] == 0
    actions[STRIKER][red] = striker_heuristic(scene, STRIKERS)[red]
    actions[GOALIE][red] = goalie_heuristic(scene, GOALIES)[red]
    return actions


def play(env: LocalEnvironment, decide, decisions: int) -> np.ndarray:
    """Per ended episode of every pitch: (red striker return, blue striker return, timed out)."""
    env.reset()
    running = np.zeros(32)
    ended = []
    batches = None
    for _ in range(decisions):
        batches = env.step(decide())
        reward = np.concatenate([batches[STRIKER].rewards, batches[GOALIE].rewards])
        done = np.concatenate([batches[STRIKER].local_done, batches[GOALIE].local_done])
        timed_out = batches[STRIKER].max_reached
        running += reward
        for field in range(8):
            if done[2 * field]:
                ended.append((running[2 * field], running[2 * field + 1], timed_out[2 * field]))
        running[done] = 0.0
    return np.array(ended).reshape(-1, 3)


def test_reset_places_the_teams_facing_each_other_and_the_ball_near_the_centre() -> None:
    env = LocalEnvironment("SoccerTwos", seed=0)
    batches = env.reset()
    assert batches[STRIKER].vector_observations.shape == (16, 112)
    assert batches[GOALIE].vector_observations.shape == (16, 112)
    scene: SoccerTwos = env.academy.scene
    w = scene.world
    local = w.agent_positions - scene.origins[w.agent_field]
    expected_x = np.where(w.agent_role == 0, 7.0, 13.0) * np.where(w.agent_team == 0, 1.0, -1.0)
    assert np.all(
        np.linalg.norm((local - [0, 1, 0])[:, [0, 2]] - np.stack([expected_x, 0 * expected_x], 1), axis=1)
        <= 2.0
    )
    np.testing.assert_allclose(w.agent_yaws, np.where(w.agent_team == 0, -90.0, 90.0))
    ball = w.ball_positions - scene.origins
    assert np.all(np.linalg.norm(ball[:, [0, 2]], axis=1) <= 2.0)
    np.testing.assert_allclose(ball[:, 1], 0.825)


def test_observations_list_the_own_team_first() -> None:
    env = LocalEnvironment("SoccerTwos", seed=1)
    env.reset()
    scene: SoccerTwos = env.academy.scene
    w = scene.world
    # pitch 0: red striker at x = +3 facing -x, blue striker at x = -3 facing +x, ball far aside
    w.place_agents(
        np.array([0, 1]), scene.origins[[0, 0]] + [[3.0, 0, 0], [-3.0, 0, 0]], np.array([-90.0, 90.0])
    )
    w.place_balls(np.array([0]), scene.origins[[0]] + [[0.0, 0, -6.0]])
    batches = env.step(still())
    red = batches[STRIKER].vector_observations[0].reshape(2, 7, RAY)
    blue = batches[STRIKER].vector_observations[1].reshape(2, 7, RAY)
    # the ray at 90 degrees (third) looks ahead at the other striker 6 m away: "other team" is slot 5
    for rays in (red, blue):
        ahead = rays[0, 2]
        assert ahead[5] == 1.0 and ahead[7] == pytest.approx((6.0 - 1.0 - 0.5) / 20.0, abs=1e-3)
    # rays toward the goal behind (270 degrees is not cast; 0 and 180 look sideways): every
    # hit is one-hot or nothing, and both sweeps have 7 rays of 8 floats
    for rays in (red, blue):
        assert np.all(rays[..., :6].sum(-1) + rays[..., 6] <= 1.0)


def test_moves_follow_velocity_changes_drag_and_floor_friction() -> None:
    world = SoccerWorld()
    agent = np.array([0])
    world.place_agents(agent, world.origins[[0]] + [[0.0, 0, 3.0]], np.array([-90.0]))
    world.add_velocity(agent, np.array([[-2.0, 0.0, 0.0]]))
    world.step(np.zeros(32))
    # drag 3: factor 0.94; friction 0.6 * 9.81 * 0.02
    assert world.agent_velocities[0, 0] == pytest.approx(-(2.0 * 0.94 - 0.6 * 9.81 * 0.02), abs=1e-9)


def test_role_walls_keep_goalies_home_and_strikers_out_of_the_goal_areas() -> None:
    world = SoccerWorld()
    red_goalie, red_striker = 16, 0
    world.place_agents(
        np.array([red_goalie, red_striker]),
        world.origins[[0, 0]] + [[12.0, 0, 0], [8.0, 0, 3.0]],
        np.array([-90.0, -90.0]),
    )
    world.place_balls(np.arange(8), world.origins + [0.0, 0, -5.0])
    for _ in range(100):
        world.add_velocity(np.array([red_goalie]), np.array([[-2.0, 0.0, 0.0]]))  # toward the centre
        world.add_velocity(np.array([red_striker]), np.array([[2.0, 0.0, 0.0]]))  # toward its own goal
        world.step(np.zeros(32))
    local = world.agent_positions - world.origins[0]
    assert local[red_goalie, 0] >= 9.0 + 1.0 - 0.1  # the sphere's surface stops at the goalie wall
    assert local[red_striker, 0] <= 10.5 - 1.0 + 0.1
    # the ball passes both walls
    world.place_balls(np.array([0]), world.origins[[0]] + [[5.0, 0, -3.0]])
    world.set_ball_velocities(np.array([0]), np.array([[8.0, 0.0, 0.0]]))
    for _ in range(60):
        world.step(np.zeros(32))
    assert world.ball_positions[0, 0] - world.origins[0, 0] > 11.0


def test_ball_rolls_slides_above_seven_rad_per_second_and_bounces_off_walls() -> None:
    world = SoccerWorld()
    world.place_agents(
        np.arange(32),
        world.origins[world.agent_field]
        + [0.0, 0, -6.0]
        + np.stack([np.linspace(-8, 8, 32), np.zeros(32), np.zeros(32)], 1),
        np.zeros(32),
    )
    r = world.ball_radius
    world.place_balls(np.array([0]), world.origins[[0]] + [[0.0, 0, 0.0]])
    world.set_ball_velocities(np.array([0]), np.array([[10.0, 0.0, 0.0]]))
    world.step(np.zeros(32))
    # sliding: drag 0.1, then minus 0.6 g dt
    assert world.ball_velocities[0, 0] == pytest.approx(10.0 * 0.998 - 0.6 * 9.81 * 0.02, abs=1e-9)
    world.set_ball_velocities(np.array([0]), np.array([[3.0, 0.0, 0.0]]))
    world.step(np.zeros(32))
    assert 3.0 * 0.998 * 0.99 < world.ball_velocities[0, 0] < 3.0 * 0.998  # rolling: a slow loss
    assert 7.0 * r == pytest.approx(5.775)
    # toward the side wall at z = +7.59: it comes back
    world.place_balls(np.array([0]), world.origins[[0]] + [[0.0, 0, 4.0]])
    world.set_ball_velocities(np.array([0]), np.array([[0.0, 0.0, 5.0]]))
    for _ in range(50):
        world.step(np.zeros(32))
    assert world.ball_velocities[0, 2] < -1.0


def test_a_forward_move_kicks_the_ball_at_ten_metres_per_second() -> None:
    env = LocalEnvironment("SoccerTwos", seed=2)
    env.reset()
    scene: SoccerTwos = env.academy.scene
    w = scene.world
    for kick in (0, 1):
        w.place_agents(
            np.arange(32),
            w.origins[w.agent_field]
            + [0.0, 0, -6.0]
            + np.stack([np.linspace(-8, 8, 32) % 8 - 4, np.zeros(32), np.zeros(32)], 1),
            w.agent_yaws,
        )
        # red striker of pitch 0 just in front of the ball, moving at it (toward -x)
        w.place_agents(np.array([0]), w.origins[[0]] + [[2.0, 0, 0.0]], np.array([-90.0]))
        w.place_balls(np.array([0]), w.origins[[0]] + [[0.0, 0, 0.0]])
        actions = still()
        actions[STRIKER][0] = 1 if kick else 0
        if not kick:
            w.add_velocity(np.array([0]), np.array([[-8.0, 0.0, 0.0]]))
        env.step(actions)
        speed = -w.ball_velocities[0, 0]
        if kick:
            assert speed > 10.0  # the kick's 10 m/s on top of the push
        else:
            assert 0.0 < speed < 10.0


def test_goal_rewards_split_and_all_four_episodes_end() -> None:
    env = LocalEnvironment("SoccerTwos", seed=3)
    env.reset()
    scene: SoccerTwos = env.academy.scene
    w = scene.world
    # pitch 0: the ball rolls into the red goal (blue scores); pitch 1: into the blue goal (red scores)
    aside = np.flatnonzero(w.agent_field < 2)
    w.place_agents(
        aside,
        w.origins[w.agent_field[aside]] + np.stack([np.linspace(-6, 6, 8), np.zeros(8), np.full(8, -5.0)], 1),
        w.agent_yaws[aside],
    )
    w.place_balls(np.array([0, 1]), w.origins[[0, 1]] + [[13.5, 0, 0.0], [-13.5, 0, 0.0]])
    w.set_ball_velocities(np.array([0, 1]), np.array([[8.0, 0, 0], [-8.0, 0, 0]]))
    batches = env.step(still())
    s, g = batches[STRIKER], batches[GOALIE]
    step_s, step_g = -5 / 3000, 5 / 3000
    np.testing.assert_allclose(
        s.rewards[:4], [-0.1 + step_s, 1.0 + step_s, 1.0 + step_s, -0.1 + step_s], atol=1e-6
    )
    np.testing.assert_allclose(
        g.rewards[:4], [-1.0 + step_g, 0.1 + step_g, 0.1 + step_g, -1.0 + step_g], atol=1e-6
    )
    assert s.local_done[:4].all() and g.local_done[:4].all()
    assert not s.local_done[4:].any() and not g.local_done[4:].any()
    assert not s.max_reached.any()
    np.testing.assert_allclose(s.rewards[4:], step_s, rtol=1e-5)
    np.testing.assert_allclose(g.rewards[4:], step_g, rtol=1e-5)


@pytest.mark.slow
def test_episodes_time_out_after_3000_steps() -> None:
    env = LocalEnvironment("SoccerTwos", seed=4)
    env.reset()
    decisions = 0
    while decisions < 602:
        batches = env.step(still())
        decisions += 1
        if batches[STRIKER].local_done.any():
            break
    assert decisions == 601 and batches[STRIKER].max_reached.all() and batches[GOALIE].max_reached.all()


def test_reset_parameters_take_effect_at_the_next_reset() -> None:
    env = LocalEnvironment("SoccerTwos", seed=5)
    env.reset({"ball_scale": 10.0, "gravity": 5.0})
    w = env.academy.scene.world
    assert w.ball_radius == pytest.approx(1.1)
    np.testing.assert_allclose(w.model.geom_size[w._ball_geoms, 0], 1.1)
    assert w.mu_g == pytest.approx(0.6 * 5.0)
    np.testing.assert_allclose(w.ball_positions[:, 1], 1.1)
    with pytest.raises(ValueError, match="ball_scale"):
        w.set_ball_radius(0.0)


@pytest.mark.slow
def test_scripted_team_beats_random_opponents_and_random_strikers_stay_below() -> None:
    rng = np.random.default_rng(0)
    env = LocalEnvironment("SoccerTwos", seed=6)
    scene = env.academy.scene
    scripted = play(env, lambda: red_scripted_blue_random(scene, rng), 600)
    red_wins = scripted[:, 0] > 0.0
    assert len(scripted) >= 8 and red_wins.mean() > 0.8, scripted
    assert scripted[:, 0].mean() >= 0.8 * BENCHMARK + 0.5  # the benchmark is 0: the mirrored means
    random = play(LocalEnvironment("SoccerTwos", seed=7), lambda: random_actions(rng), 1202)
    # random strikers mostly run out the clock (-1 each) and concede as often as they score
    assert len(random) >= 16 and random[:, 0].mean() < BENCHMARK, random
    assert random[:, 0].mean() < scripted[:, 0].mean() - 0.5
