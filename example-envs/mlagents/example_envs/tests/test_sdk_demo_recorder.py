"""The demonstration recorder: its files decoded by a protobuf wire-format reader written here,
and read back by mlagents.trainers.demo_loader."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from mlagents.example_envs.sdk.demo_recorder import DemonstrationRecorder, sanitize_demonstration_name
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.trainers.demo_loader import demo_to_buffer, load_demonstration

# ---------------------------------------------------------------- a protobuf decoder of our own


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, position


def fields(message: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) in order: varints as int, 32-bit and length-delimited as bytes."""
    out: list[tuple[int, int | bytes]] = []
    position = 0
    while position < len(message):
        tag, position = read_varint(message, position)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            value, position = read_varint(message, position)
            out.append((number, value))
        elif wire_type == 5:
            out.append((number, message[position : position + 4]))
            position += 4
        elif wire_type == 2:
            size, position = read_varint(message, position)
            out.append((number, message[position : position + size]))
            position += size
        else:
            raise AssertionError(f"unexpected wire type {wire_type}")
    return out


def field(message: bytes, number: int, default: int | bytes = 0) -> int | bytes:
    found = [value for n, value in fields(message) if n == number]
    return found[-1] if found else default


def floats(raw: int | bytes) -> list[float]:
    assert isinstance(raw, bytes)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def delimited(data: bytes, position: int) -> tuple[bytes, int]:
    size, start = read_varint(data, position)
    return data[start : start + size], start + size


# ---------------------------------------------------------------- recording Basic


def record_basic(folder: Path, name: str = "ExpertBasic", decisions: int = 60) -> tuple[Path, list[int]]:
    """Walk right (to the large goal) with a left step every 4th decision; return the file and actions."""
    env = LocalEnvironment("Basic", seed=0)
    brain = env.brains["BasicLearning"]
    recorder = DemonstrationRecorder(brain, name, str(folder))
    batches = env.reset()
    taken = []
    for t in range(decisions):
        recorder.record(batches["BasicLearning"])
        action = 1 if t % 4 == 3 else 2
        taken.append(action)
        batches = env.step({"BasicLearning": np.array([[action]], dtype=np.float32)})
    recorder.record(batches["BasicLearning"])
    recorder.close()
    env.close()
    return Path(recorder.path), taken


def test_recorded_file_has_the_demo_layout(tmp_path: Path) -> None:
    decisions = 60
    path, taken = record_basic(tmp_path, decisions=decisions)
    assert path.name == "ExpertBasic.demo"
    data = path.read_bytes()

    meta, end = delimited(data, 0)
    assert end <= 33 and data[end:33] == bytes(33 - end)
    assert field(meta, 1) == 1  # api_version
    assert field(meta, 2) == b"ExpertBasic"
    steps, episodes = field(meta, 3), field(meta, 4)
    mean_reward = struct.unpack("<f", field(meta, 5))[0]  # type: ignore[arg-type]

    brain, position = delimited(data, 33)
    assert field(brain, 1) == 20  # vector_observation_size
    assert field(brain, 3) == b"\x03"  # vector_action_size [3], packed
    assert field(brain, 6) == 0  # discrete
    assert field(brain, 7) == b"BasicLearning"
    assert field(brain, 8) == 0  # is_training false

    records = []
    for _ in range(int(steps)):
        record, position = delimited(data, position)
        records.append(record)
    assert data[position:] == meta  # the raw meta copy at the end

    dones = [field(r, 8) for r in records]
    assert episodes == sum(dones) + 1
    assert len(records) == decisions + 1  # the running episode is written at close
    rewards = [struct.unpack("<f", field(r, 7, b"\0\0\0\0"))[0] for r in records]  # type: ignore[arg-type]
    assert mean_reward == pytest.approx(sum(rewards) / episodes, rel=1e-5)
    # The action stored in each record is the one taken at the previous decision.
    stored = [floats(field(r, 4)) for r in records]
    assert [s[0] for s in stored[1 : len(records)]] == [float(a) for a in taken[: len(records) - 1]]
    observations = [floats(field(r, 1)) for r in records]
    assert all(len(o) == 20 and sum(o) == 1.0 for o in observations)


def test_recorded_file_loads_with_demo_loader(tmp_path: Path) -> None:
    path, taken = record_basic(tmp_path)
    brain, infos, expected = load_demonstration(str(path))
    assert brain.brain_name == "BasicLearning" and brain.vector_action_space_size == [3]
    assert expected == len(infos)
    _, buffer = demo_to_buffer(str(path), 1)
    actions = np.asarray(buffer.update_buffer["actions"]).ravel().astype(int).tolist()
    assert actions == taken[: len(actions)]


def test_names_are_sanitized_and_never_overwrite(tmp_path: Path) -> None:
    assert sanitize_demonstration_name("Expert/Food:Collector!") == "ExpertFoodCollec"
    first, _ = record_basic(tmp_path, "My demo", decisions=12)
    second, _ = record_basic(tmp_path, "My demo", decisions=12)
    third, _ = record_basic(tmp_path, "My demo", decisions=12)
    assert [first.name, second.name, third.name] == ["My demo.demo", "My demo_0.demo", "My demo_1.demo"]
    with pytest.raises(ValueError, match="no letters"):
        sanitize_demonstration_name("!!!")


def test_max_steps_and_interleaved_agents(tmp_path: Path) -> None:
    # 3DBall: 12 agents decide together; each agent's episode is written contiguously.
    env = LocalEnvironment("3DBall", seed=1)
    recorder = DemonstrationRecorder(env.brains["3DBallLearning"], "Ball", str(tmp_path), max_steps=300)
    rng = np.random.default_rng(0)
    batches = env.reset()
    while not recorder.full:
        recorder.record(batches["3DBallLearning"])
        k = len(batches["3DBallLearning"].agents)
        batches = env.step({"3DBallLearning": rng.uniform(-1, 1, (k, 2)).astype(np.float32)})
    recorder.close()
    _, infos, expected = load_demonstration(recorder.path)
    assert expected == len(infos) == 300
    ids = [info.agents[0] for info in infos]
    dones = [bool(info.local_done[0]) for info in infos]
    # An agent's steps are contiguous: the agent changes after a done, or once per agent where
    # the episodes still running at close follow each other.
    switches = [t for t in range(1, len(infos)) if ids[t] != ids[t - 1] and not dones[t - 1]]
    assert len(switches) < 12
    assert len({ids[t] for t in switches}) == len(switches)


# ---------------------------------------------------------------- several agents: the meta


def _batch(agents: list[int], rewards: list[float], dones: list[bool]) -> object:
    from mlagents.example_envs.sdk.messages import DecisionBatch

    k = len(agents)
    return DecisionBatch(
        agents=np.asarray(agents, dtype=np.int64),
        vector_observations=np.zeros((k, 20), np.float32),
        visual_observations=[],
        rewards=np.asarray(rewards, np.float32),
        local_done=np.asarray(dones, bool),
        max_reached=np.zeros(k, bool),
        action_masks=None,
        previous_vector_actions=np.zeros((k, 1), np.float32),
    )


def _basic_brain() -> object:
    with LocalEnvironment("Basic", seed=0) as env:
        return env.brains["BasicLearning"]


def _play(recorder: DemonstrationRecorder) -> None:
    """Agent 1's episodes last 2 decisions (reward 1 each), agent 2's 3 decisions (reward 2 each)."""
    for t in range(6):
        recorder.record(_batch([1, 2], [1.0, 2.0], [t % 2 == 1, t % 3 == 2]))  # type: ignore[arg-type]
    recorder.record(_batch([1, 2], [1.0, 2.0], [False, False]))  # type: ignore[arg-type]


@pytest.mark.parametrize("whole", [False, True])
def test_meta_counts_the_episodes_in_the_file_and_their_mean_reward(tmp_path: Path, whole: bool) -> None:
    brain = _basic_brain()
    recorder = DemonstrationRecorder(brain, f"Many{int(whole)}", str(tmp_path), whole_episodes=whole)
    _play(recorder)
    recorder.close()
    meta, _ = delimited(Path(recorder.path).read_bytes(), 0)
    steps, episodes = field(meta, 3), field(meta, 4)
    mean_reward = struct.unpack("<f", field(meta, 5))[0]  # type: ignore[arg-type]
    # Finished: agent 1 three episodes (6 decisions), agent 2 two (6 decisions); then one decision
    # each of unfinished episodes, kept only without whole_episodes.
    if whole:
        assert (steps, episodes) == (12, 5)
        assert mean_reward == pytest.approx((6 * 1.0 + 6 * 2.0) / 5)
    else:
        assert (steps, episodes) == (14, 7)
        assert mean_reward == pytest.approx((7 * 1.0 + 7 * 2.0) / 7)


def test_whole_episodes_stop_once_the_file_holds_max_steps(tmp_path: Path) -> None:
    brain = _basic_brain()
    recorder = DemonstrationRecorder(brain, "Whole", str(tmp_path), max_steps=5, whole_episodes=True)
    _play(recorder)
    assert recorder.full
    recorder.close()
    meta, _ = delimited(Path(recorder.path).read_bytes(), 0)
    # Agent 1's first episode (2), agent 2's (3): 5 decisions, both episodes whole.
    assert (field(meta, 3), field(meta, 4)) == (5, 2)


def test_episode_prefix_keeps_the_start_of_every_episode(tmp_path: Path) -> None:
    brain = _basic_brain()
    recorder = DemonstrationRecorder(brain, "Prefix", str(tmp_path), whole_episodes=True, episode_prefix=2)
    # Agent 1's episodes last 4 decisions (reward 1 each), agent 2's 1 decision (reward 2).
    for t in range(8):
        recorder.record(_batch([1, 2], [1.0, 2.0], [t % 4 == 3, True]))  # type: ignore[arg-type]
    recorder.close()
    brain_parameters, infos, _ = load_demonstration(recorder.path)
    meta, _ = delimited(Path(recorder.path).read_bytes(), 0)
    # Agent 1: the first 2 decisions of its 2 episodes, the second marked as an interrupted end;
    # agent 2: its 8 one-decision episodes, whole.
    assert (field(meta, 3), field(meta, 4)) == (12, 10)
    assert struct.unpack("<f", field(meta, 5))[0] == pytest.approx((4 * 1.0 + 8 * 2.0) / 10)  # type: ignore[arg-type]
    ones = [info for info in infos if info.agents == ["$0-1"]]
    assert [bool(info.local_done[0]) for info in ones] == [False, True, False, True]
    assert [bool(info.max_reached[0]) for info in ones] == [False, True, False, True]
    assert all(
        bool(info.local_done[0]) and not info.max_reached[0] for info in infos if info.agents == ["$0-2"]
    )


def test_episode_prefix_must_not_be_negative(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="episode_prefix is -1"):
        DemonstrationRecorder(_basic_brain(), "Bad", str(tmp_path), episode_prefix=-1)
