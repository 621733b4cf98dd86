"""Environment workers as Ray actors, on one machine or a Ray cluster: :class:`RayEnvManager`.

The manager works like :class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager`, with
Ray actors (:class:`~mlagents.envs.ray_env_worker.EnvActor`) in place of worker processes:

* each actor runs one normal ``UnityEnvironment`` next to its build, on the node Ray placed it on
  (one CPU per actor, spread over the nodes); the build's path must exist on that node;
* stepping is asynchronous: every idle worker gets a step call, and :meth:`RayEnvManager.step`
  returns as soon as at least one has finished (``ray.wait``), with every other finished step;
* actions are decided in batches, one policy call per brain for all idle workers
  (:class:`~mlagents.envs.step_batching.StepBatcher`);
* observations come back through Ray's object store as numpy arrays
  (:class:`~mlagents.envs.ray_env_worker.PackedBrainInfo`);
* :meth:`RayEnvManager.close` (also after an error or Ctrl-C) closes every environment, ends the
  builds that did not end with it, ends the actors, and disconnects from Ray (stopping the local
  Ray instance if the manager started it);
* with a :class:`~mlagents.envs.restart_policy.RestartPolicy`, a worker whose environment is lost
  (its build crashed or hung, or its actor or node died) is ended and started again with the same
  worker id (the same port), like the subprocess manager's workers.

Ray is an optional dependency (``pip install mlagents_envs[ray]``); without it the manager raises
one clear :class:`~mlagents.envs.exception.UnityEnvironmentException`.
"""

import logging
import math
import os
from types import ModuleType
from typing import Any, NoReturn

import cloudpickle

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainParameters
from mlagents.envs.communicator_objects import CustomResetParameters
from mlagents.envs.env_manager import EnvFactory, EnvManager, StepBatch, StepInfo
from mlagents.envs.env_worker import LoggingSetup
from mlagents.envs.exception import UnityCommunicationException, UnityEnvironmentException
from mlagents.envs.ray_env_worker import (
    ActorStarted,
    EnvActor,
    PackedStep,
    kill_process_group,
    unpack_all_brain_info,
)
from mlagents.envs.restart_policy import RestartPolicy, first_line, is_restartable
from mlagents.envs.step_batching import StepBatcher
from mlagents.envs.timers import TimerNode, hierarchical_timer, timed

__all__ = ["RayEnvManager", "import_ray", "ray_is_installed"]

logger = logging.getLogger("mlagents.envs")

RAY_MISSING = (
    "The Ray environment manager needs the optional package ray: install it with "
    "pip install 'mlagents_envs[ray]' (or use --env-manager=subprocess)."
)

# Seconds the workers get to start their environments once Ray placed them (builds included).
DEFAULT_START_TIMEOUT = 300.0
# Seconds between two looks at a start that waits for Ray to place the actors.
_PLACEMENT_CHECK_INTERVAL = 5.0
# Seconds a lost worker's actor gets to close its environment before its build is killed.
_LOST_WORKER_CLOSE_TIMEOUT = 3.0


class _Lost:
    """The result of a call whose worker was lost and restarted (no result will come)."""


LOST = _Lost()


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


class RayWorker:
    """The manager's handle on one actor.

    :ivar worker_id: the worker's index (its port is the factory's ``base_port + worker_id``).
    :ivar actor: the Ray actor.
    :ivar started: where the actor and its build run, once its environment started.
    :ivar previous_step: the worker's last transition (its current observations are the next input).
    :ivar previous_all_action_info: the actions of the step in flight (or of the last step).
    :ivar step_ref: the result of the step in flight, None while idle.
    :ivar restart: how often this worker was restarted before this actor (0: its first start).
    """

    def __init__(self, worker_id: int, actor: Any, restart: int = 0) -> None:
        self.worker_id = worker_id
        self.actor = actor
        self.restart = restart
        self.started: ActorStarted | None = None
        self.previous_step: StepInfo = StepInfo(None, {}, None)
        self.previous_all_action_info: dict[str, ActionInfo] = {}
        self.step_ref: Any = None

    @property
    def waiting(self) -> bool:
        return self.step_ref is not None

    def describe(self) -> str:
        """``"Ray worker 2 (node 3f2a..., build pid 1234, log /tmp/...)"``."""
        if self.started is None:
            return f"Ray worker {self.worker_id} (not started)"
        return (
            f"Ray worker {self.worker_id} (node {self.started.node_id[:12]}, build pid "
            f"{self.started.build_pid}, log {self.started.build_log_path})"
        )


class RayEnvManager(EnvManager):
    """Runs ``n_env`` environments as Ray actors and steps them asynchronously.

    Example::

        from functools import partial

        factory = partial(UnityEnvironment, "/path/to/builds/Basic.x86_64", base_port=5005)
        manager = RayEnvManager(factory, n_env=4)  # a local Ray instance; address="HOST:PORT" joins a cluster
        try:
            manager.set_policy("BasicLearning", my_policy)
            manager.reset()
            for _ in range(100):
                for step_info in manager.step():  # 1..4 transitions
                    ...
        finally:
            manager.close()

    The factory travels with cloudpickle to every actor and is called there with the worker id; it
    must only use paths that exist on every node (absolute paths are safest: an actor's working
    directory is Ray's, not the driver's). When Ray is already initialised in this process, the
    manager uses that connection and leaves it open on :meth:`close`.

    :param env_factory: callable ``worker_id -> environment``, called in each actor.
    :param n_env: number of workers (environments).
    :param address: the Ray cluster to join (``"HOST:PORT"`` of its head, or ``"auto"``); None starts
        a local Ray instance (unless Ray is already initialised in this process).
    :param cpus_per_worker: CPUs Ray reserves for each actor (its build runs next to it).
    :param start_timeout: seconds the workers get to start (Ray placing them, their builds starting).
    :param restart_policy: decides whether a lost worker is restarted (None: never). A restarted
        worker's environment is reset with the last :meth:`reset`'s parameters, the agents of its
        lost episode are reported once by :meth:`take_interrupted_steps`, its step in flight is
        dropped and :attr:`restart_count` counts it; past the limits the error is
        :class:`~mlagents.envs.restart_policy.RestartLimitExceeded`.
    :param synchronous: step every worker in each call and wait for all of them, handing the
        results over as one batch in worker order (what ``mlagents-learn --deterministic`` uses,
        see :class:`~mlagents.envs.subprocess_env_manager.SubprocessEnvManager`); False (the
        default): return as soon as one has finished.
    :raises ValueError: ``n_env`` < 1.
    :raises UnityEnvironmentException: ray is not installed, or the cluster has too few CPUs.
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
        super().__init__()
        self.synchronous = synchronous
        if n_env < 1:
            raise ValueError(f"n_env must be at least 1, got {n_env}")
        self._ray = import_ray()
        self._closed = False
        self._batcher = StepBatcher()
        self.env_workers: list[RayWorker] = []
        self._owns_connection = False
        self._pickled_env_factory = cloudpickle.dumps(env_factory)
        self._cpus_per_worker = cpus_per_worker
        self._start_timeout = start_timeout
        self._restart_policy = restart_policy
        # What a restarted environment is reset with: the arguments of the last reset().
        self._last_reset: tuple[dict[str, float] | None, bool, CustomResetParameters | None] | None = None
        try:
            if not self._ray.is_initialized():
                connect_to_ray(self._ray, address, n_env, cpus_per_worker)
                self._owns_connection = True
            self._check_cluster_size(n_env)
            self._actor_class = self._ray.remote(EnvActor)
            # All actors start before any is waited for: their builds launch in parallel.
            self.env_workers = [self._create_worker(worker_id) for worker_id in range(n_env)]
            self._wait_for_workers_started(self.env_workers)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------------- public

    @property
    def worker_nodes(self) -> list[str | None]:
        """The Ray node id of each worker (None for a worker not started)."""
        return [worker.started.node_id if worker.started else None for worker in self.env_workers]

    def step(self) -> list[StepInfo]:
        """Send actions to every idle worker, then wait until at least one worker has a result.

        :returns: one StepInfo per worker that finished (1..n_env), grouped by the decision that
            produced their actions (oldest first), in worker order within a group.
        :raises UnityCommunicationException: an actor or its node died.
        :raises: an exception raised by a policy, or by an environment in an actor (its own type,
            with the actor's traceback as a note).
        """
        return [step_info for batch in self.step_batches() for step_info in batch.step_infos]

    def step_batches(self) -> list[StepBatch]:
        """:meth:`step`, grouped by decision (see :class:`~mlagents.envs.step_batching.StepBatcher`)."""
        self._check_open()
        while True:
            self._queue_steps()
            finished = self._wait_for_steps()
            if finished:  # empty only when every worker in flight was lost and restarted
                return self._postprocess_steps(finished)

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
        for worker in list(self.env_workers):
            if worker.step_ref is not None:
                ref, worker.step_ref = worker.step_ref, None
                self._result(worker, ref)
        self._batcher.reset()
        self._last_reset = (config, train_mode, custom_reset_parameters)
        refs = [(worker, worker.actor.reset.remote(*self._last_reset)) for worker in self.env_workers]
        for worker, ref in refs:
            packed = self._result(worker, ref)
            if packed is not LOST:  # else the restart reset the new environment
                worker.previous_step = StepInfo(None, unpack_all_brain_info(packed), None)
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
        """End every environment, build and actor, then leave Ray. Safe to call several times and
        after errors.

        Every actor gets up to ``timeout`` seconds (all in parallel) to close its environment; the
        builds of those that did not are killed on their nodes; then every actor is ended. A local
        Ray instance the manager started is stopped; a cluster connection it opened is closed.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._end_workers(self.env_workers, timeout)
        finally:
            if self._owns_connection:
                self._ray.shutdown()

    # ------------------------------------------------------------------------------- workers

    def _check_cluster_size(self, n_env: int) -> None:
        cpus = float(self._ray.cluster_resources().get("CPU", 0.0))
        needed = n_env * self._cpus_per_worker
        if needed > cpus:
            raise UnityEnvironmentException(
                f"The Ray cluster has {cpus:g} CPUs but {n_env} environment workers need {needed:g} "
                f"({self._cpus_per_worker:g} each): add nodes to the cluster or lower --num-envs."
            )

    def _create_worker(self, worker_id: int, restart: int = 0) -> RayWorker:
        actor = self._actor_class.options(
            num_cpus=self._cpus_per_worker,
            scheduling_strategy="SPREAD",
            name=None,
            max_restarts=0,
        ).remote(worker_id, LoggingSetup.of_this_process())
        return RayWorker(worker_id, actor, restart)

    def _wait_for_workers_started(self, workers: list[RayWorker]) -> None:
        """Start the environments of ``workers`` and wait for them; a worker lost meanwhile is
        restarted (and waited for) or its error raised."""
        refs = {
            worker.actor.start.remote(self._pickled_env_factory, worker.restart): worker for worker in workers
        }
        pending = list(refs)
        waited = 0.0
        while pending:
            ready, pending = self._ray.wait(
                pending, num_returns=len(pending), timeout=_PLACEMENT_CHECK_INTERVAL
            )
            for ref in ready:
                worker = refs[ref]
                started = self._result(worker, ref)
                if started is not LOST:
                    worker.started = started
                    logger.info("%s started.", worker.describe())
            if not ready:
                waited += _PLACEMENT_CHECK_INTERVAL
                if waited >= self._start_timeout:
                    waiting = ", ".join(str(refs[ref].worker_id) for ref in pending)
                    raise UnityEnvironmentException(
                        f"The Ray workers {waiting} did not start within {self._start_timeout:g} s: the cluster "
                        "may have no free CPUs for them (see `ray status`), or their environments hang at start."
                    )

    def _end_workers(self, workers: list[RayWorker], timeout: float) -> None:
        """Close the environments of ``workers`` (in parallel), kill the builds left, end the actors."""
        ray = self._ray
        closing: dict[Any, RayWorker] = {}
        for worker in workers:
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

    def _kill_builds(self, workers: list[RayWorker], timeout: float = 5.0) -> None:
        """Kill the builds of ``workers`` on their nodes (their actors could not close them)."""
        ray = self._ray
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

    # ------------------------------------------------------------------------------- stepping

    @timed
    def _take_step(self, idle_workers: list[RayWorker]) -> dict[int, dict[str, ActionInfo]]:
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
            # The environment needs no policy outputs (log-probabilities, value heads...).
            to_send = {
                name: ActionInfo(info.action, info.memory, info.text, info.value, None)
                for name, info in all_action_info.items()
            }
            worker.step_ref = worker.actor.step.remote(to_send)

    def _wait_for_steps(self) -> list[tuple[RayWorker, PackedStep]]:
        """Block until at least one step result is there, then take every result available;
        synchronous: block until every step in flight has finished."""
        by_ref = {worker.step_ref: worker for worker in self.env_workers if worker.step_ref is not None}
        refs = list(by_ref)
        ready, rest = self._ray.wait(refs, num_returns=len(refs) if self.synchronous else 1)
        if rest:
            more, _ = self._ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        finished: list[tuple[RayWorker, PackedStep]] = []
        for ref in sorted(ready, key=lambda ref: by_ref[ref].worker_id):
            worker = by_ref[ref]
            worker.step_ref = None
            packed = self._result(worker, ref)
            if packed is not LOST:
                finished.append((worker, packed))
        return finished

    def _postprocess_steps(self, finished: list[tuple[RayWorker, PackedStep]]) -> list[StepBatch]:
        worker_steps: list[tuple[int, StepInfo]] = []
        timer_nodes: list[TimerNode] = []
        for worker, packed in finished:
            new_step = StepInfo(
                worker.previous_step.current_all_brain_info,
                unpack_all_brain_info(packed.all_brain_info),
                worker.previous_all_action_info,
            )
            worker_steps.append((worker.worker_id, new_step))
            worker.previous_step = new_step
            if packed.timer_root is not None:
                timer_nodes.append(packed.timer_root)
        if timer_nodes:
            with hierarchical_timer("workers") as main_timer_node:
                for worker_timer_node in timer_nodes:
                    main_timer_node.merge(worker_timer_node, root_name="worker_root", is_parallel=True)
        return self._batcher.collect(worker_steps)

    def _ask_worker_0(self, method_name: str) -> Any:
        self._check_open()
        while True:
            worker = self.env_workers[0]
            answer = self._result(worker, getattr(worker.actor, method_name).remote())
            if answer is not LOST:
                return answer
            # Worker 0 was lost and restarted: ask the new one.

    def _result(self, worker: RayWorker, ref: Any) -> Any:
        """``ray.get(ref)`` of a call to ``worker``; when the worker was lost, restart it (then
        :data:`LOST`) or raise the error (the environment's own, or a clear one)."""
        try:
            return self._get(worker, ref)
        except Exception as error:
            self._lost(worker, error)
            return LOST

    def _get(self, worker: RayWorker, ref: Any) -> Any:
        """``ray.get(ref)``, with Ray's errors turned into the environment's own or a clear one."""
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            self._raise_environment_error(worker, error)
        except ray.exceptions.RayActorError as error:
            raise UnityCommunicationException(
                f"{worker.describe()} stopped unexpectedly: its actor or its node died ({type(error).__name__}). "
                "See the environment's log and `ray status`."
            ) from error

    @staticmethod
    def _raise_environment_error(worker: RayWorker, error: Any) -> NoReturn:
        cause = getattr(error, "cause", None)
        note = (
            f"Raised in {worker.describe()}. Traceback in the actor:\n{getattr(error, 'traceback_str', '')}"
        )
        if isinstance(cause, Exception):
            cause.add_note(note)
            raise cause.with_traceback(None) from None
        wrapped = UnityCommunicationException(f"{worker.describe()} failed: {error}")
        wrapped.add_note(note)
        raise wrapped from None

    def _lost(self, worker: RayWorker, error: BaseException) -> None:
        """Restart ``worker`` after ``error`` if the restart policy allows it, else raise ``error``
        (RestartLimitExceeded past the limits). Returns once a new actor runs in its place, reset
        with the last reset's parameters; a new worker lost in turn is restarted the same way."""
        worker_id = worker.worker_id
        if worker is not self.env_workers[worker_id]:
            return  # a late result of a worker already replaced
        if self._restart_policy is None or self._closed or not is_restartable(error):
            raise error
        number = self._restart_policy.request(worker_id, error)
        self._count_restart(worker.previous_step)
        worker.step_ref = None
        self._end_workers([worker], _LOST_WORKER_CLOSE_TIMEOUT)
        self._batcher.forget(worker_id)
        logger.warning(
            "%s was lost (%s: %s). Restarting it (restart %d of this worker, %d in all). The environment's "
            "log: %s",
            worker.describe(),
            type(error).__name__,
            first_line(error),
            number,
            self.restart_count,
            (worker.started.build_log_path if worker.started else None) or "unknown",
        )
        new = self._create_worker(worker_id, restart=number)
        self.env_workers[worker_id] = new
        self._wait_for_workers_started([new])
        if new is not self.env_workers[worker_id]:
            return  # lost in turn, and replaced by a nested restart (which also reset it)
        if self._last_reset is not None:
            packed = self._result(new, new.actor.reset.remote(*self._last_reset))
            if packed is not LOST:
                new.previous_step = StepInfo(None, unpack_all_brain_info(packed), None)

    def _check_open(self) -> None:
        if self._closed:
            raise UnityCommunicationException("The RayEnvManager is closed.")
