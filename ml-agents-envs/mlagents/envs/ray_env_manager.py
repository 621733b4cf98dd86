"""Environment workers as Ray actors, on one machine or a Ray cluster: :class:`RayEnvManager`.

The manager is the asynchronous core (:class:`~mlagents.envs.async_env_manager.AsyncEnvManager`,
shared with :class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager`) over
:class:`RayTransport`, with Ray actors (:class:`~mlagents.envs.ray_env_worker.EnvActor`) in place of
worker processes:

* each actor runs one normal ``UnityEnvironment`` next to its build, on the node Ray placed it on
  (one CPU per actor, spread over the nodes); the build's path must exist on that node;
* a command is a call of the actor's method of that name; the manager waits for the results of the
  calls in flight with ``ray.wait`` (with a timeout), and Ray reports an actor or node that died;
* observations come back through Ray's object store as numpy arrays
  (:class:`~mlagents.envs.ray_env_worker.PackedBrainInfo`);
* :meth:`RayEnvManager.close` (also after an error or Ctrl-C) closes every environment, ends the
  builds that did not end with it, ends the actors, and disconnects from Ray (stopping the local
  Ray instance if the manager started it).

Ray is an optional dependency (``pip install mlagents_envs[ray]``); without it the manager raises
one clear :class:`~mlagents.envs.exception.UnityEnvironmentException`.
"""

import logging
import math
import os
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import cloudpickle

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.async_env_manager import AsyncEnvManager
from mlagents.envs.env_manager import EnvFactory
from mlagents.envs.env_worker import LoggingSetup
from mlagents.envs.exception import UnityCommunicationException, UnityEnvironmentException
from mlagents.envs.ray_env_worker import ActorStarted, EnvActor, kill_process_group, unpack_all_brain_info
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
    :ivar call: the command in flight and the reference to its result, None while nothing is.
    :ivar send_failure: why the last call could not be made (reported by the next poll), else None.
    """

    def __init__(self, worker_id: int, actor: Any) -> None:
        super().__init__(worker_id)
        self.actor = actor
        self.started: ActorStarted | None = None
        self.created_at = time.monotonic()
        self.call: tuple[WorkerCommand | None, Any] | None = None
        self.send_failure: BaseException | None = None

    def describe(self) -> str:
        """``"Ray worker 2 (node 3f2a..., build pid 1234, log /tmp/...)"``."""
        if self.started is None:
            return f"Ray worker {self.worker_id} (not started)"
        return (
            f"Ray worker {self.worker_id} (node {self.started.node_id[:12]}, build pid "
            f"{self.started.build_pid}, log {self.started.build_log_path})"
        )


class RayTransport(WorkerTransport[RayWorker]):
    """Workers as Ray actors: a command is a call of the actor's method of that name.

    :param env_factory: callable ``worker_id -> environment``, sent to the actors with cloudpickle.
    :param address: the Ray cluster to join; None starts a local Ray instance (unless Ray is
        already initialised in this process: that connection is used and left open).
    :param cpus_per_worker: CPUs Ray reserves for each actor.
    :param start_timeout: seconds an actor gets to start its environment (Ray placing it included).
    :raises UnityEnvironmentException: ray is not installed.
    """

    def __init__(
        self, env_factory: EnvFactory, address: str | None, cpus_per_worker: float, start_timeout: float
    ) -> None:
        self.ray = import_ray()
        self._pickled_env_factory = cloudpickle.dumps(env_factory)
        self._address = address
        self._cpus_per_worker = cpus_per_worker
        self._start_timeout = start_timeout
        self._owns_connection = False
        self._actor_class: Any = None

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
        self._actor_class = ray.remote(EnvActor)

    def start_worker(self, worker_id: int, restart: int) -> RayWorker:
        actor = self._actor_class.options(
            num_cpus=self._cpus_per_worker, scheduling_strategy="SPREAD", name=None, max_restarts=0
        ).remote(worker_id, LoggingSetup.of_this_process())
        worker = RayWorker(worker_id, actor)
        worker.call = (None, actor.start.remote(self._pickled_env_factory, restart))
        return worker

    def send(self, worker: RayWorker, command: WorkerCommand, payload: Any = None) -> None:
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

    def poll(self, workers: Sequence[RayWorker], timeout: float) -> list[tuple[RayWorker, Any]]:
        """:raises UnityEnvironmentException: an actor did not start within the start timeout."""
        outcomes: list[tuple[RayWorker, Any]] = []
        by_ref: dict[Any, RayWorker] = {}
        for worker in workers:
            if worker.send_failure is not None:
                outcomes.append((worker, Lost(self._explain(worker, worker.send_failure))))
            elif worker.call is not None:
                by_ref[worker.call[1]] = worker
        self._check_start_times(workers)
        if not by_ref:
            return outcomes
        refs = list(by_ref)
        ray = self.ray
        ready, rest = ray.wait(refs, num_returns=1, timeout=0 if outcomes else timeout)
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

    def end_workers(self, workers: Sequence[RayWorker], timeout: float) -> None:
        """Close the environments of ``workers`` (in parallel), kill the builds left, end the actors."""
        ray = self.ray
        closing: dict[Any, RayWorker] = {}
        for worker in workers:
            worker.call = None
            try:
                closing[worker.actor.close.remote()] = worker
            except Exception as error:  # the actor is gone already
                logger.debug("Ray worker %d: close: %s", worker.worker_id, error)
        closed: set[int] = set()
        # Every step is tried even when Ray itself fails (e.g. the cluster went away meanwhile).
        try:
            ready, _ = (
                ray.wait(list(closing), num_returns=len(closing), timeout=timeout) if closing else ([], [])
            )
        except Exception as error:
            logger.debug("Closing the Ray workers: %s", error)
            ready = []
        for ref in ready:
            try:
                ray.get(ref)
                closed.add(closing[ref].worker_id)
            except Exception as error:
                logger.debug("Ray worker %d: close: %s", closing[ref].worker_id, error)
        try:
            self._kill_builds([worker for worker in workers if worker.worker_id not in closed])
        except Exception as error:
            logger.debug("Killing the builds of the Ray workers: %s", error)
        for worker in workers:
            try:
                ray.kill(worker.actor, no_restart=True)
            except Exception as error:
                logger.debug("Ray worker %d: kill: %s", worker.worker_id, error)

    def close(self) -> None:
        if self._owns_connection:
            self.ray.shutdown()

    def _decode(self, worker: RayWorker, command: WorkerCommand | None, result: Any) -> Any:
        """The outcome of ``command`` (None: the start) from the actor's result."""
        if command is None:
            started: ActorStarted = result
            worker.started = started
            worker.build_pid, worker.build_log_path = started.build_pid, started.build_log_path
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
    ) -> None:
        transport = RayTransport(env_factory, address, cpus_per_worker, start_timeout)
        super().__init__(transport, n_env, restart_policy=restart_policy, synchronous=synchronous)

    @property
    def worker_nodes(self) -> list[str | None]:
        """The Ray node id of each worker (None for a worker not started)."""
        return [worker.started.node_id if worker.started else None for worker in self.env_workers]
