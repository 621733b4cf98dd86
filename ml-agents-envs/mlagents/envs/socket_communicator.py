"""Legacy raw-socket communicator (kept for completeness; ``UnityEnvironment`` uses gRPC).

Python listens on ``localhost:base_port + worker_id`` and speaks first. Every message is a
4-byte length (struct format ``"I"``: native order, little-endian on x86) followed by a
serialized ``UnityMessage``.
"""

import logging
import socket
import struct

from mlagents.envs.communicator import Communicator
from mlagents.envs.communicator_objects import UnityInput, UnityMessage, UnityOutput
from mlagents.envs.exception import (
    UnityCommunicationException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents.envs.rpc_communicator import TIMEOUT_MESSAGE

logger = logging.getLogger("mlagents.envs")

LENGTH_PREFIX = struct.Struct("I")


class SocketCommunicator(Communicator):
    """One TCP connection to the environment, Python as the listening side.

    :param worker_id: number of this environment (added to ``base_port``).
    :param base_port: first port of the range used by environments.
    :param timeout_wait: seconds to wait for the connection and for every answer.
    """

    def __init__(self, worker_id: int = 0, base_port: int = 5005, timeout_wait: float = 30) -> None:
        super().__init__(worker_id, base_port)
        self.port = base_port + worker_id
        self._buffer_size = 12000
        self.worker_id = worker_id
        self.timeout_wait = timeout_wait
        self._socket: socket.socket | None = None
        self._conn: socket.socket | None = None

    def initialize(self, inputs: UnityInput) -> UnityOutput:
        """Listen, accept the environment, send ``inputs`` and return its initialization output.

        :raises UnityTimeOutException: the port is in use (message of ``UnityWorkerInUseException``)
            or the environment did not connect/answer within ``timeout_wait``.
        """
        try:
            self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind(("localhost", self.port))
        except OSError as error:
            self.close()
            raise UnityTimeOutException(
                UnityWorkerInUseException.MESSAGE_TEMPLATE.format(self.worker_id)
            ) from error
        try:
            self._socket.settimeout(self.timeout_wait)
            self._socket.listen(1)
            self._conn, _ = self._socket.accept()
            self._conn.settimeout(self.timeout_wait)
        except OSError as error:
            self.close()
            raise UnityTimeOutException(TIMEOUT_MESSAGE) from error
        output = self._round_trip(self._wrap(inputs))
        return output.unity_output

    def exchange(self, inputs: UnityInput) -> UnityOutput | None:
        """Send ``inputs``, return the answer, or None when the environment answered with a non-200 status."""
        output = self._round_trip(self._wrap(inputs))
        if output.header.status != 200:
            return None
        return output.unity_output

    def close(self) -> None:
        """Send status 400 (the environment quits) and close the sockets. Safe to call several times."""
        if self._conn is not None:
            goodbye = UnityMessage()
            goodbye.header.status = 400
            try:
                self._send(goodbye.SerializeToString())
            except OSError:
                pass
            self._conn.close()
            self._conn = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    @staticmethod
    def _wrap(inputs: UnityInput) -> UnityMessage:
        message = UnityMessage()
        message.header.status = 200
        message.unity_input.CopyFrom(inputs)
        return message

    def _round_trip(self, message: UnityMessage) -> UnityMessage:
        if self._conn is None:
            raise UnityCommunicationException("The socket communicator is not connected.")
        self._send(message.SerializeToString())
        answer = UnityMessage()
        answer.ParseFromString(self._receive())
        return answer

    def _send(self, payload: bytes) -> None:
        assert self._conn is not None
        self._conn.sendall(LENGTH_PREFIX.pack(len(payload)) + payload)

    def _receive(self) -> bytes:
        try:
            header = self._receive_exactly(LENGTH_PREFIX.size)
            (length,) = LENGTH_PREFIX.unpack(header)
            return self._receive_exactly(length)
        except TimeoutError as error:
            raise UnityTimeOutException("The environment took too long to respond.") from error

    def _receive_exactly(self, size: int) -> bytes:
        assert self._conn is not None
        data = bytearray()
        while len(data) < size:
            chunk = self._conn.recv(min(self._buffer_size, size - len(data)))
            if not chunk:
                raise UnityCommunicationException("The environment closed the socket connection.")
            data.extend(chunk)
        return bytes(data)
