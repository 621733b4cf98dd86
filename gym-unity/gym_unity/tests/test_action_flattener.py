"""ActionFlattener: the enumeration order, the lookup and its errors (no environment needed)."""

import itertools

import numpy as np
import pytest
from gymnasium import spaces

from gym_unity.envs import ActionFlattener, UnityGymException


@pytest.mark.parametrize("branches", [[2], [3, 2], [3, 3, 3, 2], [1, 4, 1]])
def test_lookup_enumerates_the_product_last_branch_fastest(branches):
    flattener = ActionFlattener(branches)
    expected = [list(combination) for combination in itertools.product(*(range(b) for b in branches))]
    assert flattener.action_space == spaces.Discrete(int(np.prod(branches)))
    assert flattener.action_lookup == dict(enumerate(expected))
    assert [flattener.lookup_action(i) for i in range(len(expected))] == expected


def test_lookup_of_known_indices():
    flattener = ActionFlattener([2, 3])
    assert flattener.lookup_action(0) == [0, 0]
    assert flattener.lookup_action(1) == [0, 1]
    assert flattener.lookup_action(3) == [1, 0]
    assert flattener.lookup_action(5) == [1, 2]


@pytest.mark.parametrize("index", [4, np.int64(4), np.int32(4), np.array(4), 4.0, np.float32(4.0)])
def test_lookup_accepts_integers_in_any_numeric_form(index):
    assert ActionFlattener([2, 3]).lookup_action(index) == [1, 1]


@pytest.mark.parametrize("index", [6, -1, 2.5, "1", [1], np.array([1]), None, True])
def test_lookup_rejects_what_is_not_a_valid_index(index):
    with pytest.raises(UnityGymException, match=r"expected an integer from 0 to 5 .* branches \[2, 3\]"):
        ActionFlattener([2, 3]).lookup_action(index)
