"""The Soft Actor-Critic configuration: config/sac_trainer_config.yaml (every section a valid
``SACSettings`` of a brain of the example builds), the errors of a malformed SAC section (in
Python, and through ``mlagents-learn`` before any build starts), ``reward_signal_num_update``, and
the memory a replay buffer takes per stored step."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.example_envs import describe_build, example_names
from mlagents.trainers.sac.policy import SACPolicy
from mlagents.trainers.sac.trainer import SACTrainer
from mlagents.trainers.settings import (
    REWARD_SIGNAL_NUM_UPDATE,
    MissingHyperParameterError,
    SACSettings,
    TrainerConfig,
    TrainerSettingsError,
)
from mlagents.trainers.tests.learn_helpers import (
    BUILDS,
    assert_stopped_before_any_build,
    leftovers,
    python_that_notes,
    run_learn,
)
from mlagents.trainers.tests.policy_helpers import make_brain
from mlagents.trainers.tests.tiny_envs import sac_section as tiny_sac_section
from mlagents.trainers.trainer_util import load_trainer_config

REPO = Path(__file__).resolve().parents[4]
SAC_CONFIG = REPO / "config" / "sac_trainer_config.yaml"
SAC_TRAINER = "<class 'mlagents.trainers.sac.trainer.SACTrainer'>"


def sac_raw() -> dict[str, Any]:
    return yaml.safe_load(SAC_CONFIG.read_text())


def example_brains() -> set[str]:
    """The brains of every example build, as each would show them to Python."""
    brains: set[str] = set()
    for name in example_names():
        description = describe_build(str(BUILDS / name))
        assert description is not None, name
        brains.update(description.brains)
    return brains


def test_every_section_of_the_shipped_sac_config_is_sac_settings_of_its_brain() -> None:
    config = load_trainer_config(str(SAC_CONFIG))
    assert isinstance(config.default, SACSettings)
    assert set(config.sections) == set(sac_raw()) - {"default"}
    for brain in config.sections:
        settings = config.for_brain(brain)
        assert isinstance(settings, SACSettings) and settings.trainer == "sac", brain
        # Every key is one the SAC trainer reads: a misspelt key would land here.
        assert settings.extra == {}, brain
        assert settings.reward_signal_updates == settings.num_update == 1, brain
    ball = config.for_brain("3DBallLearning")
    assert (ball.batch_size, ball.buffer_size, ball.hidden_units, ball.init_entcoef) == (64, 12000, 64, 0.5)
    assert (ball.max_steps, ball.time_horizon, ball.tau, ball.train_interval) == (5.0e5, 1000, 0.005, 1)
    crawler = config.for_brain("CrawlerStaticLearning")
    assert (crawler.train_interval, crawler.buffer_init_steps, crawler.num_layers) == (3, 2000, 3)
    assert crawler.reward_signals["extrinsic"].gamma == 0.99
    assert config.for_brain("WalkerLearning").reward_signals["extrinsic"].gamma == 0.995
    # A brain without a section trains with the default one.
    default = config.for_brain("NoSuchBrain")
    assert (default.max_steps, default.buffer_size, default.init_entcoef, default.tau) == (
        5.0e4,
        50000,
        1.0,
        0.005,
    )


def test_the_sac_config_names_brains_of_the_example_builds_and_shipped_demonstrations() -> None:
    raw = sac_raw()
    assert set(raw) - {"default"} <= example_brains()
    demos = {
        signal["demo_path"]
        for section in raw.values()
        for name, signal in section.get("reward_signals", {}).items()
        if name == "gail"
    }
    assert demos == {"demos/ExpertPyramid.demo"}
    for demo in demos:
        assert (REPO / demo).is_file(), demo


def sac_section(**changes: Any) -> dict[str, Any]:
    """The shipped default SAC section with ``changes`` (a None value removes the key)."""
    section = {**sac_raw()["default"], **changes}
    return {key: value for key, value in section.items() if value is not None}


def test_a_missing_sac_key_names_the_key_and_the_brain() -> None:
    raw = {"default": sac_section(tau=None), "3DBallLearning": {"batch_size": 64}}
    with pytest.raises(MissingHyperParameterError) as error:
        TrainerConfig.from_dict(raw, "sac.yaml")
    assert str(error.value) == (
        f"The hyper-parameter tau could not be found for the {SAC_TRAINER} trainer of brain "
        "3DBallLearning (trainer config sac.yaml)."
    )


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("tau", 2, "a number from 0 to 1"),
        ("buffer_size", 0, "a whole number of at least 1"),
        ("init_entcoef", -1, "a number of at least 0"),
        ("num_update", 0.5, "a whole number of at least 1"),
        ("train_interval", 0, "a whole number of at least 1"),
        ("buffer_init_steps", -10, "a whole number of at least 0"),
    ],
)
def test_a_wrong_sac_value_is_a_settings_error(key: str, value: Any, expected: str) -> None:
    raw = {"default": sac_section(), "3DBallLearning": {key: value}}
    with pytest.raises(TrainerSettingsError) as error:
        TrainerConfig.from_dict(raw, "sac.yaml")
    assert str(error.value) == (
        f"The hyper-parameter {key} of brain 3DBallLearning must be {expected}, not {value!r} "
        "(trainer config sac.yaml)."
    )


def test_reward_signal_num_update_is_no_signal_and_round_trips() -> None:
    signals = {"extrinsic": {"strength": 1.0, "gamma": 0.99}, REWARD_SIGNAL_NUM_UPDATE: 4}
    config = TrainerConfig.from_dict({"default": sac_section(num_update=2, reward_signals=signals)})
    settings = config.for_brain("3DBallLearning")
    assert isinstance(settings, SACSettings)
    assert list(settings.reward_signals) == ["extrinsic"]
    assert (settings.num_update, settings.reward_signal_num_update, settings.reward_signal_updates) == (
        2,
        4,
        4,
    )
    written = settings.to_dict()
    assert written["reward_signals"][REWARD_SIGNAL_NUM_UPDATE] == 4
    again = TrainerConfig.from_dict({"default": written}).for_brain("3DBallLearning")
    assert again == settings
    # Without it the signals learn as often as the policy, and to_dict writes nothing.
    plain = TrainerConfig.from_dict({"default": sac_section(num_update=3)}).for_brain("3DBallLearning")
    assert isinstance(plain, SACSettings)
    assert plain.reward_signal_num_update is None and plain.reward_signal_updates == 3
    assert REWARD_SIGNAL_NUM_UPDATE not in plain.to_dict()["reward_signals"]
    with pytest.raises(TrainerSettingsError, match="reward_signal_num_update of the default section must be"):
        TrainerConfig.from_dict(
            {"default": sac_section(reward_signals={**signals, REWARD_SIGNAL_NUM_UPDATE: 0})}
        )


def test_a_sac_policy_from_a_dict_without_max_steps_names_the_sac_trainer(tmp_path: Path) -> None:
    params = tiny_sac_section(model_path=str(tmp_path / "model"), summary_path=str(tmp_path / "summaries"))
    del params["max_steps"]
    brain = make_brain("3DBallLearning", 8, [2], "continuous")
    with pytest.raises(MissingHyperParameterError) as error:
        SACPolicy(0, brain, params, is_training=True)
    assert str(error.value).startswith(
        f"The hyper-parameter max_steps could not be found for the {SAC_TRAINER} trainer of brain 3DBallLearning"
    ), str(error.value)


BASIC = BUILDS / "Basic.x86_64"


@pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing")
@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"tau": None},
            f"The hyper-parameter tau could not be found for the {SAC_TRAINER} trainer of brain BasicLearning "
            "(trainer config config.yaml).",
        ),
        (
            {"init_entcoef": -1},
            "The hyper-parameter init_entcoef of brain BasicLearning must be a number of at least 0, not -1 "
            "(trainer config config.yaml).",
        ),
    ],
    ids=["missing-tau", "negative-init-entcoef"],
)
def test_mlagents_learn_stops_at_a_malformed_sac_section_before_any_build_starts(
    tmp_path: Path, free_port_range: Any, monkeypatch: pytest.MonkeyPatch, changes: dict, message: str
) -> None:
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    python, marker = python_that_notes(tmp_path)
    monkeypatch.setenv("MLAGENTS_PYTHON", str(python))
    raw = sac_raw()
    basic = {**raw["default"], **raw["BasicLearning"], **changes}
    config = {"BasicLearning": {key: value for key, value in basic.items() if value is not None}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    port = free_port_range(2)
    status, out, err = run_learn(
        tmp_path, "config.yaml", f"--env={BASIC}", "--num-envs=2", f"--base-port={port}", "--train"
    )
    assert_stopped_before_any_build(status, err, message, marker)
    assert leftovers(range(port, port + 2)) == []


# ------------------------------------------------------------------ replay buffer memory


def step_info(rng: np.random.Generator, brain: BrainParameters) -> BrainInfo:
    """One agent's step: a vector scene's float64 observations, or a camera's 8-bit PNG levels."""
    continuous = brain.vector_action_space_type == "continuous"
    sizes = brain.vector_action_space_size
    return BrainInfo(
        visual_observation=[[rng.integers(0, 256, (84, 84, 3)) / 255.0] for _ in brain.camera_resolutions],
        vector_observation=rng.normal(size=(1, brain.vector_observation_space_size)),
        text_observations=[""],
        memory=np.zeros((0, 0)),
        reward=[float(rng.normal())],
        agents=["a"],
        local_done=[False],
        vector_action=rng.normal(size=(1, sizes[0] if continuous else len(sizes))),
        text_action=[[]],
        max_reached=[False],
        action_mask=np.ones((1, 0 if continuous else sum(sizes))),
    )


def replay_bytes_per_step(
    brain: BrainParameters, steps: int, folder: Path, chunk: int = 500
) -> tuple[float, float]:
    """What the SAC trainer's replay buffer holds per stored step once one agent took ``steps``
    steps (decided by the trainer's policy) in trajectories of ``chunk`` steps (``time_horizon``),
    all through the trainer's own collection (``add_experiences``, ``process_experiences``): the
    buffer's bytes per step (:meth:`ReplayBuffer.bytes_per_step`), and the traced Python
    allocations (numpy's included) held afterwards per step."""
    params = tiny_sac_section(
        time_horizon=chunk, buffer_size=steps, batch_size=steps + 1, max_steps=10 * steps
    )
    params.update(model_path=str(folder / "model"), summary_path=str(folder / "summaries"))
    trainer = SACTrainer(brain, 1, params, True, False, 0, "run")
    rng = np.random.default_rng(0)
    name = brain.brain_name
    current = step_info(rng, brain)
    trainer.policy.evaluate(current)  # the first decision builds what every later one reuses
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(steps):
            following = step_info(rng, brain)
            outputs = trainer.policy.evaluate(current)
            trainer.add_experiences({name: current}, {name: following}, outputs)
            trainer.process_experiences({name: current}, {name: following})
            current = following
        del current, following, outputs
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    replay = trainer.replay_buffer
    assert len(replay) == steps
    return replay.bytes_per_step(), held / steps


@pytest.mark.slow
def test_replay_buffer_bytes_per_stored_step(tmp_path: Path) -> None:
    """What a replay buffer of ``buffer_size`` steps costs, filled by the SAC trainer.

    3DBall (8 float observations, 2 continuous actions): 89 bytes a step (vector_obs and
    next_vector_in 2 x 32, actions 8, prev_action 8, masks 4, environment_rewards 4, done 1), and
    nothing much beside the columns. A 84x84 colour camera scene (discrete actions 3, 3, 3, 2 as
    VisualFoodCollector): one 21168-byte uint8 frame a step, ``visual_obs`` and ``next_visual_obs``
    sharing the frames of a trajectory (one more frame per trajectory of 300 steps). Beside the
    buffer the trainer holds about 75 (3DBall) to 125 (camera) bytes a step until the next summary:
    the statistics of every decision (entropy, value estimates) as Python floats."""
    ball = make_brain("3DBallLearning", 8, [2], "continuous")
    row, held = replay_bytes_per_step(ball, 2000, tmp_path / "ball")
    assert row == 89.0, row
    assert row <= held < row + 150, held
    food = make_brain("VisualBananaLearning", 0, [3, 3, 3, 2], "discrete", [(84, 84, False)])
    row, held = replay_bytes_per_step(food, 600, tmp_path / "food", chunk=300)
    assert 84 * 84 * 3 < row < 84 * 84 * 3 + 1000, row
    assert row <= held < row + 150, held
