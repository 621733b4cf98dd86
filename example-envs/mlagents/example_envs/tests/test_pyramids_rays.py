"""Pyramids' fast ray sensor sees exactly what three plain RayPerception sweeps see."""

from __future__ import annotations

import numpy as np
import pytest

import mlagents.example_envs.registry  # noqa: F401  (registers the scenes)
from mlagents.example_envs.box_arena import forward_vectors
from mlagents.example_envs.pyramids import DETECTABLE_TAGS, RAY_DISTANCE, SWEEPS, switch_then_gold
from mlagents.example_envs.pyramids_rays import ReachCastWorld, SweepPerception
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.sdk.ray_perception import RayPerception

pytestmark = pytest.mark.slow


def test_reaching_sweeps_equal_three_plain_sweeps_while_piles_stand_and_fall() -> None:
    env = LocalEnvironment("Pyramids", seed=5)
    try:
        env.reset()
        scene = env.academy.scene
        for area, pyramid in enumerate(scene.pyramids):  # every pile stands: bricks in view
            scene.switch_on[area] = True
            pyramid.spawn(scene.brick_roots[area] - scene.origins[area])
        plain = [RayPerception(RAY_DISTANCE, angles, DETECTABLE_TAGS, 0.0, rise) for angles, rise in SWEEPS]
        sensor = SweepPerception(RAY_DISTANCE, SWEEPS, DETECTABLE_TAGS)
        assert sensor.all_ahead and sensor.observation_size == sum(s.observation_size for s in plain)
        rng = np.random.default_rng(0)
        compared, bricks_seen = 0, 0
        for decision in range(60):
            actions = switch_then_gold(scene)
            random = rng.random(16) < 0.3
            actions[random, 0] = rng.integers(0, 5, int(random.sum()))
            env.step({"PyramidsLearning": actions})
            if decision % 6:
                continue
            scene._sync_cast_world()
            world = scene.cast_world
            assert isinstance(world, ReachCastWorld)
            agents = np.arange(16)
            positions, yaws = scene.world.agent_positions, scene.world.agent_yaws
            expected = np.concatenate([s.perceive(world, positions, yaws, agents) for s in plain], axis=1)
            with world.aimed(positions, forward_vectors(yaws), RAY_DISTANCE):
                fast = sensor.perceive(world, positions, yaws, agents)
                idx, valid = world.candidates("boxes", agents)
            full_idx, full_valid = world.candidates("boxes", agents)
            assert valid.sum(axis=1).max() < full_valid.sum(axis=1).min()  # fewer boxes to cast against
            np.testing.assert_array_equal(fast, expected)
            compared += 1
            bricks_seen += int(expected.reshape(16, 21, len(DETECTABLE_TAGS) + 2)[..., 0].sum())
        assert compared == 10
        assert bricks_seen > 0  # the piles were in view, not only walls and stones
    finally:
        env.close()
