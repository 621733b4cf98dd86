"""Conversion between the Academy's Python objects and the protobuf messages of the wire.

The Unity side of the protocol: the initialization output, one
``UnityRLOutput`` per exchange point (every brain present, maybe with an empty list), written
directly as protobuf bytes (:func:`output_message_bytes`), and the ``UnityRLInput`` replies
turned back into :class:`~.messages.AcademyInput`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence

import numpy as np
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from mlagents.envs.communicator_objects import (
    AgentInfoProto,
    BrainParametersProto,
    EnvironmentParametersProto,
    Header,
    ResolutionProto,
    UnityMessage,
    UnityOutput,
    UnityRLInitializationOutput,
    UnityRLOutput,
)

from .messages import AcademyInput, AcademyOutput, Command, DecisionBatch
from .png import encode_png
from .specs import BrainSpec, SceneSpec

#: The protocol version string of ML-Agents 0.9 ("API-8" was 0.8).
API_VERSION = "API-9"

STATUS_OK = 200

_SPACE_TYPES = {"discrete": 0, "continuous": 1}


def brain_parameters_proto(brain: BrainSpec) -> BrainParametersProto:
    """``BrainParametersProto`` of one brain (``is_training`` = the brain is controlled from Python)."""
    return BrainParametersProto(
        vector_observation_size=brain.vector_observation_size,
        num_stacked_vector_observations=brain.num_stacked_vector_observations,
        vector_action_size=list(brain.vector_action_size),
        camera_resolutions=[
            ResolutionProto(width=c.width, height=c.height, gray_scale=c.gray_scale)
            for c in brain.camera_resolutions
        ],
        vector_action_descriptions=list(brain.vector_action_descriptions),
        vector_action_space_type=_SPACE_TYPES[brain.vector_action_space_type],
        brain_name=brain.name,
        is_training=brain.is_training,
    )


def initialization_output(spec: SceneSpec, version: str = API_VERSION) -> UnityRLInitializationOutput:
    """What the academy reports at start-up: name, version, brains, reset-parameter defaults."""
    return UnityRLInitializationOutput(
        name=spec.academy_name,
        version=version,
        brain_parameters=[brain_parameters_proto(b) for b in spec.brains],
        environment_parameters=EnvironmentParametersProto(
            float_parameters={k: float(v) for k, v in spec.reset_parameters.items()}
        ),
    )


def initialization_message(spec: SceneSpec, version: str = API_VERSION) -> UnityMessage:
    """Call #1 of the handshake."""
    return UnityMessage(
        header=Header(status=STATUS_OK),
        unity_output=UnityOutput(rl_initialization_output=initialization_output(spec, version)),
    )


# One-byte varints, the common case (tags, short lengths, flags): looked up, not computed.
_SMALL_VARINTS = [bytes((value,)) for value in range(0x80)]


def varint(value: int) -> bytes:
    """``value`` (>= 0) as a base-128 varint: protobuf's length prefix and its packed-field sizes."""
    if value < 0x80:
        return _SMALL_VARINTS[value]
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


# ---------------------------------------------------------------------------------------------
# The output of an exchange point written directly as protobuf bytes. Building one message
# object per agent and serializing them costs several times more than writing the few fields
# here; the bytes parse to the message the generated classes would build (the tests compare).

# Protobuf wire types: what follows a field's key.
_WIRE_VARINT = 0
_WIRE_LENGTH_DELIMITED = 2
_WIRE_FIXED32 = 5
_WIRE_TYPES = {
    FieldDescriptor.TYPE_BOOL: _WIRE_VARINT,
    FieldDescriptor.TYPE_INT32: _WIRE_VARINT,
    FieldDescriptor.TYPE_FLOAT: _WIRE_FIXED32,
    FieldDescriptor.TYPE_STRING: _WIRE_LENGTH_DELIMITED,
    FieldDescriptor.TYPE_BYTES: _WIRE_LENGTH_DELIMITED,
    FieldDescriptor.TYPE_MESSAGE: _WIRE_LENGTH_DELIMITED,
}
# Repeated fields of these types are packed (the proto3 default): one length-delimited field.
_PACKABLE = (FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_FLOAT)


def _key(message: Descriptor, field: str) -> bytes:
    """The key of ``field`` of ``message``, from the generated descriptor: the varint of
    ``field number << 3 | wire type``."""
    descriptor = message.fields_by_name[field]
    if descriptor.is_repeated and descriptor.type in _PACKABLE:
        return varint(descriptor.number << 3 | _WIRE_LENGTH_DELIMITED)
    return varint(descriptor.number << 3 | _WIRE_TYPES[descriptor.type])


_INFO = AgentInfoProto.DESCRIPTOR
_KEY_OBSERVATION = _key(_INFO, "stacked_vector_observation")
_KEY_VISUAL = _key(_INFO, "visual_observations")
_KEY_TEXT_OBSERVATION = _key(_INFO, "text_observation")
_KEY_STORED_ACTIONS = _key(_INFO, "stored_vector_actions")
_KEY_STORED_TEXT = _key(_INFO, "stored_text_actions")
_KEY_MEMORIES = _key(_INFO, "memories")
_KEY_REWARD = _key(_INFO, "reward")
_DONE_TRUE = _key(_INFO, "done") + varint(1)
_MAX_STEP_TRUE = _key(_INFO, "max_step_reached") + varint(1)
_KEY_ID = _key(_INFO, "id")
_KEY_ACTION_MASK = _key(_INFO, "action_mask")

_AGENT_INFOS = UnityRLOutput.DESCRIPTOR.fields_by_name["agentInfos"]
_ENTRY = _AGENT_INFOS.message_type  # the map entry: key = brain name, value = ListAgentInfoProto
_KEY_AGENT_INFOS = _key(UnityRLOutput.DESCRIPTOR, "agentInfos")
_KEY_ENTRY_NAME = _key(_ENTRY, "key")
_KEY_ENTRY_LIST = _key(_ENTRY, "value")
_KEY_LIST_ITEM = _key(_ENTRY.fields_by_name["value"].message_type, "value")
_GLOBAL_DONE_TRUE = _key(UnityRLOutput.DESCRIPTOR, "global_done") + varint(1)
_KEY_RL_OUTPUT = _key(UnityOutput.DESCRIPTOR, "rl_output")
_KEY_UNITY_OUTPUT = _key(UnityMessage.DESCRIPTOR, "unity_output")


def _delimited(key: bytes, payload: bytes) -> bytes:
    """A length-delimited field: key, varint length, payload."""
    return key + varint(len(payload)) + payload


#: ``header { status: 200 }``, the start of every output message
_HEADER_OK = _delimited(
    _key(UnityMessage.DESCRIPTOR, "header"), _key(Header.DESCRIPTOR, "status") + varint(STATUS_OK)
)
_INT32_RANGE = range(-(2**31), 2**31)


@functools.lru_cache(maxsize=4096)
def _id_field(agent_id: int) -> bytes:
    """The ``id`` field (an int32: negative ids are sign-extended to 64 bits, 10 bytes; 0 is not
    written). Cached: an agent keeps its id.

    :raises ValueError: for an id outside the int32 range.
    """
    if agent_id not in _INT32_RANGE:
        raise ValueError(f"Agent id {agent_id} does not fit the int32 field AgentInfoProto.id.")
    if agent_id == 0:
        return b""
    return _KEY_ID + varint(agent_id & 0xFFFF_FFFF_FFFF_FFFF)


def _packed_column(key: bytes, rows: np.ndarray, dtype: str) -> list[bytes]:
    """Each row of ``rows`` ``(k, n)`` as one packed repeated field (key, length, little-endian
    values), or nothing when ``n`` is 0 (an empty repeated field is not written)."""
    k, n = rows.shape
    if n == 0:
        return [b""] * k
    raw = np.ascontiguousarray(rows, dtype=dtype).tobytes()
    width = len(raw) // k
    head = key + varint(width)
    return [head + raw[start : start + width] for start in range(0, len(raw), width)]


def _string_column(key: bytes, texts: Sequence[str]) -> list[bytes]:
    """Each text as a string field (UTF-8), nothing for an empty one (proto3 default)."""
    return [_delimited(key, text.encode()) if text else b"" for text in texts]


def _visual_column(cameras: Sequence[np.ndarray]) -> list[bytes]:
    """Each agent's images, one PNG per camera in camera order (``visual_observations``)."""
    images = [[_delimited(_KEY_VISUAL, encode_png(image)) for image in camera] for camera in cameras]
    return [b"".join(agent) for agent in zip(*images)]


_FLOAT_ZERO = bytes(4)


def _scalar_column(batch: DecisionBatch) -> list[bytes]:
    """``reward``, ``done``, ``max_step_reached`` and ``id`` of each agent, each left out when
    it has its default value. A reward of -0.0 is written (its bits are not zero), as protobuf does."""
    rewards = np.ascontiguousarray(batch.rewards, dtype="<f4").tobytes()
    fields = []
    for agent_id, reward, done, max_reached in zip(
        batch.agents.tolist(),
        [rewards[start : start + 4] for start in range(0, len(rewards), 4)],
        batch.local_done.tolist(),
        batch.max_reached.tolist(),
    ):
        fields.append(
            (_KEY_REWARD + reward if reward != _FLOAT_ZERO else b"")
            + (_DONE_TRUE if done else b"")
            + (_MAX_STEP_TRUE if max_reached else b"")
            + _id_field(agent_id)
        )
    return fields


def agent_info_records(batch: DecisionBatch) -> list[bytes]:
    """One serialized ``AgentInfoProto`` per agent of the batch, fields in field-number order;
    visual observations become PNG bytes. (The SDK has no custom observations: that field is
    never written.)

    Each column holds one field (or a few adjacent ones) for every agent; the float vectors are
    packed from the numpy buffers in one go.

    :raises ValueError: for an agent id outside the int32 range.
    """
    if len(batch.agents) == 0:
        return []
    columns = [_packed_column(_KEY_OBSERVATION, batch.vector_observations, "<f4")]
    if batch.visual_observations:
        columns.append(_visual_column(batch.visual_observations))
    if batch.text_observations is not None:
        columns.append(_string_column(_KEY_TEXT_OBSERVATION, batch.text_observations))
    columns.append(_packed_column(_KEY_STORED_ACTIONS, batch.previous_vector_actions, "<f4"))
    if batch.previous_text_actions is not None:
        columns.append(_string_column(_KEY_STORED_TEXT, batch.previous_text_actions))
    if batch.memories is not None:
        columns.append(_packed_column(_KEY_MEMORIES, batch.memories, "<f4"))
    columns.append(_scalar_column(batch))
    if batch.action_masks is not None:
        columns.append(_packed_column(_KEY_ACTION_MASK, batch.action_masks, "u1"))
    return [b"".join(fields) for fields in zip(*columns)]


def agent_info_protos(batch: DecisionBatch) -> list[AgentInfoProto]:
    """:func:`agent_info_records` as messages (for the demonstration recorder, which edits them)."""
    return [AgentInfoProto.FromString(record) for record in agent_info_records(batch)]


def _brain_entry(name: str, batch: DecisionBatch) -> bytes:
    """One entry of the ``agentInfos`` map: the brain's name and its ``ListAgentInfoProto``
    (written even when empty: every brain appears in every output)."""
    infos = b"".join([_delimited(_KEY_LIST_ITEM, record) for record in agent_info_records(batch)])
    entry = _delimited(_KEY_ENTRY_NAME, name.encode()) + _delimited(_KEY_ENTRY_LIST, infos)
    return _delimited(_KEY_AGENT_INFOS, entry)


def output_message_bytes(output: AcademyOutput) -> bytes:
    """The serialized ``UnityMessage`` of one exchange point: header status 200 and
    ``unity_output.rl_output`` with ``global_done`` and every brain's agent infos."""
    rl_output = b"".join(
        [_GLOBAL_DONE_TRUE if output.global_done else b""]
        + [_brain_entry(name, batch) for name, batch in output.batches.items()]
    )
    # rl_output is written even when empty: Python tells an output from an empty call by it.
    return _HEADER_OK + _delimited(_KEY_UNITY_OUTPUT, _delimited(_KEY_RL_OUTPUT, rl_output))


def input_from_message(message: UnityMessage, brains: Mapping[str, BrainSpec]) -> AcademyInput | None:
    """The :class:`AcademyInput` in Python's reply, or None when the reply means "stop"
    (status other than 200, or no ``rl_input``, which Unity treats as QUIT)."""
    if message.header.status != STATUS_OK or not message.HasField("unity_input"):
        return None
    unity_input = message.unity_input
    if not unity_input.HasField("rl_input"):
        return None
    rl_input = unity_input.rl_input
    actions: dict[str, np.ndarray] = {}
    memories: dict[str, np.ndarray] = {}
    texts: dict[str, list[str]] = {}
    for name, agent_actions in rl_input.agent_actions.items():
        values = agent_actions.value
        if not values or name not in brains:
            continue
        # One pass over the agents' messages (each access builds a Python object).
        fields = [(a.vector_actions, a.memories, a.text_actions) for a in values]
        vectors, agent_memories, agent_texts = zip(*fields)
        actions[name] = _action_rows(name, vectors, brains[name].action_length)
        if any(map(len, agent_memories)):
            memories[name] = _memory_rows(agent_memories)
        if any(agent_texts):
            texts[name] = list(agent_texts)
    parameters = None
    if rl_input.HasField("environment_parameters"):
        parameters = dict(rl_input.environment_parameters.float_parameters)
    return AcademyInput(
        command=Command(rl_input.command),
        is_training=rl_input.is_training,
        reset_parameters=parameters,
        actions=actions,
        memories=memories or None,
        text_actions=texts or None,
    )


def _action_rows(name: str, vectors: Sequence[Sequence[float]], length: int) -> np.ndarray:
    """float32 ``(k, length)``: the first ``length`` values of each agent's ``vector_actions``.

    :raises ValueError: when an agent has fewer values than the brain needs.
    """
    sizes = set(map(len, vectors))
    if min(sizes) < length:
        raise ValueError(f"Python sent fewer than {length} action values for an agent of brain '{name}'.")
    rows = vectors if sizes == {length} else [vector[:length] for vector in vectors]
    # Flattened to one list of floats, which numpy converts in one go.
    values = list(itertools.chain.from_iterable(rows))
    return np.array(values, dtype=np.float32).reshape(len(vectors), length)


def _memory_rows(agent_memories: Sequence[Sequence[float]]) -> np.ndarray:
    """float32 ``(k, widest)``: each agent's memories, zero-padded to the widest."""
    width = max(map(len, agent_memories))
    block = np.zeros((len(agent_memories), width), dtype=np.float32)
    for row, memory in zip(block, agent_memories):
        row[: len(memory)] = memory
    return block
