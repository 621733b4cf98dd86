"""The asynchronous core of the env managers that run their environments in workers: :class:`AsyncEnvManager`.

:class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager` (worker processes) and
:class:`~mlagents.envs.ray_env_manager.RayEnvManager` (Ray actors) are this class over a
:class:`~mlagents.envs.worker_transport.WorkerTransport`. The core owns everything the two share:

* stepping: the actions of every idle worker are decided in one policy call per brain
  (:class:`~mlagents.envs.step_batching.StepBatcher`) and sent; :meth:`AsyncEnvManager.step`
  returns as soon as at least one step finished (with every other finished one), or with
  ``synchronous=True`` once every worker's step finished;
* the transitions handed over (:class:`~mlagents.envs.env_manager.StepInfo` per worker, grouped by
  decision) and the workers' timers, merged under ``workers``;
* resets (after the steps in flight), questions to worker 0, closing;
* lost workers: restarted with the :class:`~mlagents.envs.restart_policy.RestartPolicy` (the
  interrupted episode reported once, the new environment reset with the last reset's arguments,
  the factory told the restart's number), or their error raised.

Every wait is one loop of :meth:`WorkerTransport.poll` calls with a timeout, after which the
transport checks that the workers waited for are alive; each outcome moves one worker's
:class:`~mlagents.envs.worker_transport.WorkerState`. Replacing a lost worker only starts the new
one in its slot: the same loop takes it through its start and reset (a step waits for that, as in
ML-Agents 0.9), and replaces it again, within the policy's limits, if it is lost in turn.
"""

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Generic

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.env_manager import EnvManager, ResetArguments, StepBatch, StepInfo
from mlagents.envs.exception import UnityCommunicationException
from mlagents.envs.restart_policy import RestartPolicy, first_line, is_restartable
from mlagents.envs.step_batching import StepBatcher
from mlagents.envs.timers import TimerNode, hierarchical_timer
from mlagents.envs.worker_transport import Lost, W, WorkerCommand, WorkerState, WorkerTransport

__all__ = ["LIVENESS_CHECK_INTERVAL", "AsyncEnvManager"]

logger = logging.getLogger("mlagents.envs")

#: Seconds one wait on the workers lasts before the transport checks that they are still alive.
LIVENESS_CHECK_INTERVAL = 0.5
#: Seconds a lost worker gets to close its environment before it and its build are ended for sure.
LOST_WORKER_CLOSE_TIMEOUT = 3.0


class AsyncEnvManager(EnvManager, Generic[W]):
    """Runs ``n_env`` environments in workers reached through ``transport`` and steps them
    asynchronously.

    All workers start at once (their builds launch in parallel); the constructor returns when every
    one runs. :meth:`step` sends actions to every idle worker, then returns as soon as at least one
    of them has finished; workers still busy are collected by a later call.

    Example, with either manager (``SubprocessEnvManager(factory, n_env=4)``,
    ``RayEnvManager(factory, n_env=4)``; ``factory`` is e.g. ``partial(UnityEnvironment, path,
    base_port=5005)``)::

        manager = SubprocessEnvManager(factory, n_env=4)
        try:
            manager.set_policy("BasicLearning", my_policy)
            manager.reset()
            for _ in range(100):
                for step_info in manager.step():  # 1..4 transitions
                    ...
        finally:
            manager.close()

    **Restarts** (with a ``restart_policy``): a worker whose environment is lost (its build exited,
    hung past its ``exchange_timeout`` or never connected, or the worker itself died) is ended for
    good (its build too, freeing its port) and started again in the same slot, hence on the same
    port, if the policy allows it; the new environment is reset with the parameters of the last
    :meth:`reset`. The agents of the lost episode are reported once by
    :meth:`take_interrupted_steps`, the step in flight is dropped, and :attr:`restart_count` counts
    the restart. Past the policy's limits the error is
    :class:`~mlagents.envs.restart_policy.RestartLimitExceeded` (a ``UnityCommunicationException``).
    Without a policy every loss is raised, as in ML-Agents 0.9.

    **Synchronous stepping** (``synchronous=True``, what ``mlagents-learn --deterministic`` uses):
    every call steps every worker and returns once all of them have finished, as one batch in
    worker order. Which steps the trainers receive, in which order and decided by which policy
    version then no longer depends on which worker answers first: with seeded environments and
    policies, the run is the same on any machine load. It costs the time the fastest workers wait
    for the slowest one in each round.

    After an exception from any method, call :meth:`close`; the manager cannot be used further.

    :param transport: how the workers run.
    :param n_env: number of workers (environments).
    :param restart_policy: decides whether a lost worker is restarted (None: never).
    :param synchronous: step every worker in each call and wait for all of them (see above).
    :param while_starting: called once every worker was started and before any is waited for,
        so that start-up work of the caller overlaps the environments' launch (``mlagents-learn``
        imports TensorFlow there). An exception it raises ends every worker and is raised.
    :raises ValueError: ``n_env`` < 1.
    :raises: any error of an environment's creation, after every worker was ended.
    """

    def __init__(
        self,
        transport: WorkerTransport[W],
        n_env: int,
        *,
        restart_policy: RestartPolicy | None = None,
        synchronous: bool = False,
        while_starting: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.synchronous = synchronous
        self.env_workers: list[W] = []
        self._transport = transport
        self._restart_policy = restart_policy
        self._batcher = StepBatcher()
        # What a restarted environment is reset with: the arguments of the last reset().
        self._last_reset: ResetArguments | None = None
        self._closed = False
        # A worker whose loss was raised (not restarted): the manager cannot go on without it.
        self._lost_for_good: W | None = None
        self._take_step_timer = f"{type(self).__name__}._take_step"
        if n_env < 1:
            raise ValueError(f"n_env must be at least 1, got {n_env}")
        try:
            transport.open(n_env)
            # All workers start before any is waited for: their builds launch in parallel.
            for worker_id in range(n_env):
                self.env_workers.append(transport.start_worker(worker_id, restart=0))
            if while_starting is not None:
                while_starting()
            self._wait_until(self._nothing_in_flight)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------------- EnvManager

    def step(self) -> list[StepInfo]:
        """Send actions to every idle worker, then wait until at least one worker has a result
        (synchronous: until every worker has).

        :returns: one StepInfo per worker that finished (1..n_env; synchronous: every worker not
            lost meanwhile), grouped by the decision that produced their actions (oldest first),
            in worker order within a group.
        :raises UnityCommunicationException: a worker died or stopped (Ctrl-C), and was not
            restarted (no restart policy, or past its limits: RestartLimitExceeded).
        :raises: an exception raised by a policy, or by an environment in a worker (raised again
            with its type and the worker's traceback as a note).
        """
        return [step_info for batch in self.step_batches() for step_info in batch.step_infos]

    def step_batches(self) -> list[StepBatch]:
        """:meth:`step`, grouped by decision: each batch carries the joined BrainInfos the policies
        decided on, the unsplit ActionInfos, and the workers' new BrainInfos joined the same way."""
        self._check_open()
        while True:
            self._queue_steps()
            self._wait_until(self._round_over)
            if not self.synchronous:
                # The results that arrived while the first ones were handled join this round.
                self._poll(timeout=0)
                self._wait_until(self._round_over)  # a restart that poll started finishes first
            stepped = [worker for worker in self.env_workers if worker.state is WorkerState.STEPPED]
            if stepped:  # none only when every worker in flight was lost and restarted
                return self._hand_over(stepped)

    def _reset_environments(self, arguments: ResetArguments) -> list[StepInfo]:
        """Reset every environment (in parallel) after the steps in flight have finished (their
        results are dropped); the StepInfos come in worker order."""
        self._check_open()
        self._wait_until(self._nothing_in_flight)
        for worker in self.env_workers:
            if worker.state is WorkerState.STEPPED:
                worker.finished_step = None
                worker.state = WorkerState.IDLE
        self._batcher.reset()
        self._last_reset = arguments
        for worker in self.env_workers:
            self._send(worker, WorkerCommand.RESET, self._last_reset)
        self._wait_until(self._nothing_in_flight)  # a worker restarted meanwhile is reset too
        return [worker.previous_step for worker in self.env_workers]

    @property
    def external_brains(self) -> dict[str, BrainParameters]:
        """The controlled brains (asked to worker 0; all workers run the same environment)."""
        (brains,) = self._ask([0], WorkerCommand.EXTERNAL_BRAINS)
        return brains  # type: ignore[no-any-return]

    @property
    def reset_parameters(self) -> dict[str, float]:
        """The reset parameters of worker 0's environment."""
        (parameters,) = self._ask([0], WorkerCommand.RESET_PARAMETERS)
        return parameters  # type: ignore[no-any-return]

    def close(self, timeout: float = 15.0) -> None:
        """End every worker and its environment. Safe to call several times and after errors.

        The workers get up to ``timeout`` seconds (together) to close their environments; then any
        worker still running is ended, and its build.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._transport.end_workers(self.env_workers, timeout)
        finally:
            for worker in self.env_workers:
                worker.state = WorkerState.CLOSED
            self._transport.close()

    # ------------------------------------------------------------------------------- callers that decide

    def send_actions(self, actions_by_worker: Mapping[int, dict[str, ActionInfo]]) -> None:
        """Step the given idle workers with actions decided by the caller (no policy, no batching),
        for callers that manage the transitions themselves and do not use :meth:`step`.

        :param actions_by_worker: worker id -> its ActionInfo per brain.
        """
        self._check_open()
        for worker_id, all_action_info in actions_by_worker.items():
            worker = self.env_workers[worker_id]
            worker.previous_all_action_info = all_action_info
            self._send(worker, WorkerCommand.STEP, all_action_info)

    def collect_observations(self) -> dict[int, AllBrainInfo]:
        """Wait until no step is in flight; the new observations of the workers whose step
        finished, by worker id (see :meth:`send_actions`).

        :raises: as :meth:`step`.
        """
        self._check_open()
        self._wait_until(self._nothing_in_flight)
        observations: dict[int, AllBrainInfo] = {}
        for worker in self.env_workers:
            if worker.state is WorkerState.STEPPED and worker.finished_step is not None:
                observations[worker.worker_id] = worker.finished_step.all_brain_info
                worker.finished_step = None
                worker.state = WorkerState.IDLE
        return observations

    def ask_every_worker(self, command: WorkerCommand) -> list[Any]:
        """The answer of every worker to a question (``GLOBAL_DONE``, ``EXTERNAL_BRAINS``,
        ``RESET_PARAMETERS``), in worker order."""
        return self._ask(range(len(self.env_workers)), command)

    # ------------------------------------------------------------------------------- stepping

    def _queue_steps(self) -> None:
        idle_workers = [worker for worker in self.env_workers if worker.state is WorkerState.IDLE]
        if not idle_workers:
            return
        with hierarchical_timer(self._take_step_timer):
            all_action_infos = self._batcher.decide(
                self.policies,
                [(worker.worker_id, worker.previous_step.current_all_brain_info) for worker in idle_workers],
            )
        for worker in idle_workers:
            all_action_info = all_action_infos[worker.worker_id]
            worker.previous_all_action_info = all_action_info
            self._send(worker, WorkerCommand.STEP, all_action_info)

    def _round_over(self) -> bool:
        """Synchronous: nothing is in flight any more. Asynchronous: a step finished (or a
        restarted worker is ready to step), and no worker is being restarted: as in ML-Agents 0.9,
        a restart finishes before the call returns, the other workers' results wait meanwhile."""
        if self.synchronous:
            return self._nothing_in_flight()
        settled = False
        for worker in self.env_workers:
            state = worker.state
            if state is WorkerState.STARTING or state is WorkerState.RESETTING:
                return False
            settled = settled or state is WorkerState.STEPPED or state is WorkerState.IDLE
        return settled

    def _hand_over(self, stepped: list[W]) -> list[StepBatch]:
        """The transitions of the ``stepped`` workers (now idle again), and their timers merged."""
        worker_steps: list[tuple[int, StepInfo]] = []
        timer_nodes: list[TimerNode] = []
        for worker in stepped:
            result = worker.finished_step
            assert result is not None  # STEPPED holds a result
            worker.finished_step = None
            worker.state = WorkerState.IDLE
            new_step = StepInfo(
                worker.previous_step.current_all_brain_info,
                result.all_brain_info,
                worker.previous_all_action_info,
            )
            worker_steps.append((worker.worker_id, new_step))
            worker.previous_step = new_step
            if result.timer_root is not None:
                timer_nodes.append(result.timer_root)
        if timer_nodes:
            with hierarchical_timer("workers") as main_timer_node:
                for worker_timer_node in timer_nodes:
                    main_timer_node.merge(worker_timer_node, root_name="worker_root", is_parallel=True)
        return self._batcher.collect(worker_steps)

    def _ask(self, worker_ids: Sequence[int], command: WorkerCommand) -> list[Any]:
        """Ask each worker of ``worker_ids`` once it has nothing in flight (a finished step's result
        is kept); a worker lost before it answered is asked again once its replacement runs."""
        self._check_open()
        answers: dict[int, Any] = {}
        while len(answers) < len(worker_ids):
            waiting_for = [worker_id for worker_id in worker_ids if worker_id not in answers]
            self._wait_until(partial(self._settled, waiting_for))
            asked = [self.env_workers[worker_id] for worker_id in waiting_for]
            for worker in asked:
                self._send(worker, command)
            self._wait_until(partial(self._answered, asked))
            for worker in asked:
                if worker.generation == self.env_workers[worker.worker_id].generation:
                    answers[worker.worker_id] = worker.answer
        return [answers[worker_id] for worker_id in worker_ids]

    def _settled(self, worker_ids: Sequence[int]) -> bool:
        return not any(self.env_workers[worker_id].state.in_flight for worker_id in worker_ids)

    @staticmethod
    def _answered(asked: Sequence[W]) -> bool:
        return not any(worker.state is WorkerState.ASKING for worker in asked)

    # ------------------------------------------------------------------------------- waiting

    def _send(self, worker: W, command: WorkerCommand, payload: Any = None) -> None:
        self._transport.send(worker, command, payload)
        if command is WorkerCommand.STEP:
            worker.state = WorkerState.STEPPING
        elif command is WorkerCommand.RESET:
            worker.state = WorkerState.RESETTING
        else:
            worker.state = WorkerState.ASKING

    def _nothing_in_flight(self) -> bool:
        return not any(worker.state.in_flight for worker in self.env_workers)

    def _wait_until(self, done: Callable[[], bool]) -> None:
        """Handle the outcomes of the commands in flight until ``done()``."""
        while not done():
            if not self._poll(LIVENESS_CHECK_INTERVAL):  # a wait for what cannot happen: fail, not hang
                raise UnityCommunicationException(f"The {type(self).__name__} has no worker to wait for.")

    def _poll(self, timeout: float) -> bool:
        """Handle the outcomes that arrive within ``timeout`` seconds (after which the transport
        checks that the workers waited for are alive); False when nothing is in flight."""
        in_flight = [worker for worker in self.env_workers if worker.state.in_flight]
        if not in_flight:
            return False
        for worker, outcome in self._transport.poll(in_flight, timeout):
            self._handle(worker, outcome)
        return True

    def _handle(self, worker: W, outcome: Any) -> None:
        """Move ``worker`` on by the outcome of its command in flight."""
        if not worker.state.in_flight:
            return  # nothing was asked of it (a worker already replaced is CLOSED)
        if isinstance(outcome, Lost):
            self._recover(worker, outcome.error)
        elif worker.state is WorkerState.STEPPING:
            worker.finished_step = outcome
            worker.state = WorkerState.STEPPED
        elif worker.state is WorkerState.RESETTING:
            worker.previous_step = StepInfo(None, outcome, None)
            worker.state = WorkerState.IDLE
        elif worker.state is WorkerState.ASKING:
            worker.answer = outcome
            worker.state = WorkerState.IDLE if worker.finished_step is None else WorkerState.STEPPED
        elif worker.state is WorkerState.STARTING:
            worker.state = WorkerState.IDLE
            if self._last_reset is not None:  # a restarted worker joins the running environments
                self._send(worker, WorkerCommand.RESET, self._last_reset)

    def _recover(self, worker: W, error: BaseException) -> None:
        """Replace lost ``worker`` by a new one in its slot if the restart policy allows it (the new
        one is taken through its start and reset by the waits), else raise ``error``
        (RestartLimitExceeded past the limits)."""
        worker.state = WorkerState.LOST
        if self._restart_policy is None or self._closed or not is_restartable(error):
            self._lost_for_good = worker
            raise error
        worker_id = worker.worker_id
        number = self._restart_policy.request(worker_id, error)
        self._count_restart(worker.previous_step)
        self._transport.end_workers([worker], LOST_WORKER_CLOSE_TIMEOUT)
        worker.state = WorkerState.CLOSED
        self._batcher.forget(worker_id)
        logger.warning(
            "%s was lost (%s: %s). Restarting it on the same port (restart %d of this worker, %d in all). "
            "The environment's log: %s",
            worker.describe(),
            type(error).__name__,
            first_line(error),
            number,
            self.restart_count,
            worker.build_log_path or "unknown",
        )
        replacement = self._transport.start_worker(worker_id, restart=number)
        replacement.generation = worker.generation + 1
        self.env_workers[worker_id] = replacement

    def _check_open(self) -> None:
        """:raises UnityCommunicationException: the manager is closed, or an error it raised left
        a worker lost (then only :meth:`close` is left to call)."""
        if self._closed:
            raise UnityCommunicationException(f"The {type(self).__name__} is closed.")
        if self._lost_for_good is not None:
            raise UnityCommunicationException(
                f"The {type(self).__name__} lost {self._lost_for_good.describe()} in an earlier error and "
                "cannot be used further: close it."
            )
