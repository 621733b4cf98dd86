"""Curricula: file validation, lesson increments, the meta-curriculum over a folder."""

import json
import logging

import pytest

from mlagents.trainers.curriculum import Curriculum
from mlagents.trainers.exception import CurriculumError, MetaCurriculumError
from mlagents.trainers.meta_curriculum import MetaCurriculum

RESET_PARAMETERS = {"param1": 1.0, "param2": 1.0, "param3": 1.0}
TEST_CURRICULUM = {
    "measure": "reward",
    "thresholds": [10, 20, 50],
    "min_lesson_length": 3,
    "signal_smoothing": True,
    "parameters": {
        "param1": [0.7, 0.5, 0.3, 0.1],
        "param2": [100, 50, 20, 15],
        "param3": [0.2, 0.3, 0.7, 0.9],
    },
}


def write_curriculum(folder, name, data):
    path = folder / name
    path.write_text(json.dumps(data))
    return str(path)


def test_brain_name_lesson_and_config(tmp_path):
    curriculum = Curriculum(write_curriculum(tmp_path, "TestBrain.json", TEST_CURRICULUM), RESET_PARAMETERS)
    assert curriculum.brain_name == "TestBrain"
    assert curriculum.measure == "reward"
    assert curriculum.min_lesson_length == 3
    assert curriculum.get_config() == {"param1": 0.7, "param2": 100, "param3": 0.2}
    curriculum.lesson_num = 10
    assert curriculum.lesson_num == 3
    curriculum.lesson_num = -1
    assert curriculum.lesson_num == 0
    assert curriculum.get_config(2) == {"param1": 0.3, "param2": 20, "param3": 0.7}


def test_increment_with_smoothing(tmp_path, caplog):
    curriculum = Curriculum(write_curriculum(tmp_path, "TestBrain.json", TEST_CURRICULUM), RESET_PARAMETERS)
    assert not curriculum.increment_lesson(0)  # zero counts as no measure
    assert not curriculum.increment_lesson(float("nan"))
    assert not curriculum.increment_lesson(12)  # smoothed: 0.75 * 12 = 9 <= 10
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        assert curriculum.increment_lesson(12)  # 0.25 * 9 + 9 = 11.25 > 10
    assert curriculum.lesson_num == 1
    assert (
        "TestBrain lesson changed. Now in lesson 1: param1 -> 0.5, param2 -> 50, param3 -> 0.3" in caplog.text
    )
    assert curriculum.increment_lesson(1000)  # one lesson per attempt
    assert curriculum.lesson_num == 2


@pytest.mark.parametrize(
    "change, message",
    [
        ({"measure": None}, "does not contain a measure field"),
        (
            {"parameters": {"unknown": [1, 2, 3, 4]}},
            "The parameter unknown in Curriculum .* is not present in the Environment",
        ),
        (
            {"parameters": {"param1": [1, 2]}},
            "The parameter param1 in Curriculum .* must have 4 values but 2 were found",
        ),
    ],
)
def test_invalid_curricula(tmp_path, change, message):
    data = dict(TEST_CURRICULUM)
    for key, value in change.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    with pytest.raises(CurriculumError, match=message):
        Curriculum(write_curriculum(tmp_path, "TestBrain.json", data), RESET_PARAMETERS)


def test_unreadable_curricula(tmp_path):
    with pytest.raises(CurriculumError, match="could not be found"):
        Curriculum(str(tmp_path / "Missing.json"), RESET_PARAMETERS)
    (tmp_path / "Broken.json").write_text("{not json")
    with pytest.raises(CurriculumError, match="There was an error decoding"):
        Curriculum(str(tmp_path / "Broken.json"), RESET_PARAMETERS)


def test_meta_curriculum_folder(tmp_path, caplog):
    write_curriculum(tmp_path, "BrainA.json", TEST_CURRICULUM)
    other = dict(
        TEST_CURRICULUM, parameters={"param1": [1, 2, 3, 4]}, measure="progress", min_lesson_length=0
    )
    with caplog.at_level(logging.WARNING, logger="mlagents.trainers"):
        meta = MetaCurriculum(str(tmp_path), RESET_PARAMETERS)
    assert "Two or more curriculums will attempt to change the same reset parameter" not in caplog.text
    write_curriculum(tmp_path, "BrainB.json", other)
    with caplog.at_level(logging.WARNING, logger="mlagents.trainers"):
        meta = MetaCurriculum(str(tmp_path), RESET_PARAMETERS)
    assert "Two or more curriculums will attempt to change the same reset parameter" in caplog.text
    assert set(meta.brains_to_curriculums) == {"BrainA", "BrainB"}
    meta.set_all_curriculums_to_lesson_num(1)
    assert meta.lesson_nums == {"BrainA": 1, "BrainB": 1}
    assert meta.get_config() == {"param1": 2, "param2": 50, "param3": 0.3}  # later file wins
    # BrainA's buffer is too short to be tried; unknown brains are ignored.
    changed = meta.increment_lessons({"BrainA": 100, "BrainB": 100, "Other": 5}, {"BrainA": 2, "BrainB": 0})
    assert changed == {"BrainB": True}


def test_meta_curriculum_folder_errors(tmp_path):
    (tmp_path / "file.json").write_text("{}")
    with pytest.raises(MetaCurriculumError, match="is not a directory"):
        MetaCurriculum(str(tmp_path / "file.json"), RESET_PARAMETERS)
    with pytest.raises(MetaCurriculumError, match="does not exist"):
        MetaCurriculum(str(tmp_path / "nowhere"), RESET_PARAMETERS)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"thresholds": "10"}, "The thresholds of .* must be a list of numbers"),
        ({"min_lesson_length": 2.5}, "The min_lesson_length of .* must be a whole number, not 2.5"),
        ({"signal_smoothing": "yes"}, "The signal_smoothing of .* must be true or false"),
        ({"measure": "steps"}, "The measure of .* must be 'progress' or 'reward', not 'steps'"),
        (
            {"parameters": {"param1": [1, 2, "x", 4]}},
            "The parameter param1 in Curriculum .* must be a list of numbers",
        ),
    ],
)
def test_curriculum_files_are_checked_without_the_environment(tmp_path, change, message):
    """mlagents-learn reads the curricula before it launches the environment."""
    with pytest.raises(CurriculumError, match=message):
        Curriculum(write_curriculum(tmp_path, "TestBrain.json", dict(TEST_CURRICULUM, **change)), None)


def test_reset_parameters_are_checked_once_the_environment_runs(tmp_path):
    write_curriculum(tmp_path, "BrainA.json", dict(TEST_CURRICULUM, parameters={"unknown": [1, 2, 3, 4]}))
    meta = MetaCurriculum(str(tmp_path), None)
    assert meta.brains_to_curriculums["BrainA"].get_config() == {"unknown": 1}
    with pytest.raises(
        CurriculumError, match="The parameter unknown in Curriculum .* is not present in the Environment"
    ):
        meta.check_reset_parameters(RESET_PARAMETERS)
    meta.check_reset_parameters({"unknown": 0.0})
