"""mlagents-learn trains PPO on the real CrawlerStatic build with the shipped configuration.

The command is the one a user runs (``python -m mlagents.trainers.learn``, two environment
instances of 12 crawlers each), with ``config/trainer_config.yaml`` copied into a temporary folder
and only ``max_steps`` of ``CrawlerStaticLearning`` cut to a CI-sized budget.

What a short run can show: the shipped section updates its policy only every 20240 experiences
(about 1700 trainer steps here), so a CI-sized run makes a handful of updates, and the Crawler's
reward rises only over tens of thousands of steps (see docs/Learning-Environment-Examples.md,
Crawler, Training). Episode rewards of the early policy spread widely (standard deviation about 10
around a mean near 0: the velocity term sums to 2.25 x the distance the body drifts), so no reward
rise is asserted here. A rise test within about 3 minutes was looked for and does not fit (figures
from ``benchmarks/crawler_rise.py``, which trains with the shipped config and plays the checkpoints
in-process): no model up to 6000 steps plays differently from the untrained one (0.01 reward per
decision); at 12,000 steps one run of three (seeds 5, 6, 7) gains +0.02, at 24,000 all three gain
+0.023 to +0.029, each about 3 standard errors of 24,000 played decisions per model. 24,000 steps
are 2 to 3 minutes of training alone on two free cores, and telling +0.025 apart from the spread
of one agent's reward per decision (standard deviation about 0.07 over 200 decisions) by five
standard errors takes some 65,000 to 90,000 played decisions per model. Playing both models on the same
noise does not help: the bodies' paths part within a few decisions (a model one update old and
the untrained one, each episode on identical noise, differ as much as unrelated runs). The test
checks what holds on every seed: the run trains on both instances, updates the policy, writes its
summaries in the reward scale of the scene's rules, exports a model that plays the scene, and leaves
no process behind.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from learn_helpers import LearnProcess, assert_nothing_left  # beside the tests, see conftest
from tensorboard.backend.event_processing import event_accumulator

REPO = Path(__file__).resolve().parents[4]
BUILD = REPO / "example-envs" / "builds" / "CrawlerStatic.x86_64"
CONFIG = REPO / "config" / "trainer_config.yaml"
BRAIN = "CrawlerStaticLearning"
#: Two summary windows of the shipped summary_freq (3000); 2 x 12 agents give 72,000 experiences,
#: three updates of the shipped buffer.
MAX_STEPS = 6000

pytestmark = [
    pytest.mark.skipif(not BUILD.exists(), reason="the CrawlerStatic build is missing"),
    # the run takes about a minute on a quiet 2-core machine, several under heavy load
    pytest.mark.timeout(900),
]

CONSOLE_LINE = re.compile(
    r"^INFO:mlagents\.trainers: crawler: CrawlerStaticLearning: Step: (?P<step>[\d.]+)\. "
    r"Time Elapsed: [\d.]+ s Mean Reward: (?P<mean>-?[\d.]+)\. Std of Reward: (?P<std>[\d.]+)\. ",
    re.MULTILINE,
)


def shipped_config_with_budget(max_steps: int) -> str:
    """The shipped trainer config with only CrawlerStaticLearning's ``max_steps`` changed."""
    config = yaml.safe_load(CONFIG.read_text())
    config[BRAIN]["max_steps"] = max_steps
    return yaml.safe_dump(config, sort_keys=False)


def scalars(summary_dir: Path, tag: str) -> list[tuple[int, float]]:
    acc = event_accumulator.EventAccumulator(str(summary_dir), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


@pytest.fixture(scope="module")
def crawler_run(tmp_path_factory: pytest.TempPathFactory, free_port_range) -> tuple[Path, str]:
    cwd = tmp_path_factory.mktemp("crawler")
    (cwd / "config.yaml").write_text(shipped_config_with_budget(MAX_STEPS))
    port = free_port_range(2)
    run = LearnProcess(
        cwd,
        "config.yaml",
        "--env",
        BUILD,
        "--train",
        "--num-envs=2",
        "--no-graphics",
        "--seed=5",
        "--run-id=crawler",
        "--base-port",
        port,
    )
    status = run.finish(timeout=900)
    output = run.output()
    assert status == 0, output[-4000:]
    assert_nothing_left([port, port + 1], pgid=run.pid)
    return cwd, output


def test_trains_with_the_shipped_section(crawler_run: tuple[Path, str]) -> None:
    cwd, output = crawler_run
    assert "Traceback" not in output
    for setting in ("batch_size:\t2024", "buffer_size:\t20240", "time_horizon:\t1000", "hidden_units:\t512"):
        assert setting in output
    lines = [m.groupdict() for m in CONSOLE_LINE.finditer(output)]
    # The trainer's step runs ahead of the controller's by up to one step per other worker (both
    # workers' steps count before the controller counts them one by one); the last line is capped
    # at max_steps.
    steps = [float(line["step"]) for line in lines]
    assert len(steps) == 2 and 3000.0 <= steps[0] <= 3001.0 and steps[1] == 6000.0, steps
    for line in lines:
        # An episode's reward is about 2.25 x the distance walked toward the target, + 0.05 per
        # decision facing it, -1 for a fall: an untrained policy averages near 0 (per summary
        # window of about 70 episodes the mean stays within a few units) with a spread of ~10.
        assert -8.0 < float(line["mean"]) < 12.0, line
        assert 3.0 < float(line["std"]) < 30.0, line
    summaries = cwd / "summaries" / "crawler_CrawlerStaticLearning"
    # Episodes end on falls (random legs topple the crawler every ~90 decisions) or after 1000.
    lengths = [value for _, value in scalars(summaries, "Environment/Episode Length")]
    assert len(lengths) == 2 and all(20.0 < value <= 1000.0 for value in lengths)
    # 72,000 experiences fill the 20,240 buffer three times: the policy was updated.
    losses = scalars(summaries, "Losses/Value Loss")
    assert losses and all(math.isfinite(value) for _, value in losses)


def test_exported_model_plays_the_scene(crawler_run: tuple[Path, str]) -> None:
    from mlagents.example_envs import registry  # noqa: F401  (registers the examples)
    from mlagents.example_envs.sdk.brains import BrainSettings
    from mlagents.example_envs.sdk.inference.brain import INFERENCE
    from mlagents.example_envs.sdk.local import LocalEnvironment

    cwd, output = crawler_run
    model = cwd / "models" / "crawler-0" / f"{BRAIN}.nn"
    assert f"Exported ./models/crawler-0/{BRAIN}.nn file" in output
    settings = BrainSettings(kinds={BRAIN: (INFERENCE, str(model))}, broadcast={BRAIN})
    with LocalEnvironment("CrawlerStatic", seed=1, brain_settings=settings) as env:
        infos = env.reset(train_mode=True)
        rewards = []
        for _ in range(40):
            infos = env.step(None)
            rewards.append(np.asarray(infos[BRAIN].rewards))
            actions = np.asarray(infos[BRAIN].previous_vector_actions)
            assert actions.shape == (12, 20) and np.abs(actions).max() <= 1.0
    per_decision = np.concatenate(rewards)
    # 5 physics steps of 0.03 x speed + 0.01 each; a fall sets the decision's reward to -1 (the
    # physics steps left in that decision still add theirs)
    assert np.isfinite(per_decision).all() and per_decision.min() > -2.0 and per_decision.max() < 3.0
