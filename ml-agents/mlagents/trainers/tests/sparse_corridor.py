"""A sparse-reward scene for the curiosity tests (not a test module): a corridor of
``LENGTH`` cells walked by ``AGENTS`` independent agents.

Every agent starts at cell 0 and sees its cell one-hot. Actions: 0 stay, 1 left, 2 right (the
walls at 0 and ``LENGTH`` stop it). The only reward is +1 for reaching the last cell, which ends
the episode; an episode is cut after ``MAX_STEP`` steps otherwise. A random walk of ``MAX_STEP``
steps reaches the end in about one episode out of ten thousand (the end is 3.9 standard
deviations of the walk away), so PPO alone almost never sees a reward, while the curiosity
signal rewards the agent for reaching cells it does not know yet, which leads it down the
corridor.

Started like a build with ``python -m mlagents.example_envs
mlagents.trainers.tests.sparse_corridor:SparseCorridor``. (The in-process
:class:`~mlagents.trainers.tests.tiny_envs.Corridor` of the tier-1 tests is another task: episodes
of a fixed length and a small reward for resting at the start, not a terminal +1.)
"""

from __future__ import annotations

import numpy as np

from mlagents.example_envs.sdk.scene import AgentGroup, BrainSpec, EngineConfiguration, Scene, SceneSpec

BRAIN = "CorridorLearning"
LENGTH = 20
MAX_STEP = 40
AGENTS = 4


class SparseCorridor(Scene):
    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            academy_name="Academy",
            brains=[
                BrainSpec(
                    name=BRAIN,
                    vector_observation_size=LENGTH + 1,
                    vector_action_space_type="discrete",
                    vector_action_size=(3,),
                    vector_action_descriptions=("",),
                )
            ],
            agents=[AgentGroup(brain=BRAIN, count=AGENTS, max_step=MAX_STEP)],
            training_configuration=EngineConfiguration(80, 80, 1, 100.0, 60),
        )

    def initialize(self) -> None:
        self.position = np.zeros(self.academy.num_agents, dtype=np.int64)
        self._eye = np.eye(LENGTH + 1, dtype=np.float32)

    def agent_reset(self, agents: np.ndarray) -> None:
        self.position[agents] = 0

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        return self._eye[self.position[agents]]

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        action = actions[:, 0].astype(np.int64)
        moves = np.where(action == 1, -1, np.where(action == 2, 1, 0))
        self.position[agents] = np.clip(self.position[agents] + moves, 0, LENGTH)
        arrived = agents[self.position[agents] == LENGTH]
        if len(arrived):
            self.academy.add_reward(arrived, 1.0)
            self.academy.done(arrived)
