"""One environment in this process: :class:`SimpleEnvManager`."""

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.brain import BrainParameters
from mlagents.envs.env_manager import EnvManager, ResetArguments, StepInfo, advance_environment
from mlagents.envs.timers import timed


class SimpleEnvManager(EnvManager):
    """Drives a single environment in the calling process (no subprocess, no pickling).

    Example::

        env = UnityEnvironment("example-envs/builds/Basic.x86_64", base_port=5005)
        manager = SimpleEnvManager(env)
        manager.set_policy("BasicLearning", my_policy)
        manager.reset()
        for _ in range(100):
            (step_info,) = manager.step()
        manager.close()

    :param env: the environment; the manager closes it in :meth:`close`.
    """

    def __init__(self, env: BaseUnityEnvironment) -> None:
        super().__init__()
        self.env = env
        self.previous_step: StepInfo = StepInfo(None, {}, None)
        self.previous_all_action_info: dict[str, ActionInfo] = {}

    def step(self) -> list[StepInfo]:
        """Decide actions from the last observations, step the environment (or reset it when its
        episode is over) and return the one transition.

        :raises: whatever the policies or the environment raise (e.g. UnityActionException).
        """
        all_action_info = self._take_step(self.previous_step)
        self.previous_all_action_info = all_action_info
        all_brain_info = advance_environment(self.env, all_action_info)
        step_info = StepInfo(self.previous_step.current_all_brain_info, all_brain_info, all_action_info)
        self.previous_step = step_info
        return [step_info]

    def _reset_environments(self, arguments: ResetArguments) -> list[StepInfo]:
        all_brain_info = self.env.reset(*arguments)
        self.previous_step = StepInfo(None, all_brain_info, None)
        return [self.previous_step]

    @property
    def external_brains(self) -> dict[str, BrainParameters]:
        return self.env.external_brains

    @property
    def reset_parameters(self) -> dict[str, float]:
        return self.env.reset_parameters

    def close(self) -> None:
        self.env.close()

    @timed
    def _take_step(self, last_step: StepInfo) -> dict[str, ActionInfo]:
        # Brains without a registered policy (e.g. broadcast-only) get no actions, as in 0.9.2+.
        return {
            brain_name: self.policies[brain_name].get_action(brain_info)
            for brain_name, brain_info in last_step.current_all_brain_info.items()
            if brain_name in self.policies
        }
