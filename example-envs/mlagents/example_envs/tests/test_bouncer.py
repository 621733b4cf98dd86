"""Bouncer: decisions on landing only, the jump, rewards and done rules, the banana_scale reset
parameter. Its brain, the scripted jump against the benchmark, determinism, the build over gRPC
and two workers: test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.bouncer import (
    GRAVITY,
    MAX_JUMPS,
    Bouncer,
    BouncerWorld,
)
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tests.playing import scene_of

BRAIN = "BouncerLearning"


def test_first_decision_comes_on_landing_with_positions_relative_to_the_origin() -> None:
    env = LocalEnvironment("Bouncer", seed=0)
    batch = env.reset()[BRAIN]
    assert len(batch.agents) == 1
    obs = batch.vector_observations
    assert obs.shape == (1, 18)
    assert np.all(obs[:, :12] == 0.0)  # the stack of a fresh episode
    agent, banana = obs[0, 12:15], obs[0, 15:18]
    # dropped from y = 2 onto the ground (top 0.5): the box centre rests at about 1.0
    assert agent[1] == pytest.approx(1.0, abs=0.02)
    assert np.all(np.abs(agent[[0, 2]]) <= 5.0)
    assert np.all(np.abs(banana[[0, 2]]) <= 5.0) and 2.0 <= banana[1] <= 7.0
    # the drop from y = 2 takes about sqrt(2 * 1 / 19.6) = 0.32 s = 16 physics steps
    assert 14 <= env.academy.total_step_count <= 18


@pytest.mark.parametrize("a1, a0", [(1.0, 0.0), (-1.0, 0.5)])
def test_jump_is_a_velocity_change_of_ten_per_unit_and_the_next_decision_is_the_landing(
    a1: float, a0: float
) -> None:
    env = LocalEnvironment("Bouncer", seed=1)
    env.reset()
    scene = scene_of(env, Bouncer)
    scene.world.banana_position = np.array([0.0, 60.0, 0.0])  # out of reach
    scene.world.place_agent(np.array([-5.0, 1.0, 0.0]))
    start = env.academy.total_step_count
    batch = env.step({BRAIN: np.array([[a0, a1, 0.0]], np.float32)})[BRAIN]
    vertical = 10.0 * ((a1 + 1.0) / 2.0 + 1.0)
    flight = 2.0 * vertical / GRAVITY  # back to the same height
    steps = env.academy.total_step_count - start
    assert steps == pytest.approx(flight / 0.02, abs=2)
    agent = batch.vector_observations[0, -6:-3]
    assert agent[0] == pytest.approx(-5.0 + 10.0 * a0 * steps * 0.02, abs=0.3)
    # the action penalty -0.05 * mean(a^2) of that jump
    assert batch.rewards[0] == pytest.approx(-0.05 * (a0 * a0 + a1 * a1) / 3.0, abs=1e-6)
    assert not batch.local_done[0]


def test_leaving_the_platform_costs_one_and_ends_the_episode() -> None:
    env = LocalEnvironment("Bouncer", seed=2)
    env.reset()
    scene = scene_of(env, Bouncer)
    scene.world.banana_position = np.array([0.0, 60.0, 0.0])
    scene.world.place_agent(np.array([15.0, 1.0, 0.0]))
    batch = env.step({BRAIN: np.array([[1.0, -1.0, 0.0]], np.float32)})[BRAIN]
    assert batch.local_done[0] and not batch.max_reached[0]
    assert batch.rewards[0] == pytest.approx(-1.0 - 0.05 * 2.0 / 3.0, abs=1e-6)
    # the report comes at the first landing of the new episode, near the centre again
    assert np.all(np.abs(batch.vector_observations[0, -6:-3][[0, 2]]) <= 5.0)
    assert scene.jumps_left == 19


def test_episode_ends_after_twenty_landings() -> None:
    env = LocalEnvironment("Bouncer", seed=3)
    env.reset()
    scene = scene_of(env, Bouncer)
    done_at = None
    for decision in range(1, 25):
        scene.world.banana_position = np.array([0.0, 60.0, 0.0])
        batch = env.step({BRAIN: np.zeros((1, 3), np.float32)})[BRAIN]  # straight up, 15 m/s
        if batch.local_done[0]:
            done_at = decision
            break
    # the reset's landing was the first of 20; the 19th jump lands for the 20th time
    assert done_at == 19
    assert batch.rewards[0] == 0.0  # a zero action costs nothing
    assert scene.jumps_left == MAX_JUMPS  # reset in the same tick as the last landing


def test_touching_the_banana_pays_one_and_moves_it() -> None:
    env = LocalEnvironment("Bouncer", seed=4)
    env.reset()
    scene = scene_of(env, Bouncer)
    scene.world.place_agent(np.array([0.0, 1.0, 0.0]))
    scene.world.banana_position = np.array([0.0, 5.0, 0.0])
    batch = env.step({BRAIN: np.array([[0.0, 0.0, 0.0]], np.float32)})[BRAIN]  # 15 m/s up: apex at 6.7
    assert batch.rewards[0] == pytest.approx(1.0)  # a zero action costs nothing
    assert not np.allclose(scene.world.banana_position, [0.0, 5.0, 0.0])
    np.testing.assert_allclose(batch.vector_observations[0, -3:], scene.world.banana_position, atol=1e-6)


def test_banana_scale_sets_the_trigger_box_at_reset() -> None:
    world = BouncerWorld()
    world.banana_yaw = 0.0
    world.banana_position = np.array([0.0, 4.0, 0.0])
    centre, half = world.banana_box()
    np.testing.assert_allclose(centre, [0.0, 4.6, 0.075])
    np.testing.assert_allclose(half, [1.5, 1.5, 3.0])
    world.place_agent(np.array([0.0, 4.6 + 1.5 + 0.49, 0.0]))
    assert world.touches_banana()
    world.place_agent(np.array([0.0, 4.6 + 1.5 + 0.51, 0.0]))
    assert not world.touches_banana() and world.ray_hits()  # the landing ray sees the trigger
    # turned by 90 degrees the long side lies along x
    world.banana_yaw = 90.0
    world.place_agent(np.array([3.2, 4.6, 0.0]))
    assert world.touches_banana()
    world.banana_yaw = 0.0
    assert not world.touches_banana()

    env = LocalEnvironment("Bouncer", seed=5)
    env.reset({"banana_scale": 300.0})
    _, half = scene_of(env, Bouncer).world.banana_box()
    np.testing.assert_allclose(half, [3.0, 3.0, 6.0])
    with pytest.raises(ValueError, match="banana_scale"):
        env.reset({"banana_scale": 0.0})
