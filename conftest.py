"""Project-wide test settings and fixtures."""
import socket
import tempfile
from collections.abc import Callable

import pytest


@pytest.fixture(autouse=True)
def _temporary_files_under_tmp_path(tmp_path, monkeypatch):
    """Build logs and other temporary folders of a test go under its own tmp_path (which pytest
    rotates), never into the machine's /tmp: also in worker processes, which read TMPDIR."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


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
    raise RuntimeError(f"found no {count} consecutive free loopback ports in 50 tries; is the machine out of ports?")


@pytest.fixture(scope="session")
def free_port_range() -> Callable[[int], int]:
    """``free_port_range(count)``: a base port whose ``count`` consecutive loopback ports are
    free right now (for ``UnityEnvironment(base_port=...)`` with ``count`` workers)."""
    return find_free_port_range
