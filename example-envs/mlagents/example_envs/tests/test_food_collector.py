"""FoodCollector: observation layout, laser and freezing, food rewards, the academy's 1500-step
episodes, reset parameters, the scripted collector against the benchmark (over academy episodes).
Its brain, determinism, the build over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.food_collector import FoodCollector, collect_good_food
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tests.playing import reset_scene

BRAIN = "BananaLearning"
BENCHMARK = 10.0
N = 20
RAY = 7  # floats per ray: 5 tags, nothing-hit, distance


def random_actions(rng: np.random.Generator) -> np.ndarray:
    """Uniformly random actions of the 20 agents, float32 ``(20, 4)``."""
    return np.stack([rng.integers(0, size, N) for size in (3, 3, 3, 2)], axis=1).astype(np.float32)


def still() -> np.ndarray:
    return np.zeros((N, 4), np.float32)


def episodes(env: LocalEnvironment, decide, decisions: int) -> list[float]:
    """Mean return of the 20 agents for every academy episode within ``decisions`` decisions
    (the trainer resets the environment when the academy reports global_done)."""
    batch = env.reset()[BRAIN]
    running = np.zeros(N)
    means: list[float] = []
    for _ in range(decisions):
        batch = env.step({BRAIN: decide(batch)})[BRAIN]
        running += batch.rewards
        if batch.local_done.all():
            means.append(float(running.mean()))
            running[:] = 0.0
        if env.global_done:
            batch = env.reset()[BRAIN]
    return means


def clear_area(scene: FoodCollector, area: int) -> None:
    """Line the food of ``area`` up in its far corner (5 rows of 10) and put its five agents in
    a row 8 m apart at z = +20, facing +z."""
    w = scene.world
    food = np.flatnonzero(w.food_area == area)
    grid = np.stack([3.0 * (np.arange(50) % 10), np.zeros(50), 4.0 * (np.arange(50) // 10)], axis=1)
    w.place_food(food, scene.origins[area] + [-44.0, 0.0, -44.0] + grid, np.full(50, 90.0))
    agents = np.arange(area * 5, area * 5 + 5)
    row = np.stack([8.0 * np.arange(5) - 16.0, np.zeros(5), np.full(5, 20.0)], axis=1)
    w.place_agents(agents, scene.origins[area] + row, np.zeros(5))


def cleared_scene(seed: int) -> tuple[LocalEnvironment, FoodCollector]:
    """FoodCollector in process with ``seed``, reset, then every area cleared (``clear_area``)."""
    env, scene = reset_scene("FoodCollector", seed, FoodCollector)
    for area in range(4):
        clear_area(scene, area)
    return env, scene


def test_reset_lays_out_five_agents_and_fifty_food_per_area() -> None:
    env = LocalEnvironment("FoodCollector", seed=0)
    batch = env.reset()[BRAIN]
    assert batch.vector_observations.shape == (N, 53)
    scene: FoodCollector = env.academy.scene
    w = scene.world
    assert np.array_equal(np.bincount(w.agent_area), [5] * 4)
    assert np.array_equal(np.bincount(w.food_area[w.food_good]), [25] * 4)
    assert np.array_equal(np.bincount(w.food_area[~w.food_good]), [25] * 4)
    local_agents = w.agent_positions - scene.origins[w.agent_area]
    local_food = w.food_positions - scene.origins[w.food_area]
    assert np.all(np.abs(local_agents[:, [0, 2]]) <= 45.0) and np.all(np.abs(local_food[:, [0, 2]]) <= 45.0)
    np.testing.assert_allclose(local_agents[:, 1], 1.0)
    assert np.all(w.agent_yaws == np.round(w.agent_yaws)) and np.all(
        (w.agent_yaws >= 0) & (w.agent_yaws < 360)
    )
    rays = batch.vector_observations[:, :49].reshape(N, 7, RAY)
    tags, nothing, distance = rays[..., :5], rays[..., 5], rays[..., 6]
    assert np.all(tags.sum(-1) + nothing == 1.0)  # everything in an area is tagged (the floor is never hit)
    assert np.all((distance > 0) == (tags.sum(-1) == 1)) and np.all(distance <= 1.0)
    assert tags[..., 0].any() and tags[..., 3].any() and tags[..., 2].any()  # good food, bad food, walls
    np.testing.assert_array_equal(batch.vector_observations[:, 49:], 0.0)  # at rest, not frozen, no shot


def test_movement_turn_drag_friction_and_damping_above_five_metres_per_second() -> None:
    env, scene = cleared_scene(1)
    w = scene.world
    yaw0 = w.agent_yaws.copy()
    turn = still()
    turn[:, 2] = 2  # +6 degrees per physics step
    env.step({BRAIN: turn})
    np.testing.assert_allclose(w.agent_yaws - yaw0, 30.0)
    turn[:, 2] = 1
    env.step({BRAIN: turn})
    np.testing.assert_allclose(w.agent_yaws, yaw0)
    # forward: velocity change 2 per step, damped by 0.95 while faster than 5 m/s, drag 0.5 and
    # the floor's Coulomb friction 0.6 * 9.81
    expected = 0.0
    for _ in range(3):
        batch = env.step({BRAIN: np.tile([[1, 0, 0, 0]], (N, 1)).astype(np.float32)})[BRAIN]
        for _ in range(5):
            expected = ((expected * 0.95 if expected > 5.0 else expected) + 2.0) * 0.99 - 0.6 * 9.81 * 0.02
    np.testing.assert_allclose(np.linalg.norm(w.agent_velocities, axis=1), expected, rtol=1e-6)
    # the observation reports the velocity in the agent's frame: straight ahead
    np.testing.assert_allclose(batch.vector_observations[:, 49], 0.0, atol=1e-4)
    np.testing.assert_allclose(batch.vector_observations[:, 50], expected, rtol=1e-5)
    # sideways (branch 1) replaces forward/backward
    side = np.tile([[1, 2, 0, 0]], (N, 1)).astype(np.float32)
    before = w.agent_velocities[:, 2].copy()
    batch = env.step({BRAIN: side})[BRAIN]
    assert np.all(batch.vector_observations[:, 49] < -5.0)  # moving left now
    assert np.all(w.agent_velocities[:, 2] < before)


def test_laser_freezes_the_agent_ahead_for_four_seconds() -> None:
    env, scene = cleared_scene(2)
    w = scene.world
    # agent 0 looks at agent 1, 10 m ahead; agent 2 sits 1.5 m beside agent 0 (overlapped by the cast)
    base = scene.origins[0] + [0.0, 0.0, 0.0]
    w.place_agents(
        np.array([0, 1, 2]), base + np.array([[0.0, 0, 0], [0.0, 0, 10.0], [1.5, 0, 0]]), np.zeros(3)
    )
    fire = still()
    fire[0, 3] = 1
    batch = env.step({BRAIN: fire})[BRAIN]
    assert scene.frozen.tolist() == [False, True] + [False] * 18
    assert batch.vector_observations[0, 52] == 1.0 and batch.vector_observations[1, 51] == 1.0
    # the shooter sees its target as frozenAgent straight ahead (ray 90 degrees is the second)
    ahead = batch.vector_observations[0, :49].reshape(7, RAY)[1]
    assert ahead[4] == 1.0 and ahead[6] == pytest.approx((10.0 - 0.5 - 0.5) / 50.0, abs=1e-4)
    # a frozen agent ignores its actions until 200 physics steps have passed
    go = still()
    go[1, 0] = 1
    for _ in range(39):
        batch = env.step({BRAIN: go})[BRAIN]
    assert scene.frozen[1] and np.linalg.norm(w.agent_velocities[1]) == 0.0
    batch = env.step({BRAIN: go})[BRAIN]
    assert not scene.frozen[1] and np.linalg.norm(w.agent_velocities[1]) > 0.0
    assert batch.vector_observations[1, 51] == 0.0


def test_good_food_pays_one_bad_food_costs_one_and_food_reappears() -> None:
    env, scene = cleared_scene(3)
    w = scene.world
    good = np.flatnonzero(w.food_good & (w.food_area == 0))[0]
    bad = np.flatnonzero(~w.food_good & (w.food_area == 0))[0]
    w.place_food(np.array([good, bad]), w.agent_positions[[0, 1]] + [0.0, 0.0, 1.05], np.full(2, 90.0))
    batch = env.step({BRAIN: still()})[BRAIN]
    np.testing.assert_allclose(batch.rewards[:2], [1.0, -1.0])
    np.testing.assert_allclose(batch.rewards[2:], 0.0)
    moved = w.food_positions[[good, bad]] - w.agent_positions[[0, 1]]
    assert np.all(np.linalg.norm(moved[:, [0, 2]], axis=1) > 3.0)  # both re-appeared elsewhere


@pytest.mark.slow
def test_the_academy_ends_every_episode_after_1500_steps() -> None:
    env = LocalEnvironment("FoodCollector", seed=4)
    env.reset()
    for decision in range(1, 301):
        batch = env.step({BRAIN: still()})[BRAIN]
        if decision < 300:
            assert not batch.local_done.any() and not env.global_done
    assert batch.local_done.all() and batch.max_reached.all() and env.global_done


def test_reset_parameters_take_effect_at_the_next_reset() -> None:
    env, scene = reset_scene("FoodCollector", 5, FoodCollector)
    env.reset({"agent_scale": 2.0, "laser_length": 3.0})
    w = scene.world
    np.testing.assert_allclose(w.agent_scales, 2.0)
    np.testing.assert_allclose(w.model.geom_size[w._agent_geoms, :2], 1.0)
    np.testing.assert_allclose(w.agent_positions[:, 1], 1.5)
    assert scene.laser_length == 3.0
    with pytest.raises(ValueError, match="agent_scale"):
        w.set_agent_scales(np.arange(N), 0.0)


@pytest.mark.slow
def test_scripted_collector_reaches_the_benchmark_and_random_stays_far_below() -> None:
    env = LocalEnvironment("FoodCollector", seed=6)
    scene = env.academy.scene
    scripted = episodes(env, lambda _: collect_good_food(scene), 600)
    assert len(scripted) == 2
    assert np.mean(scripted) >= 0.8 * BENCHMARK, scripted
    rng = np.random.default_rng(0)
    random = episodes(LocalEnvironment("FoodCollector", seed=7), lambda _: random_actions(rng), 600)
    assert len(random) == 2
    assert np.mean(random) < 0.25 * BENCHMARK, random
