"""The interface env managers use to ask for actions: :class:`Policy`."""

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from mlagents.envs.action_info import ActionInfo

if TYPE_CHECKING:
    from mlagents.envs.brain import BrainInfo


class Policy(ABC):
    """Maps the observations of a brain's agents to actions.

    Env managers call :meth:`get_action` once per brain and step. :class:`SubprocessEnvManager`
    batches the agents of every environment worker that is ready into one BrainInfo, so a policy must
    treat the agents as independent rows and return per-agent results with the agents on axis 0
    (see :class:`~mlagents.envs.action_info.ActionInfo`); anything in ``outputs`` that is not
    per-agent must be a scalar (or a 0-d array), it is then handed unchanged to every worker.
    """

    @abstractmethod
    def get_action(self, brain_info: "BrainInfo") -> ActionInfo:
        """Decide the actions of the n agents in ``brain_info``.

        :param brain_info: observations of n >= 0 agents of one brain.
        :returns: the decision; for n == 0 policies return ``ActionInfo([], [], [], None, None)``.
        """
