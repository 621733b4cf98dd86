"""Trainer configuration: reading YAML (numbers as numbers), merging sections, creating trainers."""

import os

import pytest

from mlagents.envs.brain import BrainParameters
from mlagents.envs.exception import UnityEnvironmentException
from mlagents.trainers.settings import merged_section
from mlagents.trainers.trainer_util import initialize_trainers, load_config

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
SHIPPED_CONFIG = os.path.join(REPO, "config", "trainer_config.yaml")


def write(tmp_path, text, name="config.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def basic_brain(name="BasicLearning"):
    return BrainParameters(name, 20, 1, [], [3], [""], "discrete")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("5.0e4", 50000.0),
        ("1e6", 1000000.0),
        ("2e5", 200000.0),
        ("1e-3", 0.001),
        ("3.0e-4", 0.0003),
        ("-1.5E+2", -150.0),
        ("0.2", 0.2),
        ("1024", 1024),
        ("simple", "simple"),
        ("'5.0e4'", "5.0e4"),  # quoted: the user asked for a string
    ],
)
def test_load_config_reads_scientific_notation_as_numbers(tmp_path, text, expected):
    config = load_config(write(tmp_path, f"default:\n  value: {text}\n"))
    value = config["default"]["value"]
    assert value == expected
    assert type(value) is type(expected)


def test_load_config_does_not_change_yaml_globally(tmp_path):
    import yaml

    assert yaml.safe_load("x: 5.0e4")["x"] == "5.0e4"


def test_load_config_missing_file(tmp_path):
    path = str(tmp_path / "nope.yaml")
    with pytest.raises(UnityEnvironmentException, match=f"Parameter file could not be found at {path}."):
        load_config(path)


def test_load_config_not_utf8(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"default:\n  x: \xff\xfe\n")
    with pytest.raises(
        UnityEnvironmentException, match="There was an error decoding Trainer Config from this path"
    ):
        load_config(str(path))


def test_load_config_malformed_yaml_names_the_line(tmp_path):
    path = write(tmp_path, "default:\n  trainer: ppo\n  batch_size: [1, 2\n")
    with pytest.raises(UnityEnvironmentException, match=r"is not valid YAML \(line \d+, column \d+\)"):
        load_config(path)


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just a string\n"])
def test_load_config_must_be_a_mapping(tmp_path, text):
    with pytest.raises(UnityEnvironmentException, match="must hold a mapping"):
        load_config(write(tmp_path, text))


def test_merge_is_shallow_and_brain_section_wins():
    config = {
        "default": {"trainer": "ppo", "batch_size": 1, "reward_signals": {"extrinsic": {"gamma": 0.99}}},
        "B": {"batch_size": 2, "reward_signals": {"curiosity": {"strength": 0.1}}},
    }
    params = merged_section(config, "B")
    assert params == {"trainer": "ppo", "batch_size": 2, "reward_signals": {"curiosity": {"strength": 0.1}}}
    assert config["default"]["batch_size"] == 1  # the default section is not modified


def test_brain_without_section_uses_default():
    assert merged_section({"default": {"a": 1}, "Other": {"a": 2}}, "B") == {"a": 1}


def test_brain_section_without_default_section():
    assert merged_section({"B": {"a": 2}}, "B") == {"a": 2}


def test_section_alias_is_followed():
    config = {"default": {"a": 1, "b": 1}, "B": "C", "C": "D", "D": {"b": 3}}
    assert merged_section(config, "B") == {"a": 1, "b": 3}


@pytest.mark.parametrize(
    "config, message",
    [
        ({"Other": {"a": 1}}, "no section for the brain B and no 'default' section"),
        ({"default": {"a": 1}, "B": "C"}, "refers to the section C, which does not exist"),
        ({"default": {"a": 1}, "B": "C", "C": "B"}, "B -> C -> B .* in a loop"),
        ({"default": {"a": 1}, "B": None}, "The section B of the trainer config is empty"),
        ({"default": [1, 2]}, "'default' section of the trainer config must be a mapping"),
    ],
)
def test_section_errors(config, message):
    with pytest.raises(UnityEnvironmentException, match=message):
        merged_section(config, "B")


@pytest.mark.parametrize(
    "config, message",
    [
        (
            {"trainer": "dqn"},
            "The trainer config contains an unknown trainer type for brain BasicLearning: 'dqn'",
        ),
        ({"batch_size": 3}, "does not say which trainer to use for brain BasicLearning"),
    ],
    ids=["unknown-trainer-type", "missing-trainer-key"],
)
def test_trainer_type_errors(tmp_path, config, message):
    with pytest.raises(UnityEnvironmentException, match=message):
        initialize_trainers(
            {"default": config},
            {"BasicLearning": basic_brain()},
            str(tmp_path),
            "run",
            str(tmp_path / "models"),
            5,
            True,
            False,
            0,
        )


# Effective values of every brain of the shipped config (those of the v0.9 trainer_config.yaml), in the
# column order below; reward_signals as {signal: (strength, gamma[, encoding_size])}.
COLUMNS = [
    "batch_size",
    "beta",
    "buffer_size",
    "hidden_units",
    "lambd",
    "learning_rate",
    "max_steps",
    "memory_size",
    "normalize",
    "num_epoch",
    "num_layers",
    "sequence_length",
    "summary_freq",
    "time_horizon",
    "use_recurrent",
]
EXT = {"extrinsic": (1.0, 0.99)}
EXT_995 = {"extrinsic": (1.0, 0.995)}
EXT_09 = {"extrinsic": (1.0, 0.9)}
WALL_JUMP = (128, 5e-3, 2048, 256, 0.95, 3e-4, 1e6, 256, False, 3, 2, 64, 2000, 128, False)
CRAWLER = (2024, 5e-3, 20240, 512, 0.95, 3e-4, 1e6, 256, True, 3, 3, 64, 3000, 1000, False)
VALUES = {
    "BananaLearning": (1024, 5e-3, 10240, 128, 0.95, 3e-4, 1e5, 256, False, 3, 2, 64, 1000, 64, False),
    "BouncerLearning": (1024, 5e-3, 10240, 64, 0.95, 3e-4, 5e5, 256, True, 3, 2, 64, 1000, 64, False),
    "PushBlockLearning": (128, 1e-2, 2048, 256, 0.95, 3e-4, 5e4, 256, False, 3, 2, 64, 2000, 64, False),
    "SmallWallJumpLearning": WALL_JUMP,
    "BigWallJumpLearning": WALL_JUMP,
    "StrikerLearning": (128, 1e-2, 2000, 256, 0.95, 1e-3, 5e5, 256, False, 3, 2, 64, 2000, 128, False),
    "GoalieLearning": (320, 1e-2, 2000, 256, 0.95, 1e-3, 5e5, 256, False, 3, 2, 64, 2000, 128, False),
    "PyramidsLearning": (128, 1e-2, 2048, 512, 0.95, 3e-4, 5e5, 256, False, 3, 2, 64, 2000, 128, False),
    "VisualPyramidsLearning": (64, 1e-2, 2024, 256, 0.95, 3e-4, 5e5, 256, False, 3, 1, 64, 1000, 128, False),
    "3DBallLearning": (64, 0.001, 12000, 128, 0.99, 3e-4, 5e4, 256, True, 3, 2, 64, 1000, 1000, False),
    "3DBallHardLearning": (1200, 0.001, 12000, 128, 0.95, 3e-4, 5e5, 256, True, 3, 2, 64, 1000, 1000, False),
    "TennisLearning": (1024, 5e-3, 10240, 128, 0.95, 3e-4, 2e5, 256, True, 3, 2, 64, 1000, 64, False),
    "CrawlerStaticLearning": CRAWLER,
    "CrawlerDynamicLearning": CRAWLER,
    "WalkerLearning": (2048, 5e-3, 20480, 512, 0.95, 3e-4, 2e6, 256, True, 3, 3, 64, 3000, 1000, False),
    "ReacherLearning": (2024, 5e-3, 20240, 128, 0.95, 3e-4, 1e6, 256, True, 3, 2, 64, 3000, 1000, False),
    "HallwayLearning": (128, 1e-2, 1024, 128, 0.95, 3e-4, 5e5, 256, False, 3, 2, 64, 1000, 64, True),
    "VisualHallwayLearning": (64, 1e-2, 1024, 128, 0.95, 3e-4, 5e5, 256, False, 3, 1, 64, 1000, 64, True),
    "VisualPushBlockLearning": (64, 1e-2, 1024, 128, 0.95, 3e-4, 5e5, 256, False, 3, 1, 32, 1000, 64, True),
    "GridWorldLearning": (32, 5e-3, 256, 256, 0.95, 3e-4, 5e5, 256, False, 3, 1, 64, 2000, 5, False),
    "BasicLearning": (32, 5e-3, 256, 20, 0.95, 3e-4, 5e5, 256, False, 3, 1, 64, 2000, 3, False),
}
#: the brains whose reward signals are not EXT
SIGNALS = {
    "PyramidsLearning": {"extrinsic": (1.0, 0.99), "curiosity": (0.02, 0.99, 256)},
    "VisualPyramidsLearning": {"extrinsic": (1.0, 0.99), "curiosity": (0.01, 0.99, 256)},
    "3DBallHardLearning": EXT_995,
    "CrawlerStaticLearning": EXT_995,
    "CrawlerDynamicLearning": EXT_995,
    "WalkerLearning": EXT_995,
    "ReacherLearning": EXT_995,
    "GridWorldLearning": EXT_09,
    "BasicLearning": EXT_09,
}
EXPECTED = {brain: (values, SIGNALS.get(brain, EXT)) for brain, values in VALUES.items()}


def test_shipped_config_has_exactly_the_original_sections():
    config = load_config(SHIPPED_CONFIG)
    assert set(config) == {"default"} | set(EXPECTED)


@pytest.mark.parametrize("brain", sorted(EXPECTED))
def test_shipped_config_effective_values(brain):
    params = merged_section(load_config(SHIPPED_CONFIG), brain)
    values, signals = EXPECTED[brain]
    assert params["trainer"] == "ppo"
    assert params["epsilon"] == 0.2
    assert params["vis_encode_type"] == "simple"
    for column, expected in zip(COLUMNS, values):
        assert params[column] == pytest.approx(expected), column
        assert not isinstance(params[column], str), column
    assert set(params["reward_signals"]) == set(signals)
    for name, expected in signals.items():
        signal = params["reward_signals"][name]
        assert (signal["strength"], signal["gamma"]) == expected[:2]
        if len(expected) == 3:
            assert signal["encoding_size"] == expected[2]


def test_shipped_default_section():
    default = load_config(SHIPPED_CONFIG)["default"]
    assert default == {
        "trainer": "ppo",
        "batch_size": 1024,
        "beta": 5.0e-3,
        "buffer_size": 10240,
        "epsilon": 0.2,
        "hidden_units": 128,
        "lambd": 0.95,
        "learning_rate": 3.0e-4,
        "max_steps": 5.0e4,
        "memory_size": 256,
        "normalize": False,
        "num_epoch": 3,
        "num_layers": 2,
        "time_horizon": 64,
        "sequence_length": 64,
        "summary_freq": 1000,
        "use_recurrent": False,
        "vis_encode_type": "simple",
        "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.99}},
    }


def test_initialize_trainers_from_the_checked_config(tmp_path, ppo_params):
    from mlagents.trainers.settings import PPOSettings, TrainerConfig

    section = ppo_params()
    for key in ("summary_path", "model_path", "keep_checkpoints"):  # initialize_trainers sets these
        del section[key]
    config = TrainerConfig.from_dict({"default": section}, "config.yaml")
    trainers = initialize_trainers(
        config,
        {"BasicLearning": basic_brain()},
        str(tmp_path / "s"),
        "run",
        str(tmp_path / "m"),
        3,
        True,
        False,
        0,
    )
    trainer = trainers["BasicLearning"]
    assert isinstance(trainer.settings, PPOSettings)
    assert trainer.settings.summary_path == f"{tmp_path / 's'}/run_BasicLearning"
    assert trainer.settings.model_path == f"{tmp_path / 'm'}/BasicLearning"
    assert trainer.settings.keep_checkpoints == 3
    assert trainer.policy.settings is trainer.settings
    assert trainer.get_max_steps == 50000.0
    assert config.default.summary_path is None  # the checked config itself is not changed
    assert trainer.parameters["max_steps"] == 50000.0 and trainer.parameters["keep_checkpoints"] == 3
