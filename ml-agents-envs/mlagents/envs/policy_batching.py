"""One policy call for the agents of several environments.

A policy is much cheaper per agent on a batch than on many small calls (one TensorFlow call instead
of one per environment). :func:`get_batched_actions` concatenates the BrainInfos of a brain from
several environments (:func:`concatenate_brain_infos`), asks the policy once, and cuts the resulting
:class:`ActionInfo` back into one per environment (:func:`split_action_info`) by their agent counts.
:func:`concatenate_outputs` does the reverse for the policy outputs of several decisions (the
trainer controller hands the transitions of several environments to a trainer at once).

The policy contract this relies on (see :class:`~mlagents.envs.policy.Policy`): the agents of a
BrainInfo are independent rows, and every per-agent result has the agents on axis 0.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import AllBrainInfo, BrainInfo
from mlagents.envs.policy import Policy


def get_batched_actions(
    policies: Mapping[str, Policy], all_brain_infos: Sequence[AllBrainInfo]
) -> list[dict[str, ActionInfo]]:
    """Decide the actions of several environments with one ``get_action`` call per brain.

    :param policies: policy per brain name; brains without a policy get no actions.
    :param all_brain_infos: the last observations of each environment.
    :returns: for each environment (same order), the ActionInfo per brain it has a policy for.
    :raises: whatever a policy raises.
    """
    results: list[dict[str, ActionInfo]] = [{} for _ in all_brain_infos]
    brain_names: dict[str, None] = {}  # ordered set: the order brains appear in
    for all_brain_info in all_brain_infos:
        brain_names.update(dict.fromkeys(all_brain_info))
    for brain_name in brain_names:
        policy = policies.get(brain_name)
        if policy is None:
            continue
        env_indices = [i for i, all_brain_info in enumerate(all_brain_infos) if brain_name in all_brain_info]
        infos = [all_brain_infos[i][brain_name] for i in env_indices]
        if len(infos) == 1:
            results[env_indices[0]][brain_name] = policy.get_action(infos[0])
            continue
        action_info = policy.get_action(concatenate_brain_infos(infos))
        parts = split_action_info(action_info, [len(info.agents) for info in infos])
        for env_index, part in zip(env_indices, parts):
            results[env_index][brain_name] = part
    return results


def concatenate_brain_infos(infos: Sequence[BrainInfo]) -> BrainInfo:
    """A new BrainInfo with the agents of ``infos`` in order (the inputs are not modified).

    Same result as chaining :meth:`BrainInfo.merge` on a copy: memories are zero-padded to the widest,
    a BrainInfo without memories contributes zero rows; per-agent lists are concatenated.

    :param infos: at least one BrainInfo of the same brain.
    """
    if not infos:
        raise ValueError("concatenate_brain_infos needs at least one BrainInfo")
    first = infos[0]
    agent_counts = [len(info.agents or []) for info in infos]
    n_cameras = len(first.visual_observations)
    visual_observations = [
        [obs for info in infos for obs in info.visual_observations[camera]] for camera in range(n_cameras)
    ]
    return BrainInfo(
        visual_observation=visual_observations,
        vector_observation=np.concatenate([info.vector_observations for info in infos], axis=0),
        text_observations=_concat_lists([info.text_observations for info in infos]) or [],
        memory=_concat_memories([info.memories for info in infos], agent_counts),
        reward=_concat_lists([info.rewards for info in infos]),
        agents=_concat_lists([info.agents for info in infos]),
        local_done=_concat_lists([info.local_done for info in infos]),
        vector_action=_concat_arrays([info.previous_vector_actions for info in infos]),
        text_action=_concat_lists([info.previous_text_actions for info in infos]),
        max_reached=_concat_lists([info.max_reached for info in infos]),
        action_mask=_concat_arrays([info.action_masks for info in infos]),
        custom_observations=_concat_lists([info.custom_observations for info in infos]),
    )


def split_action_info(action_info: ActionInfo, agent_counts: Sequence[int]) -> list[ActionInfo]:
    """Cut the ActionInfo of a concatenated BrainInfo back into one per part.

    Arrays (and lists) whose first dimension equals the total number of agents are split along axis 0
    into consecutive slices of ``agent_counts`` rows; dicts (e.g. ``outputs``, or value estimates per
    reward stream inside it) are split key by key; anything else (None, scalars, 0-d arrays, empty
    lists from a policy without memories) is handed unchanged to every part.

    :param action_info: the policy's decision for ``sum(agent_counts)`` agents.
    :param agent_counts: agents of each part, in concatenation order.
    :returns: one ActionInfo per part.
    """
    total = int(sum(agent_counts))
    bounds = np.cumsum([0, *agent_counts])
    slices = [slice(int(start), int(end)) for start, end in zip(bounds[:-1], bounds[1:])]
    fields = [_split_value(value, total, slices) for value in action_info]
    return [ActionInfo(*(field[i] for field in fields)) for i in range(len(slices))]


def concatenate_outputs(parts: Sequence[Any], agent_counts: Sequence[int]) -> Any:
    """Join the policy outputs of several decisions into the outputs of one decision on their
    concatenated BrainInfos (the inverse of splitting ``ActionInfo.outputs``).

    Dicts are joined key by key (every part must have the same keys); arrays (and lists) whose first
    dimension is each part's agent count are concatenated along axis 0; anything else (scalars such
    as the learning rate) is taken from the first part.

    :param parts: the outputs of each decision, in concatenation order.
    :param agent_counts: the agents of each decision.
    :raises ValueError: no parts, or dicts with different keys.
    """
    if not parts:
        raise ValueError("concatenate_outputs needs at least one part")
    first = parts[0]
    if len(parts) == 1:
        return first
    if isinstance(first, dict):
        keys = list(first)
        if any(
            not isinstance(part, dict) or len(part) != len(keys) or any(k not in part for k in keys)
            for part in parts
        ):
            raise ValueError("the outputs to concatenate have different keys")
        return {key: concatenate_outputs([part[key] for part in parts], agent_counts) for key in keys}
    if all(
        isinstance(part, np.ndarray) and part.ndim >= 1 and part.shape[0] == count
        for part, count in zip(parts, agent_counts)
    ):
        return np.concatenate(parts, axis=0)
    if all(isinstance(part, list) and len(part) == count for part, count in zip(parts, agent_counts)):
        return [item for part in parts for item in part]
    return first


def _split_value(value: Any, total: int, slices: list[slice]) -> list[Any]:
    if isinstance(value, dict):
        per_key = {key: _split_value(item, total, slices) for key, item in value.items()}
        return [{key: parts[i] for key, parts in per_key.items()} for i in range(len(slices))]
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == total:
        return [value[s] for s in slices]
    if isinstance(value, (list, tuple)) and len(value) == total:
        return [value[s] for s in slices]
    return [value for _ in slices]


def _concat_lists(lists: Sequence[Any]) -> Any:
    present = [items for items in lists if items is not None]
    if not present:
        return None
    return [item for items in present for item in items]


def _concat_arrays(arrays: Sequence[Any]) -> Any:
    # Like safe_concat_np_ndarray, None and arrays without rows contribute nothing; unlike it, rows
    # of width 0 (e.g. the masks of a brain without discrete actions, shape (n, 0)) still count.
    non_empty = [np.asarray(a) for a in arrays if a is not None and np.ndim(a) >= 1 and len(a) != 0]
    if not non_empty:
        return next((a for a in arrays if a is not None), None)
    if len(non_empty) == 1:
        return non_empty[0]
    return np.concatenate(non_empty, axis=0)


def _concat_memories(memories: Sequence[Any], agent_counts: Sequence[int]) -> np.ndarray:
    widths = [m.shape[1] if m is not None and np.ndim(m) == 2 and len(m) != 0 else 0 for m in memories]
    width = max(widths)
    if width == 0:
        return np.zeros((0, 0))
    result = np.zeros((int(sum(agent_counts)), width))
    row = 0
    for memory, memory_width, count in zip(memories, widths, agent_counts):
        if memory_width:
            result[row : row + count, :memory_width] = memory
        row += count
    return result
