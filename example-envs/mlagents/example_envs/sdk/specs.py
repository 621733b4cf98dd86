"""What a scene declares: its brains, agents, reset parameters and engine configurations.

Plain data (the rules shared with the Python side come from ``mlagents.envs.brain``), read once by the Academy (``academy.py``) and shared by every part of the SDK that
needs a brain's shape: the wire (``BrainParametersProto``), the demonstration recorder, the
brain types and the model runtime. A scene returns a :class:`SceneSpec` from ``Scene.spec()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from mlagents.envs.brain import action_length

__all__ = [
    "AgentGroup",
    "BrainSpec",
    "CameraResolution",
    "EngineConfiguration",
    "SceneSpec",
    "SpaceType",
    "one_brain_spec",
]

SpaceType = Literal["discrete", "continuous"]


@dataclass(frozen=True)
class CameraResolution:
    """One visual observation of a brain: ``width`` x ``height`` pixels; ``gray_scale`` is
    Unity's "Black And White" flag (the image is still sent with 3 colour channels)."""

    width: int
    height: int
    gray_scale: bool = False


@dataclass(frozen=True)
class BrainSpec:
    """What a brain asset declares; sent to Python as ``BrainParametersProto``."""

    name: str
    vector_observation_size: int
    vector_action_space_type: SpaceType
    vector_action_size: tuple[int, ...]
    num_stacked_vector_observations: int = 1
    camera_resolutions: tuple[CameraResolution, ...] = ()
    vector_action_descriptions: tuple[str, ...] = ()
    # "Control" ticked in the Broadcast Hub: the brain is trained from Python.
    is_training: bool = True

    @property
    def action_length(self) -> int:
        """Floats per agent in an action: one per branch (discrete) or the vector size (continuous)."""
        return action_length(self.vector_action_space_type, self.vector_action_size)

    @property
    def mask_length(self) -> int:
        """Booleans per agent in an action mask (all branches concatenated; discrete only)."""
        return int(sum(self.vector_action_size)) if self.vector_action_space_type == "discrete" else 0


@dataclass(frozen=True)
class AgentGroup:
    """``count`` agents that share agent parameters and their initial brain.

    ``max_step``: agent maxStep in physics steps (0 = unlimited).
    ``decision_interval``: numberOfActionsBetweenDecisions (N >= 1).
    ``on_demand``: onDemandDecision; such agents act only in steps where they
    called ``academy.request_decision`` (usually from ``pre_step``).
    """

    brain: str
    count: int
    max_step: int = 0
    decision_interval: int = 1
    on_demand: bool = False


@dataclass(frozen=True)
class EngineConfiguration:
    """Academy engine configuration (cosmetic here: the physics step never changes)."""

    width: int = 80
    height: int = 80
    quality_level: int = 1
    time_scale: float = 100.0
    target_frame_rate: int = -1


#: Unity's default inference configuration (1280 x 720, quality 5, time scale 1, 60 frames/s)
UNITY_INFERENCE_CONFIGURATION = EngineConfiguration(1280, 720, 5, 1.0, 60)


@dataclass
class SceneSpec:
    """Static description of a scene, read once by the Academy."""

    academy_name: str
    brains: list[BrainSpec]
    agents: list[AgentGroup]
    reset_parameters: dict[str, float] = field(default_factory=dict)
    academy_max_steps: int = 0
    training_configuration: EngineConfiguration = EngineConfiguration()
    inference_configuration: EngineConfiguration = UNITY_INFERENCE_CONFIGURATION


def one_brain_spec(
    brain: BrainSpec,
    agents: int = 1,
    *,
    max_step: int = 0,
    decision_interval: int = 1,
    on_demand: bool = False,
    reset_parameters: Mapping[str, float] | None = None,
    academy_max_steps: int = 0,
    training: EngineConfiguration | None = None,
    inference: EngineConfiguration = UNITY_INFERENCE_CONFIGURATION,
    academy_name: str = "Academy",
) -> SceneSpec:
    """The SceneSpec of a scene with one brain driven by one group of ``agents`` agents (see
    :class:`AgentGroup` for ``max_step``, ``decision_interval`` and ``on_demand``).

    :param reset_parameters: the defaults (copied; None: the scene has none).
    :param training: the training configuration (None: :class:`EngineConfiguration`'s defaults).
    :param inference: the inference configuration (default: Unity's).
    """
    return SceneSpec(
        academy_name=academy_name,
        brains=[brain],
        agents=[AgentGroup(brain.name, agents, max_step, decision_interval, on_demand)],
        reset_parameters=dict(reset_parameters or {}),
        academy_max_steps=academy_max_steps,
        training_configuration=training or EngineConfiguration(),
        inference_configuration=inference,
    )
