"""Tiny in-process environments for the learning tests, and the harness that trains on them (not a
test module).

Every environment here is a :class:`TinyEnvironment`: a :class:`BaseUnityEnvironment` that steps
one or more :class:`Task` objects (one brain each, several agents, numpy-vectorised) in this process
and hands the trainers :class:`BrainInfo` objects directly, with the conventions of a Unity build:

* an agent that reports ``local_done`` shows its last observation; at the next step it starts a new
  episode (its reward is 0, the action decided on the last observation is stored but not applied);
* an episode cut by the agent's step limit is reported done with ``max_reached``;
* memories sent with the actions come back with the next observations (zeros in a new episode);
* ``previous_vector_actions`` holds each agent's last decided action;
* a brain with a *controller* (a teacher) is not external: Python does not decide for it, but its
  agents' observations and the actions the controller took are broadcast with the others.

Each task is small enough to learn in seconds, and built so that one feature is needed to score;
the best policy scores 1 on each:

====================  ==========================================================================
:class:`GoalLine`     walk to the goal end of a line, which end is in the observation (discrete or
                      continuous actions; reset parameter ``distance`` for curricula); random
                      play scores 0 on average
:class:`MaskedDoors`  :class:`GoalLine` plus a second action branch: pass one of three doors, two
                      of them closed at random each step, which only the action masks tell; a
                      closed door costs 0.5
:class:`VisualGoal`   :class:`GoalLine` whose goal end is shown only in a 20x20 camera image
:class:`RecallCue`    a cue shown at the first decision only must be answered at the third
:class:`Corridor`     a small reward for resting at the start, the real one far away, at an end
                      random play almost never reaches
====================  ==========================================================================

:func:`record_demo` writes a ``.demo`` file of a player (:class:`GoalExpert`, :class:`CorridorExpert`,
:class:`RandomPlayer`) on a task, in the layout Unity's demonstration recorder writes.
:func:`train` runs the real training loop (:class:`TrainerController.start_learning` through a
:class:`SimpleEnvManager`, wired like ``mlagents-learn``) and returns the TensorBoard scalars it wrote.

Imported as ``mlagents.trainers.tests.tiny_envs``.
"""

from __future__ import annotations

import copy
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.communicator_objects import (
    AgentInfoProto,
    BrainParametersProto,
    CustomResetParameters,
    DemonstrationMetaProto,
)
from mlagents.trainers.tests.demo_files import write_demo_file
from mlagents.trainers.tests.learn_helpers import read_scalars

# ---------------------------------------------------------------------------------------- environments


class Task(ABC):
    """The agents of one brain: their state, observations, rewards and episode ends, for all agents
    at once.

    :param brain_name: the brain's name.
    :param n_agents: agents of the brain.
    :param seed: seed of the task's own random draws (start states, goals).
    :ivar parameters: the reset parameters the task reads (name -> value); :class:`TinyEnvironment`
        offers them as the environment's and sets them at every reset.
    :ivar max_step: decisions after which an episode is cut (``max_reached``); 0 = never.
    """

    brain: BrainParameters

    def __init__(self, brain_name: str, n_agents: int, seed: int) -> None:
        self.brain_name = brain_name
        self.n = n_agents
        self.rng = np.random.default_rng(seed)
        self.parameters: dict[str, float] = {}
        self.max_step = 0

    @abstractmethod
    def reset_agents(self, rows: np.ndarray) -> None:
        """Start a new episode for the agents ``rows`` (int indices)."""

    def vector_observations(self) -> np.ndarray:
        """float (n, vector observation size) of every agent."""
        return np.zeros((self.n, 0))

    def visual_observations(self) -> list[list[np.ndarray]]:
        """Per camera, one (height, width, channels) image per agent, values in [0, 1]."""
        return []

    def action_masks(self) -> np.ndarray | None:
        """(n, sum of branch sizes), 1 = allowed, 0 = masked; None: everything allowed."""
        return None

    @abstractmethod
    def act(self, actions: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply ``actions`` (one row per agent of ``rows``) and return those agents' rewards and
        whether their episode ended (terminal state)."""


class TinyEnvironment(BaseUnityEnvironment):
    """:class:`Task` objects stepped together in this process, one brain each (see the module
    docstring for the conventions).

    :param tasks: the tasks; their brains have different names.
    :param controllers: brain name -> ``controller(task) -> actions (n, action length)`` for the
        brains Python does not control (teachers); their agents are broadcast.
    :ivar resets: every reset, in order: (steps taken before it, the reset parameters after it).
    :ivar steps: steps taken since the environment was created.
    :ivar closed: whether :meth:`close` was called.
    """

    def __init__(
        self, tasks: Sequence[Task], controllers: Mapping[str, Callable[[Task], np.ndarray]] | None = None
    ) -> None:
        self.tasks = {task.brain.brain_name: task for task in tasks}
        self.controllers = dict(controllers or {})
        self._parameters: dict[str, float] = {}
        for task in tasks:
            self._parameters.update(task.parameters)
        self._global_done: bool | None = None
        self._done: dict[str, np.ndarray] = {}
        self._steps: dict[str, np.ndarray] = {}
        self._previous: dict[str, np.ndarray] = {}
        self._memories: dict[str, np.ndarray] = {}
        self.resets: list[tuple[int, dict[str, float]]] = []
        self.steps = 0
        self.closed = False

    @property
    def global_done(self) -> bool | None:
        return self._global_done

    @property
    def external_brains(self) -> dict[str, BrainParameters]:
        return {name: task.brain for name, task in self.tasks.items() if name not in self.controllers}

    @property
    def reset_parameters(self) -> dict[str, float]:
        return dict(self._parameters)

    def close(self) -> None:
        self.closed = True

    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters: CustomResetParameters | None = None,
    ) -> AllBrainInfo:
        for name, value in (config or {}).items():
            if name in self._parameters:
                self._parameters[name] = float(value)
        self.resets.append((self.steps, dict(self._parameters)))
        self._global_done = False
        infos = {}
        for name, task in self.tasks.items():
            task.parameters = {key: self._parameters[key] for key in task.parameters}
            task.reset_agents(np.arange(task.n))
            self._done[name] = np.zeros(task.n, dtype=bool)
            self._steps[name] = np.zeros(task.n, dtype=np.int64)
            self._previous[name] = np.zeros((task.n, task.brain.action_length))
            self._memories[name] = np.zeros((task.n, 0))
            nothing = np.zeros(task.n, dtype=bool)
            infos[name] = self._brain_info(name, np.zeros(task.n), nothing, nothing)
        return infos

    def step(
        self,
        vector_action: Any = None,
        memory: Any = None,
        text_action: Any = None,
        value: Any = None,
    ) -> AllBrainInfo:
        self.steps += 1
        infos = {}
        for name, task in self.tasks.items():
            if name in self.controllers:
                actions = self.controllers[name](task)
            else:
                actions = vector_action[name] if isinstance(vector_action, Mapping) else vector_action
                memories = memory.get(name) if isinstance(memory, Mapping) else memory
                if memories is not None and np.size(memories) > 0:
                    self._memories[name] = np.asarray(memories, dtype=np.float64).reshape(task.n, -1).copy()
            actions = np.asarray(actions, dtype=np.float64).reshape(task.n, task.brain.action_length)
            restarting = np.flatnonzero(self._done[name])
            acting = np.flatnonzero(~self._done[name])
            rewards = np.zeros(task.n)
            done = np.zeros(task.n, dtype=bool)
            cut = np.zeros(task.n, dtype=bool)
            if len(restarting):
                task.reset_agents(restarting)
                self._steps[name][restarting] = 0
                self._memories[name][restarting] = 0.0
            if len(acting):
                rewards[acting], terminal = task.act(actions[acting], acting)
                self._steps[name][acting] += 1
                limit = (
                    self._steps[name][acting] >= task.max_step
                    if task.max_step > 0
                    else np.zeros(len(acting), dtype=bool)
                )
                cut[acting] = ~terminal & limit
                done[acting] = terminal | cut[acting]
            self._previous[name] = actions
            self._done[name] = done
            infos[name] = self._brain_info(name, rewards, done, cut)
        return infos

    def _brain_info(self, name: str, rewards: np.ndarray, done: np.ndarray, cut: np.ndarray) -> BrainInfo:
        task = self.tasks[name]
        n = task.n
        masks = task.action_masks()
        if masks is None:
            masks = np.ones((n, int(sum(task.brain.vector_action_space_size))))
        memories = self._memories[name]
        # Agent ids as a build's, unique across the brains.
        first_id = 1000 * list(self.tasks).index(name)
        return BrainInfo(
            visual_observation=task.visual_observations(),
            vector_observation=task.vector_observations(),
            text_observations=[""] * n,
            memory=memories.copy() if memories.shape[1] else np.zeros((0, 0)),
            reward=rewards.tolist(),
            agents=[f"$0-{first_id + i}" for i in range(n)],
            local_done=done.tolist(),
            vector_action=self._previous[name].copy(),
            text_action=[[] for _ in range(n)],
            max_reached=cut.tolist(),
            action_mask=np.asarray(masks, dtype=np.float64),
        )


# ---------------------------------------------------------------------------------------- tasks


class GoalLine(Task):
    """Walk from the middle of a line to its goal end, left or right at random each episode.

    Observation: (goal end -1/+1, position / distance). Discrete: one branch, 0 stay, 1 left,
    2 right, one cell a step, ``distance`` cells to either end. Continuous: one action in [-1, 1],
    the distance moved. Reaching the goal end gives +1, the other end -1; both end the episode, and
    so does the step limit (4 x distance decisions). Random play reaches either end equally often
    (mean 0); walking straight to the goal scores 1.

    :param distance: cells from the start to either end, also the reset parameter ``distance``.
    """

    def __init__(
        self,
        n_agents: int = 16,
        seed: int = 0,
        continuous: bool = False,
        distance: int = 2,
        brain_name: str = "Goal",
    ) -> None:
        super().__init__(brain_name, n_agents, seed)
        self.continuous = continuous
        self.parameters = {"distance": float(distance)}
        if continuous:
            self.brain = BrainParameters(brain_name, 2, 1, [], [1], [""], "continuous")
        else:
            self.brain = self.discrete_brain()
        self.position = np.zeros(n_agents)
        self.goal = np.ones(n_agents)

    def discrete_brain(self) -> BrainParameters:
        return BrainParameters(self.brain_name, 2, 1, [], [3], [""], "discrete")

    @property
    def distance(self) -> float:
        return self.parameters["distance"]

    def reset_agents(self, rows: np.ndarray) -> None:
        self.position[rows] = 0.0
        self.goal[rows] = self.rng.choice([-1.0, 1.0], size=len(rows))
        self.max_step = int(4 * self.distance)

    def vector_observations(self) -> np.ndarray:
        return np.stack([self.goal, self.position / self.distance], axis=1)

    def moves(self, actions: np.ndarray) -> np.ndarray:
        """The distance each agent moves."""
        if self.continuous:
            return np.clip(actions[:, 0], -1.0, 1.0)
        return np.select([actions[:, 0] == 1, actions[:, 0] == 2], [-1.0, 1.0], 0.0)

    def act(self, actions: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        position = np.clip(self.position[rows] + self.moves(actions), -self.distance, self.distance)
        self.position[rows] = position
        at_end = np.abs(position) >= self.distance
        rewards = np.where(at_end, np.where(np.sign(position) == self.goal[rows], 1.0, -1.0), 0.0)
        return rewards, at_end


class MaskedDoors(GoalLine):
    """:class:`GoalLine` (discrete) with a second branch: each step the agent also passes one of
    three doors. Only one door, drawn at random every step, is open; the two others are masked, and
    passing a closed door costs 0.5. Nothing in the observation says which door is open: only the
    action masks do.

    A policy that draws its actions within the masks never pays; one that ignores them (or gets no
    masks, ``send_masks=False``) passes a closed door two steps in three, about -0.67 for the two
    steps to the goal.
    """

    DOORS = 3
    PENALTY = 0.5

    def __init__(self, n_agents: int = 16, seed: int = 0, send_masks: bool = True) -> None:
        self.send_masks = send_masks
        super().__init__(n_agents, seed, brain_name="Doors")
        self.open_door = np.zeros(n_agents, dtype=np.int64)

    def discrete_brain(self) -> BrainParameters:
        return BrainParameters(self.brain_name, 2, 1, [], [3, self.DOORS], ["", ""], "discrete")

    def reset_agents(self, rows: np.ndarray) -> None:
        super().reset_agents(rows)
        self.open_door[rows] = self.rng.integers(0, self.DOORS, size=len(rows))

    def action_masks(self) -> np.ndarray:
        masks = np.ones((self.n, 3 + self.DOORS))
        if self.send_masks:
            masks[:, 3:] = np.eye(self.DOORS)[self.open_door]
        return masks

    def act(self, actions: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rewards, at_end = super().act(actions, rows)
        closed = actions[:, 1].astype(np.int64) != self.open_door[rows]
        self.open_door[rows] = self.rng.integers(0, self.DOORS, size=len(rows))
        return rewards - self.PENALTY * closed, at_end


class VisualGoal(GoalLine):
    """:class:`GoalLine` (discrete) whose goal end is shown only by a 20x20 black-and-white camera:
    the half of the image on the goal's side is white. The vector observation is the position alone,
    so a policy that does not read the image cannot beat chance (``blank_camera=True`` shows a black
    image: the control). 20x20 is the smallest image the ``simple`` visual encoder takes."""

    SIZE = 20

    def __init__(self, n_agents: int = 16, seed: int = 0, blank_camera: bool = False) -> None:
        self.blank_camera = blank_camera
        super().__init__(n_agents, seed, brain_name="Camera")
        half = np.zeros((2, self.SIZE, self.SIZE, 1))
        half[0, :, : self.SIZE // 2] = 1.0  # goal on the left (-1)
        half[1, :, self.SIZE // 2 :] = 1.0  # goal on the right (+1)
        self._images = np.zeros_like(half) if blank_camera else half

    def discrete_brain(self) -> BrainParameters:
        camera = {"height": self.SIZE, "width": self.SIZE, "blackAndWhite": True}
        return BrainParameters(self.brain_name, 1, 1, [camera], [3], [""], "discrete")

    def vector_observations(self) -> np.ndarray:
        return (self.position / self.distance)[:, None]

    def visual_observations(self) -> list[list[np.ndarray]]:
        side = (self.goal > 0).astype(np.int64)
        return [list(self._images[side])]


class RecallCue(Task):
    """A cue (-1 or +1) is shown at the first of three decisions only; at the third the agent must
    answer it: action 1 for +1, action 0 for -1 (+1 if right, -1 if wrong; the episode then ends).

    Observation: (the cue at the first decision, else 0; 1 at the answering decision, else 0). The
    first two decisions are masked to action 0, so the cue cannot be carried in the previous action
    (which a recurrent policy sees): only the network's memory can hold it. A feed-forward policy
    sees the same observation whatever the cue was and scores 0 on average.
    """

    LENGTH = 3

    def __init__(self, n_agents: int = 16, seed: int = 0) -> None:
        super().__init__("Recall", n_agents, seed)
        self.brain = BrainParameters(self.brain_name, 2, 1, [], [2], [""], "discrete")
        self.cue = np.ones(n_agents)
        self.time = np.zeros(n_agents, dtype=np.int64)

    def reset_agents(self, rows: np.ndarray) -> None:
        self.cue[rows] = self.rng.choice([-1.0, 1.0], size=len(rows))
        self.time[rows] = 0

    def vector_observations(self) -> np.ndarray:
        shown = np.where(self.time == 0, self.cue, 0.0)
        answer = (self.time == self.LENGTH - 1).astype(np.float64)
        return np.stack([shown, answer], axis=1)

    def action_masks(self) -> np.ndarray:
        masks = np.ones((self.n, 2))
        masks[self.time < self.LENGTH - 1, 1] = 0.0
        return masks

    def act(self, actions: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        answering = self.time[rows] == self.LENGTH - 1
        right = (actions[:, 0] > 0.5) == (self.cue[rows] > 0)
        rewards = np.where(answering, np.where(right, 1.0, -1.0), 0.0)
        self.time[rows] += 1
        return rewards, answering


class Corridor(Task):
    """A corridor of cells 0..``length`` with a comfortable start and a better goal far away.

    Every episode starts in cell 0 and lasts ``max_step`` decisions (nothing ends it earlier).
    Actions: 0 stay, 1 left, 2 right (the walls stop). Observation: the cell, one-hot. Each
    decision that stays in cell 0 earns ``rest``; each decision that ends in the last cell earns
    ``1 / (max_step - length + 1)``. Walking straight to the end and staying there scores 1;
    resting in cell 0 all episode scores ``rest * max_step`` (0.54 with the defaults).

    The sparse reward is hard to find twice over: random play reaches the end of the default
    corridor (8 cells in 12 decisions) in about 1 episode of 200 (4.9e-3, measured over
    2,000,000 simulated episodes) and then only for a moment, while the rest in cell 0 pays at
    once. PPO alone settles for resting long before it sees the end; an agent rewarded for
    novelty (curiosity) leaves the start and finds it. Since episodes have a fixed length, a
    per-step reward of any kind (GAIL's) gives nothing for lingering on the way.
    """

    def __init__(
        self, n_agents: int = 16, seed: int = 0, length: int = 8, max_step: int = 12, rest: float = 0.045
    ) -> None:
        super().__init__("Corridor", n_agents, seed)
        self.length = length
        self.max_step = max_step
        self.rest = rest
        self.brain = BrainParameters(self.brain_name, length + 1, 1, [], [3], [""], "discrete")
        self.cell = np.zeros(n_agents, dtype=np.int64)
        self._eye = np.eye(length + 1)

    def reset_agents(self, rows: np.ndarray) -> None:
        self.cell[rows] = 0

    def vector_observations(self) -> np.ndarray:
        return self._eye[self.cell]

    def act(self, actions: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        action = actions[:, 0].astype(np.int64)
        moves = np.select([action == 1, action == 2], [-1, 1], 0)
        cell = np.clip(self.cell[rows] + moves, 0, self.length)
        self.cell[rows] = cell
        goal_share = 1.0 / (self.max_step - self.length + 1)
        rewards = np.where(cell == self.length, goal_share, 0.0) + np.where(
            (cell == 0) & (action == 0), self.rest, 0.0
        )
        return rewards, np.zeros(len(rows), dtype=bool)


# ---------------------------------------------------------------------------------------- players


class GoalExpert:
    """Walks straight to the goal of a discrete :class:`GoalLine` (the teacher and demonstrator)."""

    def __call__(self, task: Task) -> np.ndarray:
        assert isinstance(task, GoalLine)
        return np.where(task.goal > 0, 2, 1)[:, None].astype(np.float64)


class CorridorExpert:
    """Walks right down a :class:`Corridor` (and keeps pushing right at the end)."""

    def __call__(self, task: Task) -> np.ndarray:
        return np.full((task.n, 1), 2.0)


class RandomPlayer:
    """Draws every action uniformly (discrete, one branch) from its own seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, task: Task) -> np.ndarray:
        (size,) = task.brain.vector_action_space_size
        return self.rng.integers(0, size, size=(task.n, 1)).astype(np.float64)


def record_demo(
    path: Path, task: Task, player: Callable[[Task], np.ndarray], episodes: int
) -> tuple[Path, float]:
    """Let ``player`` play ``episodes`` episodes of ``task`` (one agent) and write every decision
    to the ``.demo`` file ``path`` as Unity's recorder does: the meta data (padded to 33 bytes),
    the brain parameters, then one length-delimited ``AgentInfoProto`` per decision, whose stored
    action is the one decided at the previous decision.

    :returns: the path and the mean episode reward of the recording.
    """
    assert task.n == 1, "a demonstration records one agent"
    env = TinyEnvironment([task])
    name = task.brain.brain_name
    info = env.reset()[name]
    records = []
    returns: list[float] = []
    total = 0.0
    while len(returns) < episodes:
        decision = player(task)
        forbidden = [bool(allowed == 0) for allowed in np.asarray(info.action_masks).reshape(-1)]
        records.append(
            AgentInfoProto(
                stacked_vector_observation=[
                    float(x) for x in np.asarray(info.vector_observations).reshape(-1)
                ],
                stored_vector_actions=[
                    float(x) for x in np.asarray(info.previous_vector_actions).reshape(-1)
                ],
                reward=float(info.rewards[0]),
                done=bool(info.local_done[0]),
                max_step_reached=bool(info.max_reached[0]),
                action_mask=forbidden,
                id=0,
            )
        )
        if info.local_done[0]:
            returns.append(total)
            total = 0.0
        info = env.step({name: decision})[name]
        total += float(info.rewards[0])
    brain = task.brain
    meta = DemonstrationMetaProto(
        api_version=1,
        demonstration_name=name,
        number_steps=len(records),
        number_episodes=episodes,
        mean_reward=float(np.mean(returns)),
    )
    brain_proto = BrainParametersProto(
        vector_observation_size=brain.vector_observation_space_size,
        num_stacked_vector_observations=brain.num_stacked_vector_observations,
        vector_action_size=list(brain.vector_action_space_size),
        vector_action_descriptions=list(brain.vector_action_descriptions),
        vector_action_space_type=0 if brain.vector_action_space_type == "discrete" else 1,
        brain_name=name,
        is_training=False,
    )
    write_demo_file(path, meta, brain_proto, records)
    return path, float(np.mean(returns))


# ---------------------------------------------------------------------------------------- harness


#: What the tiny sections of every trainer share: one layer of 16 units, mini-batches of 32, a
#: summary every 100 steps, 1000 steps, the extrinsic signal alone.
TINY_SECTION: dict[str, Any] = {
    "batch_size": 32,
    "hidden_units": 16,
    "learning_rate": 3.0e-3,
    "max_steps": 1000,
    "memory_size": 16,
    "normalize": False,
    "num_layers": 1,
    "time_horizon": 16,
    "sequence_length": 4,
    "summary_freq": 100,
    "use_recurrent": False,
    "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.9}},
}


def ppo_section(**overrides: Any) -> dict[str, Any]:
    """A complete ``trainer: ppo`` section with a tiny network (:data:`TINY_SECTION`) and a buffer
    of 256 steps; ``overrides`` replace entries."""
    section: dict[str, Any] = {"trainer": "ppo", **copy.deepcopy(TINY_SECTION)}
    section.update(beta=5.0e-3, buffer_size=256, epsilon=0.2, lambd=0.95, num_epoch=3)
    section.update(overrides)
    return section


def sac_section(**overrides: Any) -> dict[str, Any]:
    """A complete ``trainer: sac`` section with a tiny network (:data:`TINY_SECTION`), updated at
    every step from the first batch; ``overrides`` replace entries."""
    section: dict[str, Any] = {"trainer": "sac", **copy.deepcopy(TINY_SECTION)}
    section.update(buffer_size=2000, buffer_init_steps=0, init_entcoef=0.1, num_update=1, tau=0.01)
    section.update(overrides)
    return section


@dataclass
class Training:
    """What a run of :func:`train` left: per brain, every TensorBoard scalar as (step, value) pairs
    in step order, every reset the environment received (:attr:`TinyEnvironment.resets`), and the
    trainers as the run left them (brain name -> trainer: their buffers and policies)."""

    scalars: dict[str, dict[str, list[tuple[int, float]]]]
    resets: list[tuple[int, dict[str, float]]]
    trainers: dict[str, Any] = field(default_factory=dict)

    def series(self, tag: str, brain: str | None = None) -> list[tuple[int, float]]:
        """The (step, value) pairs of ``tag`` of ``brain`` (default: the only brain trained)."""
        if brain is None:
            (brain,) = self.scalars
        return self.scalars[brain].get(tag, [])

    def rewards(self, brain: str | None = None) -> list[float]:
        """The mean episode reward of every summary (``Environment/Cumulative Reward``)."""
        return [value for _, value in self.series("Environment/Cumulative Reward", brain)]


def train(
    folder: Path,
    env: TinyEnvironment,
    config: Mapping[str, Any],
    seed: int,
    curriculum: Mapping[str, Mapping[str, Any]] | None = None,
    multi_gpu: bool = False,
) -> Training:
    """Train on ``env`` as ``mlagents-learn --train --seed=<seed> [--curriculum] [--multi-gpu]``
    does, in this process: the trainer configuration ``config`` (sections by brain name or
    ``default``) and the curricula (brain name -> curriculum) are written to ``folder`` and read back
    with the real loaders, TensorFlow's ops are made deterministic, one trainer per external brain
    is built with ``initialize_trainers`` (``multi_gpu``: as with ``--multi-gpu``), and
    ``TrainerController.start_learning`` runs the loop through a :class:`SimpleEnvManager` until
    every trainer used its ``max_steps`` (saving, exporting and closing the environment at the end,
    as always).

    :returns: the scalars the trainers wrote to ``folder/summaries``, the environment's resets and
        the trainers.
    """
    from mlagents.envs.simple_env_manager import SimpleEnvManager
    from mlagents.trainers.components.bc.compatibility import check_demo_paths
    from mlagents.trainers.determinism import use_deterministic_ops
    from mlagents.trainers.learn import create_sampler_manager, try_create_meta_curriculum
    from mlagents.trainers.trainer_controller import TrainerController
    from mlagents.trainers.trainer_util import initialize_trainers, load_trainer_config

    folder.mkdir(parents=True, exist_ok=True)
    config_path = folder / "trainer_config.yaml"
    config_path.write_text(yaml.safe_dump(dict(config), sort_keys=False))
    trainer_config = load_trainer_config(str(config_path))
    check_demo_paths(trainer_config)
    sampler_manager, resampling_interval = create_sampler_manager(None, {}, seed)
    curriculum_folder = None
    if curriculum is not None:
        curriculum_folder = folder / "curricula"
        curriculum_folder.mkdir()
        for brain_name, lessons in curriculum.items():
            (curriculum_folder / f"{brain_name}.json").write_text(json.dumps(lessons))
    meta_curriculum = try_create_meta_curriculum(
        None if curriculum_folder is None else str(curriculum_folder), None, 0
    )
    use_deterministic_ops()
    summaries = folder / "summaries"
    summaries.mkdir()
    model_path = folder / "models" / "tiny-0"
    env_manager = SimpleEnvManager(env)
    if meta_curriculum is not None:
        meta_curriculum.check_reset_parameters(env_manager.reset_parameters)
    trainers = initialize_trainers(
        trainer_config,
        env_manager.external_brains,
        summaries_dir=str(summaries),
        run_id="tiny",
        model_path=str(model_path),
        keep_checkpoints=1,
        train_model=True,
        load_model=False,
        seed=seed,
        meta_curriculum=meta_curriculum,
        multi_gpu=multi_gpu,
    )
    controller = TrainerController(
        trainers,
        model_path=str(model_path),
        summaries_dir=str(summaries),
        run_id="tiny-0",
        save_freq=10**9,  # no checkpoint during the run; start_learning saves at the end
        meta_curriculum=meta_curriculum,
        train=True,
        training_seed=seed,
        fast_simulation=True,
        sampler_manager=sampler_manager,
        resampling_interval=resampling_interval,
    )
    controller.start_learning(env_manager)
    return Training(
        scalars={name: read_scalars(summaries / f"tiny_{name}") for name in trainers},
        resets=list(env.resets),
        trainers=dict(trainers),
    )
