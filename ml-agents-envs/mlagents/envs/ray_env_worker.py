"""The environment side of :class:`~mlagents.envs.ray_env_manager.RayEnvManager`: one Ray actor per
environment, and the compact form in which observations travel through Ray's object store.

:class:`EnvActor` is a plain class; the manager turns it into a Ray actor (``ray.remote``), so this
module imports without Ray. The actor creates its environment with the pickled factory (a normal
``UnityEnvironment`` next to its build, on the actor's node) and serves the manager's calls.

Observations travel as :class:`PackedBrainInfo`: every per-agent field is one numpy array (Ray
stores arrays in its object store without copying them into the pickle stream), instead of
Python lists pickled element by element. :func:`unpack_all_brain_info` rebuilds equal BrainInfos
(same types, same values) with writable arrays.
"""

import logging
import os
import signal
from typing import Any, NamedTuple

import cloudpickle
import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.communicator_objects import CustomResetParameters
from mlagents.envs.env_manager import EnvFactory, advance_environment, create_environment
from mlagents.envs.env_worker import LoggingSetup
from mlagents.envs.timers import TimerNode, get_timer_root, reset_timers

logger = logging.getLogger("mlagents.envs")


class PackedBrainInfo(NamedTuple):
    """A BrainInfo with its per-agent lists as numpy arrays (see the module docstring).

    :ivar visual_observations: per camera, the agents' images stacked on axis 0.
    :ivar arrays: the BrainInfo's array fields (vector observations, memories, previous vector
        actions, action masks) as they are; None stays None.
    :ivar rewards: float64 (n,); :ivar local_done: bool (n,); :ivar max_reached: bool (n,).
    :ivar agents: the agent ids, (n,) array of str or object.
    :ivar rest: the fields without a numeric form (text observations and actions, custom
        observations), pickled as they are.
    """

    visual_observations: list[np.ndarray]
    arrays: dict[str, np.ndarray | None]
    rewards: np.ndarray | None
    local_done: np.ndarray | None
    max_reached: np.ndarray | None
    agents: np.ndarray | None
    rest: dict[str, Any]


_ARRAY_FIELDS = ("vector_observations", "memories", "previous_vector_actions", "action_masks")
_REST_FIELDS = ("text_observations", "previous_text_actions", "custom_observations")


def _list_to_array(values: list[Any] | None, dtype: Any) -> np.ndarray | None:
    if values is None:
        return None
    return np.asarray(values, dtype=dtype)


def _array_to_list(values: np.ndarray | None) -> list[Any] | None:
    return None if values is None else values.tolist()


def pack_brain_info(info: BrainInfo) -> PackedBrainInfo:
    """The compact form of ``info`` (does not modify it)."""
    visual = [np.stack(camera) if len(camera) else np.zeros((0,)) for camera in info.visual_observations]
    agents = info.agents
    # Agent ids are strings from a UnityEnvironment; anything else keeps its type in an object array.
    agent_dtype = str if agents is not None and all(isinstance(agent, str) for agent in agents) else object
    return PackedBrainInfo(
        visual_observations=visual,
        arrays={name: getattr(info, name) for name in _ARRAY_FIELDS},
        rewards=_list_to_array(info.rewards, np.float64),
        local_done=_list_to_array(info.local_done, bool),
        max_reached=_list_to_array(info.max_reached, bool),
        agents=_list_to_array(agents, agent_dtype),
        rest={name: getattr(info, name) for name in _REST_FIELDS},
    )


def unpack_brain_info(packed: PackedBrainInfo) -> BrainInfo:
    """The BrainInfo that :func:`pack_brain_info` packed, with arrays this process owns (writable)."""
    arrays = {name: None if value is None else np.array(value) for name, value in packed.arrays.items()}
    visual = [[np.array(image) for image in camera] for camera in packed.visual_observations]
    return BrainInfo(
        visual_observation=visual,
        vector_observation=arrays["vector_observations"],  # type: ignore[arg-type]
        text_observations=packed.rest["text_observations"],
        memory=arrays["memories"],
        reward=_array_to_list(packed.rewards),
        agents=_array_to_list(packed.agents),
        local_done=_array_to_list(packed.local_done),
        vector_action=arrays["previous_vector_actions"],
        text_action=packed.rest["previous_text_actions"],
        max_reached=_array_to_list(packed.max_reached),
        action_mask=arrays["action_masks"],
        custom_observations=packed.rest["custom_observations"],
    )


def pack_all_brain_info(all_brain_info: AllBrainInfo) -> dict[str, PackedBrainInfo]:
    """:func:`pack_brain_info` for every brain."""
    return {name: pack_brain_info(info) for name, info in all_brain_info.items()}


def unpack_all_brain_info(packed: dict[str, PackedBrainInfo]) -> AllBrainInfo:
    """:func:`unpack_brain_info` for every brain."""
    return {name: unpack_brain_info(info) for name, info in packed.items()}


class PackedStep(NamedTuple):
    """What an actor returns for a step: the new observations and its timers for that step."""

    all_brain_info: dict[str, PackedBrainInfo]
    timer_root: TimerNode | None


class ActorStarted(NamedTuple):
    """What an actor reports once its environment runs.

    :ivar node_id: the Ray node the actor (and its build) runs on.
    :ivar build_pid: the build's process id on that node (None for an environment without one).
    :ivar build_log_path: the build's log file on that node (None when unknown).
    """

    node_id: str
    build_pid: int | None
    build_log_path: str | None


class EnvActor:
    """One environment in a Ray actor: created by :meth:`start`, then stepped, reset and closed by
    the manager. Exceptions of the environment reach the manager through Ray with their type."""

    def __init__(self, worker_id: int, logging_setup: LoggingSetup | None = None) -> None:
        self.worker_id = worker_id
        self.env: BaseUnityEnvironment | None = None
        if logging_setup is not None:
            logging_setup.apply()

    def start(self, pickled_env_factory: bytes, restart: int = 0) -> ActorStarted:
        """Create the environment (launches its build on this node); ``restart``: how often this
        worker was restarted before (see :func:`~mlagents.envs.env_manager.create_environment`)."""
        import ray

        env_factory: EnvFactory = cloudpickle.loads(pickled_env_factory)
        self.env = create_environment(env_factory, self.worker_id, restart)
        reset_timers()
        process = getattr(self.env, "proc1", None)
        pid = getattr(process, "pid", None)
        log_path = getattr(self.env, "build_log_path", None)
        return ActorStarted(
            ray.get_runtime_context().get_node_id(),
            pid if isinstance(pid, int) else None,
            log_path if isinstance(log_path, str) else None,
        )

    def step(self, all_action_info: dict[str, ActionInfo]) -> PackedStep:
        """Step with the decided actions (or reset after ``global_done``)."""
        all_brain_info = advance_environment(self._env(), all_action_info)
        timer_root = get_timer_root()
        reset_timers()
        return PackedStep(pack_all_brain_info(all_brain_info), timer_root)

    def reset(
        self,
        config: dict[str, float] | None,
        train_mode: bool,
        custom_reset_parameters: CustomResetParameters | None,
    ) -> dict[str, PackedBrainInfo]:
        return pack_all_brain_info(self._env().reset(config, train_mode, custom_reset_parameters))

    def external_brains(self) -> dict[str, BrainParameters]:
        return self._env().external_brains

    def reset_parameters(self) -> dict[str, float]:
        return self._env().reset_parameters

    def global_done(self) -> bool:
        return bool(self._env().global_done)

    def close(self) -> None:
        """Close the environment (ends its build); the manager ends the actor afterwards."""
        env, self.env = self.env, None
        if env is not None:
            env.close()

    def _env(self) -> BaseUnityEnvironment:
        if self.env is None:
            raise RuntimeError(f"The environment of Ray worker {self.worker_id} is not running.")
        return self.env


def kill_process_group(pgid: int) -> bool:
    """SIGKILL the process group ``pgid`` if it is a build's own session (a build is started as a
    session leader, so pid = session id = group id; checking that avoids hitting an unrelated
    process that reused the pid). Run on the build's node. True when a signal was sent."""
    try:
        if os.getsid(pgid) != pgid:
            return False
        os.killpg(pgid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False
