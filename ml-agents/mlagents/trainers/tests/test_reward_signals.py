"""Reward signals: the factory's errors and the extrinsic signal."""

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.components.reward_signals import RewardSignal, RewardSignalResult
from mlagents.trainers.components.reward_signals.extrinsic.signal import ExtrinsicRewardSignal
from mlagents.trainers.components.reward_signals.reward_signal_factory import create_reward_signal
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.settings import REWARD_SIGNAL_KINDS


def info(rewards):
    n = len(rewards)
    return BrainInfo(
        [],
        np.zeros((n, 2)),
        [""] * n,
        reward=list(rewards),
        agents=[str(i) for i in range(n)],
        local_done=[False] * n,
        max_reached=[False] * n,
    )


def test_extrinsic_signal_scales_the_environment_reward():
    signal = create_reward_signal(None, None, "extrinsic", {"strength": 0.5, "gamma": "0.9"})
    assert isinstance(signal, ExtrinsicRewardSignal)
    assert signal.gamma == 0.9 and signal.strength == 0.5
    assert signal.use_terminal_states
    assert signal.stat_name == "Policy/Extrinsic Reward"
    assert signal.value_name == "Policy/Extrinsic Value Estimate"
    result = signal.evaluate(info([1.0, -2.0, 0.0]), info([4.0, 2.0, -1.0]))
    assert isinstance(result, RewardSignalResult)
    np.testing.assert_allclose(result.scaled_reward, [2.0, 1.0, -0.5])
    np.testing.assert_allclose(result.unscaled_reward, [4.0, 2.0, -1.0])
    empty = signal.evaluate(info([]), info([]))
    assert empty.scaled_reward.shape == (0,) and empty.unscaled_reward.shape == (0,)
    assert signal.prepare_update(None, {}, 1) == {} and signal.update({}, 1) == {}


@pytest.mark.parametrize(
    "name, config, missing",
    [
        ("curiosity", {"strength": 0.1, "gamma": 0.9}, "encoding_size"),
        ("gail", {"strength": 0.1, "demo_path": "x.demo"}, "gamma"),
        ("gail", {"strength": 0.1, "gamma": 0.9}, "demo_path"),
    ],
)
def test_check_config_of_the_signal_classes(name, config, missing):
    from mlagents.trainers.components.reward_signals.reward_signal_factory import NAME_TO_CLASS

    signal_class = NAME_TO_CLASS[name]
    with pytest.raises(
        UnityTrainerException,
        match=f"The hyper-parameter {missing} could not be found for {signal_class.__name__}.",
    ):
        signal_class.check_config(config)


def test_unknown_signal():
    with pytest.raises(UnityTrainerException, match="^Unknown reward signal type novelty$"):
        create_reward_signal(None, None, "novelty", {"strength": 1.0, "gamma": 0.9})


def test_every_signal_of_the_0_9_toolkit_is_known():
    """NAME_TO_CLASS, the 0.9 table, is the registry of reward signals (its names and classes are
    checked in test_settings)."""
    from mlagents.trainers.components.reward_signals.reward_signal_factory import NAME_TO_CLASS

    assert list(NAME_TO_CLASS) == list(REWARD_SIGNAL_KINDS)
    for name, kind in REWARD_SIGNAL_KINDS.items():
        assert NAME_TO_CLASS[name] is kind.load_class(), name


@pytest.mark.parametrize(
    "config, key", [({"gamma": 0.99}, "strength"), ({"strength": 1.0}, "gamma"), (None, "strength")]
)
def test_missing_hyper_parameter(config, key):
    with pytest.raises(
        UnityTrainerException,
        match=f"The hyper-parameter {key} could not be found for ExtrinsicRewardSignal.",
    ):
        create_reward_signal(None, None, "extrinsic", config)


def test_unexpected_hyper_parameter():
    with pytest.raises(UnityTrainerException, match="^Unknown parameters given for reward signal extrinsic$"):
        create_reward_signal(None, None, "extrinsic", {"strength": 1.0, "gamma": 0.99, "encoding_size": 3})


def test_base_signal_gives_zero_rewards():
    class NothingRewardSignal(RewardSignal):
        pass

    signal = NothingRewardSignal(None, None, 2.0, 0.5)
    assert signal.stat_name == "Policy/Nothing Reward"
    result = signal.evaluate(info([1.0]), info([3.0, 4.0]))
    np.testing.assert_array_equal(result.scaled_reward, [0, 0])


def test_policy_builds_its_signals_and_reports_factory_errors(tmp_path):
    brain = BrainParameters("B", 2, 1, [], [2], ["", ""], "discrete")
    params = {
        "batch_size": 4,
        "beta": 1e-3,
        "buffer_size": 8,
        "epsilon": 0.2,
        "hidden_units": 4,
        "lambd": 0.9,
        "learning_rate": 1e-3,
        "max_steps": 100,
        "memory_size": 4,
        "normalize": False,
        "num_epoch": 1,
        "num_layers": 1,
        "time_horizon": 4,
        "sequence_length": 2,
        "summary_freq": 10,
        "use_recurrent": False,
        "model_path": str(tmp_path / "m"),
        "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.5}},
    }
    policy = PPOPolicy(0, brain, params, True)
    assert list(policy.reward_signals) == ["extrinsic"]
    assert list(policy.model.value_heads) == ["extrinsic"]
    params["reward_signals"] = {"extrinsic": {"strength": 1.0}}
    with pytest.raises(UnityTrainerException, match="The hyper-parameter gamma could not be found"):
        PPOPolicy(0, brain, params, True)
