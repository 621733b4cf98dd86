"""Pretraining inside PPO (the BC module): its loss and learning-rate annealing against numpy, the
mini-batch schedule, and the PPO trainer reporting ``Losses/Pretraining Loss``."""

import numpy as np
import pytest

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.buffer import Buffer
from mlagents.trainers.components.bc.model import pretraining_learning_rate
from mlagents.trainers.components.bc.module import PRETRAINING_LOSS_TAG, BCModule
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.settings import PretrainingSettings


def make_brain(actions=(3,), space="discrete"):
    return BrainParameters("Brain", 3, 1, [], list(actions), [""] * len(actions), space)


def demo_buffer(n, actions, seed=0):
    rng = np.random.default_rng(seed)
    buffer = Buffer()
    for _ in range(n):
        buffer.update_buffer["vector_obs"].append(rng.normal(size=3).astype(np.float32))
        buffer.update_buffer["actions"].append(np.asarray(actions(rng), dtype=np.float32))
        buffer.update_buffer["prev_action"].append(np.zeros(1, dtype=np.float32))
        buffer.update_buffer["done"].append(False)
    return buffer


def make_module(ppo_params, brain, buffer, **pretraining):
    section = {"demo_path": "unused.demo", "strength": 0.5, "steps": 100, **pretraining}
    params = ppo_params()
    policy = PPOPolicy(0, brain, params, is_training=True)
    module = BCModule(
        policy,
        PretrainingSettings.from_dict(section, _source()),
        policy_learning_rate=params["learning_rate"],
        default_batch_size=params["batch_size"],
        default_num_epoch=params["num_epoch"],
        demo_buffer=buffer,
    )
    return policy, module


def _source():
    from mlagents.trainers.settings import ConfigSource

    return ConfigSource("Brain")


@pytest.mark.parametrize("steps", [0, 1, 100, 12345])
def test_learning_rate_anneals_linearly_to_zero_over_steps(steps):
    lr0 = 3e-4 * 0.5
    for step in [0, 1, 7, 50, 99, 100, 101, 5000, 20000]:
        expected = lr0 if steps == 0 else lr0 * (1.0 - min(step, steps) / steps)
        assert pretraining_learning_rate(lr0, step, steps) == pytest.approx(
            expected, rel=1e-6, abs=lr0 * 1e-6
        )  # float32
    if steps:
        assert pretraining_learning_rate(lr0, steps, steps) == 0.0


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_discrete_loss_matches_numpy(ppo_params):
    policy, module = make_module(ppo_params, make_brain(actions=(3, 2)), demo_buffer(8, lambda r: [0, 1]))
    rng = np.random.default_rng(2)
    obs = rng.normal(size=(6, 3)).astype(np.float32)
    expert = np.stack([rng.integers(0, 3, 6), rng.integers(0, 2, 6)], axis=1).astype(np.int32)
    batch = {"vector_observation": obs, "action_masks": np.ones((6, 5), np.float32), "expert_action": expert}
    logits = policy.model.forward(batch)["logits"].numpy()
    terms = np.concatenate(
        [
            -np.log(softmax(logits[:, :3]) + 1e-7) * np.eye(3)[expert[:, 0]],
            -np.log(softmax(logits[:, 3:]) + 1e-7) * np.eye(2)[expert[:, 1]],
        ],
        axis=1,
    )
    assert float(module.model.loss(batch, 1)) == pytest.approx(terms.mean(), rel=1e-5)


def test_continuous_loss_matches_numpy(ppo_params):
    brain = make_brain(actions=(2,), space="continuous")
    policy, module = make_module(ppo_params, brain, demo_buffer(8, lambda r: r.uniform(-1, 1, 2)))
    rng = np.random.default_rng(3)
    obs = rng.normal(size=(6, 3)).astype(np.float32)
    expert = rng.uniform(-1, 1, size=(6, 2)).astype(np.float32)
    epsilon = rng.normal(size=(1, 2)).astype(np.float32)
    batch = {"vector_observation": obs, "expert_action": expert, "epsilon": epsilon}
    mu = policy.model.forward(batch)["mu"].numpy()
    sigma = np.sqrt(np.exp(policy.model.log_sigma_squared.numpy()))
    action = np.clip(mu + sigma * epsilon, -3, 3) / 3  # one noise row for the whole batch
    assert float(module.model.loss(batch, 1)) == pytest.approx(((action - expert) ** 2).mean(), rel=1e-5)


def test_update_schedule_and_annealing(ppo_params):
    """n_sequences = min(batch_size, demo length); every epoch covers the demo (or samples_per_update
    steps); once global_step reaches steps nothing is trained and the loss is 0."""
    brain = make_brain()
    buffer = demo_buffer(50, lambda r: [2])
    policy, module = make_module(ppo_params, brain, buffer, batch_size=16, num_epoch=2)
    sizes = []
    original = module._update_batch
    module._update_batch = lambda batch: sizes.append(len(batch["actions"])) or original(batch)
    first = module.update()[PRETRAINING_LOSS_TAG]
    assert sizes == [16] * 3 * 2  # 50 // 16 = 3 batches per epoch, 2 epochs
    sizes.clear()
    module.samples_per_update = 20
    module.update()
    assert sizes == [16] * 2  # 20 // 16 = 1 batch per epoch
    module.samples_per_update = 0
    for _ in range(30):
        loss = module.update()[PRETRAINING_LOSS_TAG]
    assert 0 < loss < first  # the expert always goes right; the policy learns it
    policy.increment_step(40)
    assert module.learning_rate() == pytest.approx(3e-4 * 0.5 * 0.6, rel=1e-6)
    policy.increment_step(60)
    weights = [v.numpy().copy() for v in policy.model.trainable_variables]
    sizes.clear()
    assert module.update() == {PRETRAINING_LOSS_TAG: 0.0}
    assert sizes == []
    for before, variable in zip(weights, policy.model.trainable_variables):
        np.testing.assert_array_equal(before, variable.numpy())


def test_ppo_trainer_reports_the_pretraining_loss(ppo_params, monkeypatch):
    from mlagents.trainers.ppo.trainer import PPOTrainer

    buffer = demo_buffer(20, lambda r: [1])
    monkeypatch.setattr(
        "mlagents.trainers.components.bc.module.load_demonstrations_for",
        lambda brain, path, sequence_length: (brain, buffer),
    )
    params = ppo_params(pretraining={"demo_path": "x.demo", "strength": 1.0, "steps": 0})
    trainer = PPOTrainer(make_brain(), 1, params, True, False, 0, "run")
    assert trainer.policy.bc_module is not None
    assert trainer.policy.bc_module.batch_size == 8 and trainer.policy.bc_module.num_epoch == 2
    rng = np.random.default_rng(0)
    update = trainer.training_buffer.update_buffer
    for _ in range(17):
        update["vector_obs"].append(rng.normal(size=3).astype(np.float32))
        update["actions"].append(np.array([1]))
        update["action_probs"].append(np.zeros(3, dtype=np.float32))
        update["action_mask"].append(np.ones(3, dtype=np.float32))
        update["masks"].append(1.0)
        update["advantages"].append(rng.normal())
        update["extrinsic_returns"].append(0.0)
        update["extrinsic_value_estimates"].append(0.0)
    trainer.update_policy()
    assert len(trainer.stats[PRETRAINING_LOSS_TAG]) == 1 and trainer.stats[PRETRAINING_LOSS_TAG][0] > 0


def test_the_pretraining_optimizer_is_saved_and_restored_with_the_policy(ppo_params, monkeypatch):
    buffer = demo_buffer(40, lambda r: [2])
    monkeypatch.setattr(
        "mlagents.trainers.components.bc.module.load_demonstrations_for",
        lambda brain, path, sequence_length: (brain, buffer),
    )
    pretraining = {"demo_path": "x.demo", "strength": 1.0, "steps": 0}
    params = ppo_params(pretraining=pretraining)
    policy = PPOPolicy(0, make_brain(), params, is_training=True)
    assert policy.bc_module is not None
    for _ in range(3):
        policy.bc_module.update()
    optimizer = policy.bc_module.model.optimizer
    saved = [v.numpy().copy() for v in optimizer.variables]
    iterations = int(optimizer.iterations.numpy())
    assert iterations > 0
    policy.save_model(10)

    # --load continues with the same moments and step count, then trains on from them.
    loaded = PPOPolicy(1, make_brain(), ppo_params(pretraining=pretraining), is_training=True, load=True)
    assert loaded.bc_module is not None
    restored = loaded.bc_module.model.optimizer
    for before, after in zip(saved, restored.variables):
        np.testing.assert_array_equal(before, after.numpy())
    assert int(restored.iterations.numpy()) == iterations
    loaded.bc_module.update()
    assert int(restored.iterations.numpy()) > iterations

    # A checkpoint saved without pretraining loads into a run with it: the optimizer starts afresh.
    plain_path = str(params["model_path"]) + "-plain"
    plain = PPOPolicy(2, make_brain(), ppo_params(model_path=plain_path), is_training=True)
    plain.save_model(5)
    fresh_params = ppo_params(pretraining=pretraining, model_path=plain_path)
    fresh = PPOPolicy(3, make_brain(), fresh_params, is_training=True, load=True)
    assert fresh.bc_module is not None
    assert int(fresh.bc_module.model.optimizer.iterations.numpy()) == 0
