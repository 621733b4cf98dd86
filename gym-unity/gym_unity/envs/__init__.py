"""The gym wrappers: ``UnityEnv`` (classic gym API of gym_unity 0.4), ``UnityGymnasiumEnv``
(today's Gymnasium API), ``UnityVecEnv`` (every agent of a brain as a stable-baselines3 ``VecEnv``)
and ``UnityParallelEnv`` (every agent of every brain as a PettingZoo ``ParallelEnv``), with their
error type ``UnityGymException``.

``UnityVecEnv`` and ``UnityParallelEnv`` need optional packages (the ``sb3`` and ``pettingzoo``
extras); they are imported on first use, so the others work without them.
"""

from typing import Any

from gym_unity.envs.action_flattener import ActionFlattener
from gym_unity.envs.exception import UnityGymException
from gym_unity.envs.gymnasium_env import UnityGymnasiumEnv
from gym_unity.envs.unity_env import UnityEnv

__all__ = [
    "ActionFlattener",
    "UnityEnv",
    "UnityGymException",
    "UnityGymnasiumEnv",
    "UnityParallelEnv",
    "UnityVecEnv",
]

# Name -> module of the classes that need an optional package.
_OPTIONAL = {"UnityVecEnv": "gym_unity.envs.vec_env", "UnityParallelEnv": "gym_unity.envs.parallel_env"}


def __getattr__(name: str) -> Any:
    if name in _OPTIONAL:
        import importlib

        return getattr(importlib.import_module(_OPTIONAL[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
