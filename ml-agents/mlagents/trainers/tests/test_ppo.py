"""PPO: returns and advantages, losses, action sampling, the trainer loop, checkpoints."""

import math
import os

import numpy as np
import pytest
import tensorflow as tf

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.buffer import float_images
from mlagents.trainers.exception import UnityPolicyException, UnityTrainerException
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.ppo.trainer import PPOTrainer, discount_rewards, get_gae

# ---------------------------------------------------------------------- helpers


def make_brain(vec=3, actions=(3,), space="discrete", cameras=()):
    resolutions = [{"height": h, "width": w, "blackAndWhite": bw} for h, w, bw in cameras]
    return BrainParameters("Brain", vec, 1, resolutions, list(actions), [""] * len(actions), space)


def make_info(
    agents, obs, rewards=None, dones=None, max_reached=None, masks=None, prev=None, memories=None, visual=None
):
    n = len(agents)
    return BrainInfo(
        visual_observation=visual or [],
        vector_observation=np.asarray(obs, dtype=np.float64).reshape(n, -1) if n else np.asarray(obs),
        text_observations=[""] * n,
        memory=np.zeros((0, 0)) if memories is None else memories,
        reward=[0.0] * n if rewards is None else list(rewards),
        agents=list(agents),
        local_done=[False] * n if dones is None else list(dones),
        vector_action=np.zeros((n, 1)) if prev is None else prev,
        text_action=[[] for _ in range(n)],
        max_reached=[False] * n if max_reached is None else list(max_reached),
        action_mask=np.ones((n, 3)) if masks is None else masks,
    )


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def swish(x):
    return x * sigmoid(x)


# ---------------------------------------------------------------------- returns and advantages


def test_discount_rewards_hand_computed():
    # R2 = 2 + 0.5 * 4 = 4; R1 = 0 + 0.5 * 4 = 2; R0 = 1 + 0.5 * 2 = 2
    np.testing.assert_allclose(
        discount_rewards(np.array([1.0, 0.0, 2.0]), gamma=0.5, value_next=4.0), [2, 2, 4]
    )
    np.testing.assert_allclose(discount_rewards(np.array([1.0, 1.0]), gamma=0.9), [1.9, 1.0])


def test_get_gae_hand_computed():
    # delta0 = 1 + 0.9*1.0 - 0.5 = 1.4; delta1 = 1 + 0.9*2 - 1 = 1.8; A1 = 1.8; A0 = 1.4 + 0.45*1.8 = 2.21
    advantage = get_gae(np.array([1.0, 1.0]), np.array([0.5, 1.0]), value_next=2.0, gamma=0.9, lambd=0.5)
    np.testing.assert_allclose(advantage, [2.21, 1.8])


@pytest.mark.parametrize("n", [1, 63, 64, 65, 300])
def test_gae_matches_a_step_by_step_reference(n):
    rng = np.random.default_rng(n)
    rewards, values = rng.normal(size=n), rng.normal(size=n)
    gamma, lambd, value_next = 0.99, 0.95, 0.7
    expected = np.zeros(n)
    running = 0.0
    extended = np.append(values, value_next)
    for t in reversed(range(n)):
        delta = rewards[t] + gamma * extended[t + 1] - extended[t]
        running = delta + gamma * lambd * running
        expected[t] = running
    np.testing.assert_allclose(
        get_gae(rewards, values, value_next, gamma, lambd), expected, rtol=1e-10, atol=1e-10
    )
    returns = np.zeros(n)
    running = value_next
    for t in reversed(range(n)):
        running = rewards[t] + gamma * running
        returns[t] = running
    np.testing.assert_allclose(discount_rewards(rewards, gamma, value_next), returns, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------- losses


def numpy_ppo_losses(log_prob, old_log_prob, entropy, values, batch, epsilon, beta, masks):
    ratio = np.exp(log_prob - old_log_prob)
    adv = batch["advantages"]
    policy_loss = -np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - epsilon, 1 + epsilon) * adv)[masks > 0])
    value_loss = 0.0
    for name, value in values.items():
        old, returns = batch[f"{name}_value_estimates"], batch[f"{name}_returns"]
        clipped = old + np.clip(value - old, -epsilon, epsilon)
        value_loss += np.mean(np.maximum((returns - value) ** 2, (returns - clipped) ** 2)[masks > 0])
    value_loss /= len(values)
    entropy_mean = np.mean(entropy[masks > 0])
    return policy_loss, value_loss, policy_loss + 0.5 * value_loss - beta * entropy_mean


def common_batch(rng, n, streams):
    batch = {
        "masks": np.array([0.0] + [1.0] * (n - 1), dtype=np.float32),
        "advantages": rng.normal(size=n).astype(np.float32),
    }
    for name in streams:
        batch[f"{name}_returns"] = rng.normal(size=n).astype(np.float32)
        batch[f"{name}_value_estimates"] = rng.normal(size=n).astype(np.float32)
    return batch


def test_discrete_losses_match_numpy(ppo_params):
    streams = {"extrinsic": {"strength": 1.0, "gamma": 0.99}, "second": {"strength": 0.5, "gamma": 0.9}}
    policy_brain = make_brain(vec=3, actions=(3, 2))
    # Register a second extrinsic-type signal under another name to get two value heads.
    from mlagents.trainers.settings import REWARD_SIGNAL_KINDS

    REWARD_SIGNAL_KINDS["second"] = REWARD_SIGNAL_KINDS["extrinsic"]
    try:
        policy = PPOPolicy(0, policy_brain, ppo_params(reward_signals=streams, beta=0.01), True)
    finally:
        del REWARD_SIGNAL_KINDS["second"]
    model = policy.model
    model.global_step.assign(10000)  # schedules at 1/5 of max_steps 5e4
    rng = np.random.default_rng(0)
    n = 6
    obs = rng.normal(size=(n, 3)).astype(np.float32)
    masks = np.ones((n, 5), dtype=np.float32)
    masks[1, 0] = 0
    masks[2, 4] = 0
    actions = np.array([[0, 1], [1, 0], [2, 1], [0, 0], [1, 1], [2, 0]], dtype=np.int32)
    old_logits = rng.normal(size=(n, 5)).astype(np.float32)
    batch = common_batch(rng, n, streams)
    batch.update(vector_observation=obs, action_masks=masks, actions=actions, action_probs=old_logits)
    out = model.losses({k: tf.constant(v) for k, v in batch.items()}, 1)

    encoder = model.vector_encoders[0].layers[0]
    hidden = swish(obs @ encoder.kernel.numpy() + encoder.bias.numpy())
    logits = np.concatenate([hidden @ b.kernel.numpy() for b in model.policy_branches], axis=1)
    values = {
        name: (hidden @ head.kernel.numpy() + head.bias.numpy())[:, 0]
        for name, head in model.value_heads.items()
    }

    def log_prob(z):
        total = np.zeros(n)
        for start, end, k in [(0, 3, 0), (3, 5, 1)]:
            p = np.exp(z[:, start:end]) / np.exp(z[:, start:end]).sum(axis=1, keepdims=True)
            p = (p + 1e-7) * masks[:, start:end]
            ell = np.log(p / p.sum(axis=1, keepdims=True) + 1e-7)
            ell = ell - np.log(np.exp(ell).sum(axis=1, keepdims=True))  # renormalized once more
            total += ell[np.arange(n), actions[:, k]]
        return total

    def entropy(z):
        total = np.zeros(n)
        for start, end in [(0, 3), (3, 5)]:
            p = np.exp(z[:, start:end]) / np.exp(z[:, start:end]).sum(axis=1, keepdims=True)
            total += -(p * np.log(p)).sum(axis=1)
        return total

    fraction = 1 - 10000 / 5e4
    epsilon = (0.2 - 0.1) * fraction + 0.1
    beta = (0.01 - 1e-5) * fraction + 1e-5
    expected = numpy_ppo_losses(
        log_prob(logits), log_prob(old_logits), entropy(logits), values, batch, epsilon, beta, batch["masks"]
    )
    assert float(out["policy_loss"]) == pytest.approx(expected[0], rel=1e-4, abs=1e-6)
    assert float(out["value_loss"]) == pytest.approx(expected[1], rel=1e-4, abs=1e-6)
    assert float(out["loss"]) == pytest.approx(expected[2], rel=1e-4, abs=1e-6)


def test_continuous_losses_match_numpy(ppo_params):
    policy = PPOPolicy(0, make_brain(vec=3, actions=(2,), space="continuous"), ppo_params(), True)
    model = policy.model
    model.log_sigma_squared.assign([0.3, -0.2])
    rng = np.random.default_rng(1)
    n = 5
    obs = rng.normal(size=(n, 3)).astype(np.float32)
    actions_pre = rng.normal(size=(n, 2)).astype(np.float32)
    old_probs = rng.normal(-1.0, 0.2, size=(n, 2)).astype(np.float32)
    batch = common_batch(rng, n, ["extrinsic"])
    batch.update(vector_observation=obs, actions_pre=actions_pre, action_probs=old_probs)
    out = model.losses({k: tf.constant(v) for k, v in batch.items()}, 1)

    policy_layer = model.vector_encoders[0].layers[0]
    value_layer = model.vector_encoders[1].layers[0]
    hidden_policy = swish(obs @ policy_layer.kernel.numpy() + policy_layer.bias.numpy())
    hidden_value = swish(obs @ value_layer.kernel.numpy() + value_layer.bias.numpy())
    mu = hidden_policy @ model.mu.kernel.numpy() + model.mu.bias.numpy()
    head = model.value_heads["extrinsic"]
    values = {"extrinsic": (hidden_value @ head.kernel.numpy() + head.bias.numpy())[:, 0]}
    log_sigma_sq = np.array([0.3, -0.2])
    log_density = (
        -0.5 * (actions_pre - mu) ** 2 / np.exp(log_sigma_sq) - 0.5 * np.log(2 * np.pi) - 0.5 * log_sigma_sq
    )
    entropy = np.full(n, 0.5 * np.mean(np.log(2 * np.pi * np.e) + log_sigma_sq))
    expected = numpy_ppo_losses(
        log_density.sum(axis=1), old_probs.sum(axis=1), entropy, values, batch, 0.2, 5e-3, batch["masks"]
    )
    assert float(out["policy_loss"]) == pytest.approx(expected[0], rel=1e-4, abs=1e-6)
    assert float(out["value_loss"]) == pytest.approx(expected[1], rel=1e-4, abs=1e-6)
    assert float(out["loss"]) == pytest.approx(expected[2], rel=1e-4, abs=1e-6)


def test_update_is_one_adam_step_with_the_decayed_learning_rate(ppo_params, continuous_update_batch):
    policy = PPOPolicy(
        0,
        make_brain(vec=3, actions=(2,), space="continuous"),
        ppo_params(learning_rate=1e-3, max_steps=1000),
        True,
    )
    policy.model.global_step.assign(500)
    before = [v.numpy().copy() for v in policy.model.trainable_variables]
    n = 8
    batch = continuous_update_batch(n, seed=2)
    stats = policy.update(batch, n)
    assert set(stats) == {"value_loss", "policy_loss"} and stats["policy_loss"] >= 0
    lr = (1e-3 - 1e-10) * 0.5 + 1e-10
    steps = np.concatenate(
        [np.abs(v.numpy() - b).ravel() for v, b in zip(policy.model.trainable_variables, before)]
    )
    # First Adam step: every parameter with a gradient moves by lr * g / (|g| + 1e-8) ~ lr.
    assert steps.max() == pytest.approx(lr, rel=1e-3)
    assert np.mean(steps > 0.9 * lr) > 0.9
    assert int(policy.optimizer.iterations.numpy()) == 1


# ---------------------------------------------------------------------- decisions


def test_masked_actions_are_never_sampled(ppo_params):
    policy = PPOPolicy(3, make_brain(vec=2, actions=(3, 2)), ppo_params(), True)
    n = 400
    half = n // 2
    masks = np.ones((n, 5))
    masks[:half, 1] = 0  # first half: branch 0 may not take action 1 ...
    masks[:half, 3] = 0  # ... and branch 1 may not take action 0
    masks[half:, 0] = 0  # second half: branch 0 must take action 1
    masks[half:, 2] = 0
    masks[n - 1, :3] = 0  # a fully masked branch falls back to drawing from the log-probabilities
    info = make_info([f"$0-{i}" for i in range(n)], np.random.default_rng(0).normal(size=(n, 2)), masks=masks)
    action = policy.get_action(info)
    actions = action.action
    assert actions.shape == (n, 2) and actions.dtype == np.int32
    assert not np.any(actions[:half, 0] == 1)
    assert set(np.unique(actions[:half, 0])) == {0, 2}
    assert np.all(actions[:half, 1] == 1)
    assert np.all(actions[half : n - 1, 0] == 1)
    assert set(np.unique(actions[half:, 1])) == {0, 1}
    assert 0 <= actions[n - 1, 0] < 3
    outputs = action.outputs
    assert outputs["action_probs"].shape == (n, 5)
    assert action.value.shape == (n,)
    assert action.memory is None


def test_empty_brain_info_gives_empty_action(ppo_params):
    policy = PPOPolicy(0, make_brain(), ppo_params(), True)
    action = policy.get_action(make_info([], np.zeros((0, 3)), masks=np.ones((0, 3))))
    assert action == ([], [], [], None, None)


def test_normalizer_updates_at_decisions_only_when_training(ppo_params):
    rng = np.random.default_rng(0)
    obs = [rng.normal(3.0, 2.0, size=(4, 3)) for _ in range(3)]
    trained = PPOPolicy(0, make_brain(), ppo_params(normalize=True), True)
    frozen = PPOPolicy(0, make_brain(), ppo_params(normalize=True), False)
    mean, var, steps = np.zeros(3), np.ones(3), 1
    for batch in obs:
        trained.get_action(make_info(["a", "b", "c", "d"], batch))
        frozen.get_action(make_info(["a", "b", "c", "d"], batch))
        m = batch.mean(axis=0)
        new_mean = mean + (m - mean) / (steps + 1)
        var = var + (m - new_mean) * (m - mean)
        mean, steps = new_mean, steps + 1
    normalizer = trained.model.normalizer
    np.testing.assert_allclose(normalizer.running_mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(normalizer.running_variance.numpy(), var, rtol=1e-5)
    assert int(normalizer.normalization_steps.numpy()) == 4
    assert int(frozen.model.normalizer.normalization_steps.numpy()) == 1
    # Value estimates for bootstrapping never update the statistics.
    trained.get_value_estimates(make_info(["a"], obs[0][:1]), 0, False)
    assert int(normalizer.normalization_steps.numpy()) == 4


def test_no_retracing_for_new_batch_sizes(ppo_params):
    policy = PPOPolicy(0, make_brain(vec=3, actions=(2,), space="continuous"), ppo_params(), True)
    rng = np.random.default_rng(0)
    for n in (1, 3, 7):
        policy.get_action(make_info([str(i) for i in range(n)], rng.normal(size=(n, 3))))
        policy.get_value_estimates(make_info([str(i) for i in range(n)], rng.normal(size=(n, 3))), 0, False)
    for n in (4, 9):
        policy.update(
            {
                "vector_obs": rng.normal(size=(n, 3)),
                "actions_pre": rng.normal(size=(n, 2)),
                "action_probs": rng.normal(size=(n, 2)),
                "masks": np.ones(n),
                "advantages": rng.normal(size=n),
                "extrinsic_returns": rng.normal(size=n),
                "extrinsic_value_estimates": rng.normal(size=n),
            },
            n,
        )
    assert policy.tracing_counts() == {"inference": 1, "value": 1, "update": 1}


def test_memory_size_validation(ppo_params):
    with pytest.raises(UnityPolicyException, match="The memory size for brain Brain is 0 even though"):
        PPOPolicy(0, make_brain(), ppo_params(use_recurrent=True, memory_size=0), True)
    with pytest.raises(UnityPolicyException, match="is 6 but it must be divisible by 4"):
        PPOPolicy(0, make_brain(), ppo_params(use_recurrent=True, memory_size=6), True)


# ---------------------------------------------------------------------- the trainer


def drive(trainer, infos, outputs_log=None):
    """Run the controller's sequence over consecutive BrainInfos; returns the last ActionInfo."""
    action = None
    for current, following in zip(infos, infos[1:]):
        action = trainer.policy.get_action(current)
        if outputs_log is not None:
            outputs_log.append(action.outputs)
        trainer.add_experiences({"Brain": current}, {"Brain": following}, action.outputs)
        trainer.process_experiences({"Brain": current}, {"Brain": following})
    return action


def test_trainer_collects_chunks_at_time_horizon_and_bootstraps(ppo_params):
    trainer = PPOTrainer(make_brain(), 1, ppo_params(time_horizon=3), True, False, 0, "run")
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(6, 2, 3))
    infos = [make_info(["a", "b"], obs[t], rewards=[t, 10 * t]) for t in range(6)]
    outputs = []
    drive(trainer, infos, outputs)
    update = trainer.training_buffer.update_buffer
    # time_horizon 3: each agent's chunk is processed when it holds 4 steps (5 infos -> 4 steps).
    assert len(update["actions"]) == 8
    assert len(trainer.training_buffer["a"]["actions"]) == 1
    rewards_a = np.array(update["extrinsic_rewards"])[:4]
    np.testing.assert_allclose(rewards_a, [1, 2, 3, 4])
    values_a = np.array([outputs[t]["value_heads"]["extrinsic"][0] for t in range(4)])
    np.testing.assert_allclose(np.array(update["extrinsic_value_estimates"])[:4], values_a, rtol=1e-6)
    # Not done: bootstrap from the value of the state after the chunk (infos[4]).
    bootstrap = trainer.policy.get_value_estimates(infos[4], 0, False)["extrinsic"]
    expected = get_gae(rewards_a, values_a, bootstrap, 0.99, 0.95)
    np.testing.assert_allclose(np.array(update["extrinsic_advantage"])[:4], expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        np.array(update["extrinsic_returns"])[:4], expected + values_a, rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(np.array(update["advantages"])[:4], expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(update["vector_obs"])[:4], obs[:4, 0])
    np.testing.assert_allclose(np.array(update["next_vector_in"])[:4], obs[1:5, 0])
    assert list(np.array(update["masks"])) == [1.0] * 8
    np.testing.assert_array_equal(
        np.array(update["actions"])[:4], [outputs[t]["action"][0] for t in range(4)]
    )
    assert np.array(update["action_mask"]).shape == (8, 3)
    assert trainer.stats["Policy/Entropy"] and trainer.stats["Policy/Extrinsic Value Estimate"]
    assert trainer.stats["Policy/Learning Rate"][0] == pytest.approx(3e-4, rel=1e-6)


def test_episode_end_terminal_value_and_statistics(ppo_params):
    trainer = PPOTrainer(make_brain(), 1, ppo_params(time_horizon=100), True, False, 0, "run")
    obs = np.random.default_rng(1).normal(size=(5, 1, 3))
    dones = [False, False, False, True, False]
    infos = [make_info(["a"], obs[t], rewards=[0.5 * t], dones=[dones[t]]) for t in range(4)]
    outputs = []
    drive(trainer, infos, outputs)
    update = trainer.training_buffer.update_buffer
    assert len(update["actions"]) == 3
    values = np.array([o["value_heads"]["extrinsic"][0] for o in outputs])
    # Episode really ended: the extrinsic signal uses terminal states, so the bootstrap value is 0.
    expected = get_gae(np.array([0.5, 1.0, 1.5]), values, 0.0, 0.99, 0.95)
    np.testing.assert_allclose(np.array(update["extrinsic_advantage"]), expected, rtol=1e-4, atol=1e-5)
    assert list(np.array(update["done"])) == [False, False, True]
    assert trainer.stats["Environment/Cumulative Reward"] == [3.0]
    assert trainer.stats["Policy/Extrinsic Reward"] == [3.0]
    # The final (done) step is not counted in the episode length.
    assert trainer.stats["Environment/Episode Length"] == [2.0]
    assert list(trainer.reward_buffer) == [3.0]
    assert trainer.cumulative_returns_since_policy_update == [3.0]
    assert trainer.collected_rewards["environment"]["a"] == 0


def test_max_reached_bootstraps_from_the_last_decision_state(ppo_params):
    trainer = PPOTrainer(make_brain(), 1, ppo_params(time_horizon=100), True, False, 0, "run")
    obs = np.random.default_rng(2).normal(size=(3, 1, 3))
    infos = [
        make_info(["a"], obs[0]),
        make_info(["a"], obs[1], rewards=[1.0]),
        make_info(["a"], obs[2], rewards=[1.0], dones=[True], max_reached=[True]),
    ]
    outputs = []
    drive(trainer, infos, outputs)
    values = np.array([o["value_heads"]["extrinsic"][0] for o in outputs])
    bootstrap = trainer.policy.get_value_estimates(infos[1], 0, False)["extrinsic"]
    assert bootstrap != 0
    expected = get_gae(np.array([1.0, 1.0]), values, bootstrap, 0.99, 0.95)
    np.testing.assert_allclose(
        np.array(trainer.training_buffer.update_buffer["extrinsic_advantage"]), expected, rtol=1e-4, atol=1e-5
    )


def test_agents_joining_and_leaving(ppo_params):
    trainer = PPOTrainer(make_brain(), 1, ppo_params(time_horizon=100), True, False, 0, "run")
    obs = np.random.default_rng(3).normal(size=(4, 3))
    first = make_info(["a", "b"], obs[:2])
    second = make_info(["b", "c"], obs[1:3], rewards=[2.0, 5.0])
    action = trainer.policy.get_action(first)
    trainer.add_experiences({"Brain": first}, {"Brain": second}, action.outputs)
    # "b" decided in `first` (row 1) and is row 0 of `second`; "c" has no decision yet.
    np.testing.assert_allclose(np.array(trainer.training_buffer["b"]["vector_obs"]), obs[1:2])
    np.testing.assert_allclose(np.array(trainer.training_buffer["b"]["extrinsic_rewards"]), [2.0])
    assert len(trainer.training_buffer["c"]["actions"]) == 0
    assert trainer.collected_rewards["environment"]["b"] == 2.0
    aligned = trainer.construct_curr_info(second)
    assert aligned.agents == ["b", "c"]
    np.testing.assert_allclose(aligned.vector_observations, obs[1:3])
    trainer.end_episode()
    assert len(trainer.training_buffer["b"]["actions"]) == 0
    assert trainer.collected_rewards["environment"]["b"] == 0
    assert trainer.episode_steps["b"] == 0


def test_update_policy_uses_and_clears_the_buffer(ppo_params):
    trainer = PPOTrainer(
        make_brain(vec=3, actions=(2,), space="continuous"),
        1,
        ppo_params(time_horizon=4, buffer_size=12, batch_size=4),
        True,
        False,
        0,
        "run",
    )
    rng = np.random.default_rng(4)
    infos = [make_info(["a", "b"], rng.normal(size=(2, 3)), rewards=rng.normal(size=2)) for _ in range(8)]
    drive(trainer, infos)
    assert not trainer.is_ready_update()
    drive(trainer, [infos[-1]] + [make_info(["a", "b"], rng.normal(size=(2, 3))) for _ in range(5)])
    assert len(trainer.training_buffer.update_buffer["actions"]) == 20
    assert trainer.is_ready_update()
    weights = trainer.policy.model.mu.kernel.numpy().copy()
    trainer.update_policy()
    assert len(trainer.training_buffer.update_buffer["actions"]) == 0
    assert not np.allclose(weights, trainer.policy.model.mu.kernel.numpy())
    # 2 epochs x floor(20 / 4) mini-batches, then one mean per tag.
    assert int(trainer.policy.optimizer.iterations.numpy()) == 10
    assert len(trainer.stats["Losses/Value Loss"]) == 1 and len(trainer.stats["Losses/Policy Loss"]) == 1
    assert trainer.stats["Losses/Policy Loss"][0] >= 0
    assert trainer.policy.tracing_counts()["update"] == 1


def test_recurrent_trainer_pads_sequences_and_updates(ppo_params):
    params = ppo_params(
        use_recurrent=True, memory_size=8, sequence_length=3, time_horizon=4, batch_size=6, buffer_size=8
    )
    trainer = PPOTrainer(make_brain(vec=3, actions=(3,)), 1, params, True, False, 0, "run")
    rng = np.random.default_rng(5)
    memories = np.zeros((1, 8))
    infos = []
    for t in range(6):
        infos.append(
            make_info(
                ["a"],
                rng.normal(size=(1, 3)),
                rewards=[1.0],
                memories=memories.copy(),
                prev=np.array([[t % 3]]),
            )
        )
        memories = memories + 0.1
    outputs = []
    drive(trainer, infos, outputs)
    update = trainer.training_buffer.update_buffer
    # 5 steps in sequences of 3: one padding step in front with mask 0.
    assert list(np.array(update["masks"])) == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    np.testing.assert_allclose(np.array(update["memory"])[1], np.zeros(8))
    np.testing.assert_allclose(np.array(update["memory"])[2], np.full(8, 0.1))
    assert outputs[0]["memory_out"].shape == (1, 8)
    np.testing.assert_array_equal(np.array(update["action_mask"])[0], np.array(update["action_mask"])[-1])
    drive(
        trainer,
        [infos[-1]] + [make_info(["a"], rng.normal(size=(1, 3)), memories=np.ones((1, 8))) for _ in range(5)],
    )
    assert trainer.is_ready_update()
    trainer.update_policy()
    assert int(trainer.policy.optimizer.iterations.numpy()) == 2 * (12 // 6)


def test_visual_policy_acts_and_learns(ppo_params):
    brain = make_brain(vec=0, actions=(2,), cameras=[(20, 20, False), (20, 20, True)])
    policy = PPOPolicy(0, brain, ppo_params(), True)
    rng = np.random.default_rng(6)
    visual = [[rng.random((20, 20, 3)) for _ in range(2)], [rng.random((20, 20, 1)) for _ in range(2)]]
    info = make_info(["a", "b"], np.zeros((2, 0)), visual=visual, masks=np.ones((2, 2)))
    action = policy.get_action(info)
    assert action.action.shape == (2, 1)
    n = 4
    stats = policy.update(
        {
            "visual_obs0": rng.random((n, 20, 20, 3)),
            "visual_obs1": rng.random((n, 20, 20, 1)),
            "actions": np.zeros((n, 1)),
            "action_probs": rng.normal(size=(n, 2)),
            "action_mask": np.ones((n, 2)),
            "masks": np.ones(n),
            "advantages": rng.normal(size=n),
            "extrinsic_returns": rng.normal(size=n),
            "extrinsic_value_estimates": rng.normal(size=n),
        },
        n,
    )
    assert math.isfinite(stats["value_loss"])


@pytest.mark.slow
def test_update_draws_camera_images_into_the_same_mini_batches(ppo_params):
    """The update gathers each mini-batch's images from the buffer's list (no array of the whole
    buffer's images): every mini-batch holds exactly the float32 rows a stacked buffer would give."""
    import copy

    brain = make_brain(vec=2, actions=(2,), cameras=[(20, 24, False)])
    trainer = PPOTrainer(
        brain, 1, ppo_params(time_horizon=4, buffer_size=16, batch_size=4, num_epoch=2), True, False, 0, "run"
    )
    rng = np.random.default_rng(11)
    infos = [
        make_info(
            ["a", "b"],
            rng.normal(size=(2, 2)),
            rewards=rng.normal(size=2),
            masks=np.ones((2, 2)),
            visual=[[rng.integers(0, 256, size=(20, 24, 3)) / 255.0 for _ in range(2)]],
        )
        for _ in range(11)
    ]
    drive(trainer, infos)
    assert trainer.is_ready_update()
    update = trainer.training_buffer.update_buffer
    stacked = {key: np.array(field) for key, field in update.items() if "visual" in key}
    assert stacked["visual_obs0"].dtype == np.float32 and stacked["visual_obs0"].shape[1:] == (20, 24, 3)
    length = len(update["actions"])
    shuffles = copy.deepcopy(trainer.shuffle_rng)
    seen = []
    policy_update = trainer.policy.update

    def recording_update(mini_batch, n_sequences):
        seen.append({key: mini_batch[key] for key in stacked})
        return policy_update(mini_batch, n_sequences)

    trainer.policy.update = recording_update
    trainer.update_policy()
    expected = []
    for _ in range(2):
        order = shuffles.permutation(length)
        expected += [order[start : start + 4] for start in range(0, length - 3, 4)]
    assert len(seen) == len(expected) == 2 * (length // 4)
    for batch, index in zip(seen, expected):
        for key, array in stacked.items():
            # The mini-batch carries the buffer's compact image codes; the networks get them decoded.
            assert batch[key].dtype == np.uint8
            decoded = float_images(batch[key])
            assert decoded.dtype == np.float32
            np.testing.assert_array_equal(decoded, array[index])


def test_trainer_configuration_errors(ppo_params):
    with pytest.raises(
        UnityTrainerException,
        match="No reward signals were defined. At least one must be used with PPOTrainer.",
    ):
        PPOTrainer(make_brain(), 1, ppo_params(reward_signals={}), True, False, 0, "run")
    params = ppo_params()
    del params["lambd"]
    with pytest.raises(UnityTrainerException, match="lambd"):
        PPOTrainer(make_brain(), 1, params, True, False, 0, "run")
    with pytest.raises(ValueError):
        PPOTrainer(make_brain(), 1, ppo_params(vis_encode_type="fancy"), True, False, 0, "run")


# ---------------------------------------------------------------------- checkpoints


def test_save_and_load_restore_step_optimizer_and_normalizer(ppo_params):
    params = ppo_params(normalize=True, keep_checkpoints=2, batch_size=4, buffer_size=8, time_horizon=4)
    brain = make_brain(vec=3, actions=(2,), space="continuous")
    trainer = PPOTrainer(brain, 1, params, True, False, 0, "run")
    rng = np.random.default_rng(7)
    infos = [make_info(["a", "b"], rng.normal(size=(2, 3)), rewards=rng.normal(size=2)) for _ in range(7)]
    drive(trainer, infos)
    trainer.increment_step(123)
    trainer.update_policy()
    for step in (100, 200, 300):
        trainer.policy.save_model(step)
    files = sorted(os.listdir(params["model_path"]))
    assert "checkpoint" in files
    assert not any(name.startswith("model-100.") for name in files)  # keep_checkpoints = 2
    assert any(name.startswith("model-300.") for name in files)
    trainer.save_model()  # the Trainer base saves at the current step
    assert any(name.startswith("model-123.") for name in os.listdir(params["model_path"]))

    restored = PPOPolicy(0, brain, dict(params, load=True), True)
    original = trainer.policy
    assert restored.get_current_step() == 123
    for a, b in zip(original.model.variables, restored.model.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert int(restored.optimizer.iterations.numpy()) == int(original.optimizer.iterations.numpy()) > 0
    for a, b in zip(original.optimizer.variables, restored.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert int(restored.model.normalizer.normalization_steps.numpy()) == 7
    assert restored.increment_step(2) == 125
    info = make_info(["a"], rng.normal(size=(1, 3)))
    np.testing.assert_allclose(
        original.get_value_estimates(info, 0, False)["extrinsic"],
        restored.get_value_estimates(info, 0, False)["extrinsic"],
        rtol=1e-6,
    )


def test_load_errors_are_clear(ppo_params):
    with pytest.raises(
        UnityPolicyException, match="could not be found. Make sure you specified the right --run-id"
    ):
        PPOPolicy(0, make_brain(), ppo_params(), True, load=True)
    params = ppo_params()
    PPOPolicy(0, make_brain(), params, True).save_model(5)
    with pytest.raises(UnityPolicyException, match="does not fit the network of brain Brain"):
        PPOPolicy(0, make_brain(), dict(params, hidden_units=12), True, load=True)


def test_numbers_given_as_strings_are_coerced(ppo_params):
    """PyYAML reads 5.0e4, 1e-3 and friends as strings: every hyper-parameter is coerced."""
    params = ppo_params(
        batch_size="4",
        beta="1e-3",
        buffer_size="8.0",
        epsilon="0.2",
        hidden_units="8",
        lambd="0.95",
        learning_rate="1e-3",
        max_steps="5.0e4",
        memory_size="8",
        normalize="false",
        num_epoch="1",
        num_layers="1",
        time_horizon="4",
        sequence_length="2",
        keep_checkpoints="3",
        reward_signals={"extrinsic": {"strength": "1.0", "gamma": "9.9e-1"}},
    )
    trainer = PPOTrainer(make_brain(), 1, params, True, False, 0, "run")
    assert trainer.policy.model.normalizer is None
    assert trainer.policy.reward_signals["extrinsic"].gamma == pytest.approx(0.99)
    rng = np.random.default_rng(9)
    drive(trainer, [make_info(["a", "b"], rng.normal(size=(2, 3)), rewards=[1, 0]) for _ in range(7)])
    assert trainer.is_ready_update()
    trainer.update_policy()
    assert trainer.stats["Policy/Learning Rate"][0] == pytest.approx(1e-3, rel=1e-5)


@pytest.mark.parametrize("space", ["discrete", "continuous"])
def test_ppo_learns_a_contextual_bandit(ppo_params, space):
    """The whole loop (decisions, GAE, updates) improves a policy: the right action depends on the sign
    of the observation (discrete: +1 for action 1 iff x > 0; continuous: reward -|a - x/2|)."""
    continuous = space == "continuous"
    params = ppo_params(
        batch_size=32,
        buffer_size=64,
        hidden_units=16,
        learning_rate=1e-2,
        beta=1e-3,
        time_horizon=4,
        lambd=0.9,
        num_epoch=3,
        max_steps=1e5,
        reward_signals={"extrinsic": {"strength": 1.0, "gamma": 0.1}},
    )
    trainer = PPOTrainer(
        make_brain(vec=1, actions=(1,) if continuous else (2,), space=space), 1, params, True, False, 0, "run"
    )
    n = 16
    rng = np.random.default_rng(0)
    agents = [str(i) for i in range(n)]
    x = rng.choice([-1.0, 1.0], size=n)
    current = make_info(agents, x[:, None], masks=np.ones((n, 2)))
    history = []
    for _ in range(320 if continuous else 120):
        action = trainer.policy.get_action(current)
        if continuous:
            reward = -np.abs(action.action[:, 0] - 0.5 * x)
        else:
            reward = (action.action[:, 0] == (x > 0)).astype(float)
        history.append(reward.mean())
        x = rng.choice([-1.0, 1.0], size=n)
        following = make_info(agents, x[:, None], rewards=reward, masks=np.ones((n, 2)))
        trainer.add_experiences({"Brain": current}, {"Brain": following}, action.outputs)
        trainer.process_experiences({"Brain": current}, {"Brain": following})
        trainer.increment_step(1)
        if trainer.is_ready_update():
            trainer.update_policy()
        current = following
    first, last = np.mean(history[:10]), np.mean(history[-40:])
    if continuous:
        assert first < -0.25 and last > -0.1
    else:
        assert first < 0.75 and last > 0.95


def test_inference_only_trainer_keeps_statistics_but_no_update_buffer(ppo_params):
    trainer = PPOTrainer(make_brain(), 1, ppo_params(time_horizon=2), False, False, 0, "run")
    obs = np.random.default_rng(10).normal(size=(6, 1, 3))
    dones = [False, False, False, True, False, False]
    drive(trainer, [make_info(["a"], obs[t], rewards=[1.0], dones=[dones[t]]) for t in range(6)])
    assert len(trainer.training_buffer.update_buffer["actions"]) == 0
    assert trainer.stats["Environment/Cumulative Reward"] == [3.0]


def test_trainer_and_policy_share_one_settings_object(ppo_params):
    from mlagents.trainers.settings import ConfigSource, PPOSettings

    settings = PPOSettings.from_dict(ppo_params(batch_size="4", max_steps="1e3"), ConfigSource("Brain"))
    trainer = PPOTrainer(make_brain(), 1, settings, True, False, 0, "run")
    assert trainer.settings is settings and trainer.policy.settings is settings
    assert trainer.batch_size == 4 and trainer.get_max_steps == 1000.0
    assert trainer.load is False and trainer.policy.load is False
    trainer.increment_step(3)
    trainer.save_model()
    # load from the argument or from the settings, worked out once (by the policy).
    loaded = PPOTrainer(make_brain(), 1, settings, True, True, 0, "run")
    assert loaded.load is True and loaded.policy.get_current_step() == 3
    from_settings = PPOTrainer(make_brain(), 1, dict(ppo_params(), load=True), True, False, 0, "run")
    assert from_settings.load is True


def test_trainer_without_run_paths_names_the_missing_key(ppo_params):
    params = ppo_params()
    del params["summary_path"]
    with pytest.raises(UnityTrainerException, match="The hyper-parameter summary_path could not be found"):
        PPOTrainer(make_brain(), 1, params, True, False, 0, "run")
