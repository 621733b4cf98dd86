"""The PPO trainer: trajectories, GAE, update schedule (:class:`PPOTrainer`).

A trajectory chunk of an agent is processed when its episode ends or when it holds more than
``time_horizon`` steps. For every reward signal k (discount ``gamma_k``) and the trainer's ``lambd``::

    delta_t = r_t + gamma_k V_{t+1} - V_t      (V_n = value of the state after the chunk, or 0 at a
    A_t     = sum_j (gamma_k lambd)^j delta_{t+j}   true episode end for signals using terminal states)
    R_t     = A_t + V_t

``advantages`` and ``discounted_returns`` are the means over the signals. The chunk then moves to the
update buffer; when that holds more than ``buffer_size`` steps, :meth:`PPOTrainer.update_policy`
runs ``num_epoch`` passes of mini-batches of ``batch_size`` steps and clears it. With a
``pretraining`` section, the policy's BC module then clones the demonstrations
(:mod:`mlagents.trainers.components.bc.module`, statistic ``Losses/Pretraining Loss``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.timers import timed
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.buffer import AgentBufferField, Columns
from mlagents.trainers.ppo.multi_gpu_policy import MultiGpuPPOPolicy, tower_devices
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.rl_trainer import RLTrainer, Rows, take_rows
from mlagents.trainers.settings import PPOSettings

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["PPOTrainer", "discount_rewards", "get_gae"]

_BLOCK = 64
_discount_matrices: dict[float, tuple[np.ndarray, np.ndarray]] = {}


def _discount_matrix(discount: float) -> tuple[np.ndarray, np.ndarray]:
    """(M, P) with M[t, j] = discount^(j - t) for j >= t (else 0), P[i] = discount^i, i <= _BLOCK."""
    if discount not in _discount_matrices:
        offsets = np.arange(_BLOCK)[None, :] - np.arange(_BLOCK)[:, None]
        matrix = np.where(offsets >= 0, float(discount) ** np.maximum(offsets, 0), 0.0)
        powers = float(discount) ** np.arange(_BLOCK + 1, dtype=np.float64)
        if len(_discount_matrices) > 64:
            _discount_matrices.clear()
        _discount_matrices[discount] = (matrix, powers)
    return _discount_matrices[discount]


def discount_rewards(r: np.ndarray, gamma: float = 0.99, value_next: float = 0.0) -> np.ndarray:
    """Discounted returns ``R_t = r_t + gamma R_{t+1}`` with ``R_n = value_next``.

    Computed blockwise with matrix products (no Python loop over steps).

    :param r: rewards, shape (n,).
    :returns: float64 array of shape (n,).
    """
    rewards = np.asarray(r, dtype=np.float64).reshape(-1)
    n = len(rewards)
    out = np.empty(n, dtype=np.float64)
    matrix, powers = _discount_matrix(float(gamma))
    carry = float(value_next)  # the return from the step just after the current block
    end = n
    while end > 0:
        start = max(0, end - _BLOCK)
        size = end - start
        out[start:end] = matrix[:size, :size] @ rewards[start:end] + powers[size:0:-1] * carry
        carry = out[start]
        end = start
    return out


def get_gae(
    rewards: np.ndarray,
    value_estimates: np.ndarray,
    value_next: float = 0.0,
    gamma: float = 0.99,
    lambd: float = 0.95,
) -> np.ndarray:
    """Generalized advantage estimates (Schulman et al. 2015).

    :param rewards: r_t, shape (n,).
    :param value_estimates: V(s_t), shape (n,).
    :param value_next: V of the state after the last step (bootstrap).
    :returns: A_t, float64 (n,).
    """
    values = np.append(np.asarray(value_estimates, dtype=np.float64).reshape(-1), float(value_next))
    delta = np.asarray(rewards, dtype=np.float64).reshape(-1) + gamma * values[1:] - values[:-1]
    return discount_rewards(delta, gamma=gamma * lambd)


class PPOTrainer(RLTrainer):
    """Trains the PPO policy of one brain.

    :param brain: the brain's parameters.
    :param reward_buff_cap: capacity of the reward buffer (curriculum ``min_lesson_length``).
    :param trainer_parameters: the brain's :class:`~mlagents.trainers.settings.PPOSettings`, or its
        hyper-parameters as a dict (parsed once here, with the same checks).
    :param training: learn (``--train``) or only act.
    :param load: restore the newest checkpoint of ``model_path`` (also when the settings say ``load``).
    :param seed: seed of the policy.
    :param run_id: the run id shown on the console.
    :param multi_gpu: split each update of the policy network over the visible GPUs
        (:class:`~mlagents.trainers.ppo.multi_gpu_policy.MultiGpuPPOPolicy`); with fewer than two,
        the PPO policy is used (and a line logged saying so).
    :raises UnityTrainerException: a required hyper-parameter is missing or invalid, or
        ``reward_signals`` is empty.
    """

    settings_class = PPOSettings
    settings: PPOSettings
    policy: PPOPolicy

    def __init__(
        self,
        brain: BrainParameters,
        reward_buff_cap: int,
        trainer_parameters: PPOSettings | Mapping[str, Any],
        training: bool,
        load: bool,
        seed: int,
        run_id: str,
        multi_gpu: bool = False,
    ) -> None:
        super().__init__(brain, trainer_parameters, training, run_id, reward_buff_cap)
        self.settings.require_paths(self.config_source())
        self.seed = int(seed)
        devices = tower_devices() if multi_gpu else []
        if len(devices) >= 2:
            LOGGER.info("Brain %s: each update is split over %s.", brain.brain_name, ", ".join(devices))
            self.policy = MultiGpuPPOPolicy(self.seed, brain, self.settings, self.is_training, load, devices)
        else:
            if multi_gpu:
                LOGGER.info(
                    "Brain %s: --multi-gpu found %d GPU(s), fewer than two; training on one device.",
                    brain.brain_name,
                    len(devices),
                )
            self.policy = PPOPolicy(self.seed, brain, self.settings, self.is_training, load)
        self.load = self.policy.load
        for name in self.policy.reward_signals:
            self.collected_rewards[name] = defaultdict(float)
        self.time_horizon = self.settings.time_horizon
        self.batch_size = self.settings.batch_size
        self.buffer_size = self.settings.buffer_size
        self.num_epoch = self.settings.num_epoch
        self.lambd = self.settings.lambd
        # The mini-batch order gets a random stream of its own. The policy samples its actions from a
        # generator seeded with the same seed; sharing that stream would make each shuffle replay
        # the random numbers that chose the buffered actions (the two draw at nearly the same rate),
        # a coupling the original does not have.
        self.shuffle_rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(1,)))

    # ------------------------------------------------------------------ collection hooks

    def policy_output_columns(self, take_action_outputs: dict[str, Any], agent_idx: Rows) -> Columns:
        """The actions (``actions``), their log-probabilities (``action_probs``) and, for continuous
        actions, the noise (``random_normal_epsilon``) and the unclipped actions (``actions_pre``)
        of the agents at rows ``agent_idx`` (None: all, in order)."""
        columns: Columns = {}
        if self.policy.use_continuous_act:
            columns["actions_pre"] = take_rows(take_action_outputs["pre_action"], agent_idx)
            columns["random_normal_epsilon"] = take_rows(
                take_action_outputs["random_normal_epsilon"], agent_idx
            )
        columns["actions"] = take_rows(take_action_outputs["action"], agent_idx)
        columns["action_probs"] = take_rows(take_action_outputs["action_probs"], agent_idx)
        return columns

    @timed
    def process_experiences(self, current_info: AllBrainInfo, new_info: AllBrainInfo) -> None:
        """Process the trajectories that ended (episode end) or are long enough (time horizon).

        Their bootstrap values are computed in one network call; each chunk gets its advantages and
        returns and moves to the update buffer (when training; otherwise it is dropped). Finished
        episodes add to the statistics.
        """
        info = new_info[self.brain_name]
        # More than time_horizon steps: 0.9's rule for PPO.
        agents, dones, max_reached, ready = self.ready_trajectories(info, self.time_horizon + 1)
        if not ready:
            return
        if not self.is_training:
            # Only running the policy: keep the statistics, but no experience piles up for updates.
            for row in ready:
                self.training_buffer[agents[row]].reset_agent()
                if dones[row]:
                    self._update_end_episode_stats(agents[row])
            return
        rows: list[tuple[BrainInfo, int]] = []
        terminal: list[bool] = []
        for row in ready:
            agent_id = agents[row]
            reached = bool(max_reached[row])
            last_info = self.training_buffer[agent_id].last_brain_info
            if reached and last_info is not None:
                # The episode was cut by the agent's step limit: bootstrap from the state in which the
                # last action was taken (what the original does), not from the reset state.
                rows.append((last_info, agent_ids(last_info).index(agent_id)))
            else:
                rows.append((info, row))
            terminal.append(bool(dones[row]) and not reached)
        bootstrap = self.policy.get_batched_value_estimates(rows, terminal)

        for position, row in enumerate(ready):
            agent_id = agents[row]
            agent_buffer = self.training_buffer[agent_id]
            advantages = []
            returns = []
            for name, signal in self.policy.reward_signals.items():
                rewards = np.asarray(agent_buffer[f"{name}_rewards"], dtype=np.float64)
                values = np.asarray(agent_buffer[f"{name}_value_estimates"], dtype=np.float64)
                advantage = get_gae(
                    rewards, values, float(bootstrap[name][position]), signal.gamma, self.lambd
                )
                local_return = advantage + values
                agent_buffer[f"{name}_returns"].set(local_return.astype(np.float32))
                agent_buffer[f"{name}_advantage"].set(advantage.astype(np.float32))
                advantages.append(advantage)
                returns.append(local_return)
            agent_buffer["advantages"].set(np.mean(advantages, axis=0).astype(np.float32))
            agent_buffer["discounted_returns"].set(np.mean(returns, axis=0).astype(np.float32))
            self.training_buffer.append_update_buffer(
                agent_id, batch_size=None, training_length=self.policy.sequence_length
            )
            agent_buffer.reset_agent()
            if dones[row]:
                self._update_end_episode_stats(agent_id)

    # ------------------------------------------------------------------ updates

    def is_ready_update(self) -> bool:
        """True when the update buffer holds more than ``buffer_size`` steps."""
        return len(self.training_buffer.update_buffer["actions"]) > self.buffer_size

    @timed
    def update_policy(self) -> None:
        """Learn from the update buffer, then empty it.

        Advantages are normalized over the whole buffer; each of the ``num_epoch`` passes shuffles
        whole sequences and takes ``floor(len / batch_size)`` mini-batches of ``batch_size`` steps
        (rounded down to whole sequences for recurrent policies; the remainder is dropped).
        """
        update_buffer = self.training_buffer.update_buffer
        buffer_length = len(update_buffer["actions"])
        returns = self.cumulative_returns_since_policy_update
        self.trainer_metrics.start_policy_update_timer(
            number_experiences=buffer_length, mean_return=float(np.mean(returns)) if returns else 0.0
        )
        self.cumulative_returns_since_policy_update = []
        sequence_length = self.policy.sequence_length
        n_sequences = max(self.batch_size // sequence_length, 1)
        batch_steps = n_sequences * sequence_length

        # Camera images stay lists and each mini-batch stacks the ones it draws, as stored (uint8
        # codes for a colour camera; the policy's feed decodes them to float32, see
        # mlagents.trainers.buffer): one array of the whole buffer's images, or float32 copies of
        # images no network reads (next_visual_obs without curiosity), would add to the trainer's
        # memory during the update; the batches are the same.
        arrays: dict[str, np.ndarray] = {}
        images: dict[str, AgentBufferField] = {}
        for key, field in update_buffer.items():
            if len(field) != buffer_length:
                continue
            if buffer_length and isinstance(field[0], np.ndarray) and field[0].ndim >= 3:
                images[key] = field
            else:
                arrays[key] = np.asarray(field)
        advantages = arrays["advantages"].astype(np.float32)
        arrays["advantages"] = (advantages - advantages.mean()) / (advantages.std() + 1e-10)
        total_sequences = buffer_length // sequence_length
        stats: dict[str, list[float]] = defaultdict(list)
        for _ in range(self.num_epoch):
            order = self.shuffle_rng.permutation(total_sequences)
            steps = (order[:, None] * sequence_length + np.arange(sequence_length)).ravel()
            for start in range(0, len(steps) - batch_steps + 1, batch_steps):
                index = steps[start : start + batch_steps]
                mini_batch = {key: array[index] for key, array in arrays.items()}
                for key, field in images.items():
                    mini_batch[key] = field.take(index, decode=False)
                for key, value in self.policy.update(mini_batch, n_sequences).items():
                    stats[key].append(value)
        if stats["value_loss"]:
            self.stats["Losses/Value Loss"].append(float(np.mean(stats["value_loss"])))
            self.stats["Losses/Policy Loss"].append(float(np.mean(stats["policy_loss"])))
        for signal in self.policy.reward_signals.values():
            for stat_name, update_name in signal.stats_name_to_update_name.items():
                if stats.get(update_name):
                    self.stats[stat_name].append(float(np.mean(stats[update_name])))
        if self.policy.bc_module is not None:
            for stat_name, value in self.policy.bc_module.update().items():
                self.stats[stat_name].append(value)
        self.clear_update_buffer()
        self.trainer_metrics.end_policy_update()
