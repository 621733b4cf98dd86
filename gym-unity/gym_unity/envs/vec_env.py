"""``UnityVecEnv``: every agent of one brain, over one or more builds, as a stable-baselines3 ``VecEnv``.

Each agent is one sub-environment. All builds are stepped together (each waited for in its own
thread), and observations, rewards and flags go from ``BrainInfo`` to the batch arrays stable-baselines3
reads with numpy operations over whole brains. Needs the optional ``stable-baselines3`` package
(``pip install gym_unity[sb3]``).
"""

import logging
from collections.abc import Sequence
from concurrent.futures import wait
from typing import Any, Unpack

import numpy as np

from gym_unity.envs import batched
from gym_unity.envs.brain_info import brain_info_of, required_field
from gym_unity.envs.builds import Builds, LaunchOptions, unity_seed
from gym_unity.envs.exception import UnityGymException
from gym_unity.envs.reset_options import reset_config
from mlagents.envs.brain import BrainInfo, BrainParameters

try:
    from stable_baselines3.common.vec_env.base_vec_env import (
        VecEnv,
        VecEnvIndices,
        VecEnvObs,
        VecEnvStepReturn,
    )
except ImportError as missing:  # pragma: no cover - depends on the installation
    raise ImportError(
        "UnityVecEnv needs stable-baselines3: pip install 'gym_unity[sb3]' (or pip install stable-baselines3)."
    ) from missing

logger = logging.getLogger("gym_unity")


class UnityVecEnv(VecEnv):
    """Every agent of one brain of ``n_envs`` builds as the sub-environments of a stable-baselines3
    ``VecEnv``: ``num_envs`` = agents per build x ``n_envs``, build 0's agents first.

    Example (3DBall: 12 agents per build, so 24 sub-environments)::

        env = UnityVecEnv("example-envs/builds/3DBall", n_envs=2, no_graphics=True)
        model = stable_baselines3.PPO("MlpPolicy", env)

    Episodes: an agent that is done has already been reset by the environment (a Unity agent resets
    itself), so its observation in that step is the first one of its next episode, which is what
    stable-baselines3 expects of an auto-resetting ``VecEnv``. Its info holds
    ``"terminal_observation"`` and ``"TimeLimit.truncated"`` (True when the agent reached its
    maximum step count, or the Academy its own). Unity never sends the last observation of a
    finished episode, so ``"terminal_observation"`` is the agent's last observation in that
    episode (the one its final action was chosen from). Agents that are done go on in their next
    episode while the others continue theirs; an Academy that reached its step limit is reset.

    Seeding: build ``i`` starts with seed ``seed + i``. ``seed(s)`` (as stable-baselines3's
    ``seed=`` argument calls it) restarts the builds with seeds ``s + i`` at the next ``reset()``,
    unless they are still exactly as started with those seeds.

    :param environment_filename: path of the build (extension optional); None connects to one
        environment started by hand (the Unity Editor), then ``n_envs`` must be 1.
    :param n_envs: number of builds, on ports ``base_port + worker_id + i``.
    :param brain_name: the brain whose agents are driven; may be omitted when the environment has
        one external brain. Agents of other external brains receive zero actions.
    :param worker_id: port offset of the first build.
    :param use_visual: observe the first camera as uint8 ``(height, width, channels)`` instead of
        the vector observation.
    :param no_graphics: start the builds with ``-nographics -batchmode``.
    :param launch: how the builds are started (see ``LaunchOptions``): ``base_port``, ``seed``,
        ``timeout_wait``, ``exchange_timeout``, ``args``, ``train_mode``, ``log_dir``.
    :raises UnityGymException: no external brain, a missing or unknown ``brain_name``, an
        observation that does not exist, or agents that do not all decide at every step.
    :raises mlagents.envs.exception.UnityException: a build could not be started.
    """

    render_mode = None

    def __init__(
        self,
        environment_filename: str | None,
        n_envs: int = 1,
        *,
        brain_name: str | None = None,
        worker_id: int = 0,
        use_visual: bool = False,
        no_graphics: bool = False,
        **launch: Unpack[LaunchOptions],
    ) -> None:
        if isinstance(n_envs, bool) or not isinstance(n_envs, int) or n_envs < 1:
            raise UnityGymException(f"n_envs is the number of builds to start, at least 1; got {n_envs!r}.")
        self._use_visual = use_visual
        self._builds = Builds(
            type(self).__name__, environment_filename, worker_id, no_graphics, launch, count=n_envs
        )
        self._pending: list[Any] | None = None
        self._pending_seed: int | None = None
        try:
            self._brain = self._choose_brain(brain_name)
            observation_space = batched.agent_observation_space(self._brain, use_visual)
            action_space = batched.agent_action_space(self._brain)
            self._agent_action_space = action_space
            infos = self._builds.map(lambda i: self._reset_build(i, None))
            self._agent_ids = [required_field(info.agents, "agents") for info in infos]
            for build, ids in enumerate(self._agent_ids):
                if not ids:
                    raise UnityGymException(
                        f"No agent of the brain '{self.brain_name}' asked for a decision after the reset of "
                        f"build {build}; UnityVecEnv needs every agent of the brain to decide at every step."
                    )
            counts = [len(ids) for ids in self._agent_ids]
            self._bounds = np.cumsum([0, *counts])
            self._observations = np.concatenate(
                [batched.batch_observations(info, use_visual) for info in infos]
            )
            super().__init__(int(self._bounds[-1]), observation_space, action_space)
        except BaseException:
            self.close()
            raise
        logger.info(f"UnityVecEnv: {n_envs} build(s) with {counts} agents of '{self.brain_name}'.")

    # ----------------------------------------------------------------------------------------------
    # Start-up

    def _choose_brain(self, brain_name: str | None) -> BrainParameters:
        environment = self._builds.environments[0]
        external = list(environment.external_brain_names)
        if not external:
            raise UnityGymException(
                "The environment has no external brain (none is controlled from Python); "
                "UnityVecEnv drives the agents of an external brain."
            )
        if brain_name is None:
            if len(external) > 1:
                raise UnityGymException(
                    f"The environment has several external brains ({', '.join(external)}); pass "
                    "brain_name=... to choose the one UnityVecEnv drives, or use UnityParallelEnv for all of them."
                )
            brain_name = external[0]
        elif brain_name not in external:
            raise UnityGymException(
                f"The environment has no external brain '{brain_name}'; its external brains are: {', '.join(external)}."
            )
        self.brain_name: str = brain_name
        return environment.brains[brain_name]

    # ----------------------------------------------------------------------------------------------
    # VecEnv API

    def reset(self) -> VecEnvObs:
        """Reset every build (an Academy reset each) and return every agent's first observation.

        A seed set by ``seed()`` restarts the builds first (see the class documentation); a
        ``{"config": {name: value}}`` option set by ``set_options()`` changes reset parameters.

        :raises UnityGymException: an unknown option (see ``reset_options``).
        :raises mlagents.envs.exception.UnityEnvironmentException: an unknown reset parameter (the
            error lists the environment's).
        """
        self._builds.require_open()
        options = self._options[0] if self._options else None
        config = reset_config(options, self._builds.environments[0].reset_parameters)
        if self._pending_seed is not None:
            self._apply_seed(self._pending_seed)
            self._pending_seed = None
        self._reset_seeds()
        self._reset_options()
        self._pending = None
        infos = self._builds.map(lambda i: self._reset_build(i, config))
        self._observations = np.concatenate(
            [
                batched.batch_observations(self._in_order(i, info), self._use_visual)
                for i, info in enumerate(infos)
            ]
        )
        return self._observations.copy()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Restart the builds with seeds ``seed + i`` at the next ``reset()`` (see the class
        documentation); None draws a seed. Returns the sub-environments' seeds as stable-baselines3 does."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.int32).max, dtype=np.int64))
        self._pending_seed = unity_seed(seed)
        return super().seed(seed)

    def step_async(self, actions: np.ndarray) -> None:
        """Send one action per sub-environment (an array with the agents on the first axis)."""
        self._builds.require_open()
        batch = batched.unity_actions(actions, self._agent_action_space, self.num_envs)
        bounds = self._bounds
        self._pending = [
            self._builds.submit(self._step_build, i, batch[bounds[i] : bounds[i + 1]])
            for i in range(self._builds.count)
        ]

    def step_wait(self) -> VecEnvStepReturn:
        """Wait for every build's next decision: ``(observations, rewards, dones, infos)``."""
        if self._pending is None:
            raise UnityGymException("step_wait() was called without step_async(); call step() instead.")
        pending, self._pending = self._pending, None
        if len(pending) > 1:
            wait(pending)  # every build has answered (or failed) before an error is raised
        results = [future.result() for future in pending]
        if len(results) == 1:
            observations, rewards, dones, truncated = results[0]
        else:
            observations, rewards, dones, truncated = (np.concatenate(column) for column in zip(*results))
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        previous = self._observations
        for index in np.flatnonzero(dones).tolist() if dones.any() else ():
            infos[index]["terminal_observation"] = previous[index].copy()
            infos[index]["TimeLimit.truncated"] = bool(truncated[index])
        self._observations = observations
        return observations.copy(), rewards, dones, infos

    def close(self) -> None:
        """End every build. Calling it again does nothing."""
        self._pending = None
        builds = getattr(self, "_builds", None)  # None when the constructor failed to start the builds
        if builds is not None:
            builds.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of this ``UnityVecEnv`` once per index (the sub-environments are agents of
        one Unity environment, not Python objects of their own)."""
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set the attribute on this ``UnityVecEnv`` (shared by every sub-environment)."""
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Not available: the sub-environments are agents of a Unity environment, without methods."""
        raise UnityGymException(
            f"UnityVecEnv's sub-environments are agents of a Unity environment; they have no method "
            f"{method_name!r}. Call the UnityVecEnv (or its unity_environments) directly."
        )

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Always False: no gymnasium wrapper is involved."""
        return [False for _ in self._get_indices(indices)]

    # ----------------------------------------------------------------------------------------------
    # Extra members

    @property
    def n_builds(self) -> int:
        """Number of builds (the ``n_envs`` of the constructor)."""
        return self._builds.count

    @property
    def agents_per_build(self) -> list[int]:
        """Number of sub-environments (agents) of each build."""
        return np.diff(self._bounds).tolist()

    @property
    def unity_environments(self) -> list[Any]:
        """The ``UnityEnvironment`` of each build (e.g. for its ``reset_parameters``)."""
        return list(self._builds.environments)

    # ----------------------------------------------------------------------------------------------
    # Per build (run in the build's thread)

    def _reset_build(self, build: int, config: dict[str, float] | None) -> BrainInfo:
        return self._brain_info(self._builds.reset(build, config))

    def _step_build(
        self, build: int, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Step build ``build``: ``(observations, rewards, dones, truncated)`` of its agents."""
        info = self._in_order(build, self._brain_info(self._builds.step(build, {self.brain_name: actions})))
        rewards, dones, truncated = batched.batch_flags(info)
        if self._builds.environments[build].global_done:
            # The Academy reached its step limit: every agent's episode ended (Unity already reset
            # them), and the environment takes nothing but a reset next.
            info = self._in_order(build, self._reset_build(build, None))
            dones = np.ones_like(dones)
            truncated = np.ones_like(truncated)
        truncated &= dones
        return batched.batch_observations(info, self._use_visual), rewards, dones, truncated

    def _brain_info(self, all_brain_info: dict[str, BrainInfo]) -> BrainInfo:
        return brain_info_of(all_brain_info, self.brain_name)

    def _in_order(self, build: int, info: BrainInfo) -> BrainInfo:
        """``info`` with the build's agents in the order of the first reset.

        :raises UnityGymException: not exactly the agents of the first reset decided.
        """
        where = f" (build {build})"
        return batched.agents_in_order(
            info, self._agent_ids[build], type(self).__name__, self.brain_name, where
        )

    def _apply_seed(self, seed: int) -> None:
        """Restart build ``i`` with seed ``seed + i`` (see ``Builds.reseed``); the agents of its
        start-up reset must be those of the first."""
        for build in range(self._builds.count):
            restarted = self._builds.reseed(build, seed + build)
            if restarted is not None:
                self._in_order(build, self._brain_info(restarted))
