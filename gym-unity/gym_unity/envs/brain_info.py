"""Reading an environment's answer: the ``BrainInfo`` of one brain and its per-agent fields, with a
``UnityGymException`` that says what is missing instead of a ``KeyError`` or a ``TypeError``."""

from typing import TypeVar

from gym_unity.envs.exception import UnityGymException
from mlagents.envs.brain import AllBrainInfo, BrainInfo

T = TypeVar("T")


def brain_info_of(all_brain_info: AllBrainInfo, brain: str) -> BrainInfo:
    """The BrainInfo of ``brain`` in an environment's answer.

    :raises UnityGymException: the answer has no entry for it (the error lists those it has).
    """
    try:
        return all_brain_info[brain]
    except KeyError:
        sent = ", ".join(all_brain_info) or "nothing"
        raise UnityGymException(
            f"The environment's answer has no entry for the brain '{brain}' (it sent: {sent})."
        ) from None


def required_field(values: list[T] | None, field: str) -> list[T]:
    """A per-agent list field of a BrainInfo (``agents``, ``rewards``, ``local_done``, ...).

    ``BrainInfo`` allows None for these, but every BrainInfo the environment sends has them.

    :raises UnityGymException: the field is missing.
    """
    if values is None:
        raise UnityGymException(f"The environment's BrainInfo has no '{field}'.")
    return values
