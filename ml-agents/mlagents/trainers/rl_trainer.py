"""Experience collection shared by the reward-signal trainers: :class:`RLTrainer`.

Per environment step, :meth:`RLTrainer.add_experiences` appends one step to the trajectory of every
agent that decided in the previous step (observations, memories, the action taken, its log
probabilities, the reward of every signal, the value estimates), and keeps per-agent reward sums for
the statistics. Every field of the step is cut for all agents at once with numpy (one indexing per
field, see :meth:`RLTrainer.experience_columns`); per agent only the appends remain
(:meth:`~mlagents.trainers.buffer.Buffer.append_rows`). Subclasses say what of the policy's outputs to
keep (:meth:`RLTrainer.policy_output_columns`; the 0.9 per-agent hooks :meth:`RLTrainer.add_policy_outputs`
and :meth:`RLTrainer.add_rewards_outputs` are built on the column methods) and what to do with a
finished trajectory.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from mlagents.envs.action_info import ActionInfoOutputs
from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.timers import hierarchical_timer
from mlagents.trainers.agent_ids import AgentId, agent_ids
from mlagents.trainers.buffer import Buffer, Columns
from mlagents.trainers.components.reward_signals import RewardSignalResult
from mlagents.trainers.settings import TrainerSettings
from mlagents.trainers.trainer import CUMULATIVE_REWARD_TAG, EPISODE_LENGTH_TAG, Trainer

LOGGER = logging.getLogger("mlagents.trainers")

RewardSignalResults = dict[str, RewardSignalResult]

ENTROPY_TAG = "Policy/Entropy"
LEARNING_RATE_TAG = "Policy/Learning Rate"


V = TypeVar("V")


def _cached(cache: dict[int, V], info: BrainInfo, compute: Callable[[BrainInfo], V]) -> V:
    """``compute(info)``, computed once per BrainInfo object for the lifetime of ``cache``."""
    key = id(info)
    if key not in cache:
        cache[key] = compute(info)
    return cache[key]


def _index_map(info: BrainInfo) -> dict[AgentId, int]:
    return {agent_id: i for i, agent_id in enumerate(agent_ids(info))}


Rows = np.ndarray | None
"""Agent rows of a BrainInfo or of policy outputs: an int array, or None for all rows in order."""


def take_rows(values: npt.ArrayLike, rows: Rows) -> np.ndarray:
    """The rows ``rows`` of ``values`` (all of them, without a copy, for None)."""
    array = np.asarray(values)
    return array if rows is None else array[rows]


def _mean(values: npt.ArrayLike) -> float:
    """``float(np.mean(values))`` (same dtype, same result) without np.mean's per-call overhead."""
    array = np.asarray(values)
    if array.size == 0 or array.dtype not in (np.float32, np.float64):
        return float(np.mean(array))
    return float(np.add.reduce(array, axis=None) / array.size)


class ReadyTrajectories(NamedTuple):
    """The trajectories to process after a step (:meth:`RLTrainer.ready_trajectories`)."""

    #: The agents of the step's BrainInfo.
    agents: list[AgentId]
    #: Their ``local_done``, bool (n,).
    dones: np.ndarray
    #: Their ``max_reached``, bool (n,) (all False when the BrainInfo has none).
    max_reached: np.ndarray
    #: The rows whose trajectory is ready, in order.
    rows: list[int]


class RLTrainer(Trainer):
    """Base of the trainers whose policies learn from reward signals (PPO).

    Same constructor arguments as :class:`~mlagents.trainers.trainer.Trainer`.

    :raises UnityTrainerException: the ``reward_signals`` section is empty (found when the settings
        are parsed).
    :ivar training_buffer: trajectories per agent and the update buffer.
    :ivar episode_steps: agent id -> steps of its current episode.
    :ivar collected_rewards: ``"environment"`` and each signal name -> agent id -> reward sum of the
        current episode (the environment's raw reward, the signals' scaled rewards).
    """

    #: Whether each step keeps the signals' rewards and value estimates (:meth:`reward_output_columns`);
    #: a trainer that evaluates the rewards again on every mini-batch keeps neither.
    keeps_rewards: ClassVar[bool] = True

    def __init__(
        self,
        brain: BrainParameters,
        trainer_parameters: TrainerSettings | Mapping[str, Any],
        training: bool,
        run_id: str,
        reward_buff_cap: int = 1,
    ) -> None:
        super().__init__(brain, trainer_parameters, training, run_id, reward_buff_cap)
        self.training_buffer = Buffer()
        self.episode_steps: dict[AgentId, int] = defaultdict(int)
        self.collected_rewards: dict[str, dict[AgentId, float]] = {"environment": defaultdict(float)}

    # ------------------------------------------------------------------ collection

    def construct_curr_info(self, next_info: BrainInfo) -> BrainInfo:
        """A BrainInfo with the agents of ``next_info``, each as of its last decision.

        Agents that have not decided yet are taken from ``next_info`` itself.
        """
        next_agents = agent_ids(next_info)
        rows = []
        index_maps: dict[int, dict[AgentId, int]] = {}
        for agent_id in next_agents:
            info = self.training_buffer[agent_id].last_brain_info
            if info is None:
                info = next_info
            index = _cached(index_maps, info, _index_map)[agent_id]
            rows.append((info, index))
        n_cameras = len(next_info.visual_observations)
        visual = [[info.visual_observations[i][idx] for info, idx in rows] for i in range(n_cameras)]
        vector = np.asarray([info.vector_observations[idx] for info, idx in rows])
        if len(rows) == 0:
            vector = np.zeros((0,) + np.shape(next_info.vector_observations)[1:])
        memories: np.ndarray = np.zeros((0, 0))
        if self.policy.use_recurrent:
            memory_cache: dict[int, np.ndarray] = {}
            memories = np.asarray(
                [_cached(memory_cache, info, self.policy.memories_of)[idx] for info, idx in rows],
                dtype=np.float32,
            ).reshape(len(rows), self.policy.m_size)

        def column(name: str) -> list[Any] | None:
            values = []
            for info, idx in rows:
                source = getattr(info, name)
                if source is None:
                    return None
                values.append(source[idx])
            return values

        prev_actions = column("previous_vector_actions")
        masks = column("action_masks")
        return BrainInfo(
            visual_observation=visual,
            vector_observation=vector,
            text_observations=column("text_observations") or [],
            memory=memories,
            reward=column("rewards"),
            agents=list(next_agents),
            local_done=column("local_done"),
            vector_action=None if prev_actions is None else np.asarray(prev_actions),
            text_action=column("previous_text_actions"),
            max_reached=column("max_reached"),
            action_mask=None if masks is None else np.asarray(masks),
        )

    def add_experiences(
        self,
        curr_all_info: AllBrainInfo,
        next_all_info: AllBrainInfo,
        take_action_outputs: ActionInfoOutputs,
    ) -> None:
        """:meth:`append_transition`, timed under the trainer's class (``PPOTrainer.add_experiences``)."""
        with hierarchical_timer(f"{type(self).__name__}.add_experiences"):
            self.append_transition(curr_all_info, next_all_info, take_action_outputs)

    def append_transition(
        self,
        curr_all_info: AllBrainInfo,
        next_all_info: AllBrainInfo,
        take_action_outputs: ActionInfoOutputs,
    ) -> None:
        """Append the transition ``curr_all_info -> next_all_info`` to the agents' trajectories.

        An agent gets a step when it decided in a BrainInfo (this one or, for an agent absent from
        it, its last one) in which it was not done. The step's fields are cut from the BrainInfos
        and the policy outputs with one numpy indexing per field for all agents
        (:meth:`experience_columns`, :meth:`policy_output_columns`, :meth:`reward_output_columns`);
        only the appends are per agent.

        :param curr_all_info: the infos in which the actions were decided.
        :param next_all_info: the infos after the environment step.
        :param take_action_outputs: the policy's outputs for this brain at that decision (None when
            the brain did not decide).
        """
        curr_info = curr_all_info[self.brain_name]
        next_info = next_all_info[self.brain_name]
        policy = self.policy
        if take_action_outputs:
            self.stats[ENTROPY_TAG].append(_mean(take_action_outputs["entropy"]))
            self.stats[LEARNING_RATE_TAG].append(float(take_action_outputs["learning_rate"]))
            for name, signal in policy.reward_signals.items():
                self.stats[signal.value_name].append(_mean(take_action_outputs["value_heads"][name]))

        curr_agents = agent_ids(curr_info)
        next_agents = agent_ids(next_info)
        for agent_id in curr_agents:
            agent_buffer = self.training_buffer[agent_id]
            agent_buffer.last_brain_info = curr_info
            agent_buffer.last_take_action_outputs = take_action_outputs

        same_agents = list(curr_agents) == list(next_agents)
        curr_to_use = curr_info if same_agents else self.construct_curr_info(next_info)
        rewards_out: RewardSignalResults = {
            name: signal.evaluate(curr_to_use, next_info) for name, signal in policy.reward_signals.items()
        }
        next_done = np.asarray(next_info.local_done, dtype=bool).reshape(-1)
        decisions: list[tuple[BrainInfo, ActionInfoOutputs, Rows, Rows]]
        if same_agents:
            decisions = [(curr_info, take_action_outputs, None, None)]
        else:
            decisions = self._decisions_of(next_info)
        for stored_info, stored_outputs, stored_idx, next_idx in decisions:
            if stored_outputs is None:
                continue
            done_before = take_rows(np.asarray(stored_info.local_done, dtype=bool).reshape(-1), stored_idx)
            if done_before.any():
                # Agents that were done when they decided get no step (their next step is a reset).
                kept = np.flatnonzero(~done_before)
                if len(kept) == 0:
                    continue
                stored_idx = kept if stored_idx is None else stored_idx[kept]
                next_idx = kept if next_idx is None else next_idx[kept]
            step_agents = (
                list(next_agents) if next_idx is None else [next_agents[j] for j in next_idx.tolist()]
            )
            columns = self.experience_columns(stored_info, next_info, stored_idx, next_idx)
            columns.update(self.policy_output_columns(stored_outputs, stored_idx))
            columns.update(
                self.reward_output_columns(rewards_out, stored_outputs["value_heads"], stored_idx, next_idx)
            )
            self.training_buffer.append_rows(step_agents, columns, {"action_mask": 1})
            self._collect_rewards(step_agents, next_info.rewards, rewards_out, next_idx)

        for agent_id, done in zip(next_agents, next_done.tolist()):
            if not done:
                self.episode_steps[agent_id] += 1

    def _decisions_of(self, next_info: BrainInfo) -> list[tuple[BrainInfo, ActionInfoOutputs, Rows, Rows]]:
        """The agents of ``next_info`` grouped by the decision they last took part in.

        :returns: per decision (BrainInfo, its policy outputs, the agents' rows in that BrainInfo,
            their rows in ``next_info``); agents that never decided are left out.
        """
        groups: dict[tuple[int, int], tuple[BrainInfo, ActionInfoOutputs, list[int], list[int]]] = {}
        index_maps: dict[int, dict[AgentId, int]] = {}
        for next_idx, agent_id in enumerate(agent_ids(next_info)):
            agent_buffer = self.training_buffer[agent_id]
            stored_info = agent_buffer.last_brain_info
            if stored_info is None:
                continue
            stored_outputs = agent_buffer.last_take_action_outputs
            key = (id(stored_info), id(stored_outputs))
            if key not in groups:
                groups[key] = (stored_info, stored_outputs, [], [])
            groups[key][2].append(_cached(index_maps, stored_info, _index_map)[agent_id])
            groups[key][3].append(next_idx)
        return [
            (info, outputs, np.asarray(stored_rows, dtype=np.int64), np.asarray(next_rows, dtype=np.int64))
            for info, outputs, stored_rows, next_rows in groups.values()
        ]

    def experience_columns(
        self, stored_info: BrainInfo, next_info: BrainInfo, stored_idx: Rows, next_idx: Rows
    ) -> Columns:
        """The observation part of one step for n agents: field name -> n values.

        :param stored_info: the BrainInfo in which the agents decided.
        :param next_info: the BrainInfo after the environment step.
        :param stored_idx: the agents' rows in ``stored_info``, int (n,), or None: all, in order.
        :param next_idx: their rows in ``next_info``, int (n,), or None: all, in order.
        :returns: ``visual_obs{i}``/``next_visual_obs{i}`` (lists of images), ``vector_obs`` and
            ``next_vector_in`` (n, vec), ``memory`` (n, memory_size) when recurrent, ``masks`` (1.0),
            ``done`` (the agents' ``local_done`` in ``next_info``), ``action_mask`` (n, sum of
            branches) for discrete actions and ``prev_action`` (n, action length) when the BrainInfo
            has previous actions.
        """
        policy = self.policy
        columns: Columns = {}
        for i in range(policy.vis_obs_size):
            camera, next_camera = stored_info.visual_observations[i], next_info.visual_observations[i]
            columns[f"visual_obs{i}"] = (
                camera if stored_idx is None else [camera[j] for j in stored_idx.tolist()]
            )
            columns[f"next_visual_obs{i}"] = (
                next_camera if next_idx is None else [next_camera[j] for j in next_idx.tolist()]
            )
        if policy.use_vec_obs:
            columns["vector_obs"] = take_rows(stored_info.vector_observations, stored_idx)
            columns["next_vector_in"] = take_rows(next_info.vector_observations, next_idx)
        if policy.use_recurrent:
            columns["memory"] = take_rows(policy.memories_of(stored_info), stored_idx)
        done = take_rows(np.asarray(next_info.local_done, dtype=bool).reshape(-1), next_idx)
        columns["masks"] = [1.0] * len(done)
        columns["done"] = done.tolist()
        if not policy.use_continuous_act:
            columns["action_mask"] = take_rows(policy.action_masks_of(stored_info), stored_idx)
        if stored_info.previous_vector_actions is not None:
            columns["prev_action"] = take_rows(stored_info.previous_vector_actions, stored_idx)
        return columns

    def policy_output_columns(self, take_action_outputs: dict[str, Any], agent_idx: Rows) -> Columns:
        """What the trainer keeps of the policy's outputs for the agents at rows ``agent_idx`` of the
        decision (None: all, in order): field name -> one value per agent."""
        raise NotImplementedError

    def reward_output_columns(
        self,
        rewards_out: RewardSignalResults,
        values: dict[str, np.ndarray],
        agent_idx: Rows,
        agent_next_idx: Rows,
    ) -> Columns:
        """Each signal's scaled reward (``{name}_rewards``, rows ``agent_next_idx`` of the results) and
        the value estimate of its head (``{name}_value_estimates``, rows ``agent_idx`` of ``values``),
        as floats (None: all rows, in order); nothing for a trainer that does not keep them
        (:attr:`keeps_rewards`)."""
        columns: Columns = {}
        if not self.keeps_rewards:
            return columns
        for name, result in rewards_out.items():
            rewards = np.asarray(result.scaled_reward, dtype=np.float64).reshape(-1)
            columns[f"{name}_rewards"] = take_rows(rewards, agent_next_idx).tolist()
            estimates = np.asarray(values[name], dtype=np.float64).reshape(-1)
            columns[f"{name}_value_estimates"] = take_rows(estimates, agent_idx).tolist()
        return columns

    def add_policy_outputs(
        self, take_action_outputs: dict[str, Any], agent_id: AgentId, agent_idx: int
    ) -> None:
        """Append what the trainer keeps of the policy's outputs for one agent (row ``agent_idx``)."""
        columns = self.policy_output_columns(take_action_outputs, np.array([agent_idx]))
        self.training_buffer.append_rows([agent_id], columns)

    def add_rewards_outputs(
        self,
        rewards_out: RewardSignalResults,
        values: dict[str, np.ndarray],
        agent_id: AgentId,
        agent_idx: int,
        agent_next_idx: int,
    ) -> None:
        """Append the rewards (index ``agent_next_idx``) and value estimates (index ``agent_idx``) of one agent."""
        columns = self.reward_output_columns(
            rewards_out, values, np.array([agent_idx]), np.array([agent_next_idx])
        )
        self.training_buffer.append_rows([agent_id], columns)

    def _collect_rewards(
        self,
        agent_ids: list[AgentId],
        env_rewards: list[float] | None,
        rewards_out: RewardSignalResults,
        next_idx: Rows,
    ) -> None:
        """Add the step's rewards (rows ``next_idx``) to the agents' episode sums."""
        sums = {"environment": np.asarray(env_rewards, dtype=np.float32).reshape(-1)}
        sums.update(
            {name: np.asarray(result.scaled_reward).reshape(-1) for name, result in rewards_out.items()}
        )
        for name, rewards in sums.items():
            collected = self.collected_rewards[name]
            for agent_id, reward in zip(agent_ids, take_rows(rewards, next_idx).astype(np.float64).tolist()):
                collected[agent_id] += reward

    def ready_trajectories(self, info: BrainInfo, min_length: int) -> ReadyTrajectories:
        """The trajectories to process after the step ``info``: those of the agents that have at
        least one step and whose episode ended or that have ``min_length`` steps."""
        agents = agent_ids(info)
        dones = np.asarray(info.local_done, dtype=bool).reshape(-1)
        max_reached = (
            np.asarray(info.max_reached, dtype=bool).reshape(-1)
            if info.max_reached is not None
            else np.zeros(len(agents), dtype=bool)
        )
        rows: list[int] = []
        # dict.get: looking an agent up must not create its buffer or fields (Buffer[...] would).
        for row, (agent_id, done) in enumerate(zip(agents, dones.tolist())):
            agent_buffer = dict.get(self.training_buffer, agent_id)
            actions = None if agent_buffer is None else dict.get(agent_buffer, "actions")
            length = 0 if actions is None else len(actions)
            if length > 0 and (done or length >= min_length):
                rows.append(row)
        return ReadyTrajectories(agents, dones, max_reached, rows)

    # ------------------------------------------------------------------ episodes

    def end_episode(self) -> None:
        """Forget partial trajectories, step counters and reward sums (the environment was reset)."""
        self.training_buffer.reset_local_buffers()
        for agent_id in self.episode_steps:
            self.episode_steps[agent_id] = 0
        for rewards in self.collected_rewards.values():
            for agent_id in rewards:
                rewards[agent_id] = 0.0

    def end_interrupted_episodes(self, last_info: AllBrainInfo, interrupted_info: AllBrainInfo) -> None:
        """:meth:`Trainer.end_interrupted_episodes`, then forget everything kept about those agents
        (last decision, step and reward counts), also of agents that had no step to process."""
        super().end_interrupted_episodes(last_info, interrupted_info)
        info = interrupted_info.get(self.brain_name)
        if info is None:
            return
        for agent_id in agent_ids(info):
            agent_buffer = dict.get(self.training_buffer, agent_id)
            if agent_buffer is not None:
                agent_buffer.reset_agent()
            self.episode_steps.pop(agent_id, None)
            for rewards in self.collected_rewards.values():
                rewards.pop(agent_id, None)

    def _update_end_episode_stats(self, agent_id: AgentId) -> None:
        """Record the finished episode of ``agent_id`` and reset its counters."""
        self.stats[EPISODE_LENGTH_TAG].append(float(self.episode_steps.get(agent_id, 0)))
        self.episode_steps[agent_id] = 0
        for name, rewards in self.collected_rewards.items():
            total = float(rewards.get(agent_id, 0.0))
            if name == "environment":
                self.stats[CUMULATIVE_REWARD_TAG].append(total)
                self.cumulative_returns_since_policy_update.append(total)
                self.reward_buffer.appendleft(total)
            else:
                self.stats[self.policy.reward_signals[name].stat_name].append(total)
            rewards[agent_id] = 0.0

    def clear_update_buffer(self) -> None:
        """Empty the update buffer."""
        self.training_buffer.reset_update_buffer()
