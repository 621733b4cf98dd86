"""The GAIL signal: the discriminator loss, the gradient penalty and the VAIL beta update against
numpy on hand-made batches; the reward's scaling; demonstrations (file, folder, wrong brain,
missing path); training inside the PPO update, checkpoints and export."""

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.example_envs.sdk import inference
from mlagents.trainers.components.reward_signals.gail.model import GAILModel
from mlagents.trainers.components.reward_signals.gail.signal import GAILRewardSignal
from mlagents.trainers.components.reward_signals.signal_layers import SignalShapes
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.layers import Initializer
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.settings import RewardSignalSettings
from mlagents.trainers.tests.demo_files import write_demo

EPS = 1e-7


def swish(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def weights(layer):
    return layer.kernel.numpy().astype(np.float64), layer.bias.numpy().astype(np.float64)


def numpy_discriminator(model, x):
    """D(x) and (VAIL) the code mean, without noise, in float64."""
    w1, b1 = weights(model.hidden_1)
    w2, b2 = weights(model.hidden_2)
    hidden = swish(swish(x @ w1 + b1) @ w2 + b2)
    z_mean = None
    if model.use_vail:
        wz, bz = weights(model.z_mean)
        z_mean = hidden @ wz + bz
        hidden = z_mean
    w3, b3 = weights(model.estimate)
    return sigmoid(hidden @ w3 + b3)[:, 0], z_mean


def numpy_input_gradient(model, x):
    """dD/dx of the non-VAIL discriminator, by the chain rule, (n, width)."""
    w1, b1 = weights(model.hidden_1)
    w2, b2 = weights(model.hidden_2)
    w3, b3 = weights(model.estimate)

    def swish_grad(a):
        s = sigmoid(a)
        return s + a * s * (1 - s)

    a1 = x @ w1 + b1
    h1 = swish(a1)
    a2 = h1 @ w2 + b2
    d = sigmoid(swish(a2) @ w3 + b3)
    g_a2 = (d * (1 - d)) * w3[:, 0][None, :] * swish_grad(a2)
    g_a1 = (g_a2 @ w2.T) * swish_grad(a1)
    return g_a1 @ w1.T


def one_hot(actions, sizes):
    return np.concatenate([np.eye(size)[actions[:, k]] for k, size in enumerate(sizes)], axis=1)


def make_model(use_actions, use_vail, continuous=False):
    act_size = [2] if continuous else [3, 2]
    return GAILModel(
        SignalShapes(4, [], act_size, continuous), 8, use_actions, use_vail, Initializer(5), seed=3
    )


def batches(rng, n, continuous=False):
    def one(prefix):
        batch = {f"{prefix}vector_observation": rng.normal(size=(n, 4)).astype(np.float32)}
        if continuous:
            batch[f"{prefix}actions"] = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        else:
            batch[f"{prefix}actions"] = np.stack([rng.integers(0, 3, n), rng.integers(0, 2, n)], 1).astype(
                np.int32
            )
        batch[f"{prefix}done"] = (rng.uniform(size=n) < 0.3).astype(np.float32)
        return batch

    return one(""), one("expert_")


def numpy_input(batch, prefix, use_actions, continuous=False):
    parts = [batch[f"{prefix}vector_observation"].astype(np.float64)]
    if use_actions:
        actions = batch[f"{prefix}actions"]
        parts.append(actions.astype(np.float64) if continuous else one_hot(actions, [3, 2]))
        parts.append(batch[f"{prefix}done"].reshape(-1, 1).astype(np.float64))
    return np.concatenate(parts, axis=1)


@pytest.mark.parametrize("use_actions, continuous", [(False, False), (True, False), (True, True)])
def test_discriminator_loss_estimates_and_reward_equal_numpy(use_actions, continuous):
    rng = np.random.default_rng(0)
    model = make_model(use_actions, False, continuous)
    policy, expert = batches(rng, 6, continuous)
    d_policy, _ = numpy_discriminator(model, numpy_input(policy, "", use_actions, continuous))
    d_expert, _ = numpy_discriminator(model, numpy_input(expert, "expert_", use_actions, continuous))
    losses = model.losses(policy, expert, None)
    expected = -np.mean(np.log(d_expert + EPS) + np.log(1 - d_policy + EPS))
    np.testing.assert_allclose(losses["discriminator_loss"].numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(losses["policy_estimate"].numpy(), d_policy.mean(), rtol=1e-5)
    np.testing.assert_allclose(losses["expert_estimate"].numpy(), d_expert.mean(), rtol=1e-5)
    np.testing.assert_allclose(
        losses["loss"].numpy(), expected + 10 * losses["gradient_penalty"].numpy(), rtol=1e-5
    )
    np.testing.assert_allclose(model.reward(policy, None).numpy(), -np.log(1 - d_policy + EPS), rtol=1e-5)


def test_gradient_penalty_equals_numpy():
    rng = np.random.default_rng(1)
    model = make_model(True, False)
    x = rng.normal(size=(5, model.input_width)).astype(np.float32)
    gradient = numpy_input_gradient(model, x.astype(np.float64))
    expected = np.mean((np.sqrt((gradient**2).sum(axis=1) + EPS) - 1) ** 2)
    np.testing.assert_allclose(model.penalty_at(tf.constant(x)).numpy(), expected, rtol=1e-4)


def test_gradient_penalty_interpolates_between_expert_and_policy():
    # Identical expert and policy inputs: every interpolate is that input, whatever the draw.
    rng = np.random.default_rng(2)
    model = make_model(True, False)
    part = [rng.normal(size=(4, w)).astype(np.float32) for w in (4, 5, 1)]
    parts = [tf.constant(p) for p in part]
    at = model.penalty_at(tf.concat(parts, axis=1)).numpy()
    np.testing.assert_allclose(model.gradient_penalty(parts, parts).numpy(), at, rtol=1e-5)


def test_vail_kl_loss_and_beta_update_equal_numpy():
    rng = np.random.default_rng(3)
    model = make_model(True, True)
    sigma = rng.uniform(0.5, 1.5, 128).astype(np.float32)
    model.z_sigma.assign(sigma)
    policy, expert = batches(rng, 6)
    _, z_policy = numpy_discriminator(model, numpy_input(policy, "", True))
    _, z_expert = numpy_discriminator(model, numpy_input(expert, "expert_", True))
    log_sigma_sq = np.log(sigma.astype(np.float64) ** 2 + EPS)
    kl = np.mean(
        -np.sum(1 + log_sigma_sq - 0.5 * z_expert**2 - 0.5 * z_policy**2 - np.exp(log_sigma_sq), axis=1)
    )
    losses = model.losses(policy, expert, None)
    np.testing.assert_allclose(losses["kl_loss"].numpy(), kl, rtol=1e-4)
    model.update_beta(losses["kl_loss"])
    np.testing.assert_allclose(model.beta.numpy(), max(1.0 + 0.0005 * (kl - 0.5), EPS), rtol=1e-6)
    # beta never drops below eps.
    model.update_beta(tf.constant(-1e9))
    np.testing.assert_allclose(model.beta.numpy(), EPS)


def test_vail_loss_with_a_silent_code_equals_numpy():
    # With sigma = 0 the sampled code is its mean, so the loss is deterministic.
    rng = np.random.default_rng(4)
    model = make_model(False, True)
    model.z_sigma.assign(np.zeros(128, np.float32))
    model.beta.assign(0.7)
    policy, expert = batches(rng, 5)
    d_policy, z_policy = numpy_discriminator(model, numpy_input(policy, "", False))
    d_expert, z_expert = numpy_discriminator(model, numpy_input(expert, "expert_", False))
    log_sigma_sq = np.full(128, np.log(EPS))
    kl = np.mean(-np.sum(1 + log_sigma_sq - 0.5 * z_expert**2 - 0.5 * z_policy**2 - EPS, axis=1))
    d_loss = -np.mean(np.log(d_expert + EPS) + np.log(1 - d_policy + EPS))
    losses = model.losses(policy, expert, None)
    expected = 0.7 * (kl - 0.5) + d_loss + 10 * losses["gradient_penalty"].numpy()
    np.testing.assert_allclose(losses["loss"].numpy(), expected, rtol=1e-4)


# ---------------------------------------------------------------------- with demonstrations


BRAIN = BrainParameters("Brain", 4, 1, [], [3, 2], ["", ""], "discrete")


def gail_params(ppo_params, demo_path, **signal):
    return ppo_params(
        reward_signals={
            "extrinsic": {"strength": 0.0, "gamma": 0.99},
            "gail": {"strength": 0.5, "gamma": 0.9, "demo_path": demo_path, "use_actions": True, **signal},
        }
    )


def policy_batch(rng, n):
    return {
        "vector_obs": rng.normal(size=(n, 4)) - 1.0,
        "actions": np.stack([rng.integers(0, 3, n), rng.integers(0, 2, n)], 1),
        "done": np.zeros(n, dtype=bool),
        "masks": np.ones(n),
    }


def infos(rng, n, obs, actions):
    def make(a):
        return BrainInfo(
            [],
            obs,
            [""] * n,
            reward=[0.0] * n,
            agents=[f"a{i}" for i in range(n)],
            local_done=[False] * n,
            vector_action=a,
            max_reached=[False] * n,
        )

    return make(actions), make(actions)


@pytest.mark.parametrize("use_vail", [False, True])
def test_discriminator_learns_the_expert_and_rewards_expert_like_steps(ppo_params, tmp_path, use_vail):
    demo = write_demo(tmp_path / "expert.demo")
    policy = PPOPolicy(1, BRAIN, gail_params(ppo_params, demo, use_vail=use_vail, learning_rate=3e-3), True)
    signal = policy.reward_signals["gail"]
    assert isinstance(signal, GAILRewardSignal) and not signal.use_terminal_states
    assert signal.stat_name == "Policy/GAIL Reward" and signal.value_name == "Policy/GAIL Value Estimate"
    assert set(signal.stats_name_to_update_name) == {
        "Losses/GAIL Loss",
        "Policy/GAIL Policy Estimate",
        "Policy/GAIL Expert Estimate",
    }
    # 3 episodes of 6 decisions: 17 consecutive pairs.
    assert len(signal.demonstration_buffer["actions"]) == 17
    rng = np.random.default_rng(0)
    expert_like = infos(
        rng, 4, 1.0 + 0.1 * rng.normal(size=(4, 4)), np.array([[0, 0], [1, 1], [2, 0], [0, 1]], float)
    )
    unlike = infos(rng, 4, rng.normal(size=(4, 4)) - 1.0, np.array([[2, 1]] * 4, float))
    before = signal.evaluate(*expert_like)
    np.testing.assert_array_equal(before.scaled_reward, np.zeros(4))
    for _ in range(60):
        stats = signal.update(policy_batch(rng, 16), 16)
    # Measured after 60 steps: GAIL 0.88 (expert) vs 0.16 (policy); VAIL, whose noisy code slows
    # the discriminator down on purpose, 0.65 vs 0.44.
    margin = 0.1 if use_vail else 0.5
    assert stats["gail_expert_estimate"] > stats["gail_policy_estimate"] + margin
    if use_vail:
        assert stats["gail_beta"] != 1.0
    good, bad = signal.evaluate(*expert_like), signal.evaluate(*unlike)
    np.testing.assert_allclose(good.scaled_reward, 0.5 * good.unscaled_reward, rtol=1e-6)
    assert good.unscaled_reward.min() > bad.unscaled_reward.max()


def test_demo_folder_mismatch_and_missing_path(ppo_params, tmp_path):
    folder = tmp_path / "demos"
    folder.mkdir()
    write_demo(folder / "a.demo", episodes=2)
    write_demo(folder / "b.demo", episodes=1, seed=1)
    policy = PPOPolicy(1, BRAIN, {**gail_params(ppo_params, str(folder)), "normalize": True}, True)
    assert len(policy.reward_signals["gail"].demonstration_buffer["actions"]) == 17
    # The discriminator reads vector observations normalized with the policy's running statistics.
    assert policy.reward_signals["gail"].normalizer is policy.model.normalizer is not None
    wrong = write_demo(tmp_path / "wrong.demo", brain_name="Other", actions=(2,), continuous=True)
    with pytest.raises(
        UnityTrainerException, match=r"not compatible .* its vector_action_space_size is \[2\] in the demo"
    ):
        PPOPolicy(1, BRAIN, gail_params(ppo_params, wrong), True)
    with pytest.raises(
        UnityTrainerException, match="The demonstration file or directory .*missing.demo does not exist"
    ):
        PPOPolicy(1, BRAIN, gail_params(ppo_params, str(tmp_path / "missing.demo")), True)
    with pytest.raises(
        UnityTrainerException, match="The hyper-parameter demo_path could not be found for GAILRewardSignal"
    ):
        RewardSignalSettings.from_dict("gail", {"strength": 1.0, "gamma": 0.9})


@pytest.mark.slow
def test_checkpoint_holds_the_discriminator_and_export_holds_the_policy_only(ppo_params, tmp_path):
    demo = write_demo(tmp_path / "expert.demo")
    policy = PPOPolicy(1, BRAIN, gail_params(ppo_params, demo, use_vail=True), True)
    signal = policy.reward_signals["gail"]
    signal.update(policy_batch(np.random.default_rng(0), 8), 8)
    policy.save_model(4)
    restored = PPOPolicy(1, BRAIN, policy.settings, True, load=True)
    for a, b in zip(signal.model.variables, restored.reward_signals["gail"].model.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    policy.export_model()
    plain = PPOPolicy(1, BRAIN, ppo_params(model_path=str(tmp_path / "plain" / "Brain")), True)
    plain.export_model()
    assert Path(policy.model_path + ".nn").read_bytes() == Path(plain.model_path + ".nn").read_bytes()
    names = list(inference.read_nn(policy.model_path + ".nn").tensors())
    assert names and not [name for name in names if "gail" in name.lower()]


def test_shipped_gail_config(tmp_path, monkeypatch):
    """config/gail_config.yaml as in 0.9: read in a folder that has its demonstrations."""
    from mlagents.trainers.trainer_util import load_trainer_config

    repo = Path(__file__).resolve().parents[4]
    (tmp_path / "demos").mkdir()
    for name in ("ExpertPyramid", "ExpertCrawlerSta", "ExpertPush", "ExpertHallway"):
        (tmp_path / "demos" / f"{name}.demo").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    config = load_trainer_config(str(repo / "config" / "gail_config.yaml"))

    def signals(brain):
        return {name: s.to_dict() for name, s in config.for_brain(brain).reward_signals.items()}

    def gail(strength, demo):
        return {
            "strength": strength,
            "gamma": 0.99,
            "demo_path": demo,
            "encoding_size": 128,
            "learning_rate": 3e-4,
            "use_actions": False,
            "use_vail": False,
        }

    extrinsic = {"strength": 1.0, "gamma": 0.99}
    pyramids = config.for_brain("PyramidsLearning")
    assert signals("PyramidsLearning") == {
        "extrinsic": extrinsic,
        "curiosity": {"strength": 0.02, "gamma": 0.99, "encoding_size": 256, "learning_rate": 3e-4},
        "gail": gail(0.01, "demos/ExpertPyramid.demo"),
    }
    assert pyramids.pretraining is not None
    assert (pyramids.pretraining.demo_path, pyramids.pretraining.strength, pyramids.pretraining.steps) == (
        "./demos/ExpertPyramid.demo",
        0.5,
        10000,
    )
    assert (pyramids.batch_size, pyramids.buffer_size, pyramids.hidden_units, pyramids.time_horizon) == (
        128,
        2048,
        512,
        128,
    )
    assert signals("CrawlerStaticLearning") == {"gail": gail(1.0, "demos/ExpertCrawlerSta.demo")}
    assert config.for_brain("CrawlerStaticLearning").normalize
    assert signals("PushBlockLearning") == {"gail": gail(1.0, "demos/ExpertPush.demo")}
    hallway = config.for_brain("HallwayLearning")
    assert hallway.use_recurrent and hallway.memory_size == 256
    assert signals("HallwayLearning") == {
        "extrinsic": extrinsic,
        "gail": gail(0.1, "demos/ExpertHallway.demo"),
    }
    default = config.for_brain("SomeOtherBrain")
    assert (default.batch_size, default.vis_encode_type, list(default.reward_signals)) == (
        1024,
        "simple",
        ["extrinsic"],
    )


def test_visual_observations_are_encoded_and_trained():
    """Cameras go through the discriminator's own encoder (one per camera, shared by expert and
    policy steps), whose weights the loss trains."""
    rng = np.random.default_rng(6)
    model = GAILModel(SignalShapes(3, [(36, 36, 3)], [2], True), 8, True, False, Initializer(1), seed=2)
    assert model.input_width == 8 + 3 + 2 + 1

    def batch(prefix):
        return {
            f"{prefix}vector_observation": rng.normal(size=(4, 3)).astype(np.float32),
            f"{prefix}visual_observation_0": rng.uniform(size=(4, 36, 36, 3)).astype(np.float32),
            f"{prefix}actions": rng.uniform(-1, 1, (4, 2)).astype(np.float32),
            f"{prefix}done": np.zeros(4, np.float32),
        }

    with tf.GradientTape() as tape:
        loss = model.losses(batch(""), batch("expert_"), None)["loss"]
    encoder = model.visual_encoders[0].trainable_variables
    gradients = tape.gradient(loss, encoder)
    assert encoder and all(g is not None and np.abs(g.numpy()).sum() > 0 for g in gradients)
    assert model.reward(batch(""), None).shape == (4,)
