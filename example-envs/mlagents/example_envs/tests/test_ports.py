"""The port allocator: ranges from below the ephemeral range, never the same to two processes while
reserved, free again once their owner is gone or their lease ran out, never a port in use."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlagents.example_envs.ports import (
    LEASE_SECONDS,
    REGISTRY,
    WINDOW_FLOOR,
    find_free_port_range,
    port_window,
    reserve_port_range,
)


def range_file(tmp_path: Path, low: int, high: int) -> Path:
    path = tmp_path / "ip_local_port_range"
    path.write_text(f"{low}\t{high}\n")
    return path


def test_window_below_the_ephemeral_range_else_above_it_else_everything(tmp_path: Path) -> None:
    assert port_window(range_file(tmp_path, 32768, 60999)) == (WINDOW_FLOOR, 32768)
    assert port_window(range_file(tmp_path, 21000, 60999)) == (61000, 65536)
    assert port_window(range_file(tmp_path, 1024, 65535)) == (1024, 65536)
    assert port_window(tmp_path / "missing") == (WINDOW_FLOOR, 32768)  # Linux's default


def test_the_machine_window_avoids_the_ephemeral_range() -> None:
    ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    base = find_free_port_range(3)
    low, high = port_window()
    assert low <= base and base + 3 <= high
    if ephemeral_low - WINDOW_FLOOR >= 2000:
        assert base + 3 <= ephemeral_low


@pytest.fixture
def window() -> tuple[int, int]:
    """Four ports that no other test uses (reserved through the machine's registry)."""
    base = find_free_port_range(4)
    return base, base + 4


def test_a_reservation_holds_while_its_owner_lives_and_its_lease_runs(tmp_path: Path, window) -> None:
    registry = tmp_path / "registry.json"
    first = reserve_port_range(2, registry, window, now=1000.0)
    second = reserve_port_range(2, registry, window, now=1000.0)
    assert {first, second} == {window[0], window[0] + 2}
    with pytest.raises(RuntimeError, match="found no 1 consecutive free ports"):
        reserve_port_range(1, registry, window, now=1000.0 + LEASE_SECONDS - 1)
    reservations = json.loads(registry.read_text())["reservations"]
    assert [(base, count, pid) for base, count, pid, _ in reservations] == [
        (first, 2, os.getpid()),
        (second, 2, os.getpid()),
    ]


def test_the_lease_expires(tmp_path: Path, window) -> None:
    registry = tmp_path / "registry.json"
    whole = (window[0], window[0] + 2)
    assert reserve_port_range(2, registry, whole, lease=10.0, now=1000.0) == whole[0]
    with pytest.raises(RuntimeError):
        reserve_port_range(2, registry, whole, lease=10.0, now=1009.0)
    assert reserve_port_range(2, registry, whole, lease=10.0, now=1010.0) == whole[0]


def test_the_range_of_a_dead_owner_is_reused(tmp_path: Path, window) -> None:
    registry = tmp_path / "registry.json"
    script = (
        "import sys; from pathlib import Path; from mlagents.example_envs.ports import reserve_port_range; "
        "print(reserve_port_range(4, Path(sys.argv[1]), (int(sys.argv[2]), int(sys.argv[3]))))"
    )
    child = subprocess.run(
        [sys.executable, "-c", script, str(registry), *map(str, window)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(child.stdout) == window[0]
    (owner,) = [pid for _, _, pid, _ in json.loads(registry.read_text())["reservations"]]
    assert owner != os.getpid()  # the child, ended and reaped by subprocess.run
    assert reserve_port_range(4, registry, window) == window[0]


def test_a_port_in_use_is_skipped(tmp_path: Path, window) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", window[0] + 1))
        listener.listen()
        assert reserve_port_range(2, tmp_path / "registry.json", window) == window[0] + 2


def test_the_search_goes_on_where_the_last_one_stopped(tmp_path: Path, window) -> None:
    registry = tmp_path / "registry.json"
    assert [reserve_port_range(1, registry, window, lease=0.0) for _ in range(5)] == [
        window[0],
        window[0] + 1,
        window[0] + 2,
        window[0] + 3,
        window[0],  # round the window: the expired reservation of the first is free again
    ]


def test_an_unreadable_registry_starts_over(tmp_path: Path, window) -> None:
    registry = tmp_path / "registry.json"
    registry.write_text('{"next": 5, "reservations": [[1, 2')
    assert reserve_port_range(1, registry, window) == window[0]
    with pytest.raises(ValueError, match="at least 1"):
        reserve_port_range(0, registry, window)


ALLOCATOR = textwrap.dedent(
    """
    import json, sys
    from mlagents.example_envs.ports import find_free_port_range
    print("ready", flush=True)
    sys.stdin.readline()
    print(json.dumps([find_free_port_range(2) for _ in range(20)]), flush=True)
    """
)


def test_processes_allocating_at_once_never_overlap(tmp_path: Path) -> None:
    """Three processes, each with its own TMPDIR as the tests give them, allocate 20 ranges of 2
    ports each at the same moment through the machine's registry."""
    children = []
    for index in range(3):
        folder = tmp_path / f"child{index}"
        folder.mkdir()
        children.append(
            subprocess.Popen(
                [sys.executable, "-c", ALLOCATOR],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "TMPDIR": str(folder)},
            )
        )
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        for child in children:  # all are waiting: start them together
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        bases = [base for child in children for base in json.loads(child.communicate(timeout=120)[0])]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    ports = [port for base in bases for port in range(base, base + 2)]
    assert len(bases) == 60 and len(set(ports)) == len(ports)
    assert REGISTRY.exists()
