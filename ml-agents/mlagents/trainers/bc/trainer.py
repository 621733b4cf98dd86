"""What both behavioural-cloning trainers share: :class:`BCTrainer`.

The student brain acts with its current :class:`~mlagents.trainers.bc.policy.BCPolicy`; the trainer
keeps, per student agent, the episode's reward sum and length (``Environment/Cumulative Reward``,
``Environment/Episode Length`` at every episode end). The subclasses fill ``demonstration_buffer``:
:class:`~mlagents.trainers.bc.offline_trainer.OfflineBCTrainer` from a ``.demo`` file once,
:class:`~mlagents.trainers.bc.online_trainer.OnlineBCTrainer` from the teacher brain as it plays.

An update (whenever the demonstrations hold more than ``n_sequences`` steps) shuffles them in
whole sequences and takes at most ``batches_per_epoch`` mini-batches of ``n_sequences`` sequences,
``n_sequences = max(batch_size // sequence_length, 1)`` (``sequence_length`` is 1 without
recurrence); the mean loss is recorded as ``Losses/Cloning Loss``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from mlagents.envs.action_info import ActionInfoOutputs
from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.timers import timed
from mlagents.trainers.agent_ids import AgentId, agent_ids
from mlagents.trainers.bc.policy import BCPolicy
from mlagents.trainers.buffer import Buffer
from mlagents.trainers.settings import BCSettings
from mlagents.trainers.trainer import CUMULATIVE_REWARD_TAG, EPISODE_LENGTH_TAG, Trainer

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["BCTrainer", "CLONING_LOSS_TAG"]

CLONING_LOSS_TAG = "Losses/Cloning Loss"


class BCTrainer(Trainer):
    """Trains the BC policy of one (student) brain.

    :param brain: the student brain's parameters.
    :param trainer_parameters: its :class:`~mlagents.trainers.settings.BCSettings` (or a dict).
    :param training: learn (``--train``) or only act.
    :param load: restore the newest checkpoint of ``model_path``.
    :param seed: seed of the policy and of the shuffling.
    :param run_id: the run id shown on the console.
    :ivar demonstration_buffer: the teacher's experience; its ``update_buffer`` is learned from.
    :ivar evaluation_buffer: per student agent, the BrainInfo of its last decision.
    """

    settings_class = BCSettings
    settings: BCSettings
    policy: BCPolicy

    def __init__(
        self,
        brain: BrainParameters,
        trainer_parameters: BCSettings | Mapping[str, Any],
        training: bool,
        load: bool,
        seed: int,
        run_id: str,
    ) -> None:
        super().__init__(brain, trainer_parameters, training, run_id)
        self.settings.require_paths(self.config_source())
        self.seed = int(seed)
        self.policy = BCPolicy(self.seed, brain, self.settings, load)
        self.n_sequences = max(self.settings.batch_size // self.policy.sequence_length, 1)
        self.batches_per_epoch = self.settings.batches_per_epoch
        self.cumulative_rewards: dict[AgentId, float] = defaultdict(float)
        self.episode_steps: dict[AgentId, int] = defaultdict(int)
        self.demonstration_buffer = Buffer()
        self.evaluation_buffer = Buffer()
        # Its own random stream: the policy samples actions from a generator of the same seed, and
        # sharing it would tie the shuffles to the sampled actions.
        self.shuffle_rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(2,)))

    # ------------------------------------------------------------------ the student's episodes

    def add_experiences(
        self, curr_info: AllBrainInfo, next_info: AllBrainInfo, take_action_outputs: ActionInfoOutputs
    ) -> None:
        """Add the step's rewards to the episode sums of the student agents that decided."""
        info_student = curr_info[self.brain_name]
        next_student = next_info[self.brain_name]
        for agent_id in agent_ids(info_student):
            self.evaluation_buffer[agent_id].last_brain_info = info_student
        rewards = np.asarray(next_student.rewards, dtype=np.float64).reshape(-1)
        dones = np.asarray(next_student.local_done, dtype=bool).reshape(-1)
        for row, agent_id in enumerate(agent_ids(next_student)):
            agent_buffer = dict.get(self.evaluation_buffer, agent_id)
            if agent_buffer is None or agent_buffer.last_brain_info is None:
                continue
            self.cumulative_rewards[agent_id] += float(rewards[row])
            if not dones[row]:
                self.episode_steps[agent_id] += 1

    def process_experiences(self, current_info: AllBrainInfo, next_info: AllBrainInfo) -> None:
        """Record the episodes of the student agents that just ended."""
        next_student = next_info[self.brain_name]
        dones = np.asarray(next_student.local_done, dtype=bool).reshape(-1)
        for row, agent_id in enumerate(agent_ids(next_student)):
            if not dones[row]:
                continue
            total = float(self.cumulative_rewards.get(agent_id, 0.0))
            self.stats[CUMULATIVE_REWARD_TAG].append(total)
            self.stats[EPISODE_LENGTH_TAG].append(float(self.episode_steps.get(agent_id, 0)))
            self.reward_buffer.appendleft(total)
            self.cumulative_rewards[agent_id] = 0.0
            self.episode_steps[agent_id] = 0

    def end_episode(self) -> None:
        """Forget the student agents' partial episodes (the environment was reset)."""
        self.evaluation_buffer.reset_local_buffers()
        for agent_id in self.cumulative_rewards:
            self.cumulative_rewards[agent_id] = 0.0
        for agent_id in self.episode_steps:
            self.episode_steps[agent_id] = 0

    # ------------------------------------------------------------------ updates

    def is_ready_update(self) -> bool:
        """True when the demonstrations hold more than ``n_sequences`` steps."""
        return len(self.demonstration_buffer.update_buffer["actions"]) > self.n_sequences

    def demonstration_arrays(self) -> dict[str, np.ndarray]:
        """The demonstrations' update buffer as arrays (field name -> array, fields of full length),
        camera images as stored (codes that the policy's feed decodes)."""
        update_buffer = self.demonstration_buffer.update_buffer
        return update_buffer.stored_arrays(len(update_buffer["actions"]))

    @timed
    def update_policy(self) -> None:
        """At most ``batches_per_epoch`` gradient steps on shuffled demonstrations (see the module
        docstring); records ``Losses/Cloning Loss`` (0 when no mini-batch fits)."""
        arrays = self.demonstration_arrays()
        sequence_length = self.policy.sequence_length
        length = len(arrays["actions"])
        batch_steps = self.n_sequences * sequence_length
        num_batches = min(length // batch_steps, self.batches_per_epoch)
        # The first sequences of a random permutation of all of them: a shuffle of the whole buffer
        # of which only these are used.
        total_sequences = length // sequence_length
        order = self.shuffle_rng.choice(total_sequences, size=num_batches * self.n_sequences, replace=False)
        steps = (order[:, None] * sequence_length + np.arange(sequence_length)).ravel()
        losses = []
        for i in range(num_batches):
            index = steps[i * batch_steps : (i + 1) * batch_steps]
            mini_batch = {key: array[index] for key, array in arrays.items()}
            losses.append(self.policy.update(mini_batch, self.n_sequences)["policy_loss"])
        self.stats[CLONING_LOSS_TAG].append(float(np.mean(losses)) if losses else 0.0)
