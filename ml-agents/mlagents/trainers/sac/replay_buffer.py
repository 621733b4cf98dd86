"""The replay buffer of the SAC trainer: a column store of preallocated numpy arrays (:class:`ReplayBuffer`).

Steps arrive in chunks, one agent's trajectory at a time, as the update buffer holds them
(:meth:`~mlagents.trainers.buffer.Buffer.append_update_buffer`: cut into whole sequences of
``sequence_length`` steps, the first padded at its front, camera images as codes). Each field is
one array of ``allocated`` rows used as a ring: the oldest step at ``start``, the newest
``len(buffer)`` rows later, modulo ``allocated``. Appending writes the chunk's rows after the newest
(O(chunk)); dropping the oldest steps moves ``start`` (O(1) for the step columns); a mini-batch
gathers its rows by fancy indexing (O(mini-batch), whatever the size of the buffer).

Memory: the arrays are allocated at the first chunk, with the dtypes and shapes of its rows, and
grow geometrically (doubling, copying the rows once) up to ``capacity``: ``buffer_size`` rounded up
to whole sequences. The trainer cuts the buffer to its newest 80 % at an update when it holds more
than ``buffer_size`` steps, so between the append that crosses ``buffer_size`` and that update the
buffer holds a few chunks more: the arrays then grow past ``capacity`` to what is needed plus an
eighth of ``capacity``, once in a run in the usual case (the ring is reused after each cut). A
step takes :attr:`ReplayBuffer.row_bytes` in the step columns (the rows' own bytes: float32
observations, the actions and flags as the update buffer stores them, an int64 frame number per
camera field) plus its camera frames (:meth:`ReplayBuffer.bytes_per_step`): 89 bytes for 3DBall
(8 observations, 2 continuous actions), 21,600 for an 84x84 colour camera in trajectories of 64.

Cameras: a camera's images are frames of a pool shared by ``visual_obs{i}`` and
``next_visual_obs{i}`` (a field ``next_X`` shares the pool of ``X``); the two fields hold frame
numbers. An image that is one step's next observation and the following step's observation (the
same array object in the chunk) is one frame, so a step takes about one frame per camera, as in the
update buffer. Frames are stored as the update buffer stores images: the uint8 or uint16 codes of
:func:`~mlagents.trainers.buffer.encode_images`, or float32. A pool keeps one form: a chunk in a less
compact form recodes the pool once (the same float32 values, :func:`~mlagents.trainers.buffer.recode_images`).
Mini-batches hold the codes: every feed made of a mini-batch decodes them
(:func:`~mlagents.trainers.buffer.float_images`).

Example::

    replay = ReplayBuffer(capacity=500_000, sequence_length=1)
    replay.append({"actions": np.zeros((16, 2), np.float32), "done": [False] * 16})
    batch = replay.sample_mini_batch(8, 1, np.random.default_rng(0))   # {"actions": (8, 2), "done": (8,)}
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import numpy as np

from mlagents.trainers.buffer import (
    MiniBatch,
    StepValue,
    decode_images,
    encode_images,
    recode_images,
    widest_image_form,
)
from mlagents.trainers.exception import BufferException

__all__ = ["ReplayBuffer"]

Chunk = Mapping[str, Sequence[StepValue] | np.ndarray]
"""Steps to append: field name -> one row per step (an array (n, ...) or a sequence of n values)."""

FORMAT_KEY = "__replay_buffer__"
"""The entry of a file written by :meth:`ReplayBuffer.save` holding [format version, sequence length];
a file without it was written by :meth:`~mlagents.trainers.buffer.AgentBuffer.save_to_file`."""

FRAMES_PREFIX = "__frames__"
"""Prefix of a camera pool's entry in a file written by :meth:`ReplayBuffer.save`."""

_NEXT = "next_"


def _pool_name(key: str) -> str:
    """The camera pool of field ``key``: ``next_X`` shares the frames of ``X``."""
    return key[len(_NEXT) :] if key.startswith(_NEXT) else key


def _is_image(row: StepValue) -> bool:
    """True for a camera image: an array of 3 or more dimensions (as the update buffer decides)."""
    return np.ndim(row) >= 3


class _Ring:
    """Rows of several arrays of ``allocated`` rows used as one ring: row i (oldest first) of every
    array is at ``(start + i) % allocated``."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.start = 0
        self.length = 0
        self.allocated = 0

    @property
    def nbytes(self) -> int:
        return sum(array.nbytes for array in self.arrays.values())

    @property
    def row_bytes(self) -> int:
        """Bytes of one row of every array."""
        return sum(array.itemsize * int(np.prod(array.shape[1:])) for array in self.arrays.values())

    def positions(self, index: np.ndarray) -> np.ndarray:
        """Where rows ``index`` (0: the oldest) are in the arrays."""
        return (self.start + index) % max(self.allocated, 1)

    def segments(self, first: int = 0) -> list[slice]:
        """The rows from ``first`` to the newest, as at most two slices of the arrays, oldest first."""
        begin = (self.start + first) % max(self.allocated, 1)
        count = self.length - first
        head = min(count, self.allocated - begin)
        parts = [slice(begin, begin + head)]
        if count > head:
            parts.append(slice(0, count - head))
        return parts

    def ordered(self, key: str, first: int = 0) -> np.ndarray:
        """Rows ``first`` to the newest of array ``key``, oldest first (a copy)."""
        array = self.arrays[key]
        return np.concatenate([array[part] for part in self.segments(first)], axis=0)

    def relayout(self, allocated: int, dtypes: Mapping[str, np.dtype[Any]] | None = None) -> None:
        """Move every array to ``allocated`` rows, the oldest row first; ``dtypes``: arrays to convert
        (camera frames: :func:`recode_images`; others: cast)."""
        dtypes = dtypes or {}
        for key, array in self.arrays.items():
            dtype = dtypes.get(key, array.dtype)
            moved = np.empty((allocated, *array.shape[1:]), dtype=dtype)
            offset = 0
            for part in self.segments():
                rows = array[part]
                if dtype != array.dtype:
                    rows = recode_images(rows, dtype) if rows.ndim >= 4 else rows.astype(dtype)
                moved[offset : offset + len(rows)] = rows
                offset += len(rows)
            self.arrays[key] = moved
        self.start, self.allocated = 0, allocated

    def reserve(self, needed: int, limit: int) -> None:
        """Room for ``needed`` rows: doubling up to ``limit``, past it what is needed and an eighth."""
        if needed <= self.allocated:
            return
        if needed <= limit:
            allocated = min(limit, max(needed, 2 * self.allocated))
        else:
            allocated = needed + limit // 8
        self.relayout(allocated)

    def write(self, rows: Mapping[str, np.ndarray]) -> None:
        """Add rows after the newest (room reserved): array name -> (n, ...) rows."""
        count = len(next(iter(rows.values())))
        end = (self.start + self.length) % self.allocated
        head = min(count, self.allocated - end)
        for key, values in rows.items():
            array = self.arrays[key]
            array[end : end + head] = values[:head]
            array[: count - head] = values[head:]
        self.length += count

    def drop_oldest(self, count: int) -> None:
        """Forget the ``count`` oldest rows (their room is reused by the next writes)."""
        self.start = (self.start + count) % self.allocated if self.allocated else 0
        self.length -= count


class _Pool(_Ring):
    """A camera's frames (one array ``"frames"``), numbered from the first ever stored: frame
    ``number`` is row ``number - first`` of the ring."""

    def __init__(self) -> None:
        super().__init__()
        self.first = 0
        self.total = 0

    @property
    def form(self) -> np.dtype[Any]:
        """The dtype of the frames: uint8 or uint16 codes, or float32."""
        return self.arrays["frames"].dtype

    def frames(self, numbers: np.ndarray) -> np.ndarray:
        """The frames numbered ``numbers`` (n,), as one array (n, H, W, C)."""
        return self.arrays["frames"][self.positions(numbers - self.first)]


class ReplayBuffer:
    """The steps of a SAC trainer's replay buffer, oldest first, in preallocated columns (see the
    module docstring).

    :param capacity: the steps the arrays grow to by doubling (``buffer_size``); rounded up to whole
        sequences.
    :param sequence_length: the length of the sequences the chunks are cut into (1: steps).
    """

    def __init__(self, capacity: int, sequence_length: int = 1) -> None:
        if sequence_length < 1:
            raise ValueError(f"sequence_length must be at least 1, not {sequence_length}")
        self.sequence_length = int(sequence_length)
        self.capacity = max(1, -(-int(capacity) // self.sequence_length)) * self.sequence_length
        self._steps = _Ring()
        self._pools: dict[str, _Pool] = {}
        self._keys: list[str] = []
        self._cameras: dict[str, str] = {}  # camera field -> its pool
        self._total_steps = 0  # appended since the buffer was created or cleared

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return self._steps.length

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        """The fields, as :meth:`keys`."""
        return iter(self._keys)

    def keys(self) -> list[str]:
        """The fields, in the order of the first chunk."""
        return list(self._keys)

    def __getitem__(self, key: str) -> np.ndarray:
        """Every stored step of field ``key``, oldest first (a copy; camera images as their codes)."""
        if key not in self._keys:
            raise KeyError(key)
        return self.take(np.arange(len(self)), keys=[key])[key]

    def take(self, index: np.ndarray, decode: bool = False, keys: Sequence[str] | None = None) -> MiniBatch:
        """Steps ``index`` (0: the oldest) of every field (or of ``keys``): field name -> array.

        :param decode: camera images decoded to float32; False keeps the codes (see
            :func:`~mlagents.trainers.buffer.float_images`).
        """
        positions = self._steps.positions(np.asarray(index, dtype=np.int64))
        batch: MiniBatch = {}
        for key in self._keys if keys is None else keys:
            rows = self._steps.arrays[key][positions]
            if key in self._cameras:
                rows = self._pools[self._cameras[key]].frames(rows)
                if decode:
                    rows = decode_images(rows)
            batch[key] = rows
        return batch

    def sample_mini_batch(
        self, batch_size: int, sequence_length: int | None = None, rng: np.random.Generator | None = None
    ) -> MiniBatch:
        """``batch_size // sequence_length`` whole sequences drawn uniformly with replacement, as
        :meth:`~mlagents.trainers.buffer.AgentBuffer.sample_mini_batch` draws them (the same steps for
        the same generator and the same stored steps).

        :param sequence_length: the buffer's when None.
        :param rng: the generator that draws them (Python's ``random`` module when None).
        :returns: field name -> array of ``(batch_size // sequence_length) * sequence_length`` steps,
            camera images as their codes.
        """
        length = self.sequence_length if sequence_length is None else sequence_length
        wanted = batch_size // length
        n_sequences = len(self) // length
        if rng is None:
            starts = np.asarray([random.randint(0, n_sequences - 1) for _ in range(wanted)], dtype=np.int64)
        else:
            starts = rng.integers(0, n_sequences, size=wanted)
        index = (np.asarray(starts, dtype=np.int64)[:, None] * length + np.arange(length)).ravel()
        return self.take(index)

    # ------------------------------------------------------------------ memory

    @property
    def row_bytes(self) -> int:
        """Bytes of one step in the step columns (camera fields: their int64 frame numbers)."""
        return self._steps.row_bytes

    @property
    def nbytes(self) -> int:
        """Bytes of every array allocated (step columns and camera frames, filled or not)."""
        return self._steps.nbytes + sum(pool.nbytes for pool in self._pools.values())

    @property
    def allocated(self) -> int:
        """Steps the step columns have room for."""
        return self._steps.allocated

    def bytes_per_step(self) -> float:
        """Bytes of the stored data per stored step: :attr:`row_bytes` plus the bytes of the camera
        frames held, divided by the steps (about one frame per camera and step); 0 when empty."""
        if not len(self):
            return 0.0
        frames = sum(pool.row_bytes * pool.length for pool in self._pools.values())
        return self.row_bytes + frames / len(self)

    # ------------------------------------------------------------------ writing

    def append(self, chunk: Chunk) -> None:
        """Add a chunk of whole sequences after the newest step, O(chunk).

        Camera rows (arrays of 3+ dimensions) that are the same object are stored as one frame; they
        are codes or float32 images, as the update buffer stores them.

        :param chunk: field name -> n rows (an :class:`~mlagents.trainers.buffer.AgentBuffer` holding
            one trajectory moved by ``append_update_buffer`` is one); n a multiple of the sequence
            length, and the same fields in every chunk.
        :raises BufferException: the fields differ from the stored ones or their lengths differ, or
            n is not a whole number of sequences.
        """
        keys = list(chunk)
        lengths = {len(chunk[key]) for key in keys}
        if len(lengths) > 1:
            raise BufferException(f"The fields {keys} of a chunk do not have the same length")
        count = lengths.pop() if lengths else 0
        if count == 0:
            return
        if count % self.sequence_length:
            raise BufferException(
                f"A chunk of {count} steps is not made of sequences of {self.sequence_length}"
            )
        if not self._keys:
            self._keys = keys
            self._cameras = {key: _pool_name(key) for key in keys if _is_image(chunk[key][0])}
        elif set(keys) != set(self._keys):
            raise BufferException(f"A chunk has the fields {sorted(keys)}, the buffer {sorted(self._keys)}")
        columns = {key: np.asarray(chunk[key]) for key in keys if key not in self._cameras}
        frames: dict[str, np.ndarray] = {}
        numbers: dict[str, np.ndarray] = {}
        for pool_name in dict.fromkeys(self._cameras.values()):
            # A row seen before (the same object: one step's next observation, the following step's
            # observation) is the same frame; every new row stays referenced in ``rows``, so an id
            # found in ``seen`` is that of the very same object.
            rows: list[np.ndarray] = []
            seen: dict[int, int] = {}
            for key in (key for key in keys if self._cameras.get(key) == pool_name):
                refs = []
                for row in chunk[key]:
                    number = seen.get(id(row))
                    if number is None:
                        number = seen[id(row)] = len(rows)
                        rows.append(np.asarray(row))
                    refs.append(number)
                numbers[key] = np.asarray(refs, dtype=np.int64)
            frames[pool_name] = _concat_images([np.stack(group) for group in _same_form_runs(rows)])
        self._store(count, columns, frames, numbers)

    def _store(
        self,
        count: int,
        columns: Mapping[str, np.ndarray],
        frames: Mapping[str, np.ndarray],
        numbers: Mapping[str, np.ndarray],
    ) -> None:
        """Add ``count`` steps: the non-camera ``columns``, each pool's new ``frames`` and, per camera
        field, the ``numbers`` of its frames among the new frames of its pool."""
        rows = dict(columns)
        self._total_steps += count
        for name, new in frames.items():
            pool = self._pools.setdefault(name, _Pool())
            if not pool.arrays:
                pool.arrays["frames"] = np.empty((0, *new.shape[1:]), dtype=new.dtype)
            form = widest_image_form(pool.form, new.dtype)
            if form != pool.form:
                pool.relayout(pool.allocated, {"frames": form})
            pool.total += len(new)
            # The frames grow like the steps: up to the capacity times the frames a step took so far.
            pool.reserve(pool.length + len(new), int(np.ceil(self.capacity * pool.total / self._total_steps)))
            first_new = pool.first + pool.length
            pool.write({"frames": recode_images(new, pool.form)})
            for key, pool_name in self._cameras.items():
                if pool_name == name:
                    rows[key] = numbers[key] + first_new
        steps = self._steps
        casts: dict[str, np.dtype[Any]] = {}
        for key, values in rows.items():
            array = steps.arrays.get(key)
            if array is None:
                steps.arrays[key] = np.empty((0, *values.shape[1:]), dtype=values.dtype)
            elif array.shape[1:] != values.shape[1:]:
                raise BufferException(
                    f"Field {key!r}: rows of shape {values.shape[1:]}, stored {array.shape[1:]}"
                )
            elif not np.can_cast(values.dtype, array.dtype):
                casts[key] = np.result_type(array.dtype, values.dtype)
        if casts:
            steps.relayout(steps.allocated, casts)
        steps.reserve(steps.length + count, self.capacity)
        steps.write({key: values.astype(steps.arrays[key].dtype, copy=False) for key, values in rows.items()})

    def truncate(self, max_length: int) -> None:
        """Keep only the newest steps: at most ``max_length``, rounded down to whole sequences (the
        frames no kept step uses are dropped too)."""
        if len(self) <= max_length:
            return
        keep = max_length - max_length % self.sequence_length
        self._steps.drop_oldest(len(self) - keep)
        for name, pool in self._pools.items():
            used = [
                int(self._steps.arrays[key][part].min())
                for key, pool_name in self._cameras.items()
                if pool_name == name and keep
                for part in self._steps.segments()
            ]
            first = min(used) if used else pool.first + pool.length
            pool.drop_oldest(first - pool.first)
            pool.first = first

    def clear(self) -> None:
        """Remove every step and free the arrays."""
        self._steps = _Ring()
        self._pools = {}
        self._keys = []
        self._cameras = {}
        self._total_steps = 0

    # ------------------------------------------------------------------ file

    def save(self, file_object: IO[bytes]) -> None:
        """Write the stored steps (not the empty rows) as a compressed numpy archive (``.npz``): each
        non-camera field as it is stored, each camera field as the numbers of its frames in its
        pool's entry ``__frames__<pool>`` (codes), and ``__replay_buffer__`` ([1, sequence length])."""
        arrays: dict[str, np.ndarray] = {FORMAT_KEY: np.asarray([1, self.sequence_length], dtype=np.int64)}
        for key in self._keys:
            rows = self._steps.ordered(key)
            if key in self._cameras:
                rows = rows - self._pools[self._cameras[key]].first
            arrays[key] = rows
        for name, pool in self._pools.items():
            arrays[FRAMES_PREFIX + name] = pool.ordered("frames")
        # numpy's stub (2.1+) also declares the keyword allow_pickle, so mypy matches ``**arrays``
        # against it; the field names are never "allow_pickle".
        np.savez_compressed(file_object, **arrays)  # type: ignore[arg-type]

    def load(self, file_object: IO[bytes]) -> None:
        """Replace the steps by those of a file written by :meth:`save`, or by
        :meth:`~mlagents.trainers.buffer.AgentBuffer.save_to_file` (every field a float32 array,
        camera images decoded: stored again as codes, :func:`~mlagents.trainers.buffer.encode_images`).

        :raises ValueError: the file is not a numpy archive.
        """
        with np.load(file_object) as data:
            contents = {key: data[key] for key in data.files}
        self.clear()
        frames: dict[str, np.ndarray] = {}
        if FORMAT_KEY in contents:
            del contents[FORMAT_KEY]
            for key in [key for key in contents if key.startswith(FRAMES_PREFIX)]:
                frames[key[len(FRAMES_PREFIX) :]] = contents.pop(key)
            self._cameras = {key: _pool_name(key) for key in contents if _pool_name(key) in frames}
        else:
            # Decoded images, one array per field: each field's codes are frames of its own.
            self._cameras = {key: _pool_name(key) for key, rows in contents.items() if rows.ndim >= 4}
            blocks: dict[str, list[np.ndarray]] = {}
            for key, pool_name in self._cameras.items():
                offset = sum(len(block) for block in blocks.get(pool_name, []))
                blocks.setdefault(pool_name, []).append(encode_images(contents[key]))
                contents[key] = np.arange(offset, offset + len(contents[key]), dtype=np.int64)
            frames = {name: _concat_images(parts) for name, parts in blocks.items()}
        self._keys = list(contents)
        count = max((len(rows) for rows in contents.values()), default=0)
        if count:
            columns = {key: rows for key, rows in contents.items() if key not in self._cameras}
            self._store(count, columns, frames, {key: contents[key] for key in self._cameras})


def _same_form_runs(rows: Sequence[np.ndarray]) -> list[list[np.ndarray]]:
    """``rows`` cut into runs of one dtype (one run in the usual case)."""
    runs: list[list[np.ndarray]] = []
    for row in rows:
        if runs and runs[-1][0].dtype == row.dtype:
            runs[-1].append(row)
        else:
            runs.append([row])
    return runs


def _concat_images(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """Blocks of images (n_i, H, W, C), perhaps in different forms, as one array in the least
    compact of their forms (:func:`~mlagents.trainers.buffer.widest_image_form`)."""
    if len(blocks) == 1:
        return blocks[0]
    form = widest_image_form(*(block.dtype for block in blocks))
    return np.concatenate([recode_images(block, form) for block in blocks], axis=0)
