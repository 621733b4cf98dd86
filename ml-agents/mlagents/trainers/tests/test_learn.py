"""The mlagents-learn command line: usage, and one clear line + exit status 1 for every user error.

Runs the real command (``python -m mlagents.trainers.learn``) in a temporary working directory;
the cases that get as far as the environment launch the real Basic build on free ports and check
that nothing is left running afterwards.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlagents.trainers import learn
from mlagents.trainers.tests.learn_helpers import learn_args, leftovers, run_learn, trainer_config

REPO = Path(__file__).resolve().parents[4]
BASIC = REPO / "example-envs" / "builds" / "Basic.x86_64"


def valid_config(**changes):
    """A config that mlagents-learn accepts for Basic, with a short budget (``changes`` as in
    ``trainer_config``)."""
    return trainer_config(**{"max_steps": 1.0e3, "summary_freq": 100, **changes})


VALID_CONFIG = valid_config()


def error_lines(err):
    return [line for line in err.splitlines() if line.startswith("ERROR:")]


def assert_one_clear_error(status, err, expected):
    assert status == 1, err
    assert "Traceback" not in err, err
    errors = error_lines(err)
    assert len(errors) == 1, err
    assert expected in errors[0], errors[0]


def test_help_into_a_closed_pipe_ends_quietly(tmp_path):
    """``mlagents-learn --help | head -1``: the reader is gone before the help is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "mlagents.trainers.learn", "--help"],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert result.returncode == learn.BROKEN_PIPE_STATUS == 141
    assert result.stderr == ""


def test_help(tmp_path):
    status, out, err = run_learn(tmp_path, "--help")
    assert status == 0
    assert "mlagents-learn <trainer-config-path> [options]" in out
    for flag, _default in [
        ("--env=<file>", "None"),
        ("--curriculum=<directory>", "None"),
        ("--sampler=<file>", "None"),
        ("--keep-checkpoints=<n>", "5"),
        ("--lesson=<n>", "0"),
        ("--run-id=<path>", "ppo"),
        ("--num-runs=<n>", "1"),
        ("--save-freq=<n>", "50000"),
        ("--seed=<n>", "-1"),
        ("--base-port=<n>", "5005"),
        ("--num-envs=<n>", "1"),
        ("--docker-target-name=<dt>", "None"),
        ("--video-freq=<n>", "0"),
    ]:
        assert flag in out
    for flag in ["--load", "--slow", "--train", "--no-graphics", "--debug", "--multi-gpu", "--deterministic"]:
        assert flag in out


def test_parsed_defaults():
    options = learn.parse_command_line(["config.yaml"])
    assert options == {
        "<trainer-config-path>": "config.yaml",
        "--env": "None",
        "--curriculum": "None",
        "--sampler": "None",
        "--keep-checkpoints": "5",
        "--lesson": "0",
        "--load": False,
        "--run-id": "ppo",
        "--num-runs": "1",
        "--save-freq": "50000",
        "--seed": "-1",
        "--deterministic": False,
        "--slow": False,
        "--train": False,
        "--base-port": "5005",
        "--num-envs": "1",
        "--docker-target-name": "None",
        "--no-graphics": False,
        "--debug": False,
        "--multi-gpu": False,
        "--env-manager": "subprocess",
        "--ray-address": "None",
        "--video-freq": "0",
        "--help": False,
        # Beyond v0.9: restarts of lost environment workers.
        "--max-lifetime-restarts": "10",
        "--restarts-rate-limit-n": "1",
        "--restarts-rate-limit-period-s": "60",
    }


def test_deterministic_option():
    assert not learn.validate_options(learn.parse_command_line(["c.yaml"])).deterministic
    assert learn.validate_options(learn.parse_command_line(["c.yaml", "--deterministic"])).deterministic


def test_worker_seeds():
    """Worker w starts with the run seed + w; each restart gets a seed of its own, a function of
    the run seed, the worker and the restart number alone."""
    assert [learn.worker_seed(5, w) for w in range(3)] == [5, 6, 7]
    restarted = {(w, r): learn.worker_seed(5, w, r) for w in range(3) for r in range(1, 4)}
    assert len(set(restarted.values())) == len(restarted)
    assert not set(restarted.values()) & {5, 6, 7}
    assert all(0 <= seed < 2**31 for seed in restarted.values())
    assert learn.worker_seed(5, 1, 2) == restarted[(1, 2)]
    assert learn.worker_seed(6, 1, 2) != restarted[(1, 2)]
    assert learn.worker_seed(-3, 0, 1) >= 0  # a negative run seed still fits the wire's int32


def test_malformed_command_line(tmp_path):
    status, out, err = run_learn(tmp_path, "config.yaml", "--no-such-flag")
    assert status == 1
    assert "Usage:" in out + err


def test_missing_config_file(tmp_path):
    status, _, err = run_learn(tmp_path, "missing.yaml", "--env", BASIC, "--train")
    assert_one_clear_error(status, err, "Parameter file could not be found at missing.yaml.")


def test_malformed_yaml(tmp_path):
    (tmp_path / "bad.yaml").write_text("default:\n  trainer: ppo\n   batch_size: 3\n")
    status, _, err = run_learn(tmp_path, "bad.yaml", "--env", BASIC, "--train")
    assert_one_clear_error(status, err, "The file bad.yaml is not valid YAML (line 3")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--num-runs=2"], "It is not possible to launch more than one concurrent training session"),
        (["--num-envs=2"], "--num-envs greater than 1 needs an environment executable (--env)"),
        (["--env", "x", "--num-envs=two"], "--num-envs must be a whole number, not 'two'."),
        (["--env", "x", "--save-freq=0"], "--save-freq must be at least 1, not 0."),
        (["--env", "x", "--base-port=65535", "--num-envs=4"], "--base-port is too high"),
    ],
)
def test_invalid_options(tmp_path, args, message):
    (tmp_path / "config.yaml").write_text(VALID_CONFIG)
    status, _, err = run_learn(tmp_path, "config.yaml", *args)
    assert_one_clear_error(status, err, message)


@pytest.mark.slow
def test_missing_environment_executable(tmp_path, free_port_range):
    (tmp_path / "config.yaml").write_text(VALID_CONFIG)
    port = free_port_range(2)
    status, _, err = run_learn(tmp_path, "config.yaml", "--env", "NoSuchEnv.x86_64", "--base-port", port)
    assert_one_clear_error(status, err, "Couldn't launch the NoSuchEnv environment")


needs_basic = pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing")


def write_probe_build(folder):
    """A stand-in build ``Probe.x86_64`` in ``folder`` that appends its arguments to
    ``probe-started.txt`` there and exits at once; returns (build, record file)."""
    record = folder / "probe-started.txt"
    build = folder / "Probe.x86_64"
    build.write_text(f'#!/bin/sh\necho "$@" >> "{record}"\nexit 3\n')
    build.chmod(0o755)
    return build, record


def run_with_probe_build(tmp_path, port, *extra):
    """mlagents-learn on config.yaml with 4 environments of the probe build; returns (status, stderr)."""
    build, _ = write_probe_build(tmp_path)
    status, _, err = run_learn(
        tmp_path,
        "config.yaml",
        "--env",
        build,
        "--num-envs=4",
        "--base-port",
        port,
        "--train",
        "--no-graphics",
        *extra,
    )
    return status, err


@pytest.mark.slow
def test_probe_build_records_its_launch(tmp_path, free_port_range):
    """The control of the tests below: with a valid configuration the probe build is launched (and
    the run then fails, the probe being no environment)."""
    (tmp_path / "config.yaml").write_text(VALID_CONFIG)
    port = free_port_range(4)
    status, err = run_with_probe_build(tmp_path, port)
    assert status == 1, err
    record = tmp_path / "probe-started.txt"
    assert record.exists(), err
    launches = record.read_text().splitlines()
    assert launches and all("--port" in line for line in launches), launches
    assert leftovers(range(port, port + 4)) == []


CURRICULUM = (
    '{"measure": "progress", "thresholds": [0.5], "min_lesson_length": 1, "signal_smoothing": false, '
    '"parameters": {}}'
)


@pytest.mark.parametrize(
    "config, extra, message",
    [
        (
            valid_config(trainer="dqn"),
            [],
            "The trainer config contains an unknown trainer type for the default section: 'dqn' "
            "(known types: ppo, sac, offline_bc, online_bc) (trainer config config.yaml).",
        ),
        (
            valid_config(trainer=None),
            [],
            "does not say which trainer to use for the default section (trainer config config.yaml)",
        ),
        (
            valid_config(batch_size=None),
            [],
            "The hyper-parameter batch_size could not be found for the "
            "<class 'mlagents.trainers.ppo.trainer.PPOTrainer'> trainer of the default section "
            "(trainer config config.yaml).",
        ),
        (
            valid_config(batch_size="many"),
            [],
            "UnityTrainerException: The hyper-parameter batch_size of the default section must be a whole "
            "number of at least 1, not 'many' (trainer config config.yaml).",
        ),
        (
            valid_config() + "BasicLearning:\n  hidden_units: 12.5\n",
            [],
            "The hyper-parameter hidden_units of brain BasicLearning must be a whole number of at least 1, "
            "not 12.5 (trainer config config.yaml).",
        ),
        (
            valid_config(reward_signals={"novelty": {"strength": 1.0, "gamma": 0.9}}),
            [],
            "Unknown reward signal type novelty (reward_signals of the default section (trainer config "
            "config.yaml))",
        ),
        (
            valid_config(reward_signals={"extrinsic": {"strength": 1.0, "gamma": 0.9, "size": 3}}),
            [],
            "Unknown parameters given for reward signal extrinsic",
        ),
        (
            valid_config(reward_signals={}),
            [],
            "No reward signals were defined. At least one must be used with PPOTrainer",
        ),
        (
            valid_config(use_recurrent=True, memory_size=6),
            [],
            "The memory size for the default section is 6 but it must be divisible by 4.",
        ),
        (
            valid_config(trainer="offline_bc", batches_per_epoch=10),
            [],
            "The hyper-parameter demo_path could not be found for the "
            "<class 'mlagents.trainers.bc.offline_trainer.OfflineBCTrainer'> trainer of the default section",
        ),
        (
            valid_config(trainer="offline_bc", batches_per_epoch=10, demo_path="demos/Nowhere.demo"),
            [],
            "UnityTrainerException: The demonstration file or directory demos/Nowhere.demo does not exist. "
            "(the demo_path of the default section, trainer config config.yaml)",
        ),
        (
            valid_config(trainer="online_bc", batches_per_epoch=10),
            [],
            "The hyper-parameter brain_to_imitate could not be found for the "
            "<class 'mlagents.trainers.bc.online_trainer.OnlineBCTrainer'> trainer of the default section",
        ),
        (
            valid_config(pretraining={"demo_path": "demos/Nowhere.demo", "strength": 0.5, "steps": 100}),
            [],
            "The demonstration file or directory demos/Nowhere.demo does not exist. (the pretraining demo_path "
            "of the default section, trainer config config.yaml)",
        ),
        (
            VALID_CONFIG,
            ["--curriculum", "curricula"],
            "There was an error decoding curricula/BasicLearning.json",
        ),
        (
            VALID_CONFIG,
            ["--video-freq", "1000"],
            "--video-freq records the example environments only",
        ),
    ],
    ids=[
        "unknown-trainer",
        "no-trainer-key",
        "missing-hyperparameter",
        "batch-size-not-a-number",
        "fractional-hidden-units",
        "unknown-reward-signal",
        "unknown-reward-signal-key",
        "no-reward-signal",
        "memory-size",
        "offline-bc-without-demo-path",
        "offline-bc-demo-path-not-found",
        "online-bc-without-brain-to-imitate",
        "pretraining-demo-path-not-found",
        "malformed-curriculum",
        "video-of-a-build-that-is-no-example",
    ],
)
def test_config_errors_found_before_any_build_starts(tmp_path, free_port_range, config, extra, message):
    (tmp_path / "config.yaml").write_text(config)
    (tmp_path / "curricula").mkdir()
    (tmp_path / "curricula" / "BasicLearning.json").write_text(CURRICULUM[:-10])
    port = free_port_range(4)
    status, err = run_with_probe_build(tmp_path, port, *extra)
    assert_one_clear_error(status, err, message)
    assert not (tmp_path / "probe-started.txt").exists(), "a build was launched"
    assert leftovers(range(port, port + 4)) == []


@pytest.mark.slow
@needs_basic
def test_brain_without_configuration_found_after_the_environment_started(tmp_path, free_port_range):
    """Which brains an environment has is known only once it runs."""
    (tmp_path / "config.yaml").write_text(valid_config().replace("default:", "OtherLearning:"))
    port = free_port_range(2)
    status, _, err = run_learn(tmp_path, *learn_args(BASIC, base_port=port, num_envs=2))
    assert_one_clear_error(
        status, err, "The trainer config has no section for the brain BasicLearning and no 'default' section."
    )
    assert leftovers([port, port + 1]) == []


@pytest.mark.parametrize(
    "sampler, message",
    [
        (
            "mass:\n  sampler-type: uniform\n  min_value: 1\n  max_value: 2\n",
            "Resampling interval was not specified",
        ),
        ("resampling-interval: -5\n", "Specified resampling-interval is not valid"),
        ("resampling-interval: 10\nmass:\n  min_value: 1\n", "'sampler_type' argument hasn't been supplied"),
    ],
)
def test_sampler_file_errors_before_launch(tmp_path, sampler, message):
    (tmp_path / "config.yaml").write_text(VALID_CONFIG)
    (tmp_path / "sampler.yaml").write_text(sampler)
    status, _, err = run_learn(
        tmp_path, "config.yaml", "--env", BASIC, "--sampler", "sampler.yaml", "--train"
    )
    assert_one_clear_error(status, err, message)


@pytest.mark.slow
@needs_basic
@pytest.mark.parametrize(
    "files, extra, message",
    [
        pytest.param(
            {
                "sampler.yaml": "resampling-interval: 100\nmass:\n  sampler-type: uniform\n  min_value: 1\n  max_value: 2\n"
            },
            ["--sampler", "sampler.yaml"],
            "The sampler file sampler.yaml names reset parameters the environment does not have: mass.",
            id="sampler-for-an-unknown-reset-parameter",
        ),
        pytest.param(
            {},
            ["--load", "--run-id=never"],
            "The model ./models/never-0/BasicLearning could not be found. Make sure you specified the right --run-id",
            id="load-without-a-checkpoint",
        ),
        pytest.param(
            {
                "curricula/NotABrain.json": '{"measure": "progress", "thresholds": [0.5], "min_lesson_length": 1, '
                '"signal_smoothing": false, "parameters": {}}'
            },
            ["--curriculum", "curricula"],
            "One of the curricula defined in curricula does not have a corresponding Brain",
            id="curriculum-for-an-unknown-brain",
        ),
    ],
)
def test_errors_of_a_run_on_basic(tmp_path, free_port_range, files, extra, message):
    """A valid config on Basic with ``files`` (path: text) beside it and the options ``extra``: one
    clear error, no build left behind."""
    (tmp_path / "config.yaml").write_text(VALID_CONFIG)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    port = free_port_range(2)
    status, _, err = run_learn(
        tmp_path, "config.yaml", "--env", BASIC, "--base-port", port, "--train", *extra
    )
    assert_one_clear_error(status, err, message)
    assert leftovers([port]) == []


@pytest.mark.slow
@needs_basic
def test_several_runs_a_failing_run_does_not_hang(tmp_path, free_port_range):
    (tmp_path / "config.yaml").write_text(valid_config(trainer="dqn"))
    port = free_port_range(2)
    status, _, err = run_learn(
        tmp_path, "config.yaml", "--env", BASIC, "--num-runs=2", "--base-port", port, "--train", timeout=120
    )
    assert status == 1
    assert "Traceback" not in err
    assert "Run 0: UnityEnvironmentException: The trainer config contains an unknown trainer type" in err
    assert "Training run 0 ended before it started training (exit status 1)" in err
    assert "Run 1" not in err
    assert leftovers([port, port + 1]) == []
