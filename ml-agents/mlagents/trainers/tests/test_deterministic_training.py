"""``mlagents-learn --deterministic``: a run is a function of its configuration and seed alone.

The runs train PPO on the 3DBall example build through the real command, one of them while other
processes keep both cores busy. Load changes which environment worker answers first; in the
default (asynchronous) mode that changes the run, under ``--deterministic`` it must not: every
scalar of the summaries at every step and every checkpoint and exported model must be the same,
byte for byte. A run with another seed must differ, so the comparison can fail.
"""

import shutil
import time
from pathlib import Path

import pytest
import yaml

from mlagents.example_envs.ports import find_free_port_range
from mlagents.trainers.tests.learn_helpers import (
    LearnProcess,
    cpu_load,
    finish_ok,
    learn_args,
    model_digests,
    summary_scalars,
)

pytestmark = pytest.mark.slow

BALL = Path(__file__).resolve().parents[4] / "example-envs" / "builds" / "3DBall.x86_64"

# 3DBall's shipped section, smaller: with 12 agents per instance a policy update comes every 100
# steps of one instance (every 25 steps with four), so a run holds 12 updates.
SECTION = {
    "trainer": "ppo",
    "batch_size": 64,
    "beta": 0.001,
    "buffer_size": 1200,
    "epsilon": 0.2,
    "hidden_units": 32,
    "lambd": 0.99,
    "learning_rate": 3.0e-4,
    "max_steps": 1200,
    "memory_size": 256,
    "normalize": True,
    "num_epoch": 3,
    "num_layers": 2,
    "time_horizon": 64,
    "sequence_length": 64,
    "summary_freq": 200,
    "use_recurrent": False,
    "vis_encode_type": "simple",
    "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.99}},
}


def start(
    cwd: Path, seed: int, num_envs: int, base_port: int, *extra: str, max_steps: int = 1200
) -> LearnProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "config.yaml").write_text(yaml.safe_dump({"3DBallLearning": {**SECTION, "max_steps": max_steps}}))
    args = learn_args(
        BALL,
        base_port=base_port,
        run_id="det",
        num_envs=num_envs,
        seed=seed,
        extra=["--save-freq=400", "--deterministic", *extra],
    )
    return LearnProcess(cwd, *args)


#: Seconds a run (or runs started together) may take; a test's own timeout leaves room for its runs.
RUN_TIMEOUT = 280


def finish(run: LearnProcess, base_port: int, num_envs: int, deadline: float | None = None) -> None:
    """Wait for ``run`` until ``deadline`` (``time.monotonic()``; default: ``RUN_TIMEOUT`` from now)."""
    timeout = RUN_TIMEOUT if deadline is None else max(0.0, deadline - time.monotonic())
    finish_ok(run, range(base_port, base_port + num_envs), timeout=timeout)


def results(cwd: Path) -> tuple[dict, dict[str, str]]:
    return summary_scalars(cwd / "summaries"), model_digests(cwd / "models" / "det-0")


def assert_same_run(first: Path, second: Path) -> None:
    scalars, models = results(first)
    other_scalars, other_models = results(second)
    assert set(other_scalars) == set(scalars)
    for key, points in scalars.items():
        assert other_scalars[key] == points, f"{key}: {points} != {other_scalars[key]}"
    assert other_models == models


@pytest.mark.skipif(not BALL.exists(), reason="example-envs/builds/3DBall.x86_64 is missing")
@pytest.mark.parametrize("num_envs", [1, 4])
@pytest.mark.timeout(2 * RUN_TIMEOUT + 60)  # one run, then two at once
def test_same_seed_same_run_under_load(tmp_path: Path, num_envs: int) -> None:
    ports = find_free_port_range(3 * num_envs)
    quiet = start(tmp_path / "quiet", 5, num_envs, ports)
    finish(quiet, ports, num_envs)
    with cpu_load(2):
        loaded = start(tmp_path / "loaded", 5, num_envs, ports + num_envs)
        other = start(tmp_path / "other-seed", 6, num_envs, ports + 2 * num_envs)
        deadline = time.monotonic() + RUN_TIMEOUT
        finish(loaded, ports + num_envs, num_envs, deadline)
        finish(other, ports + 2 * num_envs, num_envs, deadline)

    scalars, models = results(tmp_path / "quiet")
    reward = scalars[("det_3DBallLearning", "Environment/Cumulative Reward")]
    assert len(reward) == 6, reward  # a summary every 200 steps up to 1200
    assert len(scalars) >= 9 and sum(len(points) for points in scalars.values()) >= 9 * 6
    assert {name.split("/")[-1] for name in models} >= {
        "model-400.index",
        "model-800.index",
        "model-1200.index",
        "3DBallLearning.nn",
        "3DBallLearning.onnx",
    }
    assert_same_run(tmp_path / "quiet", tmp_path / "loaded")

    other_scalars, other_models = results(tmp_path / "other-seed")
    assert other_scalars[("det_3DBallLearning", "Environment/Cumulative Reward")] != reward
    assert not set(other_models.values()) & set(models.values())


@pytest.mark.skipif(not BALL.exists(), reason="example-envs/builds/3DBall.x86_64 is missing")
@pytest.mark.timeout(2 * RUN_TIMEOUT + 60)  # one run, then three at once
def test_a_loaded_run_is_the_same_run_again(tmp_path: Path) -> None:
    """``--load`` continues from the checkpoint deterministically: two continuations of one saved
    run (one under load) are the same, and differ from a continuation with another seed."""
    ports = find_free_port_range(4 * 3)
    first = start(tmp_path / "first", 5, 4, ports, max_steps=400)
    finish(first, ports, 4)
    runs = []
    with cpu_load(2):
        for index, (name, seed) in enumerate((("again", 5), ("once-more", 5), ("other-seed", 7))):
            shutil.copytree(tmp_path / "first", tmp_path / name)
            shutil.rmtree(tmp_path / name / "summaries")
            base_port = ports + 4 * index
            runs.append((start(tmp_path / name, seed, 4, base_port, "--load", max_steps=800), base_port))
        deadline = time.monotonic() + RUN_TIMEOUT
        for run, base_port in runs:
            finish(run, base_port, 4, deadline)
    for run, _ in runs:
        assert "Loading Model for brain 3DBallLearning" in run.output(), run.output()[-3000:]
    assert_same_run(tmp_path / "again", tmp_path / "once-more")
    reward = results(tmp_path / "again")[0][("det_3DBallLearning", "Environment/Cumulative Reward")]
    assert [step for step, _ in reward][-1] >= 800
    other = results(tmp_path / "other-seed")[0][("det_3DBallLearning", "Environment/Cumulative Reward")]
    assert other != reward
