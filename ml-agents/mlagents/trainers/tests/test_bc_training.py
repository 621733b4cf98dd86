"""End to end: behavioural cloning through the real ``mlagents-learn`` on real example builds.

* offline BC with the shipped ``config/offline_bc_config.yaml`` and the shipped demonstrations
  ``demos/ExpertBasic.demo`` / ``demos/Expert3DBall.demo``: the student reaches 90% of the mean reward
  of the heuristic that played them;
* online BC with the shipped ``config/online_bc_config.yaml`` on Basic started with
  ``--teacher BasicTeacher=BasicLearning`` (through ``MLAGENTS_BUILD_ARGS``): a teacher brain beside
  the learner decides with Basic's heuristic in the build and is broadcast, and ``BasicLearning``
  learns from it while both play;
* the imitation errors that need the brains (a demonstration of another brain with other actions,
  a ``brain_to_imitate`` the environment lacks): for an example build one line, exit 1, before any
  build starts (its brains come from the example catalogue). (The other configuration errors found
  before any build starts are in test_learn.py; the same checks after another build started are
  unit-tested in test_bc.py.)

Each training run uses ``--num-envs=2`` (the error runs one environment), the shipped config with
only ``max_steps`` and ``summary_freq`` lowered, and checks that nothing is left running. A student
is judged after its run, by its exported ``.nn`` model playing at least 120 whole episodes
in-process (the example SDK's inference brain, a fixed seed), against the heuristic's mean reward
measured the same way: a console summary window covers too few episodes to show a student that
fails now and then.
"""

import os
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

import mlagents.example_envs.registry  # noqa: F401  (registers the examples' names)
from mlagents.example_envs.sdk.brains import BrainSettings
from mlagents.example_envs.sdk.inference.brain import INFERENCE
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.trainers.tests.episode_helpers import episode_rewards
from mlagents.trainers.tests.learn_helpers import assert_nothing_left, leftovers, python_that_notes, run_learn

REPO = Path(__file__).resolve().parents[4]
BUILDS = REPO / "example-envs" / "builds"
DEMOS = REPO / "demos"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (DEMOS / "ExpertBasic.demo").exists() or not (DEMOS / "Expert3DBall.demo").exists(),
        reason="the shipped demonstrations are missing",
    ),
]

CONSOLE_LINE = re.compile(
    r"^INFO:mlagents\.trainers: \S+: (?P<brain>\S+): Step: (?P<step>[\d.]+)\. "
    r"Time Elapsed: [\d.]+ s Mean Reward: (?P<mean>-?[\d.]+)\."
)


def mean_rewards(output, brain):
    """(step, mean reward) of every console summary of ``brain`` that had finished episodes."""
    return [
        (float(m["step"]), float(m["mean"]))
        for m in map(CONSOLE_LINE.match, output.splitlines())
        if m and m["brain"] == brain
    ]


#: Whole episodes every agent plays when a student is judged: Basic has 1 agent, 3DBall 12.
JUDGED_EPISODES_PER_AGENT = {"Basic": 120, "3DBall": 10}
#: The fewest episodes a student is judged on.
JUDGED_EPISODES = 120
#: The seed of the environment the students are judged in (another than their training's).
JUDGING_SEED = 11


def heuristic_mean_reward(scene, brain):
    """The mean episode reward of the example's heuristic (the teacher of its shipped demonstration),
    measured in-process. 3DBall's heuristic never drops the ball (every episode lasts to the max
    step, 100.1): one episode per agent tells its mean."""
    from mlagents.example_envs.ball3d import balance
    from mlagents.example_envs.basic import walk_to_large_goal

    heuristic = {"Basic": walk_to_large_goal, "3DBall": balance}[scene]
    per_agent = {"Basic": JUDGED_EPISODES_PER_AGENT["Basic"], "3DBall": 1}[scene]
    with LocalEnvironment(scene, seed=JUDGING_SEED) as env:
        rewards = episode_rewards(env, brain, lambda batch: heuristic(batch.vector_observations), per_agent)
    return float(np.mean(rewards))


def student_rewards(scene, brain, model):
    """The rewards of at least :data:`JUDGED_EPISODES` whole episodes played in-process by the
    exported ``model`` of ``brain`` (the build's inference brain decides; Python only watches)."""
    settings = BrainSettings(kinds={brain: (INFERENCE, str(model))}, broadcast={brain})
    with LocalEnvironment(scene, seed=JUDGING_SEED, brain_settings=settings) as env:
        rewards = episode_rewards(env, brain, None, JUDGED_EPISODES_PER_AGENT[scene])
    assert len(rewards) >= JUDGED_EPISODES
    return rewards


def assert_student_reaches(scene, brain, model, target):
    """The exported student's mean reward over its judged episodes is at least ``target``."""
    rewards = np.asarray(student_rewards(scene, brain, model))
    failed = int(np.sum(rewards < target / 2))
    assert rewards.mean() >= target, (
        f"mean {rewards.mean():.3f} over {len(rewards)} episodes, target {target:.3f}, {failed} failed"
    )


def shipped_config(cwd, name, brain, max_steps, summary_freq, **changes):
    """Copy config/<name> into ``cwd`` with ``brain``'s budget lowered; link demos/ beside it."""
    config = yaml.safe_load((REPO / "config" / name).read_text())
    config[brain].update(max_steps=max_steps, summary_freq=summary_freq, **changes)
    (cwd / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    os.symlink(DEMOS, cwd / "demos")
    return "config.yaml"


def learn(cwd, config, env, port, *extra, timeout=240, num_envs=2):
    status, out, err = run_learn(
        cwd,
        config,
        f"--env={env}",
        f"--num-envs={num_envs}",
        f"--base-port={port}",
        "--train",
        "--seed=3",
        "--deterministic",
        *extra,
        timeout=timeout,
    )
    assert leftovers(range(port, port + 2)) == []
    return status, out, err


@pytest.mark.parametrize(
    "example, brain, max_steps, summary_freq",
    [
        ("Basic", "BasicLearning", 1000, 250),
        # An episode lasts 1000 decisions (~2000 steps with two environments). Training and the
        # 120-episode judgement take about a minute on a quiet machine, several on a loaded one.
        pytest.param(
            "3DBall", "3DBallLearning", 4500, 2250, marks=[pytest.mark.learning, pytest.mark.timeout(900)]
        ),
    ],
)
def test_offline_bc_reaches_the_heuristic(tmp_path, free_port_range, example, brain, max_steps, summary_freq):
    target = 0.9 * heuristic_mean_reward(example, brain)
    config = shipped_config(tmp_path, "offline_bc_config.yaml", brain, max_steps, summary_freq)
    port = free_port_range(2)
    status, out, err = learn(tmp_path, config, BUILDS / f"{example}.x86_64", port)
    assert status == 0, err[-3000:]
    means = mean_rewards(err, brain)
    assert means and means[-1][0] > max_steps / 2, err[-3000:]
    model = tmp_path / "models" / "ppo-0" / f"{brain}.nn"
    assert model.stat().st_size > 0
    assert list((tmp_path / "summaries" / f"ppo_{brain}").iterdir())
    assert_student_reaches(example, brain, model, target)


#: The build option that adds Basic's heuristic teacher beside the learner, as mlagents-learn passes it.
TEACHER_ARGS = "--teacher BasicTeacher=BasicLearning"


def test_online_bc_learns_from_the_broadcast_heuristic_teacher(tmp_path, free_port_range, monkeypatch):
    target = 0.9 * heuristic_mean_reward("Basic", "BasicLearning")
    config = shipped_config(tmp_path, "online_bc_config.yaml", "BasicLearning", 1000, 250)
    monkeypatch.setenv("MLAGENTS_BUILD_ARGS", TEACHER_ARGS)
    port = free_port_range(2)
    status, out, err = learn(tmp_path, config, BUILDS / "Basic.x86_64", port)
    assert status == 0, err[-3000:]
    means = mean_rewards(err, "BasicLearning")
    assert means and means[-1][0] > 500, err[-3000:]
    assert mean_rewards(err, "BasicTeacher") == []  # the teacher is not trained
    model = tmp_path / "models" / "ppo-0" / "BasicLearning.nn"
    assert model.stat().st_size > 0
    assert not (tmp_path / "models" / "ppo-0" / "BasicTeacher").exists()
    assert_student_reaches("Basic", "BasicLearning", model, target)


def _learn_error(cwd, config, port):
    """Run mlagents-learn on the Basic build and return its one error line (exit 1, no traceback)."""
    status, out, err = learn(cwd, config, BUILDS / "Basic.x86_64", port, num_envs=1, timeout=120)
    errors = [line for line in err.splitlines() if line.startswith("ERROR:")]
    assert status == 1 and "Traceback" not in err and len(errors) == 1, err[-3000:]
    # Found before the environment manager was created: nothing was launched or connected.
    assert "started successfully" not in err + out and "Academy" not in err + out, err[-3000:]
    return errors[0]


def test_imitation_errors_of_an_example_build_come_before_it_starts(tmp_path, free_port_range, monkeypatch):
    python, marker = python_that_notes(tmp_path)
    monkeypatch.setenv("MLAGENTS_PYTHON", str(python))
    port = free_port_range(2)

    # A demonstration of 3DBall (continuous actions) for Basic (discrete).
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    config = shipped_config(
        wrong, "offline_bc_config.yaml", "BasicLearning", 1000, 250, demo_path="demos/Expert3DBall.demo"
    )
    error = _learn_error(wrong, config, port)
    assert (
        "The provided demonstration is not compatible with the brain being used for performance evaluation"
        in error
    )
    assert (
        "vector_action_space_type is 'continuous' in the demonstration but 'discrete' in the brain BasicLearning"
        in error
    )
    assert not (wrong / "models" / "ppo-0" / "BasicLearning").exists()

    # A teacher the environment does not have (the build's brains include the --teacher one).
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    config = shipped_config(
        unknown, "online_bc_config.yaml", "BasicLearning", 1000, 250, brain_to_imitate="Nobody"
    )
    monkeypatch.setenv("MLAGENTS_BUILD_ARGS", TEACHER_ARGS)
    error = _learn_error(unknown, config, port)
    assert "The brain_to_imitate Nobody of brain BasicLearning is not a brain of the environment" in error
    assert "BasicTeacher" in error

    assert not marker.exists(), "a build was started"
    assert_nothing_left(range(port, port + 2))
