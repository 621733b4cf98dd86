"""RpcCommunicator over real gRPC on loopback, with a hand-driven client playing the environment.

Every test runs with both servers: the one driven by the waiting thread (the default) and the
thread-pool fallback.
"""

import ipaddress
import os
import signal
import socket
import threading
import time
from pathlib import Path

import grpc
import pytest

from mlagents.envs import rpc_communicator
from mlagents.envs.communicator_objects import (
    UnityInput,
    UnityMessage,
    UnityRLInitializationOutput,
    UnityToExternalStub,
)
from mlagents.envs.core_rpc_server import CoreExchangeServer, core_server_available, ok_message_bytes
from mlagents.envs.exception import (
    UnityCommunicationException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents.envs.rpc_communicator import TIMEOUT_MESSAGE, DaemonThreadPool, RpcCommunicator


@pytest.fixture(autouse=True, params=["core", "threaded"])
def server_kind(request, monkeypatch):
    """Run the test with the given server behind RpcCommunicator."""
    factory = {"core": rpc_communicator.core_server, "threaded": rpc_communicator.threaded_server}[
        request.param
    ]
    monkeypatch.setattr(RpcCommunicator, "server_factory", staticmethod(factory))
    return request.param


class FakeUnity:
    """The client side of the protocol, driven step by step from the test."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = UnityToExternalStub(self.channel)
        self.replies: list[UnityMessage] = []
        self.errors: list[Exception] = []

    def call(self, message: UnityMessage) -> UnityMessage | None:
        try:
            reply = self.stub.Exchange(message, timeout=10, wait_for_ready=True)
        except grpc.RpcError as error:
            self.errors.append(error)
            return None
        self.replies.append(reply)
        return reply

    def call_in_background(self, message: UnityMessage) -> threading.Thread:
        thread = threading.Thread(target=self.call, args=(message,), daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self.channel.close()


def init_message(version: str = "API-9") -> UnityMessage:
    message = UnityMessage()
    message.header.status = 200
    message.unity_output.rl_initialization_output.CopyFrom(
        UnityRLInitializationOutput(name="Academy", version=version)
    )
    return message


def status_message(status: int = 200) -> UnityMessage:
    message = UnityMessage()
    message.header.status = status
    return message


def seed_input(seed: int = 7) -> UnityInput:
    inputs = UnityInput()
    inputs.rl_initialization_input.seed = seed
    return inputs


@pytest.fixture
def communicator(free_port):
    comm = RpcCommunicator(0, free_port, timeout_wait=5, exchange_timeout=5)
    yield comm
    comm.close()


@pytest.fixture
def unity(communicator):
    client = FakeUnity(communicator.port)
    yield client
    client.close()


def handshake(communicator: RpcCommunicator, unity: FakeUnity) -> threading.Thread:
    """Run the two initialization calls; returns the thread blocked in call #2 (waiting for reset)."""
    first = unity.call_in_background(init_message())
    result = {}

    def second_call():
        first.join()
        unity.call(status_message(200))

    second = threading.Thread(target=second_call, daemon=True)
    second.start()
    result["output"] = communicator.initialize(seed_input(7))
    assert result["output"].rl_initialization_output.name == "Academy"
    first.join(5)
    assert unity.replies[0].header.status == 200
    assert unity.replies[0].unity_input.rl_initialization_input.seed == 7
    return second


def test_initialize_and_exchange_round_trip(communicator, unity):
    second = handshake(communicator, unity)
    # The reply to call #2 is the first exchange's input; the exchange returns call #3's payload.
    reset = UnityInput()
    reset.rl_input.command = 1

    def third_call():
        second.join()
        out = status_message(200)
        out.unity_output.rl_output.global_done = True
        unity.call(out)

    third = threading.Thread(target=third_call, daemon=True)
    third.start()
    output = communicator.exchange(reset)
    assert output is not None and output.rl_output.global_done is True
    assert unity.replies[1].unity_input.rl_input.command == 1
    assert communicator.has_pending_call
    communicator.close()
    third.join(5)
    # The pending call #3 was answered with the goodbye status.
    assert unity.replies[2].header.status == 400


def test_non_200_status_means_no_output(communicator, unity):
    second = handshake(communicator, unity)

    def goodbye_call():
        second.join()
        unity.call(status_message(400))

    thread = threading.Thread(target=goodbye_call, daemon=True)
    thread.start()
    assert communicator.exchange(UnityInput()) is None
    communicator.close()
    thread.join(5)


def test_no_connection_times_out_after_timeout_wait(free_port):
    comm = RpcCommunicator(0, free_port, timeout_wait=0.5)
    try:
        start = time.monotonic()
        with pytest.raises(UnityTimeOutException) as error:
            comm.initialize(seed_input())
        # At timeout_wait, not at the 30 s default (the upper bound allows for a loaded machine).
        assert 0.4 < time.monotonic() - start < 15.0
        assert str(error.value) == TIMEOUT_MESSAGE
    finally:
        comm.close()


def test_exchange_times_out_when_the_environment_stops_calling(free_port):
    comm = RpcCommunicator(0, free_port, timeout_wait=60, exchange_timeout=0.5)
    unity = FakeUnity(comm.port)
    try:
        handshake(comm, unity)
        start = time.monotonic()
        with pytest.raises(UnityTimeOutException, match="exchange_timeout"):
            comm.exchange(UnityInput())  # answered call #2, but no call #3 comes
        # After exchange_timeout, not timeout_wait (the bound allows for a loaded machine).
        assert time.monotonic() - start < 15.0
    finally:
        comm.close()
        unity.close()


def test_second_handshake_call_has_a_timeout_too(free_port):
    comm = RpcCommunicator(0, free_port, timeout_wait=5, exchange_timeout=0.5)
    unity = FakeUnity(comm.port)
    try:
        unity.call_in_background(init_message())
        with pytest.raises(UnityTimeOutException, match="exchange_timeout"):
            comm.initialize(seed_input())
    finally:
        comm.close()
        unity.close()


def test_peer_check_ends_the_wait(communicator):
    checks = []

    def check():
        checks.append(time.monotonic())
        if len(checks) >= 2:
            raise UnityCommunicationException("the build exited")

    communicator.set_peer_check(check)
    start = time.monotonic()
    with pytest.raises(UnityCommunicationException, match="the build exited"):
        communicator.initialize(seed_input())
    # At the second check, long before the fixture's timeout_wait of 5 s.
    assert time.monotonic() - start < 4.5


def test_port_in_use_names_the_port_and_the_fix(free_port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", free_port))
        holder.listen(1)
        with pytest.raises(UnityWorkerInUseException) as error:
            RpcCommunicator(2, free_port - 2)
    message = str(error.value)
    assert message.startswith(UnityWorkerInUseException.MESSAGE_TEMPLATE.format(2))
    assert str(free_port) in message and "--base-port" in message and "worker_id" in message


def test_two_communicators_cannot_share_a_port(communicator):
    with pytest.raises(UnityWorkerInUseException):
        RpcCommunicator(0, communicator.port)


def _listening_addresses(port: int) -> list[ipaddress.IPv6Address]:
    """Local addresses of sockets listening on ``port`` (IPv4 ones mapped into IPv6), from /proc/net/tcp*."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A = LISTEN
                raw = bytes.fromhex(address)
                # The kernel prints each 32-bit word in host (little-endian) order.
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                if len(words) == 4:
                    words = b"\0" * 10 + b"\xff\xff" + words
                found.append(ipaddress.IPv6Address(words))
    return found


def test_binds_loopback_by_default(communicator):
    assert communicator.bind_address == "127.0.0.1"
    addresses = _listening_addresses(communicator.port)
    assert addresses and all(a.ipv4_mapped == ipaddress.IPv4Address("127.0.0.1") for a in addresses)


def test_binding_all_interfaces_is_explicit(free_port):
    comm = RpcCommunicator(0, free_port, bind_address="[::]")
    try:
        addresses = _listening_addresses(free_port)
        assert addresses and all(a.is_unspecified for a in addresses)
    finally:
        comm.close()


def test_close_frees_the_port_and_is_idempotent(free_port, port_free):
    comm = RpcCommunicator(0, free_port)
    assert not port_free(free_port)
    comm.close()
    comm.close()
    assert port_free(free_port)
    # The same port can host a new server at once.
    RpcCommunicator(0, free_port).close()


def test_exchange_after_close_raises(communicator):
    communicator.close()
    with pytest.raises(UnityCommunicationException, match="closed"):
        communicator.exchange(UnityInput())


def test_close_releases_a_waiting_handler(communicator, unity):
    """A call that arrives while nobody answers gets the goodbye status when Python closes."""
    thread = unity.call_in_background(init_message())
    assert communicator.server.next_call(5) is not None
    communicator.close()
    thread.join(5)
    assert not thread.is_alive()
    assert unity.replies and unity.replies[0].header.status == 400


def test_ctrl_c_interrupts_a_wait_at_once(free_port):
    """SIGINT reaches the main thread while it waits for the environment (KeyboardInterrupt)."""
    comm = RpcCommunicator(0, free_port, timeout_wait=30)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            comm.initialize(seed_input())
        assert time.monotonic() - start < 15.0  # long before timeout_wait
    finally:
        timer.join()
        comm.close()
        comm.close()
    assert not comm.has_pending_call


def test_unknown_method_is_unimplemented(communicator):
    channel = grpc.insecure_channel(f"127.0.0.1:{communicator.port}")
    errors: list[grpc.RpcError] = []

    def call_other_method() -> None:
        try:
            channel.unary_unary("/communicator_objects.UnityToExternal/Other")(
                b"", timeout=10, wait_for_ready=True
            )
        except grpc.RpcError as error:
            errors.append(error)

    thread = threading.Thread(target=call_other_method, daemon=True)
    thread.start()
    try:
        # Python serves calls while it waits for the environment's next call.
        deadline = time.monotonic() + 10
        while thread.is_alive() and time.monotonic() < deadline:
            assert communicator.server.next_call(0.05) is None
        thread.join(5)
        assert len(errors) == 1 and errors[0].code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        channel.close()


def test_core_server_needs_no_python_thread(server_kind, communicator, unity):
    """The default server is driven by the waiting thread: it starts no Python thread."""
    if server_kind != "core":
        pytest.skip("the thread-pool server runs handlers on threads")
    assert core_server_available()
    assert isinstance(communicator.server, CoreExchangeServer)
    before = threading.active_count()
    third = handshake(communicator, unity)
    # handshake() started two client threads (one still waits in call #2).
    assert threading.active_count() <= before + 1
    communicator.close()
    third.join(5)


def test_answer_bytes_equal_the_protobuf_serialization():
    inputs = UnityInput()
    inputs.rl_input.command = 0
    for n in (0, 1, 200, 70000):
        inputs.rl_input.environment_parameters.float_parameters["x"] = float(n)
        inputs.rl_input.agent_actions["b"].value.add(vector_actions=[0.5] * n)
        message = status_message(200)
        message.unity_input.CopyFrom(inputs)
        assert ok_message_bytes(inputs) == message.SerializeToString()


def test_daemon_thread_pool():
    pool = DaemonThreadPool(max_workers=2, name="test-pool")
    assert pool.submit(lambda a, b=0: a + b, 2, b=3).result(timeout=5) == 5
    failing = pool.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(timeout=5)
    release = threading.Event()
    blocked = [pool.submit(release.wait, 5) for _ in range(3)]
    time.sleep(0.1)
    assert len(pool._threads) == 2 and all(t.daemon for t in pool._threads)
    release.set()
    assert all(f.result(timeout=5) for f in blocked)  # the third ran once a thread was free
    pool.shutdown(wait=True)
    assert not any(t.is_alive() for t in pool._threads)
    with pytest.raises(RuntimeError):
        pool.submit(print)
