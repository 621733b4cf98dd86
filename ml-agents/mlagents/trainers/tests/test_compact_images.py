"""Camera images in the update buffer: stored compact (uint8, or uint16 for black and white), fed to
the networks as the same float32 values, bit for bit, as when the buffer stored float32."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.communicator_objects import (
    AgentInfoProto,
    BrainParametersProto,
    DemonstrationMetaProto,
    ResolutionProto,
)
from mlagents.example_envs.sdk.png import encode_png
from mlagents.trainers import buffer as buffer_module
from mlagents.trainers.bc.offline_trainer import OfflineBCTrainer
from mlagents.trainers.buffer import AgentBufferField, Buffer, decode_images, encode_images, float_images
from mlagents.trainers.demo_loader import demo_to_buffer
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.ppo.trainer import PPOTrainer
from mlagents.trainers.tests.demo_files import write_demo_file
from mlagents.trainers.tests.policy_helpers import small_ppo_params
from mlagents.trainers.tests.tiny_envs import GoalExpert, TinyEnvironment, VisualGoal


def wire_image(pixels: np.ndarray, gray: bool) -> np.ndarray:
    """An RGB uint8 image as the envs API hands it over: PNG on the wire (encoded as the example
    builds encode it), decoded by BrainInfo."""
    return BrainInfo.process_pixels(encode_png(pixels), gray)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def float_path(images: Any, at_least: int = 0) -> np.ndarray:
    """What the update buffer stored before: the images as float32."""
    return np.asarray(images, dtype=np.float32)


# ---------------------------------------------------------------------------------------- the codes


def test_every_code_decodes_to_the_float32_of_the_wire_image() -> None:
    every_byte = np.arange(256 * 3, dtype=np.int64).reshape(16, 16, 3) % 256
    colour = wire_image(every_byte.astype(np.uint8), gray=False)  # float64 k / 255
    codes = encode_images([colour])
    assert codes.dtype == np.uint8
    assert same_bits(decode_images(codes), colour[np.newaxis].astype(np.float32))
    # The table is today's formula: float64 k / 255.0, then float32.
    k = np.arange(256)
    assert same_bits(
        decode_images(k.astype(np.uint8).reshape(1, 16, 16, 1)).ravel(), (k / 255.0).astype(np.float32)
    )

    # Black and white: the mean of the three channels, (r + g + b) / 765 as uint16.
    rng = np.random.default_rng(0)
    gray = wire_image(rng.integers(0, 256, size=(32, 32, 3)).astype(np.uint8), gray=True)
    codes = encode_images([gray])
    assert codes.dtype == np.uint16
    assert same_bits(decode_images(codes), gray[np.newaxis].astype(np.float32))

    # A colour code recoded for a black-and-white field keeps its value: k / 255 == 3k / 765.
    as_uint16 = buffer_module._recode_images(k.astype(np.uint8).reshape(1, 16, 16, 1), np.dtype(np.uint16))
    assert same_bits(decode_images(as_uint16).ravel(), (k / 255.0).astype(np.float32))


@pytest.mark.parametrize(
    "images",
    [
        np.random.default_rng(1).random((3, 4, 5, 3)),  # not multiples of 1/255
        np.full((2, 4, 5, 1), np.nan),
        np.full((2, 4, 5, 3), 1.5),
        np.full((2, 4, 5, 3), -1.0 / 255.0),
    ],
)
def test_images_without_an_exact_code_stay_float32(images: np.ndarray) -> None:
    stored = encode_images(images)
    assert same_bits(stored, images.astype(np.float32))
    assert same_bits(decode_images(stored), images.astype(np.float32))


def test_float_images_decodes_codes_and_converts_floats() -> None:
    images = np.arange(2 * 4 * 4 * 3).reshape(2, 4, 4, 3) % 256 / 255.0
    assert same_bits(float_images(encode_images(images)), images.astype(np.float32))
    assert same_bits(float_images(list(images)), images.astype(np.float32))


# ---------------------------------------------------------------------------------------- the buffer


def trajectory(images: list[np.ndarray]) -> Buffer:
    """A buffer whose agent 0 holds the steps of ``images`` as the trainer appends them: the image
    the step decided on and the next one (the same objects as the following step's)."""
    buffer = Buffer()
    for current, following in zip(images, images[1:]):
        buffer[0]["visual_obs0"].append(current)
        buffer[0]["next_visual_obs0"].append(following)
        buffer[0]["masks"].append(1.0)
    return buffer


def camera_images(n: int, gray: bool, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [wire_image(rng.integers(0, 256, size=(12, 10, 3)).astype(np.uint8), gray) for _ in range(n)]


@pytest.mark.parametrize(("gray", "code", "ratio"), [(False, np.uint8, 4), (True, np.uint16, 2)])
def test_update_buffer_stores_wire_images_compact_and_once(gray: bool, code: type, ratio: int) -> None:
    images = camera_images(9, gray)
    buffer = trajectory(images)
    buffer.append_update_buffer(0)
    update = buffer.update_buffer
    for key, expected in (("visual_obs0", images[:-1]), ("next_visual_obs0", images[1:])):
        field = update[key]
        assert all(step.dtype == code for step in field)
        # What every reader of the field gets: today's float32, bit for bit.
        assert same_bits(np.asarray(field), np.asarray(expected, dtype=np.float32))
        assert same_bits(field.take(np.array([4, 1])), np.asarray(expected, dtype=np.float32)[[4, 1]])
        assert sum(step.nbytes for step in field) * ratio == np.asarray(field).nbytes
    # The image after step t is the one step t + 1 decided on: stored once.
    assert all(update["next_visual_obs0"][t] is update["visual_obs0"][t + 1] for t in range(7))


def test_sequences_are_padded_as_get_batch_pads_them() -> None:
    images = camera_images(6, gray=False)
    buffer = trajectory(images)
    expected = buffer[0]["visual_obs0"].get_batch(training_length=4).astype(np.float32)
    buffer.append_update_buffer(0, training_length=4)
    field = buffer.update_buffer["visual_obs0"]
    assert len(field) == 8 and field[0].dtype == np.uint8
    assert same_bits(np.asarray(field), expected)


def test_a_field_keeps_one_form_when_a_trajectory_needs_a_less_compact_one() -> None:
    rng = np.random.default_rng(3)
    equal_channels = [
        wire_image(np.repeat(rng.integers(0, 256, (12, 10, 1)), 3, axis=2).astype(np.uint8), True)
    ]
    uint8_able = equal_channels * 3  # gray images whose channels agree: k / 255
    uint16_needing = camera_images(3, gray=True, seed=4)
    not_exact = [rng.random((12, 10, 1)) for _ in range(3)]
    buffer = Buffer()
    seen: list[np.ndarray] = []
    for images, form in ((uint8_able, np.uint8), (uint16_needing, np.uint16), (not_exact, np.float32)):
        for image in images:
            buffer[0]["visual_obs0"].append(image)
        buffer.append_update_buffer(0)
        buffer.reset_local_buffers()
        seen.extend(images)
        field = buffer.update_buffer["visual_obs0"]
        assert {step.dtype for step in field} == {np.dtype(form)}
        assert same_bits(np.asarray(field), np.asarray(seen, dtype=np.float32))


def test_mini_batches_save_and_load_decode_the_codes(tmp_path: Path) -> None:
    images = camera_images(7, gray=False)
    buffer = trajectory(images)
    buffer.append_update_buffer(0)
    update = buffer.update_buffer
    expected = np.asarray(images[:-1], dtype=np.float32)
    assert same_bits(update.make_mini_batch(1, 4)["visual_obs0"], expected[1:4])
    assert update.sample_mini_batch(4)["visual_obs0"].dtype == np.float32
    assert update.stored_arrays()["visual_obs0"].dtype == np.uint8
    with open(tmp_path / "buffer.npz", "wb") as file:
        update.save_to_file(file)
    loaded = Buffer().update_buffer
    with open(tmp_path / "buffer.npz", "rb") as file:
        loaded.load_from_file(file)
    assert same_bits(np.asarray(loaded["visual_obs0"]), expected)
    assert str(update["visual_obs0"]) == str((6, 12, 10, 3))


def test_array_of_a_field_of_scalars_is_unchanged() -> None:
    field = AgentBufferField([1, 2.5, True])
    assert same_bits(np.asarray(field), np.array([1, 2.5, True]))
    assert same_bits(np.asarray(field, dtype=np.float32), np.array([1, 2.5, True], dtype=np.float32))
    assert np.asarray(AgentBufferField()).shape == (0,)


# ---------------------------------------------------------------------------------------- training


def write_camera_demo(path: Path, episodes: int = 4, seed: int = 0) -> Path:
    """A demonstration of the goal expert on VisualGoal, its camera on the wire as PNG with noise in
    the colour channels, so that the black-and-white images need uint16 codes."""
    task = VisualGoal(n_agents=1, seed=seed)
    env = TinyEnvironment([task])
    name = task.brain.brain_name
    rng = np.random.default_rng(seed)
    info = env.reset()[name]
    records = []
    finished = 0
    while finished < episodes:
        decision = GoalExpert()(task)
        image = np.asarray(info.visual_observations[0][0])
        pixels = (image * 199).astype(np.uint8) + rng.integers(0, 56, size=(20, 20, 3)).astype(np.uint8)
        records.append(
            AgentInfoProto(
                stacked_vector_observation=[float(x) for x in np.asarray(info.vector_observations).ravel()],
                stored_vector_actions=[float(x) for x in np.asarray(info.previous_vector_actions).ravel()],
                reward=float(info.rewards[0]),
                done=bool(info.local_done[0]),
                max_step_reached=bool(info.max_reached[0]),
                visual_observations=[encode_png(pixels)],
                action_mask=[False] * 3,
                id=0,
            )
        )
        finished += int(info.local_done[0])
        info = env.step({name: decision})[name]
    brain = task.brain
    write_demo_file(
        path,
        DemonstrationMetaProto(
            api_version=1,
            demonstration_name=name,
            number_steps=len(records),
            number_episodes=episodes,
            mean_reward=1.0,
        ),
        BrainParametersProto(
            vector_observation_size=brain.vector_observation_space_size,
            num_stacked_vector_observations=1,
            vector_action_size=list(brain.vector_action_space_size),
            vector_action_descriptions=list(brain.vector_action_descriptions),
            vector_action_space_type=0,
            camera_resolutions=[ResolutionProto(width=20, height=20, gray_scale=True)],
            brain_name=name,
            is_training=False,
        ),
        records,
    )
    return path


@pytest.fixture
def network_inputs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, np.ndarray]]]:
    """Every input of every TensorFlow function called (name, a copy of the float32/int array)."""
    inputs: list[tuple[str, np.ndarray]] = []
    original = FixedSignatureFunction._to_tensor

    def recording(value: Any, check: Any) -> Any:
        inputs.append((check[0], np.array(value, dtype=check[2])))
        return original(value, check)

    monkeypatch.setattr(FixedSignatureFunction, "_to_tensor", staticmethod(recording))
    yield inputs


def assert_same_inputs(compact: list[tuple[str, np.ndarray]], floats: list[tuple[str, np.ndarray]]) -> None:
    assert len(compact) == len(floats) > 0
    for (name, value), (float_name, float_value) in zip(compact, floats):
        assert name == float_name
        assert same_bits(value, float_value), name


def train_to_the_first_update(folder: Path, demo: Path, brain: BrainParameters) -> PPOTrainer:
    params = small_ppo_params(
        folder,
        batch_size=16,
        buffer_size=48,
        time_horizon=8,
        reward_signals={
            "extrinsic": {"strength": 1.0, "gamma": 0.99},
            "curiosity": {"strength": 0.1, "gamma": 0.9, "encoding_size": 8},
            "gail": {"strength": 0.1, "gamma": 0.9, "demo_path": str(demo), "encoding_size": 8},
        },
        pretraining={"demo_path": str(demo), "strength": 0.5, "steps": 0},
    )
    trainer = PPOTrainer(brain, 1, params, True, False, 3, "run")
    env = TinyEnvironment([VisualGoal(n_agents=8, seed=3)])
    name = brain.brain_name
    info = env.reset()[name]
    while not trainer.is_ready_update():
        action = trainer.policy.get_action(info)
        following = env.step({name: action.action})[name]
        trainer.add_experiences({name: info}, {name: following}, action.outputs)
        trainer.process_experiences({name: info}, {name: following})
        trainer.increment_step(1)
        info = following
    return trainer


def test_ppo_feeds_the_networks_the_float32_path_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network_inputs: list[tuple[str, np.ndarray]]
) -> None:
    """VisualGoal's camera (uint8 codes) and a demonstration's (uint16 codes) through PPO, curiosity,
    GAIL and pretraining: every input of every network, from the first decision to the end of the
    first update, is the one the float32 buffer gave."""
    demo = write_camera_demo(tmp_path / "camera.demo")
    brain = VisualGoal(n_agents=8).brain
    compact = train_to_the_first_update(tmp_path / "compact", demo, brain)
    update = compact.training_buffer.update_buffer
    assert {step.dtype for step in update["visual_obs0"]} == {np.dtype(np.uint8)}
    assert sum(step.nbytes for step in update["visual_obs0"]) * 4 == np.asarray(update["visual_obs0"]).nbytes
    assert compact.policy.reward_signals["gail"].demonstration_buffer["visual_obs0"].dtype == np.uint16
    compact.update_policy()
    compact_inputs = list(network_inputs)
    network_inputs.clear()

    monkeypatch.setattr(buffer_module, "encode_images", float_path)
    floats = train_to_the_first_update(tmp_path / "floats", demo, brain)
    assert {step.dtype for step in floats.training_buffer.update_buffer["visual_obs0"]} == {
        np.dtype(np.float32)
    }
    floats.update_policy()
    assert_same_inputs(compact_inputs, network_inputs)
    assert any(name == "visual_observation_0" and len(value) == 16 for name, value in compact_inputs)


def test_offline_bc_feeds_the_networks_the_float32_path_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network_inputs: list[tuple[str, np.ndarray]]
) -> None:
    demo = write_camera_demo(tmp_path / "camera.demo")
    brain = VisualGoal(n_agents=1).brain
    params = {
        "trainer": "offline_bc",
        "demo_path": str(demo),
        "batch_size": 8,
        "batches_per_epoch": 3,
        "hidden_units": 8,
        "learning_rate": 1e-2,
        "max_steps": 100,
        "memory_size": 8,
        "num_layers": 1,
        "sequence_length": 2,
        "summary_freq": 100,
        "use_recurrent": False,
        "summary_path": str(tmp_path / "summaries"),
        "model_path": str(tmp_path / "models"),
    }
    runs = []
    for encode in (encode_images, float_path):
        monkeypatch.setattr(buffer_module, "encode_images", encode)
        trainer = OfflineBCTrainer(brain, params, True, False, 0, "run")
        stored = trainer.demonstration_buffer.update_buffer["visual_obs0"][0].dtype
        assert stored == (np.uint16 if encode is encode_images else np.float32)
        network_inputs.clear()
        trainer.update_policy()
        runs.append(list(network_inputs))
    assert_same_inputs(*runs)


def test_demonstrations_load_compact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = write_camera_demo(tmp_path / "camera.demo")
    _, compact = demo_to_buffer(str(demo), 1)
    monkeypatch.setattr(buffer_module, "encode_images", float_path)
    _, floats = demo_to_buffer(str(demo), 1)
    field, float_field = compact.update_buffer["visual_obs0"], floats.update_buffer["visual_obs0"]
    assert field[0].dtype == np.uint16 and float_field[0].dtype == np.float32
    assert same_bits(np.asarray(field), np.asarray(float_field))
    assert sum(step.nbytes for step in field) * 2 == sum(step.nbytes for step in float_field)
