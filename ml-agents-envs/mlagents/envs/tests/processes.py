"""What a test left running, read from ``/proc``: live processes by parent, process group, session
or ``--port`` argument, and whether a loopback port can be bound again.

The tests of every package may use these checks (``from mlagents.envs.tests.processes import
session_members``): a test looks only at its own children, groups, sessions or ports, never at all
the processes of the machine.
"""

import os
import socket
import subprocess
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name: ``[state, ppid, pgrp, session,
    ...]``; None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: the fields start after the last ')'.
    return stat[stat.rindex(")") + 2 :].split()


def process_alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    fields = stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def live_processes() -> Iterator[tuple[int, list[str]]]:
    """``(pid, stat fields)`` of every live (not zombie) process (see :func:`stat_fields`)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields is not None and fields[0] != "Z":
                yield int(entry), fields


def live_children() -> set[int]:
    """Live child processes of this process, except multiprocessing's shared resource tracker (one
    per interpreter, owned by no manager)."""
    children = set()
    for pid, fields in live_processes():
        if int(fields[1]) != os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in cmdline:
            children.add(pid)
    return children


def process_group_members(pgid: int) -> list[int]:
    """Live pids whose process group is ``pgid``."""
    return [pid for pid, fields in live_processes() if int(fields[2]) == pgid]


def session_members(sid: int) -> list[int]:
    """Live pids whose session is ``sid`` (e.g. the processes a ``ray start`` left running)."""
    return [pid for pid, fields in live_processes() if int(fields[3]) == sid]


def builds_on_ports(ports: Collection[int]) -> list[int]:
    """Live processes started with ``--port P`` for a P in ``ports``: the builds of those ports,
    wherever they were reparented."""
    wanted = {str(port).encode() for port in ports}
    found = []
    for pid, _ in live_processes():
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(flag == b"--port" and value in wanted for flag, value in zip(args, args[1:])):
            found.append(pid)
    return found


def port_is_free(port: int) -> bool:
    """True when ``port`` can be bound again on loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``condition`` every 20 ms for up to ``timeout`` seconds; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def assert_nothing_left(
    pids: Collection[int] = (),
    ports: Collection[int] = (),
    children_before: set[int] | None = None,
    timeout: float = 5.0,
) -> None:
    """Within ``timeout`` seconds: every process of ``pids`` ended, no build of ``ports`` runs and,
    given ``children_before``, no child process started since then is alive. The wait lets a build
    orphaned by a killed worker be reaped by init."""

    def left() -> tuple[list[int], list[int], set[int]]:
        alive = [pid for pid in pids if process_alive(pid)]
        new_children = live_children() - children_before if children_before is not None else set()
        return alive, builds_on_ports(ports), new_children

    wait_until(lambda: left() == ([], [], set()), timeout)
    assert left() == ([], [], set()), "(processes, builds on the ports, new children) left running"


def assert_process_gone(popen: subprocess.Popen[bytes]) -> None:
    """The build ``popen`` ended, was reaped, and nothing of its process group survives (a build is
    started as the leader of its own session)."""
    assert popen is not None
    assert popen.poll() is not None, "the build process is still running"
    assert not Path(f"/proc/{popen.pid}").exists() or _is_other_process(popen.pid)
    # A killed grandchild dies asynchronously (SIGKILL is delivered, then the kernel tears it down).
    assert wait_until(lambda: process_group_members(popen.pid) == [], timeout=2.0), process_group_members(
        popen.pid
    )


def _is_other_process(pid: int) -> bool:
    # The pid was recycled by an unrelated process: it is not in the build's session.
    try:
        return os.getsid(pid) != pid
    except ProcessLookupError:
        return True
