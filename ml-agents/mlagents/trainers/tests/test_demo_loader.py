"""The .demo loader against files encoded here, byte by byte, from the format's description
(protobuf wire format written by hand, without the generated message classes)."""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from google.protobuf.internal.encoder import _VarintBytes
from PIL import Image

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.demo_loader import (
    DemonstrationError,
    DemonstrationFileError,
    DemonstrationNotFoundError,
    DemonstrationPathError,
    brain_differences,
    check_demo_compatible,
    demo_to_buffer,
    load_demonstration,
    load_demonstrations_for,
    make_demo_buffer,
)
from mlagents.trainers.exception import UnityTrainerException

# ---------------------------------------------------------------- a protobuf encoder of the test's own


def varint(value: int) -> bytes:
    """protobuf's own base-128 encoder (the one 0.9 wrote its demo files with), independent of the
    loader's; negative int32s are sign-extended to 64 bits (10 bytes), as on the wire."""
    return _VarintBytes(value & ((1 << 64) - 1))


def key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def int_field(field: int, value: int) -> bytes:
    return key(field, 0) + varint(value) if value else b""


def bytes_field(field: int, value: bytes) -> bytes:
    return key(field, 2) + varint(len(value)) + value


def string_field(field: int, value: str) -> bytes:
    return bytes_field(field, value.encode()) if value else b""


def float_field(field: int, value: float) -> bytes:
    return key(field, 5) + struct.pack("<f", value) if value else b""


def packed_floats(field: int, values: list[float]) -> bytes:
    return bytes_field(field, struct.pack(f"<{len(values)}f", *values)) if values else b""


def packed_varints(field: int, values: list[int]) -> bytes:
    return bytes_field(field, b"".join(varint(v) for v in values)) if values else b""


def meta(name: str, steps: int, episodes: int, mean_reward: float, api_version: int = 1) -> bytes:
    return (
        int_field(1, api_version)
        + string_field(2, name)
        + int_field(3, steps)
        + int_field(4, episodes)
        + float_field(5, mean_reward)
    )


def resolution(width: int, height: int, gray: bool) -> bytes:
    return int_field(1, width) + int_field(2, height) + int_field(3, int(gray))


def brain_parameters(
    name: str,
    obs_size: int,
    stacks: int,
    action_sizes: list[int],
    space_type: int,
    cameras: tuple[tuple[int, int, bool], ...] = (),
    descriptions: tuple[str, ...] = (),
) -> bytes:
    return (
        int_field(1, obs_size)
        + int_field(2, stacks)
        + packed_varints(3, action_sizes)
        + b"".join(bytes_field(4, resolution(*camera)) for camera in cameras)
        + b"".join(bytes_field(5, d.encode()) for d in descriptions)
        + int_field(6, space_type)
        + string_field(7, name)
    )


def agent_info(
    observation: list[float],
    action: list[float],
    reward: float,
    done: bool,
    agent_id: int = 7,
    images: tuple[bytes, ...] = (),
    memories: list[float] | None = None,
    mask: list[bool] | None = None,
) -> bytes:
    return (
        packed_floats(1, observation)
        + b"".join(bytes_field(2, image) for image in images)
        + packed_floats(4, action)
        + packed_floats(6, memories or [])
        + float_field(7, reward)
        + int_field(8, int(done))
        + int_field(10, agent_id)
        + packed_varints(11, [int(m) for m in mask or []])
    )


def delimited(message: bytes) -> bytes:
    return varint(len(message)) + message


def demo_file(meta_message: bytes, brain: bytes, infos: list[bytes], trailing_meta: bool = True) -> bytes:
    """The layout: delimited meta at 0, zero gap, delimited brain at 33, delimited infos, raw meta."""
    head = delimited(meta_message)
    assert len(head) <= 33
    data = head + bytes(33 - len(head)) + delimited(brain) + b"".join(delimited(i) for i in infos)
    return data + (meta_message if trailing_meta else b"")


def png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


# ---------------------------------------------------------------- demonstrations used below

# A discrete brain [3], two episodes: 0 -> 1 -> 2 (done) then 3 -> 4 (done). Observation = [step];
# the action stored in record t is the one taken at record t - 1 (here: step of that record).
DISCRETE_STEPS = [
    ([0.0], [0.0], 0.0, False),
    ([1.0], [2.0], -0.01, False),
    ([2.0], [1.0], 1.0, True),
    ([3.0], [1.0], 0.0, False),
    ([4.0], [2.0], 1.0, True),
]


def write_discrete(path: Path, trailing_meta: bool = True, steps: int | None = None) -> Path:
    infos = [agent_info(o, a, r, d) for o, a, r, d in DISCRETE_STEPS]
    announced = len(infos) if steps is None else steps
    data = demo_file(
        meta("TestDemo", announced, 3, 2.0 / 3.0),
        brain_parameters("Teacher", 1, 1, [3], 0, descriptions=("",)),
        infos,
        trailing_meta,
    )
    path.write_bytes(data)
    return path


def test_loads_hand_encoded_discrete_file(tmp_path: Path) -> None:
    path = write_discrete(tmp_path / "teacher.demo")
    brain, infos, expected = load_demonstration(str(path))
    assert expected == 5
    assert brain.brain_name == "Teacher"
    assert brain.vector_observation_space_size == 1
    assert brain.vector_action_space_size == [3]
    assert brain.vector_action_space_type == "discrete"
    assert len(infos) == 5
    assert [info.vector_observations[0, 0] for info in infos] == [0, 1, 2, 3, 4]
    assert [bool(info.local_done[0]) for info in infos] == [False, False, True, False, True]
    assert infos[1].rewards == pytest.approx([-0.01])
    assert infos[0].agents == ["$0-7"]


def test_buffer_pairs_observation_with_the_action_taken(tmp_path: Path) -> None:
    path = write_discrete(tmp_path / "teacher.demo")
    brain, buffer = demo_to_buffer(str(path), 1)
    update = buffer.update_buffer
    # Four pairs (t, t+1); the pair from the done step into the next episode is kept.
    assert np.asarray(update["vector_obs"]).ravel().tolist() == [0, 1, 2, 3]
    assert np.asarray(update["actions"]).ravel().tolist() == [2, 1, 1, 2]
    assert np.asarray(update["prev_action"]).ravel().tolist() == [0, 2, 1, 1]
    assert [bool(d) for d in update["done"]] == [False, True, False, True]
    assert np.asarray(update["rewards"]).tolist() == pytest.approx([-0.01, 1.0, 0.0, 1.0])
    assert "memory" not in update and "masks" not in update


def test_buffer_pads_episodes_to_the_sequence_length(tmp_path: Path) -> None:
    path = write_discrete(tmp_path / "teacher.demo")
    _, buffer = demo_to_buffer(str(path), 4)
    # Episode 1 holds 2 pairs, episode 2 holds 2 pairs: each padded to one sequence of 4.
    assert len(buffer.update_buffer["actions"]) == 8


def test_without_trailing_meta_and_unclosed_recording(tmp_path: Path) -> None:
    # An aborted recording keeps zero counts: every record up to the end is read.
    path = write_discrete(tmp_path / "aborted.demo", trailing_meta=False, steps=0)
    _, infos, expected = load_demonstration(str(path))
    assert expected == 0 and len(infos) == 5


def test_continuous_with_camera_memories_and_mask_fields(tmp_path: Path) -> None:
    image = np.zeros((4, 6, 3), dtype=np.uint8)
    image[0, 0] = (255, 0, 0)
    infos = [
        agent_info([0.5, -0.5], [0.1, -0.2], 0.0, False, images=(png(image),), memories=[1.0, 2.0]),
        agent_info([0.25, 0.75], [0.3, 0.4], 0.1, True, images=(png(image),), memories=[3.0, 4.0]),
    ]
    data = demo_file(
        meta("Cont", 2, 2, 0.05),
        brain_parameters("Ball", 2, 1, [2], 1, cameras=((6, 4, False),), descriptions=("a", "b")),
        infos,
    )
    path = tmp_path / "cont.demo"
    path.write_bytes(data)
    brain, buffer = demo_to_buffer(str(path), 1)
    assert brain.vector_action_space_type == "continuous"
    assert brain.camera_resolutions == [{"height": 4, "width": 6, "blackAndWhite": False}]
    assert brain.vector_action_descriptions == ["a", "b"]
    update = buffer.update_buffer
    assert np.asarray(update["actions"]).tolist() == [pytest.approx([0.3, 0.4])]
    assert np.asarray(update["vector_obs"]).tolist() == [pytest.approx([0.5, -0.5])]
    visual = np.asarray(update["visual_obs0"])
    assert visual.shape == (1, 4, 6, 3)
    assert visual[0, 0, 0].tolist() == pytest.approx([1.0, 0.0, 0.0])


def test_folder_of_demos_accumulates(tmp_path: Path) -> None:
    write_discrete(tmp_path / "a.demo")
    write_discrete(tmp_path / "b.demo")
    (tmp_path / "notes.txt").write_text("not a demo")
    brain, infos, expected = load_demonstration(str(tmp_path))
    assert expected == 10 and len(infos) == 10 and brain.brain_name == "Teacher"


def test_path_errors(tmp_path: Path) -> None:
    with pytest.raises(DemonstrationNotFoundError, match="does not exist"):
        load_demonstration(str(tmp_path / "missing.demo"))
    with pytest.raises(FileNotFoundError):  # the original's exception type still catches it
        load_demonstration(str(tmp_path / "missing"))
    other = tmp_path / "teacher.txt"
    other.write_text("x")
    with pytest.raises(DemonstrationPathError, match="not a '.demo' file"):
        load_demonstration(str(other))
    empty_folder = tmp_path / "empty"
    empty_folder.mkdir()
    (empty_folder / "readme.txt").write_text("x")
    with pytest.raises(ValueError, match="no '.demo' files"):
        load_demonstration(str(empty_folder))


def broken_message(path: Path) -> str:
    with pytest.raises(DemonstrationFileError) as caught:
        demo_to_buffer(str(path), 1)
    assert isinstance(caught.value, (DemonstrationError, UnityTrainerException, ValueError))
    text = str(caught.value)
    assert "\n" not in text and str(path) in text
    return text


def test_file_errors_are_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.demo"
    empty.write_bytes(b"")
    assert "is empty" in broken_message(empty)

    good = write_discrete(tmp_path / "good.demo").read_bytes()
    cut = tmp_path / "cut.demo"
    cut.write_bytes(good[: len(good) - len(meta("TestDemo", 5, 3, 2.0 / 3.0)) - 3])
    assert "truncated" in broken_message(cut)

    header_only = tmp_path / "header.demo"
    header_only.write_bytes(good[:20])
    assert "truncated" in broken_message(header_only)

    missing_steps = tmp_path / "missing_steps.demo"
    write_discrete(missing_steps, trailing_meta=False, steps=9)
    assert "5 of the 9 steps" in broken_message(missing_steps)

    version = tmp_path / "version.demo"
    version.write_bytes(
        demo_file(
            meta("X", 1, 1, 0.0, api_version=2),
            brain_parameters("B", 1, 1, [3], 0),
            [agent_info([0.0], [0.0], 0, 0)],
        )
    )
    assert "version 2" in broken_message(version)

    garbage = tmp_path / "garbage.demo"
    garbage.write_bytes(b"\x05\xff\xff\xff\xff\xff" + os.urandom(64))
    assert "corrupt" in broken_message(garbage) or "truncated" in broken_message(garbage)

    nothing = tmp_path / "nothing.demo"
    nothing.write_bytes(demo_file(meta("X", 0, 0, 0.0), brain_parameters("B", 1, 1, [3], 0), []))
    assert "no recorded steps" in broken_message(nothing)


def test_make_demo_buffer_of_loaded_infos(tmp_path: Path) -> None:
    brain, infos, _ = load_demonstration(str(write_discrete(tmp_path / "t.demo")))
    buffer = make_demo_buffer(infos[:3], brain, 1)
    assert np.asarray(buffer.update_buffer["actions"]).ravel().tolist() == [2, 1]


# ---------------------------------------------------------------- fitting the brain that learns


def make_brain(name: str, vec: int, actions: tuple[int, ...], space: str = "discrete") -> BrainParameters:
    return BrainParameters(name, vec, 1, [], list(actions), [""] * len(actions), space)


def test_demo_compatibility_names_what_differs() -> None:
    basic = make_brain("BasicLearning", vec=20, actions=(3,))
    ball = make_brain("3DBallLearning", vec=8, actions=(2,), space="continuous")
    # Every field but the name counts; lists and tuples, 3 and 3.0 alike.
    assert brain_differences(make_brain("Other", vec=20, actions=(3,)), basic) == []
    assert brain_differences(BrainParameters("Other", 20, 1, [], (3.0,), ("",), "discrete"), basic) == []
    assert brain_differences(make_brain("Other", vec=20, actions=(3,)), make_brain("B", 10, (3,))) == [
        "vector_observation_space_size is 20 in the demonstration but 10 in the brain"
    ]
    with pytest.raises(UnityTrainerException) as info:
        check_demo_compatible(ball, basic, "demos/Expert3DBall.demo")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "The provided demonstration is not compatible with the brain being used for performance "
        "evaluation: demos/Expert3DBall.demo was recorded by brain 3DBallLearning and its "
    )
    assert "vector_action_space_type is 'continuous' in the demonstration but 'discrete'" in message


def test_demonstrations_are_loaded_for_a_brain_that_fits(tmp_path: Path) -> None:
    path = str(write_discrete(tmp_path / "teacher.demo"))
    demo_brain, buffer = load_demonstrations_for(make_brain("Student", 1, (3,)), path, 1)
    assert demo_brain.brain_name == "Teacher" and len(buffer.update_buffer["actions"]) == 4
    with pytest.raises(DemonstrationError, match="vector_action_space_size is \\[3\\] in the demonstration"):
        load_demonstrations_for(make_brain("Student", 1, (4,)), path, 1)
    with pytest.raises(DemonstrationNotFoundError, match="does not exist"):
        load_demonstrations_for(make_brain("Student", 1, (3,)), str(tmp_path / "none.demo"), 1)
