"""Several environments, each in its own worker process: :class:`SubprocessEnvManager`.

The manager is the asynchronous core (:class:`~mlagents.envs.async_env_manager.AsyncEnvManager`)
over :class:`ProcessTransport`. Between the manager (main process) and worker ``w`` (the process
body is :func:`mlagents.envs.env_worker.worker`):

* commands travel on the worker's own duplex ``Pipe`` as :class:`EnvironmentCommand`;
* every answer travels back on the same pipe, ``"step"`` results included: the manager waits on the
  pipes of all workers in flight at once and takes whichever environment finishes first
  (asynchronous stepping, as in ML-Agents 0.9), with one write and one wake-up per step;
* a worker whose environment raises sends ``EnvironmentResponse("env_error", w, WorkerError)`` on
  its pipe, closes its environment and exits; the manager raises the exception again (same type,
  with the worker's traceback added as a note) or, with a restart policy, restarts the worker;
* a worker stopped by Ctrl-C says so (``"env_close"``) on one queue shared by all workers (the step
  queue, named after its role in ML-Agents 0.9), which the manager reads when a worker stops.

Every wait polls the pipes and the process sentinels of the workers waited for, with a timeout, so
a crashed worker raises :class:`UnityCommunicationException` (naming the worker and its exit code)
or is restarted, instead of being waited for forever.
"""

import logging
import multiprocessing
import os
import queue
import select
import signal
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for_objects
from multiprocessing.context import DefaultContext, ForkContext, ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from typing import Any

import cloudpickle

from mlagents.envs import env_worker as worker_process
from mlagents.envs.async_env_manager import AsyncEnvManager
from mlagents.envs.env_manager import EnvFactory

# The worker side lives in env_worker; its names stay importable from here, as in ML-Agents 0.9.
from mlagents.envs.env_worker import (
    EnvironmentCommand,
    EnvironmentResponse,
    LoggingSetup,
    StepResponse,
    WorkerError,
    WorkerReady,
    receive_response,
    send_command,
)
from mlagents.envs.exception import UnityCommunicationException
from mlagents.envs.restart_policy import RestartPolicy
from mlagents.envs.worker_transport import Lost, WorkerCommand, WorkerHandle, WorkerTransport

__all__ = [
    "EnvironmentCommand",
    "EnvironmentResponse",
    "ProcessTransport",
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


class _PipeClosed(UnityCommunicationException):
    """The manager's pipe to a worker broke: the worker exited (its reason may be on the step queue)."""


class UnityEnvWorker(WorkerHandle):
    """The manager's handle on one worker process (the core's state is in :class:`WorkerHandle`).

    :ivar process: the worker process.
    :ivar conn: the manager's end of the worker's pipe.
    :ivar conn_fd: the descriptor of ``conn``; :ivar sentinel: ``process.sentinel`` (both read once).
    :ivar send_failure: why the last send failed (the worker is then reported lost by the next
        poll), else None.
    """

    def __init__(self, process: BaseProcess, worker_id: int, conn: Connection) -> None:
        super().__init__(worker_id)
        self.process = process
        self.conn = conn
        # Read once: the properties check the objects are open on every access (hot path of a wait).
        self.conn_fd = conn.fileno()
        self.sentinel = process.sentinel
        self.send_failure: UnityCommunicationException | None = None

    def send(self, name: str, payload: Any = None) -> None:
        """Send a command.

        :raises UnityCommunicationException: the worker is gone.
        """
        try:
            send_command(self.conn, name, payload)
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
            return receive_response(self.conn)
        except (BrokenPipeError, EOFError, OSError) as error:
            raise _PipeClosed("UnityEnvironment worker: recv failed. " + self.describe_exit()) from error

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
            self.conn.send(EnvironmentCommand(WorkerCommand.CLOSE.value))
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


def start_worker_process(
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
    # The worker inherits a blocked SIGINT until its handler is in place (see worker()): a Ctrl-C
    # during its start-up then neither kills it with a traceback nor skips its clean-up.
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


class ProcessTransport(WorkerTransport[UnityEnvWorker]):
    """Workers as local processes: a pipe each, and the step queue for their Ctrl-C notices.

    :param env_factory: callable ``worker_id -> environment``, sent to the workers with cloudpickle.
    :param context: how the worker processes are started.
    """

    def __init__(self, env_factory: EnvFactory, context: ProcessContext) -> None:
        self.context = context
        self.step_queue: multiprocessing.Queue[EnvironmentResponse] = context.Queue()
        self._pickled_env_factory = cloudpickle.dumps(env_factory)
        # Notices read from the step queue and not handled yet (another worker's, read while one
        # stopped): handled when their worker is polled.
        self._notices: list[EnvironmentResponse] = []

    def start_worker(self, worker_id: int, restart: int) -> UnityEnvWorker:
        return start_worker_process(
            worker_id, self.step_queue, self._pickled_env_factory, self.context, restart
        )

    def send(self, worker: UnityEnvWorker, command: WorkerCommand, payload: Any = None) -> None:
        try:
            # Only what the environment needs travels (no policy outputs), see UnityEnvWorker.send.
            worker.send(command, payload)
        except UnityCommunicationException as error:
            worker.send_failure = error

    def poll(self, workers: Sequence[UnityEnvWorker], timeout: float) -> list[tuple[UnityEnvWorker, Any]]:
        """One wait covers the pipes and the process sentinels of every worker given, so a dead
        worker is noticed on every call, also while others keep answering.

        :raises UnityCommunicationException: a worker stopped after Ctrl-C.
        """
        for notice in self._notices:
            if notice.name == "env_close":
                raise _stopped_after_interrupt(notice.worker_id)
        outcomes: list[tuple[UnityEnvWorker, Any]] = []
        # A poll object built per call: several times cheaper than connection.wait() (which builds a
        # selector), and this runs once per pass with up to two descriptors per worker.
        poller = select.poll()
        for worker in workers:
            if worker.send_failure is not None:
                outcomes.append((worker, Lost(self._explain_loss(worker))))
                continue
            poller.register(worker.conn_fd, select.POLLIN)
            poller.register(worker.sentinel, select.POLLIN)
        ready = {fd for fd, _ in poller.poll(0 if outcomes else int(timeout * 1000))}
        if not ready:
            return outcomes
        for worker in workers:
            exited = worker.sentinel in ready
            if worker.conn_fd in ready or exited and worker.poll(0):
                try:
                    response = worker.recv_response()
                except _PipeClosed:
                    outcomes.append((worker, Lost(self._explain_loss(worker))))
                    continue
                if response.name == "env_error":
                    outcomes.append((worker, Lost(response.payload.to_exception(worker.worker_id))))
                else:
                    if response.name == "ready":
                        ready_payload: WorkerReady = response.payload
                        worker.build_pid, worker.build_log_path = ready_payload
                    outcomes.append((worker, response.payload))
            elif exited:
                outcomes.append((worker, Lost(self._explain_loss(worker))))
        return outcomes

    def end_workers(self, workers: Sequence[UnityEnvWorker], timeout: float) -> None:
        for env_worker in workers:
            env_worker.request_close()
        deadline = time.monotonic() + timeout
        running = [env_worker for env_worker in workers if env_worker.process.is_alive()]
        while running and time.monotonic() < deadline:
            # A worker cannot read "close" while its last result is stuck in a full pipe: keep reading.
            for env_worker in running:
                env_worker.discard_messages()
            self._notices = self._read_step_queue(0)
            wait_for_objects([env_worker.sentinel for env_worker in running], timeout=0.1)
            running = [env_worker for env_worker in running if env_worker.process.is_alive()]
        # All at once: ending them one by one would add each one's SIGTERM grace to the wait.
        _end_worker_processes(workers)
        for env_worker in workers:
            env_worker.kill()  # now only ends a build a killed worker left, and closes the pipe
        # Their notices are all in the queue once their processes are gone; other workers' stay.
        ended = {env_worker.worker_id for env_worker in workers}
        self._notices = [notice for notice in self._read_step_queue(0) if notice.worker_id not in ended]

    def close(self) -> None:
        self._notices.clear()
        while True:
            try:
                self.step_queue.get_nowait()
            except (queue.Empty, OSError, ValueError, EOFError):
                break
            except Exception:
                continue  # a notice that cannot be unpickled is dropped like the others
        self.step_queue.close()
        self.step_queue.join_thread()

    def _explain_loss(self, worker: UnityEnvWorker) -> BaseException:
        """Why ``worker`` stopped: the error it reported on either channel, else
        UnityCommunicationException with its exit code.

        :raises UnityCommunicationException: it stopped after Ctrl-C (not a loss: the run ends).
        """
        # Its last notice may be on the step queue (all of it once the process is gone).
        error: BaseException | None = None
        for attempt in range(2):
            kept: list[EnvironmentResponse] = []
            for notice in self._read_step_queue(0.2 if attempt == 0 else 0.0):
                if notice.worker_id != worker.worker_id:
                    kept.append(notice)
                elif notice.name == "env_close":
                    raise _stopped_after_interrupt(worker.worker_id)
                elif notice.name == "env_error" and error is None:
                    error = notice.payload.to_exception(worker.worker_id)
            self._notices = kept
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
        return error

    def _read_step_queue(self, timeout: float) -> list[EnvironmentResponse]:
        """The step queue's notices (waiting up to ``timeout`` for the first), after those read
        earlier and not handled yet."""
        notices, self._notices = self._notices, []
        if notices:
            timeout = 0
        try:
            notice = self.step_queue.get(timeout=timeout) if timeout > 0 else self.step_queue.get_nowait()
        except queue.Empty:
            return notices
        while True:
            notices.append(notice)
            try:
                notice = self.step_queue.get_nowait()
            except queue.Empty:
                return notices


def _end_worker_processes(workers: Sequence[UnityEnvWorker], grace: float = 3.0) -> None:
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


def _stopped_after_interrupt(worker_id: int) -> UnityCommunicationException:
    return UnityCommunicationException(
        f"At least one of the environments has closed. (UnityEnvironment worker {worker_id} "
        "stopped after an interrupt.)"
    )


class SubprocessEnvManager(AsyncEnvManager[UnityEnvWorker]):
    """Runs ``n_env`` environments, each in its own worker process, and steps them asynchronously.

    :meth:`step` sends actions to every worker that is idle, then returns as soon as at least one of
    them has finished; workers still busy are collected by a later call. Actions are decided in
    batches: for every brain, the policy is asked ONCE for the agents of all idle workers together
    (their BrainInfos are joined), and the result is split back per worker by agent count.
    :meth:`step_batches` hands those joined BrainInfos and unsplit results to the trainers, with the
    workers' new BrainInfos joined once (they are also the next decision's input); see
    :mod:`mlagents.envs.step_batching`. Restarts and synchronous stepping are those of
    :class:`~mlagents.envs.async_env_manager.AsyncEnvManager`.

    Example (the manager is then used as shown for
    :class:`~mlagents.envs.async_env_manager.AsyncEnvManager`)::

        factory = partial(UnityEnvironment, "example-envs/builds/Basic.x86_64", base_port=5005)
        manager = SubprocessEnvManager(factory, n_env=4)  # workers 0..3 on ports 5005..5008

    Workers are started with the ``spawn`` method by default (a fresh interpreter: safe with the
    threads of TensorFlow and gRPC in the main process); like any ``multiprocessing`` program, a
    script that creates the manager must then guard its entry point with
    ``if __name__ == "__main__":``. The factory is sent with cloudpickle: lambdas and closures travel
    by value, module-level functions and classes by reference (their module must be importable).

    :param env_factory: callable ``worker_id -> environment``, called in each worker.
    :param n_env: number of workers (environments).
    :param start_method: ``multiprocessing`` start method (``"spawn"``, ``"fork"``, ``"forkserver"``),
        or None for the platform's default.
    :param restart_policy: decides whether a lost worker is restarted (None: never).
    :param synchronous: step every worker in each call and wait for all of them; False (the
        default, as in ML-Agents 0.9): return as soon as one has finished.
    :param while_starting: called once every worker was started, before they are waited for (see
        :class:`~mlagents.envs.async_env_manager.AsyncEnvManager`).
    :raises ValueError: ``n_env`` < 1, or an unknown start method.
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
        while_starting: Callable[[], None] | None = None,
    ) -> None:
        self._processes = ProcessTransport(env_factory, process_context(start_method))
        super().__init__(
            self._processes,
            n_env,
            restart_policy=restart_policy,
            synchronous=synchronous,
            while_starting=while_starting,
        )

    @property
    def step_queue(self) -> "multiprocessing.Queue[EnvironmentResponse]":
        """The queue on which the workers report that they stopped after Ctrl-C."""
        return self._processes.step_queue

    #: ``create_worker(worker_id, step_queue, pickled_env_factory, context=None, restart=0)``:
    #: start a worker process without waiting for it (see :func:`start_worker_process`).
    create_worker = staticmethod(start_worker_process)
