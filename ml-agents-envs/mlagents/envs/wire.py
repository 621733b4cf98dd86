"""Translation between the protobuf messages of the wire and the Python objects of ``mlagents.envs``.

Python's side of the conversation (the environment's side is ``mlagents.example_envs.sdk.wire``):

* the environment's initialization output becomes an :class:`AcademyDescription`;
* each ``UnityRLOutput`` becomes one :class:`~mlagents.envs.brain.BrainInfo` per brain present
  (:func:`brain_infos_from_output`);
* reset and step requests become ``UnityInput`` messages (:func:`reset_input`, :func:`step_input`);
* a length in front of serialized bytes is a varint (:func:`encode_varint`).

Nothing here checks the caller's arguments: :class:`~mlagents.envs.environment.UnityEnvironment`
validates and completes them first.
"""

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.communicator_objects import (
    CustomAction,
    CustomResetParameters,
    UnityInput,
    UnityRLInitializationInput,
    UnityRLInitializationOutput,
    UnityRLInput,
    UnityRLOutput,
)
from mlagents.envs.exception import UnityEnvironmentException

# CommandProto values.
COMMAND_STEP = 0
COMMAND_RESET = 1


class AcademyDescription(NamedTuple):
    """What an environment declares when it connects.

    :ivar name: the Academy's name.
    :ivar version: the protocol version string (e.g. ``"API-9"``).
    :ivar log_path: the log path it reports (empty for 0.8/0.9 builds).
    :ivar brains: brain name -> parameters, for every brain, in the order declared.
    :ivar external_brain_names: the brains controlled from Python, in the order declared.
    :ivar reset_parameters: the Academy's reset parameters and their values.
    """

    name: str
    version: str
    log_path: str
    brains: dict[str, BrainParameters]
    external_brain_names: list[str]
    reset_parameters: dict[str, float]


def encode_varint(value: int) -> bytes:
    """``value`` (>= 0) as protobuf's base-128 varint: 7 bits a byte, least significant first, the
    high bit set on every byte but the last. It prefixes a length-delimited field or a message of a
    stream (a ``.demo`` file) with its length."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def initialization_input(seed: int) -> UnityInput:
    """The first message to the environment: the random seed."""
    inputs = UnityInput()
    inputs.rl_initialization_input.CopyFrom(UnityRLInitializationInput(seed=seed))
    return inputs


def academy_description(output: UnityRLInitializationOutput) -> AcademyDescription:
    """The environment's initialization output as an :class:`AcademyDescription`."""
    return AcademyDescription(
        name=output.name,
        version=output.version,
        log_path=output.log_path,
        brains={p.brain_name: BrainParameters.from_proto(p) for p in output.brain_parameters},
        external_brain_names=[p.brain_name for p in output.brain_parameters if p.is_training],
        reset_parameters=dict(output.environment_parameters.float_parameters),
    )


def brain_infos_from_output(
    output: UnityRLOutput, brains: Mapping[str, BrainParameters], worker_id: int
) -> tuple[AllBrainInfo, bool]:
    """BrainInfos of every brain in ``output`` and the academy's done flag.

    :param brains: the brains the environment declared at start-up.
    :param worker_id: prefixed to the agent ids (see :meth:`BrainInfo.from_agent_proto`).
    :raises UnityEnvironmentException: the output has agents of a brain that was not declared.
    """
    state: AllBrainInfo = {}
    for brain_name in output.agentInfos:
        if brain_name not in brains:
            raise UnityEnvironmentException(
                f"The environment sent agents of brain '{brain_name}', which it did not declare at start-up."
            )
        agent_info_list = output.agentInfos[brain_name].value
        state[brain_name] = BrainInfo.from_agent_proto(worker_id, agent_info_list, brains[brain_name])
    return state, bool(output.global_done)


def wrap_unity_input(rl_input: UnityRLInput) -> UnityInput:
    """``rl_input`` inside a ``UnityInput``."""
    result = UnityInput()
    result.rl_input.CopyFrom(rl_input)
    return result


def reset_input(
    training: bool, config: Mapping[str, float], custom_reset_parameters: CustomResetParameters | None
) -> UnityInput:
    """A RESET request with exactly the reset parameters of ``config`` (the environment parameters
    are sent even when empty)."""
    rl_in = UnityRLInput()
    rl_in.is_training = training
    rl_in.environment_parameters.SetInParent()
    for key, value in config.items():
        rl_in.environment_parameters.float_parameters[key] = float(value)
    if custom_reset_parameters is not None:
        rl_in.environment_parameters.custom_reset_parameters.CopyFrom(custom_reset_parameters)
    rl_in.command = COMMAND_RESET
    return wrap_unity_input(rl_in)


def step_input(
    n_agents: Mapping[str, int],
    vector_action: Mapping[str, Sequence[float]],
    memory: Mapping[str, Sequence[float]],
    text_action: Mapping[str, Sequence[str]],
    value: Mapping[str, Any],
    custom_action: Mapping[str, Sequence[CustomAction | None]],
) -> UnityInput:
    """A STEP request: one ``AgentActionProto`` per agent for every brain of ``vector_action``
    that has agents (brains without agents get no entry).

    Each argument maps a brain name to its agents' values, already completed for every brain of
    ``vector_action``: flat action and memory lists (agent ``i`` gets the ``i``-th equal slice),
    one text per agent (or none), per-agent value estimates or None, one ``CustomAction`` or
    None per agent.

    :param n_agents: the number of agents of each brain at the last decision.
    """
    rl_in = UnityRLInput()
    for b in vector_action:
        count = n_agents.get(b, 0)
        if count == 0:
            continue
        actions = vector_action[b]
        memories = memory[b]
        action_stride = len(actions) // count
        memory_stride = len(memories) // count
        texts = text_action[b] if len(text_action[b]) > 0 else None
        customs = custom_action[b]
        values = None if value.get(b) is None else np.asarray(value[b], dtype=np.float64).reshape(-1).tolist()
        add = rl_in.agent_actions[b].value.add
        # Fields left at their default are not set: the message is the same, and cheaper to build.
        for i in range(count):
            action = add(vector_actions=actions[i * action_stride : (i + 1) * action_stride])
            if memory_stride:
                action.memories.extend(memories[i * memory_stride : (i + 1) * memory_stride])
            if texts is not None and texts[i]:
                action.text_actions = texts[i]
            if customs[i] is not None:
                action.custom_action.CopyFrom(customs[i])
            if values is not None:
                action.value = values[i]
    rl_in.command = COMMAND_STEP
    return wrap_unity_input(rl_in)
