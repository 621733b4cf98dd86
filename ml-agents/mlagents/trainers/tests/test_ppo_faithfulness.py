"""The PPO update as in ML-Agents 0.9: how the update buffer becomes mini-batches and where the
randomness of the mini-batch order comes from (numpy references on hand-made buffers)."""

from collections import defaultdict

import numpy as np

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.ppo.trainer import PPOTrainer


def make_trainer(ppo_params, seed=0, **overrides):
    brain = BrainParameters("Brain", 3, 1, [], [3], [""], "discrete")
    return PPOTrainer(brain, 1, ppo_params(**overrides), True, False, seed, "run")


def fill_update_buffer(trainer, n, seed=0):
    """A hand-made update buffer of n steps; row i carries its index in ``vector_obs[:, 0]``."""
    rng = np.random.default_rng(seed)
    buffer = trainer.training_buffer.update_buffer
    obs = rng.normal(size=(n, 3)).astype(np.float32)
    obs[:, 0] = np.arange(n)
    fields = {
        "vector_obs": obs,
        "actions": rng.integers(0, 3, size=(n, 1)).astype(np.int32),
        "action_probs": rng.normal(size=(n, 3)).astype(np.float32),
        "action_mask": np.ones((n, 3), dtype=np.float32),
        "masks": np.ones(n, dtype=np.float32),
        "advantages": rng.normal(2.0, 3.0, size=n).astype(np.float32),
        "extrinsic_returns": rng.normal(size=n).astype(np.float32),
        "extrinsic_value_estimates": rng.normal(size=n).astype(np.float32),
    }
    for key, values in fields.items():
        buffer[key].extend(list(values))
    return fields


def record_updates(trainer):
    """Replace the policy's gradient step by a recorder of the mini-batches it is given."""
    batches = []

    def update(mini_batch, num_sequences):
        batches.append({key: np.array(value) for key, value in mini_batch.items()})
        return {"value_loss": 0.0, "policy_loss": 0.0}

    trainer.policy.update = update
    return batches


def test_update_normalizes_advantages_over_the_whole_buffer_then_batches_each_epoch(ppo_params):
    trainer = make_trainer(ppo_params, batch_size=8, num_epoch=3, buffer_size=16)
    fields = fill_update_buffer(trainer, 43)
    batches = record_updates(trainer)
    trainer.update_policy()

    advantages = fields["advantages"].astype(np.float64)
    normalized = (advantages - advantages.mean()) / (advantages.std() + 1e-10)
    # floor(43 / 8) = 5 mini-batches of 8 per epoch; the 3 rows left over are not used in that epoch.
    assert len(batches) == 3 * 5
    for epoch in range(3):
        epoch_batches = batches[5 * epoch : 5 * epoch + 5]
        rows = np.concatenate([batch["vector_obs"][:, 0] for batch in epoch_batches]).astype(int)
        assert all(len(batch["vector_obs"]) == 8 for batch in epoch_batches)
        # Every epoch draws rows without replacement: a new order of the whole buffer.
        assert len(set(rows.tolist())) == 40
        for batch in epoch_batches:
            index = batch["vector_obs"][:, 0].astype(int)
            # Rows stay whole (one permutation for all fields), advantages normalized over all 43.
            np.testing.assert_allclose(batch["advantages"], normalized[index], rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(batch["actions"], fields["actions"][index])
            np.testing.assert_allclose(batch["extrinsic_returns"], fields["extrinsic_returns"][index])
    orders = [np.concatenate([b["vector_obs"][:, 0] for b in batches[5 * e : 5 * e + 5]]) for e in range(3)]
    assert not np.array_equal(orders[0], orders[1])
    assert len(trainer.training_buffer.update_buffer["actions"]) == 0


def test_mini_batch_order_does_not_reuse_the_action_sampling_stream(ppo_params):
    # The policy samples actions with a generator seeded by the trainer's seed; the shuffles must
    # draw from a stream of their own (in the original, numpy's global generator shuffles and
    # TensorFlow samples).
    trainer = make_trainer(ppo_params, seed=3)
    sampling = np.random.default_rng(3).random(64)
    shuffling = trainer.shuffle_rng.random(64)
    assert np.abs(np.corrcoef(sampling, shuffling)[0, 1]) < 0.5
    assert not np.allclose(sampling, shuffling)
    # Still reproducible: the same seed gives the same mini-batch order.
    again = make_trainer(ppo_params, seed=3)
    np.testing.assert_array_equal(again.shuffle_rng.random(64), shuffling)
    orders = defaultdict(list)
    for seed in (3, 4):
        other = make_trainer(ppo_params, seed=seed)
        orders[seed] = other.shuffle_rng.permutation(50).tolist()
    assert orders[3] != orders[4]
