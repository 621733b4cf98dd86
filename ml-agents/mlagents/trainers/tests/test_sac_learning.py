"""SAC learns the tiny tasks of :mod:`mlagents.trainers.tests.tiny_envs` in seconds, through the real
training loop, and fails them when a part of it is broken (tier 1 of the learning tests).

Runs are seeded and deterministic: the same seed gives the same TensorBoard scalars, so each figure
checked here is exact for its seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlagents.trainers.tests import test_simple_rl
from mlagents.trainers.tests.test_simple_rl import CURIOSITY, LESSONS
from mlagents.trainers.tests.tiny_envs import (
    Corridor,
    GoalLine,
    MaskedDoors,
    RecallCue,
    Task,
    TinyEnvironment,
    Training,
    VisualGoal,
    sac_section,
    train,
)

pytestmark = pytest.mark.slow

#: The demonstrations of the PPO tests (the goal line's and the corridor's expert, and a random
#: player on each), recorded once per module.
demos = test_simple_rl.demos


def run(
    folder: Path,
    task: Task,
    seed: int = 0,
    curriculum: dict[str, Any] | None = None,
    **overrides: Any,
) -> Training:
    """Train SAC (:func:`sac_section` with ``overrides``) on ``task``, the environment's only brain,
    with ``curriculum`` (its lessons) if given."""
    lessons = None if curriculum is None else {task.brain.brain_name: curriculum}
    config = {task.brain.brain_name: sac_section(**overrides)}
    return train(folder, TinyEnvironment([task]), config, seed, lessons)


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
def test_sac_walks_to_the_goal(tmp_path: Path, continuous: bool) -> None:
    rewards = run(tmp_path, GoalLine(continuous=continuous)).rewards()
    assert len(rewards) == 10
    assert min(rewards[-3:]) >= 0.95, rewards


def test_same_seed_same_scalars(tmp_path: Path) -> None:
    first = run(tmp_path / "a", GoalLine(), max_steps=300)
    second = run(tmp_path / "b", GoalLine(), max_steps=300)
    assert first.scalars == second.scalars
    assert first.series("Losses/Q1 Loss") and first.series("Policy/Entropy Coeff")


def test_a_huge_entropy_coefficient_keeps_the_policy_random(tmp_path: Path) -> None:
    # alpha starts at 1e4 and cannot fall far within the run: the entropy bonus drowns the reward.
    training = run(tmp_path, GoalLine(), init_entcoef=1.0e4)
    assert max(abs(r) for r in training.rewards()) < 0.15, training.rewards()
    assert min(value for _, value in training.series("Policy/Entropy Coeff")) > 100.0


def test_a_frozen_target_network_does_not_hold_the_goal(tmp_path: Path) -> None:
    # tau = 0: the target never leaves its initial values, so values never propagate back from the
    # goal beyond one step; the policy does not stay at the goal reward.
    rewards = run(tmp_path, GoalLine(), tau=0.0).rewards()
    assert max(rewards[-3:]) < 0.6, rewards


def test_lstm_memory_recalls_the_cue(tmp_path: Path) -> None:
    rewards = run(
        tmp_path,
        RecallCue(),
        use_recurrent=True,
        memory_size=32,
        sequence_length=3,
        max_steps=800,
        summary_freq=200,
    ).rewards()
    assert max(rewards) >= 0.95, rewards


def test_without_memory_the_cue_is_lost(tmp_path: Path) -> None:
    rewards = run(tmp_path, RecallCue(), max_steps=800, summary_freq=200).rewards()
    assert max(abs(r) for r in rewards) < 0.3, rewards


# ---------------------------------------------------------------------------------------- action masks


def test_sac_draws_within_the_action_masks(tmp_path: Path) -> None:
    """MaskedDoors: only the masks tell which of three doors is open (a closed one costs 0.5)."""
    rewards = run(tmp_path, MaskedDoors(seed=1), 1, max_steps=400).rewards()
    # Seed 1: 0.46 at step 100, 1.00 from step 200 on: no closed door passed.
    assert rewards[-1] >= 0.95, rewards


def test_without_action_masks_the_closed_doors_cost(tmp_path: Path) -> None:
    rewards = run(tmp_path, MaskedDoors(seed=1, send_masks=False), 1, max_steps=400).rewards()
    # Seed 1: 0.23 to 0.34 from step 200 on: the goal's 1 less about 0.67 of closed doors.
    assert max(rewards) <= 0.5, rewards


# ---------------------------------------------------------------------------------------- camera


@pytest.mark.parametrize("blank", [False, True], ids=["camera", "blank-camera"])
def test_sac_reads_the_goal_from_the_camera(tmp_path: Path, blank: bool) -> None:
    """VisualGoal: the goal end is only in the 20x20 image; a black image leaves it to chance."""
    rewards = run(tmp_path, VisualGoal(seed=1, blank_camera=blank), 1, max_steps=300).rewards()
    if blank:
        # Seed 1: -0.02/0.01/-0.10 at steps 100/200/300.
        assert max(abs(r) for r in rewards) <= 0.3, rewards
    else:
        # Seed 1: 0.91/1.00/1.00.
        assert min(rewards[-2:]) >= 0.95, rewards


# ---------------------------------------------------------------------------------------- curriculum


@pytest.mark.parametrize("learning_rate", [3.0e-3, 0.0], ids=["learning", "not-learning"])
def test_sac_curriculum_advances_only_as_it_learns(tmp_path: Path, learning_rate: float) -> None:
    """GoalLine's distance grows from 1 to 3 cells as the mean reward of a lesson passes 0.8
    (``LESSONS`` of the PPO tests); without learning no lesson changes."""
    training = run(
        tmp_path,
        GoalLine(seed=1, distance=1),
        1,
        LESSONS,
        max_steps=400,
        summary_freq=50,
        learning_rate=learning_rate,
    )
    distances = [parameters["distance"] for _, parameters in training.resets]
    lessons = {lesson for _, lesson in training.series("Environment/Lesson")}
    if learning_rate:
        # Seed 1: reset to distance 2 at step 84 and to 3 at step 96; 1.00 from step 150 on.
        assert distances == [1.0, 2.0, 3.0], training.resets
        assert training.series("Environment/Lesson")[-1][1] == 2.0
        assert training.rewards()[-1] >= 0.9, training.rewards()
    else:
        # Seed 1: every summary between -0.13 and 0.00.
        assert distances == [1.0], training.resets
        assert lessons == {0.0}


# ---------------------------------------------------------------------------------------- sparse reward

#: SAC on the corridor: a wider network than the default tiny section, and a summary every 200 steps.
CORRIDOR_SAC: dict[str, Any] = {"hidden_units": 32, "max_steps": 1800, "summary_freq": 200}


@pytest.mark.parametrize("curious", [True, False], ids=["curiosity", "alone"])
def test_curiosity_gets_sac_to_the_sparse_reward(tmp_path: Path, curious: bool) -> None:
    """Corridor: the curiosity of the PPO test (``CURIOSITY``, strength 1, gamma 0.9) leads SAC from
    the rest at the start to the far end; SAC alone settles for the rest."""
    signals: dict[str, Any] = {"extrinsic": {"strength": 1.0, "gamma": 0.9}}
    if curious:
        signals["curiosity"] = CURIOSITY
    rewards = run(tmp_path, Corridor(seed=1), 1, reward_signals=signals, **CORRIDOR_SAC).rewards()
    if curious:
        # Seed 1: 0.90/0.99/1.00 at steps 1400/1600/1800 (seeds 2/3: 0.95/0.99 at step 2000).
        assert rewards[-1] >= 0.9, rewards
    else:
        # Seed 1: 0.51 from step 1000 on, the rest all episode long (each decision at the end would
        # add 0.2).
        assert max(rewards) <= 0.6, rewards


# ---------------------------------------------------------------------------------------- demonstrations


@pytest.mark.parametrize("demo", ["corridor", "corridor_random"])
def test_sac_with_gail_alone_imitates_the_demonstration(
    tmp_path: Path, demo: str, demos: dict[str, Path]
) -> None:
    """Corridor, learning from the discriminator's reward only (the environment's reward is only
    reported): the expert's demonstration walks the agents to the end, a random player's does not."""
    signal = {"strength": 1.0, "gamma": 0.99, "demo_path": str(demos[demo]), "encoding_size": 32}
    signal.update({"learning_rate": 3.0e-3, "use_actions": True})
    rewards = run(tmp_path, Corridor(seed=1), 1, max_steps=500, reward_signals={"gail": signal}).rewards()
    if demo == "corridor":
        # Seed 1: 0.10/0.63/0.97/1.00/1.00 at steps 100 to 500.
        assert rewards[-1] >= 0.95, rewards
    else:
        # Seed 1: 0.02 to 0.17; the random player's demonstration scored 0.07.
        assert max(rewards) <= 0.3, rewards


@pytest.mark.parametrize("demo", ["corridor", "corridor_random"])
def test_pretraining_gets_sac_to_the_sparse_reward(tmp_path: Path, demo: str, demos: dict[str, Path]) -> None:
    """Corridor with the environment's reward and behavioural cloning of a demonstration after
    every update: the expert's gets SAC past the rest at the start (SAC alone: 0.51), a random
    player's does not."""
    pretraining = {"demo_path": str(demos[demo]), "strength": 1.0, "steps": 0}
    rewards = run(tmp_path, Corridor(seed=1), 1, max_steps=800, pretraining=pretraining).rewards()
    if demo == "corridor":
        # Seed 1: 0.54/0.67/0.82/0.91/0.95 at steps 400 to 800.
        assert rewards[-1] >= 0.9, rewards
    else:
        assert max(rewards) <= 0.6, rewards


# ---------------------------------------------------------------------------------------- step limit


def test_a_step_limit_does_not_end_the_backup(tmp_path: Path) -> None:
    """Corridor episodes never end but by the step limit (12 decisions): each is stored as 12 steps,
    none done, the next observation of the last one the observation it decided on (so the target
    bootstraps from that state) and of the others the following step's."""
    task = Corridor(n_agents=2, seed=1)
    trainer = run(tmp_path, task, 1, max_steps=60).trainers[task.brain.brain_name]
    replay = trainer.replay_buffer
    observations, following = replay["vector_obs"], replay["next_vector_in"]
    assert len(replay) >= 48 and len(replay) % task.max_step == 0, len(replay)
    assert not np.any(replay["done"])
    last = np.arange(len(replay)) % task.max_step == task.max_step - 1
    np.testing.assert_array_equal(following[last], observations[last])
    np.testing.assert_array_equal(following[:-1][~last[:-1]], observations[1:][~last[:-1]])
    # The rule made a difference: some last decisions moved the agent (a move away from cell 0 or
    # towards the end), so the observation after them was another cell.
    cells = observations.argmax(axis=1)
    moves = replay["actions"].reshape(-1)
    moved = ((moves == 1) & (cells > 0)) | ((moves == 2) & (cells < task.length))
    assert np.any(moved[last]), moves[last]


def test_a_true_end_ends_the_backup(tmp_path: Path) -> None:
    """GoalLine: the steps that reach an end (reward -1 or +1) are the done ones, each with the end
    as its next observation."""
    task = GoalLine(n_agents=2, seed=1)
    trainer = run(tmp_path, task, 1, max_steps=60).trainers[task.brain.brain_name]
    replay = trainer.replay_buffer
    done = replay["done"].astype(bool).reshape(-1)
    rewards = replay["environment_rewards"].reshape(-1)
    assert done.sum() >= 5, done
    np.testing.assert_array_equal(done, rewards != 0.0)
    np.testing.assert_array_equal(np.abs(replay["next_vector_in"][done, 1]), 1.0)
