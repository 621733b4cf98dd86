"""Whether the demonstrations of a gail signal fit the brain that learns from them:
:func:`check_demonstration_brain`, used when the signal is built and, for example builds, before the
build starts (without TensorFlow)."""

from __future__ import annotations

from typing import Any

from mlagents.trainers.exception import UnityTrainerException

__all__ = ["check_demonstration_brain"]


def _cameras(brain: Any) -> list[tuple[int, int, bool]]:
    """(height, width, black and white) of each camera of ``brain``."""
    return [(int(r["height"]), int(r["width"]), bool(r["blackAndWhite"])) for r in brain.camera_resolutions]


def check_demonstration_brain(demo_brain: Any, brain: Any, demo_path: str) -> None:
    """:raises UnityTrainerException: the demonstrations were recorded by a brain whose actions or
    observations differ from ``brain``'s (the action type and branch sizes, the size of the stacked
    vector observation, the cameras and their resolutions)."""
    problems = []
    if demo_brain.vector_action_space_type != brain.vector_action_space_type or list(
        demo_brain.vector_action_space_size
    ) != list(brain.vector_action_space_size):
        problems.append(
            f"{demo_brain.vector_action_space_type} actions {list(demo_brain.vector_action_space_size)} instead of "
            f"{brain.vector_action_space_type} {list(brain.vector_action_space_size)}"
        )
    demo_vec = demo_brain.vector_observation_space_size * demo_brain.num_stacked_vector_observations
    vec = brain.vector_observation_space_size * brain.num_stacked_vector_observations
    if demo_vec != vec:
        problems.append(f"vector observations of size {demo_vec} instead of {vec}")
    demo_cameras, cameras = _cameras(demo_brain), _cameras(brain)
    if len(demo_cameras) != len(cameras):
        problems.append(f"{len(demo_cameras)} cameras instead of {len(cameras)}")
    elif demo_cameras != cameras:
        problems.append(f"cameras of (height, width, black and white) {demo_cameras} instead of {cameras}")
    if problems:
        raise UnityTrainerException(
            f"The demonstrations {demo_path} (brain {demo_brain.brain_name}) do not fit brain {brain.brain_name}: "
            f"{'; '.join(problems)}. Give the gail reward signal a demo_path recorded with this brain."
        )
