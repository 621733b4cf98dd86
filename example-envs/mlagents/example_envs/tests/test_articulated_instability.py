"""When MuJoCo has to reset an unstable Crawler or Walker simulation, every episode of the scene
ends at that step, the log says why, the drives act again afterwards, and no MUJOCO_LOG.TXT is
left in the working directory."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from mlagents.example_envs.sdk.local import LocalEnvironment

WIDTH = {"CrawlerStatic": 20, "CrawlerDynamic": 20, "Walker": 39}


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.mark.parametrize("scene", sorted(WIDTH))
def test_unstable_simulation_ends_every_episode(scene: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    lines = Lines()
    logger = logging.getLogger("mlagents.example_envs")
    logger.addHandler(lines)
    env = LocalEnvironment(scene, seed=3)
    try:
        brain = env.brain_names[0]
        batches = env.reset()
        n = len(batches[brain].agents)
        actions = np.random.default_rng(1).uniform(-1.0, 1.0, (n, WIDTH[scene])).astype(np.float32)
        for _ in range(3):
            batch = env.step({brain: actions})[brain]
            assert not batch.local_done.any()
        world = env.academy.scene.world
        ctrl = world.data.ctrl.copy()
        assert np.abs(ctrl).max() > 0.0
        # a velocity no integrator survives, on one hinge of the third body
        world._qvel[2, 6] = 1e11
        batch = env.step({brain: actions})[brain]
        assert batch.local_done.all() and not batch.max_reached.any()
        assert any("QVEL" in line and "unstable" in line for line in lines.lines), lines.lines
        assert any(
            line.startswith(f"{scene}: MuJoCo reset") and "every agent's episode ends" in line
            for line in lines.lines
        )
        # the next decision starts every episode anew; the same actions drive the joints again
        # (MuJoCo's reset had zeroed the controls)
        batch = env.step({brain: actions})[brain]
        assert not batch.local_done.any()
        assert np.array_equal(world.data.ctrl, ctrl)
        assert np.isfinite(world.data.qvel).all() and np.abs(world.data.qvel).max() < 100.0
        assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    finally:
        logger.removeHandler(lines)
        env.close()
