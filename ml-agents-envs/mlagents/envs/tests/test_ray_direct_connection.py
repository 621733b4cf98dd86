"""RayEnvManager steps its actors on direct connections: a real local Ray instance, real example
builds over real gRPC, real TCP connections between the manager and the actors.

The module starts one local Ray instance for its tests (the managers use it and leave it running,
the fixture stops it); each test ends the actors and builds it started and checks that nothing of
them is left. The connection's own tests (no Ray) are in ``test_ray_env_worker.py``.
"""

import logging
import os
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import BrainInfo
from mlagents.envs.env_manager import EnvManager
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import UnityCommunicationException
from mlagents.envs.ray_env_worker import LOOPBACK, ChannelAddress
from mlagents.envs.restart_policy import RestartLimits, RestartPolicy
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.envs.tests.example_builds import TiltPolicy, example_build
from mlagents.envs.tests.processes import assert_nothing_left, port_is_free
from mlagents.envs.worker_transport import WorkerCommand
from mlagents.example_envs.ports import find_free_port_range

BALL = "3DBallLearning"
BASIC = "BasicLearning"
# No token (the instance is only reachable on this machine) and no usage statistics.
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}

ray = pytest.importorskip("ray")

from mlagents.envs.ray_env_manager import RayEnvManager, RayTransport  # noqa: E402


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray instance with 4 CPUs for the module's managers."""
    saved = {name: os.environ.get(name) for name in RAY_ENV}
    os.environ.update(RAY_ENV)
    ray.init(num_cpus=4, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class RightPolicy:
    """Basic: every agent moves right. ``interrupt_without``: raise KeyboardInterrupt (a Ctrl-C in the
    trainer) at the first decision that leaves that worker out, i.e. while its step is in flight."""

    def __init__(self, interrupt_without: int | None = None) -> None:
        self.interrupt_without = interrupt_without

    def get_action(self, brain_info: BrainInfo) -> ActionInfo:
        deciding = {int(str(agent)[1:].split("-")[0]) for agent in brain_info.agents}
        if self.interrupt_without is not None and self.interrupt_without not in deciding:
            raise KeyboardInterrupt
        return ActionInfo(np.full((len(brain_info.agents), 1), 2.0, dtype=np.float32), None, None, None, None)


Episodes = dict[str, list[tuple[list[float], list[list[float]], list[bool]]]]


def episodes_per_worker(manager: EnvManager, steps: int) -> Episodes:
    """Step ``manager`` (3DBall, two workers) until every worker made ``steps`` steps; per worker
    (agent ids start with ``$<worker>-``), the rewards, observations and dones of its first steps."""
    manager.set_policy(BALL, TiltPolicy())  # type: ignore[arg-type]
    manager.reset()
    per_worker: Episodes = defaultdict(list)
    while len(per_worker) < 2 or min(len(steps_of) for steps_of in per_worker.values()) < steps:
        for step in manager.step():
            info = step.current_all_brain_info[BALL]
            worker = str(info.agents[0]).split("-")[0]
            per_worker[worker].append(
                (list(info.rewards), info.vector_observations.tolist(), list(info.local_done))
            )
    return {worker: steps_of[:steps] for worker, steps_of in per_worker.items()}


def ball_factory(seed: int, base_port: int) -> Callable[[int], BaseUnityEnvironment]:
    build = example_build("3DBall")
    return lambda worker_id: UnityEnvironment(
        build, worker_id=worker_id, base_port=base_port, seed=seed + worker_id
    )


def basic_factory(
    base_port: int, faulty_first_launch: dict[int, list[str]]
) -> Callable[..., BaseUnityEnvironment]:
    """Worker ``w``'s first launch gets the build arguments ``faulty_first_launch[w]``; its restarts none."""
    build = example_build("Basic")

    def make(worker_id: int, restart: int = 0) -> BaseUnityEnvironment:
        args = faulty_first_launch.get(worker_id, []) if restart == 0 else []
        return UnityEnvironment(build, worker_id=worker_id, base_port=base_port, args=list(args))

    return make


@pytest.fixture(scope="module")
def subprocess_episodes() -> Episodes:
    """What SubprocessEnvManager gives for 3DBall with seed 11 (the reference of the Ray runs)."""
    manager = SubprocessEnvManager(ball_factory(11, find_free_port_range(2)), 2)
    try:
        return episodes_per_worker(manager, 30)
    finally:
        manager.close()


class CallSpy:
    """Records the commands RayTransport sends as Ray method calls (the fallback path)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.commands: list[WorkerCommand] = []
        original = RayTransport._call

        def spy(transport: RayTransport, worker: Any, command: WorkerCommand, payload: Any) -> None:
            self.commands.append(command)
            original(transport, worker, command, payload)

        monkeypatch.setattr(RayTransport, "_call", spy)


def actor_gone(actor: Any) -> bool:
    """True when calling ``actor`` fails because it was ended."""
    try:
        ray.get(actor.global_done.remote(), timeout=60)
    except ray.exceptions.RayActorError:
        return True
    return False


def assert_all_ended(manager: RayEnvManager, pids: list[int], ports: range) -> None:
    """After ``close()``: no actor process (its listener went with it), no build (``pids``: every
    actor and build seen), no environment port taken, no connection open, and Ray knows the actors
    are gone."""
    assert_nothing_left(pids, ports)  # waits for the processes to end: Ray ends actors asynchronously
    assert [port for port in ports if not port_is_free(port)] == []
    assert all(worker.conn is None for worker in manager.env_workers)
    assert all(actor_gone(worker.actor) for worker in manager.env_workers)


def pids_of(manager: RayEnvManager, seen: list[int]) -> list[int]:
    """``seen`` with the process ids of the actors and builds of ``manager`` not in it yet."""
    for worker in manager.env_workers:
        if worker.started is not None:
            for pid in (worker.started.actor_pid, worker.started.build_pid):
                if pid is not None and pid not in seen:
                    seen.append(pid)
    return seen


@contextmanager
def ends_everything(
    manager: RayEnvManager, ports: range, close_timeout: float | None = None
) -> Iterator[list[int]]:
    """Run the block with a list for the pids it sees (:func:`pids_of`), close ``manager`` however
    the block ends and, when it ended normally, :func:`assert_all_ended`."""
    pids: list[int] = []
    try:
        yield pids
    finally:
        if close_timeout is None:
            manager.close()
        else:
            manager.close(timeout=close_timeout)
    assert_all_ended(manager, pids, ports)


@pytest.mark.slow
def test_steps_travel_on_the_direct_connections(
    local_ray: None,
    subprocess_episodes: Episodes,
    free_port_range: Callable[[int], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Same episodes as the subprocess manager, every command but the start on the connections
    (none as a Ray call), bound to loopback; close() leaves nothing."""
    spy = CallSpy(monkeypatch)
    base_port = free_port_range(2)
    manager = RayEnvManager(ball_factory(11, base_port), 2)
    with ends_everything(manager, range(base_port, base_port + 2)) as pids:
        for worker in manager.env_workers:
            assert worker.conn is not None and worker.started is not None
            assert worker.started.channel is not None and worker.started.channel.host == LOOPBACK
        assert manager.external_brains[BALL].vector_observation_space_size == 8
        actual = episodes_per_worker(manager, 30)
        assert manager.ask_every_worker(WorkerCommand.GLOBAL_DONE) == [False, False]
        pids_of(manager, pids)
    assert actual == subprocess_episodes
    assert spy.commands == []


@pytest.mark.slow
def test_without_a_direct_connection_steps_go_through_ray_calls(
    local_ray: None,
    subprocess_episodes: Episodes,
    free_port_range: Callable[[int], int],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A manager that cannot open the connections (here: it holds the wrong key, so the actors
    refuse it) logs one warning and steps the workers by Ray calls, with the same results."""
    import mlagents.envs.ray_env_manager as ray_env_manager

    spy = CallSpy(monkeypatch)
    real_connect = ray_env_manager.connect_channel

    def connect_with_a_wrong_key(address: ChannelAddress, timeout: float) -> Connection:
        return real_connect(address._replace(authkey=os.urandom(32)), timeout)

    monkeypatch.setattr(ray_env_manager, "connect_channel", connect_with_a_wrong_key)
    base_port = free_port_range(2)
    caplog.set_level(logging.DEBUG, logger="mlagents.envs")
    manager = RayEnvManager(ball_factory(11, base_port), 2)
    with ends_everything(manager, range(base_port, base_port + 2)) as pids:
        assert [worker.conn for worker in manager.env_workers] == [None, None]
        actual = episodes_per_worker(manager, 30)
        pids_of(manager, pids)
    assert actual == subprocess_episodes
    assert WorkerCommand.STEP in spy.commands and WorkerCommand.RESET in spy.commands
    fallbacks = [record for record in caplog.records if "no direct connection" in record.getMessage()]
    assert [record.levelno for record in fallbacks] == [logging.WARNING, logging.DEBUG]
    assert "AuthenticationError" in fallbacks[0].getMessage() and "\n" not in fallbacks[0].getMessage()


@pytest.mark.slow
def test_a_build_that_dies_is_reported_with_its_worker(
    local_ray: None, free_port_range: Callable[[int], int]
) -> None:
    base_port = free_port_range(2)
    manager = RayEnvManager(basic_factory(base_port, {1: ["--fault-exit-after", "4"]}), 2)
    with ends_everything(manager, range(base_port, base_port + 2)) as pids:
        manager.set_policy(BASIC, RightPolicy())  # type: ignore[arg-type]
        manager.reset()
        pids_of(manager, pids)
        with pytest.raises(UnityCommunicationException) as raised:
            while True:  # the build exits after its 4th exchange
                manager.step()
        notes = "\n".join(getattr(raised.value, "__notes__", []))
        build_pid = manager.env_workers[1].started.build_pid  # type: ignore[union-attr]
        assert "The worker is Ray worker 1 (node" in notes and f"build pid {build_pid}" in notes


@pytest.mark.slow
def test_a_build_that_dies_is_restarted_on_a_new_connection(
    local_ray: None, free_port_range: Callable[[int], int]
) -> None:
    base_port = free_port_range(2)
    policy = RestartPolicy(RestartLimits(-1, -1, 60.0))
    factory = basic_factory(base_port, {1: ["--fault-exit-after", "4"]})
    manager = RayEnvManager(factory, 2, restart_policy=policy)
    with ends_everything(manager, range(base_port, base_port + 2)) as pids:
        manager.set_policy(BASIC, RightPolicy())  # type: ignore[arg-type]
        manager.reset()
        lost = manager.env_workers[1]
        pids_of(manager, pids)
        while manager.restart_count == 0:
            manager.step()
        interrupted = manager.take_interrupted_steps()
        assert len(interrupted) == 1 and interrupted[0].current_all_brain_info[BASIC].max_reached == [True]
        replacement = manager.env_workers[1]
        assert replacement is not lost and replacement.conn is not None and lost.conn is None
        stepped: set[str] = set()
        while len(stepped) < 2:  # both workers step on
            for step in manager.step():
                stepped.add(str(step.current_all_brain_info[BASIC].agents[0]).split("-")[0])
        pids_of(manager, pids)
        assert len(pids) == 6  # two actors and builds, and those of the restart
    assert actor_gone(lost.actor)


@pytest.mark.slow
def test_a_dead_actor_is_reported_by_ray(local_ray: None, free_port_range: Callable[[int], int]) -> None:
    """The actor's end closes its connection; Ray says why, and close() still ends its build."""
    base_port = free_port_range(2)
    manager = RayEnvManager(basic_factory(base_port, {}), 2)
    with ends_everything(manager, range(base_port, base_port + 2)) as pids:
        manager.set_policy(BASIC, RightPolicy())  # type: ignore[arg-type]
        manager.reset()
        pids_of(manager, pids)
        ray.kill(manager.env_workers[0].actor, no_restart=True)
        with pytest.raises(
            UnityCommunicationException, match="stopped unexpectedly: its actor or its node died"
        ):
            for _ in range(100):
                manager.step()


@pytest.mark.slow
def test_an_interrupt_with_a_step_in_flight_leaves_nothing(
    local_ray: None, free_port_range: Callable[[int], int]
) -> None:
    """Ctrl-C in the trainer while a worker's step is in flight, and never answered (its build
    hangs after a few steps): close() ends every actor and build, the hung ones too."""
    base_port = free_port_range(3)
    manager = RayEnvManager(basic_factory(base_port, {2: ["--fault-hang-after", "4"]}), 3)
    with ends_everything(manager, range(base_port, base_port + 3), close_timeout=3.0) as pids:
        manager.set_policy(BASIC, RightPolicy(interrupt_without=2))  # type: ignore[arg-type]
        manager.reset()
        pids_of(manager, pids)
        with pytest.raises(KeyboardInterrupt):
            while True:
                manager.step()
        assert manager.env_workers[2].waiting
