"""The Python side of the Unity ML-Agents wire: environments, brains, and the policy/action types.

The names below are those ML-Agents 0.9 exported from ``mlagents.envs`` (there through star imports
of ``environment`` and ``exception``): the environment, brain and policy types, the exceptions, the
timers, and the protobuf message classes ``UnityEnvironment`` used.
"""

import logging

from mlagents.envs.action_info import ActionInfo, ActionInfoOutputs
from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import AllBrainInfo, BrainInfo, BrainParameters
from mlagents.envs.communicator_objects import (
    AgentActionProto,
    CustomAction,
    CustomResetParameters,
    EnvironmentParametersProto,
    UnityInput,
    UnityOutput,
    UnityRLInitializationInput,
    UnityRLInitializationOutput,
    UnityRLInput,
    UnityRLOutput,
)
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import (
    SamplerException,
    UnityActionException,
    UnityCommunicationException,
    UnityEnvironmentException,
    UnityException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents.envs.policy import Policy
from mlagents.envs.rpc_communicator import RpcCommunicator
from mlagents.envs.timers import hierarchical_timer, timed

#: The logger of the package (``"mlagents.envs"``); the application decides where its records go.
logger = logging.getLogger("mlagents.envs")

__all__ = [
    "ActionInfo",
    "ActionInfoOutputs",
    "AgentActionProto",
    "AllBrainInfo",
    "BaseUnityEnvironment",
    "BrainInfo",
    "BrainParameters",
    "CustomAction",
    "CustomResetParameters",
    "EnvironmentParametersProto",
    "Policy",
    "RpcCommunicator",
    "SamplerException",
    "UnityActionException",
    "UnityCommunicationException",
    "UnityEnvironment",
    "UnityEnvironmentException",
    "UnityException",
    "UnityInput",
    "UnityOutput",
    "UnityRLInitializationInput",
    "UnityRLInitializationOutput",
    "UnityRLInput",
    "UnityRLOutput",
    "UnityTimeOutException",
    "UnityWorkerInUseException",
    "hierarchical_timer",
    "logger",
    "timed",
]
