"""Fixtures of the trainer tests: a small PPO configuration; and ``learn_helpers.py`` (running
mlagents-learn as a user does) made importable by the test modules."""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# The tests run with --import-mode=importlib, so they cannot import each other; the helper module
# beside them is imported by name.
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def ppo_params(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """``ppo_params(**overrides)``: a complete PPO trainer configuration for the brain ``"Brain"``
    with tiny networks (1 layer of 8 units, batches of 8, a buffer of 16), its model folder
    ``tmp_path/models/run/Brain`` and summaries ``tmp_path/summaries/run_Brain``; keyword arguments
    replace or add entries (a new dict each call)."""

    def make(**overrides: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "trainer": "ppo",
            "batch_size": 8,
            "beta": 5.0e-3,
            "buffer_size": 16,
            "epsilon": 0.2,
            "hidden_units": 8,
            "lambd": 0.95,
            "learning_rate": 3.0e-4,
            "max_steps": "5.0e4",
            "memory_size": 8,
            "normalize": False,
            "num_epoch": 2,
            "num_layers": 1,
            "time_horizon": 3,
            "sequence_length": 2,
            "summary_freq": 1000,
            "use_recurrent": False,
            "vis_encode_type": "simple",
            "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.99}},
            "summary_path": str(tmp_path / "summaries" / "run_Brain"),
            "model_path": str(tmp_path / "models" / "run" / "Brain"),
            "keep_checkpoints": 5,
        }
        params.update(overrides)
        return params

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
