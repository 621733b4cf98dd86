"""The gym wrappers: ``UnityEnv`` (classic gym API of gym_unity 0.4) and ``UnityGymnasiumEnv``
(today's Gymnasium API), with their error type ``UnityGymException``."""

from gym_unity.envs.action_flattener import ActionFlattener
from gym_unity.envs.exception import UnityGymException
from gym_unity.envs.gymnasium_env import UnityGymnasiumEnv
from gym_unity.envs.unity_env import UnityEnv

__all__ = ["ActionFlattener", "UnityEnv", "UnityGymException", "UnityGymnasiumEnv"]
