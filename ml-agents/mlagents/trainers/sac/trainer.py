"""The Soft Actor-Critic trainer: experience replay and the update schedule (:class:`SACTrainer`).

Every step of every agent keeps its observations and the next ones, the action taken, the
environment's reward (``environment_rewards``) and whether the episode ended (``done``). An agent's
steps move to the replay buffer (:attr:`SACTrainer.replay_buffer`, a
:class:`~mlagents.trainers.sac.replay_buffer.ReplayBuffer`, never cleared) when its episode ends or
it has ``time_horizon`` of them: cut into whole sequences by the update buffer
(``append_update_buffer``, which only stages one trajectory at a time here), then copied into the
replay buffer's preallocated columns. An episode cut by the step limit (``max_reached``) is not an end for
learning: its last step is stored with the observation it decided on as the next one and
``done`` false, so the target bootstraps from it.

Once the buffer holds ``batch_size`` steps and the brain has taken ``buffer_init_steps`` steps, every
``train_interval`` steps (counted in steps, whatever ``--num-envs``) the policy takes ``num_update`` gradient steps on mini-batches of
``batch_size`` steps drawn at random (whole sequences, with replacement, from the trainer's own
seeded generator), each with its rewards re-evaluated by the reward signals
(:meth:`~mlagents.trainers.components.reward_signals.RewardSignal.evaluate_batch`). A buffer longer
than ``buffer_size`` is then cut to its newest 80 %. The reward signals with a network then learn
from ``reward_signal_num_update`` mini-batches of their own, and the pretraining module (if any)
takes its step.

TensorBoard: ``Losses/Value Loss`` (Q1 + Q2 + value losses), ``Losses/Policy Loss``, ``Losses/Q1 Loss``,
``Losses/Q2 Loss``, ``Policy/Entropy Coeff``, besides the collection's ``Policy/Entropy``,
``Policy/Learning Rate`` and value estimates.

With ``save_replay_buffer``, the buffer is written with each checkpoint to
``<model_path>/last_replay_buffer.hdf5`` and read back with ``--load``. Despite its name (the
original's) the file is not HDF5 but a compressed numpy ``.npz`` archive
(:meth:`~mlagents.trainers.sac.replay_buffer.ReplayBuffer.save`); one written by an earlier version
(every field a float32 array) loads too.
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.timers import timed
from mlagents.trainers.agent_ids import AgentId, agent_ids
from mlagents.trainers.buffer import Columns, MiniBatch
from mlagents.trainers.rl_trainer import RLTrainer, Rows, take_rows
from mlagents.trainers.sac.policy import SACPolicy
from mlagents.trainers.sac.replay_buffer import ReplayBuffer
from mlagents.trainers.settings import SACSettings

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["BUFFER_TRUNCATE_PERCENT", "REPLAY_BUFFER_FILE", "SACTrainer"]

#: A buffer longer than ``buffer_size`` is cut to this share of it (not cut at every update).
BUFFER_TRUNCATE_PERCENT = 0.8
#: The replay buffer's file in ``model_path`` (a numpy ``.npz`` archive, not HDF5, whatever its name).
REPLAY_BUFFER_FILE = "last_replay_buffer.hdf5"


class SACTrainer(RLTrainer):
    """Trains the SAC policy of one brain (see the module docstring).

    :param brain: the brain's parameters.
    :param reward_buff_cap: capacity of the reward buffer (curriculum ``min_lesson_length``).
    :param trainer_parameters: the brain's :class:`~mlagents.trainers.settings.SACSettings`, or its
        hyper-parameters as a dict (parsed here, with the same checks).
    :param training: learn (``--train``) or only act.
    :param load: restore the newest checkpoint (and, with ``save_replay_buffer``, the replay buffer).
    :param seed: seed of the policy and of the mini-batch sampling.
    :param run_id: the run id shown on the console.
    :raises UnityTrainerException: a required hyper-parameter is missing or invalid.
    """

    settings_class = SACSettings
    # The rewards are evaluated again on every mini-batch, and no value estimate is kept.
    keeps_rewards = False
    settings: SACSettings
    policy: SACPolicy
    #: The steps the mini-batches are drawn from.
    replay_buffer: ReplayBuffer

    def __init__(
        self,
        brain: BrainParameters,
        reward_buff_cap: int,
        trainer_parameters: SACSettings | Mapping[str, Any],
        training: bool,
        load: bool,
        seed: int,
        run_id: str,
    ) -> None:
        super().__init__(brain, trainer_parameters, training, run_id, reward_buff_cap)
        self.settings.require_paths(self.config_source())
        self.seed = int(seed)
        self.policy = SACPolicy(self.seed, brain, self.settings, self.is_training, load)
        self.load = self.policy.load
        for name in self.policy.reward_signals:
            self.collected_rewards[name] = defaultdict(float)
        settings = self.settings
        self.time_horizon = settings.time_horizon
        self.batch_size = settings.batch_size
        self.buffer_size = settings.buffer_size
        self.train_interval = settings.train_interval
        self.num_update = settings.num_update
        self.reward_signal_updates_per_train = settings.reward_signal_updates
        self.checkpoint_replay_buffer = settings.save_replay_buffer
        # The mini-batches are drawn from a stream of their own (the policy samples its actions and
        # its update noise from generators of the same seed).
        self.sample_rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(2,)))
        self.replay_buffer = ReplayBuffer(self.buffer_size, self.policy.sequence_length)
        self._replay_size_logged = False
        # step // train_interval at the last round of updates (None: no round yet).
        self._last_interval: int | None = None
        if self.load and self.checkpoint_replay_buffer:
            try:
                self.load_replay_buffer()
            except (OSError, ValueError) as error:
                LOGGER.warning("Replay buffer was unable to load (%s), starting from scratch.", error)

    # ------------------------------------------------------------------ replay buffer file

    @property
    def replay_buffer_path(self) -> str:
        """``<model_path>/last_replay_buffer.hdf5``."""
        return os.path.join(self.policy.model_path, REPLAY_BUFFER_FILE)

    def save_model(self) -> None:
        """Save a checkpoint and, with ``save_replay_buffer``, the replay buffer."""
        self.policy.save_model(self.get_step)
        if self.checkpoint_replay_buffer:
            self.save_replay_buffer()

    def save_replay_buffer(self) -> None:
        """Write the replay buffer to :attr:`replay_buffer_path` (replacing it only once complete)."""
        path = self.replay_buffer_path
        LOGGER.info("Saving Experience Replay Buffer to %s", path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = path + ".partial"
        with open(partial, "wb") as file_object:
            self.replay_buffer.save(file_object)
        os.replace(partial, path)

    def load_replay_buffer(self) -> None:
        """Replace the replay buffer by the one at :attr:`replay_buffer_path`.

        :raises OSError: there is no readable file.
        """
        path = self.replay_buffer_path
        LOGGER.info("Loading Experience Replay Buffer from %s", path)
        with open(path, "rb") as file_object:
            self.replay_buffer.load(file_object)
        LOGGER.info("Experience replay buffer has %d experiences.", len(self.replay_buffer))

    # ------------------------------------------------------------------ collection hooks

    def experience_columns(
        self, stored_info: BrainInfo, next_info: BrainInfo, stored_idx: Rows, next_idx: Rows
    ) -> Columns:
        """The observation columns of :class:`RLTrainer` and the environment's reward after the
        step (``environment_rewards``), which the extrinsic signal reads when it is replayed."""
        columns = super().experience_columns(stored_info, next_info, stored_idx, next_idx)
        rewards = np.asarray(next_info.rewards, dtype=np.float32).reshape(-1)
        columns["environment_rewards"] = take_rows(rewards, next_idx).tolist()
        return columns

    def policy_output_columns(self, take_action_outputs: dict[str, Any], agent_idx: Rows) -> Columns:
        """The actions taken (``actions``) of the agents at rows ``agent_idx``."""
        return {"actions": take_rows(take_action_outputs["action"], agent_idx)}

    @timed
    def process_experiences(self, current_info: AllBrainInfo, new_info: AllBrainInfo) -> None:
        """Move the steps of the agents whose episode ended or that have ``time_horizon`` steps to the
        replay buffer (when training), with the step-limit rule of the module docstring."""
        info = new_info[self.brain_name]
        agents, dones, max_reached, ready = self.ready_trajectories(info, self.time_horizon)
        for row in ready:
            agent_id = agents[row]
            agent_buffer = self.training_buffer[agent_id]
            if self.is_training:
                last_info = agent_buffer.last_brain_info
                if max_reached[row] and last_info is not None:
                    idx = agent_ids(last_info).index(agent_id)
                    for i, camera in enumerate(last_info.visual_observations):
                        agent_buffer[f"next_visual_obs{i}"][-1] = camera[idx]
                    if self.policy.use_vec_obs:
                        agent_buffer["next_vector_in"][-1] = np.asarray(last_info.vector_observations)[idx]
                    agent_buffer["done"][-1] = False
                self.move_to_replay_buffer(agent_id)
            agent_buffer.reset_agent()
            if dones[row]:
                self._update_end_episode_stats(agent_id)

    def move_to_replay_buffer(self, agent_id: AgentId) -> None:
        """Append one agent's steps to the replay buffer, cut into whole sequences (staged in the
        update buffer, emptied again), and log the buffer's size once its step is known."""
        staged = self.training_buffer.update_buffer
        self.training_buffer.append_update_buffer(
            agent_id, batch_size=None, training_length=self.policy.sequence_length
        )
        self.replay_buffer.append(staged)
        staged.clear()
        if not self._replay_size_logged:
            self._replay_size_logged = True
            replay = self.replay_buffer
            LOGGER.info(
                "Replay buffer: up to %d steps, about %.1f MB (%.0f bytes a step).",
                replay.capacity,
                replay.capacity * replay.bytes_per_step() / 1e6,
                replay.bytes_per_step(),
            )

    def clear_update_buffer(self) -> None:
        """Empty the replay buffer (and the update buffer that stages its chunks)."""
        super().clear_update_buffer()
        self.replay_buffer.clear()

    # ------------------------------------------------------------------ updates

    def is_ready_update(self) -> bool:
        """True when the replay buffer holds ``batch_size`` steps and the brain took
        ``buffer_init_steps`` steps."""
        return len(self.replay_buffer) >= self.batch_size and self.step >= self.settings.buffer_init_steps

    @timed
    def update_policy(self) -> None:
        """One round (the policy's ``num_update`` updates, then the reward signals') for every
        ``train_interval`` steps the brain took since the last round; the first round as soon as
        the buffer is ready.

        The rounds are counted in steps, not in calls: the controller calls this once per round of
        environment steps, which is one step with one environment but several with ``--num-envs``
        (how many, without ``--deterministic``, depends on which workers answered first). Counting
        steps gives every run the updates per step of a single-environment run, whatever the number
        of environments and their timing.
        """
        interval = self.step // self.train_interval
        rounds = 1 if self._last_interval is None else interval - self._last_interval
        if rounds <= 0:
            return
        self._last_interval = interval
        returns = self.cumulative_returns_since_policy_update
        self.trainer_metrics.start_policy_update_timer(
            number_experiences=len(self.replay_buffer),
            mean_return=float(np.mean(returns)) if returns else 0.0,
        )
        for _ in range(rounds):
            self.update_sac_policy()
            self.update_reward_signals()
        self.trainer_metrics.end_policy_update()

    def sample_mini_batch(self) -> MiniBatch:
        """``batch_size`` steps of whole sequences drawn from the replay buffer."""
        return self.replay_buffer.sample_mini_batch(
            self.batch_size, sequence_length=self.policy.sequence_length, rng=self.sample_rng
        )

    def update_sac_policy(self) -> None:
        """``num_update`` policy updates on fresh mini-batches, the buffer cut, the pretraining step."""
        self.cumulative_returns_since_policy_update = []
        n_sequences = max(self.batch_size // self.policy.sequence_length, 1)
        replay_buffer = self.replay_buffer
        stats: dict[str, list[float]] = defaultdict(list)
        for _ in range(self.num_update):
            if len(replay_buffer) < self.batch_size:
                break
            mini_batch = self.sample_mini_batch()
            for name, signal in self.policy.reward_signals.items():
                mini_batch[f"{name}_rewards"] = signal.evaluate_batch(mini_batch).scaled_reward
            for tag, value in self.policy.update(mini_batch, n_sequences, update_target=True).items():
                stats[tag].append(value)
        if len(replay_buffer) > self.buffer_size:
            replay_buffer.truncate(int(self.buffer_size * BUFFER_TRUNCATE_PERCENT))
        for tag, values in stats.items():
            self.stats[tag].append(float(np.mean(values)))
        if self.policy.bc_module is not None:
            for tag, value in self.policy.bc_module.update().items():
                self.stats[tag].append(value)

    def update_reward_signals(self) -> None:
        """``reward_signal_num_update`` updates of the reward signals that have a network, each on a
        mini-batch of its own."""
        n_sequences = max(self.batch_size // self.policy.sequence_length, 1)
        stats: dict[str, list[float]] = defaultdict(list)
        for _ in range(self.reward_signal_updates_per_train):
            mini_batches = {
                name: self.sample_mini_batch()
                for name, signal in self.policy.reward_signals.items()
                if signal.update_dict
            }
            if not mini_batches:
                return
            for tag, value in self.policy.update_reward_signals(mini_batches, n_sequences).items():
                stats[tag].append(value)
        for tag, values in stats.items():
            self.stats[tag].append(float(np.mean(values)))
