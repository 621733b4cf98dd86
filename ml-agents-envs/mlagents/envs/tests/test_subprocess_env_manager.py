"""SubprocessEnvManager on real example builds over real gRPC, in real worker processes."""

import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import cloudpickle
import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import (
    UnityActionException,
    UnityCommunicationException,
    UnityEnvironmentException,
    UnityWorkerInUseException,
)
from mlagents.envs.policy import Policy
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.envs.tests.example_builds import example_build
from mlagents.envs.tests.processes import assert_nothing_left, builds_on_ports, live_children
from mlagents.envs.timers import get_timer_tree, reset_timers

BASIC = "BasicLearning"
# Basic: 0 = stay, 1 = left, 2 = right. Worker w plays MOVES[w % 4].
MOVES = [0, 1, 2, 0]


@pytest.fixture
def basic_factory(free_port_range):
    """``basic_factory(count, **kwargs)``: a factory of UnityEnvironments on the Basic build with
    free ports for ``count`` workers (``**kwargs`` go to UnityEnvironment)."""

    def make(count: int, **kwargs):
        return partial(UnityEnvironment, example_build("Basic"), base_port=free_port_range(count), **kwargs)

    return make


def assert_nothing_survives(manager: SubprocessEnvManager, children_before: set[int], base_port: int) -> None:
    """No worker, no build (found by pid and by its --port argument), no other child process is left."""
    build_pids = [worker.build_pid for worker in manager.env_workers if worker.build_pid]
    worker_pids = [worker.process.pid for worker in manager.env_workers]
    assert len(build_pids) == len(manager.env_workers)
    ports = range(base_port, base_port + len(manager.env_workers))
    assert_nothing_left(worker_pids + build_pids, ports, children_before)


class MovePolicy(Policy):
    """Worker w's agents play MOVES[w]; records the agents of every call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def get_action(self, brain_info):
        self.calls.append(list(brain_info.agents))
        workers = [int(agent[1:].split("-")[0]) for agent in brain_info.agents]
        moves = np.array([[MOVES[w % 4]] for w in workers], dtype=np.float64).reshape(-1, 1)
        return ActionInfo(moves, None, None, np.zeros(len(workers)), {"action": moves, "learning_rate": 0.1})


@contextmanager
def checked_manager(factory: partial, n_env: int) -> Iterator[SubprocessEnvManager]:
    """A SubprocessEnvManager of ``n_env`` workers on ``factory`` (a partial with ``base_port``);
    closed on leaving, and then (when the block did not raise) nothing it started may survive."""
    children_before = live_children()
    manager = SubprocessEnvManager(factory, n_env)
    try:
        yield manager
    finally:
        manager.close()
    assert_nothing_survives(manager, children_before, factory.keywords["base_port"])


def position(all_brain_info) -> int:
    return int(np.argmax(all_brain_info[BASIC].vector_observations[0]))


def error_of_steps(
    manager: SubprocessEnvManager, expected: type[Exception], steps: int, match: str | None = None
):
    """Step ``manager`` (at most ``steps`` times) until it raises ``expected`` (whose message must
    match ``match``); that error and the seconds it took."""
    start = time.monotonic()
    with pytest.raises(expected, match=match) as error:
        for _ in range(steps):
            manager.step()
    return error.value, time.monotonic() - start


@pytest.mark.slow
@pytest.mark.parametrize("n_env", [1, 4])
def test_steps_return_correct_step_infos(n_env, basic_factory):
    with checked_manager(basic_factory(n_env), n_env) as manager:
        policy = MovePolicy()
        manager.set_policy(BASIC, policy)
        assert list(manager.external_brains) == [BASIC]
        assert manager.external_brains[BASIC].vector_action_space_size == [3]
        assert manager.reset_parameters == {}

        first = manager.reset(config={}, train_mode=True)
        assert len(first) == n_env
        for worker_id, step_info in enumerate(first):
            assert step_info.previous_all_brain_info is None
            assert step_info.brain_name_to_action_info is None
            (agent,) = step_info.current_all_brain_info[BASIC].agents
            assert agent.startswith(f"${worker_id}-")
            assert position(step_info.current_all_brain_info) == 10

        reset_timers()
        last = {worker_id: step_info.current_all_brain_info for worker_id, step_info in enumerate(first)}
        steps: dict[int, int] = {worker_id: 0 for worker_id in range(n_env)}
        while min(steps.values()) < 5:
            idle = [worker.worker_id for worker in manager.env_workers if not worker.waiting]
            calls_before = len(policy.calls)
            step_infos = manager.step()
            # One batched policy call with the agents of every idle worker, in worker order.
            new_calls = policy.calls[calls_before:]
            if idle:
                assert new_calls == [[f"{last[w][BASIC].agents[0]}" for w in idle]]
            else:
                assert new_calls == []
            assert 1 <= len(step_infos) <= n_env
            for step_info in step_infos:
                (agent,) = step_info.current_all_brain_info[BASIC].agents
                worker_id = int(agent[1:].split("-")[0])
                move = MOVES[worker_id]
                # previous = what this worker saw before; the action info = exactly its own row
                assert step_info.previous_all_brain_info is last[worker_id]
                action_info = step_info.brain_name_to_action_info[BASIC]
                np.testing.assert_array_equal(action_info.action, [[move]])
                np.testing.assert_array_equal(action_info.outputs["action"], [[move]])
                assert action_info.outputs["learning_rate"] == 0.1
                current = step_info.current_all_brain_info[BASIC]
                np.testing.assert_array_equal(current.previous_vector_actions, [[move]])
                moved = position(last[worker_id]) + {0: 0, 1: -1, 2: 1}[move]
                if current.local_done[0]:  # reached a goal: the observation is the next episode's first
                    assert moved in (7, 17) and position(step_info.current_all_brain_info) == 10
                else:
                    assert position(step_info.current_all_brain_info) == moved
                last[worker_id] = step_info.current_all_brain_info
                steps[worker_id] += 1

        tree = get_timer_tree()
        names = {child["name"]: child for child in tree["children"]}
        assert "SubprocessEnvManager._take_step" in names
        (worker_root,) = names["workers"]["children"]
        assert worker_root["name"] == "worker_root" and worker_root["is_parallel"] is True
        assert worker_root["count"] == sum(steps.values())
        assert "UnityEnvironment.step" in [child["name"] for child in worker_root["children"]]

        # A reset while steps are in flight waits for them and starts over.
        again = manager.reset()
        assert [position(step_info.current_all_brain_info) for step_info in again] == [10] * n_env
        assert not any(worker.waiting for worker in manager.env_workers)
    with pytest.raises(UnityCommunicationException):
        manager.step()
    manager.close()  # idempotent


@pytest.mark.slow
def test_synchronous_steps_hand_over_every_worker_in_worker_order(free_port_range):
    """With ``synchronous=True`` every step() steps every worker and returns them all, as one
    batch decided by one policy call, in worker order: also when worker 0 is the slowest."""
    base_port = free_port_range(3)
    path = example_build("Basic")

    def make(worker_id: int) -> UnityEnvironment:
        args = ["--frame-time-ms", "40"] if worker_id == 0 else []
        return UnityEnvironment(path, worker_id=worker_id, base_port=base_port, args=args)

    children_before = live_children()
    manager = SubprocessEnvManager(make, 3, synchronous=True)
    try:
        policy = MovePolicy()
        manager.set_policy(BASIC, policy)
        manager.reset()
        for _ in range(8):
            calls_before = len(policy.calls)
            batches = manager.step_batches()
            assert len(batches) == 1
            workers = [
                int(s.current_all_brain_info[BASIC].agents[0][1:].split("-")[0])
                for s in batches[0].step_infos
            ]
            assert workers == [0, 1, 2]
            assert len(policy.calls) == calls_before + 1 and len(policy.calls[-1]) == 3
            assert not any(worker.waiting for worker in manager.env_workers)
    finally:
        manager.close()
    assert_nothing_survives(manager, children_before, base_port)


def test_reset_parameters_pass_through(free_port_range):
    factory = partial(UnityEnvironment, example_build("3DBall"), base_port=free_port_range(2))
    with checked_manager(factory, 2) as manager:
        defaults = manager.reset_parameters
        assert {"mass", "gravity", "scale"} <= set(defaults)
        infos = manager.reset(config={"mass": 3.5, "gravity": 7.0}, train_mode=True)
        assert len(infos) == 2
        assert manager.reset_parameters["mass"] == 3.5
        assert manager.reset_parameters["gravity"] == 7.0
        assert manager.reset_parameters["scale"] == defaults["scale"]
        # The worker's environment validates the config: its error arrives with its type.
        with pytest.raises(
            UnityEnvironmentException, match="The parameter 'no_such_parameter' is not a valid"
        ):
            manager.reset(config={"no_such_parameter": 1.0})


def test_policy_error_reaches_the_caller(basic_factory):
    class FailingPolicy(Policy):
        def __init__(self):
            self.calls = 0

        def get_action(self, brain_info):
            self.calls += 1
            if self.calls == 3:
                raise RuntimeError("the policy broke")
            return ActionInfo(np.zeros((len(brain_info.agents), 1)), None, None, None, None)

    with checked_manager(basic_factory(2), 2) as manager:
        manager.set_policy(BASIC, FailingPolicy())
        manager.reset()
        error_of_steps(manager, RuntimeError, 10, match="the policy broke")


@pytest.mark.slow
def test_environment_error_is_reraised_with_its_type(basic_factory):
    class WrongSizePolicy(Policy):
        def get_action(self, brain_info):
            # Basic has one discrete branch: two numbers per agent is a wrong action size.
            return ActionInfo(np.zeros((len(brain_info.agents), 2)), None, None, None, None)

    with checked_manager(basic_factory(2), 2) as manager:
        manager.set_policy(BASIC, WrongSizePolicy())
        manager.reset()
        with pytest.raises(UnityActionException) as error:
            manager.step()
        assert "There was a mismatch between the provided action" in str(error.value)
        notes = "\n".join(getattr(error.value, "__notes__", []))
        assert "UnityEnvironment worker" in notes and "Traceback" in notes


@pytest.mark.slow
def test_build_killed_mid_run_surfaces_as_communication_error(basic_factory):
    with checked_manager(basic_factory(2, args=["--fault-exit-after", "4"]), 2) as manager:
        manager.set_policy(BASIC, MovePolicy())
        manager.reset()
        error, seconds = error_of_steps(manager, UnityCommunicationException, 50)
        assert seconds < 30
        notes = "\n".join(getattr(error, "__notes__", []))
        assert "UnityEnvironment worker" in notes


@pytest.mark.slow
def test_dead_worker_is_detected_not_waited_for(basic_factory):
    # 200 ms per academy step: the kill lands while both workers' steps are in flight.
    with checked_manager(basic_factory(2, args=["--frame-time-ms", "200"]), 2) as manager:
        manager.set_policy(BASIC, MovePolicy())
        manager.reset()
        killer = threading.Timer(0.1, manager.env_workers[0].process.kill)
        killer.start()
        error, seconds = error_of_steps(manager, UnityCommunicationException, 10)
        assert seconds < 10
        assert "UnityEnvironment worker 0 stopped unexpectedly" in str(error)
        assert "exited with code -9" in str(error)
        killer.join()


@pytest.mark.slow
def test_worker_interrupted_exits_quietly(capfd, basic_factory):
    with checked_manager(basic_factory(1, args=["--frame-time-ms", "300"]), 1) as manager:
        manager.set_policy(BASIC, MovePolicy())
        manager.reset()
        worker = manager.env_workers[0]
        os.kill(worker.process.pid, signal.SIGINT)  # what Ctrl-C does to every process of the group
        error_of_steps(
            manager, UnityCommunicationException, 10, match="At least one of the environments has closed"
        )
        worker.process.join(60)  # it closes its environment first, slowly on a loaded machine
        assert worker.process.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err


def slow_start_factory(base_port: int, marker_dir: Path):
    """A factory that takes 1 s before creating its environment and records when it started and
    when its environment was ready (sent to the workers by value, as a closure)."""

    def make(worker_id: int) -> UnityEnvironment:
        (marker_dir / f"start-{worker_id}").write_text(repr(time.time()))
        time.sleep(1.0)
        env = UnityEnvironment(example_build("Basic"), worker_id=worker_id, base_port=base_port)
        (marker_dir / f"ready-{worker_id}").write_text(repr(time.time()))
        return env

    return make


@pytest.mark.slow
def test_workers_start_their_environments_in_parallel(tmp_path, free_port_range):
    children_before = live_children()
    n_env = 2
    base_port = free_port_range(n_env)
    manager = SubprocessEnvManager(slow_start_factory(base_port, tmp_path), n_env)
    try:
        starts = [float((tmp_path / f"start-{w}").read_text()) for w in range(n_env)]
        readies = [float((tmp_path / f"ready-{w}").read_text()) for w in range(n_env)]
        # Every worker began creating its environment before any environment was ready.
        assert max(starts) < min(readies)
        assert len(manager.reset()) == n_env
    finally:
        manager.close()
    assert_nothing_survives(manager, children_before, base_port)


def gated_factory(base_port: int, gate: Path):
    """A factory whose environments are created only once the file ``gate`` exists."""

    def make(worker_id: int) -> UnityEnvironment:
        while not gate.exists():
            time.sleep(0.01)
        return UnityEnvironment(example_build("Basic"), worker_id=worker_id, base_port=base_port)

    return make


def test_while_starting_runs_once_the_workers_started_and_before_they_are_waited_for(
    tmp_path, free_port_range
):
    children_before = live_children()
    n_env = 2
    base_port = free_port_range(n_env)
    gate = tmp_path / "gate"
    seen: list[int] = []

    def while_starting() -> None:
        # The workers run, and none can have an environment yet: they wait for this gate, so a
        # manager that waited for them before calling this would never return.
        seen.append(len(live_children() - children_before))
        gate.touch()

    manager = SubprocessEnvManager(gated_factory(base_port, gate), n_env, while_starting=while_starting)
    try:
        assert seen == [n_env]
        assert len(manager.reset()) == n_env
    finally:
        manager.close()
    assert_nothing_survives(manager, children_before, base_port)


def test_an_error_of_while_starting_ends_every_worker(basic_factory):
    children_before = live_children()
    factory = basic_factory(2)

    def while_starting() -> None:
        raise RuntimeError("the caller's start-up failed")

    with pytest.raises(RuntimeError, match="the caller's start-up failed"):
        SubprocessEnvManager(factory, 2, while_starting=while_starting)
    base_port = factory.keywords["base_port"]
    assert_nothing_left(ports=range(base_port, base_port + 2), children_before=children_before)


def test_startup_error_is_raised_and_everything_ends(free_port_range):
    children_before = live_children()
    base_port = free_port_range(2)
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", base_port + 1))  # worker 1's port is taken
        blocker.listen()
        factory = partial(UnityEnvironment, example_build("Basic"), base_port=base_port)
        with pytest.raises(UnityWorkerInUseException) as error:
            SubprocessEnvManager(factory, 2)
    assert "worker number 1" in str(error.value)
    notes = "\n".join(getattr(error.value, "__notes__", []))
    assert "UnityEnvironment worker 1" in notes
    assert_nothing_left(ports=range(base_port, base_port + 2), children_before=children_before, timeout=5)


@pytest.mark.slow
def test_close_cannot_hang_on_a_hung_build(basic_factory):
    children_before = live_children()
    # The builds stop answering after 2 exchanges (reset + one step) but stay alive.
    factory = basic_factory(2, args=["--fault-hang-after", "2"], exchange_timeout=120.0)
    manager = SubprocessEnvManager(factory, 2)
    try:
        manager.set_policy(BASIC, MovePolicy())
        manager.reset()
        manager.step()
        manager._queue_steps()  # both workers now wait for builds that never answer
        time.sleep(0.3)
    finally:
        start = time.monotonic()
        manager.close(timeout=1.0)
        elapsed = time.monotonic() - start
    assert elapsed < 10
    assert_nothing_survives(manager, children_before, factory.keywords["base_port"])


@pytest.mark.slow
@pytest.mark.parametrize("configured", [True, False])
def test_workers_log_as_the_application_configured(configured, free_port_range):
    """The library configures no logging; a worker shows its environment's records the way the
    application (e.g. mlagents-learn) configured logging in the main process."""
    setup = "import logging\nlogging.basicConfig(level=logging.INFO)\n" if configured else ""
    script = (
        f"{setup}"
        "from functools import partial\n"
        "from mlagents.envs.environment import UnityEnvironment\n"
        "from mlagents.envs.subprocess_env_manager import SubprocessEnvManager\n"
        "if __name__ == '__main__':\n"
        f"    factory = partial(UnityEnvironment, {example_build('Basic')!r}, base_port={free_port_range(1)})\n"
        "    manager = SubprocessEnvManager(factory, 1)\n"
        "    try:\n"
        "        manager.reset(config={})\n"
        "    finally:\n"
        "        manager.close()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert ("started successfully!" in result.stderr) is configured


def interrupted_start_factory(base_port: int):
    """A factory whose worker gets Ctrl-C (SIGINT, sent to itself) just before it creates its
    environment: the signal arrives while the worker starts, every time."""

    def make(worker_id: int) -> UnityEnvironment:
        os.kill(os.getpid(), signal.SIGINT)
        return UnityEnvironment(example_build("Basic"), worker_id=worker_id, base_port=base_port)

    return make


def test_interrupt_while_the_environment_starts_stops_the_worker_quietly(capfd, free_port_range):
    children_before = live_children()
    base_port = free_port_range(1)
    with pytest.raises(UnityCommunicationException, match="At least one of the environments has closed"):
        SubprocessEnvManager(interrupted_start_factory(base_port), 1)
    assert_nothing_left(ports=range(base_port, base_port + 1), children_before=children_before, timeout=30)
    assert "Traceback" not in capfd.readouterr().err


def test_interrupt_before_the_worker_runs_is_kept_for_it(capfd, basic_factory):
    """SIGINT sent the moment the worker process exists, long before its interpreter has started:
    it is held until the worker can handle it, which then closes its environment and exits 0."""
    context = multiprocessing.get_context("spawn")
    step_queue = context.Queue()
    factory = basic_factory(1)
    worker = SubprocessEnvManager.create_worker(0, step_queue, cloudpickle.dumps(factory), context)
    try:
        os.kill(worker.process.pid, signal.SIGINT)
        assert step_queue.get(timeout=120).name == "env_close"
        worker.process.join(60)
        assert worker.process.exitcode == 0
    finally:
        worker.kill()
        step_queue.close()
        step_queue.join_thread()
    assert builds_on_ports(range(factory.keywords["base_port"], factory.keywords["base_port"] + 1)) == []
    assert "Traceback" not in capfd.readouterr().err


# A worker records Ctrl-C and wakes its wait for commands through a socket pair it writes to from
# its signal handler. After the worker's body has ended and closed the pair, a signal that still
# comes must neither fail nor print anything ("Exception ignored ..." with a traceback came from the
# interpreter's own wake-up descriptor, which the worker no longer uses). The script also opens a
# pipe whose reader is closed, so a write into a reused descriptor would fail with a broken pipe.
_SIGNAL_AFTER_CLOSE = """
import os, signal, time
from mlagents.envs.env_worker import _InterruptRequest
request = _InterruptRequest()
request.close()
reader, writer = os.pipe()
os.close(reader)
os.kill(os.getpid(), signal.SIGINT)
time.sleep(0)  # let the interpreter run its pending signal work
print("requested", request.requested)
"""


def test_a_signal_after_the_worker_closed_its_interrupt_request_prints_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SIGNAL_AFTER_CLOSE], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "requested True"
    assert result.stderr == ""


# A worker that reported an error ends its body and exits; the manager, replacing it, may send
# SIGTERM while the interpreter runs its exit handlers (logging's shutdown). The script runs the
# worker body with an environment that fails to start, then sends itself SIGTERM from an exit
# handler that runs before logging's: the process must end by the signal without a traceback.
_SIGTERM_WHILE_EXITING = """
import atexit, logging, multiprocessing, os, signal
import cloudpickle
from mlagents.envs.env_worker import worker
logging.basicConfig(level=logging.INFO)

def failing_factory(worker_id):
    raise RuntimeError("this environment cannot start")

manager_end, worker_end = multiprocessing.Pipe()
queue = multiprocessing.Queue()
worker(worker_end, queue, cloudpickle.dumps(failing_factory), 0)
response = manager_end.recv()
print(response.name, response.payload.message, flush=True)
atexit.register(os.kill, os.getpid(), signal.SIGTERM)
"""


def test_sigterm_while_the_worker_process_exits_prints_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SIGTERM_WHILE_EXITING], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "env_error this environment cannot start", result.stderr
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert "Traceback" not in result.stderr
    assert "Exception ignored" not in result.stderr
