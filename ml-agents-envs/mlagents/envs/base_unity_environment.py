"""The interface every environment the trainers can drive implements."""

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.communicator_objects import CustomAction, CustomResetParameters

#: One brain's vector actions, memories or value estimates: a number, a (nested) list or an array.
BrainValues = float | np.number[Any] | np.ndarray | Sequence[Any]
#: ``step()``'s vector_action, memory and value: per brain name, or (with a single external brain)
#: that brain's values alone.
StepValues = Mapping[str, BrainValues | None] | BrainValues | None
#: ``step()``'s text_action: per brain name, or for the single external brain; one text per agent
#: or one text for every agent.
StepTexts = Mapping[str, str | Sequence[str] | None] | str | Sequence[str] | None
#: ``step()``'s custom_action: per brain name, or for the single external brain; one
#: ``CustomAction`` per agent or one for every agent.
StepCustomActions = Mapping[str, CustomAction | Sequence[CustomAction | None] | None] | CustomAction | None


class BaseUnityEnvironment(ABC):
    """An environment made of brains whose agents act at decision points."""

    @abstractmethod
    def step(
        self,
        vector_action: StepValues = None,
        memory: StepValues = None,
        text_action: StepTexts = None,
        value: StepValues = None,
    ) -> AllBrainInfo:
        """Send actions for the agents of the last decision and return the next decision's BrainInfos."""

    @abstractmethod
    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters: CustomResetParameters | None = None,
    ) -> AllBrainInfo:
        """Start a new episode (optionally with new reset parameters) and return the first BrainInfos."""

    @property
    @abstractmethod
    def global_done(self) -> bool | None:
        """Whether the academy's episode ended (None before the first reset)."""

    @property
    @abstractmethod
    def external_brains(self) -> dict[str, BrainParameters]:
        """The brains Python controls, by name."""

    @property
    @abstractmethod
    def reset_parameters(self) -> dict[str, float]:
        """The academy's reset parameters, by name."""

    @abstractmethod
    def close(self) -> None:
        """Stop the environment and release everything it holds."""
