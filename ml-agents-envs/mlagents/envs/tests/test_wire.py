"""The translation between wire messages and mlagents.envs objects, message by message."""

import numpy as np
import pytest
from google.protobuf.internal.encoder import _VarintBytes

from mlagents.envs import wire
from mlagents.envs.brain import BrainParameters
from mlagents.envs.communicator_objects import (
    AgentInfoProto,
    BrainParametersProto,
    CustomAction,
    CustomResetParameters,
    ResolutionProto,
    UnityRLInitializationOutput,
    UnityRLOutput,
)
from mlagents.envs.exception import UnityEnvironmentException


def test_academy_description_keeps_the_declared_order():
    output = UnityRLInitializationOutput(
        name="Academy",
        version="API-9",
        brain_parameters=[
            BrainParametersProto(brain_name="Watcher", vector_observation_size=1, vector_action_size=[2]),
            BrainParametersProto(
                brain_name="Learner",
                vector_observation_size=3,
                num_stacked_vector_observations=2,
                vector_action_size=[3, 2],
                camera_resolutions=[ResolutionProto(width=8, height=6, gray_scale=True)],
                is_training=True,
            ),
        ],
    )
    output.environment_parameters.float_parameters["gravity"] = 9.5
    academy = wire.academy_description(output)
    assert (academy.name, academy.version, academy.log_path) == ("Academy", "API-9", "")
    assert list(academy.brains) == ["Watcher", "Learner"]
    assert academy.external_brain_names == ["Learner"]
    learner = academy.brains["Learner"]
    assert learner.camera_resolutions == [{"height": 6, "width": 8, "blackAndWhite": True}]
    assert learner.vector_action_space_size == [3, 2] and learner.vector_action_space_type == "discrete"
    assert academy.reset_parameters == {"gravity": 9.5}


def brain(name: str = "Brain") -> BrainParameters:
    return BrainParameters(name, 2, 1, [], [2], ["", ""], "continuous")


def test_brain_infos_from_output():
    output = UnityRLOutput(global_done=True)
    output.agentInfos["Brain"].value.extend(
        [
            AgentInfoProto(id=5, stacked_vector_observation=[1, 2], reward=0.5),
            AgentInfoProto(id=6, stacked_vector_observation=[3, 4]),
        ]
    )
    output.agentInfos["Empty"].value.extend([])
    infos, done = wire.brain_infos_from_output(output, {"Brain": brain(), "Empty": brain("Empty")}, 3)
    assert done is True
    assert infos["Brain"].agents == ["$3-5", "$3-6"]
    assert infos["Brain"].rewards == [0.5, 0.0]
    assert infos["Empty"].vector_observations.shape == (0, 2)
    with pytest.raises(UnityEnvironmentException, match="did not declare"):
        wire.brain_infos_from_output(output, {"Brain": brain()}, 0)


def test_reset_input_always_carries_the_environment_parameters():
    inputs = wire.reset_input(False, {}, None)
    rl_input = inputs.rl_input
    assert rl_input.command == wire.COMMAND_RESET and rl_input.is_training is False
    assert rl_input.HasField("environment_parameters")
    assert not rl_input.environment_parameters.HasField("custom_reset_parameters")
    inputs = wire.reset_input(True, {"gravity": 3}, CustomResetParameters())
    assert dict(inputs.rl_input.environment_parameters.float_parameters) == {"gravity": 3.0}
    assert inputs.rl_input.environment_parameters.HasField("custom_reset_parameters")


def test_step_input_gives_each_agent_its_slice():
    custom = CustomAction()
    inputs = wire.step_input(
        {"Brain": 2, "Idle": 0},
        vector_action={"Brain": [1.0, 2.0, 3.0, 4.0], "Idle": []},
        memory={"Brain": [9.0, 8.0], "Idle": []},
        text_action={"Brain": ["a", "b"], "Idle": []},
        value={"Brain": np.array([0.5, 0.25])},
        custom_action={"Brain": [None, custom], "Idle": []},
    )
    rl_input = inputs.rl_input
    assert rl_input.command == wire.COMMAND_STEP
    assert set(rl_input.agent_actions) == {"Brain"}  # a brain without agents gets no entry
    first, second = rl_input.agent_actions["Brain"].value
    assert list(first.vector_actions) == [1.0, 2.0] and list(second.vector_actions) == [3.0, 4.0]
    assert list(first.memories) == [9.0] and list(second.memories) == [8.0]
    assert (first.text_actions, second.text_actions) == ("a", "b")
    assert (first.value, second.value) == (0.5, 0.25)
    assert not first.HasField("custom_action") and second.HasField("custom_action")


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1, 2**63])
def test_encode_varint_is_protobufs_varint(value):
    assert wire.encode_varint(value) == _VarintBytes(value)
