"""PPO learns on the round-two examples through the real ``mlagents-learn``.

The test runs the command a user runs, ``python -m mlagents.trainers.learn <config> --env
example-envs/builds/<Env>.x86_64 --train --num-envs 2 --no-graphics``, in a temporary folder with
free ports, on a copy of the shipped ``config/trainer_config.yaml`` whose brain section differs
only in ``max_steps`` (the CI budget), and reads the mean rewards of the console's summary lines.

Tennis: early on the only reward is +0.1 for a ball hit over the net (a fault costs -0.01), so
the mean reward per point measures how often the players return the ball. The untrained policy
returns it in about 3 to 6 % of the points (mean 0.003 to 0.006); after about 20 policy updates
(one per 10240 experiences of the 72 players, about every 285 steps) the players start to get
under the ball and the mean climbs steadily. Each summary window holds about 2500 finished
points, so the window means are precise to about 0.001.

Reacher has no test here: from the untrained policy's level (about 0.5 per episode) PPO with the
shipped settings needs far more than a CI budget of steps to show a rise, see the Reacher
section of docs/Learning-Environment-Examples.md.
"""

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from learn_helpers import LearnProcess, assert_nothing_left  # beside the tests, see conftest

REPO = Path(__file__).resolve().parents[4]
CONFIG = REPO / "config" / "trainer_config.yaml"
TENNIS = REPO / "example-envs" / "builds" / "Tennis.x86_64"

SUMMARY = re.compile(
    r"^INFO:mlagents\.trainers: \S+: (?P<brain>\S+): Step: (?P<step>[\d.]+)\. "
    r"Time Elapsed: [\d.]+ s Mean Reward: (?P<mean>-?[\d.]+)\.",
    re.MULTILINE,
)


def shipped_config_with_budget(brain: str, max_steps: int) -> str:
    """The shipped trainer config with ``brain``'s ``max_steps`` set to ``max_steps``; nothing
    else changes (the default section and the brain's own settings stay as shipped)."""
    config = yaml.safe_load(CONFIG.read_text())
    config[brain] = {**config[brain], "max_steps": max_steps}
    return yaml.safe_dump(config, sort_keys=False)


def train(tmp_path: Path, build: Path, brain: str, max_steps: int, port: int, seed: int) -> list[float]:
    """Run mlagents-learn on ``build`` with two instances; return the mean reward of every summary
    line (one per ``summary_freq`` steps) in order."""
    (tmp_path / "config.yaml").write_text(shipped_config_with_budget(brain, max_steps))
    run = LearnProcess(
        tmp_path,
        "config.yaml",
        "--env",
        build,
        "--num-envs=2",
        "--base-port",
        port,
        "--train",
        "--run-id=learn",
        f"--seed={seed}",
        "--no-graphics",
    )
    status = run.finish(timeout=900)
    output = run.output()
    assert status == 0, output[-4000:]
    assert "Traceback" not in output
    assert_nothing_left([port, port + 1], pgid=run.pid)
    lines = [m.groupdict() for m in SUMMARY.finditer(output)]
    assert {line["brain"] for line in lines} == {brain}, output[-4000:]
    return [float(line["mean"]) for line in lines]


TENNIS_STEPS = 14000


@pytest.mark.timeout(900)
@pytest.mark.skipif(not TENNIS.exists(), reason="the Tennis build is missing")
def test_tennis_players_learn_to_return_the_ball(
    tmp_path: Path, free_port_range: Callable[[int], int]
) -> None:
    """The mean reward of the last two summary windows is above 0.012 and at least twice that of
    the first window (the untrained level, 0.006 to 0.007 in every run seen).

    Runs with two instances are not exactly repeatable (the two workers' experiences reach the
    trainer in the order they finish), so the budget covers the slowest start seen. Mean reward at
    steps 1000, 2000 ... 10000: seed 1 0.006, 0.003, 0.003, 0.003, 0.005, 0.007, 0.012, 0.014,
    0.016, 0.018 and, in another run, 0.007, 0.005, 0.002, 0.002, 0.004, 0.005, 0.006, 0.009 at
    8000; seed 2 0.007, 0.009 ... 0.029, 0.026; seed 3 0.006, 0.010 ... 0.037, 0.035; seed 4
    0.006, 0.008 ... 0.025, 0.022."""
    means = train(tmp_path, TENNIS, "TennisLearning", TENNIS_STEPS, free_port_range(2), seed=1)
    assert len(means) >= TENNIS_STEPS // 1000 - 1, means
    start = means[0]
    end = sum(means[-2:]) / 2
    assert end > 0.012 and end > 2.0 * start, means
