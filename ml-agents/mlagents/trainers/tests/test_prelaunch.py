"""Reading an example build's brains from the example catalogue without starting it, and the
imitation checks run from them before launch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mlagents.trainers.components.bc.prelaunch import check_imitation_before_launch, example_build_brains
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import TrainerConfig

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
    assert check_imitation_before_launch(config, str(wrapper)) is False


@pytest.mark.skipif(not OTHER_BRAIN_DEMO.exists(), reason="the shipped demonstrations are missing")
def test_pretraining_demo_of_another_brain_is_refused_before_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLAGENTS_BUILD_ARGS", raising=False)
    pretraining = {"demo_path": str(OTHER_BRAIN_DEMO), "strength": 0.5, "steps": 100}
    config = shipped("trainer_config.yaml", "BasicLearning", pretraining=pretraining)
    with pytest.raises(UnityTrainerException, match="vector_action_space_type is 'continuous'"):
        check_imitation_before_launch(config, str(BUILDS / "Basic.x86_64"))
    good = shipped("offline_bc_config.yaml", "BasicLearning", demo_path=str(DEMOS / "ExpertBasic.demo"))
    assert check_imitation_before_launch(good, str(BUILDS / "Basic.x86_64")) is True
