"""Free loopback ports for running builds side by side: ``UnityEnvironment(base_port=...)`` with
``n`` workers uses ports ``base_port .. base_port + n - 1``. The tests (fixture ``free_port_range``
of the root conftest.py) and the benchmark scripts take their ports from here."""

from __future__ import annotations

import socket

__all__ = ["find_free_port_range"]


def find_free_port_range(count: int = 1) -> int:
    """A base port such that ``count`` consecutive loopback ports (base .. base + count - 1)
    are free right now: all of them are bound at once to check.

    :raises RuntimeError: if 50 candidates from the kernel's port-0 picks all failed.
    """
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65536:
            continue
        held = []
        try:
            for port in range(base, base + count):
                sock = socket.socket()
                held.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
    raise RuntimeError(
        f"found no {count} consecutive free loopback ports in 50 tries; is the machine out of ports?"
    )
