"""Fixtures shared by the example-environment tests: a build over real gRPC, two builds through
SubprocessEnvManager, scripted episodes and roll-outs in process, the same-seed-same-run check,
and the check that a build over the wire plays exactly like the same scene in process.

A scripted decision (``decide``) maps what the agents of one brain saw (a DecisionBatch in
process, a BrainInfo over the wire) to their actions, float32 ``(agents, action size)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# The tests start the examples by name: their registry fills the SDK's scene catalogue.
import mlagents.example_envs.registry  # noqa: F401
from mlagents.envs.action_info import ActionInfo
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.example_envs.sdk.local import LocalEnvironment

BUILDS = Path(__file__).resolve().parents[3] / "builds"

Decide = Callable[[Any], np.ndarray]


def _build(name: str) -> str:
    return str(BUILDS / f"{name}.x86_64")


def _make_env(build: str, base_port: int, worker_id: int) -> UnityEnvironment:
    # Seeds per worker come from the Python side; here simply the worker id. Two builds of the
    # articulated scenes can take over the default 30 s to connect on a heavily loaded machine; the
    # wait ends as soon as a build connects, so a longer limit only matters when one never does.
    return UnityEnvironment(
        build, worker_id=worker_id, base_port=base_port, seed=worker_id, no_graphics=True, timeout_wait=120
    )


class ScriptedPolicy:
    """A Policy for the env managers: ``decide(brain_info)`` for the agents of one brain."""

    def __init__(self, decide: Decide) -> None:
        self.decide = decide

    def get_action(self, brain_info) -> ActionInfo:  # type: ignore[no-untyped-def]
        if len(brain_info.agents) == 0:
            return ActionInfo([], [], [], None, None)
        return ActionInfo(self.decide(brain_info), None, None, None, None)


@pytest.fixture
def open_build(free_port_range: Callable[[int], int]) -> Iterator[Callable[..., UnityEnvironment]]:
    """``open_build(name, seed=0)``: a UnityEnvironment on ``builds/<name>.x86_64`` (no graphics,
    a free port); closed after the test."""
    opened: list[UnityEnvironment] = []

    def open_(name: str, seed: int = 0) -> UnityEnvironment:
        env = UnityEnvironment(_build(name), base_port=free_port_range(1), seed=seed, no_graphics=True)
        opened.append(env)
        return env

    yield open_
    for env in opened:
        env.close()


class TwoWorkers:
    """Two builds through a SubprocessEnvManager (worker ``w`` seeded ``w``), a
    :class:`ScriptedPolicy` per brain, reset once in training mode.

    :ivar manager: the SubprocessEnvManager.
    :ivar first: the AllBrainInfo of each worker after the first reset, in worker order.
    """

    def __init__(self, manager: SubprocessEnvManager, deciders: dict[str, Decide]) -> None:
        self.manager = manager
        for brain, decide in deciders.items():
            manager.set_policy(brain, ScriptedPolicy(decide))
        self.first = [step.current_all_brain_info for step in manager.reset(train_mode=True)]

    def transitions(self, count: int) -> Iterator[dict]:
        """The AllBrainInfo of every StepInfo of ``manager.step()`` calls, until ``count`` came
        (the last call's all included)."""
        seen = 0
        while seen < count:
            for step in self.manager.step():
                yield step.current_all_brain_info
                seen += 1


@pytest.fixture
def two_workers(free_port_range: Callable[[int], int]) -> Iterator[Callable[..., TwoWorkers]]:
    """``two_workers(name, {brain: decide})``: :class:`TwoWorkers` on ``builds/<name>.x86_64``;
    closed after the test."""
    managers: list[SubprocessEnvManager] = []

    def start(name: str, deciders: dict[str, Decide]) -> TwoWorkers:
        managers.append(SubprocessEnvManager(partial(_make_env, _build(name), free_port_range(2)), n_env=2))
        return TwoWorkers(managers[-1], deciders)

    yield start
    for manager in managers:
        manager.close()


def _run_episodes(
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


@pytest.fixture
def run_episodes() -> Callable[..., tuple[list[float], list[bool]]]:
    """``run_episodes(env, brain, decide, max_decisions, episodes=None)``: returns and
    max_reached flags of the episodes a scripted decision finishes in process."""
    return _run_episodes


def _roll_out(env: LocalEnvironment, brain: str, decide: Decide, decisions: int) -> list:
    """The DecisionBatches of ``brain`` after a reset and after each of ``decisions`` decisions."""
    batches = [env.reset()[brain]]
    for _ in range(decisions):
        batches.append(env.step({brain: decide(batches[-1])})[brain])
    return batches


@pytest.fixture
def roll_out() -> Callable[..., list]:
    """``roll_out(env, brain, decide, decisions)``: the DecisionBatches of a reset and of every
    decision after it."""
    return _roll_out


def _assert_reproducible(run: Callable[[int], np.ndarray]) -> None:
    """``run(seed)`` twice with seed 0 gives equal arrays, with seed 1 a different one."""
    first = run(0)
    np.testing.assert_array_equal(first, run(0))
    assert not np.array_equal(first, run(1))


@pytest.fixture
def assert_reproducible() -> Callable[[Callable[[int], np.ndarray]], None]:
    """``assert_reproducible(run)``: the same seed gives the same run, another seed another run."""
    return _assert_reproducible


def _assert_wire_matches_local(
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
    (``reset_obs_atol`` after the reset, when given) and rewards within ``reward_atol``."""
    infos = wire.reset(train_mode=True, config=config)
    expected = local.reset(config)
    for decision in range(decisions + 1):
        atol = reset_obs_atol if decision == 0 and reset_obs_atol is not None else obs_atol
        for brain in brains:
            assert len(infos[brain].agents) == len(expected[brain].agents)
            np.testing.assert_allclose(
                infos[brain].vector_observations, expected[brain].vector_observations, atol=atol
            )
            np.testing.assert_allclose(infos[brain].rewards, expected[brain].rewards, atol=reward_atol)
        if decision < decisions:
            actions = decide(infos)
            infos, expected = wire.step(actions), local.step(actions)


@pytest.fixture
def assert_wire_matches_local() -> Callable[..., None]:
    """``assert_wire_matches_local(wire, local, brains, decide, decisions, *, obs_atol,
    reward_atol, reset_obs_atol=None, config=None)``: the build over the wire plays step by step
    like the scene in process (see :func:`_assert_wire_matches_local`)."""
    return _assert_wire_matches_local
