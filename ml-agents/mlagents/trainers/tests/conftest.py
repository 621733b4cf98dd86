"""Fixtures of the trainer tests: a small PPO configuration and a random PPO mini-batch.

The helper modules beside the tests (``learn_helpers``, ``tiny_envs``, ``policy_helpers``...) are
imported by package path, ``mlagents.trainers.tests.<module>`` (a namespace package: the tests run
with ``--import-mode=importlib``)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mlagents.trainers.tests.policy_helpers import small_ppo_params


@pytest.fixture
def ppo_params(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """``ppo_params(**overrides)``: a complete PPO trainer configuration for the brain ``"Brain"``
    with tiny networks (1 layer of 8 units, batches of 8, a buffer of 16), its model folder
    ``tmp_path/models/run/Brain`` and summaries ``tmp_path/summaries/run_Brain``; keyword arguments
    replace or add entries (a new dict each call)."""

    def make(**overrides: Any) -> dict[str, Any]:
        return small_ppo_params(tmp_path, **overrides)

    return make


@pytest.fixture
def continuous_update_batch() -> Callable[..., dict[str, Any]]:
    """``continuous_update_batch(n, seed=0)``: a random PPO mini-batch of n rows for a brain with 3
    vector observations, 2 continuous actions and the extrinsic signal."""

    def make(n: int, seed: int = 0) -> dict[str, Any]:
        import numpy as np

        rng = np.random.default_rng(seed)
        return {
            "vector_obs": rng.normal(size=(n, 3)),
            "actions_pre": rng.normal(size=(n, 2)),
            "action_probs": rng.normal(-1, 0.1, size=(n, 2)),
            "masks": np.ones(n),
            "advantages": rng.normal(size=n),
            "extrinsic_returns": rng.normal(size=n),
            "extrinsic_value_estimates": rng.normal(size=n),
        }

    return make
