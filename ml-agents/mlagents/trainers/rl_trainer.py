"""Experience collection shared by the reward-signal trainers: :class:`RLTrainer`.

Per environment step, :meth:`RLTrainer.add_experiences` appends one step to the trajectory of every
agent that decided in the previous step (observations, memories, the action taken, its log
probabilities, the reward of every signal, the value estimates), and keeps per-agent reward sums for
the statistics. The per-step work on the whole batch of agents (rewards of all signals, index lookups)
is done once with numpy; per agent only its row is appended. Subclasses say what of the policy's
outputs to keep (:meth:`add_policy_outputs`, :meth:`add_rewards_outputs`) and what to do with a
finished trajectory.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any, Dict, List, Optional

import numpy as np

from mlagents.envs.brain import AllBrainInfo, BrainInfo
from mlagents.trainers.buffer import Buffer
from mlagents.trainers.components.reward_signals import RewardSignalResult
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.trainer import Trainer

LOGGER = logging.getLogger("mlagents.trainers")

RewardSignalResults = Dict[str, RewardSignalResult]

ENTROPY_TAG = "Policy/Entropy"
LEARNING_RATE_TAG = "Policy/Learning Rate"
EPISODE_LENGTH_TAG = "Environment/Episode Length"
CUMULATIVE_REWARD_TAG = "Environment/Cumulative Reward"


def _cached(cache: Dict[int, Any], info: BrainInfo, compute: Any) -> Any:
    """``compute(info)``, computed once per BrainInfo object for the lifetime of ``cache``."""
    key = id(info)
    if key not in cache:
        cache[key] = compute(info)
    return cache[key]


def _index_map(info: BrainInfo) -> Dict[Any, int]:
    return {agent_id: i for i, agent_id in enumerate(info.agents)}


class RLTrainer(Trainer):
    """Base of the trainers whose policies learn from reward signals (PPO).

    Same constructor arguments as :class:`~mlagents.trainers.trainer.Trainer`.

    :raises UnityTrainerException: the ``reward_signals`` section is empty.
    :ivar training_buffer: trajectories per agent and the update buffer.
    :ivar episode_steps: agent id -> steps of its current episode.
    :ivar collected_rewards: ``"environment"`` and each signal name -> agent id -> reward sum of the
        current episode (the environment's raw reward, the signals' scaled rewards).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "reward_signals" in self.trainer_parameters and not self.trainer_parameters["reward_signals"]:
            raise UnityTrainerException(
                f"No reward signals were defined. At least one must be used with {self.__class__.__name__}."
            )
        self.training_buffer = Buffer()
        self.episode_steps: Dict[Any, int] = defaultdict(int)
        self.collected_rewards: Dict[str, Dict[Any, float]] = {"environment": defaultdict(float)}

    # ------------------------------------------------------------------ collection

    def construct_curr_info(self, next_info: BrainInfo) -> BrainInfo:
        """A BrainInfo with the agents of ``next_info``, each as of its last decision.

        Agents that have not decided yet are taken from ``next_info`` itself.
        """
        rows = []
        index_maps: Dict[int, Dict[Any, int]] = {}
        for agent_id in next_info.agents:
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
        memories: Any = np.zeros((0, 0))
        if self.policy.use_recurrent:
            memory_cache: Dict[int, np.ndarray] = {}
            memories = np.asarray(
                [_cached(memory_cache, info, self.policy.memories_of)[idx] for info, idx in rows],
                dtype=np.float32,
            ).reshape(len(rows), self.policy.m_size)

        def column(name: str) -> Optional[List[Any]]:
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
            agents=list(next_info.agents),
            local_done=column("local_done"),
            vector_action=None if prev_actions is None else np.asarray(prev_actions),
            text_action=column("previous_text_actions"),
            max_reached=column("max_reached"),
            action_mask=None if masks is None else np.asarray(masks),
        )

    def add_experiences(
        self, curr_all_info: AllBrainInfo, next_all_info: AllBrainInfo, take_action_outputs: Optional[Dict[str, Any]]
    ) -> None:
        """Append the transition ``curr_all_info -> next_all_info`` to the agents' trajectories.

        :param curr_all_info: the infos in which the actions were decided.
        :param next_all_info: the infos after the environment step.
        :param take_action_outputs: the policy's outputs for this brain at that decision (None when
            the brain did not decide).
        """
        curr_info = curr_all_info[self.brain_name]
        next_info = next_all_info[self.brain_name]
        policy = self.policy
        if take_action_outputs:
            self.stats[ENTROPY_TAG].append(float(np.mean(take_action_outputs["entropy"])))
            self.stats[LEARNING_RATE_TAG].append(float(take_action_outputs["learning_rate"]))
            for name, signal in policy.reward_signals.items():
                self.stats[signal.value_name].append(float(np.mean(take_action_outputs["value_heads"][name])))

        for agent_id in curr_info.agents:
            agent_buffer = self.training_buffer[agent_id]
            agent_buffer.last_brain_info = curr_info
            agent_buffer.last_take_action_outputs = take_action_outputs

        if list(curr_info.agents) != list(next_info.agents):
            curr_to_use = self.construct_curr_info(next_info)
        else:
            curr_to_use = curr_info
        rewards_out: RewardSignalResults = {
            name: signal.evaluate(curr_to_use, next_info) for name, signal in policy.reward_signals.items()
        }
        env_rewards = np.asarray(next_info.rewards, dtype=np.float32).reshape(-1)
        next_done = np.asarray(next_info.local_done, dtype=bool).reshape(-1)
        index_maps: Dict[int, Dict[Any, int]] = {}
        memory_cache: Dict[int, np.ndarray] = {}
        mask_cache: Dict[int, np.ndarray] = {}
        use_vec = policy.use_vec_obs
        n_cameras = policy.vis_obs_size

        for next_idx, agent_id in enumerate(next_info.agents):
            agent_buffer = self.training_buffer[agent_id]
            stored_info = agent_buffer.last_brain_info
            if stored_info is not None:
                stored_outputs = agent_buffer.last_take_action_outputs
                idx = _cached(index_maps, stored_info, _index_map)[agent_id]
                if not stored_info.local_done[idx] and stored_outputs is not None:
                    for i in range(n_cameras):
                        agent_buffer[f"visual_obs{i}"].append(stored_info.visual_observations[i][idx])
                        agent_buffer[f"next_visual_obs{i}"].append(next_info.visual_observations[i][next_idx])
                    if use_vec:
                        agent_buffer["vector_obs"].append(stored_info.vector_observations[idx])
                        agent_buffer["next_vector_in"].append(next_info.vector_observations[next_idx])
                    if policy.use_recurrent:
                        memories = _cached(memory_cache, stored_info, policy.memories_of)
                        agent_buffer["memory"].append(memories[idx])
                    agent_buffer["masks"].append(1.0)
                    agent_buffer["done"].append(bool(next_done[next_idx]))
                    self.add_policy_outputs(stored_outputs, agent_id, idx)
                    if not policy.use_continuous_act:
                        masks = _cached(mask_cache, stored_info, policy.action_masks_of)
                        agent_buffer["action_mask"].append(masks[idx], padding_value=1)
                    if stored_info.previous_vector_actions is not None:
                        agent_buffer["prev_action"].append(stored_info.previous_vector_actions[idx])
                    self.add_rewards_outputs(rewards_out, stored_outputs["value_heads"], agent_id, idx, next_idx)
                    self.collected_rewards["environment"][agent_id] += float(env_rewards[next_idx])
                    for name, result in rewards_out.items():
                        self.collected_rewards[name][agent_id] += float(result.scaled_reward[next_idx])
            if not next_done[next_idx]:
                self.episode_steps[agent_id] += 1

    def add_policy_outputs(self, take_action_outputs: Dict[str, Any], agent_id: Any, agent_idx: int) -> None:
        """Append what the trainer keeps of the policy's outputs for one agent."""
        raise NotImplementedError

    def add_rewards_outputs(
        self,
        rewards_out: RewardSignalResults,
        values: Dict[str, np.ndarray],
        agent_id: Any,
        agent_idx: int,
        agent_next_idx: int,
    ) -> None:
        """Append the rewards (index ``agent_next_idx``) and value estimates (index ``agent_idx``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ episodes

    def end_episode(self) -> None:
        """Forget partial trajectories, step counters and reward sums (the environment was reset)."""
        self.training_buffer.reset_local_buffers()
        for agent_id in self.episode_steps:
            self.episode_steps[agent_id] = 0
        for rewards in self.collected_rewards.values():
            for agent_id in rewards:
                rewards[agent_id] = 0.0

    def _update_end_episode_stats(self, agent_id: Any) -> None:
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
