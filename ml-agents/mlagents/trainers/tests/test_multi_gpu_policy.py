"""``--multi-gpu``: :class:`MultiGpuPPOPolicy` computes PPO's update in towers, one per device.

The tower checks need two devices. Two logical CPU devices stand in for two GPUs; TensorFlow takes
that configuration only before it starts, and it runs already in the test process (many test modules
use it), so the checks run in a fresh Python process (:func:`main`), which reports its figures as
JSON: on the same mini-batch and weights the towers' averaged gradients and losses are those of one
device; a few updates leave the weights of PPOPolicy's; and the tiny in-process environment learns
with ``--multi-gpu`` as with PPO. With fewer than two devices the policy is PPOPolicy, exactly (in
this process).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorflow as tf

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.ppo import trainer as trainer_module
from mlagents.trainers.ppo.multi_gpu_policy import MultiGpuPPOPolicy, shard_bounds
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.ppo.trainer import PPOTrainer
from mlagents.trainers.tests.policy_helpers import make_brain, small_ppo_params
from mlagents.trainers.tests.tiny_envs import GoalLine, TinyEnvironment, ppo_section, train

#: Relative error allowed between the towers' figures and one device's (float32 rounding: the
#: measured errors are below 1e-6).
TOLERANCE = 1e-5

#: This module, imported by the child process (pytest's ``__name__`` for it is a path).
CHILD_MODULE = "mlagents.trainers.tests.test_multi_gpu_policy"

#: The learning run of the end-to-end check: PPO learns it in 400 steps (``test_simple_rl``).
LEARNING_SEED = 1
LEARNING_STEPS = 400


# ---------------------------------------------------------------------------------------- mini-batches


def continuous_case(folder: Path) -> tuple[BrainParameters, dict[str, Any]]:
    """A feed-forward network with 2 continuous actions."""
    return make_brain("Brain", 3, [2], "continuous"), small_ppo_params(folder)


def recurrent_case(folder: Path) -> tuple[BrainParameters, dict[str, Any]]:
    """An LSTM network (sequences of 2 steps) with two discrete branches."""
    params = small_ppo_params(folder, use_recurrent=True, memory_size=8, sequence_length=2)
    return make_brain("Brain", 3, [3, 2], "discrete"), params


def mini_batch(
    brain: BrainParameters, steps: int, seed: int, masks: np.ndarray | None = None
) -> dict[str, Any]:
    """A random PPO mini-batch of ``steps`` steps (every step real unless ``masks`` says otherwise)."""
    rng = np.random.default_rng(seed)
    batch: dict[str, Any] = {
        "vector_obs": rng.normal(size=(steps, 3)),
        "masks": np.ones(steps) if masks is None else masks,
        "advantages": rng.normal(size=steps),
        "extrinsic_returns": rng.normal(size=steps),
        "extrinsic_value_estimates": rng.normal(size=steps),
        "memory": rng.normal(size=(steps, 8)),
    }
    branches = brain.vector_action_space_size
    if brain.vector_action_space_type == "continuous":
        batch["actions_pre"] = rng.normal(size=(steps, branches[0]))
        batch["action_probs"] = rng.normal(-1, 0.1, size=(steps, branches[0]))
    else:
        batch["actions"] = np.stack([rng.integers(0, size, steps) for size in branches], axis=1)
        batch["prev_action"] = np.stack([rng.integers(0, size, steps) for size in branches], axis=1)
        batch["action_probs"] = rng.normal(size=(steps, sum(branches)))
        batch["action_mask"] = np.ones((steps, sum(branches)))
    return batch


#: The recurrent case's masks: 7 sequences of 2 steps, cut 4 / 3 sequences (8 / 6 steps), 5 / 6 of
#: them real. Weighting the towers equally (1/2, 1/2) or by their steps (8/14, 6/14) rather than by
#: their real steps (5/11, 6/11) gives other gradients.
RECURRENT_MASKS = np.array([1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1], dtype=np.float32)


def relative_error(actual: Any, expected: Any) -> float:
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return float(np.max(np.abs(actual - expected)) / max(float(np.max(np.abs(expected))), 1e-12))


# ---------------------------------------------------------------------------------------- the child process


def configure_two_cpu_devices() -> list[str]:
    """Split the CPU into two logical devices (before TensorFlow starts); returns their names."""
    (cpu,) = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    return [device.name for device in tf.config.list_logical_devices("CPU")]


def single_device_gradients(policy: PPOPolicy, batch: dict[str, Any]) -> tuple[dict[str, float], list[Any]]:
    """The PPO loss values and gradients of ``batch`` computed as PPOPolicy's update does."""
    feed = {key: tf.constant(value) for key, value in policy.update_feed(batch).items()}
    with tf.GradientTape() as tape:
        losses = policy.model.losses(feed, policy.sequence_length)
    gradients = tape.gradient(losses["loss"], policy.model.trainable_variables)
    return {name: float(value.numpy()) for name, value in losses.items()}, [g.numpy() for g in gradients]


def tower_figures(
    folder: Path,
    devices: list[str],
    case: Callable[[Path], tuple[BrainParameters, dict[str, Any]]],
    steps: int,
    masks: np.ndarray | None,
) -> dict[str, Any]:
    """A PPO policy and a two-tower policy of the same seed: the errors of the towers' gradients and
    losses on a mini-batch, and of their weights and statistics after three updates."""
    brain, params = case(folder)
    single = PPOPolicy(0, brain, params, is_training=True)
    towers = MultiGpuPPOPolicy(0, brain, params, is_training=True, devices=devices)
    for variable, same in zip(single.model.trainable_variables, towers.model.trainable_variables):
        same.assign(variable)
    initial_weights = [variable.numpy() for variable in single.model.trainable_variables]
    first = mini_batch(brain, steps, 0, masks)
    expected_losses, expected_gradients = single_device_gradients(single, first)
    losses, gradients = towers.gradients(first)
    # The gradients of each tower's shard alone: the average must be neither.
    shards = shard_bounds(steps // single.sequence_length, 2)
    tower_alone = [
        single_device_gradients(
            single,
            {
                key: value[start * single.sequence_length : stop * single.sequence_length]
                for key, value in first.items()
            },
        )[1]
        for start, stop in shards
    ]
    # One sequence: the second tower's shard is empty (its weight 0).
    one = mini_batch(brain, single.sequence_length, 5)
    expected_one_losses, expected_one_gradients = single_device_gradients(single, one)
    one_losses, one_gradients = towers.gradients(one)
    figures: dict[str, Any] = {
        "gradient_error": max(relative_error(g, e) for g, e in zip(gradients, expected_gradients)),
        "loss_error": max(relative_error(losses[name], expected_losses[name]) for name in expected_losses),
        "tower_differs": min(
            max(relative_error(g, e) for g, e in zip(alone, expected_gradients)) for alone in tower_alone
        ),
        "one_sequence_error": max(
            *(relative_error(g, e) for g, e in zip(one_gradients, expected_one_gradients)),
            *(relative_error(one_losses[name], expected_one_losses[name]) for name in expected_one_losses),
        ),
        "stats_error": 0.0,
    }
    for seed in range(3):
        batch = first if seed == 0 else mini_batch(brain, steps, seed, masks)
        expected_stats = single.update(batch, steps // single.sequence_length)
        stats = towers.update(batch, steps // single.sequence_length)
        assert set(stats) == set(expected_stats), (stats, expected_stats)
        figures["stats_error"] = max(
            figures["stats_error"], *(relative_error(stats[key], expected_stats[key]) for key in stats)
        )
    figures["weight_error"] = max(
        relative_error(t.numpy(), s.numpy())
        for t, s in zip(towers.model.trainable_variables, single.model.trainable_variables)
    )
    figures["weights_moved"] = max(
        float(np.max(np.abs(s.numpy() - initial)))
        for s, initial in zip(single.model.trainable_variables, initial_weights)
    )
    graph = towers._update_fn.function.get_concrete_function().graph
    figures["update_devices"] = sorted({op.device for op in graph.get_operations() if op.device})
    return figures


def learning_figures(folder: Path, devices: list[str]) -> dict[str, Any]:
    """``mlagents-learn --train --multi-gpu`` on the tiny goal line (two towers), and without
    ``--multi-gpu``: the mean rewards of their summaries and the devices of the tower updates."""
    tower_updates: list[list[str]] = []
    update = MultiGpuPPOPolicy.update

    def counted_update(self: MultiGpuPPOPolicy, batch: Any, num_sequences: int) -> dict[str, float]:
        tower_updates.append(list(self.devices) if self.uses_towers else [])
        return update(self, batch, num_sequences)

    # This process ends after the run: patched for good.
    setattr(MultiGpuPPOPolicy, "update", counted_update)  # noqa: B010
    setattr(trainer_module, "tower_devices", lambda: devices)  # noqa: B010
    section = {"default": ppo_section(max_steps=LEARNING_STEPS)}
    rewards = {}
    for multi_gpu in (True, False):
        env = TinyEnvironment([GoalLine(seed=LEARNING_SEED)])
        run = train(folder / f"multi_gpu_{multi_gpu}", env, section, LEARNING_SEED, multi_gpu=multi_gpu)
        rewards[str(multi_gpu)] = run.rewards()
    return {
        "rewards": rewards,
        "tower_updates": len(tower_updates),
        "tower_devices": sorted({device for devices in tower_updates for device in devices}),
    }


def main() -> None:
    """The child process: ``python -c "...; main()" FOLDER`` prints one line of JSON."""
    devices = configure_two_cpu_devices()
    folder = Path(sys.argv[1])
    figures = {
        "devices": devices,
        "continuous": tower_figures(folder / "continuous", devices, continuous_case, 8, None),
        "recurrent": tower_figures(folder / "recurrent", devices, recurrent_case, 14, RECURRENT_MASKS),
        "learning": learning_figures(folder / "learning", devices),
    }
    print("FIGURES " + json.dumps(figures))


def run_child(folder: Path) -> dict[str, Any]:
    """Run :func:`main` in a fresh Python process; returns its figures."""
    done = subprocess.run(
        [sys.executable, "-c", f"from {CHILD_MODULE} import main; main()", str(folder)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("FIGURES ")]
    assert done.returncode == 0 and lines, done.stderr[-5000:]
    return json.loads(lines[-1][len("FIGURES ") :])


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_child(tmp_path_factory.mktemp("multi_gpu"))


# ---------------------------------------------------------------------------------------- two devices


def test_the_towers_run_on_the_two_devices(figures: dict[str, Any]) -> None:
    assert figures["devices"] == ["/device:CPU:0", "/device:CPU:1"]
    for case in ("continuous", "recurrent"):
        # Ops of the traced update step are placed on each device.
        assert figures[case]["update_devices"] == figures["devices"], figures[case]


@pytest.mark.parametrize("case", ["continuous", "recurrent"])
def test_averaged_tower_gradients_are_the_single_device_gradients(figures: dict[str, Any], case: str) -> None:
    """Same weights, same mini-batch: the towers' averaged gradients and losses are those of the
    whole mini-batch on one device (recurrent: unequal shards with padding, weighted by real steps;
    and a mini-batch of one sequence, the second shard empty)."""
    result = figures[case]
    assert result["gradient_error"] < TOLERANCE, result
    assert result["loss_error"] < TOLERANCE, result
    assert result["one_sequence_error"] < TOLERANCE, result
    # The shards differ: one tower's gradients alone are far from the average.
    assert result["tower_differs"] > 0.1, result


@pytest.mark.parametrize("case", ["continuous", "recurrent"])
def test_updates_leave_the_weights_of_ppo_policy(figures: dict[str, Any], case: str) -> None:
    """Three updates: the same weights and statistics as PPOPolicy's (to rounding)."""
    result = figures[case]
    assert result["weights_moved"] > 1e-4, result
    assert result["weight_error"] < TOLERANCE, result
    assert result["stats_error"] < TOLERANCE, result


def test_multi_gpu_learns_as_ppo_does(figures: dict[str, Any]) -> None:
    """``--multi-gpu`` end to end on the tiny goal line, two towers: it learns the task, as PPO does
    with the same seed."""
    learning = figures["learning"]
    # The trainer's policy updated in towers on both devices (17 buffers of 3 epochs of 8 mini-batches).
    assert learning["tower_updates"] > 0, learning
    assert learning["tower_devices"] == figures["devices"], learning
    towers, single = learning["rewards"]["True"], learning["rewards"]["False"]
    # Both: 0.486, then 1.0 at steps 200, 300 and 400.
    assert len(towers) == len(single) == LEARNING_STEPS // 100, learning
    assert towers[-1] >= 0.9, learning
    assert np.allclose(towers, single, atol=0.05), learning


# ---------------------------------------------------------------------------------------- fewer devices


@pytest.mark.parametrize("devices", [[], ["/device:CPU:0"]])
def test_with_fewer_than_two_devices_it_is_ppo_policy(tmp_path: Path, devices: list[str]) -> None:
    """No device or one: the update is PPOPolicy's, to the bit."""
    brain, params = recurrent_case(tmp_path)
    single = PPOPolicy(0, brain, params, is_training=True)
    policy = MultiGpuPPOPolicy(0, brain, params, is_training=True, devices=devices)
    assert not policy.uses_towers
    for seed in range(3):
        batch = mini_batch(brain, 14, seed, RECURRENT_MASKS)
        assert policy.update(batch, 7) == single.update(batch, 7)
    for variable, expected in zip(policy.model.trainable_variables, single.model.trainable_variables):
        assert np.array_equal(variable.numpy(), expected.numpy())


def test_the_trainer_uses_ppo_policy_without_two_gpus(
    ppo_params: Callable[..., dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(trainer_module, "tower_devices", lambda: ["/device:GPU:0"])
    brain = make_brain("Brain", 3, [2], "continuous")
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        trainer = PPOTrainer(brain, 1, ppo_params(), True, False, 0, "run", multi_gpu=True)
    assert type(trainer.policy) is PPOPolicy
    assert "--multi-gpu found 1 GPU(s), fewer than two; training on one device" in caplog.text


def test_shard_bounds() -> None:
    assert shard_bounds(8, 2) == [(0, 4), (4, 8)]
    assert shard_bounds(7, 2) == [(0, 4), (4, 7)]
    assert shard_bounds(1, 2) == [(0, 1), (1, 1)]
    assert shard_bounds(10, 4) == [(0, 3), (3, 6), (6, 8), (8, 10)]
