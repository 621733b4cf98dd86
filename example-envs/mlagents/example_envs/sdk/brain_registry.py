"""The brain types a build knows: ``external`` and every kind that decides inside the build.

``external`` (Python decides) needs no controller. The other kinds are registered here, the
built-in ones below and your own with :func:`register_brain_type`:

* ``heuristic``: the scene's scripted decision (``heuristic.py``);
* ``player``: keys typed in the build's terminal (``player.py``);
* ``inference``: an exported ``.nn`` model run in numpy (``inference/brain.py``).

The settings of a build (``brains.py``) look kinds up here, by the name given on its command line
(``--brain-type BRAIN=KIND[:ARGUMENT]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .controller import BrainCheck, BrainController, BrainFactory, BrainSetupError
from .heuristic import HEURISTIC, heuristic_check, heuristic_factory
from .inference.brain import INFERENCE, inference_check, inference_factory
from .player import PLAYER, player_check, player_factory
from .scene import Scene
from .specs import BrainSpec

__all__ = ["EXTERNAL", "brain_types", "check_brain_type", "create_controller", "register_brain_type"]

#: The kind of a brain Python decides for.
EXTERNAL = "external"


@dataclass(frozen=True)
class _BrainType:
    factory: BrainFactory
    check: BrainCheck | None


_TYPES: dict[str, _BrainType] = {
    HEURISTIC: _BrainType(heuristic_factory, heuristic_check),
    PLAYER: _BrainType(player_factory, player_check),
    INFERENCE: _BrainType(inference_factory, inference_check),
}


def register_brain_type(kind: str, factory: BrainFactory, check: BrainCheck | None = None) -> None:
    """Make ``kind`` usable as ``--brain-type BRAIN=KIND[:ARGUMENT]``.

    :param factory: builds the controller once the scene exists (when the build starts).
    :param check: optional early test, run when the command line is read.
    :raises ValueError: ``kind`` is ``"external"``, empty, contains ``=`` or ``:``, or is
        already registered with another factory.
    """
    if not kind or kind == EXTERNAL or "=" in kind or ":" in kind:
        raise ValueError(f"A brain type needs a name other than 'external' without '=' or ':', not {kind!r}.")
    known = _TYPES.get(kind)
    if known is not None and known.factory is not factory:
        raise ValueError(f"The brain type '{kind}' is already registered.")
    _TYPES[kind] = _BrainType(factory, check)


def brain_types() -> list[str]:
    """Every usable kind: ``external`` and the registered ones, sorted."""
    return sorted([EXTERNAL, *_TYPES])


def _lookup(kind: str) -> _BrainType:
    try:
        return _TYPES[kind]
    except KeyError:
        raise BrainSetupError(
            f"Unknown brain type '{kind}'; known types: {', '.join(brain_types())}."
        ) from None


def check_brain_type(scene: type[Scene], brain: BrainSpec, kind: str, argument: str | None) -> None:
    """Run the early check of ``kind`` for ``brain``.

    :raises BrainSetupError: unknown kind, or the kind's check refuses.
    """
    if kind == EXTERNAL:
        if argument is not None:
            raise BrainSetupError(f"Brain '{brain.name}': the 'external' brain type takes no argument.")
        return
    brain_type = _lookup(kind)
    if brain_type.check is not None:
        brain_type.check(scene, brain, argument)


def create_controller(scene: Scene, brain: BrainSpec, kind: str, argument: str | None) -> BrainController:
    """The controller of a non-external brain.

    :raises BrainSetupError: unknown kind (or the factory refuses).
    """
    return _lookup(kind).factory(scene, brain, argument)
