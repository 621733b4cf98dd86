"""``ActionFlattener``: a branched discrete action space seen as one ``Discrete`` space."""

import itertools
from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
from gymnasium import spaces

from gym_unity.envs.exception import UnityGymException


class ActionFlattener:
    """Enumerates every combination of branch actions, so that one integer picks one action per branch.

    Combinations are numbered in ``itertools.product`` order: the last branch varies fastest.
    For branches ``[2, 3]``: ``0 -> [0, 0]``, ``1 -> [0, 1]``, ``2 -> [0, 2]``, ``3 -> [1, 0]`` ...

    >>> flattener = ActionFlattener([2, 3])
    >>> flattener.action_space
    Discrete(6)
    >>> flattener.lookup_action(4)
    [1, 1]

    :param branched_action_space: the size of each branch (``BrainParameters.vector_action_space_size``).
    """

    def __init__(self, branched_action_space: Sequence[int]) -> None:
        self._action_shape = list(branched_action_space)
        self.action_lookup: dict[int, list[int]] = self._create_lookup(self._action_shape)
        self.action_space = spaces.Discrete(len(self.action_lookup))

    @classmethod
    def _create_lookup(cls, branched_action_space: Sequence[int]) -> dict[int, list[int]]:
        """index -> one action per branch, for every combination (``prod(sizes)`` entries)."""
        combinations = itertools.product(*(range(size) for size in branched_action_space))
        return {index: list(combination) for index, combination in enumerate(combinations)}

    def lookup_action(self, action: Any) -> list[int]:
        """The branch actions of the flattened action ``action``.

        :param action: an integer in ``[0, action_space.n)``: a Python or numpy integer, a 0-d array,
            or a float holding an integer (as the original's dictionary lookup accepted).
        :return: one ``int`` per branch.
        :raises UnityGymException: ``action`` is not an integer of that range.
        """
        key = _as_index(action)
        if key is None or key not in self.action_lookup:
            raise UnityGymException(
                f"The flattened action {action!r} is not valid: expected an integer from 0 to "
                f"{len(self.action_lookup) - 1} (one of the {len(self.action_lookup)} combinations of the "
                f"branches {self._action_shape})."
            )
        return self.action_lookup[key]


def _as_index(action: Any) -> int | None:
    """``action`` as an int when it holds an integer value (bool excluded), else None."""
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, Integral):
        return int(action)
    value = np.asarray(action) if isinstance(action, (np.ndarray, np.generic, float)) else None
    if value is None or value.shape != ():
        return None
    if np.issubdtype(value.dtype, np.integer):
        return int(value)
    if np.issubdtype(value.dtype, np.floating) and float(value).is_integer():
        return int(value)
    return None
