"""Several environments, each in its own worker process: :class:`SubprocessEnvManager`.

Protocol between the manager (main process) and worker ``w`` (see :func:`worker`):

* commands travel on the worker's own duplex ``Pipe`` as :class:`EnvironmentCommand`;
* ``"step"`` results travel on ONE queue shared by all workers (the step queue), so the manager
  can take whichever environment finishes first (asynchronous stepping, as in ML-Agents 0.9);
* answers to every other command travel back on the worker's pipe;
* a worker whose environment raises sends ``EnvironmentResponse("env_error", w, WorkerError)`` on
  the channel the manager is waiting on, closes its environment and exits; the manager re-raises the
  exception (same type, with the worker's traceback added as a note).

Every wait of the manager has a timeout after which it checks that the workers it waits for are
still alive, so a crashed worker raises :class:`UnityCommunicationException` (naming the worker and
its exit code) instead of hanging.
"""

import logging
import multiprocessing
import os
import pickle
import queue
import signal
import socket
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for_objects
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any, NamedTuple, NoReturn

import cloudpickle

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.env_manager import EnvManager, StepInfo, advance_environment
from mlagents.envs.exception import UnityCommunicationException
from mlagents.envs.policy_batching import get_batched_actions
from mlagents.envs.timers import TimerNode, get_timer_root, hierarchical_timer, reset_timers, timed

logger = logging.getLogger("mlagents.envs")

# How long a wait on a worker lasts before the manager checks that the worker is still alive (seconds).
LIVENESS_CHECK_INTERVAL = 0.5


class EnvironmentCommand(NamedTuple):
    """A command from the manager to a worker (``"step"``, ``"reset"``, ``"external_brains"``,
    ``"reset_parameters"``, ``"global_done"``, ``"close"``)."""

    name: str
    payload: Any = None


class EnvironmentResponse(NamedTuple):
    """A message from worker ``worker_id`` to the manager."""

    name: str
    worker_id: int
    payload: Any


class StepResponse(NamedTuple):
    """Payload of a ``"step"`` response: the new observations and the worker's timers for that step."""

    all_brain_info: AllBrainInfo
    timer_root: TimerNode | None


class WorkerError(NamedTuple):
    """Payload of an ``"env_error"`` response: an exception raised in a worker.

    :ivar pickled_exception: the exception's type, args and attributes, pickled; None when they do
        not survive pickling.
    :ivar exception_type: its qualified type name, e.g. ``"mlagents.envs.exception.UnityActionException"``.
    :ivar message: ``str()`` of the exception.
    :ivar traceback: the formatted traceback in the worker.
    """

    pickled_exception: bytes | None
    exception_type: str
    message: str
    traceback: str

    @staticmethod
    def from_exception(exc: BaseException) -> "WorkerError":
        exc_type = type(exc)
        type_name = f"{exc_type.__module__}.{exc_type.__qualname__}"
        formatted = "".join(traceback.format_exception(exc))
        pickled: bytes | None = None
        try:
            # Type, args and attributes, rebuilt without calling __init__: exceptions whose __init__
            # takes other arguments than their message (e.g. UnityWorkerInUseException) survive too.
            candidate = pickle.dumps((exc_type, exc.args, dict(getattr(exc, "__dict__", {}))))
            copy = _rebuild_exception(candidate)
            if type(copy) is exc_type and str(copy) == str(exc):
                pickled = candidate
        except Exception:
            pass
        return WorkerError(pickled, type_name, str(exc), formatted)

    def to_exception(self, worker_id: int) -> BaseException:
        """The exception to raise in the main process: the original type when possible, else
        UnityCommunicationException; the worker's traceback is attached as a note."""
        note = f"Raised in UnityEnvironment worker {worker_id}. Traceback in the worker process:\n{self.traceback}"
        if self.pickled_exception is not None:
            try:
                exc: BaseException | None = _rebuild_exception(self.pickled_exception)
            except Exception:  # e.g. the type's module cannot be imported here
                exc = None
            if exc is not None:
                exc.add_note(note)
                return exc
        error = UnityCommunicationException(
            f"UnityEnvironment worker {worker_id} failed with {self.exception_type}: {self.message}"
        )
        error.add_note(note)
        return error


def _rebuild_exception(pickled: bytes) -> BaseException:
    exc_type, args, attributes = pickle.loads(pickled)
    if not (isinstance(exc_type, type) and issubclass(exc_type, BaseException)):
        raise TypeError(f"not an exception type: {exc_type!r}")
    exc = exc_type.__new__(exc_type, *args)
    exc.args = args
    exc.__dict__.update(attributes)
    return exc


def _raise_system_exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


class _InterruptRequest:
    """Ctrl-C (SIGINT) in a worker, recorded and acted on between two commands.

    Raising KeyboardInterrupt from the signal handler, wherever the worker happens to be, is not
    safe: during start-up it escapes the worker with a traceback and exit code -2, while the worker
    reports an error or closes its environment it escapes the clean-up, and inside a ``__del__`` it
    is printed and lost. The handler therefore only records the request; the signal also wakes the
    worker's wait for its next command (``signal.set_wakeup_fd``), so an idle worker stops at once
    and a busy one after its current command.
    """

    def __init__(self) -> None:
        self.requested = False
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        signal.set_wakeup_fd(self._writer.fileno())
        signal.signal(signal.SIGINT, self._record)

    def _record(self, signum: int, frame: Any) -> None:
        self.requested = True

    def wait_for_command(self, conn: Connection) -> bool:
        """Block until ``conn`` has a message (True) or an interrupt was requested (False)."""
        while not self.requested:
            ready = wait_for_objects([conn, self._reader])
            if self._reader in ready:
                try:
                    while self._reader.recv(512):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
            if conn in ready and not self.requested:
                return True
        return False


def _unblock_sigint() -> None:
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def worker(
    parent_conn: Connection,
    step_queue: "multiprocessing.Queue[EnvironmentResponse]",
    pickled_env_factory: bytes,
    worker_id: int,
) -> None:
    """Body of worker process ``worker_id``: create the environment, then serve commands until
    ``"close"``. The environment is closed on every way out.

    :param parent_conn: this worker's end of its pipe to the manager.
    :param step_queue: the queue shared by all workers for ``"step"`` results.
    :param pickled_env_factory: ``cloudpickle.dumps`` of a callable ``worker_id -> environment``.
    :param worker_id: this worker's index (the factory uses it for the port: base_port + worker_id).
    """
    # terminate() from the manager then still runs the finally block, which ends the build process.
    signal.signal(signal.SIGTERM, _raise_system_exit)
    # The manager starts workers with SIGINT blocked: a Ctrl-C that came during the interpreter's
    # start-up is pending and lands here, in the handler that only records it.
    interrupt = _InterruptRequest()
    _unblock_sigint()
    env: BaseUnityEnvironment | None = None
    command_name = "start"

    def reply(name: str, payload: Any) -> None:
        try:
            parent_conn.send(EnvironmentResponse(name, worker_id, payload))
        except (BrokenPipeError, EOFError, OSError) as error:
            raise _ManagerGone() from error

    try:
        env_factory: Callable[[int], BaseUnityEnvironment] = cloudpickle.loads(pickled_env_factory)
        env = env_factory(worker_id)
        if interrupt.requested:
            raise KeyboardInterrupt
        reply("ready", _build_pid(env))
        while True:
            if not interrupt.wait_for_command(parent_conn):
                raise KeyboardInterrupt
            try:
                command: EnvironmentCommand = parent_conn.recv()
            except (EOFError, OSError) as error:
                raise _ManagerGone() from error
            command_name = command.name
            if command.name == "step":
                all_brain_info = advance_environment(env, command.payload)
                step_queue.put(
                    EnvironmentResponse("step", worker_id, StepResponse(all_brain_info, get_timer_root()))
                )
                reset_timers()
            elif command.name == "external_brains":
                reply("external_brains", env.external_brains)
            elif command.name == "reset_parameters":
                reply("reset_parameters", env.reset_parameters)
            elif command.name == "reset":
                config, train_mode, custom_reset_parameters = command.payload
                reply("reset", env.reset(config, train_mode, custom_reset_parameters))
            elif command.name == "global_done":
                reply("global_done", env.global_done)
            elif command.name == "close":
                break
            else:
                raise ValueError(
                    f"Unknown command {command.name!r} sent to UnityEnvironment worker {worker_id}"
                )
    except KeyboardInterrupt:
        # Ctrl-C reaches every process of the terminal's process group; the main process handles it.
        logger.info("UnityEnvironment worker %d: environment stopping.", worker_id)
        _put_quietly(step_queue, EnvironmentResponse("env_close", worker_id, None))
    except (SystemExit, _ManagerGone):
        pass  # terminated by the manager, or the manager went away
    except BaseException as exc:
        error = EnvironmentResponse("env_error", worker_id, WorkerError.from_exception(exc))
        if command_name == "step":
            _put_quietly(step_queue, error)
        else:
            try:
                parent_conn.send(error)
            except (BrokenPipeError, EOFError, OSError):
                pass
    finally:
        if env is not None:
            try:
                env.close()
            except Exception as exc:  # e.g. already closed by its own error handling
                logger.debug("UnityEnvironment worker %d: close: %s", worker_id, exc)
        step_queue.close()


class _ManagerGone(Exception):
    """The worker's pipe to the manager broke: the manager exited or closed."""


class _PipeClosed(UnityCommunicationException):
    """The manager's pipe to a worker broke: the worker exited (its reason may be on the step queue)."""


def _build_pid(env: Any) -> int | None:
    process = getattr(env, "proc1", None)
    pid = getattr(process, "pid", None)
    return pid if isinstance(pid, int) else None


def _put_quietly(
    step_queue: "multiprocessing.Queue[EnvironmentResponse]", response: EnvironmentResponse
) -> None:
    try:
        step_queue.put(response)
    except (OSError, ValueError):
        pass


class UnityEnvWorker:
    """The manager's handle on one worker process.

    :ivar process: the worker process.
    :ivar worker_id: its index.
    :ivar conn: the manager's end of the worker's pipe.
    :ivar previous_step: the worker's last transition (its current observations are the next input).
    :ivar previous_all_action_info: the actions of the step in flight (or of the last step).
    :ivar waiting: True while a ``"step"`` is in flight.
    :ivar build_pid: process id of the environment's build (to end it if the worker could not).
    """

    def __init__(self, process: BaseProcess, worker_id: int, conn: Connection) -> None:
        self.process = process
        self.worker_id = worker_id
        self.conn = conn
        self.previous_step: StepInfo = StepInfo(None, {}, None)
        self.previous_all_action_info: dict[str, ActionInfo] = {}
        self.waiting = False
        self.build_pid: int | None = None

    def send(self, name: str, payload: Any = None) -> None:
        """Send a command.

        :raises UnityCommunicationException: the worker is gone.
        """
        try:
            self.conn.send(EnvironmentCommand(name, payload))
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

    def recv(self) -> EnvironmentResponse:
        """Receive one message (blocking; see :meth:`poll`).

        :raises UnityCommunicationException: the worker is gone.
        :raises: the worker's exception, when it reports one.
        """
        try:
            response: EnvironmentResponse = self.conn.recv()
        except (BrokenPipeError, EOFError, OSError) as error:
            raise _PipeClosed("UnityEnvironment worker: recv failed. " + self.describe_exit()) from error
        if response.name == "env_error":
            raise response.payload.to_exception(self.worker_id)
        return response

    def reported_error(self) -> BaseException | None:
        """The error the worker sent on its pipe before it stopped, if it sent one (does not block)."""
        try:
            while self.conn.poll(0):
                response: EnvironmentResponse = self.conn.recv()
                if response.name == "env_error":
                    return response.payload.to_exception(self.worker_id)
        except (BrokenPipeError, EOFError, OSError):
            pass
        return None

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
    (their BrainInfos are concatenated), and the result is split back per worker by agent count (see
    :mod:`mlagents.envs.policy_batching`).

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

    After an exception from any method, call :meth:`close`; the manager cannot be used further.

    :param env_factory: callable ``worker_id -> environment``, called in each worker.
    :param n_env: number of workers (environments).
    :param start_method: ``multiprocessing`` start method (``"spawn"``, ``"fork"``, ``"forkserver"``),
        or None for the platform's default.
    :raises ValueError: ``n_env`` < 1.
    :raises: any error of an environment's creation (e.g. UnityTimeOutException,
        UnityWorkerInUseException), after every worker was ended.
    """

    def __init__(
        self,
        env_factory: Callable[[int], BaseUnityEnvironment],
        n_env: int = 1,
        *,
        start_method: str | None = "spawn",
    ) -> None:
        super().__init__()
        if n_env < 1:
            raise ValueError(f"n_env must be at least 1, got {n_env}")
        self._closed = False
        self._step_responses: list[EnvironmentResponse] = []
        self.env_workers: list[UnityEnvWorker] = []
        context = multiprocessing.get_context(start_method)
        self.step_queue: multiprocessing.Queue[EnvironmentResponse] = context.Queue()
        pickled_env_factory = cloudpickle.dumps(env_factory)
        try:
            # All workers start before any is waited for: their builds launch in parallel.
            for worker_id in range(n_env):
                self.env_workers.append(
                    self.create_worker(worker_id, self.step_queue, pickled_env_factory, context)
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
        context: BaseContext | None = None,
    ) -> UnityEnvWorker:
        """Start the process of worker ``worker_id`` (does not wait for its environment)."""
        context = context or multiprocessing.get_context()
        parent_conn, child_conn = context.Pipe()
        process = context.Process(
            target=worker,
            args=(child_conn, step_queue, pickled_env_factory, worker_id),
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

    def _wait_for_workers_ready(self) -> None:
        pending = {worker.conn: worker for worker in self.env_workers}
        by_sentinel = {worker.process.sentinel: worker for worker in self.env_workers}
        while pending:
            waitables: list[Any] = list(pending)
            waitables += [worker.process.sentinel for worker in pending.values()]
            for ready in wait_for_objects(waitables, timeout=LIVENESS_CHECK_INTERVAL):
                if isinstance(ready, Connection) and ready in pending:
                    worker = pending.pop(ready)
                    worker.build_pid = self._recv_from(worker).payload
                elif ready in by_sentinel:
                    worker = by_sentinel[ready]
                    if worker.conn in pending and not worker.poll(0):
                        self._worker_failed(worker)

    def step(self) -> list[StepInfo]:
        """Send actions to every idle worker, then wait until at least one worker has a result.

        :returns: one StepInfo per worker that finished (1..n_env), in the order they finished.
        :raises UnityCommunicationException: a worker died or stopped (Ctrl-C).
        :raises: an exception raised by a policy, or by an environment in a worker (re-raised with
            its type and the worker's traceback as a note).
        """
        self._check_open()
        self._queue_steps()
        worker_steps = self._wait_for_step_responses()
        return self._postprocess_steps(worker_steps)

    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters: Any = None,
    ) -> list[StepInfo]:
        """Reset every environment (in parallel) after the steps in flight have finished (their
        results are dropped).

        :returns: ``StepInfo(None, first observations, None)`` per worker, in worker order.
        """
        self._check_open()
        while any(worker.waiting for worker in self.env_workers):
            self._wait_for_step_responses()
        self._step_responses.clear()
        for worker in self.env_workers:
            worker.send("reset", (config, train_mode, custom_reset_parameters))
        for worker in self.env_workers:
            response = self._recv_from(worker)
            worker.previous_step = StepInfo(None, response.payload, None)
        return [worker.previous_step for worker in self.env_workers]

    @property
    def external_brains(self) -> dict[str, BrainParameters]:
        """The controlled brains (asked to worker 0; all workers run the same environment)."""
        return self._ask_worker_0("external_brains")

    @property
    def reset_parameters(self) -> dict[str, float]:
        """The reset parameters of worker 0's environment."""
        return self._ask_worker_0("reset_parameters")

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
            # A worker cannot exit while its last result is stuck in a full queue pipe: keep reading.
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
    def _take_step(self, last_steps: list[StepInfo]) -> list[dict[str, ActionInfo]]:
        return get_batched_actions(self.policies, [step.current_all_brain_info for step in last_steps])

    def _queue_steps(self) -> None:
        idle_workers = [worker for worker in self.env_workers if not worker.waiting]
        if not idle_workers:
            return
        all_action_infos = self._take_step([worker.previous_step for worker in idle_workers])
        for worker, all_action_info in zip(idle_workers, all_action_infos):
            worker.previous_all_action_info = all_action_info
            # The environment needs no policy outputs (log-probabilities, value heads...): not pickling
            # them saves time on every step.
            to_send = {
                name: ActionInfo(info.action, info.memory, info.text, info.value, None)
                for name, info in all_action_info.items()
            }
            try:
                worker.send("step", to_send)
            except UnityCommunicationException:
                self._worker_failed(worker)
            worker.waiting = True

    def _wait_for_step_responses(self) -> list[EnvironmentResponse]:
        """Block until at least one step result is there, then take every result available."""
        while True:
            self._collect_step_responses(0 if self._step_responses else LIVENESS_CHECK_INTERVAL)
            # Checked on every call, not only on timeouts: fast workers must not hide a dead one.
            for worker in self.env_workers:
                if worker.waiting and not worker.process.is_alive():
                    self._worker_failed(worker)
            if self._step_responses:
                break
        responses, self._step_responses = self._step_responses, []
        return responses

    def _collect_step_responses(self, timeout: float) -> None:
        """Move the step queue's messages into ``_step_responses`` (waiting up to ``timeout`` for
        the first); raise a worker's error or stop."""
        try:
            response = self.step_queue.get(timeout=timeout) if timeout > 0 else self.step_queue.get_nowait()
        except queue.Empty:
            return
        while True:
            self._accept_step_response(response)
            try:
                response = self.step_queue.get_nowait()
            except queue.Empty:
                return

    def _accept_step_response(self, response: EnvironmentResponse) -> None:
        if response.name == "env_error":
            raise response.payload.to_exception(response.worker_id)
        if response.name == "env_close":
            raise UnityCommunicationException(
                f"At least one of the environments has closed. (UnityEnvironment worker {response.worker_id} "
                "stopped after an interrupt.)"
            )
        worker = self.env_workers[response.worker_id]
        if worker.waiting:
            worker.waiting = False
            self._step_responses.append(response)

    def _postprocess_steps(self, env_steps: list[EnvironmentResponse]) -> list[StepInfo]:
        step_infos: list[StepInfo] = []
        timer_nodes: list[TimerNode] = []
        for step in env_steps:
            payload: StepResponse = step.payload
            env_worker = self.env_workers[step.worker_id]
            new_step = StepInfo(
                env_worker.previous_step.current_all_brain_info,
                payload.all_brain_info,
                env_worker.previous_all_action_info,
            )
            step_infos.append(new_step)
            env_worker.previous_step = new_step
            if payload.timer_root is not None:
                timer_nodes.append(payload.timer_root)
        if timer_nodes:
            with hierarchical_timer("workers") as main_timer_node:
                for worker_timer_node in timer_nodes:
                    main_timer_node.merge(worker_timer_node, root_name="worker_root", is_parallel=True)
        return step_infos

    def _ask_worker_0(self, command_name: str) -> Any:
        self._check_open()
        worker = self.env_workers[0]
        worker.send(command_name)
        return self._recv_from(worker).payload

    def _recv_from(self, worker: UnityEnvWorker) -> EnvironmentResponse:
        """Receive ``worker``'s answer on its pipe, checking that it is alive meanwhile."""
        while not worker.poll(LIVENESS_CHECK_INTERVAL):
            if not worker.process.is_alive() and not worker.poll(0):
                self._worker_failed(worker)
        try:
            return worker.recv()
        except _PipeClosed:
            # The worker exited without answering: after a Ctrl-C it said so on the step queue (a
            # closed pipe can be seen before that message arrives), after a crash nothing is there.
            self._worker_failed(worker)

    def _worker_failed(self, worker: UnityEnvWorker) -> NoReturn:
        """Raise the best explanation for a worker that stopped: the error it reported on either
        channel if any, else UnityCommunicationException with its exit code."""
        self._collect_step_responses(0.2)
        reported = worker.reported_error()
        if reported is not None:
            raise reported
        raise UnityCommunicationException(
            f"UnityEnvironment worker {worker.worker_id} stopped unexpectedly. {worker.describe_exit()} "
            "Its environment may have crashed; see the environment's log."
        )

    def _discard_queued_responses(self) -> None:
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
