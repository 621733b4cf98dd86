"""End to end: mlagents-learn trains Soft Actor-Critic on the real Basic build with two environments.

The module's first run (the shipped ``config/sac_trainer_config.yaml`` BasicLearning section, a
short budget, the replay buffer kept with the checkpoints) is what a user of ``trainer: sac`` looks
at: the console, the checkpoints, the exported models, the TensorBoard tags of SAC, the replay
buffer file. Then ``--load`` continues it (weights, step count and replay buffer), ``--deterministic``
runs of the same seed are the same run, and a build killed during SAC training is restarted.
"""

import json
import re

import numpy as np
import pytest
import yaml

from mlagents.envs.environment import UnityEnvironment
from mlagents.trainers.sac.policy import SACPolicy
from mlagents.trainers.settings import merged_section, parse_trainer_settings
from mlagents.trainers.tests.episode_helpers import episode_rewards, rewards_in_build, within_noise
from mlagents.trainers.tests.learn_helpers import (
    BUILDS,
    SHIPPED_SAC_CONFIG,
    LearnProcess,
    assert_nothing_left,
    faulty_learn,
    finish_ok,
    learn_args,
    model_digests,
    read_scalars,
    shipped_config,
    summary_scalars,
)

BASIC = BUILDS / "Basic.x86_64"
BALL = BUILDS / "3DBall.x86_64"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing"),
    # The module's first run (up to 200 s) counts in the first test that uses it.
    pytest.mark.timeout(300),
]

FIRST_RUN_STEPS = 2000
EPISODES = 10
SUMMARY_FREQ = 500
SAC_TAGS = (
    "Losses/Value Loss",
    "Losses/Policy Loss",
    "Losses/Q1 Loss",
    "Losses/Q2 Loss",
    "Policy/Entropy Coeff",
    "Policy/Entropy",
    "Policy/Learning Rate",
    "Policy/Extrinsic Value Estimate",
    "Environment/Cumulative Reward",
)


def basic_sac_config(max_steps: float, **changes: object) -> str:
    """The shipped SAC BasicLearning section with a budget of ``max_steps`` steps."""
    settings = {"max_steps": max_steps, "summary_freq": SUMMARY_FREQ, **changes}
    return shipped_config("BasicLearning", source=SHIPPED_SAC_CONFIG, **settings)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, free_port_range):
    """``FIRST_RUN_STEPS`` steps of SAC on Basic with two workers, the replay buffer saved."""
    cwd = tmp_path_factory.mktemp("sac")
    (cwd / "config.yaml").write_text(basic_sac_config(FIRST_RUN_STEPS, save_replay_buffer=True))
    port = free_port_range(2)
    # --deterministic: the outcome (the rewards checked below) is a function of the seed alone.
    extra = ["--save-freq=1000", "--deterministic"]
    run = LearnProcess(cwd, *learn_args(BASIC, base_port=port, run_id="sac", num_envs=2, seed=2, extra=extra))
    return cwd, finish_ok(run, [port, port + 1], timeout=200)


def test_console_checkpoints_and_exports(first_run):
    cwd, output = first_run
    assert "Traceback" not in output
    steps = [float(step) for step in re.findall(r"BasicLearning: Step: ([\d.]+)\. ", output)]
    # A summary every 500 steps, at the step count (two workers may carry it one step past).
    assert [int(step) // SUMMARY_FREQ for step in steps] == [1, 2, 3, 4], output[-3000:]
    # Basic's large goal within 2000 steps (this seed: 0.265, 0.784, 0.826, 0.94 on 2026-12-05).
    mean_rewards = [
        float(m)
        for m in re.findall(
            r"BasicLearning: Step: [\d.]+\. Time Elapsed: [\d.]+ s Mean Reward: (-?\d+\.\d+)", output
        )
    ]
    assert mean_rewards[-1] > 0.8, mean_rewards
    model_dir = cwd / "models" / "sac-0"
    checkpoints = sorted(path.name for path in (model_dir / "BasicLearning").glob("model-*.index"))
    assert checkpoints, list((model_dir / "BasicLearning").iterdir())
    for extension in (".nn", ".onnx"):
        assert (model_dir / f"BasicLearning{extension}").is_file()
        assert f"Exported ./models/sac-0/BasicLearning{extension} file" in output


def test_tensorboard_has_the_sac_tags(first_run):
    cwd, _ = first_run
    scalars = read_scalars(cwd / "summaries" / "sac_BasicLearning")
    for tag in SAC_TAGS:
        assert tag in scalars, (tag, sorted(scalars))
    # The entropy coefficient is learned: it moves away from init_entcoef (0.01 for BasicLearning).
    coefficients = [value for _, value in scalars["Policy/Entropy Coeff"]]
    assert coefficients[-1] != pytest.approx(0.01, rel=1e-3), coefficients
    # The learning rate of SAC is constant.
    assert [value for _, value in scalars["Policy/Learning Rate"]] == pytest.approx(
        [3.0e-4] * len(scalars["Policy/Learning Rate"])
    )


def test_the_build_plays_the_exported_model_at_the_policys_reward(first_run, free_port_range):
    """The exported SAC model acting inside the build (``--model``) earns what the trained policy
    earns acting through Python (its last checkpoint, sampling its actions)."""
    cwd, _ = first_run
    port = free_port_range(2)
    env = UnityEnvironment(str(BASIC), worker_id=0, base_port=port, seed=11, no_graphics=True)
    try:
        section = merged_section(yaml.safe_load(SHIPPED_SAC_CONFIG.read_text()), "BasicLearning")
        settings = parse_trainer_settings(section, "BasicLearning").with_run_paths(
            summary_path=str(cwd / "summaries" / "check"),
            model_path=str(cwd / "models" / "sac-0" / "BasicLearning"),
            keep_checkpoints=5,
        )
        policy = SACPolicy(11, env.brains["BasicLearning"], settings, is_training=False, load=True)
        through_python = episode_rewards(
            env, "BasicLearning", lambda info: policy.get_action(info).action, EPISODES
        )
    finally:
        env.close()
    model = cwd / "models" / "sac-0" / "BasicLearning.nn"
    in_build = rewards_in_build(BASIC, "BasicLearning", model, port + 1, EPISODES)
    assert_nothing_left([port, port + 1])
    # A random policy averages below 0.3; the trained one 0.94 at its last summary.
    assert np.mean(through_python) > 0.8, through_python
    assert within_noise(through_python, in_build), (through_python, in_build)


def test_the_replay_buffer_is_saved_with_the_checkpoints(first_run):
    cwd, output = first_run
    path = cwd / "models" / "sac-0" / "BasicLearning" / "last_replay_buffer.hdf5"
    assert path.is_file()
    assert "Saving Experience Replay Buffer to ./models/sac-0/BasicLearning/last_replay_buffer.hdf5" in output


def test_load_continues_the_run_and_its_replay_buffer(first_run, free_port_range, tmp_path):
    cwd, _ = first_run
    (cwd / "config_more.yaml").write_text(basic_sac_config(FIRST_RUN_STEPS + 1000, save_replay_buffer=True))
    port = free_port_range(2)
    run = LearnProcess(
        cwd,
        *learn_args(BASIC, base_port=port, run_id="sac", num_envs=2, seed=2, config="config_more.yaml"),
        "--load",
        # Lockstep workers: the step count moves by 2 and meets every summary step exactly.
        "--deterministic",
    )
    output = finish_ok(run, [port, port + 1], timeout=200)
    loaded = re.search(r"Experience replay buffer has (\d+) experiences\.", output)
    assert loaded is not None, output[-3000:]
    # Basic's episodes end within 100 steps: the first run kept (nearly) every step it collected.
    assert FIRST_RUN_STEPS - 200 <= int(loaded.group(1)) <= FIRST_RUN_STEPS + 100, loaded.group(0)
    steps = [float(step) for step in re.findall(r"BasicLearning: Step: ([\d.]+)\. ", output)]
    # The step count continues from the first run's: a summary past 2500 (2502: the count may
    # pass the summary step by one round), then the last at 3000 (``max_steps``).
    assert [int(step) // SUMMARY_FREQ for step in steps] == [5, 6], steps
    assert steps[-1] == FIRST_RUN_STEPS + 1000, steps


@pytest.mark.skipif(not BALL.exists(), reason="the 3DBall build is missing")
def test_deterministic_runs_of_one_seed_are_the_same_run(tmp_path, free_port_range):
    """``--deterministic`` on 3DBall with two workers and a reset-parameter sampler (the environments
    are reset with new masses and gravities every 300 steps), twice with one seed: every scalar at
    every step and the checkpoints and exported models are the same."""
    sampler = "resampling-interval: 300\n" + "".join(
        f"{name}:\n    sampler-type: uniform\n    min_value: {low}\n    max_value: {high}\n"
        for name, low, high in (("mass", 0.5, 10), ("gravity", 7, 12))
    )
    config = shipped_config("3DBallLearning", source=SHIPPED_SAC_CONFIG, max_steps=1000, summary_freq=250)
    runs = []
    port = free_port_range(4)
    for index in range(2):
        cwd = tmp_path / f"run{index}"
        cwd.mkdir()
        (cwd / "config.yaml").write_text(config)
        (cwd / "sampler.yaml").write_text(sampler)
        base = port + 2 * index
        extra = ["--deterministic", "--sampler=sampler.yaml"]
        run = LearnProcess(
            cwd, *learn_args(BALL, base_port=base, run_id="same", num_envs=2, seed=7, extra=extra)
        )
        finish_ok(run, [base, base + 1], timeout=200)
        runs.append((summary_scalars(cwd / "summaries"), model_digests(cwd / "models" / "same-0")))
    (scalars, models), (again_scalars, again_models) = runs
    assert ("same_3DBallLearning", "Losses/Q1 Loss") in scalars
    assert again_scalars == scalars
    assert "3DBallLearning.nn" in models and again_models == models


@pytest.mark.timeout(360)
def test_a_killed_build_is_restarted_and_sac_goes_on(tmp_path, free_port_range):
    """Worker 1's first build exits after 150 exchanges: it is restarted, the run reaches its
    budget, and no trajectory chunk in the replay buffer spans the break."""
    (tmp_path / "config.yaml").write_text(basic_sac_config(1200, summary_freq=400))
    port = free_port_range(2)
    faults = {"first_launch_args": {"1": ["--fault-exit-after", "150"]}}
    run = faulty_learn(
        tmp_path, faults, *learn_args(BASIC, base_port=port, run_id="faults", num_envs=2, seed=3), report=True
    )
    status = run.finish(timeout=300)
    output = run.output()
    assert status == 0, output[-4000:]
    assert "Traceback" not in output
    assert re.search(r"UnityEnvironment worker 1 was lost \(UnityCommunicationException", output), output[
        -4000:
    ]
    assert re.search(r"Step: 1200(\.0)?\. ", output), output[-4000:]
    assert (tmp_path / "models" / "faults-0" / "BasicLearning.nn").is_file()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["chunks"] > 0 and report["breaks"] == []
    assert_nothing_left([port, port + 1], pgid=run.process.pid)
