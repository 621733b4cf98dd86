"""The environment side of :class:`~mlagents.envs.ray_env_manager.RayEnvManager`: one Ray actor per
environment, and the direct connection on which it answers the manager's commands.

:class:`EnvActor` is a plain class; the manager turns it into a Ray actor (``ray.remote``), so this
module imports without Ray. The actor creates its environment with the pickled factory (a normal
``UnityEnvironment`` next to its build, on the actor's node), then answers the manager's commands:

* **On a direct connection** (the normal way). :meth:`EnvActor.start` opens a
  :class:`ChannelListener`, a TCP socket on the loopback interface when the actor runs on the
  manager's node and on the node's address (as Ray reports it) otherwise, with a random key, and
  reports its :class:`ChannelAddress`. The manager then calls :meth:`EnvActor.serve` (in its own
  concurrency group, :data:`CHANNEL_GROUP`, beside the other methods) and connects with
  :func:`connect_channel`; both ends prove they hold the key (multiprocessing's HMAC challenge, in
  both directions). Commands and answers are the messages of the subprocess manager's pipes:
  ``EnvironmentCommand``, the plain-data step messages of :mod:`mlagents.envs.pipe_messages`,
  ``EnvironmentResponse``, and ``WorkerError`` for an error of the environment. The ``serve`` call
  lasts as long as the connection, so its result tells the manager why a connection ended (the
  actor or its node died, as Ray reports it).
* **As Ray method calls** of the same names (:meth:`EnvActor.step`, :meth:`EnvActor.reset`...), for a
  manager that could not connect (e.g. a firewall between the nodes). Observations then travel
  through Ray's object store as :class:`PackedBrainInfo`: every per-agent field is one numpy array
  (Ray stores arrays without copying them into the pickle stream) instead of Python lists pickled
  element by element; :func:`unpack_all_brain_info` rebuilds equal BrainInfos (same types, same
  values) with writable arrays.
"""

import logging
import os
import select
import signal
import socket
import threading
import time
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from typing import Any, NamedTuple

import cloudpickle
import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.communicator_objects import CustomResetParameters
from mlagents.envs.env_manager import EnvFactory, advance_environment, create_environment
from mlagents.envs.env_worker import (
    EnvironmentResponse,
    LoggingSetup,
    WorkerError,
    answer_command,
    step_reply,
)
from mlagents.envs.pipe_messages import (
    STEP,
    decode_actions,
    send_object,
)
from mlagents.envs.timers import TimerNode, get_timer_root, reset_timers
from mlagents.envs.worker_transport import WorkerCommand

logger = logging.getLogger("mlagents.envs")


class PackedBrainInfo(NamedTuple):
    """A BrainInfo with its per-agent lists as numpy arrays (see the module docstring).

    :ivar visual_observations: per camera, the agents' images stacked on axis 0.
    :ivar arrays: the BrainInfo's array fields (vector observations, memories, previous vector
        actions, action masks) as they are; None stays None.
    :ivar rewards: float64 (n,); :ivar local_done: bool (n,); :ivar max_reached: bool (n,).
    :ivar agents: the agent ids, (n,) array of str or object.
    :ivar rest: the fields without a numeric form (text observations and actions, custom
        observations), pickled as they are.
    """

    visual_observations: list[np.ndarray]
    arrays: dict[str, np.ndarray | None]
    rewards: np.ndarray | None
    local_done: np.ndarray | None
    max_reached: np.ndarray | None
    agents: np.ndarray | None
    rest: dict[str, Any]


_ARRAY_FIELDS = ("vector_observations", "memories", "previous_vector_actions", "action_masks")
_REST_FIELDS = ("text_observations", "previous_text_actions", "custom_observations")


def _list_to_array(values: list[Any] | None, dtype: Any) -> np.ndarray | None:
    if values is None:
        return None
    return np.asarray(values, dtype=dtype)


def _array_to_list(values: np.ndarray | None) -> list[Any] | None:
    return None if values is None else values.tolist()


def pack_brain_info(info: BrainInfo) -> PackedBrainInfo:
    """The compact form of ``info`` (does not modify it)."""
    visual = [np.stack(camera) if len(camera) else np.zeros((0,)) for camera in info.visual_observations]
    agents = info.agents
    # Agent ids are strings from a UnityEnvironment; anything else keeps its type in an object array.
    agent_dtype = str if agents is not None and all(isinstance(agent, str) for agent in agents) else object
    return PackedBrainInfo(
        visual_observations=visual,
        arrays={name: getattr(info, name) for name in _ARRAY_FIELDS},
        rewards=_list_to_array(info.rewards, np.float64),
        local_done=_list_to_array(info.local_done, bool),
        max_reached=_list_to_array(info.max_reached, bool),
        agents=_list_to_array(agents, agent_dtype),
        rest={name: getattr(info, name) for name in _REST_FIELDS},
    )


def unpack_brain_info(packed: PackedBrainInfo) -> BrainInfo:
    """The BrainInfo that :func:`pack_brain_info` packed, with arrays this process owns (writable)."""
    arrays = {name: None if value is None else np.array(value) for name, value in packed.arrays.items()}
    visual = [[np.array(image) for image in camera] for camera in packed.visual_observations]
    return BrainInfo(
        visual_observation=visual,
        vector_observation=arrays["vector_observations"],  # type: ignore[arg-type]
        text_observations=packed.rest["text_observations"],
        memory=arrays["memories"],
        reward=_array_to_list(packed.rewards),
        agents=_array_to_list(packed.agents),
        local_done=_array_to_list(packed.local_done),
        vector_action=arrays["previous_vector_actions"],
        text_action=packed.rest["previous_text_actions"],
        max_reached=_array_to_list(packed.max_reached),
        action_mask=arrays["action_masks"],
        custom_observations=packed.rest["custom_observations"],
    )


def pack_all_brain_info(all_brain_info: AllBrainInfo) -> dict[str, PackedBrainInfo]:
    """:func:`pack_brain_info` for every brain."""
    return {name: pack_brain_info(info) for name, info in all_brain_info.items()}


def unpack_all_brain_info(packed: dict[str, PackedBrainInfo]) -> AllBrainInfo:
    """:func:`unpack_brain_info` for every brain."""
    return {name: unpack_brain_info(info) for name, info in packed.items()}


class PackedStep(NamedTuple):
    """What an actor returns for a step called as a Ray method: the new observations and its timers
    for that step."""

    all_brain_info: dict[str, PackedBrainInfo]
    timer_root: TimerNode | None


# ------------------------------------------------------------------------------------------ direct connection

#: The actor's concurrency group of :meth:`EnvActor.serve`, so that it runs beside the other methods
#: (which keep the actor's default group of one thread: they run one at a time, in call order).
CHANNEL_GROUP = "channel"
#: Where an actor on the manager's own node listens: nothing outside the machine can connect.
LOOPBACK = "127.0.0.1"
_AUTHKEY_BYTES = 32


class ChannelAddress(NamedTuple):
    """Where an actor waits for the manager's direct connection, and the key both ends prove they hold.

    :ivar host: the address the actor's socket is bound to (loopback, or its node's address).
    :ivar port: the socket's port (chosen by the system).
    :ivar authkey: random bytes, known only to the actor and the manager (sent through Ray).
    """

    host: str
    port: int
    authkey: bytes


def channel_host(node_id: str, manager_node_id: str | None, node_ip: str) -> str:
    """Where an actor on node ``node_id`` listens: loopback when the manager runs on the same node
    (``manager_node_id``; None: unknown), else the node's address ``node_ip`` (the manager connects
    from another machine)."""
    return LOOPBACK if node_id == manager_node_id else node_ip


def connection_of(sock: socket.socket) -> Connection:
    """The connected TCP socket ``sock`` as a blocking multiprocessing ``Connection`` that owns it.

    Nagle's algorithm is off: each message is one write that the other end waits for, and holding
    back its tail for an acknowledgement would add a delayed-ACK pause to some steps.
    """
    sock.setblocking(True)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return Connection(sock.detach())


class ChannelListener:
    """The actor's end of the direct connection before the manager connects: a listening TCP socket.

    :param host: the address to bind (see :func:`channel_host`); the port is chosen by the system.
    :ivar address: what the manager needs to connect (host, port and a new random key).
    :raises OSError: the address cannot be bound.
    """

    def __init__(self, host: str) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.create_server((host, 0), family=family)
        self.address = ChannelAddress(host, self._socket.getsockname()[1], os.urandom(_AUTHKEY_BYTES))

    def accept(self, timeout: float) -> Connection | None:
        """The manager's authenticated connection, or None when none came within ``timeout``
        seconds. A peer that fails the key challenge is refused (logged) and the wait goes on."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._socket], [], [], remaining)[0]:
                return None
            sock, peer = self._socket.accept()
            conn = connection_of(sock)
            try:
                deliver_challenge(conn, self.address.authkey)
                answer_challenge(conn, self.address.authkey)
            except (AuthenticationError, EOFError, OSError) as error:
                logger.warning("An environment actor refused a connection from %s: %s", peer, error)
                conn.close()
                continue
            return conn

    def close(self) -> None:
        self._socket.close()


def connect_channel(address: ChannelAddress, timeout: float) -> Connection:
    """The manager's end of the direct connection to the actor listening at ``address``.

    :param timeout: seconds for the TCP connection, and again for the actor's challenge to arrive
        (a firewall that drops packets, or a peer that is not the actor, fails instead of hanging).
    :raises OSError: no connection (refused, unreachable, timed out: ``TimeoutError``).
    :raises multiprocessing.AuthenticationError: the peer does not hold the key.
    :raises EOFError: the peer closed the connection during the challenge.
    """
    conn = connection_of(socket.create_connection((address.host, address.port), timeout=timeout))
    try:
        if not conn.poll(timeout):  # the listener speaks first
            raise TimeoutError(f"no challenge from {address.host}:{address.port} within {timeout:g} s")
        answer_challenge(conn, address.authkey)
        deliver_challenge(conn, address.authkey)
    except BaseException:
        conn.close()
        raise
    return conn


# ------------------------------------------------------------------------------------------ the actor


class ActorStarted(NamedTuple):
    """What an actor reports once its environment runs.

    :ivar node_id: the Ray node the actor (and its build) runs on.
    :ivar build_pid: the build's process id on that node (None for an environment without one).
    :ivar build_log_path: the build's log file on that node (None when unknown).
    :ivar channel: where it waits for the manager's direct connection (None: it could not listen;
        the manager then calls its methods).
    :ivar actor_pid: the actor's process id on that node.
    """

    node_id: str
    build_pid: int | None
    build_log_path: str | None
    channel: ChannelAddress | None = None
    actor_pid: int | None = None


class EnvActor:
    """One environment in a Ray actor: created by :meth:`start`, then stepped, reset and closed by
    the manager, on the direct connection (:meth:`serve`) or by method calls. Exceptions of the
    environment reach the manager with their type (as ``WorkerError`` on the connection, through
    Ray otherwise).

    :meth:`serve` runs in its own thread (:data:`CHANNEL_GROUP`) while the methods keep theirs, so a
    lock makes the environment's uses take turns."""

    def __init__(self, worker_id: int, logging_setup: LoggingSetup | None = None) -> None:
        self.worker_id = worker_id
        self.env: BaseUnityEnvironment | None = None
        self._lock = threading.Lock()
        self._listener: ChannelListener | None = None
        if logging_setup is not None:
            logging_setup.apply()

    def start(
        self, pickled_env_factory: bytes, restart: int = 0, manager_node_id: str | None = None
    ) -> ActorStarted:
        """Create the environment (launches its build on this node) and listen for the manager.

        :param restart: how often this worker was restarted before (see
            :func:`~mlagents.envs.env_manager.create_environment`).
        :param manager_node_id: the Ray node of the manager (None: unknown), which decides where
            the listener binds (:func:`channel_host`).
        """
        import ray

        env_factory: EnvFactory = cloudpickle.loads(pickled_env_factory)
        with self._lock:
            self.env = create_environment(env_factory, self.worker_id, restart)
        reset_timers()
        process = getattr(self.env, "proc1", None)
        pid = getattr(process, "pid", None)
        log_path = getattr(self.env, "build_log_path", None)
        node_id = ray.get_runtime_context().get_node_id()
        node_ip: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        host = channel_host(node_id, manager_node_id, node_ip)
        try:
            self._listener = ChannelListener(host)
        except OSError as error:
            logger.warning("Ray worker %d cannot listen on %s (%s).", self.worker_id, host, error)
        return ActorStarted(
            node_id,
            pid if isinstance(pid, int) else None,
            log_path if isinstance(log_path, str) else None,
            None if self._listener is None else self._listener.address,
            os.getpid(),
        )

    def serve(self, accept_timeout: float) -> bool:
        """Answer the manager's commands on the direct connection until ``"close"``, an error of the
        environment (reported on the connection first) or the connection's end; the environment is
        closed then, as a worker process closes it on every way out.

        :param accept_timeout: seconds to wait for the manager to connect.
        :returns: False when it did not connect (it calls the methods instead), else True.
        """
        listener, self._listener = self._listener, None
        if listener is None:
            return False
        try:
            conn = listener.accept(accept_timeout)
        finally:
            listener.close()
        if conn is None:
            return False
        try:
            self._serve(conn)
        finally:
            conn.close()
            self.close()
        return True

    def _serve(self, conn: Connection) -> None:
        while True:
            try:
                # An EnvironmentCommand, or a plain (STEP, encoded actions) tuple.
                name, payload = conn.recv()
            except Exception:  # the manager went away, or cut a message short (Ctrl-C)
                return
            if name == WorkerCommand.CLOSE:
                return
            try:
                answer = self._answer(name, payload)
            except Exception as error:
                report = EnvironmentResponse("env_error", self.worker_id, WorkerError.from_exception(error))
                _send_quietly(conn, report)
                return
            if not _send_quietly(conn, answer):
                return

    def _answer(self, name: str, payload: Any) -> Any:
        """The answer to a command that came on the direct connection, as the subprocess manager's
        workers send it (see :func:`mlagents.envs.env_worker.worker`)."""
        if name == STEP:
            message = step_reply(self.worker_id, self._advance(decode_actions(payload)))
            reset_timers()
            return message
        try:
            command = WorkerCommand(name)
        except ValueError:
            raise ValueError(f"Unknown command {name!r} sent to Ray worker {self.worker_id}") from None
        with self._lock:
            answer = answer_command(self._env(), command, payload)
        return EnvironmentResponse(command.value, self.worker_id, answer)

    def step(self, all_action_info: dict[str, ActionInfo]) -> PackedStep:
        """Step with the decided actions (or reset after ``global_done``)."""
        all_brain_info = self._advance(all_action_info)
        timer_root = get_timer_root()
        reset_timers()
        return PackedStep(pack_all_brain_info(all_brain_info), timer_root)

    def reset(
        self,
        config: dict[str, float] | None,
        train_mode: bool,
        custom_reset_parameters: CustomResetParameters | None,
    ) -> dict[str, PackedBrainInfo]:
        return pack_all_brain_info(self._reset(config, train_mode, custom_reset_parameters))

    def external_brains(self) -> dict[str, BrainParameters]:
        with self._lock:
            return self._env().external_brains

    def reset_parameters(self) -> dict[str, float]:
        with self._lock:
            return self._env().reset_parameters

    def global_done(self) -> bool:
        with self._lock:
            return bool(self._env().global_done)

    def close(self) -> None:
        """Close the environment (ends its build); the manager ends the actor afterwards."""
        with self._lock:
            env, self.env = self.env, None
            if env is not None:
                env.close()

    def _advance(self, all_action_info: dict[str, ActionInfo]) -> AllBrainInfo:
        with self._lock:
            return advance_environment(self._env(), all_action_info)

    def _reset(
        self,
        config: dict[str, float] | None,
        train_mode: bool,
        custom_reset_parameters: CustomResetParameters | None,
    ) -> AllBrainInfo:
        with self._lock:
            return self._env().reset(config, train_mode, custom_reset_parameters)

    def _env(self) -> BaseUnityEnvironment:
        if self.env is None:
            raise RuntimeError(f"The environment of Ray worker {self.worker_id} is not running.")
        return self.env


def _send_quietly(conn: Connection, message: Any) -> bool:
    """Send ``message`` with the standard pickler; False when the manager is gone."""
    try:
        send_object(conn, message)
    except (BrokenPipeError, EOFError, OSError):
        return False
    return True


def kill_process_group(pgid: int) -> bool:
    """SIGKILL the process group ``pgid`` if it is a build's own session (a build is started as a
    session leader, so pid = session id = group id; checking that avoids hitting an unrelated
    process that reused the pid). Run on the build's node. True when a signal was sent."""
    try:
        if os.getsid(pgid) != pgid:
            return False
        os.killpg(pgid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False
