"""The compact step messages between SubprocessEnvManager and its workers round-trip exactly."""

import pickle

import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo
from mlagents.envs.communicator_objects import CustomObservation
from mlagents.envs.pipe_messages import (
    decode_actions,
    decode_all_brain_info,
    decode_timers,
    encode_actions,
    encode_all_brain_info,
    encode_timers,
)
from mlagents.envs.timers import TimerNode


def _through_pickle(value: object) -> object:
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _brain_info(n_agents: int) -> BrainInfo:
    rng = np.random.default_rng(n_agents)
    return BrainInfo(
        visual_observation=[[rng.random((4, 5, 3)) for _ in range(n_agents)]],
        vector_observation=rng.random((n_agents, 6)),
        text_observations=[f"text {i}" for i in range(n_agents)],
        memory=rng.random((n_agents, 2)).astype(np.float32),
        reward=[0.5 * i for i in range(n_agents)],
        agents=[f"$0-{i}" for i in range(n_agents)],
        local_done=[i % 2 == 0 for i in range(n_agents)],
        vector_action=rng.random((n_agents, 1)),
        text_action=[list("ab") for _ in range(n_agents)],
        max_reached=[False] * n_agents,
        action_mask=np.ones((n_agents, 3)),
        custom_observations=[CustomObservation() for _ in range(n_agents)],
    )


def _assert_same(decoded: object, original: object) -> None:
    if isinstance(original, np.ndarray):
        assert type(decoded) is np.ndarray and decoded.dtype == original.dtype
        assert decoded.shape == original.shape and decoded.flags.writeable
        np.testing.assert_array_equal(decoded, original)
    elif isinstance(original, list):
        assert isinstance(decoded, list) and len(decoded) == len(original)
        for decoded_item, item in zip(decoded, original):
            _assert_same(decoded_item, item)
    else:
        assert decoded == original


def test_brain_infos_round_trip_field_by_field() -> None:
    for n_agents in (0, 1, 3):
        original = {"A": _brain_info(n_agents), "B": BrainInfo([], np.zeros((0, 4)), [])}
        decoded = decode_all_brain_info(_through_pickle(encode_all_brain_info(original)))  # type: ignore[arg-type]
        assert list(decoded) == ["A", "B"]
        for name, info in original.items():
            assert type(decoded[name]) is BrainInfo
            assert vars(decoded[name]).keys() == vars(info).keys()
            for field, value in vars(info).items():
                _assert_same(getattr(decoded[name], field), value)


def test_unusual_brain_info_travels_as_it_is() -> None:
    info = _brain_info(2)
    info.extra = "kept"  # type: ignore[attr-defined]
    decoded = decode_all_brain_info(_through_pickle(encode_all_brain_info({"A": info})))  # type: ignore[arg-type]
    assert decoded["A"].extra == "kept"  # type: ignore[attr-defined]
    np.testing.assert_array_equal(decoded["A"].vector_observations, info.vector_observations)


def test_actions_round_trip_without_outputs() -> None:
    action = np.array([[1.0], [2.0]], dtype=np.float32)
    memory = np.ones((2, 4), dtype=np.float32)
    decisions = {
        "A": ActionInfo(action, memory, None, np.array([0.5, 0.25]), {"entropy": np.ones(2)}),
        "B": ActionInfo([], [], ["hi"], None, None),
    }
    decoded = decode_actions(_through_pickle(encode_actions(decisions)))  # type: ignore[arg-type]
    _assert_same(decoded["A"].action, action)
    _assert_same(decoded["A"].memory, memory)
    _assert_same(decoded["A"].value, np.array([0.5, 0.25]))
    assert decoded["A"].text is None and decoded["A"].outputs is None
    assert decoded["B"] == ActionInfo([], [], ["hi"], None, None)
    # ActionInfos sent as they are (an older manager) are used as they are.
    assert decode_actions({"A": decisions["A"]})["A"] is decisions["A"]


def test_timers_round_trip() -> None:
    root = TimerNode()
    root.total, root.count = 2.0, 1
    step = root.get_child("UnityEnvironment.step")
    step.add_time(0.5)
    step.get_child("exchange").add_time(0.25)
    decoded = decode_timers(_through_pickle(encode_timers(root)))  # type: ignore[arg-type]
    assert (decoded.total, decoded.count) == (2.0, 1)
    child = decoded.children["UnityEnvironment.step"]
    assert (child.total, child.count) == (0.5, 1)
    assert (child.children["exchange"].total, child.children["exchange"].count) == (0.25, 1)
