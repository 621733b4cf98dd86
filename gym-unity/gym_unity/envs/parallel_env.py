"""``UnityParallelEnv``: every agent of every external brain of a Unity environment as a PettingZoo
``ParallelEnv`` (all agents act at once). Needs the optional ``pettingzoo`` package
(``pip install gym_unity[pettingzoo]``).
"""

from typing import Any, Unpack

import numpy as np
from gymnasium import spaces

from gym_unity.envs import batched
from gym_unity.envs.brain_info import brain_info_of, required_field
from gym_unity.envs.builds import Builds, LaunchOptions
from gym_unity.envs.exception import UnityGymException
from gym_unity.envs.reset_options import reset_config
from mlagents.envs.brain import AllBrainInfo, BrainInfo
from mlagents.envs.environment import UnityEnvironment

try:
    from pettingzoo import ParallelEnv
except ImportError as missing:  # pragma: no cover - depends on the installation
    raise ImportError(
        "UnityParallelEnv needs PettingZoo: pip install 'gym_unity[pettingzoo]' (or pip install pettingzoo)."
    ) from missing


class UnityParallelEnv(ParallelEnv[str, np.ndarray, Any]):
    """Every agent of every external brain as one PettingZoo ``ParallelEnv``.

    Example (Tennis: two agents of the brain ``TennisLearning``)::

        env = UnityParallelEnv("example-envs/builds/Tennis", no_graphics=True)
        observations, infos = env.reset(seed=1)
        while env.agents:
            actions = {agent: env.action_space(agent).sample() for agent in env.agents}
            observations, rewards, terminations, truncations, infos = env.step(actions)
        env.close()

    Agents are named ``"<brain>_<i>"``, ``i`` the agent's place among its brain's agents at the
    first reset (e.g. ``"TennisLearning_0"``, ``"TennisLearning_1"``); each has its
    brain's spaces: ``observation_space(agent)`` is the whole vector observation
    ``Box(-inf, inf, (size * stacks,), float32)`` (or with ``use_visual`` the first camera,
    ``Box(0, 255, (height, width, channels), uint8)``) and ``action_space(agent)`` is
    ``Discrete``, ``MultiDiscrete`` or ``Box(-1, 1)`` as for ``UnityGymnasiumEnv``.

    Episodes: ``reset()`` resets the environment (an Academy reset) and every agent takes part.
    An agent whose Unity episode ends is ``terminated``, or ``truncated`` when it reached its
    maximum step count (or the Academy its own), and leaves ``agents``; its last observation is
    the first one of the episode Unity has already started for it (Unity never sends the last
    observation of a finished episode). Unity keeps it running on zero actions until every agent
    is done; then call ``reset()``. Every agent must decide at every step: scenes with on-demand
    decisions, agents that appear or disappear, or agents that change brain are refused.

    :param environment_filename: path of the build (extension optional); None waits for the Unity Editor.
    :param worker_id: offset added to ``base_port``.
    :param use_visual: observe the first camera instead of the vector observation (every brain
        needs a camera then).
    :param no_graphics: start the build with ``-nographics -batchmode``.
    :param launch: how the build is started (see ``LaunchOptions``): ``base_port``, ``seed``,
        ``timeout_wait``, ``exchange_timeout``, ``args``, ``train_mode``, ``log_dir``.
    :raises UnityGymException: no external brain, no agent deciding after the reset, or an
        observation that does not exist.
    :raises mlagents.envs.exception.UnityException: the build could not be started.
    """

    metadata = {"render_modes": [], "name": "unity_parallel_v0", "is_parallelizable": True}
    render_mode = None

    def __init__(
        self,
        environment_filename: str | None,
        worker_id: int = 0,
        *,
        use_visual: bool = False,
        no_graphics: bool = False,
        **launch: Unpack[LaunchOptions],
    ) -> None:
        self._use_visual = use_visual
        self._builds = Builds(type(self).__name__, environment_filename, worker_id, no_graphics, launch)
        try:
            self._configure()
        except BaseException:
            self.close()
            raise

    def _configure(self) -> None:
        environment = self.unity_environment
        self.brain_names: list[str] = list(environment.external_brain_names)
        if not self.brain_names:
            raise UnityGymException(
                "The environment has no external brain (none is controlled from Python); "
                "UnityParallelEnv drives the agents of external brains."
            )
        brains = environment.brains
        observation_spaces = {
            name: batched.agent_observation_space(brains[name], self._use_visual) for name in self.brain_names
        }
        self._brain_action_spaces: dict[str, batched.AgentActionSpace] = {
            name: batched.agent_action_space(brains[name]) for name in self.brain_names
        }
        all_brain_info = self._builds.reset(0)
        self._unity_ids: dict[
            str, list[Any]
        ] = {}  # brain -> Unity agent ids, in the order of the first reset
        self._names: dict[str, list[str]] = {}  # brain -> agent names, same order
        for brain in self.brain_names:
            ids = list(required_field(brain_info_of(all_brain_info, brain).agents, "agents"))
            self._unity_ids[brain] = ids
            self._names[brain] = [f"{brain}_{position}" for position in range(len(ids))]
        self.possible_agents: list[str] = [name for brain in self.brain_names for name in self._names[brain]]
        if not self.possible_agents:
            raise UnityGymException(
                "No agent asked for a decision after the reset; UnityParallelEnv needs every agent to "
                "decide at every step."
            )
        self._brain_of = {name: brain for brain in self.brain_names for name in self._names[brain]}
        self.observation_spaces: dict[str, spaces.Space] = {
            name: observation_spaces[brain] for name, brain in self._brain_of.items()
        }
        self.action_spaces: dict[str, spaces.Space] = {
            name: self._brain_action_spaces[brain] for name, brain in self._brain_of.items()
        }
        self.agents: list[str] = list(self.possible_agents)

    # ----------------------------------------------------------------------------------------------
    # ParallelEnv API

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (the same object at every call)."""
        return self.observation_spaces[self._known(agent)]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (the same object at every call)."""
        return self.action_spaces[self._known(agent)]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        """Start new episodes for every agent (an Academy reset).

        :param seed: restart the build with this seed first, unless it is still exactly as started
            with it (so the same seed always gives the same episodes).
        :param options: ``{"config": {name: value}}`` changes reset parameters (they stay in effect
            for later resets); other keys are ignored with a warning (PettingZoo's API test passes one).
        :return: ``(observations, infos)`` of every agent.
        :raises UnityGymException: ``options`` or its ``"config"`` is not a dict.
        :raises mlagents.envs.exception.UnityEnvironmentException: unknown reset parameter (the error
            lists the environment's).
        """
        self._builds.require_open()
        config = reset_config(options, self.unity_environment.reset_parameters, ignore_other_options=True)
        if seed is not None:
            restarted = self._builds.reseed(0, seed)
            if restarted is not None:
                self._observations(restarted)  # the agents of the start-up reset must be those of the first
        self.agents = list(self.possible_agents)
        return self._observations(self._builds.reset(0, config)), {agent: {} for agent in self.agents}

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, np.ndarray],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Apply one action per agent of ``agents`` and run the environment to the next decision.

        :return: ``(observations, rewards, terminations, truncations, infos)`` for the agents that
            were in ``agents`` before the step; the finished ones then leave ``agents``.
        :raises UnityGymException: every agent is done, or ``actions`` misses a live agent or names
            an agent that is unknown or done.
        """
        self._builds.require_open()
        if not self.agents:
            raise UnityGymException("Every agent is done: call reset() to start new episodes.")
        live = self.agents
        self._check_action_keys(actions, live)
        vector_action = {brain: self._brain_actions(brain, actions) for brain in self.brain_names}
        all_brain_info = self._builds.step(0, vector_action)
        academy_done = bool(self.unity_environment.global_done)

        observations: dict[str, np.ndarray] = {}
        rewards: dict[str, float] = {}
        terminations: dict[str, bool] = {}
        truncations: dict[str, bool] = {}
        for brain in self.brain_names:
            info = self._in_order(brain, brain_info_of(all_brain_info, brain))
            names = self._names[brain]
            reward, done, max_reached = batched.batch_flags(info)
            if academy_done:
                # The Academy reached its step limit: every episode ended; the next exchange must be a reset.
                done[:] = True
                max_reached[:] = True
            observations.update(zip(names, batched.batch_observations(info, self._use_visual)))
            rewards.update(zip(names, reward.tolist()))
            terminations.update(zip(names, (done & ~max_reached).tolist()))
            truncations.update(zip(names, (done & max_reached).tolist()))
        self.agents = [agent for agent in live if not (terminations[agent] or truncations[agent])]
        return (
            {agent: observations[agent] for agent in live},
            {agent: rewards[agent] for agent in live},
            {agent: terminations[agent] for agent in live},
            {agent: truncations[agent] for agent in live},
            {agent: {} for agent in live},
        )

    def render(self) -> None:
        """Nothing to render (no render mode)."""
        return None

    def close(self) -> None:
        """End the build. Calling it again does nothing."""
        builds = getattr(self, "_builds", None)  # None when the constructor failed to start the build
        if builds is not None:
            builds.close()

    # ----------------------------------------------------------------------------------------------
    # Extra members

    @property
    def unity_environment(self) -> UnityEnvironment:
        """The wrapped ``UnityEnvironment`` (e.g. for its ``reset_parameters``)."""
        return self._builds.environments[0]

    def brain_of(self, agent: str) -> str:
        """The brain of ``agent``."""
        return self._brain_of[self._known(agent)]

    # ----------------------------------------------------------------------------------------------
    # Helpers

    def _observations(self, all_brain_info: AllBrainInfo) -> dict[str, np.ndarray]:
        """Every agent's observation in ``all_brain_info`` (agents checked, see ``_in_order``)."""
        observations: dict[str, np.ndarray] = {}
        for brain in self.brain_names:
            info = self._in_order(brain, brain_info_of(all_brain_info, brain))
            observations.update(zip(self._names[brain], batched.batch_observations(info, self._use_visual)))
        return observations

    def _known(self, agent: str) -> str:
        if agent not in self._brain_of:
            raise UnityGymException(
                f"Unknown agent {agent!r}; the agents are named '<brain>_<i>', e.g. {self.possible_agents[0]!r}."
            )
        return agent

    def _check_action_keys(self, actions: dict[str, Any], live: list[str]) -> None:
        if not isinstance(actions, dict):
            raise UnityGymException(f"step() takes a dict agent -> action, got {type(actions).__name__}.")
        if len(actions) != len(live) or set(actions) != set(live):
            missing = [agent for agent in live if agent not in actions]
            if missing:
                raise UnityGymException(
                    f"No action for the live agent(s) {missing}; give one for each of env.agents."
                )
            extra = sorted(set(actions) - set(live))
            unknown = [agent for agent in extra if agent not in self._brain_of]
            if unknown:
                self._known(unknown[0])
            raise UnityGymException(
                f"The agent(s) {extra} are done: give actions only for the agents in env.agents."
            )

    def _brain_actions(self, brain: str, actions: dict[str, Any]) -> np.ndarray:
        """The actions of every agent of ``brain`` (zeros for those that are done) as Unity takes them."""
        space = self._brain_action_spaces[brain]
        zero = np.zeros(space.shape or (), dtype=space.dtype)
        names = self._names[brain]
        batch = np.stack([np.asarray(actions.get(name, zero), dtype=space.dtype) for name in names])
        return batched.unity_actions(batch, space, len(names))

    def _in_order(self, brain: str, info: BrainInfo) -> BrainInfo:
        """``info`` with the brain's agents in the order of the first reset.

        :raises UnityGymException: not exactly the agents of the first reset decided.
        """
        return batched.agents_in_order(info, self._unity_ids[brain], type(self).__name__, brain)
