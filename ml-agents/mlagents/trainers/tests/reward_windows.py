"""Helpers of the learning tests (not a test module): the summary windows of an mlagents-learn run
read back from its own output, and a z-score of how far the reward rose between two groups of them.

Every ``summary_freq`` steps the trainer prints the mean and the standard deviation of the episode
rewards that ended in the window and writes the mean episode length to TensorBoard. The number of
episodes of a window is not printed; it follows from the decisions the window holds (its steps x
the agents of one environment instance, every trainer step being one decision of every agent of one
instance) divided by the mean episode length, exact up to the episodes that straddle the window's
edges. From those, each window's mean has a standard error, and the difference of two groups'
means a z-score: how many standard errors of episode-to-episode noise the reward rose by.

Imported as ``mlagents.trainers.tests.reward_windows`` by the test modules and by
``benchmarks/learning_rise.py``.
"""

import math
import re
from dataclasses import dataclass
from pathlib import Path

from mlagents.trainers.tests.learn_helpers import read_scalars

SUMMARY_LINE = re.compile(
    r"^INFO:mlagents\.trainers: \S+: (?P<brain>\S+): Step: (?P<step>[\d.]+)\. "
    r"Time Elapsed: (?P<elapsed>[\d.]+) s Mean Reward: (?P<mean>-?[\d.]+)\. "
    r"Std of Reward: (?P<std>[\d.]+)\.",
    re.MULTILINE,
)
EPISODE_LENGTH_TAG = "Environment/Episode Length"


@dataclass(frozen=True)
class Window:
    """One summary window: its step (rounded down to the summary frequency), the mean and standard
    deviation of its episode rewards and the number of episodes that ended in it (estimated)."""

    step: int
    mean: float
    std: float
    episodes: float

    @property
    def variance_of_mean(self) -> float:
        """The squared standard error of ``mean``."""
        return self.std**2 / self.episodes


def summary_lines(output: str, brain: str) -> list[dict[str, float]]:
    """The console summary lines of ``brain`` in ``output`` (step, elapsed, mean, std), in order."""
    return [
        {key: float(value) for key, value in match.groupdict().items() if key != "brain"}
        for match in SUMMARY_LINE.finditer(output)
        if match["brain"] == brain
    ]


def episode_lengths(summary_dir: Path) -> dict[int, float]:
    """Step -> mean episode length of every summary window in the TensorBoard files of ``summary_dir``."""
    return dict(read_scalars(summary_dir)[EPISODE_LENGTH_TAG])


def read_windows(
    output: str, summary_dir: Path, brain: str, summary_freq: int, agents_per_step: int
) -> list[Window]:
    """The summary windows of ``brain`` from a run's console ``output`` and its TensorBoard folder.

    :param summary_freq: the brain's ``summary_freq`` (the steps of one window).
    :param agents_per_step: the agents of one environment instance (each trainer step is one decision
        of each of them).
    """
    lengths = episode_lengths(summary_dir)
    windows = []
    for line in summary_lines(output, brain):
        # The trainer's step may run one step ahead of the controller's, which triggered the line.
        step = int(line["step"]) // summary_freq * summary_freq
        length = lengths.get(step) or lengths.get(int(line["step"]))
        assert length is not None, f"no episode length was written at step {step}: {sorted(lengths)}"
        windows.append(Window(step, line["mean"], line["std"], summary_freq * agents_per_step / length))
    return windows


def group_mean(windows: list[Window]) -> tuple[float, float]:
    """The mean of the windows' means and its standard error (each window weighs the same)."""
    assert windows, "an empty group of summary windows"
    mean = sum(window.mean for window in windows) / len(windows)
    variance = sum(window.variance_of_mean for window in windows) / len(windows) ** 2
    return mean, math.sqrt(variance)


def rise(windows: list[Window], first: int, after: int, until: int) -> tuple[float, float]:
    """How far the mean reward of the windows with ``after < step <= until`` is above the mean of
    the first ``first`` windows: (difference, difference / its standard error)."""
    early = windows[:first]
    late = [window for window in windows if after < window.step <= until]
    early_mean, early_se = group_mean(early)
    late_mean, late_se = group_mean(late)
    difference = late_mean - early_mean
    return difference, difference / math.hypot(early_se, late_se)


def trend(windows: list[Window], per: int) -> tuple[float, float, float]:
    """A straight line through the windows' means against their steps (least squares, each window
    weighted by the inverse square of its standard error).

    :returns: its slope in reward per ``per`` steps; the slope over its standard error, that error
        scaled up by the square root of the reduced chi-square when the windows scatter around the
        line more than their standard errors say (policy updates add noise of their own); and the
        reduced chi-square itself.
    """
    assert len(windows) >= 3, "a trend needs three summary windows or more"
    weights = [1.0 / window.variance_of_mean for window in windows]
    xs = [window.step / per for window in windows]
    ys = [window.mean for window in windows]
    total = sum(weights)
    x_mean = sum(w * x for w, x in zip(weights, xs)) / total
    y_mean = sum(w * y for w, y in zip(weights, ys)) / total
    spread = sum(w * (x - x_mean) ** 2 for w, x in zip(weights, xs))
    slope = sum(w * (x - x_mean) * (y - y_mean) for w, x, y in zip(weights, xs, ys)) / spread
    residuals = sum(w * (y - y_mean - slope * (x - x_mean)) ** 2 for w, x, y in zip(weights, xs, ys))
    chi_square = residuals / (len(windows) - 2)
    return slope, slope * math.sqrt(spread / max(1.0, chi_square)), chi_square
