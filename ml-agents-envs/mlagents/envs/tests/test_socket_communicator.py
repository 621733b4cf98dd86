"""The legacy socket communicator against a hand-written environment on a real loopback socket."""

import socket
import struct
import threading
import time

import pytest

from mlagents.envs.communicator_objects import UnityInput, UnityMessage
from mlagents.envs.exception import UnityTimeOutException
from mlagents.envs.socket_communicator import SocketCommunicator


def send(conn: socket.socket, message: UnityMessage) -> None:
    payload = message.SerializeToString()
    conn.sendall(struct.pack("<I", len(payload)) + payload)


def receive(conn: socket.socket) -> UnityMessage:
    header = b""
    while len(header) < 4:
        header += conn.recv(4 - len(header))
    (length,) = struct.unpack("<I", header)
    data = b""
    while len(data) < length:
        data += conn.recv(length - len(data))
    message = UnityMessage()
    message.ParseFromString(data)
    return message


def fake_unity(port: int, received: list) -> None:
    """Connects, answers the initialization and one exchange (in small pieces), then reads the goodbye."""
    deadline = time.monotonic() + 5
    while True:
        try:
            conn = socket.create_connection(("127.0.0.1", port))
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    with conn:
        received.append(receive(conn))
        init = UnityMessage()
        init.header.status = 200
        init.unity_output.rl_initialization_output.name = "SocketAcademy"
        send(conn, init)
        received.append(receive(conn))
        output = UnityMessage()
        output.header.status = 200
        output.unity_output.rl_output.global_done = True
        payload = output.SerializeToString()
        framed = struct.pack("<I", len(payload)) + payload
        for i in range(len(framed)):  # byte by byte: the reader must reassemble
            conn.sendall(framed[i : i + 1])
        received.append(receive(conn))


def test_initialize_exchange_close(free_port):
    received = []
    thread = threading.Thread(target=fake_unity, args=(free_port, received), daemon=True)
    thread.start()
    comm = SocketCommunicator(0, free_port)
    inputs = UnityInput()
    inputs.rl_initialization_input.seed = 5
    assert comm.initialize(inputs).rl_initialization_output.name == "SocketAcademy"
    step = UnityInput()
    step.rl_input.command = 1
    assert comm.exchange(step).rl_output.global_done is True
    comm.close()
    comm.close()
    thread.join(5)
    assert received[0].unity_input.rl_initialization_input.seed == 5
    assert received[1].unity_input.rl_input.command == 1
    assert received[2].header.status == 400


def test_nobody_connects(free_port):
    comm = SocketCommunicator(0, free_port, timeout_wait=0.3)
    with pytest.raises(UnityTimeOutException, match="took too long to respond"):
        comm.initialize(UnityInput())


def test_port_in_use(free_port):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", free_port))
        holder.listen(1)
        with pytest.raises(UnityTimeOutException, match="worker number 0 is still in use"):
            SocketCommunicator(0, free_port).initialize(UnityInput())
