"""Unit tests of the SAC network, policy and trainer (real TensorFlow, tiny brains)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.sac.policy import SACPolicy
from mlagents.trainers.sac.trainer import REPLAY_BUFFER_FILE, SACTrainer

DISCRETE = BrainParameters("Discrete", 2, 1, [], [3, 2], ["", ""], "discrete")
CONTINUOUS = BrainParameters("Continuous", 3, 1, [], [2], [""], "continuous")


def sac_params(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "trainer": "sac",
        "batch_size": 8,
        "buffer_size": 40,
        "buffer_init_steps": 0,
        "hidden_units": 8,
        "init_entcoef": 0.5,
        "learning_rate": 1e-2,
        "max_steps": 1000,
        "memory_size": 16,
        "normalize": True,
        "num_update": 1,
        "num_layers": 1,
        "time_horizon": 4,
        "sequence_length": 2,
        "summary_freq": 100,
        "tau": 0.25,
        "use_recurrent": False,
        "model_path": str(tmp_path / "model"),
        "summary_path": str(tmp_path / "summary"),
        "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.9}},
    }
    params.update(overrides)
    return params


def brain_info(brain: BrainParameters, n: int, seed: int = 0, masks: np.ndarray | None = None) -> BrainInfo:
    rng = np.random.default_rng(seed)
    return BrainInfo(
        visual_observation=[],
        vector_observation=rng.normal(size=(n, brain.vector_observation_space_size)),
        text_observations=[""] * n,
        memory=np.zeros((n, 0)),
        reward=list(rng.normal(size=n)),
        agents=[f"agent-{i}" for i in range(n)],
        local_done=[False] * n,
        vector_action=np.zeros((n, len(brain.vector_action_space_size))),
        max_reached=[False] * n,
        action_mask=masks,
    )


def mini_batch(policy: SACPolicy, n: int, seed: int = 0, done: float = 0.0) -> dict[str, np.ndarray]:
    """n buffered steps of random observations and actions, as the trainer samples them."""
    rng = np.random.default_rng(seed)
    brain = policy.brain
    vec = brain.vector_observation_space_size
    batch: dict[str, np.ndarray] = {
        "vector_obs": rng.normal(size=(n, vec)).astype(np.float32),
        "next_vector_in": rng.normal(size=(n, vec)).astype(np.float32),
        "masks": np.ones(n, np.float32),
        "done": np.full(n, done, np.float32),
        "extrinsic_rewards": rng.normal(size=n).astype(np.float32),
        "environment_rewards": rng.normal(size=n).astype(np.float32),
        "memory": np.zeros((n, policy.m_size), np.float32),
    }
    if policy.use_continuous_act:
        batch["actions"] = rng.uniform(-1, 1, size=(n, brain.vector_action_space_size[0])).astype(np.float32)
    else:
        sizes = brain.vector_action_space_size
        batch["actions"] = np.stack([rng.integers(0, s, size=n) for s in sizes], axis=1)
        batch["action_mask"] = np.ones((n, sum(sizes)), np.float32)
        batch["prev_action"] = np.zeros((n, len(sizes)), np.float32)
    return batch


def weights(variables: list) -> list[np.ndarray]:
    return [v.numpy().copy() for v in variables]


# ------------------------------------------------------------------ network


@pytest.mark.parametrize("brain", [DISCRETE, CONTINUOUS], ids=["discrete", "continuous"])
def test_target_starts_equal_and_moves_by_exactly_tau(tmp_path: Path, brain: BrainParameters) -> None:
    policy = SACPolicy(1, brain, sac_params(tmp_path), True)
    model = policy.model
    target, value = model.target.trainable_variables, model.critic.value.trainable_variables
    assert len(target) == len(value) > 0
    for t, v in zip(target, value):
        np.testing.assert_array_equal(t.numpy(), v.numpy())
    before = weights(target)
    policy.update(mini_batch(policy, 8), 8)
    after_value = weights(value)
    assert any(not np.array_equal(a, b) for a, b in zip(after_value, before)), "the value network learned"
    for t, old, new in zip(target, before, after_value):
        np.testing.assert_allclose(t.numpy(), 0.75 * old + 0.25 * new, rtol=1e-6, atol=1e-7)
    frozen = weights(target)
    policy.update(mini_batch(policy, 8, seed=1), 8, update_target=False)
    for t, old in zip(target, frozen):
        np.testing.assert_array_equal(t.numpy(), old)


@pytest.mark.slow
def test_entropy_coefficient_moves_toward_the_target_entropy(tmp_path: Path) -> None:
    # A near-uniform policy over 3 and 2 actions has more entropy than 0.2 log(size): alpha falls.
    policy = SACPolicy(1, DISCRETE, sac_params(tmp_path), True)
    start = policy.model.log_ent_coef.numpy().copy()
    np.testing.assert_allclose(start, np.log([0.5, 0.5]), rtol=1e-6)
    np.testing.assert_allclose(policy.model.target_entropies, 0.2 * np.log([3.0, 2.0]), rtol=1e-6)
    policy.update(mini_batch(policy, 8), 8)
    assert (policy.model.log_ent_coef.numpy() < start).all()
    # With one action allowed per branch the entropy is about 0, below the targets: alpha rises.
    masked = SACPolicy(1, DISCRETE, sac_params(tmp_path / "masked"), True)
    batch = mini_batch(masked, 8)
    batch["action_mask"] = np.tile(np.array([1, 0, 0, 0, 1], np.float32), (8, 1))
    masked.update(batch, 8)
    assert (masked.model.log_ent_coef.numpy() > start).all()
    # Continuous: the target is -dim(action); the initial squashed Gaussian is far above it.
    continuous = SACPolicy(1, CONTINUOUS, sac_params(tmp_path / "c"), True)
    assert continuous.model.target_entropy == -2.0
    before = float(continuous.model.log_ent_coef.numpy())
    continuous.update(mini_batch(continuous, 8), 8)
    assert float(continuous.model.log_ent_coef.numpy()) < before


@pytest.mark.parametrize("done", [0.0, 1.0])
def test_q_loss_of_a_hand_computed_batch(tmp_path: Path, done: float) -> None:
    policy = SACPolicy(3, CONTINUOUS, sac_params(tmp_path, normalize=False), True)
    model = policy.model
    batch = mini_batch(policy, 4, done=done)
    feed = policy.update_feed(batch)
    losses = model.losses({k: np.asarray(v) for k, v in feed.items()}, 1)
    # Recompute Q1's loss from the networks' parts with numpy.
    obs, nxt, actions = feed["vector_observation"], feed["next_vector_observation"], feed["actions"]
    q1 = model.critic.q1(np.concatenate([obs, actions], axis=1), None, 1)[0]["extrinsic"].numpy()[:, 0]
    target = model.target.values(nxt, None, 1)[0]["extrinsic"].numpy()
    backup = feed["extrinsic_rewards"] + (1.0 - done) * 0.9 * target
    expected = 0.5 * np.mean(np.square(backup - q1))
    assert float(losses["q1_loss"]) == pytest.approx(expected, rel=1e-5)
    assert float(losses["total_value_loss"]) == pytest.approx(
        float(losses["q1_loss"] + losses["q2_loss"] + losses["value_loss"]), rel=1e-6
    )


# ------------------------------------------------------------------ decisions


def test_continuous_actions_stay_within_bounds(tmp_path: Path) -> None:
    policy = SACPolicy(0, CONTINUOUS, sac_params(tmp_path), True)
    info = brain_info(CONTINUOUS, 200)
    info.vector_observations *= 100.0
    for numpy_path in (True, False):
        policy.set_fast_inference(numpy_path)
        action = policy.evaluate(info)["action"]
        assert action.shape == (200, 2) and action.dtype == np.float32
        assert np.all(np.abs(action) <= 1.0)


@pytest.mark.slow
def test_numpy_and_tensorflow_decisions_agree(tmp_path: Path) -> None:
    for brain in (DISCRETE, CONTINUOUS):
        outputs = []
        for numpy_path in (True, False):
            policy = SACPolicy(0, brain, sac_params(tmp_path / brain.brain_name, normalize=False), False)
            policy.set_fast_inference(numpy_path)
            outputs.append(policy.evaluate(brain_info(brain, 5)))
        np.testing.assert_allclose(outputs[0]["log_probs"], outputs[1]["log_probs"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(outputs[0]["value"], outputs[1]["value"], rtol=1e-4, atol=1e-5)
        if brain.vector_action_space_type == "continuous":
            np.testing.assert_allclose(outputs[0]["action"], outputs[1]["action"], rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(outputs[0]["action"], outputs[1]["action"])


def test_masked_actions_are_never_taken(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    open_door = rng.integers(0, 2, size=300)
    masks = np.concatenate([np.ones((300, 3)), np.eye(2)[open_door]], axis=1)
    policy = SACPolicy(0, DISCRETE, sac_params(tmp_path), True)
    actions = policy.evaluate(brain_info(DISCRETE, 300, masks=masks))["action"]
    np.testing.assert_array_equal(actions[:, 1], open_door)
    assert set(actions[:, 0].tolist()) == {0, 1, 2}


@pytest.mark.slow
@pytest.mark.parametrize("brain", [DISCRETE, CONTINUOUS], ids=["discrete", "continuous"])
def test_recurrent_shapes(tmp_path: Path, brain: BrainParameters) -> None:
    policy = SACPolicy(0, brain, sac_params(tmp_path, use_recurrent=True, memory_size=16), True)
    out = policy.evaluate(brain_info(brain, 5))
    assert out["memory_out"].shape == (5, 16)
    assert out["value"].shape == (5,) and out["entropy"].shape == (5,)
    assert policy.inference_path == "tensorflow"
    stats = policy.update(mini_batch(policy, 8), 4)
    assert set(stats) == {
        "Losses/Value Loss",
        "Losses/Policy Loss",
        "Losses/Q1 Loss",
        "Losses/Q2 Loss",
        "Policy/Entropy Coeff",
    }
    assert all(np.isfinite(list(stats.values())))


def test_memory_size_must_split_into_four_lstm_states(tmp_path: Path) -> None:
    from mlagents.trainers.exception import UnityPolicyException

    with pytest.raises(UnityPolicyException, match="divisible by 8"):
        SACPolicy(0, DISCRETE, sac_params(tmp_path, use_recurrent=True, memory_size=12), True)


def test_no_retracing_across_batch_sizes(tmp_path: Path) -> None:
    policy = SACPolicy(0, CONTINUOUS, sac_params(tmp_path), True)
    policy.set_fast_inference(False)
    for n in (1, 3, 7):
        policy.evaluate(brain_info(CONTINUOUS, n))
    for n in (4, 8, 16):
        policy.update(mini_batch(policy, n), n)
    assert policy.tracing_counts() == {"inference": 1, "value": 1, "update": 1}


# ------------------------------------------------------------------ checkpoints and the trainer


@pytest.mark.slow
def test_checkpoint_restores_every_network(tmp_path: Path) -> None:
    params = sac_params(tmp_path)
    policy = SACPolicy(0, DISCRETE, params, True)
    for seed in range(3):
        policy.update(mini_batch(policy, 8, seed=seed), 8)
    policy.evaluate(brain_info(DISCRETE, 4))  # moves the normalizer
    policy.increment_step(7)
    policy.save_model(7)
    restored = SACPolicy(0, DISCRETE, params, False, load=True)
    assert restored.get_current_step() == 7
    for a, b in zip(policy.model.variables, restored.model.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(policy.value_optimizer.variables, restored.value_optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    info = brain_info(DISCRETE, 6, seed=5)
    policy.is_training = False
    policy.rng, restored.rng = np.random.default_rng(9), np.random.default_rng(9)
    np.testing.assert_array_equal(policy.evaluate(info)["action"], restored.evaluate(info)["action"])


def trainer(
    tmp_path: Path, brain: BrainParameters = CONTINUOUS, load: bool = False, **overrides: Any
) -> SACTrainer:
    return SACTrainer(brain, 1, sac_params(tmp_path, **overrides), True, load, 0, "test")


def fill(sac: SACTrainer, n: int, update_every: int = 0) -> None:
    """Run n steps of 4 agents through the trainer's collection (episodes of 3 steps), counting
    the steps as the controller does; with ``update_every``, the controller's update call after
    every ``update_every`` steps."""
    brain = sac.brain
    previous = brain_info(brain, 4, seed=0)
    outputs = sac.policy.evaluate(previous)
    for step in range(n):
        current = brain_info(brain, 4, seed=step + 1)
        current.local_done = [(step + 1) % 3 == 0] * 4
        sac.add_experiences({brain.brain_name: previous}, {brain.brain_name: current}, outputs)
        sac.process_experiences({brain.brain_name: previous}, {brain.brain_name: current})
        sac.increment_step(1)
        if update_every and (step + 1) % update_every == 0 and sac.is_ready_update():
            sac.update_policy()
        previous, outputs = current, sac.policy.evaluate(current)


def test_trainer_stores_replay_columns_and_truncates(tmp_path: Path) -> None:
    sac = trainer(tmp_path)
    fill(sac, 9)
    buffer = sac.replay_buffer
    # Per agent 3 + 2 + 2 steps: the step decided on an episode's last observation is not kept.
    assert len(buffer["actions"]) == 28
    for column in ("vector_obs", "next_vector_in", "actions", "environment_rewards", "done", "masks"):
        assert len(buffer[column]) == 28, column
    assert "advantages" not in buffer and "extrinsic_value_estimates" not in buffer
    assert sac.is_ready_update()
    sac.update_policy()
    assert len(buffer["actions"]) == 28  # not above buffer_size (40): kept
    fill(sac, 6)
    sac.update_policy()
    assert len(buffer["actions"]) == 32  # 48 > 40: cut to the newest 80 % of 40
    for tag in (
        "Losses/Value Loss",
        "Losses/Policy Loss",
        "Losses/Q1 Loss",
        "Losses/Q2 Loss",
        "Policy/Entropy Coeff",
    ):
        # One round at the first call, then one for each of the 6 steps taken since.
        assert len(sac.stats[tag]) == 7, tag


@pytest.mark.parametrize("train_interval", [1, 2])
def test_updates_are_counted_in_steps_not_in_calls(tmp_path: Path, train_interval: int) -> None:
    """A trainer called after every step and one called after every fourth step (four environments
    stepped at once) make the same number of update rounds: one per ``train_interval`` steps."""
    rounds = []
    for update_every in (1, 4):
        sac = trainer(tmp_path / str(update_every), train_interval=train_interval)
        fill(sac, 24, update_every=update_every)
        rounds.append(len(sac.stats["Losses/Q1 Loss"]))
    # The buffer holds batch_size (8) steps after the first episode's 3 steps of 4 agents: the first
    # round is at the first call from step 3 on, then one round per train_interval steps.
    first_step = {1: 3, 4: 4}
    expected = [1 + (24 // train_interval - first_step[every] // train_interval) for every in (1, 4)]
    assert rounds == expected, rounds
    assert abs(rounds[0] - rounds[1]) <= 1


def test_buffer_init_steps_delay_the_updates(tmp_path: Path) -> None:
    sac = trainer(tmp_path, buffer_init_steps=50)
    fill(sac, 3)  # 3 steps
    sac.increment_step(46)
    assert not sac.is_ready_update()
    sac.increment_step(1)
    assert sac.is_ready_update()


def test_replay_buffer_round_trip(tmp_path: Path) -> None:
    sac = trainer(tmp_path, save_replay_buffer=True)
    fill(sac, 6)
    sac.save_model()
    assert (tmp_path / "model" / REPLAY_BUFFER_FILE).is_file()
    loaded = trainer(tmp_path, load=True, save_replay_buffer=True)
    original, restored = sac.replay_buffer, loaded.replay_buffer
    assert original.keys() == restored.keys()
    for key in original:
        assert original[key].dtype == restored[key].dtype, key
        np.testing.assert_array_equal(original[key], restored[key])


def test_mini_batches_are_a_function_of_the_seed(tmp_path: Path) -> None:
    batches = []
    for run in range(2):
        sac = trainer(tmp_path / str(run))
        fill(sac, 6)
        batches.append(sac.sample_mini_batch())
    np.testing.assert_array_equal(batches[0]["vector_obs"], batches[1]["vector_obs"])
    assert batches[0]["vector_obs"].shape == (8, 3)


@pytest.mark.parametrize("brain", [DISCRETE, CONTINUOUS], ids=["discrete", "continuous"])
def test_value_estimates_in_numpy_and_tensorflow_agree(tmp_path: Path, brain: BrainParameters) -> None:
    """The value network's estimates through the numpy copy and through TensorFlow, and 0 after a
    true episode end for the extrinsic signal (which uses terminal states)."""
    policy = SACPolicy(0, brain, sac_params(tmp_path, normalize=False), False)
    assert policy.inference_path == "numpy"
    info = brain_info(brain, 4, seed=3)
    rows = [(info, 2), (info, 0)]
    fast = policy.get_batched_value_estimates(rows, [False, True])
    policy.set_fast_inference(False)
    slow = policy.get_batched_value_estimates(rows, [False, True])
    assert list(fast) == list(slow) == ["extrinsic"]
    np.testing.assert_allclose(fast["extrinsic"], slow["extrinsic"], atol=1e-5)
    assert fast["extrinsic"][1] == 0.0 and fast["extrinsic"][0] != 0.0
    assert policy.get_value_estimates(info, 2, False)["extrinsic"] == pytest.approx(
        float(slow["extrinsic"][0]), abs=1e-6
    )
