"""End to end: mlagents-learn trains PPO on the real Basic build with two environments.

Each test runs the real command (``python -m mlagents.trainers.learn``) in a temporary working
directory, with a small configuration written there and ports from a free-port probe, and checks
what a user would look at: the console lines, the checkpoints, the exported .nn model, the
TensorBoard events, the timers JSON; then ``--load`` continuing the run, and Ctrl-C (SIGINT) saving
and exporting before exiting without leftover processes.
"""

import json
import os
import re
import shutil
import signal
import time

import pytest
from tensorboard.backend.event_processing import event_accumulator

from mlagents.trainers.tests.learn_helpers import (
    BUILDS,
    LearnProcess,
    assert_nothing_left,
    finish_ok,
    learn_args,
    leftovers,
    read_scalars,
    shipped_config,
    trainer_config,
)

BASIC = BUILDS / "Basic.x86_64"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing")]


def basic_config(max_steps, **changes):
    """The shipped BasicLearning section with a higher learning rate and a budget of ``max_steps``,
    so that the policy settles within a few thousand steps (``changes`` as in ``trainer_config``)."""
    settings = {
        "learning_rate": 3.0e-3,
        "max_steps": max_steps,
        "summary_freq": 1000,
        "vis_encode_type": "simple",
    }
    return trainer_config(**{**settings, **changes})


FIRST_RUN_STEPS = 5000
CONSOLE_LINE = re.compile(
    r"^INFO:mlagents\.trainers: (?P<run>\S+): (?P<brain>\S+): Step: (?P<step>[\d.]+)\. "
    r"(?:Time Elapsed: (?P<elapsed>[\d.]+) s Mean Reward: (?P<mean>-?[\d.]+)\. Std of Reward: (?P<std>[\d.]+)\. "
    r"|No episode was completed since last summary\. )(?P<status>Training\.|Not Training\.)$"
)


def console_lines(output):
    return [m.groupdict() for m in map(CONSOLE_LINE.match, output.splitlines()) if m]


def checkpoint_steps(model_dir):
    """Steps of the checkpoints in ``model_dir`` (files ``model-<step>.index``), sorted."""
    matches = (re.match(r"model-(\d+)\.index$", path.name) for path in model_dir.iterdir())
    return sorted(int(match.group(1)) for match in matches if match)


def timer_names(node, prefix=()):
    names = {prefix + (node["name"],)}
    for child in node.get("children", []):
        names |= timer_names(child, prefix + (node["name"],))
    return names


def start_basic(cwd, port, config, *extra):
    """``mlagents-learn --deterministic`` with the run id ``basic`` on 2 instances of Basic."""
    return LearnProcess(
        cwd,
        *learn_args(
            BASIC,
            base_port=port,
            run_id="basic",
            num_envs=2,
            config=config,
            extra=[*extra, "--deterministic"],
        ),
    )


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, free_port_range):
    """Train ``FIRST_RUN_STEPS`` steps with --num-envs=2; returns (cwd, output, base port)."""
    cwd = tmp_path_factory.mktemp("learn")
    (cwd / "config.yaml").write_text(basic_config(FIRST_RUN_STEPS))
    port = free_port_range(2)
    run = start_basic(cwd, port, "config.yaml", "--save-freq=2000", "--seed=2")
    output = finish_ok(run, [port, port + 1])
    return cwd, output, port


def test_console_lines(first_run):
    _, output, _ = first_run
    lines = console_lines(output)
    assert len(lines) == FIRST_RUN_STEPS // 1000
    for line in lines:
        assert line["run"] == "basic" and line["brain"] == "BasicLearning"
    # As in the original, the trainer's step grows by the number of workers that answered before the
    # controller counts them one by one: when the last pass takes the trainer past max_steps, the
    # last line reports max_steps and "Not Training.". Every earlier line is "Training.".
    assert all(line["status"] == "Training." for line in lines[:-1])
    if lines[-1]["status"] == "Not Training.":
        assert float(lines[-1]["step"]) == FIRST_RUN_STEPS
    steps = [float(line["step"]) for line in lines]
    assert steps == sorted(steps) and 1000 <= steps[0] <= 1001
    assert "Traceback" not in output
    assert "Hyperparameters for the PPOTrainer of brain BasicLearning:" in output
    assert "Exported ./models/basic-0/BasicLearning.nn file" in output


def test_model_artifacts(first_run):
    cwd, _, _ = first_run
    model_dir = cwd / "models" / "basic-0" / "BasicLearning"
    assert (model_dir / "checkpoint").is_file()
    saved_steps = checkpoint_steps(model_dir)
    assert saved_steps[0] >= 2000 and saved_steps[-1] > FIRST_RUN_STEPS
    exported = cwd / "models" / "basic-0" / "BasicLearning.nn"
    assert exported.is_file() and exported.stat().st_size > 1000


def test_tensorboard_events_and_learning(first_run):
    cwd, _, _ = first_run
    summary_dir = cwd / "summaries" / "basic_BasicLearning"
    scalars = read_scalars(summary_dir)
    rewards = scalars["Environment/Cumulative Reward"]
    tags = set(scalars)
    assert {
        "Environment/Cumulative Reward",
        "Environment/Episode Length",
        "Environment/Lesson",
        "Policy/Entropy",
        "Policy/Learning Rate",
        "Policy/Extrinsic Value Estimate",
        "Policy/Extrinsic Reward",
        "Losses/Value Loss",
        "Losses/Policy Loss",
    } <= tags
    hyperparameters = event_accumulator.EventAccumulator(str(summary_dir))
    hyperparameters.Reload()
    assert "Hyperparameters" in hyperparameters.Tags()["tensors"]
    assert len(rewards) == FIRST_RUN_STEPS // 1000
    lengths = scalars["Environment/Episode Length"]
    # A random walk needs about 30 steps to reach a goal; the trained policy walks straight to one
    # (3 steps to the small goal, 7 to the large one).
    first_reward, last_reward = rewards[0][1], rewards[-1][1]
    assert last_reward > first_reward
    assert last_reward >= 0.075, rewards
    assert lengths[-1][1] <= 8.0 and lengths[0][1] > 1.5 * lengths[-1][1], lengths


def test_timers_json(first_run):
    cwd, _, _ = first_run
    tree = json.loads((cwd / "summaries" / "basic-0_timers.json").read_text())
    assert tree["name"] == "root"
    names = timer_names(tree)
    advance = ("root", "TrainerController.advance")
    for path in [
        advance + ("env_step",),
        advance + ("env_step", "SubprocessEnvManager._take_step"),
        advance + ("env_step", "workers", "worker_root", "UnityEnvironment.step"),
        advance + ("add_experiences",),
        advance + ("process_experiences",),
        advance + ("update_policy",),
    ]:
        assert path in names, sorted(names)
    gauges = {g["name"]: g for g in tree["gauges"]}
    assert gauges["BasicLearning.mean_reward"]["count"] == FIRST_RUN_STEPS // 1000


def test_load_continues_the_run(first_run, free_port_range, tmp_path):
    # The continued run writes models, summaries and timers: it works on a copy of the first run's
    # folder, which the other tests of this module read in any order.
    cwd = tmp_path / "continued"
    shutil.copytree(first_run[0], cwd)
    (cwd / "config_more.yaml").write_text(basic_config(FIRST_RUN_STEPS + 1500))
    port = free_port_range(2)
    run = start_basic(cwd, port, "config_more.yaml", "--load")
    output = finish_ok(run, [port, port + 1])
    lines = console_lines(output)
    assert len(lines) == 1
    # The step count continues from the last checkpoint (the first run's last pass took it past
    # max_steps): the summary comes 1000 steps later, both instances stepping in every pass.
    saved = max(checkpoint_steps(first_run[0] / "models" / "basic-0" / "BasicLearning"))
    assert FIRST_RUN_STEPS <= saved <= FIRST_RUN_STEPS + 2
    assert float(lines[0]["step"]) == saved + 1000
    # The restored policy acts like the trained one from the first step on.
    assert float(lines[0]["mean"]) >= 0.075
    model_dir = cwd / "models" / "basic-0" / "BasicLearning"
    saved_steps = checkpoint_steps(model_dir)
    assert max(saved_steps) > FIRST_RUN_STEPS + 1500


def start_long_run(tmp_path, build, run_id, port):
    """mlagents-learn on ``build`` with 2 instances and a budget it will not reach before it is stopped."""
    (tmp_path / "config.yaml").write_text(basic_config(1.0e6))
    return LearnProcess(tmp_path, *learn_args(build, base_port=port, run_id=run_id, num_envs=2))


def assert_saved_after_interrupt(tmp_path, run, status, run_id, port):
    """The interrupted run ended normally, saved a checkpoint, exported the model, wrote its timers
    and left no process or port behind."""
    output = run.output()
    assert status == 0, output[-4000:]
    assert "Learning was interrupted. Please wait while the graph is generated." in output
    assert "Saved Model" in output
    assert "Traceback" not in output
    model_dir = tmp_path / "models" / f"{run_id}-0"
    assert any(p.name.endswith(".index") for p in (model_dir / "BasicLearning").iterdir())
    assert (model_dir / "BasicLearning.nn").is_file()
    assert (tmp_path / "summaries" / f"{run_id}-0_timers.json").is_file()
    assert_nothing_left([port, port + 1], pgid=run.pid)


@pytest.mark.parametrize("ctrl_c", [True, False], ids=["ctrl-c-whole-group", "sigterm-main-process"])
def test_interrupt_saves_and_exports(tmp_path, ctrl_c, free_port_range):
    port = free_port_range(2)
    run = start_long_run(tmp_path, BASIC, "stopped", port)
    try:
        run.wait_for(r"Step: 1\d\d\d\.", timeout=120)
        if ctrl_c:
            # What Ctrl-C in a terminal does: every process of the foreground group gets SIGINT.
            os.killpg(run.process.pid, signal.SIGINT)
        else:
            # What `kill` or `docker stop` does: only the main process gets SIGTERM.
            run.process.send_signal(signal.SIGTERM)
    finally:
        status = run.finish(timeout=60)
    assert_saved_after_interrupt(tmp_path, run, status, "stopped", port)


def wait_until_builds_hang(tmp_path, count, timeout):
    """Wait until ``count`` builds logged that they stopped answering (``--fault-hang-after``). Their
    logs are in temporary folders under ``tmp_path``: the tests' TMPDIR, which mlagents-learn and its
    workers inherit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logs = tmp_path.glob("mlagents-env-*/*.log")
        if sum("Simulated hang" in log.read_text(errors="replace") for log in logs) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"{count} builds did not report their simulated hang within {timeout} s")


@pytest.mark.timeout(360)  # up to 240 s until the builds hang, then up to 100 s to the end
def test_second_sigterm_stops_a_pass_that_does_not_end(tmp_path, free_port_range):
    """The first SIGTERM lets the current pass finish; when the environments stopped answering the
    pass would wait for the exchange timeout (120 s), and a second SIGTERM stops it at once, still
    saving and exporting the model."""
    hanging = tmp_path / "Hanging.x86_64"
    # The Basic build, stopping to answer after a few steps (initialization, reset, 3 steps).
    hanging.write_text(f'#!/bin/sh\nexec "{BASIC}" --fault-hang-after 5 "$@"\n')
    hanging.chmod(0o755)
    port = free_port_range(2)
    run = start_long_run(tmp_path, hanging, "hung", port)
    try:
        run.wait_for(r"Hyperparameters for the PPOTrainer", timeout=120)
        wait_until_builds_hang(tmp_path, count=2, timeout=120)
        run.process.send_signal(signal.SIGTERM)
        run.wait_for(r"Stopping after the current step", timeout=10)
        time.sleep(2)
        assert run.process.poll() is None, "the pass cannot end while the builds hang"
        run.process.send_signal(signal.SIGTERM)
        status = run.process.wait(timeout=30)
    finally:
        run.finish(timeout=60)
    assert_saved_after_interrupt(tmp_path, run, status, "hung", port)


def test_several_runs(tmp_path, free_port_range):
    (tmp_path / "config.yaml").write_text(basic_config(600, summary_freq=300))
    port = free_port_range(2)
    run = LearnProcess(tmp_path, *learn_args(BASIC, base_port=port, run_id="multi", extra=["--num-runs=2"]))
    output = finish_ok(run, [port, port + 1])
    assert "Traceback" not in output
    for sub_id in (0, 1):
        assert (tmp_path / "models" / f"multi-{sub_id}" / "BasicLearning.nn").is_file()
        assert (tmp_path / "summaries" / f"multi-{sub_id}_timers.json").is_file()
    assert len([line for line in console_lines(output) if float(line["step"]) == 600]) == 2


BALL = BUILDS / "3DBall.x86_64"

# The shipped 3DBallLearning settings with a buffer small enough to update within a short run.
BALL_CONFIG = shipped_config("3DBallLearning", buffer_size=2400, max_steps=6000)


@pytest.mark.learning
@pytest.mark.timeout(480)  # the run may take 400 s under load
@pytest.mark.skipif(not BALL.exists(), reason="the 3DBall build is missing")
def test_3dball_learns(tmp_path, free_port_range):
    """A short PPO run on 3DBall (12 agents per instance, continuous actions, normalization) with
    two instances: the artifacts are there and the balancing time per episode grows."""
    (tmp_path / "config.yaml").write_text(BALL_CONFIG)
    port = free_port_range(2)
    run = LearnProcess(
        tmp_path,
        "config.yaml",
        "--env",
        BALL,
        "--num-envs=2",
        "--base-port",
        port,
        "--train",
        "--run-id=ball",
        "--seed=3",
        "--deterministic",
        "--no-graphics",
    )
    output = finish_ok(run, [port, port + 1], timeout=400)
    assert "Traceback" not in output
    lines = console_lines(output)
    assert [line["brain"] for line in lines] == ["3DBallLearning"] * 6
    assert (tmp_path / "models" / "ball-0" / "3DBallLearning.nn").is_file()
    assert (tmp_path / "models" / "ball-0" / "3DBallLearning" / "checkpoint").is_file()
    rewards = read_scalars(tmp_path / "summaries" / "ball_3DBallLearning")["Environment/Cumulative Reward"]
    # A random policy drops the ball after ~1 s (mean reward ~1); after a few updates the ball stays
    # up far longer (this deterministic run, 2026-12-04: 1.2, 2.0, 5.6, 14.3, 35.2, 62.7).
    assert rewards[0][1] < 2.0, rewards
    assert rewards[-1][1] > 10.0, rewards


@pytest.mark.skipif(not BALL.exists(), reason="the 3DBall build is missing")
def test_seed_zero_gives_each_worker_its_own_episodes(free_port_range):
    """With --seed=0 every worker draws its own Unity seed, so two instances start differently."""
    from mlagents.trainers.learn import create_environment_factory

    port = free_port_range(2)
    factory = create_environment_factory(str(BALL), None, True, 0, port)
    envs = [factory(0), factory(1)]
    try:
        first = [env.reset()["3DBallLearning"].vector_observations for env in envs]
        assert first[0].shape == first[1].shape == (12, 8)
        assert not (first[0] == first[1]).all()
    finally:
        for env in envs:
            env.close()
    assert leftovers([port, port + 1]) == []
