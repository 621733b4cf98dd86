"""All curricula of a training run: one :class:`Curriculum` per brain, read from one folder."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from mlagents.trainers.curriculum import Curriculum
from mlagents.trainers.exception import MetaCurriculumError

LOGGER = logging.getLogger("mlagents.trainers")


class MetaCurriculum:
    """The curricula of every brain in ``curriculum_folder`` (one JSON file per brain).

    Every file is read and checked when the object is built, which ``mlagents-learn`` does before
    it launches the environment (``default_reset_parameters`` None); the parameter names are then
    checked against the running environment with :meth:`check_reset_parameters`.

    :param curriculum_folder: folder whose every entry is a curriculum file.
    :param default_reset_parameters: the environment's reset parameters, or None to check them later.
    :raises MetaCurriculumError: the folder does not exist or is not a folder.
    :raises CurriculumError: a curriculum file is invalid (see :class:`Curriculum`).
    """

    def __init__(self, curriculum_folder: str, default_reset_parameters: Mapping[str, float] | None) -> None:
        if not os.path.exists(curriculum_folder):
            raise MetaCurriculumError(
                f"The curriculum folder {curriculum_folder} does not exist. Check the --curriculum path."
            )
        if not os.path.isdir(curriculum_folder):
            raise MetaCurriculumError(
                f"{curriculum_folder} is not a directory. Refer to the ML-Agents curriculum learning docs."
            )
        self.brains_to_curriculums: dict[str, Curriculum] = {}
        used_parameters: set = set()
        warned = False
        for entry in sorted(os.listdir(curriculum_folder)):
            curriculum = Curriculum(os.path.join(curriculum_folder, entry), default_reset_parameters)
            parameters = set(curriculum.get_config())
            if parameters & used_parameters and not warned:
                LOGGER.warning(
                    "Two or more curriculums will attempt to change the same reset parameter. "
                    "The result will be non-deterministic."
                )
                warned = True
            used_parameters |= parameters
            self.brains_to_curriculums[curriculum.brain_name] = curriculum

    def check_reset_parameters(self, default_reset_parameters: Mapping[str, float]) -> None:
        """:raises CurriculumError: a curriculum names a parameter the environment does not have."""
        for curriculum in self.brains_to_curriculums.values():
            curriculum.check_reset_parameters(default_reset_parameters)

    @property
    def lesson_nums(self) -> dict[str, int]:
        """Brain name -> current lesson."""
        return {brain: curriculum.lesson_num for brain, curriculum in self.brains_to_curriculums.items()}

    @lesson_nums.setter
    def lesson_nums(self, lesson_nums: Mapping[str, int]) -> None:
        for brain, lesson in lesson_nums.items():
            self.brains_to_curriculums[brain].lesson_num = lesson

    def increment_lessons(
        self, measure_vals: Mapping[str, float], reward_buff_sizes: Mapping[str, int] | None = None
    ) -> dict[str, bool]:
        """Try to advance the lesson of each brain.

        :param measure_vals: brain -> its measure (progress or mean reward).
        :param reward_buff_sizes: brain -> episodes in its reward buffer; when given, only brains
            with at least ``min_lesson_length`` episodes are tried.
        :returns: brain -> whether its lesson changed (only brains that were tried).
        """
        changed: dict[str, bool] = {}
        for brain, measure in measure_vals.items():
            curriculum = self.brains_to_curriculums.get(brain)
            if curriculum is None:
                continue
            if (
                reward_buff_sizes is not None
                and reward_buff_sizes.get(brain, 0) < curriculum.min_lesson_length
            ):
                continue
            changed[brain] = curriculum.increment_lesson(measure)
        return changed

    def set_all_curriculums_to_lesson_num(self, lesson_num: int) -> None:
        """Set every curriculum to ``lesson_num`` (clamped per curriculum), as ``--lesson`` does."""
        for curriculum in self.brains_to_curriculums.values():
            curriculum.lesson_num = lesson_num

    def get_config(self) -> dict[str, float]:
        """The reset-parameter values of every curriculum's current lesson, merged (later files win)."""
        config: dict[str, float] = {}
        for curriculum in self.brains_to_curriculums.values():
            config.update(curriculum.get_config())
        return config
