"""What a brain that decides inside the build is: a :class:`BrainController`, made by a factory.

Every brain type other than ``external`` (``brain_registry.py``) is a pair of functions: a
:data:`BrainFactory` that builds the controller once the scene exists and an optional
:data:`BrainCheck` that refuses a setting before the build starts, with a
:class:`BrainSetupError`. The built-in types (``heuristic.py``, ``player.py``,
``inference/brain.py``) and the settings of a build (``brains.py``) share these definitions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from .messages import DecisionBatch
from .scene import Scene
from .specs import BrainSpec

__all__ = ["BrainCheck", "BrainController", "BrainFactory", "BrainSetupError"]


class BrainSetupError(ValueError):
    """A brain type, broadcast or recording option cannot be used (one-line message)."""


@runtime_checkable
class BrainController(Protocol):
    """Decides for the agents of a brain that acts in the build.

    ``decide`` gets the batch the brain's agents reported (the agents that requested a decision
    in this academy step; the same data Python would receive) and returns float32 actions of
    shape ``(k, brain.action_length)``: discrete branches as floats holding integers. It may
    instead return ``(actions, memories)`` with float32 memories ``(k, m)``, which the agents
    report back at their next decision (as a recurrent model's memories).
    """

    def decide(self, batch: DecisionBatch) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...


#: ``factory(scene, brain, argument)``: the controller of ``brain`` in ``scene`` (``argument`` is
#: the text after ``KIND:`` on the command line, or None).
BrainFactory = Callable[[Scene, BrainSpec, "str | None"], BrainController]
#: ``check(scene_class, brain, argument)``: raise BrainSetupError before the build starts if the
#: kind cannot be used that way (e.g. no terminal for a player brain, a missing model file).
BrainCheck = Callable[[type[Scene], BrainSpec, "str | None"], None]
