"""One policy call per brain for several environments, and the transitions it produced as one.

A policy is much cheaper per agent on a batch than on many small calls (one TensorFlow call instead
of one per environment), and so is a trainer's bookkeeping. :class:`StepBatcher` keeps the books of
an env manager that steps several environments:

* :meth:`StepBatcher.decide` joins the last observations of the environments about to be stepped
  (one :func:`~mlagents.envs.brain.concatenate_brain_infos` per brain), asks each policy once,
  and cuts the resulting :class:`ActionInfo` into one per environment (the actions to send);
* :meth:`StepBatcher.collect` takes the environments' new observations, joins them once per brain,
  and returns one :class:`~mlagents.envs.env_manager.StepBatch` per decision: the joined BrainInfo
  and the unsplit ActionInfo that produced the actions, with the joined new observations. The
  joined new observations are also the input of the next decision, so no observation is joined
  twice.

The policy contract this relies on (see :class:`~mlagents.envs.policy.Policy`): the agents of a
BrainInfo are independent rows, and every per-agent result has the agents on axis 0.
"""

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import AllBrainInfo, BrainInfo, concatenate_brain_infos, take_agents
from mlagents.envs.env_manager import StepBatch, StepInfo
from mlagents.envs.policy import Policy

Rows = slice | np.ndarray


class JoinedBrainInfos(NamedTuple):
    """The AllBrainInfos of several environments, joined per brain.

    :ivar env_ids: the environments, in the order their agents appear.
    :ivar all_brain_info: brain name -> the agents of every environment that has that brain.
    :ivar rows: brain name -> environment -> the rows of that environment's agents.
    """

    env_ids: tuple[int, ...]
    all_brain_info: AllBrainInfo
    rows: dict[str, dict[int, slice]]


def join_all_brain_infos(per_env: Sequence[tuple[int, AllBrainInfo]]) -> JoinedBrainInfos:
    """Join the AllBrainInfos of several environments; one environment's BrainInfos are used as they are.

    :param per_env: (environment id, its AllBrainInfo), in the order the agents should appear.
    """
    brain_names: dict[str, None] = {}  # ordered set: the order brains first appear in
    for _, all_brain_info in per_env:
        brain_names.update(dict.fromkeys(all_brain_info))
    joined: AllBrainInfo = {}
    rows: dict[str, dict[int, slice]] = {}
    for brain_name in brain_names:
        members = [(env_id, infos[brain_name]) for env_id, infos in per_env if brain_name in infos]
        brain_rows: dict[int, slice] = {}
        start = 0
        for env_id, info in members:
            end = start + len(info.agents or [])
            brain_rows[env_id] = slice(start, end)
            start = end
        rows[brain_name] = brain_rows
        if len(members) == 1:
            joined[brain_name] = members[0][1]
        else:
            joined[brain_name] = concatenate_brain_infos([info for _, info in members])
    return JoinedBrainInfos(tuple(env_id for env_id, _ in per_env), joined, rows)


def split_action_info(action_info: ActionInfo, agent_counts: Sequence[int]) -> list[ActionInfo]:
    """Cut the ActionInfo of a joined BrainInfo into one per part of ``agent_counts`` consecutive agents.

    See :func:`take_action_rows` for what is cut and what every part gets whole.
    """
    total = int(sum(agent_counts))
    bounds = np.cumsum([0, *agent_counts])
    return [
        take_action_rows(action_info, total, slice(int(start), int(end)))
        for start, end in zip(bounds[:-1], bounds[1:])
    ]


def take_action_rows(action_info: ActionInfo, total: int, rows: Rows) -> ActionInfo:
    """The part of a decision for ``total`` agents that concerns the agents at ``rows``.

    Arrays (and lists) whose first dimension is ``total`` are cut along axis 0; dicts (e.g.
    ``outputs``, or value estimates per reward stream inside it) key by key; anything else (None,
    scalars such as the learning rate, 0-d arrays, empty lists from a policy without memories) is
    kept whole.
    """
    return ActionInfo(*(_take_value(value, total, rows) for value in action_info))


class _Decision(NamedTuple):
    """One batched decision: its number (in order of decision), its joined input and, per brain with
    a policy, the unsplit ActionInfo."""

    serial: int
    inputs: JoinedBrainInfos
    action_infos: dict[str, ActionInfo]


class StepBatcher:
    """The batched decisions of an env manager and the transitions they produce.

    Usage, per pass of the manager: ``decide`` for the environments that are idle, send each its
    actions, then ``collect`` the steps that finished (any subset of those in flight).
    """

    def __init__(self) -> None:
        self._in_flight: dict[int, _Decision] = {}
        self._decisions_made = 0
        self._last_observations: JoinedBrainInfos | None = None

    def reset(self) -> None:
        """Forget the decisions in flight and the last observations (the environments were reset)."""
        self._in_flight.clear()
        self._last_observations = None

    def forget(self, env_id: int) -> None:
        """Forget environment ``env_id``'s decision in flight (it was lost and restarted)."""
        self._in_flight.pop(env_id, None)
        self._last_observations = None

    def decide(
        self, policies: Mapping[str, Policy], observations: Sequence[tuple[int, AllBrainInfo]]
    ) -> dict[int, dict[str, ActionInfo]]:
        """Decide the actions of several environments with one ``get_action`` call per brain.

        :param policies: policy per brain name; brains without a policy get no actions.
        :param observations: (environment id, its last observations) of each environment to step.
        :returns: environment id -> its ActionInfo per brain it has a policy for.
        :raises: whatever a policy raises.
        """
        last = self._last_observations
        if last is not None and sorted(last.env_ids) == sorted(env_id for env_id, _ in observations):
            inputs = last  # joined when they arrived (see collect)
        else:
            inputs = join_all_brain_infos(observations)
        per_env: dict[int, dict[str, ActionInfo]] = {env_id: {} for env_id in inputs.env_ids}
        action_infos: dict[str, ActionInfo] = {}
        for brain_name, info in inputs.all_brain_info.items():
            policy = policies.get(brain_name)
            if policy is None:
                continue
            action_info = policy.get_action(info)
            action_infos[brain_name] = action_info
            brain_rows = inputs.rows[brain_name]
            if len(brain_rows) == 1:
                per_env[next(iter(brain_rows))][brain_name] = action_info
                continue
            total = len(info.agents or [])
            for env_id, rows in brain_rows.items():
                per_env[env_id][brain_name] = take_action_rows(action_info, total, rows)
        decision = _Decision(self._decisions_made, inputs, action_infos)
        self._decisions_made += 1
        for env_id in inputs.env_ids:
            self._in_flight[env_id] = decision
        return per_env

    def collect(self, steps: Sequence[tuple[int, StepInfo]]) -> list[StepBatch]:
        """The finished steps, grouped by the decision that produced them.

        :param steps: (environment id, its StepInfo) of every step that finished since the last call.
        :returns: one StepBatch per decision (oldest first), its environments in id order.
        """
        ordered = sorted(steps, key=lambda step: step[0])
        current = join_all_brain_infos([(env_id, step.current_all_brain_info) for env_id, step in ordered])
        self._last_observations = current
        # Keyed by decision number; a step without a decision in flight (which a manager does not
        # produce) is a group of its own, after the others.
        groups: dict[int, tuple[_Decision | None, list[tuple[int, StepInfo]]]] = {}
        for env_id, step in ordered:
            decision = self._in_flight.pop(env_id, None)
            key = decision.serial if decision is not None else self._decisions_made + env_id
            groups.setdefault(key, (decision, []))[1].append((env_id, step))
        batches: list[StepBatch] = []
        for _, (decision, members) in sorted(groups.items()):
            step_infos = [step for _, step in members]
            if decision is None:
                batches.extend(StepBatch(step, [step]) for step in step_infos)
                continue
            env_ids = [env_id for env_id, _ in members]
            if len(groups) == 1:
                current_infos = current.all_brain_info
            else:
                current_infos = _take_envs(current, env_ids)
            if sorted(env_ids) == sorted(decision.inputs.env_ids):
                previous_infos = decision.inputs.all_brain_info
                action_infos = decision.action_infos
            else:
                previous_infos = _take_envs(decision.inputs, env_ids)
                action_infos = _take_env_actions(decision, env_ids)
            batches.append(StepBatch(StepInfo(previous_infos, current_infos, action_infos), step_infos))
        return batches


def _env_rows(brain_rows: Mapping[int, slice], env_ids: Sequence[int]) -> Rows | None:
    """The rows of ``env_ids`` among ``brain_rows``: None (none of them), a slice, or indices."""
    wanted = [brain_rows[env_id] for env_id in env_ids if env_id in brain_rows]
    if not wanted:
        return None
    if all(earlier.stop == later.start for earlier, later in zip(wanted, wanted[1:])):
        return slice(wanted[0].start, wanted[-1].stop)
    return np.concatenate([np.arange(part.start, part.stop) for part in wanted])


def _take_envs(joined: JoinedBrainInfos, env_ids: Sequence[int]) -> AllBrainInfo:
    result: AllBrainInfo = {}
    for brain_name, info in joined.all_brain_info.items():
        rows = _env_rows(joined.rows[brain_name], env_ids)
        if rows is None:
            continue
        n_agents = len(info.agents or [])
        whole = isinstance(rows, slice) and rows.start == 0 and rows.stop == n_agents
        result[brain_name] = info if whole else take_agents(info, rows)
    return result


def _take_env_actions(decision: _Decision, env_ids: Sequence[int]) -> dict[str, ActionInfo]:
    result: dict[str, ActionInfo] = {}
    for brain_name, action_info in decision.action_infos.items():
        rows = _env_rows(decision.inputs.rows[brain_name], env_ids)
        if rows is not None:
            info: BrainInfo = decision.inputs.all_brain_info[brain_name]
            result[brain_name] = take_action_rows(action_info, len(info.agents or []), rows)
    return result


def _take_value(value: Any, total: int, rows: Rows) -> Any:
    if isinstance(value, dict):
        return {key: _take_value(item, total, rows) for key, item in value.items()}
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == total:
        return value[rows]
    if isinstance(value, list | tuple) and len(value) == total:
        return value[rows] if isinstance(rows, slice) else [value[int(i)] for i in rows]
    return value
