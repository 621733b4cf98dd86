"""Experience storage of the trainers: :class:`Buffer`, :class:`AgentBuffer`, :class:`AgentBufferField`.

A :class:`Buffer` holds one :class:`AgentBuffer` per agent id (the trajectory being collected) and one
``update_buffer`` (the experience the next policy update learns from). An :class:`AgentBuffer` maps a
field name (``"vector_obs"``, ``"actions"``, ``"masks"``...) to an :class:`AgentBufferField`, a list of
numpy arrays, one per step, created on first access.

Recurrent policies learn from sequences of ``sequence_length`` steps. When a trajectory moves into the
update buffer it is cut into such sequences counted from its *end*; the first, incomplete sequence is
padded at its *front* with copies of ``last element * padding_value`` (so ``masks`` pads with 0,
``action_mask`` with a copy of the last real mask, everything else with zeros).

Example::

    buffer = Buffer()
    buffer["$0-1"]["masks"].append(1.0)
    buffer["$0-1"]["action_mask"].append(np.ones(3), padding_value=1)
    buffer.append_update_buffer("$0-1", training_length=4)   # 1 real step + 3 padding steps
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import IO

import numpy as np

from mlagents.envs.action_info import ActionInfoOutputs
from mlagents.envs.brain import BrainInfo
from mlagents.trainers.agent_ids import AgentId
from mlagents.trainers.exception import BufferException

__all__ = [
    "AgentBufferField",
    "AgentBuffer",
    "Buffer",
    "BufferException",
    "Columns",
    "MiniBatch",
    "StepValue",
]

MiniBatch = dict[str, np.ndarray]
"""Steps taken from an update buffer for one gradient step: field name -> array of the n steps."""


StepValue = np.ndarray | np.generic | float
"""One step's value of a field: an array (observations, actions, memories) or a scalar (reward,
done flag, value estimate); ``int`` and ``bool`` are accepted where ``float`` is."""


Columns = dict[str, Sequence[StepValue] | np.ndarray]
"""One step of several agents: field name -> one value per agent (an array of shape (n, ...) or a
sequence of n values), see :meth:`AgentBuffer.append_rows`."""


class AgentBufferField(list[StepValue]):
    """The values of one field, one numpy array (or scalar) per step, oldest first.

    :ivar padding_value: multiplier of the last element used to pad incomplete sequences; set by the
        most recent :meth:`append` (0 by default).
    """

    def __init__(self, *args: Iterable[StepValue]) -> None:
        super().__init__(*args)
        self.padding_value: float = 0

    def __str__(self) -> str:
        return str(np.array(self).shape)

    def append(self, element: StepValue, padding_value: float = 0) -> None:
        """Add one step's value and remember ``padding_value`` for later sequence padding."""
        super().append(element)
        self.padding_value = padding_value

    def extend(self, data: Iterable[StepValue]) -> None:
        """Add several steps: every row of ``data`` (an array of shape (n, ...) or a sequence)."""
        super().extend(list(data))

    def set(self, data: Iterable[StepValue]) -> None:
        """Replace the content with the rows of ``data``."""
        self[:] = list(data)

    def get_batch(
        self, batch_size: int | None = None, training_length: int = 1, sequential: bool = True
    ) -> np.ndarray:
        """The stored values as one array.

        :param batch_size: with ``training_length == 1``: the number of most recent steps to return
            (all when None). Otherwise the number of sequences, counted from the end (all when None).
        :param training_length: sequence length; 1 returns plain steps, shape (n, ...).
        :param sequential: True cuts non-overlapping sequences from the end, padding the first one at
            its front (length of the result is a multiple of ``training_length``); False returns
            overlapping windows of ``training_length`` steps ending at each of the last ``batch_size``
            steps (no padding).
        :returns: array of shape (n_steps, ...), sequences concatenated along axis 0.
        :raises BufferException: more steps or sequences were asked for than the field holds.
        """
        if training_length == 1:
            if batch_size is None:
                return np.array(self)
            if batch_size > len(self):
                raise BufferException(
                    f"Batch size requested ({batch_size}) is too large: the field holds {len(self)} steps."
                )
            return np.array(self[len(self) - batch_size :])
        if len(self) == 0:
            return np.zeros((0,))
        leftover = len(self) % training_length
        if sequential:
            max_sequences = len(self) // training_length + (1 if leftover else 0)
            n_sequences = max_sequences if batch_size is None else batch_size
            if n_sequences > max_sequences:
                raise BufferException(
                    "The batch size and training length requested for get_batch where too large given "
                    "the current number of data points."
                )
            data = np.array(self)
            if leftover:
                padding = np.repeat(
                    (data[-1] * self.padding_value)[np.newaxis], training_length - leftover, axis=0
                ).astype(data.dtype)
                data = np.concatenate([padding, data], axis=0)
            return data[len(data) - n_sequences * training_length :]
        available = len(self) - training_length + 1
        n_windows = available if batch_size is None else batch_size
        if available < 1 or n_windows > available:
            raise BufferException(
                "The batch size and training length requested for get_batch where too large given "
                "the current number of data points."
            )
        data = np.array(self)
        windows = [
            data[end - training_length : end] for end in range(len(self) - n_windows + 1, len(self) + 1)
        ]
        return np.concatenate(windows, axis=0)

    def reset_field(self) -> None:
        """Remove every value."""
        self.clear()


class AgentBuffer(dict):
    """Field name -> :class:`AgentBufferField` for one agent's trajectory (or the update buffer).

    :ivar last_brain_info: the BrainInfo in which the agent last decided (set by the trainer).
    :ivar last_take_action_outputs: the policy outputs of that decision.
    """

    def __init__(self) -> None:
        super().__init__()
        self.last_brain_info: BrainInfo | None = None
        self.last_take_action_outputs: ActionInfoOutputs = None

    def __str__(self) -> str:
        return ", ".join(f"'{key}' : {self[key]}" for key in self.keys())

    def __getitem__(self, key: str) -> AgentBufferField:
        if key not in self:
            super().__setitem__(key, AgentBufferField())
        return super().__getitem__(key)

    def reset_agent(self) -> None:
        """Clear every field and forget the last decision."""
        for field in self.values():
            field.reset_field()
        self.last_brain_info = None
        self.last_take_action_outputs = None

    def check_length(self, key_list: Sequence[str]) -> bool:
        """True if all the fields in ``key_list`` exist and have the same length."""
        if len(key_list) < 2:
            return True
        length = None
        for key in key_list:
            if key not in self:
                return False
            if length is not None and length != len(self[key]):
                return False
            length = len(self[key])
        return True

    def num_experiences(self) -> int:
        """Length of the fields (0 when empty); assumes they have equal length."""
        return max((len(field) for field in self.values()), default=0)

    def shuffle(self, sequence_length: int = 1, key_list: Sequence[str] | None = None) -> None:
        """Permute whole sequences (blocks of ``sequence_length`` steps), the same way in every field.

        :raises BufferException: the fields do not have the same length.
        """
        keys = list(self.keys()) if key_list is None else list(key_list)
        if not self.check_length(keys):
            raise BufferException("Unable to shuffle if the fields are not of same length")
        if not keys:
            return
        n_sequences = len(self[keys[0]]) // sequence_length
        order = list(range(n_sequences))
        random.shuffle(order)
        index = (
            np.asarray(order, dtype=np.int64)[:, None] * sequence_length + np.arange(sequence_length)
        ).ravel()
        for key in keys:
            values = self[key]
            values[:] = [values[i] for i in index]

    def make_mini_batch(self, start: int, end: int) -> dict[str, np.ndarray]:
        """Steps ``[start, end)`` of every field, as arrays (field name -> array)."""
        return {key: np.array(field[start:end]) for key, field in self.items()}

    def sample_mini_batch(self, batch_size: int, sequence_length: int = 1) -> dict[str, np.ndarray]:
        """``batch_size // sequence_length`` random whole sequences (drawn with replacement).

        :returns: field name -> array of ``(batch_size // sequence_length) * sequence_length`` steps.
        """
        num_seq_to_sample = batch_size // sequence_length
        n_sequences = self.num_experiences() // sequence_length
        starts = [random.randint(0, n_sequences - 1) * sequence_length for _ in range(num_seq_to_sample)]
        index = (np.asarray(starts, dtype=np.int64)[:, None] + np.arange(sequence_length)).ravel()
        return {key: np.array(field)[index] for key, field in self.items()}

    def truncate(self, max_length: int, sequence_length: int = 1) -> None:
        """Keep only the most recent steps: at most ``max_length``, rounded down to whole sequences."""
        current_length = self.num_experiences()
        if current_length > max_length:
            keep = max_length - (max_length % sequence_length)
            for field in self.values():
                field[:] = field[current_length - keep :]

    def save_to_file(self, file_object: IO[bytes]) -> None:
        """Write every field as a float32 array to ``file_object`` (compressed numpy ``.npz``)."""
        arrays = {str(key): np.asarray(field, dtype=np.float32) for key, field in self.items()}
        # numpy's stub (2.1+) also declares the keyword allow_pickle, so mypy matches ``**arrays``
        # against it; the field names are never "allow_pickle", and numpy>=1.24 has no such keyword.
        np.savez_compressed(file_object, **arrays)  # type: ignore[arg-type]

    def load_from_file(self, file_object: IO[bytes]) -> None:
        """Replace the fields by those saved with :meth:`save_to_file`."""
        with np.load(file_object) as data:
            for key in data.files:
                self[key].set(data[key])


class Buffer(dict):
    """Agent id -> :class:`AgentBuffer` (trajectories being collected) plus the ``update_buffer``."""

    def __init__(self) -> None:
        super().__init__()
        self.update_buffer = AgentBuffer()

    def __str__(self) -> str:
        agents = "\n".join(f"\t{key} :\t{self[key]}" for key in self.keys())
        return f"update buffer :\n\t{self.update_buffer}\nlocal_buffers :\n{agents}"

    def __getitem__(self, key: AgentId) -> AgentBuffer:
        if key not in self:
            super().__setitem__(key, AgentBuffer())
        return super().__getitem__(key)

    def append_rows(
        self,
        agent_ids: Sequence[AgentId],
        columns: Mapping[str, Sequence[StepValue] | np.ndarray],
        padding_values: Mapping[str, float] | None = None,
    ) -> None:
        """Append one step to several trajectories: row j of every column goes to agent ``agent_ids[j]``.

        Same result as ``self[agent_ids[j]][key].append(columns[key][j], padding_values.get(key, 0))``
        for every key and j, with the per-agent lookups done once.

        :param agent_ids: n agent ids, each at most once.
        :param columns: field name -> n values (an array of shape (n, ...) or a sequence).
        :param padding_values: field name -> padding value of its sequences (0 when absent).
        :raises ValueError: a column does not have n values.
        """
        agent_buffers = [self[agent_id] for agent_id in agent_ids]
        padding_values = padding_values or {}
        for key, column in columns.items():
            if len(column) != len(agent_buffers):
                raise ValueError(f"column {key!r} has {len(column)} values for {len(agent_buffers)} agents")
            padding = padding_values.get(key, 0)
            for agent_buffer, value in zip(agent_buffers, column):
                field = agent_buffer.get(key)
                if field is None:
                    field = agent_buffer[key]
                list.append(field, value)
                field.padding_value = padding

    def reset_update_buffer(self) -> None:
        """Clear the update buffer."""
        self.update_buffer.reset_agent()

    def truncate_update_buffer(self, max_length: int, sequence_length: int = 1) -> None:
        """Keep at most the ``max_length`` most recent steps of the update buffer (whole sequences)."""
        self.update_buffer.truncate(max_length, sequence_length)

    def reset_local_buffers(self) -> None:
        """Clear every agent's trajectory."""
        for agent_buffer in self.values():
            agent_buffer.reset_agent()

    def append_update_buffer(
        self,
        agent_id: AgentId,
        key_list: Sequence[str] | None = None,
        batch_size: int | None = None,
        training_length: int | None = None,
    ) -> None:
        """Move (copy) one agent's trajectory to the end of the update buffer, cut into sequences.

        :param agent_id: whose trajectory.
        :param key_list: the fields to copy (all by default).
        :param batch_size: number of sequences to copy (all by default).
        :param training_length: sequence length (1 = no padding).
        :raises BufferException: the fields do not all have the same length.
        """
        agent = self[agent_id]
        keys: list[str] = list(agent.keys()) if key_list is None else list(key_list)
        if not agent.check_length(keys):
            raise BufferException(
                f"The length of the fields {keys} for agent {agent_id} where not of same length"
            )
        length = 1 if training_length is None else training_length
        for key in keys:
            batch = agent[key].get_batch(batch_size=batch_size, training_length=length)
            if batch.dtype == np.float64:
                # Observations arrive as float64; the networks use float32 and it halves the memory.
                batch = batch.astype(np.float32)
            self.update_buffer[key].extend(batch)

    def append_all_agent_batch_to_update_buffer(
        self,
        key_list: Sequence[str] | None = None,
        batch_size: int | None = None,
        training_length: int | None = None,
    ) -> None:
        """:meth:`append_update_buffer` for every agent."""
        for agent_id in list(self.keys()):
            self.append_update_buffer(agent_id, key_list, batch_size, training_length)
