"""The shipped demonstrations demos/Expert*.demo: they load, describe their brain, and hold the
heuristic's actions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo
from mlagents.example_envs.expert_demos import EXPERT_DEMOS, ExpertDemo
from mlagents.example_envs.sdk.catalogue import find_scene
from mlagents.trainers.demo_loader import load_demonstration, make_demo_buffer, read_demonstration_file

pytestmark = pytest.mark.slow

DEMOS = Path(__file__).resolve().parents[4] / "demos"


def _observation(info: BrainInfo, spec_has_camera: bool) -> np.ndarray:
    if spec_has_camera:
        # Pictures come back as floats in [0, 1]; the heuristic reads the uint8 picture.
        return np.round(np.asarray(info.visual_observations[0]) * 255).astype(np.uint8)
    return np.asarray(info.vector_observations, dtype=np.float32)


@pytest.mark.parametrize("demo", EXPERT_DEMOS, ids=[demo.name for demo in EXPERT_DEMOS])
def test_shipped_demo_loads_and_reproduces_the_heuristic(demo: ExpertDemo) -> None:
    path = DEMOS / f"{demo.name}.demo"
    assert path.exists(), f"{path} is missing: run tools/record_demos.py {demo.name}"
    assert path.stat().st_size < 6_000_000
    scene_class = find_scene(demo.scene)
    (spec,) = [brain for brain in scene_class.spec().brains if brain.name == demo.brain]

    brain, infos, expected = load_demonstration(str(path))
    buffer = make_demo_buffer(infos, brain, 1)
    assert expected == len(infos)
    meta, _, _ = read_demonstration_file(str(path))
    dones = sum(bool(info.local_done[0]) for info in infos)
    rewards = sum(float(info.rewards[0]) for info in infos)
    assert meta.mean_reward == pytest.approx(rewards / meta.number_episodes, rel=1e-3, abs=1e-5)
    if demo.whole_episodes:
        # Finished episodes only, until the file holds the requested decisions.
        assert demo.steps <= len(infos) < demo.steps * 1.3
        assert bool(infos[-1].local_done[0]) and meta.number_episodes == dones
    else:
        # Each agent's unfinished episode counts as one.
        assert len(infos) == demo.steps and meta.number_episodes > dones
    if demo.episode_prefix:
        # Many episode starts: every episode in the file is at most the prefix long.
        ends = [t for t, info in enumerate(infos) if info.local_done[0]]
        lengths = np.diff([-1, *ends])
        assert lengths.max() <= demo.episode_prefix and len(ends) >= demo.steps // demo.episode_prefix
    assert brain.brain_name == spec.name
    assert brain.vector_observation_space_size == spec.vector_observation_size
    assert brain.num_stacked_vector_observations == spec.num_stacked_vector_observations
    assert brain.vector_action_space_size == list(spec.vector_action_size)
    assert brain.vector_action_space_type == spec.vector_action_space_type
    assert brain.number_visual_observations == len(spec.camera_resolutions)
    assert len(buffer.update_buffer["actions"]) == len(infos) - 1

    if not demo.observation_heuristic:
        return
    # The heuristic of a scene that reads only observations needs no state: a bare instance.
    scene = scene_class.__new__(scene_class)
    if demo.scene == "GridWorld":
        scene.grid_size = 5
    # Pairs of consecutive decisions of one agent (not where one agent's steps end and another's
    # begin); pictures are checked on a sample (reading them is slow), vectors all at once.
    pairs = [t for t in range(len(infos) - 1) if infos[t].agents == infos[t + 1].agents]
    assert len(pairs) > len(infos) * 0.9
    if spec.camera_resolutions:
        pairs = pairs[:: max(1, len(pairs) // 200)]
    observations = np.concatenate([_observation(infos[t], bool(spec.camera_resolutions)) for t in pairs])
    taken = np.concatenate([np.asarray(infos[t + 1].previous_vector_actions) for t in pairs])
    agents = np.zeros(len(pairs), dtype=np.int64)
    action = scene.heuristic(spec.name, agents, _Batch(observations))  # type: ignore[arg-type]
    np.testing.assert_allclose(taken, action, atol=1e-4)


class _Batch:
    """The fields of a DecisionBatch the observation heuristics read."""

    def __init__(self, observation: np.ndarray) -> None:
        if observation.dtype == np.uint8:
            self.visual_observations = [observation]
            self.vector_observations = np.zeros((len(observation), 0), np.float32)
        else:
            self.visual_observations = []
            self.vector_observations = observation
