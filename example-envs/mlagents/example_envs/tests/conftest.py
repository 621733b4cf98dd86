"""Fixtures shared by the example-environment tests: a build over real gRPC, and two builds through
a SubprocessEnvManager with a scripted decision (:data:`~mlagents.example_envs.tests.playing.Decide`)
per brain. Plain helpers for playing a scene are in ``playing.py``, the examples' table in
``example_table.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

# The tests start the examples by name: their registry fills the SDK's scene catalogue.
import mlagents.example_envs.registry  # noqa: F401
from mlagents.envs.action_info import ActionInfo
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.example_envs.tests.playing import Decide

BUILDS = Path(__file__).resolve().parents[3] / "builds"


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
