"""The seam between the trainers and the environments: :class:`EnvManager` and :class:`StepInfo`.

Any env manager (one environment in-process, several in subprocesses, ...) can drive the trainers:
they register one :class:`~mlagents.envs.policy.Policy` per brain, then call :meth:`EnvManager.step`
in a loop and learn from the returned :class:`StepInfo` transitions.
"""

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, NamedTuple

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.policy import Policy

if TYPE_CHECKING:
    from mlagents.envs.base_unity_environment import BaseUnityEnvironment


class StepInfo(NamedTuple):
    """One transition of one environment.

    :ivar previous_all_brain_info: what the agents saw before the step (None right after a reset).
    :ivar current_all_brain_info: what the agents see after the step.
    :ivar brain_name_to_action_info: the decision taken from ``previous_all_brain_info``, per brain
        (None right after a reset; brains without a registered policy are absent).
    """

    previous_all_brain_info: AllBrainInfo | None
    current_all_brain_info: AllBrainInfo
    brain_name_to_action_info: dict[str, ActionInfo] | None


class EnvManager(ABC):
    """Steps one or more environments with the registered policies."""

    def __init__(self) -> None:
        self.policies: dict[str, Policy] = {}

    def set_policy(self, brain_name: str, policy: Policy) -> None:
        """Use ``policy`` to decide the actions of the agents of ``brain_name`` from now on."""
        self.policies[brain_name] = policy

    @abstractmethod
    def step(self) -> list[StepInfo]:
        """Advance the environments and return the transitions that completed (at least one)."""

    @abstractmethod
    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters=None,
    ) -> list[StepInfo]:
        """Reset every environment; return one ``StepInfo(None, first_observation, None)`` per environment."""

    @property
    @abstractmethod
    def external_brains(self) -> dict[str, BrainParameters]:
        """The parameters of the brains that Python controls, by brain name."""

    @property
    @abstractmethod
    def reset_parameters(self) -> dict[str, float]:
        """The environment's reset parameters and their current values."""

    @abstractmethod
    def close(self) -> None:
        """End every environment (and every process started for them)."""


def advance_environment(env: "BaseUnityEnvironment", all_action_info: dict[str, ActionInfo]) -> AllBrainInfo:
    """Step ``env`` with the decided actions, or reset it instead when its episode is over.

    An academy that reported ``global_done`` cannot step; as in ML-Agents 0.9 the environment is then
    reset with its current reset parameters (train mode) and the actions are dropped.

    :param env: the environment.
    :param all_action_info: the decision per brain (brains without a policy are absent).
    :returns: the new observations of every brain.
    """
    if env.global_done:
        return env.reset()
    actions = {name: info.action for name, info in all_action_info.items()}
    memories = {name: info.memory for name, info in all_action_info.items()}
    texts = {name: info.text for name, info in all_action_info.items()}
    values = {name: info.value for name, info in all_action_info.items()}
    return env.step(actions, memories, texts, values)
