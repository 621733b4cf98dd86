"""Buffer semantics of 0.9: fields, padding, sequences, shuffle, mini-batches."""

import io
import random

import numpy as np
import pytest

from mlagents.trainers.buffer import AgentBuffer, AgentBufferField, Buffer, BufferException


def make_field(values, padding_value=0):
    field = AgentBufferField()
    for value in values:
        field.append(np.asarray(value, dtype=np.float32), padding_value=padding_value)
    return field


def test_fields_are_created_on_first_access_and_append_extend_set():
    agent = AgentBuffer()
    assert "x" not in agent
    agent["x"].append(1.0)
    agent["x"].extend(np.array([2.0, 3.0]))
    assert list(agent["x"]) == [1.0, 2.0, 3.0]
    agent["x"].set([7.0])
    assert list(agent["x"]) == [7.0]
    buffer = Buffer()
    buffer["$0-1"]["masks"].append(1.0)
    assert list(buffer.keys()) == ["$0-1"]
    assert len(buffer.update_buffer) == 0


def test_padding_value_is_set_by_last_append():
    field = AgentBufferField()
    field.append(1.0)
    assert field.padding_value == 0
    field.append(2.0, padding_value=1)
    assert field.padding_value == 1


def test_get_batch_plain_and_most_recent():
    field = make_field([[i, i] for i in range(5)])
    np.testing.assert_array_equal(field.get_batch(), np.array([[i, i] for i in range(5)], dtype=np.float32))
    np.testing.assert_array_equal(field.get_batch(batch_size=2), [[3, 3], [4, 4]])
    with pytest.raises(BufferException):
        field.get_batch(batch_size=6)


def test_get_batch_sequences_pad_the_front_with_scaled_last_element():
    # 5 steps in sequences of 3: one padding step in front (zeros), then the 5 real steps.
    field = make_field([[i + 1.0] for i in range(5)])
    batch = field.get_batch(training_length=3)
    np.testing.assert_array_equal(batch.ravel(), [0, 1, 2, 3, 4, 5])
    # padding_value 1 (action masks): the padding is a copy of the LAST element.
    masks = make_field([[1, 0, 1], [0, 1, 1]], padding_value=1)
    batch = masks.get_batch(training_length=4)
    np.testing.assert_array_equal(batch, [[0, 1, 1], [0, 1, 1], [1, 0, 1], [0, 1, 1]])
    # Exact multiple: no padding; training_length 1: never padding.
    field = make_field([[1.0], [2.0], [3.0], [4.0]])
    np.testing.assert_array_equal(field.get_batch(training_length=2).ravel(), [1, 2, 3, 4])
    np.testing.assert_array_equal(field.get_batch(training_length=1).ravel(), [1, 2, 3, 4])
    # Counting sequences from the end.
    np.testing.assert_array_equal(field.get_batch(batch_size=1, training_length=2).ravel(), [3, 4])
    with pytest.raises(BufferException):
        field.get_batch(batch_size=3, training_length=2)


def test_get_batch_overlapping_windows():
    field = make_field([[float(i)] for i in range(4)])
    windows = field.get_batch(training_length=2, sequential=False)
    np.testing.assert_array_equal(windows.ravel(), [0, 1, 1, 2, 2, 3])
    np.testing.assert_array_equal(
        field.get_batch(batch_size=1, training_length=3, sequential=False).ravel(), [1, 2, 3]
    )
    with pytest.raises(BufferException):
        field.get_batch(batch_size=4, training_length=2, sequential=False)


def test_append_update_buffer_pads_each_trajectory_and_checks_lengths():
    buffer = Buffer()
    for step in range(3):
        buffer["a"]["masks"].append(1.0)
        buffer["a"]["obs"].append(np.array([step + 1.0]))
        buffer["a"]["action_mask"].append(np.array([1.0, 0.0]), padding_value=1)
    for step in range(2):
        buffer["b"]["masks"].append(1.0)
        buffer["b"]["obs"].append(np.array([10.0 + step]))
        buffer["b"]["action_mask"].append(np.array([0.0, 1.0]), padding_value=1)
    buffer.append_update_buffer("a", training_length=2)
    buffer.append_update_buffer("b", training_length=2)
    update = buffer.update_buffer
    assert list(np.array(update["masks"])) == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    np.testing.assert_array_equal(np.array(update["obs"]).ravel(), [0, 1, 2, 3, 10, 11])
    np.testing.assert_array_equal(np.array(update["action_mask"])[0], [1.0, 0.0])
    buffer["c"]["x"].append(1.0)
    buffer["c"]["y"].extend([1.0, 2.0])
    with pytest.raises(BufferException, match="where not of same length"):
        buffer.append_update_buffer("c")


def test_append_all_and_resets():
    buffer = Buffer()
    for agent in ("a", "b"):
        buffer[agent]["x"].append(1.0)
        buffer[agent].last_brain_info = object()
    buffer.append_all_agent_batch_to_update_buffer()
    assert len(buffer.update_buffer["x"]) == 2
    buffer.reset_local_buffers()
    assert len(buffer["a"]["x"]) == 0 and buffer["a"].last_brain_info is None
    buffer.reset_update_buffer()
    assert len(buffer.update_buffer["x"]) == 0


def test_shuffle_moves_whole_sequences_consistently():
    random.seed(3)
    agent = AgentBuffer()
    agent["a"].extend(np.arange(12, dtype=np.float32))
    agent["b"].extend(np.arange(12, dtype=np.float32) * 10)
    agent.shuffle(sequence_length=3)
    a = np.array(agent["a"])
    b = np.array(agent["b"])
    np.testing.assert_array_equal(b, a * 10)
    assert sorted(a.tolist()) == list(range(12))
    blocks = a.reshape(4, 3)
    for block in blocks:
        assert block[0] % 3 == 0 and list(block) == [block[0], block[0] + 1, block[0] + 2]
    agent["c"].append(1.0)
    with pytest.raises(BufferException, match="Unable to shuffle if the fields are not of same length"):
        agent.shuffle()


def test_make_and_sample_mini_batch_and_truncate():
    random.seed(0)
    agent = AgentBuffer()
    agent["a"].extend(np.arange(10, dtype=np.float32))
    agent["b"].extend(np.arange(10, dtype=np.float32)[:, None] * np.ones((1, 2)))
    mini = agent.make_mini_batch(2, 5)
    np.testing.assert_array_equal(mini["a"], [2, 3, 4])
    assert mini["b"].shape == (3, 2)
    sample = agent.sample_mini_batch(batch_size=4, sequence_length=2)
    assert sample["a"].shape == (4,)
    starts = sample["a"].reshape(2, 2)
    assert all(row[0] % 2 == 0 and row[1] == row[0] + 1 for row in starts)
    np.testing.assert_array_equal(sample["b"][:, 0], sample["a"])
    buffer = Buffer()
    buffer.update_buffer["a"].extend(np.arange(10, dtype=np.float32))
    buffer.truncate_update_buffer(5, sequence_length=2)
    np.testing.assert_array_equal(np.array(buffer.update_buffer["a"]), [6, 7, 8, 9])


def test_save_and_load_round_trip():
    agent = AgentBuffer()
    agent["a"].extend(np.arange(4, dtype=np.float32))
    agent["b"].extend(np.ones((4, 3), dtype=np.float32))
    stream = io.BytesIO()
    agent.save_to_file(stream)
    stream.seek(0)
    loaded = AgentBuffer()
    loaded.load_from_file(stream)
    np.testing.assert_array_equal(np.array(loaded["a"]), np.arange(4))
    np.testing.assert_array_equal(np.array(loaded["b"]), np.ones((4, 3)))
