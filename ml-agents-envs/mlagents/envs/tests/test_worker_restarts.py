"""SubprocessEnvManager restarts lost workers: real example builds, real gRPC, real processes.

Faults come from the example builds' test hooks (``--fault-exit-after K``: the build exits
without a goodbye after K exchanges, like a crashing player; ``--fault-hang-after K``: it stops
answering; ``--fault-never-connect``). A fault is given to a worker's FIRST launch only (a marker
file per worker), so the restarted environment runs normally, unless the test wants every launch
to fail.
"""

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import UnityCommunicationException
from mlagents.envs.policy import Policy
from mlagents.envs.restart_policy import RestartLimitExceeded, RestartLimits, RestartPolicy
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.envs.tests.example_builds import example_build
from mlagents.envs.tests.processes import assert_nothing_left, port_is_free, process_alive

pytestmark = pytest.mark.slow

BASIC = "BasicLearning"
UNLIMITED = RestartLimits(-1, -1, 60.0)


def faulty_factory(
    base_port: int,
    markers: Path,
    first_launch_args: dict[int, list[str]],
    every_launch: bool = False,
    **kwargs: float,
) -> Callable[[int], BaseUnityEnvironment]:
    """Worker w's first launch gets ``first_launch_args[w]`` (every launch with ``every_launch``);
    each launch adds a line ``launch <restart>`` to the worker's marker file."""
    file_name = example_build("Basic")
    marker_dir = str(markers)

    def make(worker_id: int, restart: int = 0) -> BaseUnityEnvironment:
        marker = os.path.join(marker_dir, f"worker-{worker_id}")
        args: list[str] = []
        if every_launch or not os.path.exists(marker):
            args = list(first_launch_args.get(worker_id, []))
        with open(marker, "a") as launches:
            launches.write(f"launch {restart}\n")
        return UnityEnvironment(file_name, worker_id=worker_id, base_port=base_port, args=args, **kwargs)

    return make


class RightPolicy(Policy):
    """Every agent moves right."""

    def get_action(self, brain_info):
        n = len(brain_info.agents)
        moves = np.full((n, 1), 2.0)
        return ActionInfo(moves, None, None, np.zeros(n), {"action": moves})


def assert_nothing_survives(pids: list[int], ports: range) -> None:
    """Every process in ``pids`` ended, no build on ``ports`` runs, and the ports can be bound."""
    assert_nothing_left(pids, ports)
    assert [port for port in ports if not port_is_free(port)] == []


def worker_of(all_brain_info: dict) -> int:
    """The worker whose agents ``all_brain_info`` holds (agent ids are ``$<worker>-<id>``)."""
    (worker_id,) = {int(agent[1:].split("-")[0]) for agent in all_brain_info[BASIC].agents}
    return worker_id


def all_pids(manager: SubprocessEnvManager, seen: list[int]) -> list[int]:
    for worker in manager.env_workers:
        seen += [pid for pid in (worker.process.pid, worker.build_pid) if pid and pid not in seen]
    return seen


def test_crashed_and_hung_builds_are_restarted(free_port_range, tmp_path):
    base_port = free_port_range(3)
    faults = {1: ["--fault-exit-after", "6"], 2: ["--fault-hang-after", "9"]}
    factory = faulty_factory(base_port, tmp_path, faults, exchange_timeout=5.0)
    policy = RestartPolicy(UNLIMITED)
    manager = SubprocessEnvManager(factory, 3, restart_policy=policy)
    pids: list[int] = []
    try:
        manager.set_policy(BASIC, RightPolicy())
        manager.reset(train_mode=True)
        last: dict[int, dict] = {
            w: manager.env_workers[w].previous_step.current_all_brain_info for w in range(3)
        }
        interrupted = []
        steps_after = {1: 0, 2: 0}  # steps of the restarted environments
        deadline = time.monotonic() + 120  # only a bound: the hang is seen after exchange_timeout
        while time.monotonic() < deadline:
            all_pids(manager, pids)
            step_infos = manager.step()
            lost = manager.take_interrupted_steps()
            interrupted += lost
            for report in lost:
                worker_id = worker_of(report.current_all_brain_info)
                # The report starts from what the lost environment showed last...
                assert report.previous_all_brain_info is last[worker_id]
                last[worker_id] = None  # ...and no transition may start from it any more.
            for step_info in step_infos:
                worker_id = worker_of(step_info.current_all_brain_info)
                if last[worker_id] is None:
                    # The first step of the restarted environment starts from its reset.
                    assert step_info.previous_all_brain_info is not None
                else:
                    assert step_info.previous_all_brain_info is last[worker_id]
                if worker_id in steps_after and any(
                    worker_of(r.current_all_brain_info) == worker_id for r in interrupted
                ):
                    steps_after[worker_id] += 1
                last[worker_id] = step_info.current_all_brain_info
            if min(steps_after.values()) >= 10:
                break
        all_pids(manager, pids)
        restarts = {w: policy.restarts_of(w) for w in range(3)}
        assert min(steps_after.values()) >= 10, (steps_after, restarts)
        # Worker 1 crashed and worker 2 hung once each. (A healthy build that stalls for longer than
        # exchange_timeout on an overloaded machine is restarted too: counted, not an error.)
        assert restarts[1] >= 1 and restarts[2] >= 1, restarts
        assert manager.restart_count == sum(restarts.values()) == len(interrupted)
        for report in interrupted:
            info = report.current_all_brain_info[BASIC]
            assert info.local_done == [True] * len(info.agents)
            assert info.max_reached == [True] * len(info.agents)
            assert report.brain_name_to_action_info is None
        assert manager.take_interrupted_steps() == []
        assert (tmp_path / "worker-1").read_text().count("launch") == 2
    finally:
        manager.close()
    assert_nothing_survives(pids, range(base_port, base_port + 3))


def test_past_the_rate_limit_the_error_names_the_limit(free_port_range, tmp_path, caplog):
    base_port = free_port_range(2)
    # Worker 0's build crashes after 3 exchanges at every launch; 1 restart per 60 s is allowed.
    factory = faulty_factory(base_port, tmp_path, {0: ["--fault-exit-after", "3"]}, every_launch=True)
    manager = SubprocessEnvManager(factory, 2, restart_policy=RestartPolicy(RestartLimits(10, 1, 60.0)))
    pids: list[int] = []
    try:
        manager.set_policy(BASIC, RightPolicy())
        manager.reset()
        with (
            caplog.at_level("WARNING", logger="mlagents.envs"),
            pytest.raises(UnityCommunicationException) as raised,
        ):
            deadline = time.monotonic() + 120  # only a bound: the crash comes after a few steps
            while time.monotonic() < deadline:
                all_pids(manager, pids)
                manager.step()
        all_pids(manager, pids)
        assert isinstance(raised.value, RestartLimitExceeded)
        assert "UnityEnvironment worker 0 was lost" in str(raised.value)
        assert "--restarts-rate-limit-n=1" in str(raised.value)
        assert isinstance(raised.value.__cause__, UnityCommunicationException)
        assert manager.restart_count == 1
        restart_lines = [r.getMessage() for r in caplog.records if "Restarting it" in r.getMessage()]
        assert len(restart_lines) == 1
        assert "worker 0 was lost" in restart_lines[0] and "log: " in restart_lines[0]
        log_path = restart_lines[0].rsplit("log: ", 1)[1]
        assert "simulated crash" in Path(log_path).read_text()
    finally:
        manager.close()
    assert_nothing_survives(pids, range(base_port, base_port + 2))


def test_killed_worker_and_failed_connection_are_restarted(free_port_range, tmp_path):
    base_port = free_port_range(2)
    # Worker 1's first build never connects: the manager starts with a restart already.
    factory = faulty_factory(base_port, tmp_path, {1: ["--fault-never-connect"]}, timeout_wait=4)
    policy = RestartPolicy(UNLIMITED)
    manager = SubprocessEnvManager(factory, 2, restart_policy=policy)
    pids: list[int] = []
    try:
        assert manager.restart_count == 1 and policy.restarts_of(1) == 1
        assert manager.take_interrupted_steps() == []  # nothing had run yet
        manager.set_policy(BASIC, RightPolicy())
        manager.reset()
        for _ in range(3):
            manager.step()
        all_pids(manager, pids)
        old_worker = manager.env_workers[0]
        old_build = old_worker.build_pid
        assert old_build is not None
        os.kill(old_worker.process.pid, signal.SIGKILL)  # the worker process itself, not its build
        deadline = time.monotonic() + 120  # only a bound: the loss is seen at the next step
        while manager.restart_count < 2 and time.monotonic() < deadline:
            manager.step()
        assert manager.restart_count == 2 and policy.restarts_of(0) == 1
        assert manager.env_workers[0] is not old_worker
        assert not process_alive(old_build)  # its process group was killed
        assert len(manager.take_interrupted_steps()) == 1
        for _ in range(5):
            manager.step()
        all_pids(manager, pids)
        # The factory was told each launch's restart number (what seeds a restarted environment).
        assert (tmp_path / "worker-0").read_text().split("\n") == ["launch 0", "launch 1", ""]
        assert (tmp_path / "worker-1").read_text().split("\n") == ["launch 0", "launch 1", ""]
    finally:
        manager.close()
    assert_nothing_survives(pids, range(base_port, base_port + 2))
