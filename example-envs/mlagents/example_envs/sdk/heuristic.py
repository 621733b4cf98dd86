"""The ``heuristic`` brain type: the scene's own scripted decision (:meth:`Scene.heuristic`), as
a Unity Heuristic brain decides."""

from __future__ import annotations

import numpy as np

from .controller import BrainController, BrainSetupError
from .messages import DecisionBatch
from .scene import Scene
from .specs import BrainSpec

__all__ = ["HEURISTIC", "HeuristicController", "heuristic_check", "heuristic_factory"]

#: The brain type's name.
HEURISTIC = "heuristic"


class HeuristicController:
    """Decides with :meth:`Scene.heuristic` for the agents of ``brain``."""

    def __init__(self, scene: Scene, brain: BrainSpec) -> None:
        self.scene = scene
        self.brain = brain

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        agents = self.scene.academy.indices_of(batch.agents)
        return self.scene.heuristic(self.brain.name, agents, batch)


def heuristic_factory(scene: Scene, brain: BrainSpec, argument: str | None) -> BrainController:
    return HeuristicController(scene, brain)


def heuristic_check(scene: type[Scene], brain: BrainSpec, argument: str | None) -> None:
    """Refuse an argument, and a brain the scene has no heuristic for."""
    if argument is not None:
        raise BrainSetupError(f"Brain '{brain.name}': the 'heuristic' brain type takes no argument.")
    if not scene.has_heuristic(brain.name):
        raise BrainSetupError(f"{scene.__name__} has no heuristic for brain '{brain.name}'.")
