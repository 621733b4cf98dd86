"""The ``player`` brain type: keys pressed in the terminal become the agents' actions.

Like Unity's Player brain, a scene gives each brain a key table (:meth:`Scene.player_keys`):
key -> (index, value). For a continuous brain the action starts at zeros and every held key sets
``action[index] = value``; for a discrete brain every branch starts at 0 and a held key sets
``action[branch] = value``. All the brain's agents get the same action.

Keys are read from the build's standard input, which must be a terminal (it is put in cbreak
mode: no echo, no line buffering, Ctrl-C still stops the build; it is restored when the build
stops). Key names: lower-case letters and digits, ``space``, ``up``, ``down``, ``left``, ``right``.

Two ways to play (``--brain-type BRAIN=player[:MODE]``):

* ``realtime`` (default): the academy runs at real time (one 0.02 s physics step per 0.02 s) and a
  key counts as held for :data:`HOLD_SECONDS` after each character the terminal sends (a held key
  repeats), so tapping a key acts for a moment and holding it keeps acting.
* ``turns``: each decision takes the next key typed (waiting for one if none is pending) and holds
  it for that one decision; a key that is not in the table means "no key" (the zero action).
  Good for grid games and tests.
"""

from __future__ import annotations

import atexit
import os
import select
import sys
import termios
import time
import tty
from collections.abc import Mapping

import numpy as np

from .controller import BrainController, BrainSetupError
from .messages import DecisionBatch
from .scene import Scene
from .specs import BrainSpec

#: The brain type's name.
PLAYER = "player"
#: Seconds a key counts as held after the terminal sent it (realtime mode).
HOLD_SECONDS = 0.12
MODES = ("realtime", "turns")

_ESCAPES = {"\x1b[A": "up", "\x1b[B": "down", "\x1b[C": "right", "\x1b[D": "left"}


def key_names(text: str) -> list[str]:
    """Key names in the characters a terminal sent (arrow escape sequences, space, letters)."""
    names = []
    i = 0
    while i < len(text):
        sequence = text[i : i + 3]
        if sequence in _ESCAPES:
            names.append(_ESCAPES[sequence])
            i += 3
            continue
        char = text[i]
        i += 1
        if char == " ":
            names.append("space")
        elif char.isprintable():
            names.append(char.lower())
    return names


def player_actions(
    brain: BrainSpec, table: Mapping[str, tuple[int, float]], held: set[str], k: int
) -> np.ndarray:
    """The action of ``k`` agents for the held keys (later table entries win on the same index)."""
    row = np.zeros(brain.action_length, dtype=np.float32)
    for key, (index, value) in table.items():
        if key in held:
            row[index] = value
    return np.tile(row, (k, 1))


class TerminalKeys:
    """Characters typed in a terminal, read without blocking (cbreak mode while open)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._saved: list | None = termios.tcgetattr(fd)  # type: ignore[type-arg]
        # TCSANOW: keep what was typed before the build started (TCSAFLUSH would drop it).
        tty.setcbreak(fd, termios.TCSANOW)
        atexit.register(self.close)

    def read(self, wait: bool = False) -> str:
        """Everything typed since the last call; with ``wait``, block until something is typed."""
        chunks = []
        timeout: float | None = None if wait else 0.0
        while select.select([self.fd], [], [], timeout)[0]:
            data = os.read(self.fd, 1024)
            if not data:
                break
            chunks.append(data.decode(errors="ignore"))
            timeout = 0.0
        return "".join(chunks)

    def close(self) -> None:
        """Give the terminal its settings back (idempotent)."""
        if self._saved is not None:
            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            except termios.error:
                pass  # the terminal is gone
            self._saved = None


class PlayerController:
    """Acts with the keys held in the terminal (see the module description)."""

    def __init__(
        self, scene: Scene, brain: BrainSpec, mode: str = "realtime", keys: TerminalKeys | None = None
    ) -> None:
        self.scene = scene
        self.brain = brain
        self.mode = mode
        self.table = dict(type(scene).player_keys(brain.name) or {})
        self.keys = keys if keys is not None else TerminalKeys(sys.stdin.fileno())
        self._last_seen: dict[str, float] = {}
        self._pending: list[str] = []
        self._clock_start: float | None = None
        self._steps_start = 0

    def held_keys(self) -> set[str]:
        """The keys that count as held for this decision."""
        if self.mode == "turns":
            while not self._pending:
                self._pending.extend(key_names(self.keys.read(wait=True)))
            return {self._pending.pop(0)}
        now = time.monotonic()
        for name in key_names(self.keys.read()):
            self._last_seen[name] = now
        return {name for name, seen in self._last_seen.items() if now - seen <= HOLD_SECONDS}

    def _pace(self) -> None:
        """Realtime mode: wait until the wall clock has caught up with the academy's physics time."""
        academy = self.scene.academy
        now = time.monotonic()
        if self._clock_start is None:
            self._clock_start, self._steps_start = now, academy.total_step_count
            return
        due = self._clock_start + (academy.total_step_count - self._steps_start) * academy.FIXED_DELTA_TIME
        if due > now:
            time.sleep(due - now)

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        if self.mode == "realtime":
            self._pace()
        return player_actions(self.brain, self.table, self.held_keys(), len(batch.agents))

    def close(self) -> None:
        self.keys.close()


def stdin_is_terminal() -> bool:
    """True when the build's standard input is a terminal it can read keys from."""
    try:
        return sys.stdin is not None and os.isatty(sys.stdin.fileno())
    except (OSError, ValueError):
        return False


def player_check(scene: type[Scene], brain: BrainSpec, argument: str | None) -> None:
    """Refuse a player brain without a key table, with an unknown mode, or without a terminal."""
    if argument is not None and argument not in MODES:
        raise BrainSetupError(
            f"Brain '{brain.name}': the player brain type takes {' or '.join(MODES)}, not {argument!r}."
        )
    table = scene.player_keys(brain.name)
    if not table:
        raise BrainSetupError(f"{scene.__name__} has no player key table for brain '{brain.name}'.")
    for key, (index, _value) in table.items():
        if not 0 <= index < brain.action_length:
            raise BrainSetupError(
                f"{scene.__name__}: player key '{key}' of brain '{brain.name}' sets index {index}, "
                f"outside 0..{brain.action_length - 1}."
            )
    if not stdin_is_terminal():
        raise BrainSetupError(
            f"Brain '{brain.name}' is a player brain, which reads keys from a terminal, but this build's "
            "standard input is not a terminal: start the build from a terminal (and Python with "
            f"file_name=None), or use --brain-type {brain.name}=heuristic."
        )


def player_factory(scene: Scene, brain: BrainSpec, argument: str | None) -> BrainController:
    player_check(type(scene), brain, argument)
    return PlayerController(scene, brain, argument or "realtime")
