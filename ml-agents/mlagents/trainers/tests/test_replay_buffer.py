"""The SAC replay buffer (:class:`ReplayBuffer`) against the update buffer it replaces (real numpy)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from mlagents.trainers.buffer import AgentBuffer, Buffer, BufferException, decode_images
from mlagents.trainers.sac.replay_buffer import ReplayBuffer

IMAGE = (6, 5, 3)


def record(buffer: Buffer, agent: str, seed: int, steps: int, camera: bool = True) -> None:
    """One agent's trajectory as the SAC trainer collects it: float64 observations, camera images as
    k / 255 (float64) whose next image is the following step's image (the same object)."""
    rng = np.random.default_rng(seed)
    images = [rng.integers(0, 256, size=IMAGE) / 255.0 for _ in range(steps + 1)]
    trajectory = buffer[agent]
    for t in range(steps):
        if camera:
            trajectory["visual_obs0"].append(images[t])
            trajectory["next_visual_obs0"].append(images[t + 1])
        trajectory["vector_obs"].append(rng.normal(size=8))
        trajectory["next_vector_in"].append(rng.normal(size=8))
        trajectory["actions"].append(rng.normal(size=2).astype(np.float32))
        trajectory["environment_rewards"].append(float(rng.normal()))
        trajectory["done"].append(t == steps - 1)
        trajectory["masks"].append(1.0)
        trajectory["action_mask"].append(np.ones(3), padding_value=1)


def both(lengths: list[int], sequence_length: int, capacity: int = 10_000, camera: bool = True):
    """The same trajectories moved to an update buffer (old path) and to a replay buffer (staged)."""
    old, staging = Buffer(), Buffer()
    replay = ReplayBuffer(capacity, sequence_length)
    for seed, steps in enumerate(lengths):
        move(old, staging, replay, seed, steps, sequence_length, camera)
    return old, replay, staging


def move(
    old: Buffer, staging: Buffer, replay: ReplayBuffer, seed: int, steps: int, length: int, camera: bool
) -> None:
    for buffer in (old, staging):
        record(buffer, "a", seed, steps, camera)
        buffer.append_update_buffer("a", training_length=length)
        buffer["a"].reset_agent()
    replay.append(staging.update_buffer)
    staging.update_buffer.clear()


def assert_same_batches(old: AgentBuffer, replay: ReplayBuffer, sequence_length: int, seed: int) -> None:
    old_rng, new_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        expected = old.sample_mini_batch(12, sequence_length, old_rng)
        batch = replay.sample_mini_batch(12, sequence_length, new_rng)
        assert list(batch) == list(expected)
        for key, values in expected.items():
            got = decode_images(batch[key])
            assert got.dtype == values.dtype and got.shape == values.shape, key
            np.testing.assert_array_equal(got, values, err_msg=key)


@pytest.mark.parametrize("sequence_length", [1, 3])
def test_same_mini_batches_as_the_update_buffer_before_and_after_truncation(sequence_length: int) -> None:
    lengths = [7, 1, 12, 5, 9, 4]
    old, replay, staging = both(lengths, sequence_length, capacity=40)
    assert len(replay) == len(old.update_buffer["actions"])
    assert_same_batches(old.update_buffer, replay, sequence_length, seed=1)
    for round_ in range(3):  # truncated, then refilled past the ring's end, truncated again
        old.truncate_update_buffer(32, sequence_length)
        replay.truncate(32)
        assert len(replay) == len(old.update_buffer["actions"])
        assert_same_batches(old.update_buffer, replay, sequence_length, seed=2 + round_)
        for seed, steps in enumerate([11, 6, 8], start=10 * (round_ + 1)):
            move(old, staging, replay, seed, steps, sequence_length, camera=True)
        assert_same_batches(old.update_buffer, replay, sequence_length, seed=7 + round_)
    for key in old.update_buffer:
        np.testing.assert_array_equal(decode_images(replay[key]), np.asarray(old.update_buffer[key]))


def test_python_random_draws_as_the_update_buffer() -> None:
    import random

    old, replay, _ = both([5, 8], 1, camera=False)
    random.seed(3)
    expected = old.update_buffer.sample_mini_batch(6)
    random.seed(3)
    batch = replay.sample_mini_batch(6)
    np.testing.assert_array_equal(batch["vector_obs"], expected["vector_obs"])


def test_sequences_never_straddle() -> None:
    length = 4
    replay = ReplayBuffer(50, length)
    sequence = 0
    rng = np.random.default_rng(0)
    for chunk in range(40):
        n_sequences = 1 + chunk % 3
        tags = np.repeat(np.arange(sequence, sequence + n_sequences), length).astype(np.float32)
        replay.append({"tag": tags, "position": np.tile(np.arange(length), n_sequences)})
        sequence += n_sequences
        if len(replay) > 50:
            replay.truncate(int(50 * 0.8) - 2)  # 38: cut to 36, whole sequences
            assert len(replay) == 36
        batch = replay.sample_mini_batch(32, length, rng)
        assert (batch["tag"].reshape(-1, length) == batch["tag"].reshape(-1, length)[:, :1]).all()
        assert (batch["position"].reshape(-1, length) == np.arange(length)).all()
    assert replay.allocated < 2 * 50  # the ring wrapped many times without growing further


def test_capacity_grows_geometrically_and_past_it_by_an_eighth() -> None:
    replay = ReplayBuffer(1000, 1)
    allocations = []
    for _ in range(100):
        replay.append({"x": np.zeros((10, 2), np.float32)})
        allocations.append(replay.allocated)
    assert sorted(set(allocations)) == [10, 20, 40, 80, 160, 320, 640, 1000]
    replay.append({"x": np.zeros((10, 2), np.float32)})  # before the trainer's cut: 1010 steps
    assert replay.allocated == 1010 + 1000 // 8
    replay.truncate(800)
    for _ in range(21):
        replay.append({"x": np.zeros((10, 2), np.float32)})
    assert replay.allocated == 1010 + 1000 // 8  # the ring is reused


def test_capacity_is_whole_sequences_and_a_big_buffer_is_not_allocated_up_front() -> None:
    assert ReplayBuffer(10, 4).capacity == 12
    replay = ReplayBuffer(500_000, 1)
    replay.append({"x": np.zeros((16, 8), np.float32)})
    assert replay.allocated == 16 and replay.nbytes == 16 * 32


def test_bytes_per_step_is_the_rows_bytes() -> None:
    # Vector 8 and continuous 2 (3DBall): 2 * 32 + 8 + 4 + 1 + 4 bytes a step, nothing else.
    _, replay, _ = both([7, 9], 1, camera=False)
    fields = {"vector_obs": 32, "next_vector_in": 32, "actions": 8, "environment_rewards": 4}
    fields.update(done=1, masks=4, action_mask=3 * 4)
    assert {key: replay[key].itemsize * replay[key][0].size for key in replay} == fields
    assert replay.row_bytes == sum(fields.values()) == 93
    assert replay.bytes_per_step() == 93.0
    assert replay.nbytes == replay.allocated * 93


def test_camera_images_are_codes_stored_once_per_step() -> None:
    old, replay, _ = both([7, 9], 1)
    frames = np.prod(IMAGE)  # uint8 codes
    # One frame per step and one more per trajectory (its last next image); two int64 frame numbers.
    assert replay.bytes_per_step() == 93 + 2 * 8 + frames * (16 + 2) / 16
    assert replay["visual_obs0"].dtype == np.uint8
    np.testing.assert_array_equal(
        replay.take(np.arange(16), decode=True)["next_visual_obs0"],
        np.asarray(old.update_buffer["next_visual_obs0"]),
    )
    np.testing.assert_array_equal(replay["next_visual_obs0"][:6], replay["visual_obs0"][1:7])


def test_camera_codes_round_trip_to_the_float_images() -> None:
    _, replay, _ = both([4], 1)
    rng = np.random.default_rng(0)  # the images record() drew
    images = [rng.integers(0, 256, size=IMAGE) / 255.0 for _ in range(5)]
    decoded = replay.take(np.arange(4), decode=True)
    np.testing.assert_array_equal(decoded["visual_obs0"], np.asarray(images[:4], np.float32))
    np.testing.assert_array_equal(decoded["next_visual_obs0"], np.asarray(images[1:], np.float32))


def test_a_less_compact_chunk_recodes_the_frames() -> None:
    replay = ReplayBuffer(100, 1)
    codes = np.arange(2 * 4 * 4 * 3).reshape(2, 4, 4, 3).astype(np.uint8)
    replay.append({"visual_obs0": list(codes)})
    grey = np.full((2, 4, 4, 3), 7, dtype=np.uint16)  # 7 / 765: no uint8 code
    replay.append({"visual_obs0": list(grey)})
    assert replay["visual_obs0"].dtype == np.uint16
    np.testing.assert_array_equal(decode_images(replay["visual_obs0"][:2]), decode_images(codes))
    np.testing.assert_array_equal(decode_images(replay["visual_obs0"][2:]), decode_images(grey))


def test_chunks_must_be_whole_sequences_of_the_same_fields() -> None:
    replay = ReplayBuffer(100, 2)
    with pytest.raises(BufferException):
        replay.append({"x": np.zeros(3)})
    replay.append({"x": np.zeros(2)})
    with pytest.raises(BufferException):
        replay.append({"y": np.zeros(2)})
    with pytest.raises(BufferException):
        replay.append({"x": np.zeros((2, 2))})


def test_save_and_load_round_trip() -> None:
    old, replay, staging = both([7, 1, 12, 5, 9, 4], 3, capacity=40)
    replay.truncate(32)
    move(old, staging, replay, 20, 10, 3, camera=True)  # past the ring's end
    stream = io.BytesIO()
    replay.save(stream)
    loaded = ReplayBuffer(40, 3)
    loaded.load(io.BytesIO(stream.getvalue()))
    assert loaded.keys() == replay.keys() and len(loaded) == len(replay)
    for key in replay:
        assert loaded[key].dtype == replay[key].dtype, key
        np.testing.assert_array_equal(loaded[key], replay[key], err_msg=key)
    assert loaded.bytes_per_step() == replay.bytes_per_step()  # frames still shared
    first = replay.sample_mini_batch(9, 3, np.random.default_rng(4))
    second = loaded.sample_mini_batch(9, 3, np.random.default_rng(4))
    for key in first:
        np.testing.assert_array_equal(first[key], second[key])


def test_loads_a_file_of_the_update_buffer() -> None:
    old, _, _ = both([7, 9], 1)
    stream = io.BytesIO()
    old.update_buffer.save_to_file(stream)  # every field float32, camera images decoded
    replay = ReplayBuffer(100, 1)
    replay.load(io.BytesIO(stream.getvalue()))
    assert replay.keys() == list(old.update_buffer)
    assert replay["visual_obs0"].dtype == np.uint8
    for key, field in old.update_buffer.items():
        np.testing.assert_array_equal(decode_images(replay[key]), np.asarray(field, np.float32), err_msg=key)
    _, more, staging = both([], 1)
    record(staging, "a", 30, 5)
    staging.append_update_buffer("a", training_length=1)
    replay.append(staging.update_buffer)  # new chunks go on (bool "done" into a float32 column)
    assert len(replay) == 21 and replay["done"].dtype == np.float32


def test_clear_frees_the_arrays() -> None:
    _, replay, _ = both([7], 1)
    replay.clear()
    assert len(replay) == 0 and replay.nbytes == 0 and replay.keys() == []
