"""The gRPC communicator: Python is the server, the environment (Unity build) is the client.

The environment drives the conversation: it calls ``Exchange`` with its output and waits for the
answer, which carries the next input. So ``exchange(input)`` means "answer the pending call with
``input``, then wait for the next call". The thread that calls ``exchange`` receives the call
itself (see ``core_rpc_server``); with a grpcio that lacks the calls needed for that, pool threads
of ``grpc.server`` receive it and hand it over (see ``threaded_rpc_server``).
"""

import logging
import socket
import time
from collections.abc import Callable
from typing import Protocol

from mlagents.envs.communicator import Communicator
from mlagents.envs.communicator_objects import UnityInput, UnityMessage, UnityOutput
from mlagents.envs.core_rpc_server import CoreExchangeServer, core_server_available
from mlagents.envs.exception import (
    UnityCommunicationException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents.envs.threaded_rpc_server import DaemonThreadPool, ThreadedExchangeServer

__all__ = [
    "ALL_INTERFACES",
    "LOOPBACK",
    "TIMEOUT_MESSAGE",
    "DaemonThreadPool",
    "ExchangeServer",
    "RpcCommunicator",
    "exchange_timeout_message",
    "probe_port",
]

logger = logging.getLogger("mlagents.envs")

LOOPBACK = "127.0.0.1"
ALL_INTERFACES = "[::]"

# How often a waiting thread runs the peer check (seconds).
POLL_INTERVAL = 0.25
# Seconds the goodbye answer gets to reach the environment before close cuts the connections.
CLOSE_GRACE = 0.5
# Visual observations of many agents can exceed gRPC's default 4 MiB receive limit.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024

SERVER_OPTIONS = (
    # gRPC enables SO_REUSEPORT by default on Linux, which would let two environments silently
    # share a port.
    ("grpc.so_reuseport", 0),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
)

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


class ExchangeServer(Protocol):
    """What ``RpcCommunicator`` needs of a server of the ``UnityToExternal`` service."""

    @property
    def has_pending_call(self) -> bool: ...

    def next_call(self, timeout: float) -> UnityMessage | None:
        """The next call's request, or None when none arrived within ``timeout`` seconds."""

    def answer(self, message: UnityMessage) -> None:
        """Answer the call handed out last."""

    def answer_input(self, inputs: UnityInput) -> None:
        """Answer the call handed out last with status 200 and ``inputs``."""

    def close(self, goodbye: UnityMessage, grace: float) -> None:
        """Answer every open call with ``goodbye``, then stop and free the port."""


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


def core_server(address: str, port: int) -> ExchangeServer:
    return CoreExchangeServer(address, SERVER_OPTIONS)


def threaded_server(address: str, port: int) -> ExchangeServer:
    return ThreadedExchangeServer(address, SERVER_OPTIONS, name=f"mlagents-rpc-{port}")


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

    #: Makes the server: the one driven by the waiting thread when grpcio allows it.
    server_factory: Callable[[str, int], ExchangeServer] = staticmethod(
        core_server if core_server_available() else threaded_server
    )

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
        self.server: ExchangeServer | None = None
        self.is_open = False
        self._exchange_timeout_message = exchange_timeout_message(exchange_timeout)
        self.create_server()

    @property
    def has_pending_call(self) -> bool:
        """Whether the environment is blocked in a call that Python has not answered yet."""
        return self.server is not None and self.is_open and self.server.has_pending_call

    def create_server(self) -> None:
        """Check the port is free, then start the gRPC server on it."""
        self.check_port(self.port)
        try:
            self.server = self.server_factory(f"{self.bind_address}:{self.port}", self.port)
        except Exception as error:
            raise UnityWorkerInUseException(self.worker_id, self.port) from error
        self.is_open = True

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
        server = self._open_server()
        first = self._wait_for_call(server, self.timeout_wait, TIMEOUT_MESSAGE)
        server.answer_input(inputs)
        # The second call carries nothing: the environment now waits for the first reset.
        self._wait_for_call(server, self.exchange_timeout, self._exchange_timeout_message)
        return first.unity_output

    def exchange(self, inputs: UnityInput) -> UnityOutput | None:
        """Answer the pending call with ``inputs`` and wait (up to ``exchange_timeout``) for the next.

        :return: the next output, or None if the environment sent a non-200 status (it is closing).
        :raises UnityTimeOutException: the environment did not call again in time.
        :raises UnityCommunicationException: the communicator is closed, or the peer check failed.
        """
        server = self._open_server()
        server.answer_input(inputs)
        output = self._wait_for_call(server, self.exchange_timeout, self._exchange_timeout_message)
        if output.header.status != 200:
            return None
        return output.unity_output

    def close(self) -> None:
        """Answer a pending call with status 400 (the environment then quits), stop the server at
        once and free the port. Safe to call several times."""
        if not self.is_open:
            return
        self.is_open = False
        assert self.server is not None
        # A short grace lets the 400 reply reach the environment before connections are cut.
        self.server.close(_status_message(400), CLOSE_GRACE)

    def _open_server(self) -> ExchangeServer:
        if not self.is_open or self.server is None:
            raise UnityCommunicationException("The communicator is closed; create a new environment.")
        return self.server

    def _wait_for_call(self, server: ExchangeServer, timeout: float, timeout_message: str) -> UnityMessage:
        """The next call's request; runs the peer check about every ``POLL_INTERVAL`` meanwhile."""
        deadline = time.monotonic() + timeout
        message = server.next_call(min(POLL_INTERVAL, timeout))
        if message is not None:
            return message
        while True:
            if self.peer_check is not None:
                self.peer_check()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise UnityTimeOutException(timeout_message)
            message = server.next_call(min(POLL_INTERVAL, remaining))
            if message is not None:
                return message
