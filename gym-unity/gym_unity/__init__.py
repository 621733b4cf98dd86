"""gym_unity: Unity ML-Agents environments behind the gym interface (see ``gym_unity.envs``).

As in the original, importing the package registers no environment id; construct
``gym_unity.envs.UnityEnv`` or ``gym_unity.envs.UnityGymnasiumEnv`` with the path of a build.
"""

from gymnasium.envs.registration import register  # noqa: F401  (imported by the original too)
