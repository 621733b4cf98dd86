"""Basic (described in docs/Learning-Environment-Examples.md): a walk on a line between two goals.

One agent on integer positions 0..20 starts at 10; position 7 is a small goal (+0.1), 17 a
large goal (+1). Every action costs 0.01. Actions: 0 stay, 1 left, 2 right. The observation is
the one-hot position (20 floats). The agent decides on demand: every physics step in training
mode; in inference mode once per ``time_between_decisions_at_inference`` seconds.
"""

from __future__ import annotations

import numpy as np

from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec

BRAIN = "BasicLearning"
START_POSITION = 10
SMALL_GOAL = 7
LARGE_GOAL = 17
MIN_POSITION = 0
MAX_POSITION = 20
STEP_PENALTY = -0.01
SMALL_GOAL_REWARD = 0.1
LARGE_GOAL_REWARD = 1.0
OBSERVATION_SIZE = 20
STAY, LEFT, RIGHT = 0, 1, 2
#: Player brain keys (branch 0): A steps left, D steps right.
PLAYER_KEYS: dict[str, tuple[int, float]] = {"a": (0, LEFT), "d": (0, RIGHT)}


def walk_to_large_goal(observations: np.ndarray) -> np.ndarray:
    """The heuristic: step toward the large goal (+1) from any position, float32 ``(k, 1)``."""
    position = observations[:, :OBSERVATION_SIZE].argmax(axis=1)
    return np.where(position < LARGE_GOAL, RIGHT, LEFT).astype(np.float32)[:, None]


class Basic(Scene):
    """The Basic scene: brain ``BasicLearning``, discrete [3], 20 observations, 1 agent."""

    player_key_table = PLAYER_KEYS

    supports_extra_agents = True

    #: The agent's inspector value (seconds between decisions in inference mode).
    time_between_decisions_at_inference = 0.15

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(BRAIN, OBSERVATION_SIZE, "discrete", (3,), vector_action_descriptions=("",)),
            on_demand=True,
            training=EngineConfiguration(80, 80, 1, 100.0, 60),
        )

    def initialize(self) -> None:
        self.position = np.full(self.academy.num_agents, START_POSITION, dtype=np.int64)
        # Unity accumulates this float32 timer by fixedDeltaTime; float32 keeps the same rounding.
        self.time_since_decision = np.zeros(self.academy.num_agents, dtype=np.float32)
        self._eye = np.eye(OBSERVATION_SIZE + 1, dtype=np.float32)[:, :OBSERVATION_SIZE]

    def pre_step(self) -> None:
        agents = np.arange(self.academy.num_agents)
        if self.academy.is_training:
            self.academy.request_decision(agents)
            return
        due = self.time_since_decision >= np.float32(self.time_between_decisions_at_inference)
        self.time_since_decision[due] = 0.0
        self.time_since_decision[~due] += np.float32(self.academy.FIXED_DELTA_TIME)
        self.academy.request_decision(agents[due])

    def agent_reset(self, agents: np.ndarray) -> None:
        self.position[agents] = START_POSITION

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        # One-hot over 20 slots. Position 20 has no slot (Unity would fail there too); it is
        # never reached because both goals end the episode first.
        return self._eye[self.position[agents]]

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return walk_to_large_goal(batch.vector_observations)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        # Unity casts the float to int (truncation); values other than 1 and 2 do not move.
        action = actions[:, 0].astype(np.int64)
        moves = np.where(action == 1, -1, np.where(action == 2, 1, 0))
        position = np.minimum(np.maximum(self.position[agents] + moves, MIN_POSITION), MAX_POSITION)
        self.position[agents] = position
        self.academy.add_reward(agents, STEP_PENALTY)
        small = position == SMALL_GOAL
        large = position == LARGE_GOAL
        if np.count_nonzero(small):
            self.academy.done(agents[small])
            self.academy.add_reward(agents[small], SMALL_GOAL_REWARD)
        if np.count_nonzero(large):
            self.academy.done(agents[large])
            self.academy.add_reward(agents[large], LARGE_GOAL_REWARD)
