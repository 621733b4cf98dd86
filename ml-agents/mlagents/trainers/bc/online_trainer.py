"""Behavioural cloning from a teacher that plays at the same time: :class:`OnlineBCTrainer`
(``trainer: online_bc``).

The teacher is another brain of the environment, ``brain_to_imitate``, that Python does not control
but whose agents are broadcast (their observations and the actions they took reach Python; in the
example builds a heuristic or player brain started with broadcast on). Every step, each teacher agent
that was not done adds its observation and the action it then took to its trajectory; a trajectory
moves into the demonstration buffer when its episode ends or it holds more than ``time_horizon``
steps.

The teacher's text observation may steer the recording, as the original's BC Teacher Helper did:
``"<record>,<reset>"`` (lower-case ``true``/``false``). Steps are kept only while ``record`` is true
in both infos (an empty text records), and ``reset`` true clears the demonstrations collected so far.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

import numpy as np

from mlagents.envs.action_info import ActionInfoOutputs
from mlagents.envs.brain import AllBrainInfo, BrainInfo
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.bc.trainer import BCTrainer
from mlagents.trainers.settings import OnlineBCSettings

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["OnlineBCTrainer"]


def _record_flags(info: BrainInfo, row: int) -> tuple[bool, bool]:
    """(record, reset) from the teacher's text observation ``"<record>,<reset>"`` (empty: record)."""
    texts = info.text_observations
    text = texts[row] if texts is not None and row < len(texts) else ""
    if not text:
        return True, False
    parts = [part.strip().lower() for part in str(text).split(",")]
    record = parts[0] == "true"
    reset = len(parts) > 1 and parts[1] == "true"
    return record, reset


class OnlineBCTrainer(BCTrainer):
    """Learns the policy of one brain from the broadcast brain ``brain_to_imitate``.

    Same constructor arguments as :class:`~mlagents.trainers.bc.trainer.BCTrainer`.
    """

    settings_class = OnlineBCSettings
    settings: OnlineBCSettings

    @property
    def brain_to_imitate(self) -> str:
        """The teacher brain (``brain_to_imitate``)."""
        return self.settings.brain_to_imitate

    @property
    def time_horizon(self) -> int:
        """Teacher steps per agent collected before they join the demonstrations."""
        return self.settings.time_horizon

    def check_environment_brains(self, brain_names: Collection[str]) -> None:
        """:raises UnityTrainerException: the environment has no brain ``brain_to_imitate`` (called by
        the controller with the brains of the first observations, before the first step)."""
        self.settings.check_brain_to_imitate(self.brain_name, brain_names)

    def add_experiences(
        self, curr_info: AllBrainInfo, next_info: AllBrainInfo, take_action_outputs: ActionInfoOutputs
    ) -> None:
        """Append the teacher's step (observation before, action taken) to its agents' trajectories,
        then count the student's rewards."""
        info_teacher = curr_info.get(self.brain_to_imitate)
        next_teacher = next_info.get(self.brain_to_imitate)
        if info_teacher is None or next_teacher is None:
            super().add_experiences(curr_info, next_info, take_action_outputs)
            return
        for agent_id in agent_ids(info_teacher):
            self.demonstration_buffer[agent_id].last_brain_info = info_teacher
        next_actions = next_teacher.previous_vector_actions
        for next_row, agent_id in enumerate(agent_ids(next_teacher)):
            known = dict.get(self.demonstration_buffer, agent_id)
            stored = None if known is None else known.last_brain_info
            if stored is None or next_actions is None:
                continue
            agent_buffer = self.demonstration_buffer[agent_id]
            row = list(agent_ids(stored)).index(agent_id)
            if bool(np.asarray(stored.local_done).reshape(-1)[row]):
                continue
            record_before, _ = _record_flags(stored, row)
            record_after, reset = _record_flags(next_teacher, next_row)
            if reset:
                self.demonstration_buffer.reset_update_buffer()
            if not (record_before and record_after):
                continue
            for i in range(len(stored.visual_observations)):
                agent_buffer[f"visual_obs{i}"].append(stored.visual_observations[i][row])
            if self.policy.use_vec_obs:
                agent_buffer["vector_obs"].append(
                    np.asarray(stored.vector_observations[row], dtype=np.float32)
                )
            if self.policy.use_recurrent:
                agent_buffer["memory"].append(self.policy.memories_of(stored)[row])
                previous = stored.previous_vector_actions
                agent_buffer["prev_action"].append(
                    np.zeros(len(self.brain.vector_action_space_size))
                    if previous is None
                    else np.asarray(previous[row], dtype=np.float32)
                )
            agent_buffer["actions"].append(np.asarray(next_actions[next_row], dtype=np.float32))
        super().add_experiences(curr_info, next_info, take_action_outputs)

    def process_experiences(self, current_info: AllBrainInfo, next_info: AllBrainInfo) -> None:
        """Move the teacher trajectories that ended or outgrew ``time_horizon`` into the
        demonstrations, then record the student's finished episodes."""
        info_teacher = next_info.get(self.brain_to_imitate)
        if info_teacher is None:
            super().process_experiences(current_info, next_info)
            return
        dones = np.asarray(info_teacher.local_done, dtype=bool).reshape(-1)
        for row, agent_id in enumerate(agent_ids(info_teacher)):
            known = dict.get(self.demonstration_buffer, agent_id)
            actions = None if known is None else dict.get(known, "actions")
            if known is None or actions is None:
                continue
            agent_buffer = self.demonstration_buffer[agent_id]
            if dones[row] or len(actions) > self.time_horizon:
                if len(actions) > 0:
                    self.demonstration_buffer.append_update_buffer(
                        agent_id, batch_size=None, training_length=self.policy.sequence_length
                    )
                agent_buffer.reset_agent()
        super().process_experiences(current_info, next_info)
