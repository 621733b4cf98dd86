"""Brain types: who decides for a brain's agents, and whether Python sees them.

In Unity a brain asset is a Learning, Heuristic or Player brain, and the Academy's Broadcast Hub
lists the brains Python sees ("Control" ticked = Python decides). A build here is started by a
script, so the same choices are made on the build's command line (see ``cli.py``) and arrive as a
:class:`BrainSettings`:

* kind ``"external"`` (the default of every brain): Python decides (a Learning brain with
  Control); the brain is always sent to Python, with ``is_training`` true.
* any other kind: a :class:`BrainController` in the build decides, created by the factory
  registered for the kind with :func:`register_brain_type`. Built in: ``"heuristic"`` (the
  scene's scripted decision, :meth:`~.scene.Scene.heuristic`), ``"player"`` (keys read from
  the terminal, ``player.py``) and ``"inference"`` (an exported ``.nn`` model, ``inference/``). Such a brain is sent to Python only when it is *broadcast*: then
  Python receives its agents' observations, rewards and the actions they took
  (``previous_vector_actions``), with ``is_training`` false, and never sends actions for it.
* ``record``: brain -> demonstration name; its agents' decisions are written to
  ``<demo_folder>/<name>.demo`` (``demo_recorder.py``).
* ``teachers``: teacher brain -> brain it copies. The build declares the teacher brain (the same
  parameters under the new name) and a copy of the copied brain's agents on it, so that a
  learner and its teacher play side by side (Unity: a second agent with a Heuristic or Player
  brain in the Broadcast Hub). A teacher is a ``heuristic`` broadcast brain unless other options
  say otherwise; its controller decides as the copied brain's would. Only scenes whose
  ``Scene.supports_extra_agents`` is true (their state is sized by the number of agents) allow it.

A build in which Python sees no brain at all runs on its own, without connecting to Python
(like a Unity player whose Broadcast Hub is empty).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from .scene import BrainSpec, Scene, SceneSpec

if TYPE_CHECKING:  # pragma: no cover
    from .academy import DecisionBatch

__all__ = [
    "EXTERNAL",
    "BrainController",
    "BrainFactory",
    "BrainSettings",
    "BrainSetupError",
    "HeuristicController",
    "brain_types",
    "create_controller",
    "register_brain_type",
]

#: The kind of a brain Python decides for.
EXTERNAL = "external"


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


@dataclass(frozen=True)
class _BrainType:
    factory: BrainFactory
    check: BrainCheck | None


_TYPES: dict[str, _BrainType] = {}


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
    _register_builtins()
    return sorted([EXTERNAL, *_TYPES])


def _lookup(kind: str) -> _BrainType:
    _register_builtins()
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


@dataclass
class BrainSettings:
    """Brain types, broadcast and recordings of one build.

    :ivar kinds: brain -> (kind, argument); brains left out are external.
    :ivar broadcast: non-external brains that Python sees.
    :ivar record: brain -> demonstration name.
    :ivar demo_folder: where ``.demo`` files are written.
    :ivar demo_steps: decisions per recording (0 = until the build stops); a build that runs on its
        own stops once every recording is complete.
    :ivar run_steps: academy steps a build that runs on its own makes before it stops (0 = no limit).
    :ivar teachers: teacher brain -> the brain whose parameters and agents it copies.
    """

    kinds: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    broadcast: set[str] = field(default_factory=set)
    record: dict[str, str] = field(default_factory=dict)
    teachers: dict[str, str] = field(default_factory=dict)
    demo_folder: str = "Demonstrations"
    demo_steps: int = 0
    run_steps: int = 0

    def kind(self, brain: str) -> tuple[str, str | None]:
        default = ("heuristic", None) if brain in self.teachers else (EXTERNAL, None)
        return self.kinds.get(brain, default)

    def is_external(self, brain: str) -> bool:
        return self.kind(brain)[0] == EXTERNAL

    def is_visible(self, brain: str) -> bool:
        """True when Python sees the brain (external, broadcast, or a teacher)."""
        return self.is_external(brain) or brain in self.broadcast or brain in self.teachers

    def scene_spec(self, spec: SceneSpec) -> SceneSpec:
        """The scene as the build runs it: with the teacher brains and their agents added."""
        if not self.teachers:
            return spec
        brains = list(spec.brains)
        agents = list(spec.agents)
        by_name = {brain.name: brain for brain in spec.brains}
        for teacher, copied in self.teachers.items():
            brains.append(dataclasses.replace(by_name[copied], name=teacher))
            agents.extend(dataclasses.replace(g, brain=teacher) for g in spec.agents if g.brain == copied)
        return dataclasses.replace(spec, brains=brains, agents=agents)

    def scene_brain(self, brain: str) -> str:
        """The scene's own brain that ``brain`` stands for (the copied one for a teacher)."""
        return self.teachers.get(brain, brain)

    def validate(self, scene: type[Scene], spec: SceneSpec) -> None:
        """Check every name and kind against the scene.

        :raises BrainSetupError: an unknown brain (the message lists the scene's brains), an unknown
            kind, a kind whose check refuses, or a negative step count.
        """
        own = {brain.name: brain for brain in spec.brains}
        for teacher, copied in self.teachers.items():
            if copied not in own:
                raise BrainSetupError(
                    f"--teacher: {spec.academy_name} has no brain '{copied}'; its brains are: {', '.join(own)}."
                )
            if teacher in own:
                raise BrainSetupError(
                    f"--teacher: the scene already has a brain '{teacher}'; choose another name."
                )
            if not scene.supports_extra_agents:
                raise BrainSetupError(
                    f"--teacher: {scene.__name__} cannot run extra agents for a teacher (its world has a "
                    "fixed number of agents); use a scene that allows it, such as Basic."
                )
        brains = {brain.name: brain for brain in self.scene_spec(spec).brains}
        names = ", ".join(brains)
        for option, used in (
            ("--brain-type", self.kinds),
            ("--broadcast", self.broadcast),
            ("--record-demo", self.record),
        ):
            for name in used:
                if name not in brains:
                    raise BrainSetupError(
                        f"{option}: {spec.academy_name} has no brain '{name}'; its brains are: {names}."
                    )
        for name in brains:
            if not self.is_external(name):
                check_brain_type(scene, own[self.scene_brain(name)], *self.kind(name))
        if self.demo_steps < 0 or self.run_steps < 0:
            raise BrainSetupError("--demo-steps and --run-steps take a number of steps >= 0.")

    def visible_spec(self, spec: SceneSpec) -> SceneSpec:
        """The scene description Python is sent (``spec`` as the build runs it, see
        :meth:`scene_spec`): visible brains only, ``is_training`` = external."""
        brains = [
            dataclasses.replace(brain, is_training=brain.is_training and self.is_external(brain.name))
            for brain in spec.brains
            if self.is_visible(brain.name)
        ]
        return dataclasses.replace(spec, brains=brains)

    def runs_alone(self, spec: SceneSpec) -> bool:
        """True when Python sees none of the scene's brains."""
        return not any(self.is_visible(brain.name) for brain in spec.brains)


class HeuristicController:
    """The ``heuristic`` kind: the scene's own scripted decision (:meth:`Scene.heuristic`)."""

    def __init__(self, scene: Scene, brain: BrainSpec) -> None:
        self.scene = scene
        self.brain = brain

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        agents = self.scene.academy.indices_of(batch.agents)
        return self.scene.heuristic(self.brain.name, agents, batch)


def _heuristic_factory(scene: Scene, brain: BrainSpec, argument: str | None) -> BrainController:
    return HeuristicController(scene, brain)


def _heuristic_check(scene: type[Scene], brain: BrainSpec, argument: str | None) -> None:
    if argument is not None:
        raise BrainSetupError(f"Brain '{brain.name}': the 'heuristic' brain type takes no argument.")
    if not scene.has_heuristic(brain.name):
        raise BrainSetupError(f"{scene.__name__} has no heuristic for brain '{brain.name}'.")


_BUILTINS_DONE = False


def _register_builtins() -> None:
    """Register ``heuristic``, ``player`` (lazily: it imports terminal modules) and ``inference``
    (an exported ``.nn`` model, ``inference/brain.py``)."""
    global _BUILTINS_DONE
    if _BUILTINS_DONE:
        return
    _BUILTINS_DONE = True
    from .inference.brain import INFERENCE, inference_check, inference_factory
    from .player import player_check, player_factory

    _TYPES.setdefault("heuristic", _BrainType(_heuristic_factory, _heuristic_check))
    _TYPES.setdefault("player", _BrainType(player_factory, player_check))
    _TYPES.setdefault(INFERENCE, _BrainType(inference_factory, inference_check))


def parse_brain_type(text: str) -> tuple[str, str, str | None]:
    """``BRAIN=KIND[:ARGUMENT]`` as (brain, kind, argument).

    :raises BrainSetupError: no ``=``, or an empty brain or kind.
    """
    brain, equals, rest = text.partition("=")
    kind, colon, argument = rest.partition(":")
    if not equals or not brain or not kind:
        raise BrainSetupError(
            f"--brain-type takes BRAIN=KIND[:ARGUMENT] (e.g. 3DBallLearning=heuristic), not {text!r}."
        )
    return brain, kind, argument if colon else None


def parse_assignment(option: str, text: str, example: str) -> tuple[str, str]:
    """``BRAIN=VALUE`` as (brain, value).

    :raises BrainSetupError: no ``=`` or an empty side.
    """
    brain, equals, value = text.partition("=")
    if not equals or not brain or not value:
        raise BrainSetupError(f"{option} takes BRAIN=VALUE (e.g. {example}), not {text!r}.")
    return brain, value


def settings_from_options(
    brain_types_: list[str],
    broadcast: list[str],
    record: list[str],
    demo_folder: str = "Demonstrations",
    demo_steps: int = 0,
    run_steps: int = 0,
    teachers: list[str] | None = None,
) -> BrainSettings:
    """A :class:`BrainSettings` from the command-line values (not yet checked against a scene).

    :raises BrainSetupError: a malformed or repeated value.
    """
    settings = BrainSettings(demo_folder=demo_folder, demo_steps=demo_steps, run_steps=run_steps)
    for text in brain_types_:
        brain, kind, argument = parse_brain_type(text)
        if brain in settings.kinds and settings.kinds[brain] != (kind, argument):
            raise BrainSetupError(f"--brain-type gives brain '{brain}' two types.")
        settings.kinds[brain] = (kind, argument)
    settings.broadcast.update(broadcast)
    for text in record:
        brain, name = parse_assignment("--record-demo", text, "3DBallLearning=Expert3DBall")
        if brain in settings.record and settings.record[brain] != name:
            raise BrainSetupError(f"--record-demo gives brain '{brain}' two demonstration names.")
        settings.record[brain] = name
    for text in teachers or []:
        teacher, copied = parse_assignment("--teacher", text, "BasicTeacher=BasicLearning")
        if settings.teachers.get(teacher, copied) != copied:
            raise BrainSetupError(f"--teacher gives the teacher '{teacher}' two brains to copy.")
        settings.teachers[teacher] = copied
    return settings


def controllers_for(
    scene: Scene, brains: Mapping[str, BrainSpec], settings: BrainSettings
) -> dict[str, BrainController]:
    """The controllers of every non-external brain of ``scene`` (a teacher's decides as the brain
    it copies)."""
    return {
        name: create_controller(scene, brains[settings.scene_brain(name)], *settings.kind(name))
        for name in brains
        if not settings.is_external(name)
    }
