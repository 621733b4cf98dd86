"""Every message of the protocol encodes to the bytes that its field numbers and types imply.

The expected bytes are built by hand here from the protobuf encoding rules: a tag is the varint
``(field_number << 3) | wire_type`` (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit); proto3
repeated scalars are packed (one length-delimited field); a map is a repeated entry message with
key = 1 and value = 2; default values are not written.
"""

import struct

import pytest

from mlagents.envs.communicator_objects import (
    AgentActionProto,
    AgentInfoProto,
    BrainParametersProto,
    CommandProto,
    CustomAction,
    CustomObservation,
    CustomResetParameters,
    DemonstrationMetaProto,
    EngineConfigurationProto,
    EnvironmentParametersProto,
    Header,
    ResolutionProto,
    SpaceTypeProto,
    UnityInput,
    UnityMessage,
    UnityOutput,
    UnityRLInitializationInput,
    UnityRLInitializationOutput,
    UnityRLInput,
    UnityRLOutput,
    unity_to_external_pb2,
)

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


def varint(value: int) -> bytes:
    """Groups of 7 bits, least significant first, the high bit set on all but the last group."""
    value %= 1 << 64  # negative int32/enum values are sign-extended to 64 bits: 10 bytes
    groups = [(value >> shift) & 0x7F for shift in range(0, max(value.bit_length(), 1), 7)]
    return bytes([group | 0x80 for group in groups[:-1]] + groups[-1:])


def tag(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


def int_field(field: int, value: int) -> bytes:
    return tag(field, VARINT) + varint(value)


def float_field(field: int, value: float) -> bytes:
    return tag(field, FIXED32) + struct.pack("<f", value)


def bytes_field(field: int, payload: bytes) -> bytes:
    return tag(field, LENGTH_DELIMITED) + varint(len(payload)) + payload


def string_field(field: int, text: str) -> bytes:
    return bytes_field(field, text.encode("utf-8"))


def packed_floats(field: int, values) -> bytes:
    return bytes_field(field, b"".join(struct.pack("<f", v) for v in values))


def packed_varints(field: int, values) -> bytes:
    return bytes_field(field, b"".join(varint(int(v)) for v in values))


def encode(message) -> bytes:
    return message.SerializeToString(deterministic=True)


def test_hand_encoder_sanity():
    assert tag(1, VARINT) == b"\x08"
    assert tag(7, FIXED32) == b"\x3d"
    assert tag(12, LENGTH_DELIMITED) == b"\x62"
    assert varint(300) == b"\xac\x02"
    assert varint(-1) == b"\xff" * 9 + b"\x01"


def test_enum_values():
    assert (CommandProto.Value("STEP"), CommandProto.Value("RESET"), CommandProto.Value("QUIT")) == (0, 1, 2)
    assert (SpaceTypeProto.Value("discrete"), SpaceTypeProto.Value("continuous")) == (0, 1)


def test_header():
    assert encode(Header(status=200)) == b"\x08\xc8\x01"
    assert encode(Header(status=400, message="bye")) == int_field(1, 400) + string_field(2, "bye")
    assert encode(Header(status=0)) == b""  # defaults are not written


def test_resolution():
    expected = int_field(1, 84) + int_field(2, 64) + int_field(3, 1)
    assert encode(ResolutionProto(width=84, height=64, gray_scale=True)) == expected


def test_agent_action():
    message = AgentActionProto(
        vector_actions=[1.0, -0.5],
        text_actions="go",
        memories=[0.25],
        value=2.5,
        custom_action=CustomAction(),
    )
    expected = (
        packed_floats(1, [1.0, -0.5])
        + string_field(2, "go")
        + packed_floats(3, [0.25])
        + float_field(4, 2.5)
        + bytes_field(5, b"")  # a set (empty) sub-message is written with length 0
    )
    assert encode(message) == expected
    assert encode(AgentActionProto()) == b""


def test_agent_info():
    message = AgentInfoProto(
        stacked_vector_observation=[1.0, 2.0],
        visual_observations=[b"\x89PNG", b"xy"],
        text_observation="seen",
        stored_vector_actions=[3.0],
        stored_text_actions="said",
        memories=[0.5],
        reward=-1.0,
        done=True,
        max_step_reached=True,
        id=-12345,
        action_mask=[True, False, True],
        custom_observation=CustomObservation(),
    )
    expected = (
        packed_floats(1, [1.0, 2.0])
        + bytes_field(2, b"\x89PNG")  # repeated bytes are never packed: one field per image
        + bytes_field(2, b"xy")
        + string_field(3, "seen")
        + packed_floats(4, [3.0])
        + string_field(5, "said")
        + packed_floats(6, [0.5])
        + float_field(7, -1.0)
        + int_field(8, 1)
        + int_field(9, 1)
        + int_field(10, -12345)
        + packed_varints(11, [1, 0, 1])
        + bytes_field(12, b"")
    )
    assert encode(message) == expected


def test_unpacked_repeated_fields_are_accepted():
    unpacked = b"".join(float_field(1, v) for v in (1.0, 2.0)) + int_field(11, 1) + int_field(11, 0)
    parsed = AgentInfoProto.FromString(unpacked)
    assert list(parsed.stacked_vector_observation) == [1.0, 2.0]
    assert list(parsed.action_mask) == [True, False]


def test_brain_parameters():
    message = BrainParametersProto(
        vector_observation_size=8,
        num_stacked_vector_observations=3,
        vector_action_size=[3, 2],
        camera_resolutions=[ResolutionProto(width=84, height=84)],
        vector_action_descriptions=["a", "b"],
        vector_action_space_type=SpaceTypeProto.Value("continuous"),
        brain_name="Ball",
        is_training=True,
    )
    expected = (
        int_field(1, 8)
        + int_field(2, 3)
        + packed_varints(3, [3, 2])
        + bytes_field(4, int_field(1, 84) + int_field(2, 84))
        + string_field(5, "a")
        + string_field(5, "b")
        + int_field(6, 1)
        + string_field(7, "Ball")
        + int_field(8, 1)
    )
    assert encode(message) == expected


def test_environment_parameters_map():
    message = EnvironmentParametersProto(custom_reset_parameters=CustomResetParameters())
    message.float_parameters["gravity"] = 9.5
    message.float_parameters["a"] = 1.0
    entry_a = bytes_field(1, string_field(1, "a") + float_field(2, 1.0))
    entry_gravity = bytes_field(1, string_field(1, "gravity") + float_field(2, 9.5))
    # deterministic serialization sorts map keys
    assert encode(message) == entry_a + entry_gravity + bytes_field(2, b"")


def test_unity_rl_input():
    message = UnityRLInput(is_training=True, command=CommandProto.Value("RESET"))
    message.agent_actions["Brain"].value.extend([AgentActionProto(vector_actions=[1.0])])
    message.environment_parameters.float_parameters["x"] = 2.0
    action = packed_floats(1, [1.0])
    list_of_actions = bytes_field(1, action)
    entry = bytes_field(1, string_field(1, "Brain") + bytes_field(2, list_of_actions))
    environment = bytes_field(2, bytes_field(1, string_field(1, "x") + float_field(2, 2.0)))
    assert encode(message) == entry + environment + int_field(3, 1) + int_field(4, 1)
    # A step: STEP (0) and is_training false are defaults and vanish from the wire.
    assert encode(UnityRLInput(command=CommandProto.Value("STEP"), is_training=False)) == b""


def test_unity_rl_output():
    message = UnityRLOutput(global_done=True)
    message.agentInfos["Brain"].value.extend([AgentInfoProto(id=5)])
    message.agentInfos["Empty"]  # a brain without agents still has its entry
    entry_brain = bytes_field(2, string_field(1, "Brain") + bytes_field(2, bytes_field(1, int_field(10, 5))))
    entry_empty = bytes_field(2, string_field(1, "Empty") + bytes_field(2, b""))
    assert encode(message) == int_field(1, 1) + entry_brain + entry_empty


def test_initialization_messages():
    assert encode(UnityRLInitializationInput(seed=42)) == int_field(1, 42)
    output = UnityRLInitializationOutput(
        name="Academy",
        version="API-9",
        log_path="log",
        brain_parameters=[BrainParametersProto(brain_name="B")],
        environment_parameters=EnvironmentParametersProto(),
    )
    expected = (
        string_field(1, "Academy")
        + string_field(2, "API-9")
        + string_field(3, "log")
        + bytes_field(5, string_field(7, "B"))  # field 4 does not exist
        + bytes_field(6, b"")
    )
    assert encode(output) == expected


def test_unity_message_envelopes():
    inputs = UnityInput(
        rl_input=UnityRLInput(is_training=True), rl_initialization_input=UnityRLInitializationInput(seed=1)
    )
    assert encode(inputs) == bytes_field(1, int_field(3, 1)) + bytes_field(2, int_field(1, 1))
    outputs = UnityOutput(
        rl_output=UnityRLOutput(global_done=True),
        rl_initialization_output=UnityRLInitializationOutput(name="A"),
    )
    assert encode(outputs) == bytes_field(1, int_field(1, 1)) + bytes_field(2, string_field(1, "A"))
    message = UnityMessage(header=Header(status=200), unity_output=outputs, unity_input=inputs)
    assert encode(message) == (
        bytes_field(1, int_field(1, 200)) + bytes_field(2, encode(outputs)) + bytes_field(3, encode(inputs))
    )


def test_engine_configuration():
    message = EngineConfigurationProto(
        width=80, height=80, quality_level=1, time_scale=100.0, target_frame_rate=-1, show_monitor=True
    )
    expected = (
        int_field(1, 80)
        + int_field(2, 80)
        + int_field(3, 1)
        + float_field(4, 100.0)
        + int_field(5, -1)
        + int_field(6, 1)
    )
    assert encode(message) == expected


def test_demonstration_meta():
    message = DemonstrationMetaProto(
        api_version=1, demonstration_name="demo", number_steps=10, number_episodes=2, mean_reward=0.5
    )
    expected = (
        int_field(1, 1) + string_field(2, "demo") + int_field(3, 10) + int_field(4, 2) + float_field(5, 0.5)
    )
    assert encode(message) == expected


@pytest.mark.parametrize("message", [CustomAction(), CustomObservation(), CustomResetParameters()])
def test_custom_messages_are_empty_and_keep_unknown_fields(message):
    assert message.DESCRIPTOR.fields == []
    # A customised build may send fields we do not know: they survive a parse/serialize round trip.
    unknown = int_field(1, 7) + string_field(2, "extra")
    parsed = type(message).FromString(unknown)
    assert parsed.SerializeToString() == unknown


def test_service_and_package():
    service = unity_to_external_pb2.DESCRIPTOR.services_by_name["UnityToExternal"]
    assert service.full_name == "communicator_objects.UnityToExternal"
    method = service.methods_by_name["Exchange"]
    assert method.input_type.full_name == "communicator_objects.UnityMessage"
    assert method.output_type.full_name == "communicator_objects.UnityMessage"
    assert not method.client_streaming and not method.server_streaming
    assert b"MLAgents.CommunicatorObjects" in unity_to_external_pb2.DESCRIPTOR.serialized_pb
