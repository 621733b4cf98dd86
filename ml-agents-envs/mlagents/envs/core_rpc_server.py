"""The ``UnityToExternal`` service on gRPC's core, driven by the thread that waits for the environment.

The environment (the client) makes one ``Exchange`` call at a time and waits for the answer.
gRPC's ready-made servers run handlers on pool threads, so every exchange crosses threads twice
(the call is handed to the waiting thread, the answer handed back), and each crossing costs a
wake-up and a transfer of the interpreter lock. This server has no thread of its own: the thread
that waits for the next call polls the server's completion queue itself, receives the call there
and answers it from there. Each exchange then costs one wake-up of that thread.

It uses the server layer under ``grpc.server`` (``grpc._cython.cygrpc``), the same calls
``grpc.server`` makes; :func:`core_server_available` tells whether the installed grpcio offers them
(``RpcCommunicator`` falls back to the thread-pool server otherwise). The bytes on the wire are
those of any gRPC server: plain unary calls with the same messages.
"""

import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from mlagents.envs.communicator_objects import UnityInput, UnityMessage
from mlagents.envs.wire import encode_varint

try:
    from grpc._cython import cygrpc
except ImportError:  # pragma: no cover - a grpcio without its core layer
    cygrpc = None

EXCHANGE_METHOD = b"/communicator_objects.UnityToExternal/Exchange"
NO_FLAGS = 0

# Completion-queue tags: the kind of operation, and for call operations the call it belongs to.
_NEW_CALL = "new call"
_SHUTDOWN = "shutdown"
_RECEIVED = "received"
_ANSWERED = "answered"
_CLIENT_DONE = "client done"
_REJECTED = "rejected"

# A serialized ``UnityMessage`` is its fields in order: the header (status 200), then the input
# (field 3, length-delimited), so an answer is these bytes, the input's length and the input.
_OK_HEADER = UnityMessage(header={"status": 200}).SerializeToString()
_INPUT_KEY = b"\x1a"


def ok_message_bytes(inputs: UnityInput) -> bytes:
    """The serialized ``UnityMessage`` with status 200 and ``inputs`` (without copying ``inputs``)."""
    body = inputs.SerializeToString()
    return b"".join((_OK_HEADER, _INPUT_KEY, encode_varint(len(body)), body))


def core_server_available() -> bool:
    """Whether the installed grpcio has the core server calls this module uses."""
    if cygrpc is None:
        return False
    needed = {
        "CompletionQueue": ("poll", "shutdown"),
        "Server": ("add_http2_port", "request_call", "start", "shutdown", "cancel_all_calls", "destroy"),
        "Call": ("start_server_batch",),
    }
    return all(
        hasattr(cygrpc, cls) and all(hasattr(getattr(cygrpc, cls), m) for m in methods)
        for cls, methods in needed.items()
    ) and all(
        hasattr(cygrpc, op)
        for op in (
            "ReceiveMessageOperation",
            "ReceiveCloseOnServerOperation",
            "SendInitialMetadataOperation",
            "SendMessageOperation",
            "SendStatusFromServerOperation",
        )
    )


class _Call:
    """One ``Exchange`` call of the environment: gRPC's call object and, once received, its request."""

    __slots__ = ("call", "request", "answered")

    def __init__(self, call: Any) -> None:
        self.call = call
        self.request: bytes | None = None
        self.answered = False


class CoreExchangeServer:
    """Listens on ``address`` and hands out the environment's calls to whoever waits for them.

    Not thread-safe: one thread at a time uses it (any thread; the waiting one drives gRPC).

    :param address: ``host:port`` to listen on.
    :param options: gRPC channel arguments of the server.
    :raises OSError: the address cannot be bound.
    """

    def __init__(self, address: str, options: Sequence[tuple[str, Any]]) -> None:
        self._queue = cygrpc.CompletionQueue()
        self._server = cygrpc.Server(tuple(options), False)
        self._server.register_completion_queue(self._queue)
        if self._server.add_http2_port(address.encode()) == 0:
            self._server.destroy()
            self._drain_queue()
            raise OSError(f"cannot bind {address}")
        self._server.start()
        self._server.request_call(self._queue, self._queue, _NEW_CALL)
        # Calls whose request arrived, oldest first, not yet handed out.
        self._arrived: deque[_Call] = deque()
        # The call handed out by ``next_call`` and not answered yet.
        self._pending: _Call | None = None
        self._shutting_down = False
        self._shut_down = False
        self._closed = False
        # What late calls get once closed (the goodbye message).
        self._goodbye = b""

    @property
    def has_pending_call(self) -> bool:
        """Whether a call was handed out and not answered yet (the environment waits for us)."""
        return self._pending is not None

    def next_call(self, timeout: float) -> UnityMessage | None:
        """The next call's request, or None when none arrived within ``timeout`` seconds."""
        if not self._arrived:
            deadline = time.time() + timeout
            while not self._arrived:
                event = self._queue.poll(deadline)
                if event.completion_type == cygrpc.CompletionType.queue_timeout:
                    return None
                self._handle(event)
        call = self._arrived.popleft()
        self._pending = call
        assert call.request is not None
        return UnityMessage.FromString(call.request)

    def answer(self, message: UnityMessage) -> None:
        """Answer the call handed out last with ``message``."""
        call, self._pending = self._pending, None
        if call is not None:
            self._send(call, message.SerializeToString())

    def answer_input(self, inputs: UnityInput) -> None:
        """Answer the call handed out last with status 200 and ``inputs``."""
        self.answer_serialized(ok_message_bytes(inputs))

    def answer_serialized(self, payload: bytes) -> None:
        """Like :meth:`answer`, with the message already serialized."""
        call, self._pending = self._pending, None
        if call is not None:
            self._send(call, payload)

    def close(self, goodbye: UnityMessage, grace: float) -> None:
        """Answer the pending call and every waiting one with ``goodbye``, give the answers up to
        ``grace`` seconds to leave, then end every call and free the port. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        payload = self._goodbye = goodbye.SerializeToString()
        if self._pending is not None:
            self.answer_serialized(payload)
        while self._arrived:
            self._send(self._arrived.popleft(), payload)
        self._shutting_down = True
        self._server.shutdown(self._queue, _SHUTDOWN)
        self._poll_until_shut_down(time.time() + grace)
        if not self._shut_down:
            self._server.cancel_all_calls()
            self._poll_until_shut_down(time.time() + 5.0)
        self._server.destroy()
        self._drain_queue()

    # ----------------------------------------------------------------------------------------------

    def _send(self, call: _Call, payload: bytes) -> None:
        call.answered = True
        call.call.start_server_batch(
            (
                cygrpc.SendInitialMetadataOperation(None, NO_FLAGS),
                cygrpc.SendMessageOperation(payload, NO_FLAGS),
                cygrpc.SendStatusFromServerOperation(None, cygrpc.StatusCode.ok, b"", NO_FLAGS),
            ),
            (_ANSWERED, call),
        )

    def _handle(self, event: Any) -> None:
        tag = event.tag
        if tag is _NEW_CALL:
            self._new_call(event)
        elif tag is _SHUTDOWN:
            self._shut_down = True
        elif tag[0] is _RECEIVED:
            call = tag[1]
            operations = event.batch_operations
            request = operations[0].message() if event.success and operations else None
            if request is None:
                # The client went away before sending its request: end the call.
                call.call.cancel()
            elif self._closed:
                # The request of a call that started before close: nobody will answer it.
                call.request = request
                self._send(call, self._goodbye)
            else:
                call.request = request
                self._arrived.append(call)
        # _ANSWERED, _CLIENT_DONE, _REJECTED: nothing left to do for that call.

    def _new_call(self, event: Any) -> None:
        if not event.success or event.call is None:
            return  # the server is shutting down
        call = _Call(event.call)
        # Re-arm at once so that the environment's next call is accepted while this one runs.
        if not self._shutting_down:
            self._server.request_call(self._queue, self._queue, _NEW_CALL)
        if event.call_details.method != EXCHANGE_METHOD:
            call.call.start_server_batch(
                (
                    cygrpc.SendInitialMetadataOperation(None, NO_FLAGS),
                    cygrpc.ReceiveCloseOnServerOperation(NO_FLAGS),
                    cygrpc.SendStatusFromServerOperation(
                        None, cygrpc.StatusCode.unimplemented, b"Method not found!", NO_FLAGS
                    ),
                ),
                (_REJECTED, call),
            )
            return
        call.call.start_server_batch((cygrpc.ReceiveMessageOperation(NO_FLAGS),), (_RECEIVED, call))
        call.call.start_server_batch((cygrpc.ReceiveCloseOnServerOperation(NO_FLAGS),), (_CLIENT_DONE, call))

    def _poll_until_shut_down(self, deadline: float) -> None:
        while not self._shut_down:
            event = self._queue.poll(deadline)
            if event.completion_type == cygrpc.CompletionType.queue_timeout:
                return
            self._handle(event)

    def _drain_queue(self) -> None:
        """Shut the completion queue down and take every remaining event out of it."""
        self._queue.shutdown()
        deadline = time.time() + 5.0
        while True:
            event = self._queue.poll(deadline)
            if event.completion_type != cygrpc.CompletionType.operation_complete:
                return
