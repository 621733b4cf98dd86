"""The gRPC communicator: Python is the server, the environment (Unity build) is the client.

The environment drives the conversation: it calls ``Exchange`` with its output and waits; the
gRPC handler thread hands that output to the main thread and blocks until the main thread hands
back the reply (the next input). So ``exchange(input)`` means "answer the pending call with
``input``, then wait for the next call".
"""

import logging
import queue
import socket
import threading
import time
from collections.abc import Callable
from concurrent import futures
from typing import Any, NamedTuple, ParamSpec, TypeVar

import grpc

from mlagents.envs.communicator import Communicator
from mlagents.envs.communicator_objects import (
    UnityInput,
    UnityMessage,
    UnityOutput,
    add_UnityToExternalServicer_to_server,
)
from mlagents.envs.exception import (
    UnityCommunicationException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)

logger = logging.getLogger("mlagents.envs")

P = ParamSpec("P")
T = TypeVar("T")

LOOPBACK = "127.0.0.1"
ALL_INTERFACES = "[::]"

# How often a waiting main thread runs the peer check, and a waiting handler thread looks for
# close / a vanished client (seconds).
POLL_INTERVAL = 0.25
# Visual observations of many agents can exceed gRPC's default 4 MiB receive limit.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024

TIMEOUT_MESSAGE = (
    "The Unity environment took too long to respond. Make sure that :\n"
    "\t The environment does not need user interaction to launch\n"
    "\t The Academy's Broadcast Hub is configured correctly\n"
    "\t The Agents are linked to the appropriate Brains\n"
    "\t The environment and the Python interface have compatible versions."
)


def exchange_timeout_message(seconds: float) -> str:
    return (
        f"The Unity environment did not answer within {seconds:g} seconds (exchange_timeout). "
        "It may be stuck. If one step of this environment legitimately takes longer, "
        "pass a larger exchange_timeout to UnityEnvironment."
    )


class DaemonThreadPool(futures.Executor):
    """A fixed-size thread pool for the gRPC server whose threads never delay interpreter exit.

    ``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits, before
    ``atexit`` handlers run; a handler thread waiting for Python's next reply would then block the
    exit forever, and the ``atexit`` handler that closes the environment (and releases that
    thread) would never run.
    """

    def __init__(self, max_workers: int, name: str) -> None:
        self._max_workers = max_workers
        self._name = name
        self._work: queue.SimpleQueue[_WorkItem | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()
        self._shutdown = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> futures.Future[T]:
        future: futures.Future[T] = futures.Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._work.put(_WorkItem(future, fn, args, kwargs))
            if self._idle > 0:
                self._idle -= 1
            elif len(self._threads) < self._max_workers:
                thread = threading.Thread(
                    target=self._run, name=f"{self._name}_{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # handed to whoever waits on the future
                    future.set_exception(error)
                else:
                    future.set_result(result)
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            threads = list(self._threads)
        for _ in threads:
            self._work.put(None)
        if wait:
            for thread in threads:
                thread.join()


class _WorkItem(NamedTuple):
    """A call for the pool: ``future`` receives ``fn(*args, **kwargs)``."""

    future: "futures.Future[Any]"
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class UnityToExternalServicerImplementation:
    """Hands each incoming call to the main thread and returns the main thread's reply.

    The service ``UnityToExternal`` with its one method ``Exchange`` (registered with
    ``add_UnityToExternalServicer_to_server``, which needs nothing else of the object).

    ``incoming`` receives the environment's messages; ``replies`` receives Python's answers.
    """

    def __init__(self) -> None:
        self.incoming: queue.Queue[UnityMessage] = queue.Queue()
        self.replies: queue.Queue[UnityMessage] = queue.Queue()
        self.closed = threading.Event()

    def Exchange(self, request: UnityMessage, context: grpc.ServicerContext) -> UnityMessage:
        self.incoming.put(request)
        while True:
            try:
                return self.replies.get(timeout=POLL_INTERVAL)
            except queue.Empty:
                # Never park a server thread forever: leave when Python closed or the client vanished.
                if self.closed.is_set() or not context.is_active():
                    return _status_message(400)


def _status_message(status: int) -> UnityMessage:
    message = UnityMessage()
    message.header.status = status
    return message


def probe_port(host: str, port: int) -> None:
    """Raise OSError when ``port`` cannot be bound on ``host`` (someone listens there).

    SO_REUSEADDR is set, as gRPC does, so that connections of a previous run still in TIME_WAIT
    do not count as "in use"; a listening socket still does.
    """
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


class RpcCommunicator(Communicator):
    """gRPC server on ``bind_address:base_port + worker_id`` waiting for one environment.

    :param worker_id: number of this environment (added to ``base_port``).
    :param base_port: first port of the range used by environments.
    :param timeout_wait: seconds to wait for the environment's first call (connection).
    :param exchange_timeout: seconds to wait for every later call (each answer of a running
        environment); a hung environment raises ``UnityTimeOutException`` after that long.
    :param bind_address: interface to listen on: loopback by default; ``"[::]"`` for all
        interfaces (e.g. an environment in another container).
    :raises UnityWorkerInUseException: the port is taken.
    """

    def __init__(
        self,
        worker_id: int = 0,
        base_port: int = 5005,
        timeout_wait: float = 30,
        *,
        exchange_timeout: float = 120.0,
        bind_address: str = LOOPBACK,
    ) -> None:
        super().__init__(worker_id, base_port)
        self.port = base_port + worker_id
        self.worker_id = worker_id
        self.timeout_wait = timeout_wait
        self.exchange_timeout = exchange_timeout
        self.bind_address = bind_address
        self.server: grpc.Server | None = None
        self._thread_pool: DaemonThreadPool | None = None
        self.unity_to_external: UnityToExternalServicerImplementation | None = None
        self.is_open = False
        # True between receiving a call and answering it: the environment is waiting for us.
        self._call_pending = False
        self.create_server()

    @property
    def has_pending_call(self) -> bool:
        """Whether the environment is blocked in a call that Python has not answered yet."""
        return self._call_pending

    def create_server(self) -> None:
        """Check the port is free, then start the gRPC server on it."""
        self.check_port(self.port)
        try:
            self._thread_pool = DaemonThreadPool(max_workers=10, name=f"mlagents-rpc-{self.port}")
            self.server = grpc.server(
                self._thread_pool,
                options=[
                    # gRPC enables SO_REUSEPORT by default on Linux, which would let two
                    # environments silently share a port.
                    ("grpc.so_reuseport", 0),
                    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ],
            )
            self.unity_to_external = UnityToExternalServicerImplementation()
            add_UnityToExternalServicer_to_server(self.unity_to_external, self.server)
            if self.server.add_insecure_port(f"{self.bind_address}:{self.port}") == 0:
                raise OSError(f"cannot bind {self.bind_address}:{self.port}")
            self.server.start()
            self.is_open = True
        except Exception as error:
            if self.server is not None:
                self.server.stop(None)
                self.server = None
            if self._thread_pool is not None:
                self._thread_pool.shutdown(wait=False)
            raise UnityWorkerInUseException(self.worker_id, self.port) from error

    def check_port(self, port: int) -> None:
        """:raises UnityWorkerInUseException: ``port`` is in use on ``bind_address``."""
        try:
            probe_port(self.bind_address, port)
        except OSError as error:
            raise UnityWorkerInUseException(self.worker_id, port) from error

    def initialize(self, inputs: UnityInput) -> UnityOutput:
        """Wait for the environment's first call (up to ``timeout_wait``), answer it with ``inputs``
        (the seed) and wait for its second, empty call (up to ``exchange_timeout``).

        :return: the environment's initialization output (from the first call).
        :raises UnityTimeOutException: no connection within ``timeout_wait`` / no second call in time.
        :raises UnityCommunicationException: the communicator is closed, or the peer check failed.
        """
        self._require_open()
        first = self._wait_for_call(self.timeout_wait, TIMEOUT_MESSAGE)
        self._reply(self._wrap(inputs))
        # The second call carries nothing: the environment now waits for the first reset.
        self._wait_for_call(self.exchange_timeout, exchange_timeout_message(self.exchange_timeout))
        return first.unity_output

    def exchange(self, inputs: UnityInput) -> UnityOutput | None:
        """Answer the pending call with ``inputs`` and wait (up to ``exchange_timeout``) for the next.

        :return: the next output, or None if the environment sent a non-200 status (it is closing).
        :raises UnityTimeOutException: the environment did not call again in time.
        :raises UnityCommunicationException: the communicator is closed, or the peer check failed.
        """
        self._require_open()
        self._reply(self._wrap(inputs))
        output = self._wait_for_call(self.exchange_timeout, exchange_timeout_message(self.exchange_timeout))
        if output.header.status != 200:
            return None
        return output.unity_output

    def close(self) -> None:
        """Answer a pending call with status 400 (the environment then quits), stop the server at
        once and free the port. Safe to call several times."""
        if not self.is_open:
            return
        self.is_open = False
        assert self.unity_to_external is not None and self.server is not None
        self.unity_to_external.replies.put(_status_message(400))
        self._call_pending = False
        self.unity_to_external.closed.set()
        # A short grace lets the 400 reply reach the environment before connections are cut.
        self.server.stop(grace=0.5).wait()
        if self._thread_pool is not None:
            # Handlers return within POLL_INTERVAL once ``closed`` is set.
            self._thread_pool.shutdown(wait=False)

    @staticmethod
    def _wrap(inputs: UnityInput) -> UnityMessage:
        message = _status_message(200)
        message.unity_input.CopyFrom(inputs)
        return message

    def _require_open(self) -> None:
        if not self.is_open:
            raise UnityCommunicationException("The communicator is closed; create a new environment.")

    def _reply(self, message: UnityMessage) -> None:
        assert self.unity_to_external is not None
        self.unity_to_external.replies.put(message)
        self._call_pending = False

    def _wait_for_call(self, timeout: float, timeout_message: str) -> UnityMessage:
        assert self.unity_to_external is not None
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise UnityTimeOutException(timeout_message)
            try:
                message = self.unity_to_external.incoming.get(timeout=min(POLL_INTERVAL, remaining))
            except queue.Empty:
                if self.peer_check is not None:
                    self.peer_check()
                continue
            self._call_pending = True
            return message
