"""Reading an example build's brains from the example catalogue without starting it, and the
checks run from them before launch: the imitation settings and the reward signals' (through the
real ``mlagents-learn``, asserting that no build was started)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from mlagents.trainers.build_brains import example_build_brains
from mlagents.trainers.demo_loader import DemonstrationNotFoundError
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.prelaunch import check_before_launch, check_demo_paths
from mlagents.trainers.settings import TrainerConfig
from mlagents.trainers.tests.learn_helpers import (
    BASIC_LEARNING,
    assert_stopped_before_any_build,
    leftovers,
    python_that_notes,
    run_learn,
)

REPO = Path(__file__).resolve().parents[4]
BUILDS = REPO / "example-envs" / "builds"
DEMOS = REPO / "demos"
OTHER_BRAIN_DEMO = DEMOS / "Expert3DBall.demo"


def shipped(name: str, brain: str, **changes: Any) -> TrainerConfig:
    """config/<name> with ``changes`` in ``brain``'s section."""
    raw = yaml.safe_load((REPO / "config" / name).read_text())
    raw[brain] = {**raw.get(brain, {}), **changes}
    return TrainerConfig.from_dict(raw)


def test_an_example_build_brains_come_from_the_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    for path in (BUILDS / "Basic.x86_64", BUILDS / "Basic"):
        brains = example_build_brains(str(path))
        assert brains is not None and list(brains) == ["BasicLearning"]
        parameters, external = brains["BasicLearning"]
        assert external and parameters.vector_action_space_type == "discrete"
        assert parameters.vector_action_space_size == [3]
    # The build's brain options count: a heuristic teacher is seen, not trained.
    monkeypatch.setenv("MLAGENTS_BUILD_ARGS", "--teacher BasicTeacher=BasicLearning")
    brains = example_build_brains(str(BUILDS / "Basic.x86_64"))
    assert brains is not None
    assert {name: external for name, (_, external) in brains.items()} == {
        "BasicLearning": True,
        "BasicTeacher": False,
    }


@pytest.mark.skipif(not OTHER_BRAIN_DEMO.exists(), reason="the shipped demonstrations are missing")
def test_other_builds_are_left_to_the_check_after_start(tmp_path: Path) -> None:
    wrapper = tmp_path / "Basic.x86_64"
    wrapper.write_text(f'#!/bin/sh\nexec "{BUILDS / "Basic.x86_64"}" "$@"\n')
    wrapper.chmod(0o755)
    assert example_build_brains(str(wrapper)) is None
    assert example_build_brains(None) is None
    assert example_build_brains(str(tmp_path / "Missing")) is None
    config = shipped("offline_bc_config.yaml", "BasicLearning", demo_path=str(OTHER_BRAIN_DEMO))
    assert check_before_launch(config, str(wrapper)) is False


@pytest.mark.slow
@pytest.mark.skipif(not OTHER_BRAIN_DEMO.exists(), reason="the shipped demonstrations are missing")
def test_pretraining_demo_of_another_brain_is_refused_before_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    pretraining = {"demo_path": str(OTHER_BRAIN_DEMO), "strength": 0.5, "steps": 100}
    config = shipped("trainer_config.yaml", "BasicLearning", pretraining=pretraining)
    with pytest.raises(UnityTrainerException, match="vector_action_space_type is 'continuous'"):
        check_before_launch(config, str(BUILDS / "Basic.x86_64"))
    good = shipped("offline_bc_config.yaml", "BasicLearning", demo_path=str(DEMOS / "ExpertBasic.demo"))
    assert check_before_launch(good, str(BUILDS / "Basic.x86_64")) is True


def test_without_the_brains_the_default_section_demonstrations_are_read(tmp_path: Path) -> None:
    """A default section that is the only one is every brain's: its demonstrations are read before
    any build starts; with brain sections (the default one may be a template) they wait for the
    brains (the trainers)."""
    gail = {"strength": 1.0, "gamma": 0.99, "demo_path": str(tmp_path / "none.demo")}
    brain_section = {"reward_signals": {"gail": gail}}
    config = TrainerConfig.from_dict({"default": BASIC_LEARNING, "Other": brain_section}, "c.yaml")
    check_demo_paths(config)
    assert check_before_launch(config, None) is False
    default_gail = dict(BASIC_LEARNING, reward_signals={"gail": gail})
    config = TrainerConfig.from_dict({"default": default_gail}, "c.yaml")
    message = f"The demonstration file or directory {gail['demo_path']} does not exist. (the gail demo_path "
    with pytest.raises(DemonstrationNotFoundError) as error:
        check_before_launch(config, None)
    assert str(error.value) == message + "of the default section, trainer config c.yaml)"


# ------------------------------------------------------------------ reward signals, through the CLI

BASIC = BUILDS / "Basic.x86_64"
needs_examples = pytest.mark.skipif(
    not (BASIC.exists() and OTHER_BRAIN_DEMO.exists()),
    reason="the example builds or shipped demos are missing",
)


def signal_config(folder: Path, signals: dict[str, Any], **sections: Any) -> Path:
    """A trainer config in ``folder``: BasicLearning's section with ``signals`` beside the extrinsic
    signal, and ``sections`` (brain name -> section) for other brains."""
    section = dict(BASIC_LEARNING, reward_signals={"extrinsic": {"strength": 1.0, "gamma": 0.9}, **signals})
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump({"default": section, **sections}, sort_keys=False))
    return path


def learn_basic(folder: Path, port: int, timeout: float = 120) -> tuple[int, str, str]:
    """mlagents-learn on ``folder``/config.yaml with two environments of the Basic build."""
    return run_learn(
        folder,
        "config.yaml",
        f"--env={BASIC}",
        "--num-envs=2",
        f"--base-port={port}",
        "--train",
        "--seed=1",
        timeout=timeout,
    )


GAIL = {"strength": 1.0, "gamma": 0.99, "encoding_size": 16}


@needs_examples
@pytest.mark.parametrize(
    "signals, message",
    [
        (
            {"gail": GAIL},
            "The hyper-parameter demo_path could not be found for GAILRewardSignal (reward_signals of the "
            "default section (trainer config config.yaml)).",
        ),
        (
            {"gail": dict(GAIL, demo_path="demos/Nowhere.demo")},
            "The demonstration file or directory demos/Nowhere.demo does not exist. (the gail demo_path of "
            "brain BasicLearning, trainer config config.yaml)",
        ),
        (
            {"gail": dict(GAIL, demo_path=str(OTHER_BRAIN_DEMO))},
            "The provided demonstration is not compatible with the brain being used for performance "
            f"evaluation: {OTHER_BRAIN_DEMO} was recorded by brain 3DBallLearning and its "
            "vector_observation_space_size is 8 in the demonstration but 20 in the brain; ",
        ),
        (
            {"curiosity": {"strength": 0.01, "gamma": 0.99}},
            "The hyper-parameter encoding_size could not be found for CuriosityRewardSignal",
        ),
    ],
    ids=["gail-without-demo-path", "gail-demo-path-not-found", "gail-demo-of-another-brain", "curiosity-key"],
)
def test_signal_errors_come_before_the_build_starts(
    tmp_path: Path, free_port_range: Any, monkeypatch: pytest.MonkeyPatch, signals: dict, message: str
) -> None:
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    python, marker = python_that_notes(tmp_path)
    monkeypatch.setenv("MLAGENTS_PYTHON", str(python))
    signal_config(tmp_path, signals)
    port = free_port_range(2)
    status, out, err = learn_basic(tmp_path, port)
    assert_stopped_before_any_build(status, err, message, marker)
    assert "Academy" not in out + err and leftovers(range(port, port + 2)) == []


@pytest.mark.slow
@needs_examples
def test_a_missing_demonstration_of_a_brain_the_build_lacks_does_not_stop_the_run(
    tmp_path: Path, free_port_range: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As with config/gail_config.yaml, whose sections name demonstrations of brains Basic lacks."""
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    missing = {"reward_signals": {"gail": dict(GAIL, demo_path="demos/Nowhere.demo")}}
    signal_config(tmp_path, {}, CrawlerStaticLearning=missing, PyramidsLearning=missing)
    raw = yaml.safe_load((tmp_path / "config.yaml").read_text())
    raw["default"].update(max_steps=40, summary_freq=20)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    port = free_port_range(2)
    status, out, err = learn_basic(tmp_path, port, timeout=240)
    assert status == 0, err[-3000:]
    assert "BasicLearning: Step: 40." in out + err, (out + err)[-3000:]
    assert os.path.getsize(tmp_path / "models" / "ppo-0" / "BasicLearning.nn") > 0


def test_the_shipped_gail_config_is_checked_for_the_brains_of_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """config/gail_config.yaml before launch: Pyramids' pretraining and gail demonstrations and
    CrawlerStatic's gail demonstration fit their brains; Basic trains with the default section; the
    same config with CrawlerStatic's demonstration renamed stops before that build starts."""
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    if not (DEMOS / "ExpertPyramid.demo").exists():
        pytest.skip("the shipped demonstrations are missing")
    monkeypatch.chdir(REPO)
    raw = yaml.safe_load((REPO / "config" / "gail_config.yaml").read_text())
    config = TrainerConfig.from_dict(raw)
    assert check_before_launch(config, str(BUILDS / "Pyramids.x86_64")) is True
    assert check_before_launch(config, str(BASIC)) is True
    assert check_before_launch(config, str(BUILDS / "CrawlerStatic.x86_64")) is True
    assert check_before_launch(config, None) is False
    gail = raw["CrawlerStaticLearning"]["reward_signals"]["gail"]
    assert gail["demo_path"] == "demos/ExpertCrawlerSta.demo"
    gail["demo_path"] = "demos/ExpertCrawlerStatic.demo"
    with pytest.raises(
        DemonstrationNotFoundError, match="demos/ExpertCrawlerStatic.demo does not exist. .the gail demo_path"
    ):
        check_before_launch(TrainerConfig.from_dict(raw), str(BUILDS / "CrawlerStatic.x86_64"))
