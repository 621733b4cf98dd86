"""The build's gRPC client (sdk/http2.py) against a real gRPC server on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from hpack import Encoder
from hpack.struct import NeverIndexedHeaderTuple

from mlagents.envs.communicator_objects import Header, UnityMessage
from mlagents.envs.communicator_objects import unity_to_external_pb2_grpc as service
from mlagents.envs.core_rpc_server import EXCHANGE_METHOD
from mlagents.example_envs.ports import find_free_port_range
from mlagents.example_envs.sdk.client import EXCHANGE
from mlagents.example_envs.sdk.http2 import (
    CallFailed,
    ConnectionEnded,
    GrpcChannel,
    leaves_table,
    request_header_block,
)


def test_the_builds_method_path_is_the_one_the_python_side_serves():
    assert EXCHANGE.encode() == EXCHANGE_METHOD


class Echo(service.UnityToExternalServicer):
    """Answers each call with its header, the status plus one; status 999 aborts the call."""

    def __init__(self) -> None:
        self.calls = 0

    def Exchange(self, request: UnityMessage, context: grpc.ServicerContext) -> UnityMessage:
        self.calls += 1
        if request.header.status == 999:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "status 999 is refused")
        return UnityMessage(header=Header(status=request.header.status + 1, message=request.header.message))


def start_server(port: int = 0) -> tuple[grpc.Server, int, Echo]:
    echo = Echo()
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=2),
        options=[("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)],
    )
    service.add_UnityToExternalServicer_to_server(echo, server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    return server, bound, echo


@pytest.fixture
def echo_server() -> Iterator[tuple[int, Echo]]:
    server, port, echo = start_server()
    yield port, echo
    server.stop(0).wait()


def call(channel: GrpcChannel, status: int, message: str = "") -> UnityMessage:
    request = UnityMessage(header=Header(status=status, message=message))
    return UnityMessage.FromString(channel.unary(EXCHANGE, request.SerializeToString()))


def test_calls_on_one_connection_get_their_own_answers(echo_server):
    port, echo = echo_server
    with GrpcChannel.connect("127.0.0.1", port, timeout=30) as channel:
        answers = [call(channel, status).header.status for status in range(200)]
    assert answers == list(range(1, 201))
    assert echo.calls == 200


def test_messages_larger_than_every_window_travel_whole_both_ways(echo_server):
    # 3 MB is far more than HTTP/2's initial 64 KB windows and 16 KB frames: the request is sent
    # as the server opens its windows, the answer arrives in many frames.
    port, _ = echo_server
    text = "".join(chr(ord("a") + i % 26) for i in range(3_000_000))
    with GrpcChannel.connect("127.0.0.1", port, timeout=30) as channel:
        for status in (1, 2):
            answer = call(channel, status, text)
            assert answer.header.status == status + 1
            assert answer.header.message == text
        assert call(channel, 7).header.status == 8


def test_a_refused_call_raises_call_failed_with_the_servers_status(echo_server):
    port, _ = echo_server
    with GrpcChannel.connect("127.0.0.1", port, timeout=30) as channel:
        with pytest.raises(CallFailed) as failure:
            call(channel, 999)
        assert failure.value.status == grpc.StatusCode.INVALID_ARGUMENT.value[0]
        assert failure.value.message == "status 999 is refused"
        # The connection stays usable: only that call failed.
        assert call(channel, 5).header.status == 6


def test_a_server_that_stops_ends_the_connection():
    server, port, _ = start_server()
    channel = GrpcChannel.connect("127.0.0.1", port, timeout=30)
    assert channel is not None
    assert call(channel, 1).header.status == 2
    server.stop(0).wait()
    with pytest.raises(ConnectionEnded):
        call(channel, 1)
    channel.close()
    channel.close()  # idempotent


def test_connect_gives_up_after_its_timeout_when_nothing_listens():
    port = find_free_port_range(1)
    waits = []
    assert GrpcChannel.connect("127.0.0.1", port, timeout=0.3, on_wait=lambda: waits.append(1)) is None
    assert waits == []  # said only after the first second of waiting


def test_connect_waits_for_a_server_that_starts_later():
    port = find_free_port_range(1)
    waiting = threading.Event()
    result: list[GrpcChannel | None] = []

    def connect() -> None:
        result.append(GrpcChannel.connect("127.0.0.1", port, timeout=60, on_wait=waiting.set))

    thread = threading.Thread(target=connect)
    thread.start()
    waiting.wait(timeout=60)  # the client said it waits: nothing listened for a second
    assert waiting.is_set()
    server, _, _ = start_server(port)
    try:
        thread.join(timeout=60)
        channel = result[0]
        assert channel is not None
        with channel:
            assert call(channel, 41).header.status == 42
    finally:
        server.stop(0).wait()


def test_the_request_header_block_is_plain_literals_that_leave_the_table_alone():
    block = request_header_block("127.0.0.1:5005", EXCHANGE)
    assert leaves_table(block)
    assert b"/communicator_objects.UnityToExternal/Exchange" in block
    assert block.startswith(b"\x00\x07:method\x04POST")


def test_leaves_table_tells_blocks_that_change_the_dynamic_table():
    encoder = Encoder()
    first = encoder.encode([(":status", "200"), ("content-type", "application/grpc")])
    again = encoder.encode([(":status", "200"), ("content-type", "application/grpc")])
    assert not leaves_table(first)  # content-type enters the table
    assert leaves_table(again)  # now both are references into it
    assert leaves_table(encoder.encode([NeverIndexedHeaderTuple("grpc-message", "x" * 300)]))
    encoder.header_table_size = 1024
    assert not leaves_table(encoder.encode([(":status", "200")]))  # carries a table size update
