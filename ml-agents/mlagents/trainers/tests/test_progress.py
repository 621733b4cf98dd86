"""The console progress line: drawn on a terminal only, log lines above it unchanged."""

import io
import logging
import sys

from mlagents.trainers.progress import ProgressLine, console_progress


class Counted:
    def __init__(self, step, max_steps):
        self.get_step = step
        self.get_max_steps = max_steps


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_no_terminal_no_progress_line(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    trainers = {"Brain": Counted(0, 100.0)}
    assert console_progress(trainers, "run-0", train=True, stream=io.StringIO()) is None
    assert console_progress(trainers, "run-0", train=False, stream=Terminal()) is None
    monkeypatch.setenv("TERM", "dumb")
    assert console_progress(trainers, "run-0", train=True, stream=Terminal()) is None


def test_terminal_shows_steps_rate_and_time_left_below_the_log_lines(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    trainers = {"A": Counted(0, 1000.0), "B": Counted(0, 500.0)}
    progress = console_progress(trainers, "run-0", train=True)
    assert isinstance(progress, ProgressLine)
    handler = logging.StreamHandler()  # on sys.stderr, as logging.basicConfig sets it up
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    monkeypatch.setattr(logging.root, "handlers", [handler])
    with progress:
        trainers["A"].get_step = 400
        trainers["B"].get_step = 900  # counted up to its max_steps
        progress.update()
        progress.refresh()
        assert progress.steps() == 900
        logging.getLogger("mlagents.trainers").warning(" run-0: A: Step: 400. Training.")
    text = stream.getvalue()
    assert "run-0: 900/1500 steps" in text and "left" in text and "steps/s" in text
    # The log line is printed whole on a line of its own (the progress line is cleared first).
    assert "\rWARNING:mlagents.trainers: run-0: A: Step: 400. Training.\n" in text
    assert logging.root.handlers == [handler]  # the log output is the console's again
