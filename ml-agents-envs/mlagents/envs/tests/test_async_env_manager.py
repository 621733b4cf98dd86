"""The asynchronous env manager core over a scripted in-process transport: stepping rounds, questions,
losses and restarts, closing (the real transports are tested with real builds elsewhere)."""

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.async_env_manager import AsyncEnvManager
from mlagents.envs.brain import AllBrainInfo, BrainInfo
from mlagents.envs.exception import (
    UnityActionException,
    UnityCommunicationException,
    UnityEnvironmentException,
    UnityTimeOutException,
)
from mlagents.envs.policy import Policy
from mlagents.envs.restart_policy import RestartLimitExceeded, RestartLimits, RestartPolicy
from mlagents.envs.timers import get_timer_tree, reset_timers
from mlagents.envs.worker_transport import (
    Lost,
    StepResponse,
    WorkerCommand,
    WorkerHandle,
    WorkerState,
    WorkerTransport,
)

BRAIN = "Brain"


def observation(worker_id: int, count: int) -> AllBrainInfo:
    """One agent of ``worker_id`` whose observation is ``count`` (its steps since its reset)."""
    info = BrainInfo(
        visual_observation=[],
        vector_observation=np.array([[float(count)]]),
        text_observations=[""],
        reward=[0.0],
        agents=[f"${worker_id}-0"],
        local_done=[False],
        vector_action=np.zeros((1, 1)),
        max_reached=[False],
    )
    return {BRAIN: info}


def worker_of(all_brain_info: AllBrainInfo) -> int:
    return int(all_brain_info[BRAIN].agents[0][1:].split("-")[0])


class FakeWorker(WorkerHandle):
    def __init__(self, worker_id: int, restart: int) -> None:
        super().__init__(worker_id)
        self.restart = restart
        self.steps = 0
        # The command in flight (None: the start), its payload and the polls its answer takes.
        self.pending: tuple[WorkerCommand | None, Any, int] | None = (None, None, 1)


class FakeTransport(WorkerTransport[FakeWorker]):
    """Workers that answer on the next poll (a step of a worker in ``slow``: after that many
    polls); the next outcomes of worker ``w`` are the losses queued in ``failures[w]``."""

    def __init__(self, slow: dict[int, int] | None = None) -> None:
        self.slow = slow or {}
        self.failures: dict[int, list[BaseException]] = defaultdict(list)
        self.launches: list[tuple[int, int]] = []
        self.sent: list[tuple[int, WorkerCommand, Any]] = []
        self.ended: list[FakeWorker] = []
        self.polls = 0
        self.closed = False

    def start_worker(self, worker_id: int, restart: int) -> FakeWorker:
        self.launches.append((worker_id, restart))
        return FakeWorker(worker_id, restart)

    def send(self, worker: FakeWorker, command: WorkerCommand, payload: Any = None) -> None:
        assert worker.pending is None, "a second command while one is in flight"
        self.sent.append((worker.worker_id, command, payload))
        polls = self.slow.get(worker.worker_id, 1) if command is WorkerCommand.STEP else 1
        worker.pending = (command, payload, polls)

    def poll(self, workers: Sequence[FakeWorker], timeout: float) -> list[tuple[FakeWorker, Any]]:
        self.polls += 1
        outcomes: list[tuple[FakeWorker, Any]] = []
        for worker in workers:
            assert worker.pending is not None, "polled a worker with nothing in flight"
            command, payload, polls = worker.pending
            if polls > 1:
                worker.pending = (command, payload, polls - 1)
                continue
            worker.pending = None
            if self.failures[worker.worker_id]:
                outcomes.append((worker, Lost(self.failures[worker.worker_id].pop(0))))
            else:
                outcomes.append((worker, self._answer(worker, command)))
        return outcomes

    def _answer(self, worker: FakeWorker, command: WorkerCommand | None) -> Any:
        if command is None:
            return "ready"
        if command is WorkerCommand.STEP:
            worker.steps += 1
            return StepResponse(observation(worker.worker_id, worker.steps), None)
        if command is WorkerCommand.RESET:
            worker.steps = 0
            return observation(worker.worker_id, 0)
        return f"{command.value} of worker {worker.worker_id}, generation {worker.generation}"

    def end_workers(self, workers: Sequence[FakeWorker], timeout: float) -> None:
        self.ended.extend(workers)

    def close(self) -> None:
        assert not self.closed
        self.closed = True


class RecordingPolicy(Policy):
    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def get_action(self, brain_info: BrainInfo) -> ActionInfo:
        self.calls.append([int(agent[1:].split("-")[0]) for agent in brain_info.agents])
        return ActionInfo(np.zeros((len(brain_info.agents), 1)), None, None, None, None)


def make_manager(
    transport: FakeTransport, n_env: int, **kwargs: Any
) -> tuple[AsyncEnvManager[FakeWorker], RecordingPolicy]:
    manager = AsyncEnvManager(transport, n_env, **kwargs)
    policy = RecordingPolicy()
    manager.set_policy(BRAIN, policy)
    return manager, policy


def test_synchronous_rounds_hand_over_every_worker_in_worker_order() -> None:
    manager, policy = make_manager(FakeTransport(slow={0: 3}), 3, synchronous=True)
    manager.reset()
    reset_timers()
    for round_number in range(1, 4):
        (batch,) = manager.step_batches()
        assert [worker_of(step.current_all_brain_info) for step in batch.step_infos] == [0, 1, 2]
        assert [
            step.current_all_brain_info[BRAIN].vector_observations[0, 0] for step in batch.step_infos
        ] == [round_number] * 3
        assert policy.calls[-1] == [0, 1, 2]
    assert len(policy.calls) == 3
    names = [child["name"] for child in get_timer_tree()["children"]]
    assert "AsyncEnvManager._take_step" in names


def test_asynchronous_steps_return_what_finished_and_leave_the_rest_in_flight() -> None:
    manager, policy = make_manager(FakeTransport(slow={0: 5}), 2)
    first = manager.reset()
    assert [worker_of(step.current_all_brain_info) for step in first] == [0, 1]
    (step,) = manager.step()
    assert worker_of(step.current_all_brain_info) == 1
    assert step.previous_all_brain_info is first[1].current_all_brain_info
    assert [worker.state for worker in manager.env_workers] == [WorkerState.STEPPING, WorkerState.IDLE]
    assert manager.env_workers[0].waiting and not manager.env_workers[1].waiting
    (step,) = manager.step()  # only the idle worker is decided for; worker 0 is still busy
    assert policy.calls == [[0, 1], [1]]
    assert worker_of(step.current_all_brain_info) in (0, 1)


def test_a_question_waits_for_the_step_in_flight_and_keeps_its_result() -> None:
    transport = FakeTransport(slow={0: 5})
    manager, _ = make_manager(transport, 2)
    manager.reset()
    manager.step()  # worker 1 finished, worker 0 still stepping
    assert manager.external_brains == "external_brains of worker 0, generation 0"  # type: ignore[comparison-overlap]
    assert manager.env_workers[0].state is WorkerState.STEPPED
    steps = manager.step()  # worker 0's step comes first: it finished while the question waited
    assert worker_of(steps[0].current_all_brain_info) == 0
    assert manager.ask_every_worker(WorkerCommand.GLOBAL_DONE) == [
        "global_done of worker 0, generation 0",
        "global_done of worker 1, generation 0",
    ]


def test_a_lost_worker_is_restarted_in_a_loop_until_a_replacement_runs() -> None:
    transport = FakeTransport()
    restarts = RestartPolicy(RestartLimits(-1, -1, 60.0))
    manager, _ = make_manager(transport, 2, restart_policy=restarts)
    manager.reset(config={"gravity": 2.0})
    manager.step()
    last_seen = manager.env_workers[1].previous_step.current_all_brain_info
    # Worker 1's step is lost, then its first replacement never starts; the second one runs.
    transport.failures[1] = [UnityCommunicationException("the build crashed"), UnityTimeOutException("no")]
    steps = manager.step()
    assert manager.restart_count == 2 and restarts.restarts_of(1) == 2
    assert transport.launches == [(0, 0), (1, 0), (1, 1), (1, 2)]  # the factory told each restart
    assert [worker.generation for worker in manager.env_workers] == [0, 2]
    assert transport.ended[0].state is WorkerState.CLOSED and len(transport.ended) == 2
    # The replacement was reset with the last reset's arguments, before step() returned.
    reset_of_1 = (1, WorkerCommand.RESET, ({"gravity": 2.0}, True, None))
    assert transport.sent.count(reset_of_1) == 2  # the manager's reset, then the replacement's
    first_seen = manager.env_workers[1].previous_step
    assert first_seen.previous_all_brain_info is None and first_seen.brain_name_to_action_info is None
    assert [worker_of(step.current_all_brain_info) for step in steps] == [0]
    # The lost episode is reported once, from what the lost worker showed last.
    (interrupted,) = manager.take_interrupted_steps()
    assert interrupted.previous_all_brain_info is last_seen
    assert interrupted.current_all_brain_info[BRAIN].max_reached == [True]
    assert manager.take_interrupted_steps() == []
    # The replacement steps from its reset on.
    step_infos = manager.step() + manager.step()
    restarted = [step for step in step_infos if worker_of(step.current_all_brain_info) == 1]
    assert restarted[0].previous_all_brain_info is first_seen.current_all_brain_info


def test_past_the_restart_limits_the_loss_is_raised() -> None:
    transport = FakeTransport()
    manager, _ = make_manager(transport, 1, restart_policy=RestartPolicy(RestartLimits(1, -1, 60.0)))
    manager.reset()
    transport.failures[0] = [UnityCommunicationException("crash"), UnityCommunicationException("again")]
    with pytest.raises(RestartLimitExceeded, match="--max-lifetime-restarts=1") as raised:
        manager.step()
    assert str(raised.value.__cause__) == "again"
    assert manager.restart_count == 1
    assert manager.env_workers[0].state is WorkerState.LOST
    manager.close()
    assert transport.closed


@pytest.mark.parametrize(
    "restart_policy, error",
    [(None, UnityCommunicationException("crash")), (RestartPolicy(), UnityActionException("bad action"))],
)
def test_errors_that_are_not_restarted_are_raised_as_they_are(restart_policy, error) -> None:
    transport = FakeTransport()
    manager, _ = make_manager(transport, 2, restart_policy=restart_policy)
    manager.reset()
    transport.failures[1] = [error]
    with pytest.raises(type(error)) as raised:
        manager.step()
    assert raised.value is error
    assert manager.restart_count == 0
    with pytest.raises(
        UnityCommunicationException, match="lost UnityEnvironment worker 1 in an earlier error"
    ):
        manager.reset()  # the manager cannot be used further...
    manager.close()  # ...but closes
    assert set(map(id, transport.ended)) == set(map(id, manager.env_workers))


def test_a_start_error_ends_every_worker_started() -> None:
    transport = FakeTransport()
    transport.failures[1] = [UnityEnvironmentException("no such build")]
    with pytest.raises(UnityEnvironmentException, match="no such build"):
        AsyncEnvManager(transport, 3)
    assert [worker.worker_id for worker in transport.ended] == [0, 1, 2]
    assert transport.closed


def test_close_is_once_and_then_every_call_fails() -> None:
    transport = FakeTransport()
    manager, _ = make_manager(transport, 2)
    manager.close()
    manager.close()
    assert len(transport.ended) == 2 and transport.closed
    assert all(worker.state is WorkerState.CLOSED for worker in manager.env_workers)
    for call in (manager.step, manager.reset, lambda: manager.reset_parameters):
        with pytest.raises(UnityCommunicationException, match="The AsyncEnvManager is closed."):
            call()


def test_n_env_must_be_positive() -> None:
    with pytest.raises(ValueError, match="n_env must be at least 1"):
        AsyncEnvManager(FakeTransport(), 0)
