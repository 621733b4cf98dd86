"""What the classic and the Gymnasium wrappers share: the checks of the original ``UnityEnv``,
the action space, the agent-count rule and the observation conversions. The build itself is
started, reset, stepped, restarted and ended by ``Builds`` (``builds.py``).

The API shape (what ``reset``/``step`` take and return) lives in ``unity_env.py`` (classic gym,
4-tuple ``step``) and ``gymnasium_env.py`` (Gymnasium, 5-tuple ``step``).
"""

import logging
from typing import Any

import numpy as np
from gymnasium import spaces

from gym_unity.envs.action_flattener import ActionFlattener
from gym_unity.envs.brain_info import brain_info_of, required_field
from gym_unity.envs.builds import Builds, LaunchOptions
from gym_unity.envs.exception import UnityGymException
from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.environment import UnityEnvironment

logger = logging.getLogger("gym_unity")

ActionSpace = spaces.Discrete | spaces.MultiDiscrete | spaces.Box


class UnityGymCore:
    """One Unity environment with exactly one (external) brain, driven through the gym wrappers.

    Not used directly: see ``UnityEnv`` and ``UnityGymnasiumEnv``. Subclasses choose the messages
    of the agent-count errors (``_single_agent_message`` ...) and implement the API shape.

    Attributes kept from the original ``UnityEnv``: ``name`` (academy name), ``brain_name``,
    ``use_visual``, ``uint8_visual``, ``visual_obs`` (last processed image(s)), ``game_over``,
    ``action_meanings``.
    """

    # Messages of the agent-count errors, formatted with ``n`` (agents found) and ``brain``.
    #: Message when a single-agent wrapper finds several agents (exact text of the original).
    _single_agent_message = (
        "The environment was launched as a single-agent environment, however"
        "there is more than one agent in the scene."
    )
    #: Message when a multi-agent wrapper finds one agent or none (exact text of the original).
    _multi_agent_message = (
        "The environment was launched as a mutli-agent environment, however"
        "there is only one agent in the scene."
    )
    #: Message when the number of agents changes (exact text of the original); also gets ``expected``.
    _agent_count_changed_message = (
        "The number of agents in the environment has changed since initialization. This is not supported."
    )

    def _start(
        self,
        environment_filename: str | None,
        worker_id: int,
        use_visual: bool,
        uint8_visual: bool,
        multiagent: bool,
        flatten_branched: bool,
        no_graphics: bool,
        allow_multiple_visual_obs: bool,
        launch: LaunchOptions,
    ) -> None:
        """Start the build, run the original's checks in its order, reset once and build the action
        space. On any error the build is ended before the error propagates.

        :param launch: the keyword arguments of the wrapper's constructor that say how to start the
            build (see ``LaunchOptions``); missing ones take their defaults.
        :raises TypeError: ``launch`` has a key that is not one of ``LaunchOptions``.
        :raises UnityGymException: see the class documentation of ``UnityEnv``.
        :raises mlagents.envs.exception.UnityException: the environment could not be started.
        """
        self._multiagent = multiagent
        self._allow_multiple_visual_obs = allow_multiple_visual_obs
        self._flattener: ActionFlattener | None = None
        self.visual_obs: Any = None
        self._current_state: BrainInfo | None = None
        self._n_agents: int | None = None
        self.game_over = False
        self._builds = Builds(type(self).__name__, environment_filename, worker_id, no_graphics, launch)
        try:
            self._configure(use_visual, uint8_visual, flatten_branched)
        except BaseException:
            self.close()
            raise

    # ----------------------------------------------------------------------------------------------
    # Start-up

    def _configure(self, use_visual: bool, uint8_visual: bool, flatten_branched: bool) -> None:
        env = self.unity_environment
        self.name = env.academy_name
        if env.number_brains != 1:
            raise UnityGymException(
                "There can only be one brain in a UnityEnvironment if it is wrapped in a gym."
            )
        if len(env.external_brain_names) <= 0:
            raise UnityGymException("There are not any external brain in the UnityEnvironment")

        self.brain_name = env.external_brain_names[0]
        brain = env.brains[self.brain_name]
        self._brain: BrainParameters = brain

        if use_visual and brain.number_visual_observations == 0:
            raise UnityGymException(
                "`use_visual` was set to True, however there are no"
                " visual observations as part of this environment."
            )
        self.use_visual = brain.number_visual_observations >= 1 and use_visual

        if not use_visual and uint8_visual:
            logger.warning(
                "`uint8_visual was set to true, but visual observations are not in use. "
                "This setting will not have any effect."
            )
            # The original left the attribute unset here; False says the same without an AttributeError.
            self.uint8_visual = False
        else:
            self.uint8_visual = uint8_visual

        if brain.number_visual_observations > 1 and not self._allow_multiple_visual_obs:
            logger.warning(
                "The environment contains more than one visual observation. "
                "You must define allow_multiple_visual_obs=True to received them all. "
                "Otherwise, please note that only the first will be provided in the observation."
            )

        if brain.num_stacked_vector_observations != 1:
            raise UnityGymException(
                "There can only be one stacked vector observation in a UnityEnvironment "
                "if it is wrapped in a gym."
            )

        self._reset_brain()

        self._action_space = self._make_action_space(brain, flatten_branched)
        self.action_meanings = brain.vector_action_descriptions

    def _make_action_space(self, brain: BrainParameters, flatten_branched: bool) -> ActionSpace:
        """``Discrete``, ``MultiDiscrete`` (branches not flattened) or ``Box(-1, 1)`` (continuous)."""
        sizes = brain.vector_action_space_size
        if brain.vector_action_space_type == "discrete":
            if len(sizes) == 1:
                return spaces.Discrete(sizes[0])
            if flatten_branched:
                self._flattener = ActionFlattener(sizes)
                return self._flattener.action_space
            return spaces.MultiDiscrete(sizes)
        if flatten_branched:
            logger.warning("The environment has a non-discrete action space. It will not be flattened.")
        high = np.ones(sizes[0], dtype=np.float32)
        return spaces.Box(-high, high, dtype=np.float32)

    def _camera_shape(self, camera: int) -> tuple:
        """``(height, width, channels)`` of camera ``camera``: 1 channel when black-and-white, else 3."""
        resolution = self._brain.camera_resolutions[camera]
        depth = 1 if resolution["blackAndWhite"] else 3
        return (resolution["height"], resolution["width"], depth)

    # ----------------------------------------------------------------------------------------------
    # Talking to the environment

    def _reset_brain(self, config: dict[str, float] | None = None) -> BrainInfo:
        """Reset the environment; the new decision of our brain, agent count checked."""
        return self._new_episode(self._builds.reset(0, config))

    def _new_episode(self, all_brain_info: AllBrainInfo) -> BrainInfo:
        """Our brain's first decision of the episode that ``all_brain_info`` (a reset's answer)
        starts, agent count checked."""
        info = brain_info_of(all_brain_info, self.brain_name)
        self.game_over = False
        self._current_state = info
        self._check_agents(info)
        return info

    def _step_brain(self, action: Any) -> BrainInfo:
        """Send ``action`` (already in UnityEnvironment's form); the next decision of our brain,
        agent count checked."""
        info = brain_info_of(self._builds.step(0, action), self.brain_name)
        self._check_agents(info)
        self._current_state = info
        return info

    def _flatten_actions(self, action: Any) -> Any:
        """The flattened action(s) looked up into branch actions (multi-agent: one per agent)."""
        if self._multiagent:
            if not isinstance(action, list):
                raise UnityGymException("The environment was expecting `action` to be a list.")
            if len(action) != self._n_agents:
                raise UnityGymException(f"The environment was expecting a list of {self._n_agents} actions.")
            if self._flattener is not None:
                action = [self._flattener.lookup_action(one) for one in action]
            return np.array(action)
        if self._flattener is not None:
            return self._flattener.lookup_action(action)
        if isinstance(action, np.ndarray) and action.ndim == 0:
            return action.item()  # UnityEnvironment takes scalars and sequences, not 0-d arrays
        return action

    def _check_agents(self, info: BrainInfo) -> None:
        """Enforce the agent-count rule of the wrapper mode on the agents deciding in ``info``;
        remember the count on first sight.

        :raises UnityGymException: too many / too few agents for the mode, or the count changed.
        """
        n_agents = len(required_field(info.agents, "agents"))
        if not self._multiagent and n_agents > 1:
            raise UnityGymException(self._single_agent_message.format(n=n_agents, brain=self.brain_name))
        if self._multiagent and n_agents <= 1:
            raise UnityGymException(self._multi_agent_message.format(n=n_agents, brain=self.brain_name))
        if self._n_agents is None:
            if n_agents == 0:
                raise UnityGymException(
                    f"No agent of the brain '{self.brain_name}' asked for a decision after the reset. "
                    "The gym wrapper needs its agent(s) to decide at every step of the environment."
                )
            self._n_agents = n_agents
            logger.info(f"{n_agents} agents within environment.")
        elif self._n_agents != n_agents:
            raise UnityGymException(
                self._agent_count_changed_message.format(
                    n=n_agents, expected=self._n_agents, brain=self.brain_name
                )
            )

    # ----------------------------------------------------------------------------------------------
    # Observations

    def _preprocess_single(self, single_visual_obs: np.ndarray) -> np.ndarray:
        """One image as received (float64 in [0, 1]) or, with ``uint8_visual``, as uint8 in [0, 255]."""
        if self.uint8_visual:
            return (255.0 * single_visual_obs).astype(np.uint8)
        return single_visual_obs

    def _preprocess_multi(self, multiple_visual_obs: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        """Every camera's per-agent images through ``_preprocess_single`` (list over cameras)."""
        return [[self._preprocess_single(image) for image in camera] for camera in multiple_visual_obs]

    # ----------------------------------------------------------------------------------------------
    # Shared members

    @property
    def brain_info(self) -> BrainInfo | None:
        """The last ``BrainInfo`` of the wrapped brain (after the last reset or step)."""
        return self._current_state

    @property
    def unity_environment(self) -> UnityEnvironment:
        """The wrapped ``UnityEnvironment`` (e.g. for its ``reset_parameters``)."""
        return self._builds.environments[0]

    @property
    def number_agents(self) -> int | None:
        """Number of agents of the brain (fixed at the first reset)."""
        return self._n_agents

    def get_action_meanings(self) -> list[str]:
        """The brain's ``vector_action_descriptions``."""
        return self.action_meanings

    def close(self) -> None:
        """Close the environment and end its process. Calling it again does nothing."""
        builds = getattr(self, "_builds", None)  # None when the constructor failed to start the build
        if builds is not None:
            builds.close()

    def _reseed(self, seed: Any) -> None:
        """Restart the build with ``seed`` and reset it as at start-up (see ``Builds.reseed``).

        :raises UnityGymException: ``seed`` is not an integer, or the restarted environment's agents
            no longer fit the wrapper.
        """
        all_brain_info = self._builds.reseed(0, seed)
        if all_brain_info is not None:
            self._new_episode(all_brain_info)
