"""Demonstrations: reading ``.demo`` files into BrainInfos and an experience buffer, and checking
that they fit the brain that learns from them.

A ``.demo`` file (demonstration API version 1, the layout Unity ML-Agents 0.8 and 0.9 write):

* byte 0: a varint length and a ``DemonstrationMetaProto`` (name, number of steps and episodes,
  mean reward), rewritten in place when the recording stops; it fits in the first 33 bytes;
* byte 33: a varint length and the ``BrainParametersProto`` of the recorded brain;
* then one varint length and ``AgentInfoProto`` per recorded decision;
* after the last record the recorder leaves a raw (undelimited) copy of the meta message, which
  is never parsed: reading stops after ``number_steps`` records.

:func:`load_demonstration` reads a file or every ``.demo`` file of a folder; :func:`make_demo_buffer`
turns consecutive decisions into (observation, action taken) pairs in the update buffer of a
:class:`~mlagents.trainers.buffer.Buffer`; :func:`demo_to_buffer` does both. Every problem with a
path or a file raises a :class:`DemonstrationError` with a one-line message.

Whoever learns from demonstrations (offline BC, PPO's pretraining, the GAIL signal) reads them with
:func:`load_demonstrations_for`, which refuses demonstrations of another brain with
:func:`check_demo_compatible`: every :class:`~mlagents.envs.brain.BrainParameters` field but the name
must be the brain's (:data:`COMPARED_FIELDS`), the rule of the offline BC trainer of v0.9, the
strictest check v0.9 made (its GAIL signal and pretraining checked nothing).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.communicator_objects import AgentInfoProto, BrainParametersProto, DemonstrationMetaProto
from mlagents.envs.exception import UnityException
from mlagents.trainers.buffer import Buffer
from mlagents.trainers.exception import UnityTrainerException

logger = logging.getLogger("mlagents.trainers")

#: The demonstration format version this loader reads (``DemonstrationMetaProto.api_version``).
DEMONSTRATION_API_VERSION = 1
#: Bytes reserved for the delimited meta message; the brain parameters start one byte later.
META_DATA_BYTES = 32
BRAIN_PARAMETERS_OFFSET = META_DATA_BYTES + 1
DEMO_EXTENSION = ".demo"

__all__ = [
    "COMPARED_FIELDS",
    "DemonstrationError",
    "DemonstrationNotFoundError",
    "DemonstrationPathError",
    "DemonstrationFileError",
    "brain_differences",
    "check_demo_compatible",
    "demo_to_buffer",
    "demonstration_brain",
    "load_demonstration",
    "load_demonstrations_for",
    "make_demo_buffer",
    "read_varint",
]


class DemonstrationError(UnityTrainerException):
    """A demonstration path or file cannot be used, or does not fit its brain (the message says
    which and why)."""

    #: Reported under the name of the documented class it refines.
    report_as_parent = True


class DemonstrationNotFoundError(DemonstrationError, FileNotFoundError):
    """The demonstration file or folder does not exist."""

    report_as_parent = True


class DemonstrationPathError(DemonstrationError, ValueError):
    """The path is not a ``.demo`` file, or a folder without ``.demo`` files."""

    report_as_parent = True


class DemonstrationFileError(DemonstrationError, ValueError):
    """The file is empty, truncated, corrupt or of another demonstration format version."""

    report_as_parent = True


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    """The base-128 varint at ``position`` and the position after it.

    :raises IndexError: the data ends inside the varint.
    :raises ValueError: the varint is longer than 10 bytes.
    """
    result = 0
    shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift >= 70:
            raise ValueError("varint longer than 10 bytes")


def _read_delimited(data: bytes, position: int, what: str, path: str) -> tuple[bytes, int]:
    """The bytes of the length-delimited message at ``position`` and the position after it."""
    try:
        size, start = read_varint(data, position)
    except IndexError:
        raise DemonstrationFileError(
            f"The demonstration file {path} is truncated: it ends inside the length of the {what} "
            "(record it again)."
        ) from None
    except ValueError:
        raise DemonstrationFileError(
            f"The demonstration file {path} is corrupt: the length of the {what} is not a valid varint."
        ) from None
    end = start + size
    if end > len(data):
        raise DemonstrationFileError(
            f"The demonstration file {path} is truncated: the {what} needs {size} bytes, "
            f"only {len(data) - start} are left (record it again)."
        )
    return data[start:end], end


def _demo_files(file_path: str) -> list[str]:
    """The ``.demo`` files named by ``file_path`` (a file, or a folder's ``.demo`` entries in listing order)."""
    if os.path.isdir(file_path):
        names = [name for name in os.listdir(file_path) if name.endswith(DEMO_EXTENSION)]
        if not names:
            raise DemonstrationPathError(
                f"There are no '.demo' files in the provided directory {file_path}; "
                "record a demonstration there or name a .demo file."
            )
        return [os.path.join(file_path, name) for name in names]
    if os.path.isfile(file_path):
        if not file_path.endswith(DEMO_EXTENSION):
            raise DemonstrationPathError(
                f"The file {file_path} is not a '.demo' file. Please provide a file with the correct extension."
            )
        return [file_path]
    raise DemonstrationNotFoundError(f"The demonstration file or directory {file_path} does not exist.")


def _parse(
    message: DemonstrationMetaProto | BrainParametersProto | AgentInfoProto, raw: bytes, what: str, path: str
) -> None:
    try:
        message.ParseFromString(raw)
    except DecodeError:
        raise DemonstrationFileError(
            f"The demonstration file {path} is corrupt: its {what} cannot be decoded "
            "(is it a .demo file recorded by ML-Agents?)."
        ) from None


def read_demonstration_file(
    path: str,
) -> tuple[DemonstrationMetaProto, BrainParametersProto, list[AgentInfoProto]]:
    """The meta, brain parameters and recorded AgentInfos of one ``.demo`` file.

    Reads ``number_steps`` records, or every record up to the end of the file when the meta says 0
    steps (a recording that was never closed, or closed with nothing recorded).

    :raises DemonstrationFileError: the file is empty, truncated, corrupt or of another version.
    """
    with open(path, "rb") as stream:
        data = stream.read()
    if not data:
        raise DemonstrationFileError(f"The demonstration file {path} is empty (record it again).")
    meta = DemonstrationMetaProto()
    raw_meta, _ = _read_delimited(data, 0, "demonstration meta data", path)
    _parse(meta, raw_meta, "demonstration meta data", path)
    if meta.api_version != DEMONSTRATION_API_VERSION:
        raise DemonstrationFileError(
            f"The demonstration file {path} has demonstration API version {meta.api_version}; "
            f"this version of ML-Agents reads version {DEMONSTRATION_API_VERSION} (record it again)."
        )
    if len(data) <= BRAIN_PARAMETERS_OFFSET:
        raise DemonstrationFileError(
            f"The demonstration file {path} is truncated: it ends before the brain parameters (record it again)."
        )
    brain = BrainParametersProto()
    raw, position = _read_delimited(data, BRAIN_PARAMETERS_OFFSET, "brain parameters", path)
    _parse(brain, raw, "brain parameters", path)
    expected = meta.number_steps
    infos: list[AgentInfoProto] = []
    while (expected == 0 and position < len(data)) or len(infos) < expected:
        if expected == 0 and data[position:] == raw_meta:
            break  # the raw meta copy a closed recording of zero steps leaves at the end
        if position >= len(data):
            raise DemonstrationFileError(
                f"The demonstration file {path} is truncated: it holds {len(infos)} of the "
                f"{expected} steps its header announces (record it again)."
            )
        raw, position = _read_delimited(data, position, f"step {len(infos) + 1}", path)
        info = AgentInfoProto()
        _parse(info, raw, f"step {len(infos) + 1}", path)
        infos.append(info)
    return meta, brain, infos


def _one_agent_infos(infos: list[AgentInfoProto], brain_params: BrainParameters) -> list[BrainInfo]:
    """One single-agent BrainInfo per record, as ``BrainInfo.from_agent_proto(0, [info], ...)``
    makes them, converted in one pass (memories are zero-padded to the file's longest)."""
    if not infos:
        return []
    whole = BrainInfo.from_agent_proto(0, infos, brain_params)
    assert whole.memories is not None and whole.rewards is not None and whole.agents is not None
    assert whole.local_done is not None and whole.max_reached is not None
    assert whole.previous_vector_actions is not None and whole.action_masks is not None
    has_memories = whole.memories.shape[0] > 0
    rows = []
    for i in range(len(infos)):
        row = slice(i, i + 1)
        rows.append(
            BrainInfo(
                visual_observation=[[camera[i]] for camera in whole.visual_observations],
                vector_observation=whole.vector_observations[row],
                text_observations=whole.text_observations[row],
                memory=whole.memories[row] if has_memories else np.zeros((0, 0)),
                reward=whole.rewards[row],
                agents=whole.agents[row],
                local_done=whole.local_done[row],
                vector_action=whole.previous_vector_actions[row],
                text_action=whole.previous_text_actions[row]
                if whole.previous_text_actions is not None
                else None,
                max_reached=whole.max_reached[row],
                action_mask=whole.action_masks[row],
                custom_observations=whole.custom_observations[row]
                if whole.custom_observations is not None
                else None,
            )
        )
    return rows


def load_demonstration(file_path: str) -> tuple[BrainParameters, list[BrainInfo], int]:
    """Load a ``.demo`` file, or every ``.demo`` file of a folder (in directory-listing order).

    :returns: the brain parameters (of the last file), one single-agent BrainInfo per recorded
        decision (all files in order) and the total number of steps the files' headers announce.
    :raises DemonstrationNotFoundError: (a FileNotFoundError) the path does not exist.
    :raises DemonstrationPathError: (a ValueError) not a .demo file, or a folder without one.
    :raises DemonstrationFileError: (a ValueError) a file cannot be read, is empty, truncated,
        corrupt, of another version, or no file holds any step.
    """
    brain_params: BrainParameters | None = None
    brain_infos: list[BrainInfo] = []
    total_expected = 0
    for path in _demo_files(file_path):
        try:
            meta, brain_proto, infos = read_demonstration_file(path)
            brain_params = BrainParameters.from_proto(brain_proto)
            brain_infos.extend(_one_agent_infos(infos, brain_params))
        except DemonstrationError:
            raise
        except (OSError, ValueError, UnityException) as error:
            raise DemonstrationFileError(
                f"The demonstration file {path} could not be read: {error}"
            ) from None
        total_expected += meta.number_steps
    if brain_params is None or not brain_infos:
        raise DemonstrationFileError(
            f"The demonstration {file_path} holds no recorded steps (was the recording stopped at once?)."
        )
    return brain_params, brain_infos, total_expected


def make_demo_buffer(
    brain_infos: Sequence[BrainInfo], brain_params: BrainParameters, sequence_length: int
) -> Buffer:
    """A Buffer whose update buffer holds the demonstration as (observation, action taken) pairs.

    For each consecutive pair (current, next) of decisions the fields are ``done`` and
    ``rewards`` of next, ``visual_obs{i}`` / ``vector_obs`` of current, ``actions`` = the action
    stored in next (the one taken at current) and ``prev_action`` = the action stored in current.
    Episodes (cut at next's done) are moved to the update buffer in sequences of ``sequence_length``;
    the camera images are kept as compact as the update buffer keeps them (uint8 for colour cameras,
    see :mod:`mlagents.trainers.buffer`).
    """
    demo_buffer = Buffer()
    local = demo_buffer[0]
    has_vector = brain_params.vector_observation_space_size > 0
    for current, following in zip(brain_infos[:-1], brain_infos[1:]):
        # Loaded BrainInfos always carry these fields (one row each).
        assert following.local_done is not None and following.rewards is not None
        assert following.previous_vector_actions is not None and current.previous_vector_actions is not None
        done = following.local_done[0]
        local.last_brain_info = current
        local["done"].append(done)
        local["rewards"].append(following.rewards[0])
        for camera in range(brain_params.number_visual_observations):
            local[f"visual_obs{camera}"].append(current.visual_observations[camera][0])
        if has_vector:
            local["vector_obs"].append(current.vector_observations[0])
        local["actions"].append(following.previous_vector_actions[0])
        local["prev_action"].append(current.previous_vector_actions[0])
        if done:
            demo_buffer.append_update_buffer(0, batch_size=None, training_length=sequence_length)
            demo_buffer.reset_local_buffers()
    demo_buffer.append_update_buffer(0, batch_size=None, training_length=sequence_length)
    return demo_buffer


def demo_to_buffer(file_path: str, sequence_length: int) -> tuple[BrainParameters, Buffer]:
    """Load a demonstration file or folder and return its brain parameters and demo buffer.

    :raises DemonstrationError: see :func:`load_demonstration`.
    """
    brain_params, brain_infos, _ = load_demonstration(file_path)
    return brain_params, make_demo_buffer(brain_infos, brain_params, sequence_length)


def demonstration_brain(demo_path: str) -> BrainParameters:
    """The brain parameters the demonstrations at ``demo_path`` were recorded with (of the last file
    of a folder, as :func:`load_demonstration` returns them).

    :raises DemonstrationError: see :func:`load_demonstration`.
    """
    brain_params, _, _ = load_demonstration(demo_path)
    return brain_params


# ---------------------------------------------------------------------------------------- fitting a brain

#: The BrainParameters fields a demonstration must share with the brain that learns from it.
COMPARED_FIELDS = (
    "vector_observation_space_size",
    "num_stacked_vector_observations",
    "camera_resolutions",
    "vector_action_space_size",
    "vector_action_descriptions",
    "vector_action_space_type",
)


def _normalized(value: Any) -> Any:
    """Lists and tuples alike, whole floats as ints: ``(3,)`` equals ``[3.0]``."""
    if isinstance(value, list | tuple):
        return [_normalized(item) for item in value]
    if isinstance(value, dict):
        return {key: _normalized(item) for key, item in value.items()}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def brain_differences(demo: BrainParameters, brain: BrainParameters) -> list[str]:
    """The :data:`COMPARED_FIELDS` in which ``demo`` and ``brain`` differ, as readable texts."""
    differences = []
    for name in COMPARED_FIELDS:
        demo_value, brain_value = getattr(demo, name), getattr(brain, name)
        if _normalized(demo_value) != _normalized(brain_value):
            differences.append(
                f"{name} is {demo_value!r} in the demonstration but {brain_value!r} in the brain"
            )
    return differences


def check_demo_compatible(demo: BrainParameters, brain: BrainParameters, demo_path: str) -> None:
    """:raises DemonstrationError: the demonstration at ``demo_path``, recorded with ``demo``, has other
    observations or actions than ``brain`` (see :data:`COMPARED_FIELDS`)."""
    differences = brain_differences(demo, brain)
    if differences:
        raise DemonstrationError(
            "The provided demonstration is not compatible with the brain being used for performance "
            f"evaluation: {demo_path} was recorded by brain {demo.brain_name} and its "
            f"{'; '.join(differences)} {brain.brain_name}. Record a demonstration with this brain."
        )


def load_demonstrations_for(
    brain: BrainParameters, demo_path: str, sequence_length: int
) -> tuple[BrainParameters, Buffer]:
    """The demonstrations at ``demo_path`` as a buffer (:func:`demo_to_buffer`), checked to fit
    ``brain`` (:func:`check_demo_compatible`).

    :raises DemonstrationError: no readable demonstration at ``demo_path``, or one recorded with other
        observations or actions.
    """
    demo_brain, buffer = demo_to_buffer(demo_path, sequence_length)
    check_demo_compatible(demo_brain, brain, demo_path)
    return demo_brain, buffer
