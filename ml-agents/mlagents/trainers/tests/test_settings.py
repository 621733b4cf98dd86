"""Typed settings: the command line (RunOptions) and the trainer configuration (TrainerConfig and
the settings of PPO, reward signals and pretraining), parsed and checked in one place."""

import dataclasses
import os

import pytest

from mlagents.envs.exception import UnityEnvironmentException
from mlagents.trainers import learn
from mlagents.trainers.exception import UnityPolicyException, UnityTrainerException
from mlagents.trainers.settings import (
    REWARD_SIGNAL_KINDS,
    TRAINER_KINDS,
    CommandLineError,
    ConfigSource,
    PPOSettings,
    PretrainingSettings,
    RewardSignalSettings,
    RunOptions,
    TrainerConfig,
    TrainerSettings,
    TrainerSettingsError,
)
from mlagents.trainers.tests.learn_helpers import BASIC_LEARNING
from mlagents.trainers.trainer_util import load_trainer_config

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
SHIPPED_CONFIG = os.path.join(REPO, "config", "trainer_config.yaml")

# A complete PPO section: the BasicLearning settings of the shipped config.
PPO = BASIC_LEARNING


def source(section="Brain", path="config.yaml"):
    return ConfigSource(section, path)


# ---------------------------------------------------------------------- the command line


def test_run_options_from_the_default_command_line():
    run = RunOptions.from_docopt(learn.parse_command_line(["config.yaml"]))
    assert run == RunOptions(trainer_config_path="config.yaml")
    assert (run.env_path, run.curriculum_folder, run.sampler_file_path, run.docker_target_name) == (None,) * 4
    assert (run.keep_checkpoints, run.lesson, run.num_runs, run.save_freq) == (5, 0, 1, 50000)
    assert (run.seed, run.base_port, run.num_envs, run.run_id) == (-1, 5005, 1, "ppo")
    assert not any([run.load_model, run.slow, run.train_model, run.no_graphics, run.debug, run.multi_gpu])
    assert run.fast_simulation
    assert run.model_path(0) == "./models/ppo-0"
    assert run.summaries_dir() == "./summaries"
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.num_envs = 2


def test_run_options_every_flag():
    argv = [
        "c.yaml",
        "--env=Env",
        "--curriculum=cur",
        "--sampler=s.yaml",
        "--keep-checkpoints=2",
        "--lesson=3",
        "--load",
        "--run-id=r",
        "--num-runs=2",
        "--save-freq=10",
        "--seed=7",
        "--slow",
        "--train",
        "--base-port=6000",
        "--num-envs=3",
        "--docker-target-name=vol",
        "--no-graphics",
        "--debug",
        "--multi-gpu",
    ]
    run = learn.validate_options(learn.parse_command_line(argv))
    assert run == RunOptions(
        trainer_config_path="c.yaml",
        env_path="Env",
        curriculum_folder="cur",
        sampler_file_path="s.yaml",
        keep_checkpoints=2,
        lesson=3,
        load_model=True,
        run_id="r",
        num_runs=2,
        save_freq=10,
        seed=7,
        slow=True,
        train_model=True,
        base_port=6000,
        num_envs=3,
        docker_target_name="vol",
        no_graphics=True,
        debug=True,
        multi_gpu=True,
    )
    assert not run.fast_simulation
    # Inside the docker volume: the config, curricula, models and summaries (not the sampler file).
    assert run.trainer_config_file() == "/vol/c.yaml"
    assert run.curriculum_dir() == "/vol/cur"
    assert run.model_path(1) == "/vol/models/r-1"
    assert run.summaries_dir() == "/vol/summaries"
    assert run.sampler_file_path == "s.yaml"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--lesson=-1"], "--lesson must be at least 0, not -1."),
        (["--seed=x"], "--seed must be a whole number, not 'x'."),
        (["--keep-checkpoints=0"], "--keep-checkpoints must be at least 1, not 0."),
        (["--num-envs=2"], "--num-envs greater than 1 needs an environment executable"),
    ],
)
def test_run_options_errors(argv, message):
    with pytest.raises(CommandLineError, match=message):
        RunOptions.from_docopt(learn.parse_command_line(["c.yaml", *argv]))


# ---------------------------------------------------------------------- one brain's settings


def test_ppo_settings_are_typed():
    settings = PPOSettings.from_dict(
        dict(PPO, max_steps="5.0e4", batch_size="64", buffer_size=1024.0, normalize="true", foo=1),
        source(),
    )
    assert settings.max_steps == 50000.0 and isinstance(settings.max_steps, float)
    assert settings.batch_size == 64 and isinstance(settings.batch_size, int)
    assert settings.buffer_size == 1024 and isinstance(settings.buffer_size, int)
    assert settings.normalize is True
    assert settings.vis_encode_type == "simple"
    assert settings.keep_checkpoints == 5 and settings.load is False
    assert settings.summary_path is None and settings.pretraining is None
    assert settings.extra == {"foo": 1}
    signal = settings.reward_signals["extrinsic"]
    assert (signal.name, signal.strength, signal.gamma) == ("extrinsic", 1.0, 0.9)
    assert PPOSettings.from_dict(settings.to_dict(), source()) == settings
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.batch_size = 3


@pytest.mark.parametrize(
    "change, error, message",
    [
        (
            {"batch_size": "many"},
            TrainerSettingsError,
            r"The hyper-parameter batch_size of brain Brain must be a whole number of at least 1, not 'many' "
            r"\(trainer config config.yaml\)\.$",
        ),
        ({"batch_size": True}, TrainerSettingsError, "batch_size of brain Brain must be a whole number"),
        (
            {"num_epoch": 0},
            TrainerSettingsError,
            "num_epoch of brain Brain must be a whole number of at least 1",
        ),
        ({"hidden_units": 12.5}, TrainerSettingsError, "hidden_units .* not 12.5"),
        ({"lambd": 1.5}, TrainerSettingsError, "lambd of brain Brain must be a number from 0 to 1, not 1.5"),
        (
            {"learning_rate": None},
            TrainerSettingsError,
            "learning_rate .* must be a number of at least 0, not None",
        ),
        ({"normalize": "maybe"}, TrainerSettingsError, "normalize of brain Brain must be true or false"),
        ({"vis_encode_type": "fancy"}, ValueError, "one of simple, nature_cnn, resnet, not 'fancy'"),
        (
            {"lambd": None, "beta": None},
            UnityTrainerException,
            "must be a number",
        ),
        ({"reward_signals": {}}, UnityTrainerException, "No reward signals were defined"),
        ({"reward_signals": None}, UnityTrainerException, "No reward signals were defined"),
        ({"reward_signals": [1]}, UnityTrainerException, "reward_signals of brain Brain must be a mapping"),
        (
            {"reward_signals": {"extrinsic": {"strength": 1.0, "gamma": "high"}}},
            UnityTrainerException,
            "gamma of brain Brain must be a number from 0 to 1, not 'high'",
        ),
        (
            {"reward_signals": {"gail": {"strength": 1.0, "gamma": 0.9}}},
            UnityTrainerException,
            r"The hyper-parameter demo_path could not be found for GAILRewardSignal \(reward_signals of brain Brain",
        ),
        (
            {"use_recurrent": True, "memory_size": 0},
            UnityPolicyException,
            "The memory size for brain Brain is 0 even though the trainer uses recurrent.",
        ),
        (
            {"pretraining": {"strength": 0.5, "steps": 10}},
            UnityTrainerException,
            "pre-training hyper-parameter demo_path",
        ),
    ],
)
def test_ppo_settings_errors_name_key_brain_and_file(change, error, message):
    with pytest.raises(error, match=message):
        PPOSettings.from_dict(dict(PPO, **change), source())


def test_missing_key_names_the_trainer_class_brain_and_file():
    params = dict(PPO)
    del params["time_horizon"]
    with pytest.raises(UnityTrainerException) as info:
        PPOSettings.from_dict(params, source())
    assert str(info.value) == (
        "The hyper-parameter time_horizon could not be found for the "
        "<class 'mlagents.trainers.ppo.trainer.PPOTrainer'> trainer of brain Brain (trainer config config.yaml)."
    )


def test_pretraining_settings():
    section = {"demo_path": "demos/Expert.demo", "strength": 0.5, "steps": "1e4"}
    settings = PPOSettings.from_dict(dict(PPO, pretraining=section), source())
    assert settings.pretraining == PretrainingSettings(
        demo_path="demos/Expert.demo", strength=0.5, steps=10000
    )
    assert settings.pretraining.batch_size is None and settings.pretraining.samples_per_update == 0


def test_reward_signal_settings_without_a_brain_keep_the_original_messages():
    with pytest.raises(UnityTrainerException, match="^Unknown reward signal type novelty$"):
        RewardSignalSettings.from_dict("novelty", {})
    with pytest.raises(UnityTrainerException, match="^Unknown parameters given for reward signal extrinsic$"):
        RewardSignalSettings.from_dict("extrinsic", {"strength": 1, "gamma": 0.5, "x": 1})


def test_run_paths_are_set_on_a_copy():
    settings = PPOSettings.from_dict(PPO, source())
    run = settings.with_run_paths("s/run_B", "m/B", 2)
    assert (run.summary_path, run.model_path, run.keep_checkpoints) == ("s/run_B", "m/B", 2)
    assert settings.summary_path is None


def test_coerce_keeps_a_settings_object_and_parses_a_dict():
    settings = PPOSettings.from_dict(PPO, source())
    assert PPOSettings.coerce(settings, source()) is settings
    assert TrainerSettings.coerce(settings, source()) is settings
    assert PPOSettings.coerce(dict(PPO), source()) == settings
    with pytest.raises(TypeError):
        PPOSettings.coerce(TrainerSettings.from_dict({"max_steps": 1, "summary_freq": 1}, source()), source())


# ---------------------------------------------------------------------- the whole file


def test_shipped_config_is_read_into_typed_settings():
    config = load_trainer_config(SHIPPED_CONFIG)
    assert config.path == SHIPPED_CONFIG
    assert isinstance(config.default, PPOSettings)
    assert config.default.max_steps == 50000.0
    assert config.for_brain("3DBallLearning").batch_size == 64
    assert config.for_brain("NotInTheFile") is config.default
    walker = config.for_brain("WalkerLearning")
    assert (walker.max_steps, walker.num_layers, walker.reward_signals["extrinsic"].gamma) == (2e6, 3, 0.995)


def test_the_settings_name_the_demonstrations_they_read_without_opening_them():
    """Whether a demonstration exists (and fits its brain) is checked before launch for the brains
    that are trained (test_prelaunch), not when the configuration is read: a section may name
    demonstrations of examples one does not run."""
    config = load_trainer_config(SHIPPED_CONFIG)
    assert list(config.for_brain("PyramidsLearning").reward_signals) == ["extrinsic", "curiosity"]
    assert config.for_brain("PyramidsLearning").demonstrations() == []
    gail = {"strength": 1.0, "gamma": 0.9, "demo_path": "none.demo"}
    pretraining = {"demo_path": "pre.demo", "strength": 0.5, "steps": 10}
    config = TrainerConfig.from_dict(
        {"default": PPO, "G": {"reward_signals": {"gail": gail}, "pretraining": pretraining}}
    )
    assert config.for_brain("G").demonstrations() == [
        ("pretraining demo_path", "pre.demo"),
        ("gail demo_path", "none.demo"),
    ]


@pytest.mark.parametrize(
    "registry, class_names",
    [
        (
            TRAINER_KINDS,
            {
                "ppo": "PPOTrainer",
                "sac": "SACTrainer",
                "offline_bc": "OfflineBCTrainer",
                "online_bc": "OnlineBCTrainer",
            },
        ),
        (
            REWARD_SIGNAL_KINDS,
            {
                "extrinsic": "ExtrinsicRewardSignal",
                "curiosity": "CuriosityRewardSignal",
                "gail": "GAILRewardSignal",
            },
        ),
    ],
    ids=["trainers", "reward-signals"],
)
def test_one_registry_of_trainer_kinds_and_one_of_reward_signals(registry, class_names):
    """The kinds in their order, each with the name of its class, which it loads."""
    assert list(registry) == list(class_names)
    for name, kind in registry.items():
        assert kind.class_name == class_names[name]
        assert kind.load_class().__name__ == kind.class_name, name


@pytest.mark.parametrize(
    "trainer_type, key", [("offline_bc", "demo_path"), ("online_bc", "brain_to_imitate")]
)
def test_behavioural_cloning_settings(trainer_type, key):
    section = {k: PPO[k] for k in ("batch_size", "hidden_units", "learning_rate", "max_steps", "memory_size")}
    section.update(
        {
            k: PPO[k]
            for k in ("num_layers", "sequence_length", "summary_freq", "use_recurrent", "time_horizon")
        }
    )
    section.update(trainer=trainer_type, batches_per_epoch=5, **{key: "X"})
    settings = TrainerConfig.from_dict({"default": section}, "c.yaml").default
    assert settings is not None and getattr(settings, key) == "X" and settings.batches_per_epoch == 5
    assert type(settings) is TRAINER_KINDS[trainer_type].settings_class
    del section[key]
    with pytest.raises(UnityTrainerException) as info:
        TrainerConfig.from_dict({"default": section}, "c.yaml")
    assert str(info.value).startswith(f"The hyper-parameter {key} could not be found for the <class ")


def test_every_section_is_checked():
    with pytest.raises(TrainerSettingsError, match="hidden_units of brain Other must be a whole number"):
        TrainerConfig.from_dict({"default": PPO, "Other": {"hidden_units": "wide"}}, "c.yaml")
    with pytest.raises(UnityEnvironmentException, match="unknown trainer type for brain Other: 'dqn'"):
        TrainerConfig.from_dict({"default": PPO, "Other": {"trainer": "dqn"}}, "c.yaml")
    with pytest.raises(UnityEnvironmentException, match="refers to the section Nowhere"):
        TrainerConfig.from_dict({"default": PPO, "Other": "Nowhere"}, "c.yaml")


def test_incomplete_default_section_completed_by_the_brain_sections():
    default = dict(PPO)
    del default["batch_size"]
    config = TrainerConfig.from_dict({"default": default, "A": {"batch_size": 8}}, "c.yaml")
    assert config.default is None
    assert config.for_brain("A").batch_size == 8
    with pytest.raises(UnityTrainerException, match="batch_size could not be found .* of brain B"):
        config.for_brain("B")
    # Alone, the default section must be complete.
    with pytest.raises(
        UnityTrainerException, match="batch_size could not be found .* of the default section"
    ):
        TrainerConfig.from_dict({"default": default}, "c.yaml")


def test_brain_without_section_nor_default():
    config = TrainerConfig.from_dict({"A": PPO}, "c.yaml")
    with pytest.raises(
        UnityEnvironmentException, match="no section for the brain B and no 'default' section"
    ):
        config.for_brain("B")
