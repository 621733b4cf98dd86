"""Pyramids: a brick pyramid at rest falls asleep (is not simulated) and the agent wakes it."""

from __future__ import annotations

import numpy as np

from mlagents.example_envs.pyramids_physics import SLEEP_STEPS, BrickPyramid


def test_a_resting_pile_sleeps_until_the_agent_comes() -> None:
    pyramid = BrickPyramid()
    pyramid.set_scenery(np.array([30.0, 0.0, 30.0]), np.tile([-30.0, 0.0, -30.0], (6, 1)))
    pyramid.spawn(np.array([0.0, 2.0, 0.0]))
    far, still = np.array([20.0, 1.0, 20.0]), np.zeros(3)
    steps = 0
    while not pyramid.asleep:
        pyramid.step(far, still, 0.0)
        steps += 1
        assert steps < 200, "the pile never came to rest"
    assert steps >= SLEEP_STEPS  # it dropped and settled first
    np.testing.assert_array_equal(pyramid._free_qvel, 0.0)
    resting = pyramid.data.qpos.copy()
    time = pyramid.data.time
    for _ in range(20):
        assert not pyramid.step(far, still, 0.0)
    assert pyramid.data.time == time  # not simulated while asleep
    np.testing.assert_array_equal(pyramid.data.qpos[2:], resting[2:])
    assert pyramid.gold_position[1] > 5.0

    # the agent runs at the pile: it wakes up as the agent comes within reach and topples
    position, velocity = np.array([-8.0, 1.0, 0.8]), np.array([8.0, 0.0, 0.0])
    woke_at = None
    for _ in range(200):
        pyramid.step(position, velocity, 90.0)
        if woke_at is None and not pyramid.asleep:
            woke_at = position[0]
        position = position + velocity * 0.02
        if position[0] > 6.0:
            velocity = -velocity
    assert woke_at is not None and woke_at < -2.0  # before the agent reached the bottom ring (x -1.84)
    assert pyramid.gold_position[1] < 3.0
