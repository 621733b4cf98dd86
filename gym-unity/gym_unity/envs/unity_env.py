"""``UnityEnv``: a Unity environment behind the classic gym interface of gym_unity 0.4 (ML-Agents 0.9).

``reset()`` returns the observation; ``step(action)`` returns ``(observation, reward, done, info)``.
The classic ``gym`` package does not work with numpy 2, so ``UnityEnv`` is not a ``gym.Env``
subclass (nor a ``gymnasium.Env``: Gymnasium's wrappers and checkers expect the 5-tuple API). Its
spaces are Gymnasium spaces, which behave like gym's (``sample()``, ``contains()``, ``n``,
``shape``). For today's libraries (stable-baselines3, Gymnasium wrappers) use ``UnityGymnasiumEnv``.
"""

import logging
from typing import Any, Unpack

import numpy as np
from gymnasium import spaces

from gym_unity.envs.action_flattener import ActionFlattener
from gym_unity.envs.brain_info import required_field
from gym_unity.envs.builds import LaunchOptions
from gym_unity.envs.core import ActionSpace, UnityGymCore
from gym_unity.envs.exception import UnityGymException
from mlagents.envs.brain import BrainInfo

logger = logging.getLogger("gym_unity")

__all__ = ["UnityEnv", "UnityGymException", "ActionFlattener"]

GymStepResult = tuple[Any, Any, Any, dict[str, Any]]


class UnityEnv(UnityGymCore):
    """A Unity environment with one brain as a classic gym environment (one agent, or a list of agents).

    Example (the Basic example build: one agent, ``Discrete(3)`` actions, 20 observations)::

        env = UnityEnv("example-envs/builds/Basic", worker_id=1, no_graphics=True)
        observation = env.reset()                       # float64 array (20,)
        observation, reward, done, info = env.step(env.action_space.sample())
        env.close()

    :param environment_filename: path of the build (extension optional); None waits for the Unity Editor.
    :param worker_id: offset added to ``base_port`` (one per simultaneous environment).
    :param use_visual: observe camera images instead of the vector observation.
    :param uint8_visual: images as uint8 in [0, 255] instead of float64 in [0, 1].
    :param multiagent: drive every agent of the brain at once: observations, rewards and dones
        are lists (one entry per agent) and ``step`` takes a list of actions.
    :param flatten_branched: present a branched discrete action space as one ``Discrete`` space
        (see ``ActionFlattener``) instead of ``MultiDiscrete``.
    :param no_graphics: start the build with ``-nographics -batchmode``.
    :param allow_multiple_visual_obs: observe a list of every camera's image (single agent).
    :param launch: keyword-only, how the build is started (see ``LaunchOptions``): ``base_port``
        (default 5005, the port the original always used), ``seed``, ``timeout_wait``,
        ``exchange_timeout``, ``args``, ``train_mode``, ``log_dir``.
    :raises UnityGymException: the environment has more or less than one brain, no external
        brain, ``use_visual`` without cameras, stacked vector observations, or an agent count
        that does not fit ``multiagent``.
    :raises mlagents.envs.exception.UnityException: the environment could not be started.

    Spaces: ``action_space`` is ``Discrete(n)`` (one branch, or flattened branches),
    ``MultiDiscrete(branch sizes)`` or ``Box(-1, 1, (n,), float32)`` (continuous).
    ``observation_space`` is ``Box(-inf, inf, (vector size,), float32)``, or with ``use_visual``
    ``Box(0, 1, (height, width, 1 or 3), float32)`` of the first camera (as in the original, also
    when the observations are uint8 or a list of several cameras). Observations themselves are
    float64 (vector and images) or uint8 (images with ``uint8_visual``).
    """

    def __init__(
        self,
        environment_filename: str | None,
        worker_id: int = 0,
        use_visual: bool = False,
        uint8_visual: bool = False,
        multiagent: bool = False,
        flatten_branched: bool = False,
        no_graphics: bool = False,
        allow_multiple_visual_obs: bool = False,
        **launch: Unpack[LaunchOptions],
    ) -> None:
        self._start(
            environment_filename,
            worker_id,
            use_visual,
            uint8_visual,
            multiagent,
            flatten_branched,
            no_graphics,
            allow_multiple_visual_obs,
            launch,
        )
        if self.use_visual:
            self._observation_space: spaces.Box = spaces.Box(
                0, 1, dtype=np.float32, shape=self._camera_shape(0)
            )
        else:
            high = np.full(self._brain.vector_observation_space_size, np.inf, dtype=np.float32)
            self._observation_space = spaces.Box(-high, high, dtype=np.float32)

    def reset(self) -> Any:
        """Reset the environment (an Academy reset: every agent starts a new episode).

        :return: the initial observation (a list per agent in multi-agent mode).
        :raises UnityGymException: the number of agents does not fit the mode or changed.
        """
        info = self._reset_brain()
        if not self._multiagent:
            obs, _, _, _ = self._single_step(info)
        else:
            obs, _, _, _ = self._multi_step(info)
        return obs

    def step(self, action: Any) -> GymStepResult:
        """Apply ``action`` and run the environment to its next decision.

        :param action: one action (an int, an array of branch actions, or a float array) or,
            in multi-agent mode, a list with one action per agent.
        :return: ``(observation, reward, done, info)``; ``info`` holds ``"text_observation"`` and
            ``"brain_info"`` (the ``BrainInfo``). Multi-agent: observation, reward, done and the
            text observations are lists over agents. Agents whose episode ended are reset by the
            environment itself; ``reset()`` restarts all of them.
        :raises UnityGymException: malformed multi-agent action list or changed agent count.
        :raises mlagents.envs.exception.UnityActionException: the action does not fit the brain, or
            the Academy's episode is over (call ``reset()``).
        """
        info = self._step_brain(self._flatten_actions(action))
        if not self._multiagent:
            result = self._single_step(info)
            self.game_over = result[2]
        else:
            result = self._multi_step(info)
            self.game_over = all(result[2])
        return result

    def _single_step(self, info: BrainInfo) -> GymStepResult:
        if self.use_visual:
            visual_obs = info.visual_observations
            if self._allow_multiple_visual_obs:
                self.visual_obs = [self._preprocess_single(camera[0]) for camera in visual_obs]
            else:
                self.visual_obs = self._preprocess_single(visual_obs[0][0])
            default_observation = self.visual_obs
        else:
            default_observation = info.vector_observations[0, :]
        return (
            default_observation,
            required_field(info.rewards, "rewards")[0],
            required_field(info.local_done, "local_done")[0],
            {"text_observation": info.text_observations[0], "brain_info": info},
        )

    def _multi_step(self, info: BrainInfo) -> GymStepResult:
        if self.use_visual:
            self.visual_obs = self._preprocess_multi(info.visual_observations)
            default_observation = self.visual_obs
        else:
            default_observation = info.vector_observations
        return (
            list(default_observation),
            info.rewards,
            info.local_done,
            {"text_observation": info.text_observations, "brain_info": info},
        )

    def render(self, mode: str = "rgb_array") -> Any:
        """The last visual observation returned (None without ``use_visual``)."""
        return self.visual_obs

    def seed(self, seed: int | None = None) -> None:
        """Unity environments cannot be seeded after start-up (pass ``seed=`` to the constructor)."""
        logger.warning("Could not seed environment %s", self.name)
        return None

    def __enter__(self) -> "UnityEnv":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @property
    def metadata(self) -> dict[str, list[str]]:
        return {"render.modes": ["rgb_array"]}

    @property
    def reward_range(self) -> tuple[float, float]:
        return -float("inf"), float("inf")

    @property
    def spec(self) -> None:
        return None

    @property
    def action_space(self) -> ActionSpace:
        return self._action_space

    @property
    def observation_space(self) -> spaces.Box:
        return self._observation_space

    @property
    def unwrapped(self) -> "UnityEnv":
        return self
