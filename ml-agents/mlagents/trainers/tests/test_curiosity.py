"""The curiosity signal: its losses and reward against numpy on hand-made batches, the reward's
scaling and clipping, its training inside the PPO update, checkpoints and export."""

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.example_envs.sdk import inference
from mlagents.trainers.components.reward_signals.curiosity.model import CuriosityModel
from mlagents.trainers.components.reward_signals.curiosity.signal import CuriosityRewardSignal
from mlagents.trainers.components.reward_signals.reward_signal_factory import create_reward_signal
from mlagents.trainers.components.reward_signals.signal_layers import SignalShapes
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.layers import Initializer
from mlagents.trainers.ppo.policy import PPOPolicy

CURIOSITY = {"strength": 0.5, "gamma": 0.9, "encoding_size": 6}


def swish(x):
    return x / (1.0 + np.exp(-x))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def dense(layer, x, activation=None):
    y = x @ layer.kernel.numpy() + (0 if layer.bias is None else layer.bias.numpy())
    return swish(y) if activation == "swish" else y


def numpy_icm(model, obs, next_obs, actions, masks):
    """The ICM of a vector-only model, written with numpy: (per-step surprise, forward, inverse loss)."""

    def encode(x):
        for layer in model.vector_encoder.layers:
            x = dense(layer, x, "swish")
        return x

    phi, phi_next = encode(obs), encode(next_obs)
    if model.is_continuous:
        selected = actions
    else:
        selected = np.concatenate(
            [np.eye(size)[actions[:, k]] for k, size in enumerate(model.act_size)], axis=1
        )
    hidden = dense(model.inverse_hidden, np.concatenate([phi, phi_next], axis=1), "swish")
    if model.is_continuous:
        inverse = ((dense(model.inverse_heads[0], hidden) - selected) ** 2).sum(axis=1)
    else:
        predicted = np.concatenate([softmax(dense(head, hidden)) for head in model.inverse_heads], axis=1)
        inverse = (-np.log(predicted + 1e-10) * selected).sum(axis=1)
    forward = dense(
        model.forward_out, dense(model.forward_hidden, np.concatenate([phi, selected], axis=1), "swish")
    )
    surprise = 0.5 * ((forward - phi_next) ** 2).sum(axis=1)
    real = masks == 1
    return surprise, surprise[real].mean(), inverse[real].mean()


@pytest.mark.parametrize("continuous", [False, True])
def test_losses_and_reward_equal_numpy(continuous):
    rng = np.random.default_rng(3)
    act_size = [2] if continuous else [3, 2]
    model = CuriosityModel(SignalShapes(5, [], act_size, continuous), 6, Initializer(4))
    n = 7
    obs = rng.normal(size=(n, 5)).astype(np.float32)
    next_obs = rng.normal(size=(n, 5)).astype(np.float32)
    if continuous:
        actions = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
    else:
        actions = np.stack([rng.integers(0, 3, n), rng.integers(0, 2, n)], axis=1).astype(np.int32)
    masks = np.array([1, 1, 0, 1, 1, 0, 1], dtype=np.float32)
    inputs = {
        "vector_observation": obs,
        "next_vector_observation": next_obs,
        "actions": actions,
        "masks": masks,
    }
    surprise, forward, inverse = numpy_icm(model, obs, next_obs, actions, masks)
    losses = model.losses(inputs)
    np.testing.assert_allclose(
        model.outputs(inputs)["intrinsic_reward"].numpy(), surprise, rtol=1e-4, atol=1e-6
    )
    np.testing.assert_allclose(losses["forward_loss"].numpy(), forward, rtol=1e-4)
    np.testing.assert_allclose(losses["inverse_loss"].numpy(), inverse, rtol=1e-4)
    np.testing.assert_allclose(losses["loss"].numpy(), 10 * (0.2 * forward + 0.8 * inverse), rtol=1e-4)


def brain_of(continuous=False, cameras=()):
    resolutions = [{"height": h, "width": w, "blackAndWhite": bw} for h, w, bw in cameras]
    actions = [2] if continuous else [3, 2]
    return BrainParameters(
        "Brain", 4, 1, resolutions, actions, [""] * len(actions), "continuous" if continuous else "discrete"
    )


def brain_info(rng, brain, n, actions=None, done=None):
    cameras = [
        rng.uniform(0, 1, (n, r["height"], r["width"], 1 if r["blackAndWhite"] else 3))
        for r in brain.camera_resolutions
    ]
    if actions is None:
        if brain.vector_action_space_type == "continuous":
            actions = rng.uniform(-1, 1, (n, brain.vector_action_space_size[0]))
        else:
            actions = np.stack(
                [rng.integers(0, s, n) for s in brain.vector_action_space_size], axis=1
            ).astype(float)
    return BrainInfo(
        cameras,
        rng.normal(size=(n, 4)),
        [""] * n,
        reward=[0.0] * n,
        agents=[f"a{i}" for i in range(n)],
        local_done=[False] * n if done is None else list(done),
        vector_action=actions,
        max_reached=[False] * n,
    )


def update_batch(rng, brain, n, infos=None):
    """A PPO mini-batch of n random transitions (or of the transitions ``infos`` = (current, next))."""
    cur, nxt = infos or (brain_info(rng, brain, n), brain_info(rng, brain, n))
    batch = {
        "vector_obs": cur.vector_observations,
        "next_vector_in": nxt.vector_observations,
        "actions": nxt.previous_vector_actions,
        "masks": np.ones(n),
        "done": np.zeros(n, dtype=bool),
    }
    for i in range(brain.number_visual_observations):
        batch[f"visual_obs{i}"] = cur.visual_observations[i]
        batch[f"next_visual_obs{i}"] = nxt.visual_observations[i]
    return batch


@pytest.fixture
def curiosity_policy(ppo_params):
    def make(continuous=False, cameras=(), **signal):
        params = ppo_params(
            reward_signals={
                "extrinsic": {"strength": 1.0, "gamma": 0.99},
                "curiosity": {**CURIOSITY, **signal},
            }
        )
        return PPOPolicy(2, brain_of(continuous, cameras), params, is_training=True)

    return make


@pytest.mark.slow
@pytest.mark.parametrize("continuous", [False, True])
def test_reward_is_zero_before_the_first_update_then_scaled_and_clipped(curiosity_policy, continuous):
    policy = curiosity_policy(continuous, cameras=[(36, 36, False)])
    signal = policy.reward_signals["curiosity"]
    assert isinstance(signal, CuriosityRewardSignal) and not signal.use_terminal_states
    assert signal.stat_name == "Policy/Curiosity Reward"
    assert signal.value_name == "Policy/Curiosity Value Estimate"
    rng = np.random.default_rng(0)
    brain = policy.brain
    current, following = brain_info(rng, brain, 5), brain_info(rng, brain, 5)
    before = signal.evaluate(current, following)
    assert before.unscaled_reward.shape == (5,) and (before.unscaled_reward > 0).all()
    np.testing.assert_array_equal(before.scaled_reward, np.zeros(5))
    stats = signal.update(update_batch(rng, brain, 8), 8)
    assert set(stats) >= {"curiosity_forward_loss", "curiosity_inverse_loss"}
    assert signal.has_updated
    after = signal.evaluate(current, following)
    np.testing.assert_allclose(after.scaled_reward, np.clip(0.5 * after.unscaled_reward, 0, 1), rtol=1e-6)
    # Scaling: strength times the surprise, clipped to [0, 1].
    np.testing.assert_allclose(signal.scale(np.array([0.1, 1.0, 3.0, 50.0])), [0.05, 0.5, 1.0, 1.0])
    empty = signal.evaluate(brain_info(rng, brain, 0), brain_info(rng, brain, 0))
    assert empty.scaled_reward.shape == (0,)


def test_training_reduces_the_surprise_of_a_repeated_transition(curiosity_policy):
    policy = curiosity_policy(False, learning_rate=1e-2)
    signal = policy.reward_signals["curiosity"]
    rng = np.random.default_rng(1)
    seen = (brain_info(rng, policy.brain, 16), brain_info(rng, policy.brain, 16))
    novel = (brain_info(rng, policy.brain, 16), brain_info(rng, policy.brain, 16))
    batch = update_batch(rng, policy.brain, 16, seen)
    first = signal.update(batch, 16)
    for _ in range(60):
        last = signal.update(batch, 16)
    # Measured: total loss 14.6 -> 0.03, inverse loss 1.78 -> 0.001, surprise 0.01 (seen) vs 2.1 (new).
    assert last["curiosity_update"] < 0.5 * first["curiosity_update"]
    assert last["curiosity_inverse_loss"] < 0.5 * first["curiosity_inverse_loss"]
    familiar = signal.evaluate(*seen).unscaled_reward.mean()
    new = signal.evaluate(*novel).unscaled_reward.mean()
    assert familiar < 0.5 * new


def test_the_ppo_update_trains_the_module_and_reports_its_losses(curiosity_policy):
    policy = curiosity_policy(False)
    rng = np.random.default_rng(2)
    n = 8
    batch = update_batch(rng, policy.brain, n)
    batch.update(
        {
            "action_mask": np.ones((n, 5)),
            "action_probs": rng.normal(size=(n, 5)),
            "actions": batch["actions"].astype(np.int32),
            "advantages": rng.normal(size=n),
            "extrinsic_returns": rng.normal(size=n),
            "extrinsic_value_estimates": rng.normal(size=n),
            "curiosity_returns": rng.normal(size=n),
            "curiosity_value_estimates": rng.normal(size=n),
        }
    )
    before = [v.numpy().copy() for v in policy.reward_signals["curiosity"].model.trainable_variables]
    stats = policy.update(batch, n)
    assert {"value_loss", "policy_loss", "curiosity_forward_loss", "curiosity_inverse_loss"} <= set(stats)
    after = policy.reward_signals["curiosity"].model.trainable_variables
    assert all(not np.array_equal(a, b.numpy()) for a, b in zip(before, after))


@pytest.mark.slow
def test_checkpoint_holds_the_module_and_export_holds_the_policy_only(curiosity_policy, ppo_params, tmp_path):
    from pathlib import Path

    policy = curiosity_policy(False)
    signal = policy.reward_signals["curiosity"]
    signal.update(update_batch(np.random.default_rng(5), policy.brain, 8), 8)
    policy.save_model(3)
    restored = PPOPolicy(2, policy.brain, policy.settings, is_training=True, load=True)
    for a, b in zip(signal.model.variables, restored.reward_signals["curiosity"].model.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    policy.export_model()
    with_curiosity = Path(policy.model_path + ".nn").read_bytes()
    plain = PPOPolicy(
        2, policy.brain, ppo_params(model_path=str(tmp_path / "plain" / "Brain")), is_training=True
    )
    plain.export_model()
    # Same seed, same policy weights: the curiosity module leaves no trace in the exported model.
    assert with_curiosity == Path(plain.model_path + ".nn").read_bytes()
    names = list(inference.read_nn(policy.model_path + ".nn").tensors())
    assert names and not [name for name in names if "curiosity" in name.lower()]


def test_required_keys_and_unknown_keys():
    with pytest.raises(
        UnityTrainerException,
        match="The hyper-parameter encoding_size could not be found for CuriosityRewardSignal",
    ):
        create_reward_signal(None, None, "curiosity", {"strength": 0.1, "gamma": 0.9})
    with pytest.raises(UnityTrainerException, match="^Unknown parameters given for reward signal curiosity$"):
        create_reward_signal(None, None, "curiosity", {**CURIOSITY, "num_epoch": 3})


def test_continuous_update_takes_the_clipped_sample_the_agent_was_sent(curiosity_policy):
    """As in 0.9 (the update feeds ``actions_pre``; the models read the policy's clipped/3
    ``selected_actions``): the forward and inverse models see clip(actions_pre, -3, 3) / 3, which
    is the action the policy sent and the one ``evaluate`` reads from ``previous_vector_actions``."""
    policy = curiosity_policy(True)
    signal = policy.reward_signals["curiosity"]
    rng = np.random.default_rng(3)
    n = 6
    batch = update_batch(rng, policy.brain, n)
    pre = np.array([[-7.5, 0.3], [2.9, 3.2], [-3.0, 4.0], [0.0, -0.6], [9.0, -9.0], [1.5, -2.25]])
    batch["actions_pre"] = pre
    batch["actions"] = np.zeros((n, 2))  # a wrong stored copy: the unclipped sample wins
    inputs = signal.prepare_update(policy, batch, n)
    np.testing.assert_allclose(inputs["actions"], np.clip(pre, -3, 3) / 3, rtol=1e-6)
    assert inputs["actions"].dtype == np.float32
    # without ``actions_pre`` (a demonstration buffer) the stored actions are taken as they are
    del batch["actions_pre"]
    batch["actions"] = rng.uniform(-1, 1, (n, 2))
    np.testing.assert_allclose(
        signal.prepare_update(policy, batch, n)["actions"], batch["actions"], rtol=1e-6
    )
    # the policy's own outputs: the action sent is exactly that clipped sample
    out = policy.evaluate(brain_info(rng, policy.brain, 64))
    np.testing.assert_allclose(out["action"], np.clip(out["pre_action"], -3, 3) / 3, rtol=1e-6)
    assert (np.abs(out["pre_action"]) > 0).all()
