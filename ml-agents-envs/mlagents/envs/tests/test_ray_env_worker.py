"""The compact form in which RayEnvManager's actors send observations (no Ray needed)."""

import pickle

import numpy as np

from mlagents.envs.brain import BrainInfo
from mlagents.envs.communicator_objects import CustomObservation
from mlagents.envs.ray_env_worker import pack_all_brain_info, unpack_all_brain_info


def brain_info(n: int, cameras: int) -> BrainInfo:
    rng = np.random.default_rng(n)
    return BrainInfo(
        visual_observation=[[rng.random((4, 5, 3)) for _ in range(n)] for _ in range(cameras)],
        vector_observation=rng.random((n, 6)),
        text_observations=[f"text {i}" for i in range(n)],
        memory=np.zeros((0, 0)),
        reward=[float(x) for x in rng.normal(size=n)],
        agents=[f"$1-{i}" for i in range(n)],
        local_done=[bool(i % 2) for i in range(n)],
        vector_action=rng.random((n, 2)),
        text_action=[["a"] for _ in range(n)],
        max_reached=[i == 0 for i in range(n)],
        action_mask=np.ones((n, 3)),
        custom_observations=[CustomObservation() for _ in range(n)],
    )


def assert_same(actual: BrainInfo, expected: BrainInfo) -> None:
    for name, value in vars(expected).items():
        got = getattr(actual, name)
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and got.shape == value.shape, name
            np.testing.assert_array_equal(got, value)
            assert got.flags.writeable, name
        elif name == "visual_observations":
            assert [len(camera) for camera in got] == [len(camera) for camera in value]
            for got_camera, camera in zip(got, value):
                for got_image, image in zip(got_camera, camera):
                    np.testing.assert_array_equal(got_image, image)
        else:
            assert got == value, name
            assert [type(item) for item in got] == [type(item) for item in value], name


def test_round_trip_keeps_every_field_and_type() -> None:
    infos = {"A": brain_info(3, cameras=2), "B": brain_info(0, cameras=1), "C": brain_info(2, cameras=0)}
    packed = pickle.loads(pickle.dumps(pack_all_brain_info(infos), protocol=5))
    unpacked = unpack_all_brain_info(packed)
    assert list(unpacked) == ["A", "B", "C"]
    for name, info in infos.items():
        assert_same(unpacked[name], info)


def test_per_agent_lists_travel_as_arrays() -> None:
    packed = pack_all_brain_info({"A": brain_info(5, cameras=1)})["A"]
    assert packed.rewards is not None and packed.rewards.dtype == np.float64
    assert packed.local_done is not None and packed.local_done.dtype == bool
    assert packed.agents is not None and packed.agents.shape == (5,)
    assert packed.visual_observations[0].shape == (5, 4, 5, 3)
