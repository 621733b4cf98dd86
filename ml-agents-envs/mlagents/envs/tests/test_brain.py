"""BrainParameters and BrainInfo built from hand-made protobuf messages."""

import io
import logging

import numpy as np
import pytest
from PIL import Image

from mlagents.envs.brain import BrainInfo, BrainParameters, safe_concat_lists, safe_concat_np_ndarray
from mlagents.envs.communicator_objects import (
    AgentInfoProto,
    BrainParametersProto,
    CustomObservation,
    ResolutionProto,
)


def png_bytes(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels.astype(np.uint8), mode="RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def brain(
    obs_size=3, stacks=1, action_size=(2,), space_type="continuous", cameras=(), name="TestBrain"
) -> BrainParameters:
    return BrainParameters(
        name, obs_size, stacks, list(cameras), list(action_size), [""] * len(action_size), space_type
    )


def test_brain_parameters_from_proto_and_str():
    proto = BrainParametersProto(
        vector_observation_size=8,
        num_stacked_vector_observations=3,
        vector_action_size=[3, 2],
        camera_resolutions=[ResolutionProto(width=84, height=64, gray_scale=True)],
        vector_action_descriptions=["move", "jump"],
        vector_action_space_type=0,
        brain_name="Walker",
        is_training=True,
    )
    params = BrainParameters.from_proto(proto)
    assert params.brain_name == "Walker"
    assert params.vector_observation_space_size == 8
    assert params.num_stacked_vector_observations == 3
    assert params.number_visual_observations == 1
    assert params.camera_resolutions == [{"height": 64, "width": 84, "blackAndWhite": True}]
    assert params.vector_action_space_size == [3, 2] and isinstance(params.vector_action_space_size, list)
    assert params.vector_action_descriptions == ["move", "jump"]
    assert params.vector_action_space_type == "discrete"
    assert str(params) == (
        "Unity brain name: Walker\n"
        "        Number of Visual Observations (per agent): 1\n"
        "        Vector Observation space size (per agent): 8\n"
        "        Number of stacked Vector Observation: 3\n"
        "        Vector Action space type: discrete\n"
        "        Vector Action space size (per agent): [3, 2]\n"
        "        Vector Action descriptions: move, jump"
    )
    assert BrainParameters("b", 1, 1, [], [2], ["", ""], 1).vector_action_space_type == "continuous"


def test_vector_observations_rewards_ids_and_flags():
    params = brain(obs_size=2, stacks=3)
    infos = [
        AgentInfoProto(
            stacked_vector_observation=[1, 2, 3, 4, 5, 6],
            reward=0.5,
            done=True,
            max_step_reached=True,
            id=12345,
            text_observation="hello",
            stored_vector_actions=[0.25, -1],
            stored_text_actions="ab",
        ),
        AgentInfoProto(stacked_vector_observation=[0] * 6, reward=-1, id=-7, stored_vector_actions=[1, 1]),
    ]
    info = BrainInfo.from_agent_proto(0, infos, params)
    assert info.vector_observations.shape == (2, 6) and info.vector_observations.dtype == np.float64
    assert info.vector_observations[0].tolist() == [1, 2, 3, 4, 5, 6]
    assert info.rewards == [0.5, -1.0]
    assert info.agents == ["$0-12345", "$0--7"]
    assert info.local_done == [True, False]
    assert info.max_reached == [True, False]
    assert info.text_observations == ["hello", ""]
    assert info.previous_vector_actions.tolist() == [[0.25, -1], [1, 1]]
    assert info.previous_text_actions == [["a", "b"], []]
    assert info.memories.shape == (0, 0)
    assert info.visual_observations == []
    assert info.custom_observations == [CustomObservation(), CustomObservation()]
    assert BrainInfo.from_agent_proto(3, infos, params).agents[0] == "$3-12345"


def test_no_agents():
    params = brain(obs_size=4, stacks=2, action_size=(3, 2), space_type="discrete")
    info = BrainInfo.from_agent_proto(0, [], params)
    assert info.vector_observations.shape == (0, 8)
    assert info.memories.shape == (0, 0)
    assert info.action_masks.shape == (0, 5)
    assert info.previous_vector_actions.shape == (0, 2)
    assert info.agents == [] and info.rewards == []


def test_visual_observations_colour_and_gray_scale():
    rng = np.random.default_rng(0)
    colour = rng.integers(0, 256, size=(4, 6, 3))
    gray = rng.integers(0, 256, size=(5, 7, 3))
    params = brain(
        cameras=[
            {"height": 4, "width": 6, "blackAndWhite": False},
            {"height": 5, "width": 7, "blackAndWhite": True},
        ]
    )
    infos = [
        AgentInfoProto(
            stacked_vector_observation=[0, 0, 0], visual_observations=[png_bytes(colour), png_bytes(gray)]
        )
        for _ in range(2)
    ]
    info = BrainInfo.from_agent_proto(0, infos, params)
    assert len(info.visual_observations) == 2 and len(info.visual_observations[0]) == 2
    first = info.visual_observations[0][0]
    assert first.shape == (4, 6, 3) and first.dtype == np.float64
    np.testing.assert_allclose(first, colour / 255.0)
    second = info.visual_observations[1][1]
    assert second.shape == (5, 7, 1)
    np.testing.assert_allclose(second[..., 0], (gray / 255.0).mean(axis=2))


def test_process_pixels_accepts_other_modes():
    buffer = io.BytesIO()
    Image.fromarray(np.full((2, 3), 51, dtype=np.uint8), mode="L").save(buffer, format="PNG")
    pixels = BrainInfo.process_pixels(buffer.getvalue(), gray_scale=False)
    assert pixels.shape == (2, 3, 3)
    np.testing.assert_allclose(pixels, 0.2)


def test_action_masks():
    params = brain(action_size=(2, 3), space_type="discrete")
    infos = [
        AgentInfoProto(stacked_vector_observation=[0, 0, 0], action_mask=[True, False, False, True, False]),
        AgentInfoProto(stacked_vector_observation=[0, 0, 0]),  # never set a mask
        AgentInfoProto(stacked_vector_observation=[0, 0, 0], action_mask=[True]),  # wrong length: ignored
    ]
    masks = BrainInfo.from_agent_proto(0, infos, params).action_masks
    assert masks.tolist() == [[0, 1, 1, 0, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1]]


def test_memories_are_zero_padded_to_the_longest():
    infos = [
        AgentInfoProto(stacked_vector_observation=[0, 0, 0], memories=[1, 2, 3]),
        AgentInfoProto(stacked_vector_observation=[0, 0, 0], memories=[4]),
        AgentInfoProto(stacked_vector_observation=[0, 0, 0]),
    ]
    info = BrainInfo.from_agent_proto(0, infos, brain())
    assert info.memories.tolist() == [[1, 2, 3], [4, 0, 0], [0, 0, 0]]


def test_nan_rewards_and_observations_are_replaced_with_warnings(caplog):
    infos = [
        AgentInfoProto(stacked_vector_observation=[float("nan"), float("inf"), 1], reward=float("nan")),
        AgentInfoProto(stacked_vector_observation=[1, 2, 3], reward=2),
    ]
    with caplog.at_level(logging.WARNING, logger="mlagents.envs"):
        info = BrainInfo.from_agent_proto(0, infos, brain(name="Nanny"))
    assert "An agent had a NaN reward for brain Nanny" in caplog.text
    assert "An agent had a NaN observation for brain Nanny" in caplog.text
    assert info.rewards == [0.0, 2.0]
    assert info.vector_observations[0, 0] == 0.0
    assert info.vector_observations[0, 1] == np.finfo(np.float64).max
    assert np.isfinite(info.vector_observations).all()


def test_no_warning_without_nan(caplog):
    with caplog.at_level(logging.WARNING, logger="mlagents.envs"):
        BrainInfo.from_agent_proto(0, [AgentInfoProto(stacked_vector_observation=[1, 2, 3])], brain())
    assert caplog.text == ""


def test_merge():
    params = brain(
        action_size=(2,), space_type="discrete", cameras=[{"height": 2, "width": 2, "blackAndWhite": False}]
    )
    image = png_bytes(np.zeros((2, 2, 3)))
    first = BrainInfo.from_agent_proto(
        0,
        [
            AgentInfoProto(
                stacked_vector_observation=[1, 1, 1],
                visual_observations=[image],
                id=1,
                memories=[1],
                reward=1,
            )
        ],
        params,
    )
    second = BrainInfo.from_agent_proto(
        1,
        [
            AgentInfoProto(stacked_vector_observation=[2, 2, 2], visual_observations=[image], id=2, reward=2),
            AgentInfoProto(stacked_vector_observation=[3, 3, 3], visual_observations=[image], id=3, reward=3),
        ],
        params,
    )
    first.merge(second)
    assert first.agents == ["$0-1", "$1-2", "$1-3"]
    assert first.vector_observations[:, 0].tolist() == [1, 2, 3]
    assert len(first.visual_observations[0]) == 3
    assert first.rewards == [1, 2, 3]
    assert first.memories.tolist() == [[1], [0], [0]]
    assert first.action_masks.shape == (3, 2)
    assert first.text_observations == ["", "", ""]


def test_merge_memories_pads_the_narrower_side():
    merged = BrainInfo.merge_memories(np.ones((1, 2)), np.full((2, 3), 2.0), ["a"], ["b", "c"])
    assert merged.tolist() == [[1, 1, 0], [2, 2, 2], [2, 2, 2]]
    merged = BrainInfo.merge_memories(np.zeros((0, 0)), np.ones((1, 2)), ["a", "b"], ["c"])
    assert merged.tolist() == [[0, 0], [0, 0], [1, 1]]
    assert BrainInfo.merge_memories(np.zeros((0, 0)), np.zeros((0, 0)), [], []).shape == (0, 0)


@pytest.mark.parametrize(
    "a, b, expected",
    [(None, None, None), ([1], None, [1]), (None, [2], [2]), ([1], [2], [1, 2])],
)
def test_safe_concat_lists(a, b, expected):
    assert safe_concat_lists(a, b) == expected


def test_safe_concat_np_ndarray():
    assert safe_concat_np_ndarray(None, None) is None
    assert safe_concat_np_ndarray(np.zeros((0, 2)), np.zeros((0, 2))) is None
    assert safe_concat_np_ndarray(np.ones((1, 2)), None).tolist() == [[1, 1]]
    assert safe_concat_np_ndarray(np.zeros((0,)), np.ones((1, 2))).tolist() == [[1, 1]]
    assert safe_concat_np_ndarray(np.ones((1, 2)), np.zeros((2, 2))).shape == (3, 2)


def test_infinite_observations_are_clipped_without_a_nan_warning(caplog):
    infos = [AgentInfoProto(stacked_vector_observation=[float("-inf"), 1, 2])]
    with caplog.at_level(logging.WARNING, logger="mlagents.envs"):
        info = BrainInfo.from_agent_proto(0, infos, brain())
    assert caplog.text == ""
    assert info.vector_observations.tolist() == [[np.finfo(np.float64).min, 1.0, 2.0]]


def test_stored_actions_are_zero_padded_and_arrays_are_float64():
    infos = [
        AgentInfoProto(stacked_vector_observation=[1, 2, 3], stored_vector_actions=[0.5, 0.25]),
        AgentInfoProto(stacked_vector_observation=[4, 5, 6]),  # has not acted yet
    ]
    info = BrainInfo.from_agent_proto(7, infos, brain())
    assert info.previous_vector_actions.tolist() == [[0.5, 0.25], [0.0, 0.0]]
    assert info.vector_observations.tolist() == [[1, 2, 3], [4, 5, 6]]
    for array in (info.vector_observations, info.previous_vector_actions, info.action_masks, info.memories):
        assert array.dtype == np.float64
    assert info.memories.shape == (0, 0)
    assert info.agents == ["$7-0", "$7-0"]
