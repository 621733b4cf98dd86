"""Playing an example scene in a test (not a test module): random actions for any brain, scripted
episodes in process, and the check that a build over the wire plays exactly like the same scene in
process.

A scripted decision (``Decide``) maps what the agents of one brain saw (a DecisionBatch in
process, a BrainInfo over the wire) to their actions, float32 ``(agents, action size)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from mlagents.envs.environment import UnityEnvironment
from mlagents.example_envs.sdk.local import LocalEnvironment

Decide = Callable[[Any], np.ndarray]
Scene = TypeVar("Scene")


def scene_of(env: LocalEnvironment, kind: type[Scene]) -> Scene:
    """The scene of ``env``'s academy, checked to be a ``kind``."""
    scene = env.academy.scene
    assert isinstance(scene, kind)
    return scene


def reset_scene(name: str, seed: int, kind: type[Scene]) -> tuple[LocalEnvironment, Scene]:
    """The example ``name`` in process with ``seed``, reset: (the environment, its ``kind`` scene)."""
    env = LocalEnvironment(name, seed=seed)
    env.reset()
    return env, scene_of(env, kind)


def random_actions(
    env: LocalEnvironment, counts: Mapping[str, int], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Uniformly random actions for ``counts[brain]`` agents of each brain of ``env``: continuous
    values in [-1, 1], one whole action per discrete branch; float32 ``(agents, action size)``."""
    actions = {}
    for brain, k in counts.items():
        spec = env.brains[brain]
        if spec.vector_action_space_type == "continuous":
            actions[brain] = rng.uniform(-1.0, 1.0, (k, spec.action_length)).astype(np.float32)
        else:
            columns = [rng.integers(0, size, k) for size in spec.vector_action_size]
            actions[brain] = np.stack(columns, axis=1).astype(np.float32)
    return actions


def run_episodes(
    env: LocalEnvironment, brain: str, decide: Decide, max_decisions: int, episodes: int | None = None
) -> tuple[list[float], list[bool]]:
    """Reset ``env``, then let ``decide(batch)`` act on ``brain`` for at most ``max_decisions``
    decisions, stopping early once ``episodes`` episodes ended. Returns the return and the
    max_reached flag of every episode that ended, in order."""
    batch = env.reset()[brain]
    running = np.zeros(len(batch.agents))
    returns: list[float] = []
    timeouts: list[bool] = []
    for _ in range(max_decisions):
        batch = env.step({brain: decide(batch)})[brain]
        running += batch.rewards
        for agent in np.flatnonzero(batch.local_done):
            returns.append(float(running[agent]))
            timeouts.append(bool(batch.max_reached[agent]))
            running[agent] = 0.0
        if episodes is not None and len(returns) >= episodes:
            break
    return returns, timeouts


def sent_pictures(camera: Sequence[np.ndarray]) -> np.ndarray:
    """The pictures of one camera as a build sends them (floats in [0, 1], PNG-decoded), back as
    uint8 ``(agents, height, width, channels)``: PNG is lossless, so they equal the scene's."""
    return np.round(np.stack(camera) * 255.0).astype(np.uint8)


def assert_wire_matches_local(
    wire: UnityEnvironment,
    local: LocalEnvironment,
    brains: Sequence[str],
    decide: Callable[[dict], dict[str, np.ndarray]],
    decisions: int,
    *,
    obs_atol: float,
    reward_atol: float,
    reset_obs_atol: float | None = None,
    config: dict[str, float] | None = None,
) -> None:
    """Reset both environments with ``config``, then ``decisions`` times send both the actions
    ``decide(wire brain infos)``. After the reset and after every decision, every brain of
    ``brains`` has as many agents on both sides, vector observations within ``obs_atol``
    (``reset_obs_atol`` after the reset, when given), rewards within ``reward_atol``, the very
    same pictures, and the action masks of the scene (sent as 1 = allowed)."""
    infos = wire.reset(train_mode=True, config=config)
    expected = local.reset(config)
    for decision in range(decisions + 1):
        atol = reset_obs_atol if decision == 0 and reset_obs_atol is not None else obs_atol
        for brain in brains:
            info, batch = infos[brain], expected[brain]
            assert len(info.agents) == len(batch.agents)
            np.testing.assert_allclose(info.vector_observations, batch.vector_observations, atol=atol)
            np.testing.assert_allclose(info.rewards, batch.rewards, atol=reward_atol)
            assert len(info.visual_observations) == len(batch.visual_observations)
            for camera, pictures in zip(info.visual_observations, batch.visual_observations):
                np.testing.assert_array_equal(sent_pictures(camera), pictures)
            if batch.action_masks is not None:
                np.testing.assert_array_equal(info.action_masks, ~batch.action_masks)
        if decision < decisions:
            actions = decide(infos)
            infos, expected = wire.step(actions), local.step(actions)
