"""Small scenes on the example SDK for the gym wrapper tests (not a test module).

They cover what no shipped example does: branched actions in a single brain, several cameras,
black-and-white cameras, stacked observations, two brains, no external brain, a changing agent
count, agent and Academy step limits. ``scene_build.py`` runs one of them as a build. Most scenes
echo the last action in the observation, so a test can see what reached the environment.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlagents.example_envs.sdk.scene import AgentGroup, BrainSpec, CameraResolution, Scene, SceneSpec

BRANCHES = (3, 3, 3, 2)
GRAY_CAMERA = CameraResolution(width=16, height=12, gray_scale=True)
COLOUR_CAMERA = CameraResolution(width=8, height=6, gray_scale=False)
CHANGING_AGENTS = 3
#: Academy steps after a reset during which every agent of ``ChangingAgents`` decides.
CHANGING_AGENTS_FULL_STEPS = 2
EPISODE_MAX_STEP = 4
ACADEMY_MAX_STEPS = 3
MULTI_AGENTS = 3


def _brain(
    name: str, obs: int = 1, space: str = "discrete", sizes: tuple[int, ...] = (2,), **extra: Any
) -> BrainSpec:
    """A brain of ``obs`` vector observations and ``sizes`` actions (by default one of two discrete
    choices: the smallest brain an echo needs)."""
    descriptions = tuple(f"{name} action {i}" for i in range(len(sizes)))
    return BrainSpec(
        name=name,
        vector_observation_size=obs,
        vector_action_space_type=space,  # type: ignore[arg-type]
        vector_action_size=sizes,
        vector_action_descriptions=descriptions,
        **extra,
    )


def _one_brain(
    academy: str,
    brain: BrainSpec,
    count: int = 1,
    *,
    max_step: int = 0,
    on_demand: bool = False,
    **scene: Any,
) -> SceneSpec:
    """A scene of ``count`` agents of one brain (most test scenes)."""
    group = AgentGroup(brain=brain.name, count=count, max_step=max_step, on_demand=on_demand)
    return SceneSpec(academy_name=academy, brains=[brain], agents=[group], **scene)


class EchoScene(Scene):
    """Base: every agent observes its last action, then what ``extras`` adds."""

    action_length = 1

    def initialize(self) -> None:
        n = self.academy.num_agents
        self.last_action = np.zeros((n, self.action_length), dtype=np.float32)
        self.draw = np.zeros(n, dtype=np.float32)

    def agent_reset(self, agents: np.ndarray) -> None:
        self.last_action[agents] = 0.0
        # A value from the seeded RNG, so that seeding is visible in the observation.
        self.draw[agents] = self.academy.rng.random(len(agents))

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        return np.concatenate([self.last_action[agents], self.extras(agents)], axis=1)

    def extras(self, agents: np.ndarray) -> np.ndarray:
        return np.zeros((len(agents), 0), dtype=np.float32)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        self.last_action[agents] = actions
        self.academy.add_reward(agents, 0.5)


class Branched(EchoScene):
    """One agent, discrete branches (3, 3, 3, 2); observes its 4 branch actions and a random draw
    plus the reset parameter ``offset``."""

    action_length = len(BRANCHES)

    @classmethod
    def spec(cls) -> SceneSpec:
        brain = _brain("BranchedBrain", len(BRANCHES) + 1, "discrete", BRANCHES)
        return _one_brain("BranchedAcademy", brain, reset_parameters={"offset": 0.0})

    def extras(self, agents: np.ndarray) -> np.ndarray:
        return (self.draw[agents] + self.academy.reset_parameters["offset"])[:, None]


class MultiEcho(EchoScene):
    """Three agents, continuous actions of size 2; each observes its action and its index."""

    action_length = 2

    @classmethod
    def spec(cls) -> SceneSpec:
        return _one_brain("MultiEchoAcademy", _brain("MultiEchoBrain", 3, "continuous", (2,)), MULTI_AGENTS)

    def extras(self, agents: np.ndarray) -> np.ndarray:
        return agents.astype(np.float32)[:, None]


class MultiBranched(EchoScene):
    """Three agents with discrete branches (3, 3, 3, 2)."""

    action_length = len(BRANCHES)

    @classmethod
    def spec(cls) -> SceneSpec:
        brain = _brain("MultiBranchedBrain", len(BRANCHES), "discrete", BRANCHES)
        return _one_brain("MultiBranchedAcademy", brain, MULTI_AGENTS)


class Cameras(EchoScene):
    """One agent with two cameras: 0 black-and-white 16x12, 1 colour 8x6. Pixel values encode the
    camera, the agent and the last action, so tests can check which image arrived where."""

    agent_count = 1

    @classmethod
    def spec(cls) -> SceneSpec:
        brain = _brain("CamerasBrain", camera_resolutions=(GRAY_CAMERA, COLOUR_CAMERA))
        return _one_brain("CamerasAcademy", brain, cls.agent_count)

    def render(self, agents: np.ndarray, camera: int) -> np.ndarray:
        resolution = (GRAY_CAMERA, COLOUR_CAMERA)[camera]
        image = np.zeros((len(agents), resolution.height, resolution.width, 3), dtype=np.uint8)
        value = camera_value(camera, agents, self.last_action[agents, 0])
        image[:] = value[:, None, None, None]
        if camera == 1:
            image[..., 2] = 255  # a colour image: blue differs from red and green
        return image


class MultiCameras(Cameras):
    """Cameras with three agents."""

    agent_count = MULTI_AGENTS


def camera_value(camera: int, agents: np.ndarray, action: np.ndarray) -> np.ndarray:
    """The grey level camera ``camera`` shows for ``agents`` after ``action`` (uint8)."""
    return (40 + 100 * camera + 10 * np.asarray(agents) + 5 * np.asarray(action)).astype(np.uint8)


class Stacked(EchoScene):
    """One agent whose vector observation stacks 3 frames."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return _one_brain("StackedAcademy", _brain("StackedBrain", num_stacked_vector_observations=3))


class TwoBrains(EchoScene):
    """Two external brains with one agent each."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            academy_name="TwoBrainsAcademy",
            brains=[_brain("FirstBrain"), _brain("SecondBrain")],
            agents=[AgentGroup(brain="FirstBrain", count=1), AgentGroup(brain="SecondBrain", count=1)],
        )


class NoExternalBrain(EchoScene):
    """One brain that is not controlled from Python."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return _one_brain("NoExternalAcademy", _brain("HeuristicBrain", is_training=False))


class ChangingAgents(EchoScene):
    """Three on-demand agents: all decide for the first steps after a reset, then only two."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return _one_brain("ChangingAcademy", _brain("ChangingBrain"), CHANGING_AGENTS, on_demand=True)

    def pre_step(self) -> None:
        full = self.academy.step_count < CHANGING_AGENTS_FULL_STEPS
        self.academy.request_decision(np.arange(CHANGING_AGENTS if full else CHANGING_AGENTS - 1))


class Episodes(EchoScene):
    """One agent with a maximum of 4 steps per episode; action 1 ends the episode (+1 reward)."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return _one_brain("EpisodesAcademy", _brain("EpisodesBrain"), max_step=EPISODE_MAX_STEP)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        super().agent_action(agents, actions)
        finished = agents[actions[:, 0] == 1]
        if len(finished):
            self.academy.set_reward(finished, 1.0)
            self.academy.done(finished)


class MultiEpisodes(Episodes):
    """Episodes with three agents. Each observes its last action, its index and its step count in
    the current episode, so a test can see when an agent started a new episode."""

    @classmethod
    def spec(cls) -> SceneSpec:
        brain = _brain("MultiEpisodesBrain", 3)
        return _one_brain("MultiEpisodesAcademy", brain, MULTI_AGENTS, max_step=EPISODE_MAX_STEP)

    def extras(self, agents: np.ndarray) -> np.ndarray:
        steps = self.academy.agent_step_counts[agents].astype(np.float32)
        return np.stack([agents.astype(np.float32), steps], axis=1)


class AcademyLimit(EchoScene):
    """One agent; the Academy ends the episode of everything after 3 steps."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return _one_brain(
            "AcademyLimitAcademy", _brain("AcademyLimitBrain"), academy_max_steps=ACADEMY_MAX_STEPS
        )


class SingleContinuous(EchoScene):
    """One agent with continuous actions of size 3, observed back."""

    action_length = 3

    @classmethod
    def spec(cls) -> SceneSpec:
        return _one_brain("SingleContinuousAcademy", _brain("SingleContinuousBrain", 3, "continuous", (3,)))


class TwoBrainsMultiAgent(EchoScene):
    """Two external brains: two agents with continuous actions of size 2 and one with discrete
    branches (3, 2); every agent observes its last action (2 floats)."""

    action_length = 2

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            academy_name="TwoBrainsMultiAgentAcademy",
            brains=[
                _brain("MoverBrain", 2, "continuous", (2,)),
                _brain("ChooserBrain", 2, "discrete", (3, 2)),
            ],
            agents=[AgentGroup(brain="MoverBrain", count=2), AgentGroup(brain="ChooserBrain", count=1)],
        )
