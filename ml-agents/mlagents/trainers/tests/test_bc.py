"""The behavioural-cloning network, policy and trainers (offline and online) on hand-built buffers
and BrainInfos, against numpy."""

from pathlib import Path

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.bc.models import BehavioralCloningModel
from mlagents.trainers.bc.online_trainer import OnlineBCTrainer
from mlagents.trainers.bc.policy import BCPolicy
from mlagents.trainers.bc.trainer import CLONING_LOSS_TAG, BCTrainer
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import OfflineBCSettings, OnlineBCSettings, TrainerConfig
from mlagents.trainers.trainer_util import initialize_trainers


def make_brain(name="Brain", vec=3, actions=(3,), space="discrete"):
    return BrainParameters(name, vec, 1, [], list(actions), [""] * len(actions), space)


def bc_params(tmp_path: Path, **overrides):
    params = {
        "trainer": "online_bc",
        "brain_to_imitate": "Teacher",
        "batch_size": 4,
        "batches_per_epoch": 3,
        "hidden_units": 8,
        "learning_rate": 1e-2,
        "max_steps": 1000,
        "memory_size": 8,
        "num_layers": 1,
        "sequence_length": 2,
        "summary_freq": 100,
        "time_horizon": 3,
        "use_recurrent": False,
        "summary_path": str(tmp_path / "summaries" / "run_Brain"),
        "model_path": str(tmp_path / "models" / "run" / "Brain"),
    }
    params.update(overrides)
    return params


def make_info(agents, obs, prev=None, dones=None, rewards=None, texts=None):
    n = len(agents)
    return BrainInfo(
        visual_observation=[],
        vector_observation=np.asarray(obs, dtype=np.float64).reshape(n, -1),
        text_observations=[""] * n if texts is None else list(texts),
        memory=np.zeros((0, 0)),
        reward=[0.0] * n if rewards is None else list(rewards),
        agents=list(agents),
        local_done=[False] * n if dones is None else list(dones),
        vector_action=np.zeros((n, 1)) if prev is None else np.asarray(prev, dtype=np.float64),
        text_action=[[] for _ in range(n)],
        max_reached=[False] * n,
        action_mask=np.ones((n, 3)),
    )


def swish(x):
    return x / (1 + np.exp(-x))


def numpy_hidden(model, obs):
    hidden = obs
    for layer in model.vector_encoders[0].export_weights():
        hidden = swish(hidden @ layer.kernel + layer.bias)
    return hidden


# ---------------------------------------------------------------------- the network


def test_discrete_loss_is_the_summed_cross_entropy():
    model = BehavioralCloningModel(make_brain(actions=(3, 2)), h_size=6, n_layers=1, seed=1)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(5, 3)).astype(np.float32)
    teacher = np.stack([rng.integers(0, 3, 5), rng.integers(0, 2, 5)], axis=1).astype(np.int32)
    batch = {
        "vector_observation": obs,
        "action_masks": np.ones((5, 5), np.float32),
        "teacher_action": teacher,
    }
    hidden = numpy_hidden(model, obs)
    expected = 0.0
    for k, branch in enumerate(model.policy_branches):
        logits = hidden @ branch.kernel.numpy()
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        expected -= np.log(probs[np.arange(5), teacher[:, k]] + 1e-10).sum()
    assert float(model.loss(batch, 1)) == pytest.approx(expected, rel=1e-5)
    out = model.forward(batch)
    assert out["action_probs"].shape == (5, 5)
    np.testing.assert_allclose(out["action_probs"].numpy()[:, :3].sum(axis=1), 1.0, rtol=1e-6)


def test_continuous_action_is_clipped_and_loss_is_the_summed_squared_error():
    model = BehavioralCloningModel(make_brain(actions=(2,), space="continuous"), h_size=6, n_layers=2, seed=2)
    # Large weights: some actions are clipped.
    model.pre_action.kernel.assign(model.pre_action.kernel * 400.0)
    rng = np.random.default_rng(1)
    obs = rng.normal(size=(7, 3)).astype(np.float32)
    teacher = rng.normal(scale=2.0, size=(7, 2)).astype(np.float32)
    hidden = numpy_hidden(model, obs)
    action = np.clip(hidden @ model.pre_action.kernel.numpy(), -1, 1)
    assert np.abs(action).max() == 1.0
    out = model.forward({"vector_observation": obs})
    np.testing.assert_allclose(out["action"].numpy(), action, rtol=1e-5, atol=1e-6)
    loss = model.loss({"vector_observation": obs, "teacher_action": teacher}, 1)
    assert float(loss) == pytest.approx(((np.clip(teacher, -1, 1) - action) ** 2).sum(), rel=1e-5)


def test_recurrent_continuous_is_refused_in_one_line():
    with pytest.raises(UnityTrainerException, match="use_recurrent is not supported .* continuous"):
        BehavioralCloningModel(make_brain(actions=(2,), space="continuous"), m_size=8, use_recurrent=True)


# ---------------------------------------------------------------------- the policy


@pytest.mark.parametrize("space, actions", [("discrete", (3,)), ("continuous", (2,))])
def test_policy_learns_a_mapping_and_exports(tmp_path, space, actions):
    brain = make_brain(actions=actions, space=space)
    policy = BCPolicy(0, brain, OnlineBCSettings.from_dict(bc_params(tmp_path), _source()), load=False)
    rng = np.random.default_rng(3)
    obs = rng.normal(size=(64, 3)).astype(np.float32)
    if space == "discrete":
        target = (obs[:, 0] > 0).astype(np.float32)[:, None] * 2  # action 0 or 2
    else:
        target = np.clip(obs[:, :2] * 0.5, -1, 1)
    losses = [policy.update({"vector_obs": obs, "actions": target}, 64)["policy_loss"] for _ in range(150)]
    assert losses[-1] < 0.2 * losses[0]
    info = make_info([f"a{i}" for i in range(64)], obs)
    decided = policy.get_action(info).action
    if space == "discrete":
        assert (decided[:, 0] == target[:, 0]).mean() > 0.9
    else:
        assert np.abs(decided - target).mean() < 0.1
    assert policy.tracing_counts() == {"inference": 1, "update": 1}
    policy.save_model(5)
    policy.export_model()
    assert Path(policy.model_path + ".nn").stat().st_size > 0


def test_exported_continuous_head_computes_the_clipped_action(tmp_path):
    """The .nn graph of a continuous BC model is PPO's Gaussian head; its constants make it compute
    clip(pre_action, -1, 1) whatever the noise."""
    model = BehavioralCloningModel(make_brain(actions=(2,), space="continuous"), h_size=6, n_layers=1, seed=4)
    model.pre_action.kernel.assign(model.pre_action.kernel * 300.0)
    weights = model.export_weights()
    rng = np.random.default_rng(5)
    obs = rng.normal(size=(9, 3)).astype(np.float32)
    hidden = numpy_hidden(model, obs).astype(np.float32)
    mu = hidden @ weights.mu.kernel + weights.mu.bias
    sigma = np.sqrt(np.exp(weights.log_sigma_squared.astype(np.float32)))
    exported = np.clip(mu + sigma * rng.normal(size=mu.shape).astype(np.float32), -3, 3) / 3
    np.testing.assert_allclose(
        exported, model.forward({"vector_observation": obs})["action"].numpy(), atol=1e-6
    )


def _source():
    from mlagents.trainers.settings import ConfigSource

    return ConfigSource("Brain", trainer_class="mlagents.trainers.bc.online_trainer.OnlineBCTrainer")


# ---------------------------------------------------------------------- settings and wiring


def test_settings_and_trainer_classes(tmp_path):
    config = TrainerConfig.from_dict(
        {
            "default": {k: v for k, v in bc_params(tmp_path).items() if "path" not in k},
            "Offline": {"trainer": "offline_bc", "demo_path": "demos/x.demo"},
        }
    )
    assert isinstance(config.default, OnlineBCSettings)
    assert isinstance(config.for_brain("Offline"), OfflineBCSettings)
    assert config.for_brain("Offline").demo_path == "demos/x.demo"
    trainers = initialize_trainers(
        config, {"Brain": make_brain()}, str(tmp_path), "run", str(tmp_path), 5, True, False, 0
    )
    assert type(trainers["Brain"]) is OnlineBCTrainer
    with pytest.raises(UnityTrainerException, match="hyper-parameter demo_path could not be found"):
        TrainerConfig.from_dict({"default": dict(bc_params(tmp_path), trainer="offline_bc")})
    with pytest.raises(UnityTrainerException, match="hyper-parameter brain_to_imitate could not be found"):
        TrainerConfig.from_dict(
            {"default": {k: v for k, v in bc_params(tmp_path).items() if k != "brain_to_imitate"}}
        )


# ---------------------------------------------------------------------- trainers


def test_online_trainer_collects_the_teachers_steps_and_learns(tmp_path):
    trainer = OnlineBCTrainer(make_brain(), bc_params(tmp_path), True, False, 0, "run")
    trainer.check_environment_brains({"Brain", "Teacher"})
    with pytest.raises(UnityTrainerException, match="brain_to_imitate Teacher of brain Brain is not a brain"):
        trainer.check_environment_brains({"Brain"})
    rng = np.random.default_rng(0)
    student_obs = rng.normal(size=(1, 3))

    def teacher_obs(t):
        return np.array([[t, 0.0, 1.0], [-t, 1.0, 0.0]])

    previous = None
    taught = 0
    for t in range(12):
        done = [t % 5 == 4, False]
        teacher = make_info(["t1", "t2"], teacher_obs(t), prev=[[t % 3], [(t + 1) % 3]], dones=done)
        info = {"Brain": make_info(["s"], student_obs, rewards=[1.0], dones=[t == 6]), "Teacher": teacher}
        if previous is not None:
            trainer.add_experiences(previous, info, {"action": np.zeros((1, 1))})
            trainer.process_experiences(previous, info)
            taught += 2 - int(previous["Teacher"].local_done[0])
        previous = info
    update_buffer = trainer.demonstration_buffer.update_buffer
    # Agent t2 moved to the update buffer each time it held more than time_horizon (3) steps;
    # agent t1 at its episode ends (t = 4, 9).
    assert 0 < len(update_buffer["actions"]) <= taught
    first = update_buffer["vector_obs"][0]
    assert first[2] == 1.0  # t1's observation at t = 0
    # The action stored with the observation of step t is the one reported at t + 1.
    assert update_buffer["actions"][0][0] == 1.0
    assert trainer.stats["Environment/Cumulative Reward"] == [6.0]
    assert trainer.is_ready_update()
    trainer.update_policy()
    assert len(trainer.stats[CLONING_LOSS_TAG]) == 1


def test_update_takes_at_most_batches_per_epoch_mini_batches(tmp_path):
    trainer = BCTrainer(
        make_brain(), OnlineBCSettings.from_dict(bc_params(tmp_path), _source()), True, False, 0, "run"
    )
    calls = []
    trainer.policy.update = lambda batch, n: calls.append(len(batch["actions"])) or {"policy_loss": 1.0}
    buffer = trainer.demonstration_buffer.update_buffer
    for i in range(9):
        buffer["vector_obs"].append(np.full(3, i, dtype=np.float32))
        buffer["actions"].append(np.array([i % 3], dtype=np.float32))
    trainer.update_policy()
    assert calls == [4, 4]  # 9 steps: 2 batches of n_sequences = 4 (fewer than batches_per_epoch 3)
    for i in range(9, 40):
        buffer["vector_obs"].append(np.full(3, i, dtype=np.float32))
        buffer["actions"].append(np.array([i % 3], dtype=np.float32))
    calls.clear()
    trainer.update_policy()
    assert calls == [4, 4, 4]
    assert trainer.stats[CLONING_LOSS_TAG] == [1.0, 1.0]
