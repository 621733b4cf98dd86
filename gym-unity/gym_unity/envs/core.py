"""What the classic and the Gymnasium wrappers share: launching the Unity environment, the checks
of the original ``UnityEnv``, the action space, the agent-count rule and the observation conversions.

The API shape (what ``reset``/``step`` take and return) lives in ``unity_env.py`` (classic gym,
4-tuple ``step``) and ``gymnasium_env.py`` (Gymnasium, 5-tuple ``step``).
"""

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import Any, TypedDict, TypeVar

import numpy as np
from gymnasium import spaces

from gym_unity.envs.action_flattener import ActionFlattener
from gym_unity.envs.exception import UnityGymException
from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.environment import UnityEnvironment

logger = logging.getLogger("gym_unity")

#: Largest seed the wire carries (``UnityRLInitializationInput.seed`` is an int32).
MAX_UNITY_SEED = 2**31 - 1

ActionSpace = spaces.Discrete | spaces.MultiDiscrete | spaces.Box

T = TypeVar("T")


def required_field(values: list[T] | None, field: str) -> list[T]:
    """A per-agent list field of a BrainInfo (``agents``, ``rewards``, ``local_done``, ...).

    ``BrainInfo`` allows None for these, but every BrainInfo the environment sends has them.

    :raises UnityGymException: the field is missing.
    """
    if values is None:
        raise UnityGymException(f"The environment's BrainInfo has no '{field}'.")
    return values


class LaunchOptions(TypedDict, total=False):
    """How a wrapper starts its build: the keyword-only arguments that ``UnityEnv`` and
    ``UnityGymnasiumEnv`` both take (each optional; defaults in ``LAUNCH_DEFAULTS``).

    :ivar base_port: first port of the range; the environment listens on ``base_port + worker_id``
        (default 5005, the port the original always used).
    :ivar seed: random seed sent to the environment at start-up (default 0).
    :ivar timeout_wait: seconds to wait for the build to connect (default 30).
    :ivar exchange_timeout: seconds to wait for each answer of the build (default 120).
    :ivar args: extra command-line arguments for the build (default none).
    :ivar train_mode: reset in training configuration (fast, the default) or inference
        configuration (real time).
    :ivar log_dir: folder for the build's log (kept); by default a temporary folder, removed on a
        clean close and kept when the environment failed (see ``UnityEnvironment``).
    """

    base_port: int
    seed: int
    timeout_wait: float
    exchange_timeout: float
    args: Sequence[str] | None
    train_mode: bool
    log_dir: str | None


LAUNCH_DEFAULTS: LaunchOptions = {
    "base_port": 5005,
    "seed": 0,
    "timeout_wait": 30,
    "exchange_timeout": 120.0,
    "args": None,
    "train_mode": True,
    "log_dir": None,
}


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
        """Launch the environment, run the original's checks in its order, reset once and build
        the action space. On any error the environment is closed before the error propagates.

        :param launch: the keyword arguments of the wrapper's constructor that say how to start the
            build (see ``LaunchOptions``); missing ones take their ``LAUNCH_DEFAULTS``.
        :raises TypeError: ``launch`` has a key that is not one of ``LaunchOptions``.
        :raises UnityGymException: see the class documentation of ``UnityEnv``.
        :raises mlagents.envs.exception.UnityException: the environment could not be started.
        """
        unknown = sorted(set(launch) - set(LAUNCH_DEFAULTS))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}")
        options: LaunchOptions = {**LAUNCH_DEFAULTS, **launch}
        args = options["args"]
        self._environment_filename = environment_filename
        self._worker_id = worker_id
        self._no_graphics = no_graphics
        self._base_port = options["base_port"]
        self._timeout_wait = options["timeout_wait"]
        self._exchange_timeout = options["exchange_timeout"]
        self._args = list(args) if args is not None else []
        self._train_mode = options["train_mode"]
        self._log_dir = options["log_dir"]
        self._multiagent = multiagent
        self._allow_multiple_visual_obs = allow_multiple_visual_obs
        self._flattener: ActionFlattener | None = None
        self._closed = False
        self.visual_obs: Any = None
        self._current_state: BrainInfo | None = None
        self._n_agents: int | None = None
        self.game_over = False

        self._env = self._launch(_unity_seed(options["seed"]))
        try:
            self._configure(use_visual, uint8_visual, flatten_branched)
        except BaseException:
            self._shut_down()
            raise

    # ----------------------------------------------------------------------------------------------
    # Start-up

    def _launch(self, seed: int) -> UnityEnvironment:
        environment = UnityEnvironment(
            self._environment_filename,
            self._worker_id,
            base_port=self._base_port,
            seed=seed,
            no_graphics=self._no_graphics,
            timeout_wait=self._timeout_wait,
            args=self._args,
            exchange_timeout=self._exchange_timeout,
            log_dir=self._log_dir,
        )
        self._launch_seed = seed
        # Exchanges since launch; 1 (only the start-up reset) means "as launched" (see _reseed).
        self._exchanges_since_launch = 0
        return environment

    def _configure(self, use_visual: bool, uint8_visual: bool, flatten_branched: bool) -> None:
        env = self._env
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

        self._check_agents(len(required_field(self._reset_brain().agents, "agents")))

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
        """Reset the environment; the new decision of our brain (agent count checked by callers)."""
        self._require_open()
        info = self._brain_info(self._env.reset(config=config, train_mode=self._train_mode))
        self._exchanges_since_launch += 1
        self.game_over = False
        self._current_state = info
        return info

    def _step_brain(self, action: Any) -> BrainInfo:
        """Send ``action`` (already in UnityEnvironment's form); the next decision of our brain,
        agent count checked."""
        self._require_open()
        info = self._brain_info(self._env.step(action))
        self._exchanges_since_launch += 1
        self._check_agents(len(required_field(info.agents, "agents")))
        self._current_state = info
        return info

    def _brain_info(self, all_brain_info: dict[str, BrainInfo]) -> BrainInfo:
        try:
            return all_brain_info[self.brain_name]
        except KeyError:
            sent = ", ".join(all_brain_info) or "nothing"
            raise UnityGymException(
                f"The environment's answer has no entry for the brain '{self.brain_name}' (it sent: {sent})."
            ) from None

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

    def _check_agents(self, n_agents: int) -> None:
        """Enforce the agent-count rule of the wrapper mode; remember the count on first sight.

        :raises UnityGymException: too many / too few agents for the mode, or the count changed.
        """
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
        return self._env

    @property
    def number_agents(self) -> int | None:
        """Number of agents of the brain (fixed at the first reset)."""
        return self._n_agents

    def get_action_meanings(self) -> list[str]:
        """The brain's ``vector_action_descriptions``."""
        return self.action_meanings

    def close(self) -> None:
        """Close the environment and end its process. Calling it again does nothing."""
        if not self._closed:
            self._shut_down()

    def _shut_down(self) -> None:
        self._closed = True
        env = getattr(self, "_env", None)
        if env is not None:
            env._close()

    def _require_open(self) -> None:
        if self._closed:
            raise UnityGymException("The environment is closed; create a new one to continue.")

    def _relaunch(self, seed: int) -> None:
        """Replace the running environment by a fresh one started with ``seed`` (same build, port
        and reset parameters), reset once as at start-up.

        :raises UnityGymException: the new environment does not declare the same brain.
        """
        self._require_open()
        parameters = dict(self._env.reset_parameters)
        self._env._close()
        try:
            # The start-up banner was shown once already; a restart is announced in one line.
            with _quiet_logger("mlagents.envs"):
                self._env = self._launch(seed)
            if self._env.brains.get(self.brain_name) != self._brain:
                raise UnityGymException(
                    f"After a restart with seed {seed}, the environment no longer declares the brain "
                    f"'{self.brain_name}' it had at start-up."
                )
            changed = parameters if parameters != self._env.reset_parameters else None
            self._check_agents(len(required_field(self._reset_brain(changed).agents, "agents")))
        except BaseException:
            self._shut_down()
            raise
        logger.info("Restarted '%s' with seed %d.", self.name, seed)


@contextlib.contextmanager
def _quiet_logger(name: str) -> Iterator[None]:
    """Only warnings and errors of logger ``name`` inside the block."""
    target = logging.getLogger(name)
    level = target.level
    target.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        target.setLevel(level)


def _unity_seed(seed: Any) -> int:
    """A seed as the int32 the wire carries (larger seeds are folded into ``[0, 2**31 - 1]``).

    :raises UnityGymException: ``seed`` is not an integer.
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise UnityGymException(f"The seed must be an integer, got {seed!r}.")
    seed = int(seed)
    if -(2**31) <= seed <= MAX_UNITY_SEED:
        return seed
    return seed % (MAX_UNITY_SEED + 1)
