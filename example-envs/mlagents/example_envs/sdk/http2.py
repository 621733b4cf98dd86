"""The gRPC client of a build: unary calls over one HTTP/2 connection on a plain socket.

A build makes one call at a time and waits for its answer, for its whole life. gRPC's own client
library is made for many concurrent calls, deadlines and reconnection: for this one sequential
caller its per-call machinery (call objects, completion queues, its polling threads) costs about
0.17 ms of CPU per call, more than a small scene's whole step. This client writes and reads the
HTTP/2 frames of a call itself, on the thread that makes the call:

* one ``sendall`` per call: a HEADERS frame (a fixed header block, encoded once) and the DATA
  frames of the length-prefixed message, split as the server's flow-control windows and frame
  size allow (waiting for its WINDOW_UPDATEs when a message is larger than the window);
* the answer is read frame by frame: response headers, DATA, then the trailers with
  ``grpc-status``. Header blocks from the server are decoded with HPACK (``hpack``), which keeps
  the server's dynamic table in step. After the first calls a gRPC server's header blocks are
  references into that table and literals it does not keep, the same bytes every time: those
  are decoded once and remembered while the table stays as it is;
* the connection-level frames are answered as HTTP/2 requires: SETTINGS acknowledged (and applied),
  PINGs answered, the receive window re-opened as data arrives. A GOAWAY, a reset call or a closed
  socket end the connection (:class:`ConnectionEnded`).

The bytes on the wire are those of any gRPC client making plain unary calls without compression,
so every gRPC server answers them: ours, the original ML-Agents Python side, or any other.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from hpack import Decoder
from hpack.hpack import decode_integer, encode_integer

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# Frame types (RFC 9113, section 6).
DATA = 0x0
HEADERS = 0x1
RST_STREAM = 0x3
SETTINGS = 0x4
PUSH_PROMISE = 0x5
PING = 0x6
GOAWAY = 0x7
WINDOW_UPDATE = 0x8
CONTINUATION = 0x9

# Flags.
END_STREAM = 0x1
ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
PRIORITY = 0x20

# Settings identifiers.
SETTINGS_ENABLE_PUSH = 0x2
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
SETTINGS_MAX_FRAME_SIZE = 0x5

#: HTTP/2's defaults, in force until the server's SETTINGS say otherwise.
DEFAULT_WINDOW = 65_535
DEFAULT_MAX_FRAME = 16_384
#: The largest flow-control window HTTP/2 allows (2^31 - 1).
MAX_WINDOW = 2**31 - 1
#: The receive window is topped up once this much of it was used.
_REFILL_AT = MAX_WINDOW // 2

#: gRPC's "OK" status.
GRPC_OK = 0


class ConnectionEnded(ConnectionError):
    """The server closed the connection, sent GOAWAY, reset the call or answered with an error."""


class CallFailed(ConnectionEnded):
    """The server answered a call with a gRPC status other than OK (``status``, ``message``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"gRPC status {status}: {message}" if message else f"gRPC status {status}")
        self.status = status
        self.message = message


def frame_header(kind: int, flags: int, stream: int, length: int) -> bytes:
    """The 9 bytes before an HTTP/2 frame's payload: 24-bit length, type, flags, 31-bit stream id."""
    return length.to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big")


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame: its header, then ``payload``."""
    return frame_header(kind, flags, stream, len(payload)) + payload


def _literal(name: bytes, value: bytes) -> bytes:
    """One header as an HPACK literal without indexing and with a literal name: the server's
    dynamic table does not change, so the same block can be sent with every call."""
    return b"\x00" + bytes(encode_integer(len(name), 7)) + name + bytes(encode_integer(len(value), 7)) + value


def request_header_block(authority: str, path: str) -> bytes:
    """The header block of a unary gRPC call of ``path`` (``/package.Service/Method``)."""
    headers = (
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", path.encode()),
        (b":authority", authority.encode()),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
    )
    return b"".join(_literal(name, value) for name, value in headers)


def leaves_table(block: bytes) -> bool:
    """Whether decoding a (well-formed) HPACK header block leaves the dynamic table as it is: it
    holds only indexed fields and literals without indexing. Then the same bytes mean the same
    headers until some other block changes the table."""
    view = memoryview(block)
    at = 0
    while at < len(view):
        byte = view[at]
        if byte & 0x80:  # indexed field: a 7-bit-prefix index
            _, used = decode_integer(view[at:], 7)
            at += used
        elif byte & 0xE0 == 0:  # literal without indexing (0000) or never indexed (0001)
            index, used = decode_integer(view[at:], 4)
            at += used
            strings = 2 if index == 0 else 1  # a name of its own, then the value
            for _ in range(strings):
                length, used = decode_integer(view[at:], 7)  # the top bit is the Huffman flag
                at += used + length
        else:  # literal with indexing, or a table size update
            return False
    return True


#: How many distinct table-neutral header blocks are remembered (a gRPC server sends two or three).
_KNOWN_BLOCKS = 16


def _unpadded(flags: int, payload: bytes, priority: bool = False) -> bytes:
    """The payload of a DATA or HEADERS frame without its padding (and priority fields)."""
    start = 0
    end = len(payload)
    if flags & PADDED:
        start = 1
        end -= payload[0]
    if priority and flags & PRIORITY:
        start += 5
    if end < start:
        raise ConnectionEnded("the server sent a frame whose padding exceeds it")
    return payload[start:end]


class GrpcChannel:
    """One HTTP/2 connection to a gRPC server, making one unary call at a time (:meth:`unary`)."""

    def __init__(self, sock: socket.socket, authority: str) -> None:
        self._socket = sock
        self._authority = authority
        self._decoder = Decoder()
        self._known: dict[bytes, list[tuple[str, str]]] = {}
        self._inbox = bytearray()
        self._next_stream = 1
        self._blocks: dict[str, bytes] = {}
        # What the server lets us send: its frame size, its initial window per call, and the
        # connection's window.
        self._max_frame = DEFAULT_MAX_FRAME
        self._stream_window_start = DEFAULT_WINDOW
        self._connection_window = DEFAULT_WINDOW
        # The call in flight: its send window and what arrived of its answer.
        self._stream = 0
        self._stream_window = 0
        self._answer: list[bytes] = []
        self._headers: list[tuple[str, str]] | None = None
        self._trailers: list[tuple[str, str]] | None = None
        # Data received since the connection's receive window was last topped up.
        self._received = 0
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        settings = SETTINGS_ENABLE_PUSH.to_bytes(2, "big") + (0).to_bytes(4, "big")
        settings += SETTINGS_INITIAL_WINDOW_SIZE.to_bytes(2, "big") + MAX_WINDOW.to_bytes(4, "big")
        self._send(
            PREFACE
            + frame(SETTINGS, 0, 0, settings)
            + frame(WINDOW_UPDATE, 0, 0, (MAX_WINDOW - DEFAULT_WINDOW).to_bytes(4, "big"))
        )

    @classmethod
    def connect(
        cls,
        host: str,
        port: int,
        timeout: float,
        on_wait: Callable[[], None] | None = None,
        retry_interval: float = 0.2,
    ) -> GrpcChannel | None:
        """Connect to ``host:port``, trying again every ``retry_interval`` seconds while nothing
        listens there; None once ``timeout`` seconds passed. ``on_wait`` is called once, after the
        first second of trying (to say that the build waits)."""
        deadline = time.monotonic() + timeout
        told_at = time.monotonic() + 1.0
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
            except OSError:
                now = time.monotonic()
                if now >= deadline:
                    return None
                if on_wait is not None and now >= told_at:
                    on_wait()
                    on_wait = None
                time.sleep(min(retry_interval, max(0.0, deadline - now)))
                continue
            sock.settimeout(None)
            return cls(sock, f"{host}:{port}")

    def unary(self, path: str, request: bytes) -> bytes:
        """Call ``path`` with the serialized ``request``; returns the serialized answer.

        Raises :class:`ConnectionEnded` (or :class:`CallFailed`) when the connection or the call
        ends without an answer.
        """
        block = self._blocks.get(path)
        if block is None:
            block = self._blocks[path] = request_header_block(self._authority, path)
        stream = self._stream = self._next_stream
        self._next_stream += 2
        self._stream_window = self._stream_window_start
        self._answer = []
        self._headers = None
        self._trailers = None
        body = memoryview(b"\x00" + len(request).to_bytes(4, "big") + request)
        out: list[bytes | memoryview] = [frame(HEADERS, END_HEADERS, stream, block)]
        sent = 0
        while sent < len(body):
            size = min(self._connection_window, self._stream_window, self._max_frame, len(body) - sent)
            if size <= 0:
                # The server's windows are full: send what we have and wait for a WINDOW_UPDATE.
                self._send(b"".join(out))
                out = []
                self._handle(*self._read_frame())
                if self._trailers is not None:
                    break  # the server answered before reading everything (an error status)
                continue
            flags = END_STREAM if sent + size == len(body) else 0
            # The payload goes out as a view of the message: no copy per frame.
            out += (frame_header(DATA, flags, stream, size), body[sent : sent + size])
            self._connection_window -= size
            self._stream_window -= size
            sent += size
        if out:
            self._send(b"".join(out))
        while self._trailers is None:
            self._handle(*self._read_frame())
        self._stream = 0
        return self._result()

    def close(self) -> None:
        """Close the connection (a GOAWAY first, then the socket); idempotent."""
        if self._socket.fileno() < 0:
            return
        try:
            last = max(0, self._next_stream - 2)
            self._socket.sendall(frame(GOAWAY, 0, 0, last.to_bytes(4, "big") + (0).to_bytes(4, "big")))
        except OSError:
            pass
        self._socket.close()

    def __enter__(self) -> GrpcChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the answer ---------------------------------------------------------------------------------

    def _result(self) -> bytes:
        headers = dict(self._headers or ())
        trailers = dict(self._trailers or ())
        if headers.get(":status", "200") != "200":
            raise ConnectionEnded(f"the server answered with HTTP status {headers[':status']}")
        status = int(trailers.get("grpc-status", headers.get("grpc-status", "2")))
        if status != GRPC_OK:
            raise CallFailed(status, trailers.get("grpc-message", headers.get("grpc-message", "")))
        data = b"".join(self._answer)
        if len(data) < 5:
            raise ConnectionEnded("the server's answer has no message")
        if data[0] != 0:
            raise ConnectionEnded("the server compressed its answer, which this client did not ask for")
        length = int.from_bytes(data[1:5], "big")
        if len(data) != 5 + length:
            raise ConnectionEnded("the server's answer is not one whole message")
        return data[5:]

    # -- frames -------------------------------------------------------------------------------------

    def _send(self, data: bytes) -> None:
        try:
            self._socket.sendall(data)
        except OSError as error:
            raise ConnectionEnded(f"the connection was lost ({error.strerror or error})") from error

    def _fill(self) -> None:
        try:
            data = self._socket.recv(1 << 18)
        except OSError as error:
            raise ConnectionEnded(f"the connection was lost ({error.strerror or error})") from error
        if not data:
            raise ConnectionEnded("the server closed the connection")
        self._inbox += data

    def _read_frame(self) -> tuple[int, int, int, bytes]:
        inbox = self._inbox
        while len(inbox) < 9:
            self._fill()
        length = int.from_bytes(inbox[0:3], "big")
        while len(inbox) < 9 + length:
            self._fill()
        kind = inbox[3]
        flags = inbox[4]
        stream = int.from_bytes(inbox[5:9], "big") & 0x7FFF_FFFF
        payload = bytes(inbox[9 : 9 + length])
        del inbox[: 9 + length]
        return kind, flags, stream, payload

    def _handle(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if kind == DATA:
            self._received += len(payload)
            if self._received >= _REFILL_AT:
                self._send(frame(WINDOW_UPDATE, 0, 0, self._received.to_bytes(4, "big")))
                self._received = 0
            if stream == self._stream:
                self._answer.append(_unpadded(flags, payload))
                if flags & END_STREAM:
                    self._trailers = []
        elif kind == HEADERS:
            block = _unpadded(flags, payload, priority=True)
            ends_call = flags & END_STREAM
            while not flags & END_HEADERS:
                kind, flags, _, more = self._read_frame()
                if kind != CONTINUATION:
                    raise ConnectionEnded("the server broke a header block")
                block += more
            headers = self._decode(block)
            if stream == self._stream:
                if self._headers is None and not self._answer:
                    self._headers = headers
                    if ends_call:
                        self._trailers = headers  # a trailers-only answer: an error status
                else:
                    self._trailers = headers
        elif kind == SETTINGS:
            if not flags & ACK:
                self._apply_settings(payload)
                self._send(frame(SETTINGS, ACK, 0))
        elif kind == WINDOW_UPDATE:
            increment = int.from_bytes(payload[:4], "big") & 0x7FFF_FFFF
            if stream == 0:
                self._connection_window += increment
            elif stream == self._stream:
                self._stream_window += increment
        elif kind == PING:
            if not flags & ACK:
                self._send(frame(PING, ACK, 0, payload))
        elif kind == RST_STREAM:
            if stream == self._stream:
                code = int.from_bytes(payload[:4], "big")
                raise ConnectionEnded(f"the server reset the call (HTTP/2 error code {code})")
        elif kind == GOAWAY:
            code = int.from_bytes(payload[4:8], "big")
            raise ConnectionEnded(f"the server is going away (HTTP/2 error code {code})")
        elif kind == PUSH_PROMISE:
            raise ConnectionEnded("the server pushed although this client disabled pushes")
        # PRIORITY, CONTINUATION outside a block and unknown frame types are ignored.

    def _decode(self, block: bytes) -> list[tuple[str, str]]:
        """The headers of a block. Every block that may change the dynamic table goes through the
        decoder, whatever call it belongs to, to keep the table in step with the server's."""
        headers = self._known.get(block)
        if headers is not None:
            return headers
        headers = [(str(name), str(value)) for name, value in self._decoder.decode(block)]
        neutral = leaves_table(block)
        if not neutral or len(self._known) >= _KNOWN_BLOCKS:
            self._known.clear()
        if neutral:
            self._known[block] = headers
        return headers

    def _apply_settings(self, payload: bytes) -> None:
        for at in range(0, len(payload) - 5, 6):
            identifier = int.from_bytes(payload[at : at + 2], "big")
            value = int.from_bytes(payload[at + 2 : at + 6], "big")
            if identifier == SETTINGS_INITIAL_WINDOW_SIZE:
                # A change applies to the windows of open calls too (RFC 9113, 6.9.2).
                if self._stream:
                    self._stream_window += value - self._stream_window_start
                self._stream_window_start = value
            elif identifier == SETTINGS_MAX_FRAME_SIZE:
                self._max_frame = value
