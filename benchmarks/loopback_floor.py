"""The least CPU a build can spend per exchange over TCP loopback, beside Basic's scene cost.

A build exchanges one request and one reply with Python per environment step. Whatever the
build's code, each exchange costs it a ``sendall`` of its output and a blocking ``recv`` of the
answer: the kernel's loopback TCP path and a sleep / wake-up. This benchmark measures exactly that
and nothing else: two processes on raw TCP sockets, one sending ``--request`` bytes and waiting for
``--reply`` bytes, the other answering at once, no HTTP/2, no protobuf. It prints the CPU
microseconds per round trip of the sending side (the build's place; user and system time apart)
and of the answering side, then Basic's scene stepped in process (``LocalEnvironment``, no wire)
and what the two give together: the floor of Basic's build over the wire, as a multiple of its
scene alone.

The default sizes are those of Basic's exchange (its output message with HTTP/2 and gRPC framing,
about 180 bytes; Python's answer with its headers and trailers, about 100 bytes).

Usage::

    python benchmarks/loopback_floor.py
    python benchmarks/loopback_floor.py --request 1200 --reply 300 --round-trips 50000

Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import socket
import sys
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sdk_overhead import local_step_time


def _receive_exactly(connection: socket.socket, size: int) -> None:
    remaining = size
    while remaining:
        chunk = connection.recv(remaining)
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        remaining -= len(chunk)


def _cpu_seconds() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def answer(port_pipe: Connection, request: int, reply: int, round_trips: int) -> None:
    """The answering side: accept one connection, answer ``round_trips`` requests, report its CPU."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port_pipe.send(server.getsockname()[1])
        connection, _ = server.accept()
    with connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        payload = bytes(reply)
        _receive_exactly(connection, request)  # the warm-up round trip
        connection.sendall(payload)
        start = _cpu_seconds()
        for _ in range(round_trips):
            _receive_exactly(connection, request)
            connection.sendall(payload)
        end = _cpu_seconds()
    port_pipe.send((end[0] - start[0], end[1] - start[1]))


def round_trip_cpu(
    request: int, reply: int, round_trips: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(user, system) CPU seconds per round trip of the sending side, then of the answering side."""
    ours, theirs = multiprocessing.Pipe()
    responder = multiprocessing.Process(target=answer, args=(theirs, request, reply, round_trips))
    responder.start()
    try:
        port = ours.recv()
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            payload = bytes(request)
            connection.sendall(payload)
            _receive_exactly(connection, reply)
            start = _cpu_seconds()
            for _ in range(round_trips):
                connection.sendall(payload)
                _receive_exactly(connection, reply)
            end = _cpu_seconds()
        answering = ours.recv()
    finally:
        responder.join(timeout=30)
        if responder.is_alive():
            responder.kill()
    sending = (end[0] - start[0], end[1] - start[1])
    return (
        (sending[0] / round_trips, sending[1] / round_trips),
        (answering[0] / round_trips, answering[1] / round_trips),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--request", type=int, default=180, help="bytes the build sends (default 180)")
    parser.add_argument("--reply", type=int, default=100, help="bytes Python answers (default 100)")
    parser.add_argument("--round-trips", type=int, default=20000, help="timed round trips (default 20000)")
    parser.add_argument("--rounds", type=int, default=3, help="measurements; the lowest is kept (default 3)")
    args = parser.parse_args()
    if min(args.request, args.reply, args.round_trips, args.rounds) < 1:
        raise SystemExit("--request, --reply, --round-trips and --rounds must be positive")

    results = [round_trip_cpu(args.request, args.reply, args.round_trips) for _ in range(args.rounds)]
    sending, answering = min(results, key=lambda result: sum(result[0]))
    floor = sum(sending)
    print(f"TCP loopback, {args.request} bytes there and {args.reply} back, lowest of {args.rounds} rounds:")
    print(
        f"  sending side (the build):   {floor * 1e6:6.1f} us CPU per round trip "
        f"(user {sending[0] * 1e6:.1f}, system {sending[1] * 1e6:.1f})"
    )
    print(f"  answering side (Python):    {sum(answering) * 1e6:6.1f} us CPU per round trip")
    scene = local_step_time("Basic", "BasicLearning", np.zeros((1, 1), dtype=np.float32), 5000)
    print(f"Basic's scene in process:     {scene * 1e6:6.1f} us per step (LocalEnvironment, no wire)")
    print(
        f"Basic's build can cost no less than {(scene + floor) * 1e6:.1f} us per step over TCP loopback: "
        f"{(scene + floor) / scene:.2f}x its scene alone, before any message is built or read."
    )


if __name__ == "__main__":
    main()
