"""The demonstration recorder: one brain's agents' decisions written to ``<name>.demo``.

The file has the layout Unity ML-Agents 0.8 and 0.9 write (demonstration API version 1), so that
``mlagents.trainers.demo_loader`` (and the original's loader) read it:

* byte 0: varint length + ``DemonstrationMetaProto`` (written with zero counts when the file is
  created, rewritten with the final counts by :meth:`DemonstrationRecorder.close`), zero bytes up
  to byte 32;
* byte 33: varint length + ``BrainParametersProto`` of the recorded brain (``is_training`` false);
* one varint length + ``AgentInfoProto`` per recorded decision, exactly as sent on the wire
  (observations, visual observations as PNG, the action stored at the previous decision, reward,
  done, max-step flag, memories, action mask);
* after closing, a raw copy of the final meta message (as Unity leaves one; readers stop after
  ``number_steps`` records).

A Unity recorder follows one agent; a loader turns consecutive records into (observation, action
taken) pairs. To keep that true with many agents, the recorder keeps each agent's current episode
in memory and appends it to the file when the episode ends, so an agent's steps are contiguous.
Episodes still running when the recorder closes are appended then, one agent after the other
(with one agent, the file is exactly what Unity writes). Only where one agent's steps end and
another's begin (after a done, or between two unfinished episodes) does a pair mix two agents.
With ``whole_episodes`` the recorder keeps only finished episodes: it stops once the file holds
``max_steps`` decisions (it may hold a few more, the rest of the last episodes) and drops the
episodes still running at close.
With ``episode_prefix`` the recorder keeps only the first decisions of every episode (many episode
starts in a small file, for scenes whose episodes are long): the last kept decision is marked as
the end of an interrupted episode (done, max step reached), as an agent whose max step came
there would send it, and the rest of that episode is not recorded.

The meta counts as Unity's does for one agent: ``number_steps`` is the decisions in the file,
``number_episodes`` the episodes in it, an unfinished one included (Unity counts one more episode
than the dones it recorded, for the one running at close), and ``mean_reward`` the sum of the
recorded decisions' rewards over ``number_episodes``.
"""

from __future__ import annotations

import logging
import os
import re
from typing import BinaryIO

import numpy as np

from mlagents.envs.communicator_objects import DemonstrationMetaProto

from .closing import Closable
from .messages import DecisionBatch
from .specs import BrainSpec
from .wire import agent_info_protos, brain_parameters_proto, varint

logger = logging.getLogger("mlagents.example_envs")

#: ``DemonstrationMetaProto.api_version`` of the files written here.
DEMONSTRATION_API_VERSION = 1
#: Bytes reserved at the start of the file for the delimited meta message.
META_DATA_BYTES = 32
#: Longest demonstration name kept (Unity truncates the sanitised name to 16 characters).
MAX_NAME_LENGTH = 16
DEMO_EXTENSION = ".demo"

_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9 \-]")


def sanitize_demonstration_name(name: str) -> str:
    """Unity's rule: keep letters, digits, spaces and hyphens, then at most 16 characters.

    :raises ValueError: nothing is left of ``name``.
    """
    cleaned = _NOT_ALLOWED.sub("", name)[:MAX_NAME_LENGTH]
    if not cleaned:
        raise ValueError(
            f"The demonstration name {name!r} has no letters, digits, spaces or hyphens; choose another name."
        )
    return cleaned


def demonstration_path(folder: str, name: str) -> str:
    """``<folder>/<name>.demo``, or ``<name>_0.demo``, ``<name>_1.demo``, ... if that file exists."""
    candidate = os.path.join(folder, name + DEMO_EXTENSION)
    number = 0
    while os.path.exists(candidate):
        candidate = os.path.join(folder, f"{name}_{number}{DEMO_EXTENSION}")
        number += 1
    return candidate


class DemonstrationRecorder(Closable):
    """Records the decisions of one brain's agents to a new ``.demo`` file.

    :param brain: the recorded brain.
    :param name: the demonstration name (sanitised like Unity: ``[a-zA-Z0-9 -]``, 16 characters).
    :param folder: where the file goes (created if missing).
    :param max_steps: stop recording once this many decisions are written (0 = no limit).
    :param whole_episodes: keep finished episodes only (see the module's description).
    :param episode_prefix: keep only the first this many decisions of every episode (0 = all).
    :ivar path: the file being written.
    """

    def __init__(
        self,
        brain: BrainSpec,
        name: str,
        folder: str = ".",
        max_steps: int = 0,
        whole_episodes: bool = False,
        episode_prefix: int = 0,
    ) -> None:
        self.brain = brain
        self.name = sanitize_demonstration_name(name)
        self.max_steps = int(max_steps)
        self.whole_episodes = whole_episodes
        if episode_prefix < 0:
            raise ValueError(f"episode_prefix is {episode_prefix}; give 0 (whole episodes) or more.")
        self.episode_prefix = int(episode_prefix)
        os.makedirs(folder, exist_ok=True)
        self.path = demonstration_path(folder, self.name)
        self.number_steps = 0
        self.number_episodes = 0
        self.unfinished_episodes = 0
        self.cumulative_reward = 0.0
        # Each agent's running episode: its serialized decisions and their rewards.
        self._episodes: dict[int, list[tuple[bytes, float]]] = {}
        self._buffered = 0
        # Agents whose running episode was cut at ``episode_prefix``: skipped until its done.
        self._cut: set[int] = set()
        # Open for the recorder's lifetime; close() (or the context manager) closes it.
        self._file: BinaryIO | None = open(self.path, "wb")  # noqa: SIM115
        self._write_meta(self._meta(0, 0, 0.0))
        self._file.seek(META_DATA_BYTES + 1)
        parameters = brain_parameters_proto(brain)
        parameters.is_training = False
        self._write_delimited(parameters.SerializeToString())

    @property
    def full(self) -> bool:
        """True once ``max_steps`` decisions are recorded (further batches are ignored); with
        ``whole_episodes``, once the file holds them."""
        recorded = self.number_steps if self.whole_episodes else self.number_steps + self._buffered
        return 0 < self.max_steps <= recorded

    @property
    def closed(self) -> bool:
        return self._file is None

    def record(self, batch: DecisionBatch) -> None:
        """Record the decisions of one exchange point of the brain (the batch sent for it)."""
        if self._file is None or self.full or len(batch.agents) == 0:
            return
        infos = agent_info_protos(batch)
        rewards = batch.rewards.tolist()
        for agent, info, reward, done in zip(
            batch.agents.tolist(), infos, rewards, batch.local_done.tolist()
        ):
            if agent in self._cut:
                # The rest of an episode cut at its prefix; the agent's next episode is recorded.
                if done:
                    self._cut.discard(agent)
                continue
            steps = self._episodes.setdefault(agent, [])
            cut = not done and 0 < self.episode_prefix <= len(steps) + 1
            if cut:
                info.done = True
                info.max_step_reached = True
                self._cut.add(agent)
            steps.append((info.SerializeToString(), float(np.float32(reward))))
            self._buffered += 1
            if done or cut:
                self._write_episode(agent, finished=True)
            if self.full:
                return

    def close(self) -> None:
        """Write the final meta (steps, episodes, mean reward) and close the file. Idempotent."""
        if self._file is None:
            return
        for agent in list(self._episodes):
            if self.whole_episodes:
                self._buffered -= len(self._episodes.pop(agent))
            else:
                self._write_episode(agent, finished=False)
        meta = self._final_meta()
        # Unity writes the meta at the end of the file before it rewrites the header; readers
        # stop after number_steps records and never parse this copy.
        self._file.seek(0, os.SEEK_END)
        self._file.write(meta)
        self._write_meta(meta)
        self._file.close()
        self._file = None
        logger.info(
            "Demonstration %s: %d steps, %d episodes written to %s.",
            self.name,
            self.number_steps,
            self.number_episodes,
            self.path,
        )

    # ------------------------------------------------------------------ internals
    def _write_episode(self, agent: int, finished: bool) -> None:
        """Append the agent's buffered steps (its episode, ``finished`` with a done)."""
        assert self._file is not None
        steps = self._episodes.pop(agent, [])
        self._buffered -= len(steps)
        if 0 < self.max_steps <= self.number_steps:
            return
        if self.max_steps and not self.whole_episodes:
            steps = steps[: self.max_steps - self.number_steps]
        if not steps:
            return
        widest = self._meta(
            self.number_steps + len(steps), self.number_episodes + self.unfinished_episodes + 2, -1.0
        )
        if len(varint(len(widest))) + len(widest) > META_DATA_BYTES + 1:
            # The header has a fixed size: stop before the counts stop fitting in it.
            logger.warning("Demonstration %s: the header is full; recording stops here.", self.name)
            self.max_steps = self.number_steps
            return
        self._file.seek(0, os.SEEK_END)
        for raw, _ in steps:
            self._write_delimited(raw)
        self.number_steps += len(steps)
        self.number_episodes += int(finished)
        self.unfinished_episodes += int(not finished)
        # Summed in float32, the precision of Unity's running total.
        self.cumulative_reward = float(
            np.float32(self.cumulative_reward) + np.float32(sum(r for _, r in steps))
        )

    def _meta(self, steps: int, episodes: int, mean_reward: float) -> bytes:
        """The serialized meta message with these counts."""
        return DemonstrationMetaProto(
            api_version=DEMONSTRATION_API_VERSION,
            demonstration_name=self.name,
            number_steps=steps,
            number_episodes=episodes,
            mean_reward=mean_reward,
        ).SerializeToString()

    def _final_meta(self) -> bytes:
        # Every episode in the file, unfinished ones included. With one agent Unity counts one
        # episode more than the recorded dones (the one running at close), even when it is empty.
        episodes = self.number_episodes + self.unfinished_episodes
        if not self.whole_episodes:
            episodes = max(episodes, self.number_episodes + 1)
        mean = self.cumulative_reward / episodes if episodes else 0.0
        return self._meta(self.number_steps, episodes, mean)

    def _write_meta(self, meta: bytes) -> None:
        assert self._file is not None
        self._file.seek(0)
        self._file.write(varint(len(meta)) + meta)

    def _write_delimited(self, raw: bytes) -> None:
        assert self._file is not None
        self._file.write(varint(len(raw)) + raw)
