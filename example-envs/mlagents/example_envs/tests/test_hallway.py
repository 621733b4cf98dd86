"""Hallway: brain, physics rules, rewards, a
shortest-path controller against the benchmark, determinism, and the build over gRPC."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.hallway import Hallway, HallwayWorld, shortest_path
from mlagents.example_envs.sdk.local import LocalEnvironment

BRAIN = "HallwayLearning"
BENCHMARK = 0.7
RAY = 7  # floats per ray: 5 tags, nothing-hit, distance


def random_actions(rng: np.random.Generator) -> np.ndarray:
    """Uniformly random actions of the 16 agents, float32 ``(16, 1)``."""
    return rng.integers(0, 5, (16, 1)).astype(np.float32)


def newest(batch) -> np.ndarray:
    """The newest of the three stacked 36-float frames."""
    return batch.vector_observations[:, -36:]


def test_brain_agents_and_engine_configuration() -> None:
    spec = Hallway.spec()
    assert spec.academy_name == "Academy"
    (brain,) = spec.brains
    assert brain.name == BRAIN
    assert brain.vector_action_space_type == "discrete"
    assert brain.vector_action_size == (5,)
    assert brain.vector_observation_size == 36
    assert brain.num_stacked_vector_observations == 3
    assert brain.camera_resolutions == ()
    (group,) = spec.agents
    assert (group.count, group.max_step, group.decision_interval, group.on_demand) == (16, 3000, 6, False)
    assert spec.reset_parameters == {}
    config = spec.training_configuration
    assert (
        config.width,
        config.height,
        config.quality_level,
        config.time_scale,
        config.target_frame_rate,
    ) == (
        128,
        128,
        0,
        20.0,
        -1,
    )


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


def test_shortest_path_reaches_the_benchmark_and_random_stays_far_below(run_episodes) -> None:
    env = LocalEnvironment("Hallway", seed=1)
    scene = env.academy.scene
    scripted, _ = run_episodes(env, BRAIN, lambda _: shortest_path(scene), 400, episodes=32)
    assert len(scripted) >= 32
    assert np.mean(scripted) >= 0.8 * BENCHMARK, scripted

    rng = np.random.default_rng(0)
    env = LocalEnvironment("Hallway", seed=2)
    random, _ = run_episodes(env, BRAIN, lambda _: random_actions(rng), 510, episodes=16)
    assert len(random) >= 16
    assert np.mean(random) < 0.25 * BENCHMARK, random


def test_same_seed_same_episode_and_different_seeds_differ(roll_out, assert_reproducible) -> None:
    def trajectory(seed: int) -> np.ndarray:
        rng = np.random.default_rng(7)
        batches = roll_out(LocalEnvironment("Hallway", seed=seed), BRAIN, lambda _: random_actions(rng), 40)
        return np.stack([batch.vector_observations for batch in batches])

    assert_reproducible(trajectory)


def test_build_over_grpc_matches_the_in_process_scene(open_build, assert_wire_matches_local) -> None:
    env = open_build("Hallway", seed=3)
    assert env.academy_name == "Academy"
    params = env.brains[BRAIN]
    assert params.vector_action_space_type == "discrete"
    assert params.vector_action_space_size == [5]
    assert params.vector_observation_space_size == 36
    assert params.num_stacked_vector_observations == 3
    assert env.reset_parameters == {}
    rng = np.random.default_rng(0)

    def decide(infos):  # type: ignore[no-untyped-def]
        assert len(infos[BRAIN].agents) == 16
        return {BRAIN: random_actions(rng)}

    local = LocalEnvironment("Hallway", seed=3)
    assert_wire_matches_local(env, local, [BRAIN], decide, 3, obs_atol=1e-6, reward_atol=1e-7)


@pytest.mark.slow
def test_two_workers_through_subprocess_env_manager(two_workers) -> None:
    workers = two_workers(
        "Hallway", {BRAIN: lambda info: np.ones((len(info.agents), 1), np.float32)}
    )  # forward
    observations = [infos[BRAIN].vector_observations for infos in workers.first]
    assert all(obs.shape == (16, 108) for obs in observations)
    assert not np.allclose(observations[0], observations[1])  # worker seeds differ
    for infos in workers.transitions(4):
        assert len(infos[BRAIN].agents) == 16
        assert np.all(np.asarray(infos[BRAIN].rewards) <= 1.0)
