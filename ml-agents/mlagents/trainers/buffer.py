"""Experience storage of the trainers: :class:`Buffer`, :class:`AgentBuffer`, :class:`AgentBufferField`.

A :class:`Buffer` holds one :class:`AgentBuffer` per agent id (the trajectory being collected) and one
``update_buffer`` (the experience the next policy update learns from). An :class:`AgentBuffer` maps a
field name (``"vector_obs"``, ``"actions"``, ``"masks"``...) to an :class:`AgentBufferField`, a list of
numpy arrays, one per step, created on first access.

Recurrent policies learn from sequences of ``sequence_length`` steps. When a trajectory moves into the
update buffer it is cut into such sequences counted from its *end*; the first, incomplete sequence is
padded at its *front* with copies of ``last element * padding_value`` (so ``masks`` pads with 0,
``action_mask`` with a copy of the last real mask, everything else with zeros).

Camera images (steps with 3 or more dimensions: ``visual_obs{i}``, ``next_visual_obs{i}``) arrive as
float64 in [0, 1] and were stored as float32 (4 bytes a pixel channel). The update buffer keeps them
compact instead (:func:`encode_images`): as the uint8 ``k`` of ``k / 255`` (a colour camera: the
decoded PNG's bytes), or as the uint16 ``s`` of ``s / 765`` (a black-and-white camera: the mean of
the three channels, ``s`` their sum), when every value of the trajectory's images equals, as
float32, the value decoded from its code; otherwise as float32, as before. Every array made of a
field decodes them (``np.asarray(field)``, :meth:`AgentBufferField.take`, :meth:`AgentBuffer.make_mini_batch`),
and so does every network feed made of a mini-batch (:func:`float_images`; the PPO, behavioural
cloning and GAIL mini-batches carry the codes): the same float32 values as before, bit for bit, at a
quarter (colour) or half (black and white) of the memory while stored.

Example::

    buffer = Buffer()
    buffer["$0-1"]["masks"].append(1.0)
    buffer["$0-1"]["action_mask"].append(np.ones(3), padding_value=1)
    buffer.append_update_buffer("$0-1", training_length=4)   # 1 real step + 3 padding steps
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

import numpy as np
import numpy.typing as npt

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
    "decode_images",
    "encode_images",
    "float_images",
    "recode_images",
    "widest_image_form",
]

MiniBatch = dict[str, np.ndarray]
"""Steps taken from an update buffer for one gradient step: field name -> array of the n steps.
Camera images may be the update buffer's codes: :func:`float_images` gives what the networks take."""


StepValue = np.ndarray | np.generic | float
"""One step's value of a field: an array (observations, actions, memories) or a scalar (reward,
done flag, value estimate); ``int`` and ``bool`` are accepted where ``float`` is."""


Columns = dict[str, Sequence[StepValue] | np.ndarray]
"""One step of several agents: field name -> one value per agent (an array of shape (n, ...) or a
sequence of n values), see :meth:`AgentBuffer.append_rows`."""


_IMAGE_CODES: dict[np.dtype[Any], int] = {
    np.dtype(np.uint8): 255,  # colour: k / 255, k = the PNG's byte
    np.dtype(np.uint16): 765,  # black and white: mean of 3 channels = (r + g + b) / 765
}
"""The compact forms of camera images, most compact first: code dtype -> denominator."""

_IMAGE_TABLES: dict[np.dtype[Any], np.ndarray] = {
    # float64 division then float32: BrainInfo's float64 ``k / 255.0`` (or the float64 mean of three
    # such values) made float32, as the update buffer stored images before.
    dtype: (np.arange(levels + 1, dtype=np.float64) / float(levels)).astype(np.float32)
    for dtype, levels in _IMAGE_CODES.items()
}
"""Code dtype -> the float32 value of every code."""

_IMAGE_FORMS: list[np.dtype[Any]] = [*_IMAGE_CODES, np.dtype(np.float32)]
"""The forms of stored images by rank (the argument ``at_least`` of :func:`encode_images`)."""


_BLOCK_VALUES = 1 << 20
"""Values converted at a time by :func:`decode_images` and :func:`encode_images`: numpy turns the
codes it looks up into 8-byte indices, so a whole mini-batch at once would briefly take twice the
memory of its float32 images (170 MB for 1024 steps of an 84x84 colour camera)."""


def _block_steps(array: np.ndarray | Sequence[np.ndarray]) -> int:
    """Steps of ``array`` per block of about :data:`_BLOCK_VALUES` values (at least 1)."""
    return max(1, _BLOCK_VALUES // max(1, int(np.size(array[0])))) if len(array) else 1


def decode_images(array: np.ndarray) -> np.ndarray:
    """The float32 images of a batch stored by :func:`encode_images` (steps, H, W, C); any other
    array as it is (float images, scalars, vectors)."""
    if array.ndim < 4 or array.dtype not in _IMAGE_TABLES:
        return array
    table = _IMAGE_TABLES[array.dtype]
    images = np.empty(array.shape, dtype=np.float32)
    block = _block_steps(array)
    for start in range(0, len(array), block):
        np.take(table, array[start : start + block], out=images[start : start + block])
    return images


def encode_images(images: Sequence[np.ndarray] | np.ndarray, at_least: int = 0) -> np.ndarray:
    """The most compact exact form of camera images of one shape (H, W, C), values in [0, 1].

    :param images: float images, as a sequence or an array (n, H, W, C).
    :param at_least: the rank in :data:`_IMAGE_FORMS` of the first form to try (0: uint8, 1: uint16,
        2: float32), so that a field keeps one form.
    :returns: (n, H, W, C): the uint8 or uint16 codes whose :func:`decode_images` equals every image
        as float32 in every value, or else the images as float32.
    """
    count = len(images)
    shape = (count, *np.shape(images[0])) if count else (0,)
    # By blocks: small temporaries, which the allocator reuses (a whole trajectory's float arrays at
    # once leave the heap fragmented by tens of megabytes).
    steps = _block_steps(images)
    for dtype in _IMAGE_FORMS[at_least:]:
        stored = np.empty(shape, dtype=dtype)
        for start in range(0, count, steps):
            values = np.asarray(images[start : start + steps], dtype=np.float32)
            block = stored[start : start + steps]
            if dtype not in _IMAGE_CODES:  # float32: the images as they are
                block[...] = values
                continue
            levels = _IMAGE_CODES[dtype]
            scaled = np.rint(values * np.float32(levels))
            np.clip(scaled, 0, levels, out=scaled)
            with np.errstate(invalid="ignore"):  # NaN: no code, the comparison below fails
                block[...] = scaled
            if not np.array_equal(np.take(_IMAGE_TABLES[dtype], block), values):
                break
        else:
            return stored
    raise AssertionError("float32 holds any image")  # pragma: no cover - the last form never fails


def _recode_images(batch: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Coded images ``batch`` in the less compact form ``dtype`` (a later code, or float32): the
    same float32 values (``k / 255 == 3k / 765``)."""
    if dtype not in _IMAGE_CODES:
        return decode_images(batch)
    factor = _IMAGE_CODES[dtype] // _IMAGE_CODES[batch.dtype]
    return batch.astype(dtype) * dtype.type(factor)


def widest_image_form(*dtypes: npt.DTypeLike) -> np.dtype[Any]:
    """The least compact of the camera image forms ``dtypes`` (uint8 codes, uint16 codes, float32; any
    other dtype counts as float32): the one form that holds images of each of them exactly."""
    forms = [np.dtype(dtype) for dtype in dtypes]
    ranks = [_IMAGE_FORMS.index(form) if form in _IMAGE_CODES else len(_IMAGE_FORMS) - 1 for form in forms]
    return _IMAGE_FORMS[max(ranks)]


def recode_images(batch: np.ndarray, dtype: npt.DTypeLike) -> np.ndarray:
    """Camera images ``batch`` (n, H, W, C) in the form ``dtype``, no more compact than theirs (see
    :func:`widest_image_form`): the same float32 values; ``batch`` itself when already in that form."""
    form = np.dtype(dtype)
    if batch.dtype == form:
        return batch
    if batch.dtype not in _IMAGE_CODES:  # float images: float32
        return np.asarray(batch, dtype=form)
    return _recode_images(batch, form)


def _is_coded_step(step: StepValue) -> bool:
    """True for one camera image stored as codes."""
    return isinstance(step, np.ndarray) and step.ndim >= 3 and step.dtype in _IMAGE_TABLES


def _form_rank(step: np.ndarray) -> int:
    """The rank in :data:`_IMAGE_FORMS` of a stored image's form (anything but a code: float32's)."""
    return _IMAGE_FORMS.index(step.dtype) if step.dtype in _IMAGE_CODES else len(_IMAGE_FORMS) - 1


def _holds_float_images(field: list[StepValue]) -> bool:
    """True for a trajectory's camera images as BrainInfo gives them: float arrays of 3+ dimensions."""
    first = field[0] if field else None
    return isinstance(first, np.ndarray) and first.ndim >= 3 and first.dtype.kind == "f"


SharedRows = dict[int, tuple[np.ndarray, np.ndarray]]
"""id of a trajectory's image -> (the image, its stored row), during one move to the update buffer."""


def _image_rows(
    field: AgentBufferField,
    training_length: int,
    batch_size: int | None,
    stored: AgentBufferField,
    shared: SharedRows,
) -> list[np.ndarray]:
    """The rows that :meth:`AgentBufferField.get_batch` would give, encoded (:func:`encode_images`)
    to be appended to the update buffer's field ``stored``.

    An image that is the same object as one already encoded in this move (``shared``: the
    observation after step t is the one step t + 1 decided on, ``next_visual_obs`` and
    ``visual_obs``) is stored once, its row shared. Every step of ``stored`` keeps one form: rows
    of a more compact form are recoded, and so is ``stored`` when a new row needs a less compact one.
    """
    padding, start = field.sequence_window(batch_size, training_length)
    steps = [np.asarray(step) for step in field]
    if padding:  # the first sequence is padded at its front
        steps = [steps[-1] * field.padding_value] * padding + steps
    steps = steps[start:]
    ranks = [_form_rank(np.asarray(stored[0]))] if stored else []
    fresh = list({id(step): step for step in steps if id(step) not in shared}.values())
    if fresh:
        codes = encode_images(fresh, ranks[0] if ranks else 0)
        shared.update((id(step), (step, row)) for step, row in zip(fresh, codes))
    rows = [shared[id(step)][1] for step in steps]
    ranks.extend(_form_rank(row) for row in rows)
    if not rows:
        return rows
    form = _IMAGE_FORMS[max(ranks)]
    if stored and _form_rank(np.asarray(stored[0])) < max(ranks):
        stored[:] = list(_recode_images(stored.stored_array(), form))
    return [row if row.dtype == form else _recode_images(row[np.newaxis], form)[0] for row in rows]


def float_images(images: npt.ArrayLike) -> np.ndarray:
    """A mini-batch's camera images (n, H, W, C) as the networks take them: float32, codes decoded
    (:func:`decode_images`), float images converted."""
    return np.asarray(decode_images(np.asarray(images)), dtype=np.float32)


class AgentBufferField(list[StepValue]):
    """The values of one field, one numpy array (or scalar) per step, oldest first.

    The steps are stored as given, except the camera images of an update buffer, stored as codes
    (see the module docstring): an element of such a field is a uint8 or uint16 array, and an array
    made of the field (``np.asarray(field)``, :meth:`take`, :meth:`get_batch`) holds the float32
    images. :meth:`stored_array` keeps the codes.

    :ivar padding_value: multiplier of the last element used to pad incomplete sequences; set by the
        most recent :meth:`append` (0 by default).
    """

    def __init__(self, *args: Iterable[StepValue]) -> None:
        super().__init__(*args)
        self.padding_value: float = 0

    def __str__(self) -> str:
        return str(self.stored_array().shape)

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(field)``: the steps as one array, camera images decoded to float32."""
        if copy is False:
            raise ValueError("an AgentBufferField is a list: an array of it is always a copy")
        if not (self and _is_coded_step(self[0])):
            return np.array(list(self), dtype=dtype)
        images = decode_images(self.stored_array())
        return images if dtype is None else images.astype(dtype)

    def stored_array(self) -> np.ndarray:
        """The steps as one array as they are stored (camera images as their codes, see
        :func:`decode_images`)."""
        return np.array(list(self))

    def take(self, index: slice | np.ndarray, decode: bool = True) -> np.ndarray:
        """The steps at ``index`` (a slice, or an array of positions) as one array; only those steps
        are gathered.

        :param decode: camera images decoded to float32; False keeps them as stored (a mini-batch's
            images stay compact until a network's feed decodes them, see :func:`float_images`).
        """
        steps = (
            self[index] if isinstance(index, slice) else [self[i] for i in np.asarray(index).ravel().tolist()]
        )
        array = np.array(steps)
        return decode_images(array) if decode else array

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
            _, start = self.sequence_window(batch_size, 1)
            return np.array(self) if batch_size is None else np.array(self[start:])
        if len(self) == 0:
            return np.zeros((0,))
        if sequential:
            padding, start = self.sequence_window(batch_size, training_length)
            data = np.array(self)
            if padding:
                front = np.repeat((data[-1] * self.padding_value)[np.newaxis], padding, axis=0)
                data = np.concatenate([front.astype(data.dtype), data], axis=0)
            return data[start:]
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

    def sequence_window(self, batch_size: int | None, training_length: int) -> tuple[int, int]:
        """Which steps :meth:`get_batch` (sequential) takes: the number of padding steps put in front
        of the field so that it divides into sequences of ``training_length``, and the position, in
        the padded steps, of the first of the last ``batch_size`` sequences (all when None).

        :raises BufferException: more sequences were asked for than the field holds.
        """
        leftover = len(self) % training_length
        padding = training_length - leftover if leftover else 0
        n_sequences = (len(self) + padding) // training_length
        wanted = n_sequences if batch_size is None else batch_size
        if wanted > n_sequences:
            if training_length == 1:
                raise BufferException(
                    f"Batch size requested ({batch_size}) is too large: the field holds {len(self)} steps."
                )
            raise BufferException(
                "The batch size and training length requested for get_batch where too large given "
                "the current number of data points."
            )
        return padding, (n_sequences - wanted) * training_length

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
        return {key: field.take(slice(start, end)) for key, field in self.items()}

    def sample_mini_batch(
        self, batch_size: int, sequence_length: int = 1, rng: np.random.Generator | None = None
    ) -> dict[str, np.ndarray]:
        """``batch_size // sequence_length`` random whole sequences (drawn with replacement).

        :param rng: the generator that draws them (Python's ``random`` module when None).
        :returns: field name -> array of ``(batch_size // sequence_length) * sequence_length`` steps.
        """
        num_seq_to_sample = batch_size // sequence_length
        n_sequences = self.num_experiences() // sequence_length
        if rng is None:
            starts = [random.randint(0, n_sequences - 1) * sequence_length for _ in range(num_seq_to_sample)]
        else:
            starts = (rng.integers(0, n_sequences, size=num_seq_to_sample) * sequence_length).tolist()
        index = (np.asarray(starts, dtype=np.int64)[:, None] + np.arange(sequence_length)).ravel()
        return {key: field.take(index) for key, field in self.items()}

    def stored_arrays(self, length: int | None = None) -> dict[str, np.ndarray]:
        """Every field (of ``length`` steps, when given) as one array as stored: camera images as
        their codes, decoded by the feeds of the mini-batches drawn from them (:func:`float_images`)."""
        return {
            key: field.stored_array() for key, field in self.items() if length is None or len(field) == length
        }

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
        shared: SharedRows = {}
        for key in keys:
            field = agent[key]
            stored = self.update_buffer[key]
            if _holds_float_images(field):
                # Camera images: compact, and each image stored once (see the module docstring).
                stored.extend(_image_rows(field, length, batch_size, stored, shared))
                continue
            batch = field.get_batch(batch_size=batch_size, training_length=length)
            if batch.dtype == np.float64:
                # Observations arrive as float64; the networks use float32 and it halves the memory.
                batch = batch.astype(np.float32)
            stored.extend(batch)

    def append_all_agent_batch_to_update_buffer(
        self,
        key_list: Sequence[str] | None = None,
        batch_size: int | None = None,
        training_length: int | None = None,
    ) -> None:
        """:meth:`append_update_buffer` for every agent."""
        for agent_id in list(self.keys()):
            self.append_update_buffer(agent_id, key_list, batch_size, training_length)
