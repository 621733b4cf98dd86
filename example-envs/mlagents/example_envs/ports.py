"""Free loopback ports for running builds side by side: ``UnityEnvironment(base_port=...)`` with
``n`` workers uses ports ``base_port .. base_port + n - 1``. The tests (fixtures ``free_port_range``
and ``free_port`` of the root conftest.py) and the benchmark scripts take their ports from here.

Ranges never overlap between the processes of one machine (test workers, concurrent test runs,
benchmarks), because:

* they come from a window below the kernel's ephemeral range (``ip_local_port_range``), from
  which the kernel picks the local port of outgoing connections and of port-0 binds, and above
  the ports that services and Ray's workers (10002-19999) use by default;
* every range handed out is written to a reservation file shared by all processes of the machine
  (``REGISTRY``), read and rewritten under an exclusive ``flock``. A reservation holds while the
  process that made it is alive, for at most ``LEASE_SECONDS``: by then its build listens on the
  port, and a port that cannot be bound is never handed out;
* the search goes round the window from where the previous one stopped, so that a port comes back
  only after the whole window was handed out.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from pathlib import Path

__all__ = [
    "LEASE_SECONDS",
    "REGISTRY",
    "WINDOW_FLOOR",
    "find_free_port_range",
    "port_window",
    "reserve_port_range",
]

#: The reservation file shared by every process of the machine, whatever its TMPDIR (the tests set
#: one per test).
REGISTRY = Path("/tmp") / "mlagents-port-reservations.json"
#: Seconds a reservation holds while its owner lives (a build listens within seconds).
LEASE_SECONDS = 120.0
#: The lowest port handed out when the window lies below the ephemeral range.
WINDOW_FLOOR = 20000
#: Fewest ports a window must have to be used.
MIN_WINDOW = 2000


def port_window(range_file: Path = Path("/proc/sys/net/ipv4/ip_local_port_range")) -> tuple[int, int]:
    """The ports ``[low, high)`` that ranges are taken from: from ``WINDOW_FLOOR`` up to the
    ephemeral range, else above it, else (a machine whose ephemeral range leaves too little room)
    every unprivileged port, where only the bind check guards against the kernel's own picks."""
    try:
        ephemeral_low, ephemeral_high = map(int, range_file.read_text().split())
    except (OSError, ValueError):
        ephemeral_low, ephemeral_high = 32768, 60999  # Linux's default
    if ephemeral_low - WINDOW_FLOOR >= MIN_WINDOW:
        return WINDOW_FLOOR, ephemeral_low
    if 65536 - (ephemeral_high + 1) >= MIN_WINDOW:
        return ephemeral_high + 1, 65536
    return 1024, 65536


def _can_bind(port: int) -> bool:
    """True when ``port`` can be bound on every IPv4 address now (no listener, no connection
    lingering in TIME_WAIT)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("0.0.0.0", port))
        return True
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process
    return True


def reserve_port_range(
    count: int,
    registry: Path = REGISTRY,
    window: tuple[int, int] | None = None,
    lease: float = LEASE_SECONDS,
    now: float | None = None,
) -> int:
    """Reserve ``count`` consecutive bindable ports of ``window`` (default :func:`port_window`) for
    this process in ``registry`` for ``lease`` seconds from ``now`` (default: the wall clock);
    return the first.

    :raises RuntimeError: if no such range is free in the window.
    :raises ValueError: if ``count`` is below 1.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    low, high = window or port_window()
    now = time.time() if now is None else now
    fd = os.open(registry, os.O_RDWR | os.O_CREAT, 0o666)
    with os.fdopen(fd, "r+") as handle:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o666)  # processes of every user share the file (their umask aside)
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
        try:
            state = json.loads(handle.read() or "{}")
            held = [
                (base, size, pid, until)
                for base, size, pid, until in state.get("reservations", [])
                if until > now and _alive(pid)
            ]
            start = int(state.get("next", low))
        except (ValueError, TypeError, AttributeError):
            held, start = [], low  # an unreadable file (a writer that died mid-write) starts over
        base = _first_free_range(count, low, high, start, [(b, b + s) for b, s, _, _ in held])
        if base is None:
            raise RuntimeError(
                f"found no {count} consecutive free ports in {low}..{high - 1}: every range is "
                f"reserved (in {registry}) or in use"
            )
        held.append((base, count, os.getpid(), now + lease))
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"next": base + count, "reservations": held}))
    return base


def _first_free_range(
    count: int, low: int, high: int, start: int, taken: list[tuple[int, int]]
) -> int | None:
    """The first base from ``start`` on, going round ``[low, high)`` once, whose ``count`` ports
    overlap no ``[begin, end)`` of ``taken`` and can all be bound; None if there is none."""
    if not low <= start < high:
        start = low
    base, scanned = start, 0
    while scanned < high - low:
        if base + count > high:
            scanned += high - base
            base = low
            continue
        end = base + count
        blocker = next((stop for begin, stop in taken if begin < end and base < stop), None)
        if blocker is None:
            blocker = next((port + 1 for port in range(base, end) if not _can_bind(port)), None)
            if blocker is None:
                return base
        blocker = min(blocker, high)
        scanned += blocker - base
        base = blocker
    return None


def find_free_port_range(count: int = 1) -> int:
    """A base port such that ``count`` consecutive loopback ports (base .. base + count - 1) are
    free now and handed to no other process of this machine for a while (see the module's
    docstring).

    :raises RuntimeError: if the machine has no such range free.
    """
    return reserve_port_range(count)
