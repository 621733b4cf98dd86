"""SAC learns the tiny tasks of :mod:`mlagents.trainers.tests.tiny_envs` in seconds, through the real
training loop, and fails them when a part of it is broken (tier 1 of the learning tests).

Runs are seeded and deterministic: the same seed gives the same TensorBoard scalars, so each figure
checked here is exact for its seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mlagents.trainers.tests.tiny_envs import GoalLine, RecallCue, Task, TinyEnvironment, Training, train

pytestmark = pytest.mark.slow


def sac_section(**overrides: Any) -> dict[str, Any]:
    """A ``trainer: sac`` section with a tiny network, updated at every step from the first batch."""
    section: dict[str, Any] = {
        "trainer": "sac",
        "batch_size": 32,
        "buffer_size": 2000,
        "buffer_init_steps": 0,
        "hidden_units": 16,
        "init_entcoef": 0.1,
        "learning_rate": 3.0e-3,
        "max_steps": 1000,
        "memory_size": 16,
        "normalize": False,
        "num_update": 1,
        "num_layers": 1,
        "time_horizon": 16,
        "sequence_length": 4,
        "summary_freq": 100,
        "tau": 0.01,
        "use_recurrent": False,
        "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.9}},
    }
    section.update(overrides)
    return section


def run(folder: Path, task: Task, seed: int = 0, **overrides: Any) -> Training:
    return train(folder, TinyEnvironment([task]), {task.brain.brain_name: sac_section(**overrides)}, seed)


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
