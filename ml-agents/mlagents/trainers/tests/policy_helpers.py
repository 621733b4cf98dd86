"""Helpers of the policy tests (not a test module): a ``BrainInfo`` of vector observations, and an
update batch built from a policy's own outputs.

Imported by name from the test modules (the conftest puts this folder on ``sys.path``).
"""

from typing import Any

import numpy as np

from mlagents.envs.brain import BrainInfo, BrainParameters


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
