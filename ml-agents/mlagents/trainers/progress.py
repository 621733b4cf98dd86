"""The console progress line of a training run (only on a terminal).

While ``mlagents-learn --train`` runs with stderr on a terminal, :class:`ProgressLine` keeps one
line at the bottom of the console: the steps of every trainer together out of their ``max_steps``,
steps per second and the time left (tqdm). The log lines (the summary lines included) are printed
above it, unchanged. Without a terminal (output to a file or a pipe, as scripts read it) nothing
is drawn and the output is exactly what it is without this module.
"""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Mapping
from contextlib import ExitStack
from typing import IO, Any, Protocol

__all__ = ["ProgressLine", "console_progress"]


class _Counted(Protocol):
    @property
    def get_step(self) -> int: ...

    @property
    def get_max_steps(self) -> float: ...


#: Size assumed for a terminal that reports none (tqdm draws nothing in a 0 x 0 terminal).
FALLBACK_COLUMNS = 100
FALLBACK_ROWS = 24


def _columns(stream: IO[str]) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return 0


def _wants_progress(stream: IO[str]) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


class ProgressLine:
    """A tqdm bar over the trainers' steps; the root logger's console output goes above it.

    Use as a context manager around the loop and call :meth:`update` after each pass.
    """

    def __init__(self, trainers: Mapping[str, _Counted], run_id: str, stream: IO[str]) -> None:
        self.trainers = trainers
        self.run_id = run_id
        self.stream = stream
        self.total = int(sum(float(t.get_max_steps) for t in trainers.values()))
        self._bar: Any = None
        self._stack = ExitStack()

    def __enter__(self) -> ProgressLine:
        from tqdm import tqdm
        from tqdm.contrib.logging import logging_redirect_tqdm

        sized = _columns(self.stream) > 0
        self._bar = self._stack.enter_context(
            tqdm(
                total=self.total,
                initial=self.steps(),
                desc=self.run_id,
                unit=" steps",
                file=self.stream,
                # A terminal that reports no size (some pseudo-terminals) gets a fixed width.
                dynamic_ncols=sized,
                ncols=None if sized else FALLBACK_COLUMNS,
                nrows=None if sized else FALLBACK_ROWS,
                mininterval=0.5,
                smoothing=0.05,
                bar_format="{desc}: {n_fmt}/{total_fmt}{unit} |{bar}| {rate_fmt} {remaining} left",
                leave=False,
            )
        )
        self._stack.enter_context(logging_redirect_tqdm([logging.root], tqdm_class=tqdm))
        return self

    def steps(self) -> int:
        """The steps of every trainer (each counted up to its max_steps)."""
        return int(sum(min(float(t.get_step), float(t.get_max_steps)) for t in self.trainers.values()))

    def update(self) -> None:
        bar = self._bar
        if bar is not None:
            done = self.steps()
            if done != bar.n:
                bar.update(done - bar.n)

    def refresh(self) -> None:
        """Redraw the line now (it redraws by itself at most twice a second)."""
        if self._bar is not None:
            self._bar.refresh()

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        self._bar = None


def console_progress(
    trainers: Mapping[str, _Counted], run_id: str, train: bool, stream: IO[str] | None = None
) -> ProgressLine | None:
    """A :class:`ProgressLine` when training with ``stream`` (default stderr) on a terminal and
    tqdm installed; None otherwise (nothing is drawn)."""
    stream = sys.stderr if stream is None else stream
    if not train or not trainers or not _wants_progress(stream):
        return None
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return None
    return ProgressLine(trainers, run_id, stream)
