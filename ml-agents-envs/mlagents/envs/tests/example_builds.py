"""The example builds the tests start: ``example-envs/builds/<Name>.x86_64`` of this checkout, and
scripted policies that play them."""

from pathlib import Path

import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo

BUILDS = Path(__file__).resolve().parents[4] / "example-envs" / "builds"


def example_build(name: str) -> str:
    """Path of the example build ``name`` (e.g. ``"Basic"``); skips the test when it is missing."""
    path = BUILDS / f"{name}.x86_64"
    if not path.exists():
        pytest.skip(f"example-envs/builds/{name}.x86_64 is missing")
    return str(path)


class TiltPolicy:
    """3DBall: tilt the platform against the ball's offset; a function of the observation only, so a
    worker's episodes depend on its seed alone, whatever else runs."""

    def get_action(self, brain_info: BrainInfo) -> ActionInfo:
        observations = brain_info.vector_observations
        action = np.clip(-2.0 * observations[:, 5:7] + 0.5 * observations[:, 0:2], -1.0, 1.0)
        return ActionInfo(action.astype(np.float32), None, None, None, None)
