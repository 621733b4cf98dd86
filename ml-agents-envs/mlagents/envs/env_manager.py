"""The seam between the trainers and the environments: :class:`EnvManager` and :class:`StepInfo`.

Any env manager (one environment in-process, several in subprocesses, ...) can drive the trainers:
they register one :class:`~mlagents.envs.policy.Policy` per brain, then call :meth:`EnvManager.step`
in a loop and learn from the returned :class:`StepInfo` transitions. A manager that decides the
actions of several environments in one policy call can also hand out those transitions as one
(:meth:`EnvManager.step_batches`, :class:`StepBatch`), so that a trainer receives the joined
BrainInfo and the unsplit policy outputs of that call instead of joining them again.
"""

import copy
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.communicator_objects import CustomResetParameters
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


class StepBatch(NamedTuple):
    """The steps of one or more environments whose actions came from one decision.

    :ivar transition: those steps as one StepInfo: per brain, the BrainInfo that was decided on
        (the agents of every environment, joined), the new BrainInfos joined in the same way, and
        the ActionInfo of the decision, unsplit. For a single environment, its own StepInfo.
    :ivar step_infos: the same steps, one StepInfo per environment (what ``step()`` returns).
    """

    transition: StepInfo
    step_infos: list[StepInfo]


class ResetArguments(NamedTuple):
    """What a reset asks of every environment (the arguments of ``BaseUnityEnvironment.reset``)."""

    config: dict[str, float] | None = None
    train_mode: bool = True
    custom_reset_parameters: CustomResetParameters | None = None


class EnvManager(ABC):
    """Steps one or more environments with the registered policies.

    :ivar restart_count: environments lost and restarted so far (managers that restart them count
        here; see :meth:`take_interrupted_steps`).
    """

    def __init__(self) -> None:
        self.policies: dict[str, Policy] = {}
        self.restart_count = 0
        self._interrupted_steps: list[StepInfo] = []

    def take_interrupted_steps(self) -> list[StepInfo]:
        """The episodes cut short by a lost environment since the last call (then forgotten).

        A manager that restarts a lost environment reports, once, the last observations of its
        agents as ``StepInfo(last observations, the same agents marked done and max_reached, None)``
        (see :func:`interrupted_step_info`): the trainers end those trajectories there, like
        episodes cut by a step limit, so that nothing joins them to the restarted environment's
        first steps. Managers that do not restart environments return an empty list.
        """
        interrupted, self._interrupted_steps = self._interrupted_steps, []
        return interrupted

    def _count_restart(self, last_step: StepInfo) -> None:
        """Count one restart of an environment lost after ``last_step`` and report its agents'
        episode once through :meth:`take_interrupted_steps`."""
        if last_step.current_all_brain_info:
            self._interrupted_steps.append(interrupted_step_info(last_step.current_all_brain_info))
        self.restart_count += 1

    def set_policy(self, brain_name: str, policy: Policy) -> None:
        """Use ``policy`` to decide the actions of the agents of ``brain_name`` from now on."""
        self.policies[brain_name] = policy

    @abstractmethod
    def step(self) -> list[StepInfo]:
        """Advance the environments and return the transitions that completed (at least one)."""

    def step_batches(self) -> list[StepBatch]:
        """:meth:`step`, with the steps grouped by the decision that produced their actions.

        The default makes every step its own batch; managers that decide for several environments
        at once override it to hand out each decision's joined BrainInfos and unsplit outputs.
        """
        return [StepBatch(step_info, [step_info]) for step_info in self.step()]

    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters: CustomResetParameters | None = None,
    ) -> list[StepInfo]:
        """Reset every environment; return one ``StepInfo(None, first_observation, None)`` per
        environment, in order (a manager does it in :meth:`_reset_environments`)."""
        return self._reset_environments(ResetArguments(config, train_mode, custom_reset_parameters))

    def _reset_environments(self, arguments: ResetArguments) -> list[StepInfo]:
        """What :meth:`reset` does with its arguments; every manager implements it (a manager
        written for 0.9, which overrides :meth:`reset` itself, need not)."""
        raise NotImplementedError(
            f"{type(self).__name__} implements neither reset() nor _reset_environments()"
        )

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


def interrupted_step_info(last_all_brain_info: AllBrainInfo) -> StepInfo:
    """The report of an environment lost after it showed ``last_all_brain_info``: every agent done
    and ``max_reached`` (interrupted, not terminal), observations unchanged, rewards 0."""
    interrupted: AllBrainInfo = {}
    for brain_name, info in last_all_brain_info.items():
        n_agents = len(info.agents or [])
        marked = copy.copy(info)
        marked.local_done = [True] * n_agents
        marked.max_reached = [True] * n_agents
        marked.rewards = [0.0] * n_agents
        interrupted[brain_name] = marked
    return StepInfo(last_all_brain_info, interrupted, None)


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


#: How an env manager builds the environment of a worker: ``factory(worker_id)``. A factory that
#: also takes a keyword argument ``restart`` is told how often that worker was restarted before
#: (0 at the first start), so that it can give a restarted environment a seed of its own.
EnvFactory = Callable[..., "BaseUnityEnvironment"]


def create_environment(factory: EnvFactory, worker_id: int, restart: int = 0) -> "BaseUnityEnvironment":
    """Build worker ``worker_id``'s environment for its ``restart``-th restart (0: first start).

    ``factory(worker_id)`` for a first start or a factory without a ``restart`` parameter;
    ``factory(worker_id, restart=restart)`` otherwise.
    """
    if restart > 0 and _takes_restart(factory):
        return factory(worker_id, restart=restart)
    return factory(worker_id)


def _takes_restart(factory: EnvFactory) -> bool:
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a callable without an inspectable signature
        return False
    parameter = parameters.get("restart")
    return parameter is not None and parameter.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )
