"""The interface every environment the trainers can drive implements."""

from abc import ABC, abstractmethod

from mlagents.envs.brain import AllBrainInfo, BrainParameters


class BaseUnityEnvironment(ABC):
    """An environment made of brains whose agents act at decision points."""

    @abstractmethod
    def step(self, vector_action=None, memory=None, text_action=None, value=None) -> AllBrainInfo:
        """Send actions for the agents of the last decision and return the next decision's BrainInfos."""

    @abstractmethod
    def reset(
        self, config: dict[str, float] | None = None, train_mode: bool = True, custom_reset_parameters=None
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
