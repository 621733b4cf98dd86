"""What the Academy and Python exchange, as Python objects: the messages of the wire protocol.

:class:`AcademyInput` is one message from Python (``UnityRLInput``), :class:`AcademyOutput` one
message to Python (``UnityRLOutput``), made of one :class:`DecisionBatch` per brain. The Academy
(``academy.py``) consumes and produces them; the wire (``wire.py``) converts them to and from
protobuf, the in-process runner (``local.py``) hands them over as they are, and the brains that
decide in the build, the demonstration recorder and the video recorder read the batches.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

__all__ = ["AcademyInput", "AcademyOutput", "Command", "DecisionBatch"]


class Command(enum.IntEnum):
    """``CommandProto`` of the wire protocol."""

    STEP = 0
    RESET = 1
    QUIT = 2


class AcademyInput(NamedTuple):
    """One message from Python (the payload of ``UnityRLInput``).

    ``actions``: brain -> float32 ``(k, action_length)``, row i for the i-th agent of that
    brain in the previous output (brains without an entry keep their stored actions).
    ``memories``: brain -> float32 ``(k, m)``; ``text_actions``: brain -> k strings.
    ``reset_parameters`` is only read with ``Command.RESET`` (only the keys sent change).
    """

    command: Command = Command.STEP
    is_training: bool = False
    reset_parameters: Mapping[str, float] | None = None
    actions: Mapping[str, np.ndarray] | None = None
    memories: Mapping[str, np.ndarray] | None = None
    text_actions: Mapping[str, Sequence[str]] | None = None


class DecisionBatch(NamedTuple):
    """What one brain reports in one exchange: the ``k`` agents that requested a decision.

    agents: int64 ``(k,)`` stable agent ids (Unity instance ids).
    vector_observations: float32 ``(k, vector_observation_size * num_stacked)``, oldest frame first.
    visual_observations: one uint8 ``(k, H, W, 3)`` array per camera, row 0 = top of the image.
    rewards: float32 ``(k,)`` accumulated since each agent's previous report.
    local_done, max_reached: bool ``(k,)``.
    action_masks: bool ``(k, mask_length)``, True = forbidden; None when no agent set a mask.
    previous_vector_actions: float32 ``(k, action_length)``: the action each agent last stored.
    memories: float32 ``(k, m)`` echo of the memories Python sent, or None when there are none.
    text_observations / previous_text_actions: k strings each, or None when all are empty.
    """

    agents: np.ndarray
    vector_observations: np.ndarray
    visual_observations: list[np.ndarray]
    rewards: np.ndarray
    local_done: np.ndarray
    max_reached: np.ndarray
    action_masks: np.ndarray | None
    previous_vector_actions: np.ndarray
    memories: np.ndarray | None = None
    text_observations: list[str] | None = None
    previous_text_actions: list[str] | None = None


class AcademyOutput(NamedTuple):
    """One message to Python (``UnityRLOutput``): every brain appears, maybe with k = 0."""

    global_done: bool
    batches: dict[str, DecisionBatch]
