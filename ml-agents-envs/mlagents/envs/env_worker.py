"""The worker process of :class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager` and
the messages it exchanges with the manager.

Each worker owns one environment, created in the worker by the pickled factory. Commands come on the
worker's own duplex ``Pipe`` (:class:`EnvironmentCommand`) and every answer, ``"step"`` results
included, goes back on that pipe (:class:`EnvironmentResponse`): one write and one wake-up of the
manager per step, with no feeder thread or shared lock in between. The queue shared by all workers
only carries the ``"env_close"`` notice of a worker stopped by Ctrl-C. An exception in the worker
travels as a :class:`WorkerError` and is raised again in the manager with its type.

A step, the hot path, travels as plain data (:mod:`mlagents.envs.pipe_messages`): the command as a
``("step", encoded actions)`` tuple, the answer as ``("step", worker_id, (encoded observations,
encoded timers))``, which the manager turns back into ``EnvironmentResponse("step", worker_id,
StepResponse(...))``.
"""

import logging
import multiprocessing
import pickle
import select
import signal
import socket
import traceback
from multiprocessing.connection import Connection
from typing import Any, NamedTuple

import cloudpickle

from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import AllBrainInfo
from mlagents.envs.env_manager import EnvFactory, advance_environment, create_environment
from mlagents.envs.exception import UnityCommunicationException
from mlagents.envs.pipe_messages import (
    STEP,
    decode_actions,
    decode_all_brain_info,
    decode_timers,
    encode_actions,
    encode_all_brain_info,
    encode_timers,
    send_object,
)
from mlagents.envs.timers import get_timer_root, reset_timers
from mlagents.envs.worker_transport import StepResponse, WorkerCommand

__all__ = [
    "EnvironmentCommand",
    "EnvironmentResponse",
    "LoggingSetup",
    "StepResponse",
    "WorkerError",
    "WorkerReady",
    "worker",
]

logger = logging.getLogger("mlagents.envs")


class EnvironmentCommand(NamedTuple):
    """A command from the manager to a worker, as it travels: ``name`` is the value of a
    :class:`~mlagents.envs.worker_transport.WorkerCommand` (``"step"``, ``"reset"``,
    ``"external_brains"``, ``"reset_parameters"``, ``"global_done"``, ``"close"``)."""

    name: str
    payload: Any = None


class EnvironmentResponse(NamedTuple):
    """A message from worker ``worker_id`` to the manager."""

    name: str
    worker_id: int
    payload: Any


class WorkerReady(NamedTuple):
    """Payload of the ``"ready"`` message a worker sends once its environment runs.

    :ivar build_pid: process id of the environment's build (None: no build process, e.g. the Editor).
    :ivar build_log_path: the build's log file (None when unknown), named when the worker is lost.
    """

    build_pid: int | None
    build_log_path: str | None


def send_command(conn: Connection, name: str, payload: Any = None) -> None:
    """Send the manager's command ``name`` to a worker: a step as a plain tuple with its actions
    encoded (the hot path, see :mod:`~mlagents.envs.pipe_messages`), any other command as an
    :class:`EnvironmentCommand`. Either reads back as ``EnvironmentCommand(*conn.recv())``.

    :raises BrokenPipeError, EOFError, OSError: the connection is gone.
    """
    if name == STEP:
        send_object(conn, (STEP, encode_actions(payload)))
    else:
        send_object(conn, EnvironmentCommand(str(name), payload))


def step_reply(worker_id: int, all_brain_info: AllBrainInfo) -> tuple[Any, ...]:
    """A worker's answer to a step as plain data: its observations and this step's timers (read
    back by :func:`receive_response` as ``EnvironmentResponse(STEP, worker_id, StepResponse)``)."""
    return (STEP, worker_id, (encode_all_brain_info(all_brain_info), encode_timers(get_timer_root())))


def receive_response(conn: Connection) -> EnvironmentResponse:
    """A worker's next message, a step's plain-data answer (:func:`step_reply`) decoded.

    :raises EOFError, OSError: the connection is gone.
    """
    response = conn.recv()
    if type(response) is tuple:
        name, worker_id, (all_brain_info, timers) = response
        return EnvironmentResponse(
            name, worker_id, StepResponse(decode_all_brain_info(all_brain_info), decode_timers(timers))
        )
    return response  # type: ignore[no-any-return]


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


class LoggingSetup(NamedTuple):
    """How the manager's process shows log records, for a worker process to show its own alike.

    A spawned worker starts with logging unconfigured: without this, what its environment logs
    (e.g. "'Basic' started successfully!", "Academy reset with parameters: ...") would be lost
    although the application (``mlagents-learn``) configured logging to show it.
    """

    root_level: int
    logger_levels: dict[str, int]

    @staticmethod
    def of_this_process() -> "LoggingSetup | None":
        """The setup of this process, or None when the application did not configure logging."""
        if not logging.root.handlers:
            return None
        names = ("mlagents.envs", "mlagents.trainers")
        return LoggingSetup(logging.root.level, {name: logging.getLogger(name).level for name in names})

    def apply(self) -> None:
        """Configure this process's logging alike (a process already configured keeps its handlers)."""
        logging.basicConfig(level=self.root_level)
        for name, level in self.logger_levels.items():
            logging.getLogger(name).setLevel(level)


class _InterruptRequest:
    """Ctrl-C (SIGINT) in a worker, recorded and acted on between two commands.

    Raising KeyboardInterrupt from the signal handler, wherever the worker happens to be, is not
    safe: during start-up it escapes the worker with a traceback and exit code -2, while the worker
    reports an error or closes its environment it escapes the clean-up, and inside a ``__del__`` it
    is printed and lost. The handler therefore only records the request and writes a byte into a
    socket pair the worker's wait for its next command also polls, so an idle worker stops at once
    and a busy one after its current command. (The handler writes the byte itself rather than
    through ``signal.set_wakeup_fd``: the interpreter writes every caught signal there, the
    manager's SIGTERM included, and prints a traceback when that write fails.)
    """

    def __init__(self) -> None:
        self.requested = False
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        signal.signal(signal.SIGINT, self._record)
        self._poller: select.poll | None = None
        self._polled_conn: Connection | None = None

    def _record(self, signum: int, frame: Any) -> None:
        self.requested = True
        # Runs between two bytecodes of the main thread; a poll it interrupted is retried after it
        # (PEP 475) and then sees the byte.
        try:
            self._writer.send(b"\0")
        except OSError:  # the buffer is full (a wake-up is pending anyway), or the pair is closed
            pass

    def close(self) -> None:
        """Close the socket pair (a later Ctrl-C only records the request)."""
        self._reader.close()
        self._writer.close()

    def wait_for_command(self, conn: Connection) -> bool:
        """Block until ``conn`` has a message (True) or an interrupt was requested (False)."""
        if self._poller is None or self._polled_conn is not conn:
            # Registered once: a poll object per wait would cost more than the wait itself.
            self._poller = select.poll()
            self._poller.register(conn.fileno(), select.POLLIN)
            self._poller.register(self._reader.fileno(), select.POLLIN)
            self._polled_conn = conn
        reader_fd = self._reader.fileno()
        while not self.requested:
            events = self._poller.poll()
            if any(fd == reader_fd for fd, _ in events):
                try:
                    while self._reader.recv(512):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
            if any(fd != reader_fd for fd, _ in events) and not self.requested:
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
    logging_setup: LoggingSetup | None = None,
    restart: int = 0,
) -> None:
    """Body of worker process ``worker_id``: create the environment, then serve commands until
    ``"close"``. The environment is closed on every way out.

    :param parent_conn: this worker's end of its pipe to the manager.
    :param step_queue: the queue shared by all workers for the ``"env_close"`` notice after Ctrl-C.
    :param pickled_env_factory: ``cloudpickle.dumps`` of a callable ``worker_id -> environment``.
    :param worker_id: this worker's index (the factory uses it for the port: base_port + worker_id).
    :param logging_setup: the manager's logging setup, applied here first (None: leave logging as is).
    :param restart: how often this worker was restarted before (see
        :func:`~mlagents.envs.env_manager.create_environment`).
    """
    if logging_setup is not None:
        logging_setup.apply()
    # terminate() from the manager then still runs the finally block, which ends the build process.
    signal.signal(signal.SIGTERM, _raise_system_exit)
    # The manager starts workers with SIGINT blocked: a Ctrl-C that came during the interpreter's
    # start-up is pending and lands here, in the handler that only records it.
    interrupt = _InterruptRequest()
    _unblock_sigint()
    env: BaseUnityEnvironment | None = None

    def reply(name: str, payload: Any) -> None:
        try:
            parent_conn.send(EnvironmentResponse(name, worker_id, payload))
        except (BrokenPipeError, EOFError, OSError) as error:
            raise _ManagerGone() from error

    def reply_step(all_brain_info: AllBrainInfo) -> None:
        try:
            send_object(parent_conn, step_reply(worker_id, all_brain_info))
        except (BrokenPipeError, EOFError, OSError) as error:
            raise _ManagerGone() from error

    try:
        env_factory: EnvFactory = cloudpickle.loads(pickled_env_factory)
        env = create_environment(env_factory, worker_id, restart)
        if interrupt.requested:
            raise KeyboardInterrupt
        reply("ready", WorkerReady(_build_pid(env), _build_log_path(env)))
        while True:
            if not interrupt.wait_for_command(parent_conn):
                raise KeyboardInterrupt
            try:
                # An EnvironmentCommand, or a plain (name, payload) tuple for a step.
                command = EnvironmentCommand(*parent_conn.recv())
            except (EOFError, OSError) as error:
                raise _ManagerGone() from error
            if command.name == STEP:
                reply_step(advance_environment(env, decode_actions(command.payload)))
                reset_timers()
                continue
            try:
                name = WorkerCommand(command.name)
            except ValueError:
                raise ValueError(
                    f"Unknown command {command.name!r} sent to UnityEnvironment worker {worker_id}"
                ) from None
            if name is WorkerCommand.CLOSE:
                break
            reply(name.value, answer_command(env, name, command.payload))
    except KeyboardInterrupt:
        # Ctrl-C reaches every process of the terminal's process group; the main process handles it.
        logger.info("UnityEnvironment worker %d: environment stopping.", worker_id)
        _put_quietly(step_queue, EnvironmentResponse("env_close", worker_id, None))
    except (SystemExit, _ManagerGone):
        pass  # terminated by the manager, or the manager went away
    except BaseException as exc:
        # On the pipe, where the manager waits for this worker's answer to any command.
        report = EnvironmentResponse("env_error", worker_id, WorkerError.from_exception(exc))
        try:
            parent_conn.send(report)
        except (BrokenPipeError, EOFError, OSError):
            pass
    finally:
        if env is not None:
            try:
                env.close()
            except Exception as exc:  # e.g. already closed by its own error handling
                logger.debug("UnityEnvironment worker %d: close: %s", worker_id, exc)
        step_queue.close()
        interrupt.close()
        # Nothing is left to clean up: from here on the manager's SIGTERM just ends the process.
        # Raising SystemExit could land in the interpreter's exit handlers (e.g. logging's
        # shutdown) and print "Exception ignored in atexit callback" with a traceback; this
        # happens when the manager replaces a worker that reported an error and is exiting.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def answer_command(env: BaseUnityEnvironment, command: WorkerCommand, payload: Any) -> Any:
    """What the environment answers to ``command`` (any command but STEP and CLOSE)."""
    if command is WorkerCommand.RESET:
        config, train_mode, custom_reset_parameters = payload
        return env.reset(config, train_mode, custom_reset_parameters)
    if command is WorkerCommand.EXTERNAL_BRAINS:
        return env.external_brains
    if command is WorkerCommand.RESET_PARAMETERS:
        return env.reset_parameters
    if command is WorkerCommand.GLOBAL_DONE:
        return env.global_done
    raise ValueError(f"{command.value!r} has no answer")


class _ManagerGone(Exception):
    """The worker's pipe to the manager broke: the manager exited or closed."""


def _build_pid(env: Any) -> int | None:
    process = getattr(env, "proc1", None)
    pid = getattr(process, "pid", None)
    return pid if isinstance(pid, int) else None


def _build_log_path(env: Any) -> str | None:
    path = getattr(env, "build_log_path", None)
    return path if isinstance(path, str) else None


def _put_quietly(
    step_queue: "multiprocessing.Queue[EnvironmentResponse]", response: EnvironmentResponse
) -> None:
    try:
        step_queue.put(response)
    except (OSError, ValueError):
        pass
