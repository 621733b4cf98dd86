"""Several environments, each in its own worker process: :class:`SubprocessEnvManager`.

Protocol between the manager (main process) and worker ``w`` (the process body is
:func:`mlagents.envs.env_worker.worker`):

* commands travel on the worker's own duplex ``Pipe`` as :class:`EnvironmentCommand`;
* every answer travels back on the same pipe, ``"step"`` results included: the manager waits on the
  pipes of all workers in flight at once and takes whichever environment finishes first
  (asynchronous stepping, as in ML-Agents 0.9), with one write and one wake-up per step;
* a worker whose environment raises sends ``EnvironmentResponse("env_error", w, WorkerError)`` on
  its pipe, closes its environment and exits; the manager re-raises the exception (same type, with
  the worker's traceback added as a note);
* a worker stopped by Ctrl-C says so (``"env_close"``) on one queue shared by all workers (the step
  queue, named after its role in ML-Agents 0.9), which the manager reads when a worker stops.

Every wait of the manager has a timeout after which it checks that the workers it waits for are
still alive, so a crashed worker raises :class:`UnityCommunicationException` (naming the worker and
its exit code) instead of hanging, or, with a restart policy
(:mod:`mlagents.envs.restart_policy`), is replaced by a new worker with the same id and port.
"""

import logging
import multiprocessing
import os
import queue
import select
import signal
import time
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for_objects
from multiprocessing.context import DefaultContext, ForkContext, ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from typing import Any

import cloudpickle

from mlagents.envs import env_worker as worker_process
from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainParameters
from mlagents.envs.communicator_objects import CustomResetParameters
from mlagents.envs.env_manager import EnvFactory, EnvManager, StepBatch, StepInfo

# The worker side lives in env_worker; its names stay importable from here, as in ML-Agents 0.9.
from mlagents.envs.env_worker import (
    EnvironmentCommand,
    EnvironmentResponse,
    LoggingSetup,
    StepResponse,
    WorkerError,
    WorkerReady,
)
from mlagents.envs.exception import UnityCommunicationException, UnityException
from mlagents.envs.pipe_messages import (
    STEP,
    decode_all_brain_info,
    decode_timers,
    encode_actions,
    send_object,
)
from mlagents.envs.restart_policy import RestartPolicy, first_line, is_restartable
from mlagents.envs.step_batching import StepBatcher
from mlagents.envs.timers import TimerNode, hierarchical_timer, timed

__all__ = [
    "EnvironmentCommand",
    "EnvironmentResponse",
    "StepResponse",
    "SubprocessEnvManager",
    "UnityEnvWorker",
    "WorkerError",
    "worker",
]

logger = logging.getLogger("mlagents.envs")

#: A multiprocessing context: how worker processes are started.
ProcessContext = DefaultContext | SpawnContext | ForkContext | ForkServerContext


def process_context(start_method: str | None) -> ProcessContext:
    """The multiprocessing context of ``start_method`` (None: the platform's default).

    :raises ValueError: an unknown start method.
    """
    if start_method is None:
        return multiprocessing.get_context()
    if start_method == "spawn":
        return multiprocessing.get_context("spawn")
    if start_method == "fork":
        return multiprocessing.get_context("fork")
    if start_method == "forkserver":
        return multiprocessing.get_context("forkserver")
    raise ValueError(f"Unknown multiprocessing start method {start_method!r}")


#: The body of a worker process (see :func:`mlagents.envs.env_worker.worker`).
worker = worker_process.worker

# How long a wait on a worker lasts before the manager checks that the worker is still alive (seconds).
LIVENESS_CHECK_INTERVAL = 0.5


class _PipeClosed(UnityCommunicationException):
    """The manager's pipe to a worker broke: the worker exited (its reason may be on the step queue)."""


class UnityEnvWorker:
    """The manager's handle on one worker process.

    :ivar process: the worker process.
    :ivar worker_id: its index.
    :ivar conn: the manager's end of the worker's pipe.
    :ivar previous_step: the worker's last transition (its current observations are the next input).
    :ivar previous_all_action_info: the actions of the step in flight (or of the last step).
    :ivar waiting: True while a ``"step"`` is in flight.
    :ivar build_pid: process id of the environment's build (to end it if the worker could not).
    :ivar build_log_path: the build's log file (named when the worker is lost), None when unknown.
    :ivar conn_fd: the descriptor of ``conn``; :ivar sentinel: ``process.sentinel`` (both read once).
    """

    def __init__(self, process: BaseProcess, worker_id: int, conn: Connection) -> None:
        self.process = process
        self.worker_id = worker_id
        self.conn = conn
        self.previous_step: StepInfo = StepInfo(None, {}, None)
        self.previous_all_action_info: dict[str, ActionInfo] = {}
        self.waiting = False
        self.build_pid: int | None = None
        self.build_log_path: str | None = None
        # Read once: the properties check the objects are open on every access (hot path of a wait).
        self.conn_fd = conn.fileno()
        self.sentinel = process.sentinel

    def send(self, name: str, payload: Any = None) -> None:
        """Send a command.

        :raises UnityCommunicationException: the worker is gone.
        """
        try:
            if name == STEP:  # the hot path: a plain tuple, actions encoded (see pipe_messages)
                send_object(self.conn, (STEP, encode_actions(payload)))
            else:
                send_object(self.conn, EnvironmentCommand(name, payload))
        except (BrokenPipeError, EOFError, OSError) as error:
            raise UnityCommunicationException(
                "UnityEnvironment worker: send failed. " + self.describe_exit()
            ) from error

    def poll(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a message; True when one is there (or the pipe broke)."""
        try:
            return self.conn.poll(timeout)
        except (BrokenPipeError, EOFError, OSError):
            return True

    def recv_response(self) -> EnvironmentResponse:
        """Receive one message as it came, ``"env_error"`` included (blocking; see :meth:`poll`).

        :raises UnityCommunicationException: the worker is gone.
        """
        try:
            response = self.conn.recv()
        except (BrokenPipeError, EOFError, OSError) as error:
            raise _PipeClosed("UnityEnvironment worker: recv failed. " + self.describe_exit()) from error
        if type(response) is tuple:  # a step's answer, as plain data (see pipe_messages)
            name, worker_id, (all_brain_info, timers) = response
            return EnvironmentResponse(
                name, worker_id, StepResponse(decode_all_brain_info(all_brain_info), decode_timers(timers))
            )
        return response  # type: ignore[no-any-return]

    def recv(self) -> EnvironmentResponse:
        """Receive one message (blocking; see :meth:`poll`).

        :raises UnityCommunicationException: the worker is gone.
        :raises: the worker's exception, when it reports one.
        """
        response = self.recv_response()
        if response.name == "env_error":
            raise response.payload.to_exception(self.worker_id)
        return response

    def reported_error(self) -> BaseException | None:
        """The error the worker sent on its pipe before it stopped, if it sent one (does not block)."""
        try:
            while self.conn.poll(0):
                response: EnvironmentResponse = self.conn.recv()
                if response.name == "env_error":
                    error: WorkerError = response.payload
                    return error.to_exception(self.worker_id)
        except (BrokenPipeError, EOFError, OSError):
            pass
        return None

    def discard_messages(self) -> None:
        """Read and drop every message waiting on the pipe (does not block)."""
        try:
            while self.conn.poll(0):
                self.conn.recv()
        except Exception:
            pass  # the pipe broke, or a message cannot be unpickled: nothing more to read

    def describe_exit(self) -> str:
        """A sentence saying whether and how the worker process ended."""
        self.process.join(timeout=1.0)
        if self.process.exitcode is None:
            return f"Worker {self.worker_id} (pid {self.process.pid}) is still running but does not answer."
        return f"Worker {self.worker_id} exited with code {self.process.exitcode}."

    def request_close(self) -> None:
        """Ask the worker to close its environment and exit (no error if it is gone already)."""
        try:
            self.conn.send(EnvironmentCommand("close"))
        except (BrokenPipeError, EOFError, OSError):
            pass

    def close(self, timeout: float = 10.0) -> None:
        """Ask the worker to exit, wait up to ``timeout`` seconds, then end it and its build for sure."""
        self.request_close()
        self.process.join(timeout)
        self.kill()

    def kill(self) -> None:
        """End the worker process if it still runs (SIGTERM, then SIGKILL) and its build process."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(3.0)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(3.0)
        if self.build_pid is not None:
            # The worker normally ends its build; this covers a worker killed before it could.
            # Builds run in their own session (pid = session id = process group id); checking the
            # session avoids hitting an unrelated process that reused the pid.
            try:
                if os.getsid(self.build_pid) == self.build_pid:
                    os.killpg(self.build_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.conn.close()


def _end_worker_processes(workers: list[UnityEnvWorker], grace: float = 3.0) -> None:
    """SIGTERM every running worker, wait up to ``grace`` seconds for all of them together, then
    SIGKILL the ones left and wait again."""
    for end in (BaseProcess.terminate, BaseProcess.kill):
        running = [worker.process for worker in workers if worker.process.is_alive()]
        for process in running:
            end(process)
        deadline = time.monotonic() + grace
        while running and time.monotonic() < deadline:
            wait_for_objects([process.sentinel for process in running], timeout=deadline - time.monotonic())
            running = [process for process in running if process.is_alive()]
        for process in running:
            process.join(0)


class SubprocessEnvManager(EnvManager):
    """Runs ``n_env`` environments, each in its own worker process, and steps them asynchronously.

    :meth:`step` sends actions to every worker that is idle, then returns as soon as at least one of
    them has finished; workers still busy are collected by a later call. Actions are decided in
    batches: for every brain, the policy is asked ONCE for the agents of all idle workers together
    (their BrainInfos are joined), and the result is split back per worker by agent count.
    :meth:`step_batches` hands those joined BrainInfos and unsplit results to the trainers, with the
    workers' new BrainInfos joined once (they are also the next decision's input); see
    :mod:`mlagents.envs.step_batching`.

    Example::

        from functools import partial

        factory = partial(UnityEnvironment, "example-envs/builds/Basic.x86_64", base_port=5005)
        manager = SubprocessEnvManager(factory, n_env=4)  # workers 0..3 on ports 5005..5008
        try:
            manager.set_policy("BasicLearning", my_policy)
            manager.reset()
            for _ in range(100):
                for step_info in manager.step():  # 1..4 transitions
                    ...
        finally:
            manager.close()

    Workers are started with the ``spawn`` method by default (a fresh interpreter: safe with the
    threads of TensorFlow and gRPC in the main process); like any ``multiprocessing`` program, a
    script that creates the manager must then guard its entry point with
    ``if __name__ == "__main__":``. The factory is sent with cloudpickle: lambdas and closures travel
    by value, module-level functions and classes by reference (their module must be importable).

    **Restarts** (with a ``restart_policy``): a worker whose environment is lost (its build exited or
    was killed, did not answer within its ``exchange_timeout``, could not connect, or the worker
    process itself died) is closed for good (worker process ended, the build's process group
    killed, its port freed) and started again with the same worker id, hence the same port, if the
    policy allows it; the new environment is reset with the parameters of the last :meth:`reset`.
    The agents of the lost episode are reported once by :meth:`take_interrupted_steps`, the step in
    flight is dropped, and :attr:`restart_count` counts the restart. Past the policy's limits the
    error is :class:`~mlagents.envs.restart_policy.RestartLimitExceeded` (a
    ``UnityCommunicationException``). Without a policy every loss is raised, as in ML-Agents 0.9.

    **Synchronous stepping** (``synchronous=True``, what ``mlagents-learn --deterministic`` uses):
    every call steps every worker and returns once all of them have finished, as one batch in
    worker order. Which steps the trainers receive, in which order and decided by which policy
    version then no longer depends on which worker answers first: with seeded environments and
    policies, the run is the same on any machine load. It costs the time the fastest workers
    wait for the slowest one in each round.

    After an exception from any method, call :meth:`close`; the manager cannot be used further.

    :param env_factory: callable ``worker_id -> environment``, called in each worker.
    :param n_env: number of workers (environments).
    :param start_method: ``multiprocessing`` start method (``"spawn"``, ``"fork"``, ``"forkserver"``),
        or None for the platform's default.
    :param restart_policy: decides whether a lost worker is restarted (None: never).
    :param synchronous: step every worker in each call and wait for all of them (see above);
        False (the default, as in ML-Agents 0.9): return as soon as one has finished.
    :raises ValueError: ``n_env`` < 1.
    :raises: any error of an environment's creation (e.g. UnityTimeOutException,
        UnityWorkerInUseException), after every worker was ended.
    """

    def __init__(
        self,
        env_factory: EnvFactory,
        n_env: int = 1,
        *,
        start_method: str | None = "spawn",
        restart_policy: RestartPolicy | None = None,
        synchronous: bool = False,
    ) -> None:
        super().__init__()
        self.synchronous = synchronous
        if n_env < 1:
            raise ValueError(f"n_env must be at least 1, got {n_env}")
        self._closed = False
        self._batcher = StepBatcher()
        self._step_responses: list[EnvironmentResponse] = []
        # Step-queue messages read while a worker was restarted, handled by the next collection.
        self._unhandled_responses: list[EnvironmentResponse] = []
        self._restart_policy = restart_policy
        # What a restarted environment is reset with: the arguments of the last reset().
        self._last_reset: tuple[dict[str, float] | None, bool, CustomResetParameters | None] | None = None
        self.env_workers: list[UnityEnvWorker] = []
        self._context = process_context(start_method)
        self.step_queue: multiprocessing.Queue[EnvironmentResponse] = self._context.Queue()
        self._pickled_env_factory = cloudpickle.dumps(env_factory)
        try:
            # All workers start before any is waited for: their builds launch in parallel.
            for worker_id in range(n_env):
                self.env_workers.append(
                    self.create_worker(worker_id, self.step_queue, self._pickled_env_factory, self._context)
                )
            self._wait_for_workers_ready()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def create_worker(
        worker_id: int,
        step_queue: "multiprocessing.Queue[EnvironmentResponse]",
        pickled_env_factory: bytes,
        context: ProcessContext | None = None,
        restart: int = 0,
    ) -> UnityEnvWorker:
        """Start the process of worker ``worker_id`` (does not wait for its environment);
        ``restart``: how often this worker was restarted before (0: its first start)."""
        context = context or process_context(None)
        parent_conn, child_conn = context.Pipe()
        process = context.Process(
            target=worker_process.worker,
            args=(
                child_conn,
                step_queue,
                pickled_env_factory,
                worker_id,
                LoggingSetup.of_this_process(),
                restart,
            ),
            name=f"UnityEnvWorker-{worker_id}",
            daemon=True,
        )
        # The worker inherits a blocked SIGINT until its handler is in place (see worker()): a
        # Ctrl-C during its start-up then neither kills it with a traceback nor skips its clean-up.
        blocked = hasattr(signal, "pthread_sigmask")
        previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if blocked else None
        try:
            process.start()
        finally:
            if previous_mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        # Only the worker may hold its end: then a dead worker shows as end-of-file, not as silence.
        child_conn.close()
        return UnityEnvWorker(process, worker_id, parent_conn)

    def _wait_for_workers_ready(self, worker_ids: list[int] | None = None) -> None:
        """Wait until the workers ``worker_ids`` (default: all) report their environment running;
        a worker lost meanwhile is restarted (and waited for) or its error raised."""
        waiting_for = set(range(len(self.env_workers)) if worker_ids is None else worker_ids)
        while waiting_for:
            workers = [self.env_workers[worker_id] for worker_id in sorted(waiting_for)]
            by_conn = {worker.conn: worker for worker in workers}
            by_sentinel = {worker.process.sentinel: worker for worker in workers}
            waitables: list[Any] = list(by_conn) + list(by_sentinel)
            for ready in wait_for_objects(waitables, timeout=LIVENESS_CHECK_INTERVAL):
                is_sentinel = not isinstance(ready, Connection)
                worker = by_sentinel[ready] if is_sentinel else by_conn[ready]  # type: ignore[index]
                if worker is not self.env_workers[worker.worker_id] or worker.worker_id not in waiting_for:
                    continue  # replaced by a restart during this pass
                if is_sentinel and worker.poll(0):
                    continue  # it exited after answering: read the answer (or error) first
                if is_sentinel:
                    self._worker_failed(worker)
                    response = None
                else:
                    response = self._recv_from(worker)
                if response is not None:
                    ready_payload: WorkerReady = response.payload
                    worker.build_pid, worker.build_log_path = ready_payload
                # Ready now, or lost and restarted (a restart waits for its new worker itself).
                waiting_for.discard(worker.worker_id)

    def step(self) -> list[StepInfo]:
        """Send actions to every idle worker, then wait until at least one worker has a result
        (synchronous: until every worker has).

        :returns: one StepInfo per worker that finished (1..n_env; synchronous: every worker not
            lost meanwhile), grouped by the decision that produced their actions (oldest first),
            in worker order within a group.
        :raises UnityCommunicationException: a worker died or stopped (Ctrl-C), and was not
            restarted (no restart policy, or past its limits: RestartLimitExceeded).
        :raises: an exception raised by a policy, or by an environment in a worker (re-raised with
            its type and the worker's traceback as a note).
        """
        return [step_info for batch in self.step_batches() for step_info in batch.step_infos]

    def step_batches(self) -> list[StepBatch]:
        """:meth:`step`, grouped by decision: each batch carries the joined BrainInfos the policies
        decided on, the unsplit ActionInfos, and the workers' new BrainInfos joined the same way."""
        self._check_open()
        while True:
            self._queue_steps()
            worker_steps = self._wait_for_step_responses()
            if worker_steps:  # empty only when every worker in flight was lost and restarted
                return self._postprocess_steps(worker_steps)

    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters: CustomResetParameters | None = None,
    ) -> list[StepInfo]:
        """Reset every environment (in parallel) after the steps in flight have finished (their
        results are dropped).

        :returns: ``StepInfo(None, first observations, None)`` per worker, in worker order.
        """
        self._check_open()
        while any(worker.waiting for worker in self.env_workers):
            self._wait_for_step_responses()
        self._step_responses.clear()
        self._batcher.reset()
        self._last_reset = (config, train_mode, custom_reset_parameters)
        sent = []
        for worker in self.env_workers:
            if self._send(worker, "reset", self._last_reset):
                sent.append(worker)
        for worker in sent:
            if worker is not self.env_workers[worker.worker_id]:
                continue  # restarted meanwhile: the restart reset the new environment
            response = self._recv_from(worker)
            if response is not None:
                worker.previous_step = StepInfo(None, response.payload, None)
        return [worker.previous_step for worker in self.env_workers]

    @property
    def external_brains(self) -> dict[str, BrainParameters]:
        """The controlled brains (asked to worker 0; all workers run the same environment)."""
        brains: dict[str, BrainParameters] = self._ask_worker_0("external_brains")
        return brains

    @property
    def reset_parameters(self) -> dict[str, float]:
        """The reset parameters of worker 0's environment."""
        parameters: dict[str, float] = self._ask_worker_0("reset_parameters")
        return parameters

    def close(self, timeout: float = 15.0) -> None:
        """End every worker and its environment. Safe to call several times and after errors.

        Workers get ``"close"`` and up to ``timeout`` seconds to close their environments (in
        parallel); a worker still running then is terminated, then killed, and its build process
        killed; the step queue is released last.
        """
        if self._closed:
            return
        self._closed = True
        for env_worker in self.env_workers:
            env_worker.request_close()
        deadline = time.monotonic() + timeout
        running = [env_worker for env_worker in self.env_workers if env_worker.process.is_alive()]
        while running and time.monotonic() < deadline:
            # A worker cannot read "close" while its last result is stuck in a full pipe: keep reading.
            for env_worker in running:
                env_worker.discard_messages()
            self._discard_queued_responses()
            wait_for_objects([env_worker.process.sentinel for env_worker in running], timeout=0.1)
            running = [env_worker for env_worker in running if env_worker.process.is_alive()]
        # All at once: ending them one by one would add each one's SIGTERM grace to the wait.
        _end_worker_processes(self.env_workers)
        for env_worker in self.env_workers:
            env_worker.kill()  # now only ends a build a killed worker left, and closes the pipe
        self._discard_queued_responses()
        self.step_queue.close()
        self.step_queue.join_thread()

    @timed
    def _take_step(self, idle_workers: list["UnityEnvWorker"]) -> dict[int, dict[str, ActionInfo]]:
        return self._batcher.decide(
            self.policies,
            [(worker.worker_id, worker.previous_step.current_all_brain_info) for worker in idle_workers],
        )

    def _queue_steps(self) -> None:
        idle_workers = [worker for worker in self.env_workers if not worker.waiting]
        if not idle_workers:
            return
        all_action_infos = self._take_step(idle_workers)
        for worker in idle_workers:
            all_action_info = all_action_infos[worker.worker_id]
            worker.previous_all_action_info = all_action_info
            # Only what the environment needs travels (no policy outputs), see UnityEnvWorker.send.
            if self._send(worker, STEP, all_action_info):
                worker.waiting = True

    def _send(self, worker: UnityEnvWorker, command_name: str, payload: Any = None) -> bool:
        """Send a command; False when the worker was found lost (and was restarted)."""
        try:
            worker.send(command_name, payload)
            return True
        except UnityCommunicationException:
            self._worker_failed(worker)
            return False

    def _wait_for_step_responses(self) -> list[EnvironmentResponse]:
        """Block until at least one step result is there, then take every result available;
        synchronous: block until no step is in flight (a worker lost meanwhile has none)."""
        while True:
            in_flight = any(worker.waiting for worker in self.env_workers)
            if not in_flight:
                break  # all answered, or every worker in flight was lost and restarted
            if self._step_responses and not self.synchronous:
                self._collect_step_responses(0)
                break
            self._collect_step_responses(LIVENESS_CHECK_INTERVAL)
        responses, self._step_responses = self._step_responses, []
        return responses

    def _read_step_queue(self, timeout: float) -> list[EnvironmentResponse]:
        """The step queue's messages (waiting up to ``timeout`` for the first), after those read
        earlier and not handled yet."""
        responses, self._unhandled_responses = self._unhandled_responses, []
        if responses:
            timeout = 0
        try:
            response = self.step_queue.get(timeout=timeout) if timeout > 0 else self.step_queue.get_nowait()
        except queue.Empty:
            return responses
        while True:
            responses.append(response)
            try:
                response = self.step_queue.get_nowait()
            except queue.Empty:
                return responses

    def _collect_step_responses(self, timeout: float) -> None:
        """Move the step results that arrived into ``_step_responses`` (waiting up to ``timeout``
        for the first); a worker's error restarts it or is raised, a worker's stop is raised.

        One wait covers the pipes and the process sentinels of every worker in flight, so a dead
        worker is noticed on every call, also while others keep answering."""
        if self._unhandled_responses:  # read from the step queue while another worker was lost
            for response in self._read_step_queue(0):
                if response.name == "env_close":
                    raise _stopped_after_interrupt(response.worker_id)
        in_flight = [worker for worker in self.env_workers if worker.waiting]
        if not in_flight:
            return
        # A poll object built per call: several times cheaper than connection.wait() (which builds a
        # selector), and this runs once per pass with up to two descriptors per worker.
        poller = select.poll()
        for worker in in_flight:
            poller.register(worker.conn_fd, select.POLLIN)
            poller.register(worker.sentinel, select.POLLIN)
        ready = {fd for fd, _ in poller.poll(int(timeout * 1000))}
        if not ready:
            return
        failed: list[UnityEnvWorker] = []
        errors: list[tuple[UnityEnvWorker, BaseException]] = []
        for worker in in_flight:
            exited = worker.sentinel in ready
            if worker.conn_fd in ready or exited and worker.poll(0):
                try:
                    response = worker.recv_response()
                except _PipeClosed:
                    failed.append(worker)
                    continue
                if response.name == "env_error":
                    errors.append((worker, response.payload.to_exception(worker.worker_id)))
                elif response.name == "step" and worker.waiting:
                    worker.waiting = False
                    self._step_responses.append(response)
            elif exited:
                failed.append(worker)
        for worker, error in errors:
            self._lost(worker, error)
        for worker in failed:
            if worker is self.env_workers[worker.worker_id]:
                self._worker_failed(worker)

    def _postprocess_steps(self, env_steps: list[EnvironmentResponse]) -> list[StepBatch]:
        worker_steps: list[tuple[int, StepInfo]] = []
        timer_nodes: list[TimerNode] = []
        for step in env_steps:
            payload: StepResponse = step.payload
            env_worker = self.env_workers[step.worker_id]
            new_step = StepInfo(
                env_worker.previous_step.current_all_brain_info,
                payload.all_brain_info,
                env_worker.previous_all_action_info,
            )
            worker_steps.append((step.worker_id, new_step))
            env_worker.previous_step = new_step
            if payload.timer_root is not None:
                timer_nodes.append(payload.timer_root)
        if timer_nodes:
            with hierarchical_timer("workers") as main_timer_node:
                for worker_timer_node in timer_nodes:
                    main_timer_node.merge(worker_timer_node, root_name="worker_root", is_parallel=True)
        return self._batcher.collect(worker_steps)

    def _ask_worker_0(self, command_name: str) -> Any:
        self._check_open()
        while True:
            worker = self.env_workers[0]
            if self._send(worker, command_name):
                response = self._recv_from(worker)
                if response is not None:
                    return response.payload
            # Worker 0 was lost and restarted: ask the new one.

    def _recv_from(self, worker: UnityEnvWorker) -> EnvironmentResponse | None:
        """Receive ``worker``'s answer on its pipe, checking that it is alive meanwhile.

        :returns: the answer, or None when the worker was lost and restarted (no answer will come).
        """
        while not worker.poll(LIVENESS_CHECK_INTERVAL):
            if not worker.process.is_alive() and not worker.poll(0):
                self._worker_failed(worker)
                return None
        try:
            return worker.recv()
        except _PipeClosed:
            # The worker exited without answering: after a Ctrl-C it said so on the step queue (a
            # closed pipe can be seen before that message arrives), after a crash nothing is there.
            self._worker_failed(worker)
            return None
        except UnityException as error:  # the error the worker reported on its pipe
            self._lost(worker, error)
            return None

    def _worker_failed(self, worker: UnityEnvWorker) -> None:
        """Handle a worker that stopped: find the best explanation (the error it reported on either
        channel if any, else UnityCommunicationException with its exit code), then restart the
        worker or raise that error."""
        # Its last message may be on the step queue (all of it once the process is gone); the
        # other workers' messages stay for the next collection.
        error: BaseException | None = None
        for attempt in range(2):
            kept: list[EnvironmentResponse] = []
            for response in self._read_step_queue(0.2 if attempt == 0 else 0.0):
                if response.worker_id != worker.worker_id:
                    kept.append(response)
                elif response.name == "env_close":
                    raise _stopped_after_interrupt(worker.worker_id)
                elif response.name == "env_error" and error is None:
                    error = response.payload.to_exception(worker.worker_id)
            self._unhandled_responses = kept + self._unhandled_responses
            if error is not None or not worker.process.is_alive():
                break
            worker.process.join(1.0)
        if error is None:
            error = worker.reported_error()
        if error is None:
            error = UnityCommunicationException(
                f"UnityEnvironment worker {worker.worker_id} stopped unexpectedly. {worker.describe_exit()} "
                "Its environment may have crashed; see the environment's log."
            )
        self._lost(worker, error)

    def _lost(self, worker: UnityEnvWorker, error: BaseException) -> None:
        """Restart ``worker`` after ``error`` if the restart policy allows it, else raise ``error``
        (RestartLimitExceeded past the limits). Returns once a new worker runs in its place, reset
        with the last reset's parameters; a new worker lost in turn is restarted the same way."""
        worker_id = worker.worker_id
        if worker is not self.env_workers[worker_id]:
            return  # a late report about a worker already replaced
        if self._restart_policy is None or self._closed or not is_restartable(error):
            raise error
        number = self._restart_policy.request(worker_id, error)
        self._count_restart(worker.previous_step)
        worker.kill()
        self._drop_queued_responses_of(worker_id)
        self._batcher.forget(worker_id)
        logger.warning(
            "UnityEnvironment worker %d was lost (%s: %s). Restarting it on the same port (restart %d of "
            "this worker, %d in all). The environment's log: %s",
            worker_id,
            type(error).__name__,
            first_line(error),
            number,
            self.restart_count,
            worker.build_log_path or "unknown",
        )
        new = self.create_worker(
            worker_id, self.step_queue, self._pickled_env_factory, self._context, restart=number
        )
        self.env_workers[worker_id] = new
        self._wait_for_workers_ready([worker_id])
        if new is not self.env_workers[worker_id]:
            return  # lost in turn, and replaced by a nested restart (which also reset it)
        if self._last_reset is not None and self._send(new, "reset", self._last_reset):
            response = self._recv_from(new)
            if response is not None:
                new.previous_step = StepInfo(None, response.payload, None)

    def _drop_queued_responses_of(self, worker_id: int) -> None:
        """Drop the step-queue messages of a worker that was ended (all of them are in the queue
        once its process is gone); keep the others' for the next collection."""
        responses = self._read_step_queue(0)
        self._unhandled_responses = [response for response in responses if response.worker_id != worker_id]
        self._step_responses = [
            response for response in self._step_responses if response.worker_id != worker_id
        ]

    def _discard_queued_responses(self) -> None:
        self._unhandled_responses.clear()
        while True:
            try:
                self.step_queue.get_nowait()
            except (queue.Empty, OSError, ValueError, EOFError):
                return
            except Exception:
                continue  # a result that cannot be unpickled is dropped like the others

    def _check_open(self) -> None:
        if self._closed:
            raise UnityCommunicationException("The SubprocessEnvManager is closed.")


def _stopped_after_interrupt(worker_id: int) -> UnityCommunicationException:
    return UnityCommunicationException(
        f"At least one of the environments has closed. (UnityEnvironment worker {worker_id} "
        "stopped after an interrupt.)"
    )
