"""Whole-brain conversions shared by ``UnityVecEnv`` and ``UnityParallelEnv``: the spaces of one
agent of a brain, the observations of every agent of a ``BrainInfo`` as one array, a batch of
actions as the array ``UnityEnvironment.step`` takes, and the agents of a ``BrainInfo`` in a fixed
order.

Everything here works on all agents of a brain at once (numpy operations, no loop over agents).
"""

import numpy as np
from gymnasium import spaces

from gym_unity.envs.brain_info import required_field
from gym_unity.envs.exception import UnityGymException
from mlagents.envs.brain import BrainInfo, BrainParameters, take_agents

AgentActionSpace = spaces.Discrete | spaces.MultiDiscrete | spaces.Box


def agent_action_space(brain: BrainParameters) -> AgentActionSpace:
    """The action space of one agent: ``Discrete(n)`` (one branch), ``MultiDiscrete(branch sizes)``
    or ``Box(-1, 1, (size,), float32)`` (continuous)."""
    sizes = list(brain.vector_action_space_size)
    if brain.vector_action_space_type == "discrete":
        if len(sizes) == 1:
            return spaces.Discrete(sizes[0])
        return spaces.MultiDiscrete(sizes)
    high = np.ones(sizes[0], dtype=np.float32)
    return spaces.Box(-high, high, dtype=np.float32)


def agent_observation_space(brain: BrainParameters, use_visual: bool) -> spaces.Box:
    """The observation space of one agent: its whole vector observation (every stacked frame,
    oldest first) as ``Box(-inf, inf, (size * stacks,), float32)``, or with ``use_visual`` its
    first camera as ``Box(0, 255, (height, width, channels), uint8)`` (what image policies expect).

    :raises UnityGymException: ``use_visual`` without a camera, or no vector observation without it.
    """
    if use_visual:
        if brain.number_visual_observations == 0:
            raise UnityGymException(
                f"use_visual=True, but the brain '{brain.brain_name}' has no visual observation; "
                "use use_visual=False to observe its vector observation."
            )
        resolution = brain.camera_resolutions[0]
        channels = 1 if resolution["blackAndWhite"] else 3
        shape = (resolution["height"], resolution["width"], channels)
        return spaces.Box(0, 255, shape=shape, dtype=np.uint8)
    size = brain.vector_observation_space_size * brain.num_stacked_vector_observations
    if size == 0:
        raise UnityGymException(
            f"The brain '{brain.brain_name}' has no vector observation; use use_visual=True to observe its camera."
        )
    return spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)


def batch_observations(info: BrainInfo, use_visual: bool) -> np.ndarray:
    """The observations of every agent of ``info``: float32 ``(n, size)``, or with ``use_visual``
    the first camera's images as uint8 ``(n, height, width, channels)``."""
    if use_visual:
        images = np.asarray(info.visual_observations[0])
        return (255.0 * images).astype(np.uint8)
    return np.asarray(info.vector_observations, dtype=np.float32)


def batch_flags(info: BrainInfo) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rewards float32, done bool, max_step_reached bool)`` of every agent of ``info``."""
    rewards = np.asarray(required_field(info.rewards, "rewards"), dtype=np.float32)
    done = np.asarray(required_field(info.local_done, "local_done"), dtype=bool)
    max_reached = np.asarray(required_field(info.max_reached, "max_reached"), dtype=bool)
    return rewards, done, max_reached


def unity_actions(actions: np.ndarray, space: AgentActionSpace, n_agents: int) -> np.ndarray:
    """A batch of ``n_agents`` actions (first axis: agents) as the ``(n_agents, action length)``
    float array ``UnityEnvironment.step`` takes for one brain.

    :raises UnityGymException: the batch has the wrong shape.
    """
    array = np.asarray(actions)
    if isinstance(space, spaces.Discrete):
        expected: tuple[int, ...] = (n_agents,)
        if array.shape == (n_agents, 1):
            array = array[:, 0]
    else:
        expected = (n_agents, *space.shape)
    if array.shape != expected:
        raise UnityGymException(
            f"Expected actions of shape {expected} (one {space} action per agent), got shape {array.shape}."
        )
    return array.reshape(n_agents, -1).astype(np.float32, copy=False)


def agents_in_order(
    info: BrainInfo, expected: list[int], owner: str, brain: str, where: str = ""
) -> BrainInfo:
    """``info`` with its agents in the order ``expected`` (the agent ids of the first reset).

    :param owner: the wrapper class, ``brain`` the brain and ``where`` (e.g. ``" (build 1)"``)
        where it happened: they are named in the error.
    :raises UnityGymException: not exactly the agents ``expected`` decided (on-demand decisions,
        agents that appear, disappear or change brain).
    """
    agents = required_field(info.agents, "agents")
    if agents == expected:
        return info
    if len(agents) == len(expected) and set(agents) == set(expected):
        position = {agent: row for row, agent in enumerate(agents)}
        return take_agents(info, np.array([position[agent] for agent in expected]))
    raise UnityGymException(
        f"{owner} needs every agent to decide at every step and keep its brain, but {len(agents)} of "
        f"the {len(expected)} agents of the brain '{brain}'{where} asked for a decision. On-demand "
        "decisions, agents that appear or disappear and agents that change brain are not supported: "
        "use UnityEnvironment directly."
    )
