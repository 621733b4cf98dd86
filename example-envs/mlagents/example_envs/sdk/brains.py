"""The brain settings of a build: who decides for a brain's agents, and whether Python sees them.

In Unity a brain asset is a Learning, Heuristic or Player brain, and the Academy's Broadcast Hub
lists the brains Python sees ("Control" ticked = Python decides). A build here is started by a
script, so the same choices are made on the build's command line (``arguments.py``) and arrive as a
:class:`BrainSettings`:

* kind ``"external"`` (the default of every brain): Python decides (a Learning brain with
  Control); the brain is always sent to Python, with ``is_training`` true.
* any other kind: a :class:`BrainController` in the build decides, created by the factory
  registered for the kind (``brain_registry.py``, :func:`register_brain_type`). Built in:
  ``"heuristic"`` (the scene's scripted decision, :meth:`~.scene.Scene.heuristic`),
  ``"player"`` (keys read from the terminal, ``player.py``) and ``"inference"`` (an exported
  ``.nn`` model, ``inference/``). Such a brain is sent to Python only when it is *broadcast*: then
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
from collections.abc import Mapping
from dataclasses import dataclass, field

from .brain_registry import EXTERNAL, brain_types, check_brain_type, create_controller, register_brain_type
from .controller import BrainController, BrainFactory, BrainSetupError
from .heuristic import HEURISTIC
from .scene import Scene
from .specs import BrainSpec, SceneSpec

# Adding a brain type (register_brain_type, BrainController, BrainFactory, BrainSetupError) is
# documented from here, beside the settings that name the types.
__all__ = [
    "EXTERNAL",
    "BrainController",
    "BrainFactory",
    "BrainSettings",
    "BrainSetupError",
    "brain_types",
    "controllers_for",
    "register_brain_type",
]


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
        default = (HEURISTIC, None) if brain in self.teachers else (EXTERNAL, None)
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

    def initialization_spec(self, spec: SceneSpec) -> SceneSpec:
        """What the build sends Python at initialization for a scene that declares ``spec``:
        the scene as the build runs it (:meth:`scene_spec`), its visible brains only
        (:meth:`visible_spec`). No brain at all means that the build runs on its own."""
        return self.visible_spec(self.scene_spec(spec))


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
