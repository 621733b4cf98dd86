"""Environment workers as Ray actors, on one machine or a Ray cluster: :class:`RayEnvManager`.

The manager is the asynchronous core (:class:`~mlagents.envs.async_env_manager.AsyncEnvManager`,
shared with :class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager`) over
:class:`RayTransport`, with Ray actors (:class:`~mlagents.envs.ray_env_worker.EnvActor`) in place of
worker processes. Ray does what it is good at: placing the actors on the nodes (one CPU per actor,
spread over the nodes), starting them with the pickled environment factory, reporting an actor or
node that died, and ending them. The steps do not go through Ray:

* each actor runs one normal ``UnityEnvironment`` next to its build, on the node Ray placed it on;
  the build's path must exist on that node;
* once its environment runs, the actor listens on a TCP port (loopback when it shares the
  manager's node, its node's address otherwise) with a random key; the manager connects to it
  (both prove they hold the key), and every command and answer then travels on that direct
  connection with the plain-data messages of the subprocess manager's pipes
  (:mod:`mlagents.envs.pipe_messages`): one write and one wake-up each way per step, as with a pipe;
* the manager waits on the connections of all workers in flight with one ``poll`` (with a timeout),
  as the subprocess manager waits on its pipes; a connection that ends or fails means the worker
  is lost, and Ray says why (the actor or its node died). The actor's ``serve`` call lasts as long
  as its connection: every :data:`~mlagents.envs.async_env_manager.LIVENESS_CHECK_INTERVAL` the
  manager checks those calls, so a node that vanished without closing its connections is noticed;
* a worker that cannot be reached that way (e.g. a firewall between the nodes) falls back to Ray
  method calls, with one warning: observations then come back through Ray's object store as numpy
  arrays (:class:`~mlagents.envs.ray_env_worker.PackedBrainInfo`);
* :meth:`RayEnvManager.close` (also after an error or Ctrl-C) closes every environment, ends the
  builds that did not end with it, ends the actors, and disconnects from Ray (stopping the local
  Ray instance if the manager started it).

Ray is an optional dependency (``pip install mlagents_envs[ray]``); without it the manager raises
one clear :class:`~mlagents.envs.exception.UnityEnvironmentException`.
"""

import logging
import math
import os
import select
import time
from collections.abc import Callable, Sequence
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection
from types import ModuleType
from typing import Any

import cloudpickle

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.async_env_manager import LIVENESS_CHECK_INTERVAL, AsyncEnvManager
from mlagents.envs.env_manager import EnvFactory
from mlagents.envs.env_worker import (
    LoggingSetup,
    WorkerError,
    receive_response,
    send_command,
)
from mlagents.envs.exception import UnityCommunicationException, UnityEnvironmentException
from mlagents.envs.ray_env_worker import (
    CHANNEL_GROUP,
    ActorStarted,
    ChannelAddress,
    EnvActor,
    connect_channel,
    kill_process_group,
    unpack_all_brain_info,
)
from mlagents.envs.restart_policy import RestartPolicy
from mlagents.envs.worker_transport import Lost, StepResponse, WorkerCommand, WorkerHandle, WorkerTransport

__all__ = ["RayEnvManager", "RayTransport", "RayWorker", "import_ray", "ray_is_installed"]

logger = logging.getLogger("mlagents.envs")

RAY_MISSING = (
    "The Ray environment manager needs the optional package ray: install it with "
    "pip install 'mlagents_envs[ray]' (or use --env-manager=subprocess)."
)

# Seconds the workers get to start their environments once Ray placed them (builds included).
DEFAULT_START_TIMEOUT = 300.0
#: Seconds the manager gives an actor's direct connection to open before it calls the actor's
#: methods instead (the TCP connection, then the actor's challenge).
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds an actor waits for the manager to connect (the manager connects as soon as it knows the
#: actor's address; a manager that could not connect never does).
ACCEPT_TIMEOUT = 60.0
#: Seconds Ray gets to report why a direct connection ended (an actor's death reaches it quickly).
LOSS_REPORT_TIMEOUT = 5.0
#: Seconds of one wait on the connections while Ray calls are in flight as well (during a start).
MIXED_WAIT_SLICE = 0.005
#: Seconds of one wait on the actors while they close (the connections are drained in between).
CLOSE_WAIT_SLICE = 0.1


def ray_is_installed() -> bool:
    """True when the package ``ray`` can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def import_ray() -> ModuleType:
    """The ``ray`` module.

    :raises UnityEnvironmentException: ray is not installed (one line saying how to install it).
    """
    try:
        import ray
    except ImportError as error:
        raise UnityEnvironmentException(RAY_MISSING) from error
    return ray


def connect_to_ray(ray: ModuleType, address: str | None, n_env: int, cpus_per_worker: float) -> None:
    """Join the Ray cluster at ``address``, or start a private local Ray instance without one.

    The local instance is quiet (warnings only, no dashboard) and has as many CPUs as the machine,
    or as the workers need if that is more: like the subprocess manager, one machine runs as many
    builds as it is asked to.
    """
    quiet = {"logging_level": logging.WARNING, "log_to_driver": True}
    if address is not None:
        logger.info("Connecting to the Ray cluster at %s.", address)
        ray.init(address=address, **quiet)
        return
    num_cpus = max(os.cpu_count() or 1, math.ceil(n_env * cpus_per_worker))
    # Ray warns about its own defaults (e.g. its authentication token) while it starts.
    ray_logger = logging.getLogger("ray")
    saved_level = ray_logger.level
    ray_logger.setLevel(logging.ERROR)
    try:
        ray.init(num_cpus=num_cpus, include_dashboard=False, **quiet)
    finally:
        ray_logger.setLevel(saved_level)
    logger.info("Started a local Ray instance with %d CPUs.", num_cpus)


class RayWorker(WorkerHandle):
    """The manager's handle on one actor (the core's state is in :class:`WorkerHandle`).

    :ivar actor: the Ray actor.
    :ivar started: where the actor and its build run, once its environment started.
    :ivar created_at: ``time.monotonic()`` when the actor was created (its start has a time limit).
    :ivar call: the Ray call in flight (None: the start) and the reference to its result, None while
        nothing is in flight as a Ray call.
    :ivar conn: the direct connection to the actor once open (then every command travels on it),
        None before or when it could not be opened; :ivar conn_fd: its descriptor (read once).
    :ivar serve_ref: the result of the actor's ``serve`` call, which ends with the connection or
        with the actor's death.
    :ivar send_failure: why the last command could not be sent (reported by the next poll), else None.
    """

    def __init__(self, worker_id: int, actor: Any) -> None:
        super().__init__(worker_id)
        self.actor = actor
        self.started: ActorStarted | None = None
        self.created_at = time.monotonic()
        self.call: tuple[WorkerCommand | None, Any] | None = None
        self.conn: Connection | None = None
        self.conn_fd = -1
        self.serve_ref: Any = None
        self.send_failure: BaseException | None = None

    def describe(self) -> str:
        """``"Ray worker 2 (node 3f2a..., build pid 1234, log /tmp/...)"``."""
        if self.started is None:
            return f"Ray worker {self.worker_id} (not started)"
        return (
            f"Ray worker {self.worker_id} (node {self.started.node_id[:12]}, build pid "
            f"{self.started.build_pid}, log {self.started.build_log_path})"
        )

    def discard_messages(self) -> None:
        """Read and drop every message waiting on the direct connection (does not block)."""
        try:
            while self.conn is not None and self.conn.poll(0):
                self.conn.recv()
        except Exception:
            pass  # the connection ended, or a message cannot be unpickled: nothing more to read

    def close_connection(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class RayTransport(WorkerTransport[RayWorker]):
    """Workers as Ray actors, reached on direct connections (method calls when those fail).

    :param env_factory: callable ``worker_id -> environment``, sent to the actors with cloudpickle.
    :param address: the Ray cluster to join; None starts a local Ray instance (unless Ray is
        already initialised in this process: that connection is used and left open).
    :param cpus_per_worker: CPUs Ray reserves for each actor.
    :param start_timeout: seconds an actor gets to start its environment (Ray placing it included).
    :param connect_timeout: seconds the manager gives an actor's direct connection to open
        (connecting, then the actor's challenge) before it falls back to method calls.
    :raises UnityEnvironmentException: ray is not installed.
    """

    def __init__(
        self,
        env_factory: EnvFactory,
        address: str | None,
        cpus_per_worker: float,
        start_timeout: float,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.ray = import_ray()
        self._pickled_env_factory = cloudpickle.dumps(env_factory)
        self._address = address
        self._cpus_per_worker = cpus_per_worker
        self._start_timeout = start_timeout
        self._connect_timeout = connect_timeout
        self._owns_connection = False
        self._actor_class: Any = None
        self._manager_node_id: str | None = None
        self._warned_fallback = False
        self._next_liveness_check = 0.0

    def open(self, n_env: int) -> None:
        """Connect to Ray and check the cluster has CPUs for ``n_env`` actors.

        :raises UnityEnvironmentException: the cluster has too few CPUs.
        """
        ray = self.ray
        if not ray.is_initialized():
            connect_to_ray(ray, self._address, n_env, self._cpus_per_worker)
            self._owns_connection = True
        cpus = float(ray.cluster_resources().get("CPU", 0.0))
        needed = n_env * self._cpus_per_worker
        if needed > cpus:
            raise UnityEnvironmentException(
                f"The Ray cluster has {cpus:g} CPUs but {n_env} environment workers need {needed:g} "
                f"({self._cpus_per_worker:g} each): add nodes to the cluster or lower --num-envs."
            )
        try:
            self._manager_node_id = ray.get_runtime_context().get_node_id()
        except Exception:  # e.g. a Ray Client connection: no node here, the actors bind their node's address
            self._manager_node_id = None
        self._actor_class = ray.remote(concurrency_groups={CHANNEL_GROUP: 1})(EnvActor)

    def start_worker(self, worker_id: int, restart: int) -> RayWorker:
        actor = self._actor_class.options(
            num_cpus=self._cpus_per_worker, scheduling_strategy="SPREAD", name=None, max_restarts=0
        ).remote(worker_id, LoggingSetup.of_this_process())
        worker = RayWorker(worker_id, actor)
        worker.call = (None, actor.start.remote(self._pickled_env_factory, restart, self._manager_node_id))
        return worker

    def send(self, worker: RayWorker, command: WorkerCommand, payload: Any = None) -> None:
        if worker.conn is not None:
            self._send_on_connection(worker, command, payload)
        else:
            self._call(worker, command, payload)

    def poll(self, workers: Sequence[RayWorker], timeout: float) -> list[tuple[RayWorker, Any]]:
        """Waits on the direct connections of the workers in flight (and on their ``serve`` calls
        every liveness interval) and on the Ray calls in flight (starts, fallback workers).

        :raises UnityEnvironmentException: an actor did not start within the start timeout.
        """
        outcomes: list[tuple[RayWorker, Any]] = []
        calls: dict[Any, RayWorker] = {}
        connected: dict[int, RayWorker] = {}
        for worker in workers:
            if worker.send_failure is not None:
                outcomes.append((worker, Lost(self._explain_send_failure(worker))))
            elif worker.call is not None:
                calls[worker.call[1]] = worker
            elif worker.conn is not None:
                connected[worker.conn_fd] = worker
        self._check_start_times(workers)
        if outcomes:
            timeout = 0.0
        elif calls and connected:  # both kinds are waited for in turn: in short slices
            timeout = min(timeout, MIXED_WAIT_SLICE)
        if connected:
            outcomes += self._poll_connections(connected, timeout)
            outcomes += self._check_connections_alive(connected, outcomes)
        if calls:
            outcomes += self._poll_calls(calls, 0.0 if connected or outcomes else timeout)
        return outcomes

    def end_workers(self, workers: Sequence[RayWorker], timeout: float) -> None:
        """Close the environments of ``workers`` (in parallel), kill the builds left, end the actors."""
        closing: dict[Any, RayWorker] = {}
        for worker in workers:
            worker.call = None
            ref = self._request_close(worker)
            if ref is not None:
                closing[ref] = worker
        connected = [worker for worker in workers if worker.conn is not None]
        closed = self._wait_closed(closing, connected, timeout)
        for worker in workers:
            worker.close_connection()
        # Every step is tried even when Ray itself fails (e.g. the cluster went away meanwhile).
        try:
            self._kill_builds([worker for worker in workers if worker.worker_id not in closed])
        except Exception as error:
            logger.debug("Killing the builds of the Ray workers: %s", error)
        for worker in workers:
            try:
                self.ray.kill(worker.actor, no_restart=True)
            except Exception as error:
                logger.debug("Ray worker %d: kill: %s", worker.worker_id, error)

    def close(self) -> None:
        if self._owns_connection:
            self.ray.shutdown()

    # ------------------------------------------------------------------------------- direct connections

    def _open_connection(self, worker: RayWorker, channel: ChannelAddress) -> None:
        """Connect to the actor's listener (its ``serve`` call accepts); on failure the worker's
        commands go through Ray method calls (logged once per manager, as a warning)."""
        serve_ref = worker.actor.serve.options(concurrency_group=CHANNEL_GROUP).remote(ACCEPT_TIMEOUT)
        try:
            conn = connect_channel(channel, self._connect_timeout)
        except (OSError, EOFError, AuthenticationError) as error:
            # The actor's serve call gives up waiting by itself (ACCEPT_TIMEOUT).
            level = logging.DEBUG if self._warned_fallback else logging.WARNING
            self._warned_fallback = True
            logger.log(
                level,
                "%s: no direct connection to %s:%d (%s: %s); its steps go through Ray method calls, "
                "which is slower (warned once: other workers that fall back are logged at debug level).",
                worker.describe(),
                channel.host,
                channel.port,
                type(error).__name__,
                error,
            )
            return
        worker.conn, worker.conn_fd, worker.serve_ref = conn, conn.fileno(), serve_ref

    def _send_on_connection(self, worker: RayWorker, command: WorkerCommand, payload: Any) -> None:
        assert worker.conn is not None
        try:
            send_command(worker.conn, command.value, payload)
        except (BrokenPipeError, EOFError, OSError) as error:
            worker.send_failure = error

    def _poll_connections(
        self, connected: dict[int, RayWorker], timeout: float
    ) -> list[tuple[RayWorker, Any]]:
        # A poll object per call: several times cheaper than connection.wait() (which builds a selector).
        poller = select.poll()
        for fd in connected:
            poller.register(fd, select.POLLIN)
        ready = poller.poll(int(timeout * 1000))
        return [(connected[fd], self._receive(connected[fd])) for fd, _ in ready]

    def _receive(self, worker: RayWorker) -> Any:
        """The outcome of ``worker``'s command from its answer on the direct connection."""
        assert worker.conn is not None
        try:
            response = receive_response(worker.conn)
        except (EOFError, OSError) as error:
            return Lost(self._explain_lost_connection(worker, error))
        if response.name == "env_error":
            reported: WorkerError = response.payload
            raised = reported.to_exception(worker.worker_id)
            raised.add_note(f"The worker is {worker.describe()}.")
            return Lost(raised)
        return response.payload

    def _check_connections_alive(
        self, connected: dict[int, RayWorker], outcomes: list[tuple[RayWorker, Any]]
    ) -> list[tuple[RayWorker, Any]]:
        """Every liveness interval: the workers in flight whose ``serve`` call ended (actor or node
        died) although nothing came on their connection (a vanished node may never close it)."""
        now = time.monotonic()
        if now < self._next_liveness_check:
            return []
        self._next_liveness_check = now + LIVENESS_CHECK_INTERVAL
        answered = {worker.worker_id for worker, _ in outcomes}
        watched = {w.serve_ref: w for w in connected.values() if w.worker_id not in answered}
        if not watched:
            return []
        ended, _ = self.ray.wait(list(watched), num_returns=len(watched), timeout=0)
        lost: list[tuple[RayWorker, Any]] = []
        for ref in ended:
            worker = watched[ref]
            if worker.conn is not None and not worker.conn.poll(0):  # else its answer is read next
                lost.append((worker, Lost(self._explain_lost_connection(worker, None))))
        return lost

    def _explain_lost_connection(self, worker: RayWorker, error: BaseException | None) -> BaseException:
        """Why ``worker``'s direct connection ended: Ray's report of the actor's ``serve`` call (the
        actor or its node died), or the connection's own failure while the actor runs on."""
        exceptions = self.ray.exceptions
        try:
            self.ray.get(worker.serve_ref, timeout=LOSS_REPORT_TIMEOUT)
        except exceptions.GetTimeoutError:
            lost = UnityCommunicationException(
                f"The direct connection to {worker.describe()} failed ({error}) while its actor runs on. "
                "See the environment's log."
            )
        except Exception as ray_error:
            return self._explain(worker, ray_error)
        else:
            lost = UnityCommunicationException(
                f"{worker.describe()} ended its direct connection unexpectedly. See the environment's log."
            )
        lost.__cause__ = error
        return lost

    def _explain_send_failure(self, worker: RayWorker) -> BaseException:
        assert worker.send_failure is not None
        if worker.conn is not None:
            return self._explain_lost_connection(worker, worker.send_failure)
        return self._explain(worker, worker.send_failure)

    def _request_close(self, worker: RayWorker) -> Any:
        """Ask ``worker`` to close its environment: the reference of the Ray call whose end says it
        did (None when the actor is gone already)."""
        if worker.conn is not None:
            try:
                send_command(worker.conn, WorkerCommand.CLOSE.value)
            except (BrokenPipeError, EOFError, OSError):
                pass  # serve ended already (having closed the environment), or the actor died
            return worker.serve_ref  # serve closes the environment, then returns
        try:
            return worker.actor.close.remote()
        except Exception as error:  # the actor is gone already
            logger.debug("Ray worker %d: close: %s", worker.worker_id, error)
            return None

    def _wait_closed(
        self, closing: dict[Any, RayWorker], connected: list[RayWorker], timeout: float
    ) -> set[int]:
        """Wait up to ``timeout`` seconds for the calls of ``closing``; the ids of the workers whose
        environment closed. Meanwhile the answers still coming on the connections are dropped (an
        actor cannot read "close" while its last answer is stuck in a full socket buffer)."""
        ray = self.ray
        closed: set[int] = set()
        pending = list(closing)
        deadline = time.monotonic() + timeout
        try:
            while pending and time.monotonic() < deadline:
                wait = min(CLOSE_WAIT_SLICE, max(deadline - time.monotonic(), 0.0))
                ready, pending = ray.wait(pending, num_returns=len(pending), timeout=wait)
                for ref in ready:
                    try:
                        ray.get(ref)
                        closed.add(closing[ref].worker_id)
                    except Exception as error:
                        logger.debug("Ray worker %d: close: %s", closing[ref].worker_id, error)
                for worker in connected:
                    worker.discard_messages()
        except Exception as error:
            logger.debug("Closing the Ray workers: %s", error)
        return closed

    # ------------------------------------------------------------------------------- Ray calls

    def _call(self, worker: RayWorker, command: WorkerCommand, payload: Any) -> None:
        """Send ``command`` as a call of the actor's method of that name (no direct connection)."""
        try:
            if command is WorkerCommand.STEP:
                # The environment needs no policy outputs (log-probabilities, value heads...).
                actions = {
                    name: ActionInfo(info.action, info.memory, info.text, info.value, None)
                    for name, info in payload.items()
                }
                ref = worker.actor.step.remote(actions)
            elif command is WorkerCommand.RESET:
                ref = worker.actor.reset.remote(*payload)
            else:
                ref = getattr(worker.actor, command.value).remote()
        except Exception as error:  # the actor is gone
            worker.send_failure = error
            return
        worker.call = (command, ref)

    def _poll_calls(self, by_ref: dict[Any, RayWorker], timeout: float) -> list[tuple[RayWorker, Any]]:
        """The outcomes of the Ray calls of ``by_ref`` that end within ``timeout`` seconds (all
        those ended once the first one has)."""
        ray = self.ray
        outcomes: list[tuple[RayWorker, Any]] = []
        refs = list(by_ref)
        ready, rest = ray.wait(refs, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        for ref in ready:
            worker = by_ref[ref]
            assert worker.call is not None
            command, worker.call = worker.call[0], None
            try:
                result = ray.get(ref)
            except Exception as error:
                outcomes.append((worker, Lost(self._explain(worker, error))))
                continue
            outcomes.append((worker, self._decode(worker, command, result)))
        return outcomes

    def _decode(self, worker: RayWorker, command: WorkerCommand | None, result: Any) -> Any:
        """The outcome of ``command`` (None: the start) from the actor's result."""
        if command is None:
            started: ActorStarted = result
            worker.started = started
            worker.build_pid, worker.build_log_path = started.build_pid, started.build_log_path
            if started.channel is not None:
                self._open_connection(worker, started.channel)
            logger.info("%s started.", worker.describe())
            return started
        if command is WorkerCommand.STEP:
            return StepResponse(unpack_all_brain_info(result.all_brain_info), result.timer_root)
        if command is WorkerCommand.RESET:
            return unpack_all_brain_info(result)
        return result

    def _explain(self, worker: RayWorker, error: BaseException) -> BaseException:
        """The error to report for a failed call: the environment's own (with the actor's
        traceback as a note), or a clear one when the actor or its node died."""
        exceptions = self.ray.exceptions
        if isinstance(error, exceptions.RayTaskError):
            note = f"Raised in {worker.describe()}. Traceback in the actor:\n{getattr(error, 'traceback_str', '')}"
            cause = getattr(error, "cause", None)
            if isinstance(cause, Exception):
                reported: BaseException = cause.with_traceback(None)
            else:
                reported = UnityCommunicationException(f"{worker.describe()} failed: {error}")
            reported.add_note(note)
            reported.__suppress_context__ = True
            return reported
        if isinstance(error, exceptions.RayActorError):
            died = UnityCommunicationException(
                f"{worker.describe()} stopped unexpectedly: its actor or its node died ({type(error).__name__}). "
                "See the environment's log and `ray status`."
            )
            died.__cause__ = error
            return died
        return error

    def _check_start_times(self, workers: Sequence[RayWorker]) -> None:
        now = time.monotonic()
        late = [
            worker
            for worker in workers
            if worker.call is not None
            and worker.call[0] is None
            and now - worker.created_at > self._start_timeout
        ]
        if late:
            names = ", ".join(str(worker.worker_id) for worker in late)
            raise UnityEnvironmentException(
                f"The Ray workers {names} did not start within {self._start_timeout:g} s: the cluster "
                "may have no free CPUs for them (see `ray status`), or their environments hang at start."
            )

    def _kill_builds(self, workers: list[RayWorker], timeout: float = 5.0) -> None:
        """Kill the builds of ``workers`` on their nodes (their actors could not close them)."""
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        remote_kill = ray.remote(num_cpus=0, max_retries=0)(kill_process_group)
        kills = []
        for worker in workers:
            started = worker.started
            if started is None or started.build_pid is None:
                continue
            if started.node_id == here:
                kill_process_group(started.build_pid)
                continue
            strategy = NodeAffinitySchedulingStrategy(started.node_id, soft=False)
            try:
                kills.append(remote_kill.options(scheduling_strategy=strategy).remote(started.build_pid))
            except Exception as error:
                logger.debug("%s: could not kill its build: %s", worker.describe(), error)
        if kills:
            ray.wait(kills, num_returns=len(kills), timeout=timeout)


class RayEnvManager(AsyncEnvManager[RayWorker]):
    """Runs ``n_env`` environments as Ray actors and steps them asynchronously, like
    :class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager` (batched decisions,
    restarts and synchronous stepping are those of
    :class:`~mlagents.envs.async_env_manager.AsyncEnvManager`).

    Example (the manager is then used as shown for
    :class:`~mlagents.envs.async_env_manager.AsyncEnvManager`)::

        factory = partial(UnityEnvironment, "/path/to/builds/Basic.x86_64", base_port=5005)
        manager = RayEnvManager(factory, n_env=4)  # a local Ray instance; address="HOST:PORT" joins a cluster

    The factory travels with cloudpickle to every actor and is called there with the worker id; it
    must only use paths that exist on every node (absolute paths are safest: an actor's working
    directory is Ray's, not the driver's). When Ray is already initialised in this process, the
    manager uses that connection and leaves it open on :meth:`close`.

    :param env_factory: callable ``worker_id -> environment``, called in each actor.
    :param n_env: number of workers (environments).
    :param address: the Ray cluster to join (``"HOST:PORT"`` of its head, or ``"auto"``); None starts
        a local Ray instance (unless Ray is already initialised in this process).
    :param cpus_per_worker: CPUs Ray reserves for each actor (its build runs next to it).
    :param start_timeout: seconds each worker gets to start (Ray placing it, its build starting).
    :param restart_policy: decides whether a lost worker is restarted (None: never).
    :param synchronous: step every worker in each call and wait for all of them, handing the
        results over as one batch in worker order (what ``mlagents-learn --deterministic`` uses);
        False (the default): return as soon as one has finished.
    :param while_starting: called once every worker was started, before they are waited for (see
        :class:`~mlagents.envs.async_env_manager.AsyncEnvManager`).
    :raises ValueError: ``n_env`` < 1.
    :raises UnityEnvironmentException: ray is not installed, the cluster has too few CPUs, or the
        workers did not start in time.
    :raises: any error of an environment's creation (e.g. UnityTimeOutException), after every
        actor was ended.
    """

    def __init__(
        self,
        env_factory: EnvFactory,
        n_env: int = 1,
        *,
        address: str | None = None,
        cpus_per_worker: float = 1.0,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        restart_policy: RestartPolicy | None = None,
        synchronous: bool = False,
        while_starting: Callable[[], None] | None = None,
    ) -> None:
        transport = RayTransport(env_factory, address, cpus_per_worker, start_timeout)
        super().__init__(
            transport,
            n_env,
            restart_policy=restart_policy,
            synchronous=synchronous,
            while_starting=while_starting,
        )

    @property
    def worker_nodes(self) -> list[str | None]:
        """The Ray node id of each worker (None for a worker not started)."""
        return [worker.started.node_id if worker.started else None for worker in self.env_workers]
