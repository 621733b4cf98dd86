"""Helpers of the policy tests (not a test module): brains, a ``BrainInfo`` of vector observations,
an update batch built from a policy's own outputs, and a PPO policy with non-trivial weights for the
export tests.

Imported as ``mlagents.trainers.tests.policy_helpers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mlagents.envs.brain import BrainInfo, BrainParameters

if TYPE_CHECKING:
    from mlagents.trainers.ppo.policy import PPOPolicy


def small_ppo_params(folder: Path, **overrides: Any) -> dict[str, Any]:
    """A complete PPO trainer configuration for the brain ``"Brain"`` with tiny networks (1 layer of
    8 units, batches of 8, a buffer of 16), its model folder ``folder/models/run/Brain`` and
    summaries ``folder/summaries/run_Brain``; keyword arguments replace or add entries (a new dict
    each call). The conftest's ``ppo_params`` fixture is this function on the test's ``tmp_path``."""
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
        "summary_path": str(folder / "summaries" / "run_Brain"),
        "model_path": str(folder / "models" / "run" / "Brain"),
        "keep_checkpoints": 5,
    }
    params.update(overrides)
    return params


def make_brain(
    name: str,
    vec: int,
    actions: Sequence[int],
    space: str,
    cameras: Sequence[tuple[int, int, bool]] = (),
) -> BrainParameters:
    """A brain of ``vec`` vector observations (one stacked), the action branches ``actions`` of
    the ``space`` ("discrete"/"continuous"), and one camera per (height, width, black and white)."""
    resolutions = [{"height": h, "width": w, "blackAndWhite": bw} for h, w, bw in cameras]
    return BrainParameters(name, vec, 1, resolutions, list(actions), [""] * len(actions), space)


def randomized_policy(brain: BrainParameters, params: Mapping[str, Any]) -> PPOPolicy:
    """A PPO policy (not training: decisions leave the normalizer alone) whose weights are moved
    by N(0, 0.1) noise and whose normalizer statistics are set to arbitrary values (seeded), so
    that a wrongly exported layer cannot pass by accident."""
    from mlagents.trainers.ppo.policy import PPOPolicy

    policy = PPOPolicy(0, brain, params, is_training=False)
    rng = np.random.default_rng(1)
    model = policy.model
    for variable in model.trainable_variables:
        variable.assign(variable + rng.normal(0, 0.1, size=variable.shape).astype(np.float32))
    if model.normalizer is not None:
        model.normalizer.running_mean.assign(rng.normal(0, 1, size=model.vec_obs_size).astype(np.float32))
        model.normalizer.running_variance.assign(
            rng.uniform(5, 50, size=model.vec_obs_size).astype(np.float32)
        )
        model.normalizer.normalization_steps.assign(37)
    return policy


def make_info(
    brain: BrainParameters, obs: Any, masks: np.ndarray | None = None, visual: list | None = None
) -> BrainInfo:
    """A step of ``len(obs)`` agents (``agent0``...) with the vector observations ``obs``, all
    actions allowed unless ``masks`` is given, no reward, none done."""
    n = len(obs)
    total = sum(brain.vector_action_space_size)
    return BrainInfo(
        visual_observation=visual or [],
        vector_observation=np.asarray(obs, dtype=np.float32),
        text_observations=[""] * n,
        memory=np.zeros((0, 0)),
        reward=[0.0] * n,
        agents=[f"agent{i}" for i in range(n)],
        local_done=[False] * n,
        vector_action=np.zeros((n, len(brain.vector_action_space_size))),
        text_action=[[] for _ in range(n)],
        max_reached=[False] * n,
        action_mask=np.ones((n, total)) if masks is None else masks,
    )


def update_batch(
    brain: BrainParameters, policy: Any, obs: np.ndarray, out: dict, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """A mini-batch for ``policy.update``: the observations ``obs`` and the outputs ``out`` of the
    policy's decision on them, with advantages and returns drawn from ``rng``."""
    n = len(obs)
    batch = {
        "vector_obs": obs,
        "next_vector_in": np.roll(obs, 1, axis=0),
        "action_probs": out["action_probs"],
        "masks": np.ones(n, np.float32),
        "advantages": rng.normal(size=n).astype(np.float32),
    }
    for name in policy.reward_signals:
        batch[f"{name}_returns"] = rng.normal(size=n).astype(np.float32)
        batch[f"{name}_value_estimates"] = out["value_heads"][name]
    if brain.vector_action_space_type == "continuous":
        batch["actions_pre"] = out["pre_action"]
        batch["actions"] = out["action"]
    else:
        batch["actions"] = out["action"]
        batch["action_mask"] = np.ones((n, sum(brain.vector_action_space_size)), np.float32)
    return batch
