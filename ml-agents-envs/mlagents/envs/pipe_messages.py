"""The compact form of what a step sends between :class:`SubprocessEnvManager` and its workers.

Pickling a message costs most for what is not plain data: each class or function a pickle refers
to (a NamedTuple, ``BrainInfo``, numpy's array reconstructor, a protobuf message type, a timer
node) is looked up by name on every ``dumps`` and ``loads``, and numpy's own pickling of a small
array costs more than its few floats. A step of a small environment is mostly such overhead, so
its message is built from plain tuples, lists, dicts, strings, numbers and bytes only:

* :func:`encode_all_brain_info` / :func:`decode_all_brain_info`: the new observations (an array as
  its dtype, shape and raw bytes; ``CustomObservation`` messages as their serialized bytes);
* :func:`encode_actions` / :func:`decode_actions`: the decided actions, memories, texts and values;
* :func:`encode_timers` / :func:`decode_timers`: the worker's timers of that step;
* :func:`send_object`: pickles with the standard pickler (``Connection.send`` builds a
  multiprocessing ``ForkingPickler``, copying its dispatch table, on every message).

A decoded BrainInfo equals the original field by field, with arrays of the same dtype and shape
that the receiving process owns (writable). Anything unusual (a BrainInfo subclass or one with
extra attributes, arrays of objects or of a subclass) travels pickled as it is.
"""

import pickle
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import AllBrainInfo, BrainInfo
from mlagents.envs.communicator_objects import CustomObservation
from mlagents.envs.timers import TimerNode
from mlagents.envs.worker_transport import WorkerCommand

__all__ = [
    "STEP",
    "decode_actions",
    "decode_all_brain_info",
    "encode_actions",
    "encode_all_brain_info",
    "encode_timers",
    "decode_timers",
    "send_object",
]

#: Name of the step command and of its answer, as a plain string (compared on every message).
STEP: str = WorkerCommand.STEP.value

# The fields of a BrainInfo, in the order of an encoded one (the attribute names of BrainInfo).
_FIELDS = tuple(vars(BrainInfo([], np.zeros((0, 0)), [])))
_FIELD_SET = frozenset(_FIELDS)


def _encode_values(values: Sequence[Any]) -> tuple[Any, ...]:
    """``(values with arrays and CustomObservation lists set to None, their (index, dtype, shape,
    bytes), their (index, serialized messages))``."""
    plain = list(values)
    arrays: list[tuple[int, str, tuple[int, ...], bytes]] = []
    customs: list[tuple[int, list[bytes]]] = []
    for index, value in enumerate(values):
        kind = type(value)
        if kind is np.ndarray:
            if not value.dtype.hasobject:
                arrays.append((index, value.dtype.str, value.shape, value.tobytes()))
                plain[index] = None
        elif (
            kind is list
            and value
            and type(value[0]) is CustomObservation  # cheap test first: most lists are not
            and all(type(item) is CustomObservation for item in value)
        ):
            customs.append((index, [item.SerializeToString() for item in value]))
            plain[index] = None
    return plain, arrays, customs


def _decode_values(encoded: tuple[Any, ...]) -> list[Any]:
    values, arrays, customs = encoded
    for index, dtype, shape, data in arrays:
        values[index] = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    if customs:
        parse = CustomObservation.FromString
        for index, serialized in customs:
            values[index] = [parse(data) for data in serialized]
    return values  # type: ignore[no-any-return]


def encode_all_brain_info(all_brain_info: AllBrainInfo) -> dict[str, Any]:
    """The compact form of ``all_brain_info`` (brain name -> encoded BrainInfo)."""
    encoded: dict[str, Any] = {}
    for name, info in all_brain_info.items():
        fields = vars(info)
        if type(info) is BrainInfo and fields.keys() == _FIELD_SET:
            encoded[name] = _encode_values([fields[field] for field in _FIELDS])
        else:
            encoded[name] = info  # unusual: pickled as it is
    return encoded


def decode_all_brain_info(encoded: dict[str, Any]) -> AllBrainInfo:
    """The AllBrainInfo that :func:`encode_all_brain_info` encoded."""
    decoded: AllBrainInfo = {}
    for name, value in encoded.items():
        if isinstance(value, BrainInfo):
            decoded[name] = value
            continue
        info = BrainInfo.__new__(BrainInfo)
        vars(info).update(zip(_FIELDS, _decode_values(value)))
        decoded[name] = info
    return decoded


def encode_actions(all_action_info: dict[str, ActionInfo]) -> dict[str, tuple[Any, ...]]:
    """What an environment needs of each brain's decision (action, memory, text, value), compact;
    the policy's other outputs stay in the manager."""
    return {
        name: _encode_values((info.action, info.memory, info.text, info.value))
        for name, info in all_action_info.items()
    }


def decode_actions(encoded: dict[str, Any]) -> dict[str, ActionInfo]:
    """The decisions that :func:`encode_actions` encoded, as ActionInfos without ``outputs``
    (ActionInfos sent as they are pass unchanged)."""
    decoded: dict[str, ActionInfo] = {}
    for name, value in encoded.items():
        if isinstance(value, ActionInfo):
            decoded[name] = value
        else:
            action, memory, text, estimate = _decode_values(value)
            decoded[name] = ActionInfo(action, memory, text, estimate, None)
    return decoded


def encode_timers(node: TimerNode) -> tuple[Any, ...]:
    """The tree of ``node`` as nested ``(total, count, {child name: child})`` tuples."""
    return (node.total, node.count, {name: encode_timers(child) for name, child in node.children.items()})


def decode_timers(encoded: tuple[Any, ...]) -> TimerNode:
    """The tree that :func:`encode_timers` encoded."""
    total, count, children = encoded
    node = TimerNode()
    node.total = total
    node.count = count
    node.children = {name: decode_timers(child) for name, child in children.items()}
    return node


def send_object(conn: Connection, message: Any) -> None:
    """``conn.send(message)`` with the standard pickler (the other side reads with ``conn.recv()``).

    The message must not contain what only multiprocessing's pickler handles (connections, sockets).
    """
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
