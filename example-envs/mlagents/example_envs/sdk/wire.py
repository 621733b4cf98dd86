"""Conversion between the Academy's Python objects and the protobuf messages of the wire.

The Unity side of the protocol: the initialization output, one
``UnityRLOutput`` per exchange point (every brain present, maybe with an empty list) and the
``UnityRLInput`` replies turned back into :class:`~.messages.AcademyInput`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

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


def varint(value: int) -> bytes:
    """``value`` (>= 0) as a base-128 varint: protobuf's length prefix and its packed-field sizes."""
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


# Wire tags (field number << 3 | 2, length-delimited) of AgentInfoProto's packed repeated fields.
_TAG_OBSERVATION = b"\x0a"  # 1 stacked_vector_observation
_TAG_STORED_ACTIONS = b"\x22"  # 4 stored_vector_actions
_TAG_MEMORIES = b"\x32"  # 6 memories
_TAG_ACTION_MASK = b"\x5a"  # 11 action_mask


def _packed_rows(tag: bytes, rows: np.ndarray, dtype: str) -> list[bytes]:
    """Each row of ``rows`` as one packed repeated field (tag, length, little-endian values)."""
    if rows.shape[1] == 0:
        return [b""] * rows.shape[0]
    data = np.ascontiguousarray(rows, dtype=dtype)
    width = data.shape[1] * data.itemsize
    head = tag + varint(width)
    raw = data.tobytes()
    return [head + raw[i * width : (i + 1) * width] for i in range(data.shape[0])]


def agent_info_protos(batch: DecisionBatch) -> list[AgentInfoProto]:
    """One ``AgentInfoProto`` per agent of the batch; visual observations become PNG bytes.

    The float vectors are written as packed fields straight from the numpy buffers and parsed
    by protobuf's C code: converting them float by float from Python costs ten times more.
    """
    k = len(batch.agents)
    if k == 0:
        return []
    fields = [
        _packed_rows(_TAG_OBSERVATION, batch.vector_observations, "<f4"),
        _packed_rows(_TAG_STORED_ACTIONS, batch.previous_vector_actions, "<f4"),
    ]
    if batch.memories is not None:
        fields.append(_packed_rows(_TAG_MEMORIES, batch.memories, "<f4"))
    if batch.action_masks is not None:
        fields.append(_packed_rows(_TAG_ACTION_MASK, batch.action_masks, "u1"))
    encoded = [b"".join(parts) for parts in zip(*fields)]
    rewards = batch.rewards.tolist()
    dones = batch.local_done.tolist()
    max_reached = batch.max_reached.tolist()
    ids = batch.agents.tolist()
    images = [[encode_png(image) for image in camera] for camera in batch.visual_observations]
    infos = []
    for i in range(k):
        info = AgentInfoProto.FromString(encoded[i])
        info.reward = rewards[i]
        info.done = dones[i]
        info.max_step_reached = max_reached[i]
        info.id = ids[i]
        if images:
            info.visual_observations.extend([camera[i] for camera in images])
        if batch.text_observations is not None:
            info.text_observation = batch.text_observations[i]
        if batch.previous_text_actions is not None:
            info.stored_text_actions = batch.previous_text_actions[i]
        infos.append(info)
    return infos


def output_message(output: AcademyOutput) -> UnityMessage:
    """The message of one exchange point: ``UnityRLOutput`` with every brain's infos."""
    rl_output = UnityRLOutput(global_done=output.global_done)
    for name, batch in output.batches.items():
        # Indexing the map creates the entry, so brains without deciding agents appear too.
        rl_output.agentInfos[name].value.extend(agent_info_protos(batch))
    return UnityMessage(header=Header(status=STATUS_OK), unity_output=UnityOutput(rl_output=rl_output))


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
        length = brains[name].action_length
        rows = [list(a.vector_actions) for a in values]
        if any(len(row) < length for row in rows):
            raise ValueError(f"Python sent fewer than {length} action values for an agent of brain '{name}'.")
        actions[name] = np.array([row[:length] for row in rows], dtype=np.float32).reshape(
            len(values), length
        )
        if any(len(a.memories) for a in values):
            width = max(len(a.memories) for a in values)
            block = np.zeros((len(values), width), dtype=np.float32)
            for i, a in enumerate(values):
                block[i, : len(a.memories)] = list(a.memories)
            memories[name] = block
        if any(a.text_actions for a in values):
            texts[name] = [a.text_actions for a in values]
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
