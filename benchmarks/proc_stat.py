"""A process's figures from Linux's /proc/PID/stat, for the benchmarks that count CPU seconds."""

from __future__ import annotations

import os
from pathlib import Path

#: Clock ticks per second of the CPU times in /proc/PID/stat.
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat from the state on (index 0 = state, 1 = parent pid, 3 =
    session, 11 and 12 = user and system ticks, 13 and 14 = those of the children it reaped), or
    None when the process has ended. The command name before them may hold spaces, so the fields
    are read after its closing parenthesis."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def own_cpu_ticks(fields: list[str]) -> int:
    """User + system clock ticks of the process itself (all its threads) from :func:`stat_fields`."""
    return int(fields[11]) + int(fields[12])
