"""The shortcuts of the Crawler and Walker physics steps give exactly what the general code gives."""

from __future__ import annotations

import numpy as np

from mlagents.example_envs.crawler_world import CrawlerWorld
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.vector3 import cross3
from mlagents.example_envs.walker_body import PART_INDEX
from mlagents.example_envs.walker_world import WalkerWorld


def moving_env(scene: str, decisions: int = 8) -> LocalEnvironment:
    """The scene after a few decisions of random actions (bodies moving, some on the ground)."""
    env = LocalEnvironment(scene, seed=2)
    batches = env.reset()
    brain = env.brain_names[0]
    rng = np.random.default_rng(5)
    width = 20 if scene.startswith("Crawler") else 39
    for _ in range(decisions):
        k = len(batches[brain].agents)
        batches = env.step({brain: rng.uniform(-1.0, 1.0, (k, width)).astype(np.float32)})
    return env


def test_cross3_is_numpy_cross_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 7, 5, 3))
    assert np.array_equal(cross3(a, b), np.cross(a, b))


def test_crawler_body_rows_equal_the_full_arrays() -> None:
    env = moving_env("CrawlerStatic")
    try:
        world = env.academy.scene.world
        assert np.array_equal(world.body_com_velocities(), world.velocities()[1][:, 0])
        assert np.array_equal(world.body_forward(), world.body_axes()[2])
    finally:
        env.close()


def test_walker_part_rows_equal_the_full_arrays() -> None:
    env = moving_env("Walker", decisions=4)
    try:
        world = env.academy.scene.world
        parts = [0, PART_INDEX["head"]]
        assert np.array_equal(world.part_velocities(parts), world.velocities()[1][:, parts])
        assert np.array_equal(world.part_positions(parts), world.positions()[:, parts])
        assert np.array_equal(world.hips_forward(), world.hips_axes()[2])
    finally:
        env.close()


def drive_state(world: CrawlerWorld | WalkerWorld) -> list[np.ndarray]:
    return [
        world._ctrl.copy(),
        world._force.copy(),
        world._damping.copy(),
        world.norm_targets.copy(),
        world.strengths.copy(),
    ]


def test_repeated_and_partly_changed_actions_set_the_same_drives() -> None:
    """Setting the held action again is skipped; a batch where only some rows changed updates
    those rows: the drives equal those of a world that only ever saw the final actions."""
    for scene, width in (("CrawlerDynamic", 20), ("Walker", 39)):
        rng = np.random.default_rng(1)
        worlds = []
        for _ in range(2):
            env = LocalEnvironment(scene, seed=0)
            env.reset()
            worlds.append((env, env.academy.scene.world))
        try:
            (_, incremental), (_, direct) = worlds
            n = incremental.n
            everyone = np.arange(n)
            first = rng.uniform(-1.5, 1.5, (n, width)).astype(np.float32)
            final = first.copy()
            final[::2] = rng.uniform(-1.5, 1.5, (len(final[::2]), width))
            incremental.set_drives(everyone, first)
            incremental.set_drives(everyone, first)  # the held action again: nothing to do
            incremental.set_drives(everyone, final)  # every other row changed
            subset = np.array([1, 2])
            incremental.set_drives(subset, final[subset])  # unchanged rows of a subset
            direct.set_drives(everyone, final)
            for got, want in zip(drive_state(incremental), drive_state(direct)):
                assert np.array_equal(got, want), scene
        finally:
            for env, _ in worlds:
                env.close()
