"""``UnityGymnasiumEnv``: a single-agent Unity environment behind today's Gymnasium API.

``reset(seed=, options=) -> (observation, info)`` and
``step(action) -> (observation, reward, terminated, truncated, info)``, spaces with the dtypes of
the observations, ``render_mode``. It passes ``gymnasium.utils.env_checker.check_env`` and
stable-baselines3 trains on it as it is.
"""

from typing import Any, Unpack

import gymnasium
import numpy as np
from gymnasium import spaces

from gym_unity.envs.brain_info import required_field
from gym_unity.envs.builds import LaunchOptions
from gym_unity.envs.core import UnityGymCore
from gym_unity.envs.exception import UnityGymException
from gym_unity.envs.reset_options import reset_config
from mlagents.envs.brain import BrainInfo


class UnityGymnasiumEnv(UnityGymCore, gymnasium.Env):
    """A Unity environment with one brain and one agent as a ``gymnasium.Env``.

    Example (the Basic example build: ``Discrete(3)`` actions, 20 observations)::

        env = UnityGymnasiumEnv("example-envs/builds/Basic", worker_id=1, no_graphics=True)
        observation, info = env.reset(seed=42)          # float32 array (20,)
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
        env.close()

    Spaces: ``action_space`` is ``Discrete(n)`` (one branch, or branches flattened with
    ``flatten_branched``), ``MultiDiscrete(branch sizes)`` or ``Box(-1, 1, (n,), float32)``.
    ``observation_space`` is ``Box(-inf, inf, (vector size,), float32)``; with ``use_visual`` the
    first camera ``Box(0, 1, (height, width, 1 or 3), float32)`` or, with ``uint8_visual``,
    ``Box(0, 255, ..., uint8)``; with ``allow_multiple_visual_obs`` a ``Dict`` with one such Box
    per camera under the keys ``"camera_0"``, ``"camera_1"``, ... (a Dict rather than a Tuple so
    that stable-baselines3's ``MultiInputPolicy`` accepts it).

    Episodes: ``terminated`` is the agent's ``done`` unless the agent reached its maximum step
    count (or the Academy its own), which is reported as ``truncated`` instead. After either,
    call ``reset()`` (an Academy reset). ``info`` holds ``"text_observation"`` and
    ``"max_step_reached"``; the full ``BrainInfo`` of the last decision is ``env.brain_info``.

    Seeding: a Unity environment takes its seed once, at start-up. ``seed`` starts it with that
    seed; ``reset(seed=s)`` restarts the build with seed ``s`` (about a second for the example
    builds), unless it is still as started with that seed, so the same seed always gives the same
    episodes. Seeds above ``2**31 - 1`` are folded into that range (the wire carries an int32).
    An environment started by hand (``environment_filename=None``, the Unity Editor) cannot be
    restarted: there, a seed given to ``reset`` is ignored with a warning.

    :param environment_filename: path of the build (extension optional); None waits for the Unity Editor.
    :param worker_id: offset added to ``base_port`` (one per simultaneous environment).
    :param use_visual: observe camera images instead of the vector observation.
    :param uint8_visual: images as uint8 in [0, 255] (what image policies such as
        stable-baselines3's ``CnnPolicy`` expect) instead of float32 in [0, 1].
    :param flatten_branched: present a branched discrete action space as one ``Discrete`` space.
    :param no_graphics: start the build with ``-nographics -batchmode``.
    :param allow_multiple_visual_obs: observe every camera (``Dict`` observation space).
    :param render_mode: None, or ``"rgb_array"``: ``render()`` returns the first camera's last
        image as uint8 ``(height, width, 3)`` (the environment needs a camera).
    :param launch: how the build is started (see ``LaunchOptions``): ``base_port`` (default 5005),
        ``seed`` (see *Seeding* above), ``timeout_wait``, ``exchange_timeout``, ``args``,
        ``train_mode``, ``log_dir``.
    :raises UnityGymException: the environment has more or less than one brain or agent, no
        external brain, ``use_visual`` or ``render_mode`` without cameras, stacked vector
        observations, or an unknown ``render_mode``.
    :raises mlagents.envs.exception.UnityException: the environment could not be started.
    """

    # Unity's fixed physics step is 0.02 s; agents deciding at every step run at 50 frames per second.
    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    _single_agent_message = (
        "UnityGymnasiumEnv drives exactly one agent, but the brain '{brain}' has {n} agents in the scene. "
        "Use UnityEnv(..., multiagent=True) to drive several agents as lists."
    )
    _agent_count_changed_message = (
        "The number of agents of the brain '{brain}' changed from {expected} to {n}; the environment must "
        "keep exactly one agent deciding at every step."
    )

    def __init__(
        self,
        environment_filename: str | None,
        worker_id: int = 0,
        *,
        use_visual: bool = False,
        uint8_visual: bool = False,
        flatten_branched: bool = False,
        no_graphics: bool = False,
        allow_multiple_visual_obs: bool = False,
        render_mode: str | None = None,
        **launch: Unpack[LaunchOptions],
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise UnityGymException(
                f"Unknown render_mode {render_mode!r}: use None or one of {self.metadata['render_modes']}."
            )
        self.render_mode = render_mode
        self._start(
            environment_filename=environment_filename,
            worker_id=worker_id,
            use_visual=use_visual,
            uint8_visual=uint8_visual,
            multiagent=False,
            flatten_branched=flatten_branched,
            no_graphics=no_graphics,
            allow_multiple_visual_obs=allow_multiple_visual_obs,
            launch=launch,
        )
        try:
            if render_mode == "rgb_array" and self._brain.number_visual_observations == 0:
                raise UnityGymException(
                    "render_mode='rgb_array' shows the first camera of the agent, but the brain "
                    f"'{self.brain_name}' has no visual observation. Use render_mode=None."
                )
            self.action_space = self._action_space
            self.observation_space = self._make_observation_space()
        except BaseException:
            self.close()
            raise

    def _make_observation_space(self) -> spaces.Space:
        if not self.use_visual:
            size = self._brain.vector_observation_space_size
            return spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        if self._allow_multiple_visual_obs:
            cameras = range(self._brain.number_visual_observations)
            return spaces.Dict({_camera_key(camera): self._image_space(camera) for camera in cameras})
        return self._image_space(0)

    def _image_space(self, camera: int) -> spaces.Box:
        shape = self._camera_shape(camera)
        if self.uint8_visual:
            return spaces.Box(0, 255, shape=shape, dtype=np.uint8)
        return spaces.Box(0.0, 1.0, shape=shape, dtype=np.float32)

    # ----------------------------------------------------------------------------------------------
    # Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start a new episode (an Academy reset).

        :param seed: restart the environment with this seed first (see the class documentation).
        :param options: ``{"config": {name: value}}`` changes reset parameters of the environment
            (``UnityEnvironment.reset(config=...)``; they stay in effect for later resets).
        :return: ``(observation, info)``.
        :raises UnityGymException: unknown option (see ``reset_options``), or the environment's
            agents no longer fit.
        :raises mlagents.envs.exception.UnityEnvironmentException: unknown reset parameter (the error
            lists the environment's).
        """
        config = reset_config(options, self.unity_environment.reset_parameters)
        super().reset(seed=seed)
        if seed is not None:
            self._reseed(seed)
        info = self._reset_brain(config)
        return self._observation(info), self._info(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Apply ``action`` and run the environment to the agent's next decision.

        :param action: an element of ``action_space``.
        :return: ``(observation, reward, terminated, truncated, info)``.
        :raises UnityGymException: ``action`` is not in ``action_space``.
        :raises mlagents.envs.exception.UnityActionException: the Academy's episode is over
            (``truncated`` was reported: call ``reset()``).
        """
        self._check_action(action)
        info = self._step_brain(self._flatten_actions(self._plain_action(action)))
        done = bool(required_field(info.local_done, "local_done")[0])
        max_reached = bool(required_field(info.max_reached, "max_reached")[0])
        terminated = done and not max_reached
        # An Academy that reached its own step limit ends every agent's episode.
        truncated = (done and max_reached) or (bool(self.unity_environment.global_done) and not terminated)
        self.game_over = terminated or truncated
        return (
            self._observation(info),
            float(required_field(info.rewards, "rewards")[0]),
            terminated,
            truncated,
            self._info(info),
        )

    def render(self) -> np.ndarray | None:
        """The first camera's last image as uint8 ``(height, width, 3)`` (render_mode "rgb_array"),
        or None when no render mode was chosen."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render_mode; create the environment with render_mode='rgb_array'."
            )
            return None
        assert self._current_state is not None
        frame = (255.0 * self._current_state.visual_observations[0][0]).astype(np.uint8)
        if frame.shape[2] == 1:
            frame = np.repeat(frame, 3, axis=2)
        return frame

    # ----------------------------------------------------------------------------------------------
    # Helpers

    def _check_action(self, action: Any) -> None:
        space = self.action_space
        if isinstance(space, spaces.Box):
            valid = np.shape(action) == space.shape
        else:
            try:
                valid = space.contains(action)
            except (TypeError, ValueError):
                valid = False
        if not valid:
            raise UnityGymException(f"The action {action!r} is not an element of the action space {space}.")

    def _plain_action(self, action: Any) -> Any:
        """A checked action as UnityEnvironment takes it: an int (Discrete) or a flat array."""
        if isinstance(self.action_space, spaces.Discrete):
            return int(np.asarray(action))
        if isinstance(self.action_space, spaces.Box):
            return np.asarray(action, dtype=np.float32).reshape(-1)
        return np.asarray(action).reshape(-1)

    def _observation(self, info: BrainInfo) -> Any:
        if not self.use_visual:
            return info.vector_observations[0].astype(np.float32)
        if self._allow_multiple_visual_obs:
            images = [self._image(camera[0]) for camera in info.visual_observations]
            self.visual_obs = images
            return {_camera_key(camera): image.copy() for camera, image in enumerate(images)}
        self.visual_obs = self._image(info.visual_observations[0][0])
        return self.visual_obs.copy()

    def _image(self, image: np.ndarray) -> np.ndarray:
        if self.uint8_visual:
            return self._preprocess_single(image)
        return image.astype(np.float32)

    @staticmethod
    def _info(info: BrainInfo) -> dict[str, Any]:
        return {
            "text_observation": info.text_observations[0],
            "max_step_reached": bool(required_field(info.max_reached, "max_reached")[0]),
        }


def _camera_key(camera: int) -> str:
    return f"camera_{camera}"
