"""The curriculum of one brain: lessons of reset-parameter values, advanced by a measure of progress.

A curriculum is a JSON file named after its brain (``BigWallJumpLearning.json`` -> brain
``BigWallJumpLearning``: the file name up to its first dot) with the fields:

``measure``            ``"progress"`` (trainer step / max_steps) or ``"reward"`` (mean recent return)
``thresholds``         L floats: lesson i becomes i + 1 when the measure is strictly greater than
                       ``thresholds[i]``
``min_lesson_length``  episodes that must end in a lesson before the measure is looked at
``signal_smoothing``   true: the measure is smoothed as ``0.25 * previous + 0.75 * new``
``parameters``         reset-parameter name -> L + 1 values, one per lesson
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping
from typing import Any

from mlagents.trainers.exception import CurriculumError

LOGGER = logging.getLogger("mlagents.trainers")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


REQUIRED_FIELDS = ("parameters", "measure", "thresholds", "min_lesson_length", "signal_smoothing")


class Curriculum:
    """One brain's curriculum, read from ``location``.

    The file is read and checked when the object is built; with ``default_reset_parameters`` of
    None (before the environment runs) the parameter names are checked later, by
    :meth:`check_reset_parameters`.

    :param location: path of the JSON file.
    :param default_reset_parameters: the environment's reset parameters; every curriculum parameter
        must be one of them.
    :raises CurriculumError: the file cannot be read or decoded, a field is missing or of the wrong
        kind, a parameter has the wrong number of values or is unknown to the environment.
    """

    def __init__(self, location: str, default_reset_parameters: Mapping[str, float] | None) -> None:
        self.location = location
        self._brain_name = os.path.basename(location).split(".")[0]
        self._lesson_num = 0
        self.smoothing_value = 0.0
        try:
            with open(location, encoding="utf-8") as data_file:
                self.data: dict[str, Any] = json.load(data_file)
        except OSError:
            raise CurriculumError(f"The file {location} could not be found.") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CurriculumError(f"There was an error decoding {location}: {error}") from None
        if not isinstance(self.data, dict):
            raise CurriculumError(f"There was an error decoding {location}: expected a JSON object.")
        for field in REQUIRED_FIELDS:
            if field not in self.data:
                raise CurriculumError(f"{location} does not contain a {field} field.")
        self.measure: str = self.data["measure"]
        if self.measure not in ("progress", "reward"):
            raise CurriculumError(
                f"The measure of {location} must be 'progress' or 'reward', not {self.measure!r}."
            )
        thresholds = self.data["thresholds"]
        if not isinstance(thresholds, list) or not all(_is_number(value) for value in thresholds):
            raise CurriculumError(
                f"The thresholds of {location} must be a list of numbers, not {thresholds!r}."
            )
        min_lesson_length = self.data["min_lesson_length"]
        if not _is_number(min_lesson_length) or min_lesson_length != int(min_lesson_length):
            raise CurriculumError(
                f"The min_lesson_length of {location} must be a whole number, not {min_lesson_length!r}."
            )
        if not isinstance(self.data["signal_smoothing"], bool):
            raise CurriculumError(
                f"The signal_smoothing of {location} must be true or false, not {self.data['signal_smoothing']!r}."
            )
        parameters = self.data["parameters"]
        if not isinstance(parameters, dict):
            raise CurriculumError(
                f"The parameters of {location} must map reset-parameter names to lists of values."
            )
        self.min_lesson_length = int(min_lesson_length)
        self.max_lesson_num = len(thresholds)
        if default_reset_parameters is not None:
            self.check_reset_parameters(default_reset_parameters)
        for name, values in parameters.items():
            if not isinstance(values, list) or not all(_is_number(value) for value in values):
                raise CurriculumError(
                    f"The parameter {name} in Curriculum {location} must be a list of numbers, not {values!r}."
                )
            if len(values) != self.max_lesson_num + 1:
                raise CurriculumError(
                    f"The parameter {name} in Curriculum {location} must have {self.max_lesson_num + 1} values "
                    f"but {len(values)} were found"
                )

    def check_reset_parameters(self, default_reset_parameters: Mapping[str, float]) -> None:
        """:raises CurriculumError: a curriculum parameter is not a reset parameter of the environment."""
        for name in self.data["parameters"]:
            if name not in default_reset_parameters:
                raise CurriculumError(
                    f"The parameter {name} in Curriculum {self.location} is not present in the Environment"
                )

    @property
    def brain_name(self) -> str:
        """The brain this curriculum belongs to (the file name up to its first dot)."""
        return self._brain_name

    @property
    def lesson_num(self) -> int:
        """The current lesson, in ``[0, len(thresholds)]``; assignments are clamped to that range."""
        return self._lesson_num

    @lesson_num.setter
    def lesson_num(self, lesson_num: int) -> None:
        self._lesson_num = max(0, min(int(lesson_num), self.max_lesson_num))

    def increment_lesson(self, measure_val: float | None) -> bool:
        """Move to the next lesson if ``measure_val`` (smoothed if asked) passes the current threshold.

        A missing, zero or NaN measure never advances the lesson (as in the original). At most one
        lesson is advanced per call.

        :returns: True if the lesson changed.
        """
        if not self.data or not measure_val or math.isnan(measure_val):
            return False
        if self.data["signal_smoothing"]:
            measure_val = self.smoothing_value * 0.25 + 0.75 * measure_val
            self.smoothing_value = measure_val
        if self.lesson_num < self.max_lesson_num and measure_val > self.data["thresholds"][self.lesson_num]:
            self.lesson_num += 1
            changes = ", ".join(f"{name} -> {value}" for name, value in self.get_config().items())
            LOGGER.info("%s lesson changed. Now in lesson %d: %s", self._brain_name, self.lesson_num, changes)
            return True
        return False

    def get_config(self, lesson: int | None = None) -> dict[str, float]:
        """The reset-parameter values of ``lesson`` (default: the current lesson)."""
        if not self.data:
            return {}
        if lesson is None:
            lesson = self.lesson_num
        lesson = max(0, min(lesson, self.max_lesson_num))
        return {name: values[lesson] for name, values in self.data["parameters"].items()}
