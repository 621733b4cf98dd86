"""Exceptions raised by the trainers (``mlagents.trainers``).

Every error here names what went wrong and, where a user can fix it, how.
"""

from mlagents.envs.exception import UnityException


class TrainerError(Exception):
    """Base class of the errors of training components that are not about one Unity brain."""


class CurriculumError(TrainerError):
    """A curriculum file is missing, cannot be decoded, or is inconsistent."""


class CurriculumLoadingError(CurriculumError):
    """A curriculum file could not be read or decoded."""


class CurriculumConfigError(CurriculumError):
    """A curriculum file is decoded but its content is not valid."""


class MetaCurriculumError(TrainerError):
    """The curriculum folder is missing or does not match the brains of the environment."""


class UnityTrainerException(UnityException):
    """A trainer cannot be built or run as configured (missing hyper-parameter, unknown trainer or
    reward signal, ...)."""


class UnityPolicyException(UnityException):
    """A policy cannot be built, loaded or used (invalid memory size, no checkpoint to load, ...)."""


class BufferException(UnityException):
    """The experience buffer was used inconsistently (fields of unequal length, ...)."""
