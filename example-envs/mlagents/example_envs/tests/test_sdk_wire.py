"""The Basic build over real gRPC, against a minimal Python-side server written here with the
generated servicer; the launcher (symlink, interpreter discovery, clear error) and the fault
flags of the builds."""

from __future__ import annotations

import io
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from google.protobuf.message import DecodeError

from mlagents.envs.communicator_objects import (
    AgentInfoProto,
    Header,
    UnityInput,
    UnityMessage,
    UnityOutput,
    UnityRLInput,
    UnityRLOutput,
)
from mlagents.example_envs.sdk.client import ClientOptions, run_client
from mlagents.example_envs.sdk.messages import AcademyOutput, DecisionBatch
from mlagents.example_envs.sdk.png import decode_png, encode_png
from mlagents.example_envs.sdk.scene import AgentGroup, BrainSpec, CameraResolution, Scene, SceneSpec
from mlagents.example_envs.sdk.wire import agent_info_protos, input_from_message, output_message_bytes
from mlagents.example_envs.tests.mini_python import TIMEOUT, MiniPython

BUILDS = Path(__file__).resolve().parents[3] / "builds"
BASIC = BUILDS / "Basic.x86_64"


@pytest.fixture
def python_side():
    side = MiniPython().start()
    yield side
    side.close()


@pytest.fixture
def processes():
    started: list[subprocess.Popen] = []

    def launch(*args: str, env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
        process = subprocess.Popen(
            [str(BASIC), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
        )
        started.append(process)
        return process

    yield launch
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=TIMEOUT)


def build_env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env["MLAGENTS_PYTHON"] = sys.executable
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def infos(message: UnityMessage, brain: str = "BasicLearning"):
    return list(message.unity_output.rl_output.agentInfos[brain].value)


def test_launcher_and_symlink_are_executable():
    assert os.access(BUILDS / "unity-build-launcher", os.X_OK)
    assert BASIC.is_symlink() and os.readlink(BASIC) == "unity-build-launcher"


def test_basic_build_full_session(python_side, processes):
    process = processes(
        "--port", str(python_side.port), "-nographics", "-batchmode", "-logFile", "x", env=build_env()
    )
    init = python_side.handshake(seed=7).unity_output.rl_initialization_output
    assert init.name == "Academy"
    assert init.version == "API-9"
    assert init.log_path == ""
    (brain,) = init.brain_parameters
    assert brain.brain_name == "BasicLearning"
    assert brain.vector_observation_size == 20
    assert brain.num_stacked_vector_observations == 1
    assert list(brain.vector_action_size) == [3]
    assert brain.vector_action_space_type == 0
    assert brain.is_training is True
    assert dict(init.environment_parameters.float_parameters) == {}

    first = python_side.reset()
    assert first.header.status == 200
    assert first.unity_output.rl_output.global_done is False
    (info,) = infos(first)
    assert list(info.stacked_vector_observation) == [1.0 if i == 10 else 0.0 for i in range(20)]
    assert list(info.stored_vector_actions) == [0.0]
    assert not info.done and len(info.action_mask) == 0 and len(info.visual_observations) == 0
    agent_id = info.id

    rewards = []
    for _ in range(7):
        (info,) = infos(python_side.step("BasicLearning", [[2.0]]))
        rewards.append(info.reward)
        assert info.id == agent_id
        assert list(info.stored_vector_actions) == [2.0]
    assert rewards == pytest.approx([-0.01] * 6 + [0.99], abs=1e-6)
    assert info.done and not info.max_step_reached
    assert int(np.argmax(info.stacked_vector_observation)) == 10

    # Python closes: status 400 as the reply to the pending call -> the build exits with 0.
    python_side.reply(UnityMessage(header=Header(status=400)))
    assert process.wait(timeout=TIMEOUT) == 0


def test_api_version_flag_and_port_in_the_same_argument_form(python_side, processes):
    processes(f"--port={python_side.port}", "--api-version", "API-8", env=build_env())
    init = python_side.handshake().unity_output.rl_initialization_output
    assert init.version == "API-8"


def test_launcher_finds_python_on_path_without_mlagents_python(python_side, processes):
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    process = processes("--port", str(python_side.port), env=build_env(MLAGENTS_PYTHON=None, PATH=path))
    assert python_side.handshake().unity_output.rl_initialization_output.name == "Academy"
    python_side.reply(UnityMessage(header=Header(status=400)))
    assert process.wait(timeout=TIMEOUT) == 0


def test_launcher_skips_an_unusable_mlagents_python(python_side, processes, tmp_path):
    # Another interpreter without the examples (like a venv with only the original ML-Agents).
    other = tmp_path / "other-python"
    other.write_text("#!/bin/sh\necho 'No module named mlagents' >&2\nexit 1\n")
    other.chmod(0o755)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    processes("--port", str(python_side.port), env=build_env(MLAGENTS_PYTHON=str(other), PATH=path))
    assert python_side.handshake().unity_output.rl_initialization_output.name == "Academy"


def test_launcher_reports_clearly_when_no_python_works(tmp_path):
    # A copy of the launcher in a repository root of its own: the real root may hold a .venv
    # (CI creates one there) that the launcher would rightly find and use.
    builds = tmp_path / "repo" / "builds"
    builds.mkdir(parents=True)
    shutil.copy2(BUILDS / "unity-build-launcher", builds / "unity-build-launcher")
    (builds / "Basic.x86_64").symlink_to("unity-build-launcher")
    env = {"PATH": str(tmp_path), "MLAGENTS_PYTHON": "/nonexistent", "HOME": str(tmp_path)}
    bash = shutil.which("bash")
    process = subprocess.run(
        [bash, str(builds / "Basic.x86_64"), "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert process.returncode == 2
    assert "Cannot start the example environment 'Basic'" in process.stderr
    assert "/nonexistent: not an executable file" in process.stderr
    assert "MLAGENTS_PYTHON=" in process.stderr and "pip install -e ./example-envs" in process.stderr


@pytest.mark.slow
def test_build_started_before_python_connects_when_python_comes_up(processes):
    side = MiniPython()  # port reserved, not serving yet
    try:
        processes("--port", str(side.port), env=build_env())
        time.sleep(2.0)
        side.start()
        assert side.handshake().unity_output.rl_initialization_output.name == "Academy"
    finally:
        side.close()


def test_rpc_error_ends_the_build_cleanly(processes):
    side = MiniPython().start()
    process = processes("--port", str(side.port), env=build_env())
    side.handshake()
    side.reset()
    side.server.stop(0)  # Python goes away while the build waits in its call
    side.replies.put(UnityMessage(header=Header(status=400)))
    assert process.wait(timeout=TIMEOUT) == 0


def test_fault_exit_after(python_side, processes):
    process = processes("--port", str(python_side.port), "--fault-exit-after", "2", env=build_env())
    python_side.handshake()
    python_side.reset()  # exchange 1
    python_side.step("BasicLearning", [[0.0]])  # exchange 2
    python_side.reply(
        UnityMessage(header=Header(status=200), unity_input=UnityInput(rl_input=UnityRLInput()))
    )
    assert process.wait(timeout=TIMEOUT) == 3
    assert "simulated crash" in process.stderr.read()
    with pytest.raises(queue.Empty):
        python_side.next_call(timeout=0.5)


@pytest.mark.slow
def test_fault_hang_after(python_side, processes):
    process = processes("--port", str(python_side.port), "--fault-hang-after", "1", env=build_env())
    python_side.handshake()
    python_side.reset()  # exchange 1 answered, then silence
    python_side.reply(
        UnityMessage(header=Header(status=200), unity_input=UnityInput(rl_input=UnityRLInput()))
    )
    with pytest.raises(queue.Empty):
        python_side.next_call(timeout=1.5)
    assert process.poll() is None


@pytest.mark.slow
def test_fault_never_connect(python_side, processes):
    process = processes("--port", str(python_side.port), "--fault-never-connect", env=build_env())
    with pytest.raises(queue.Empty):
        python_side.next_call(timeout=2.0)
    assert process.poll() is None


def test_frame_time_slows_every_academy_step(python_side, processes):
    processes("--port", str(python_side.port), "--frame-time-ms", "40", env=build_env())
    python_side.handshake()
    python_side.reset()
    start = time.perf_counter()
    for _ in range(5):
        python_side.step("BasicLearning", [[0.0]])
    assert time.perf_counter() - start >= 5 * 0.04


# ---------------------------------------------------------------------------------------------
# The client in-process with a scene written here: visual observations, masks, memories


class Camera(Scene):
    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            "CameraAcademy",
            [
                BrainSpec("Cam", 2, "discrete", (2, 2), camera_resolutions=(CameraResolution(5, 3, True),)),
                BrainSpec("Idle", 1, "continuous", (1,), is_training=False),
            ],
            [AgentGroup("Cam", 2)],
            reset_parameters={"size": 2.0},
        )

    def agent_reset(self, agents):
        pass

    def collect_observations(self, agents):
        self.academy.set_action_mask(agents[:1], [True, False, False, False])
        return np.tile(
            np.array([[1.0, self.academy.reset_parameters["size"]]], dtype=np.float32), (len(agents), 1)
        )

    def render(self, agents, camera):
        images = np.zeros((len(agents), 3, 5, 3), dtype=np.uint8)
        images[:, 0, :, 0] = 200  # top row red
        images[np.arange(len(agents)), 2, 4, 2] = 10 + np.asarray(agents)
        return images

    def agent_action(self, agents, actions):
        self.academy.add_reward(agents, actions[:, 0] + actions[:, 1])


def test_client_in_process_with_visual_observations_masks_and_memories(python_side):
    result: list[int] = []
    thread = threading.Thread(
        target=lambda: result.append(run_client(Camera, ClientOptions(port=python_side.port))), daemon=True
    )
    thread.start()
    init = python_side.handshake().unity_output.rl_initialization_output
    assert [b.brain_name for b in init.brain_parameters] == ["Cam", "Idle"]
    assert init.brain_parameters[0].camera_resolutions[0].gray_scale is True
    assert init.brain_parameters[1].is_training is False
    assert dict(init.environment_parameters.float_parameters) == {"size": 2.0}

    out = python_side.reset({"size": 3.0})
    assert set(out.unity_output.rl_output.agentInfos) == {"Cam", "Idle"}
    assert infos(out, "Idle") == []
    cam = infos(out, "Cam")
    assert [list(i.stacked_vector_observation) for i in cam] == [[1.0, 3.0], [1.0, 3.0]]
    assert list(cam[0].action_mask) == [True, False, False, False]
    assert list(cam[1].action_mask) == [False, False, False, False]
    for index, info in enumerate(cam):
        (png,) = info.visual_observations
        image = decode_png(png)
        assert image.shape == (3, 5, 3)
        assert image[0, :, 0].tolist() == [200] * 5
        assert image[2, 4, 2] == 10 + index

    rl_input = UnityRLInput()
    for row, memory in (([1.0, 1.0], [0.5, 0.25]), ([0.0, 1.0], [0.75, 1.0])):
        rl_input.agent_actions["Cam"].value.add(vector_actions=row, memories=memory, text_actions="hi")
    out = python_side.exchange(rl_input)
    cam = infos(out, "Cam")
    assert [i.reward for i in cam] == [2.0, 1.0]
    assert [list(i.memories) for i in cam] == [[0.5, 0.25], [0.75, 1.0]]
    assert [i.stored_text_actions for i in cam] == ["hi", "hi"]
    assert [list(i.stored_vector_actions) for i in cam] == [[1.0, 1.0], [0.0, 1.0]]

    python_side.reply(UnityMessage(header=Header(status=400)))
    thread.join(timeout=TIMEOUT)
    assert result == [0]


def test_client_gives_up_when_python_never_comes():
    status = run_client(Camera, ClientOptions(port=1, connect_timeout=0.5))
    assert status == 1


def test_agent_infos_encoded_from_numpy_equal_field_by_field_construction():
    k = 5
    rng = np.random.default_rng(0)
    batch = DecisionBatch(
        agents=np.array([-1000, -1014, 7, 2**31 - 1, -(2**31)]),
        vector_observations=rng.normal(size=(k, 9)).astype(np.float32),
        visual_observations=[],
        rewards=rng.normal(size=k).astype(np.float32),
        local_done=np.array([True, False, True, False, False]),
        max_reached=np.array([True, False, False, False, True]),
        action_masks=rng.random((k, 4)) < 0.5,
        previous_vector_actions=rng.normal(size=(k, 2)).astype(np.float32),
        memories=rng.normal(size=(k, 3)).astype(np.float32),
        previous_text_actions=["a", "", "c", "d", "e"],
    )
    assert agent_info_protos(batch) == [reference_agent_info(batch, i) for i in range(k)]


@pytest.mark.parametrize("shape", [(84, 84, 3), (7, 13, 3), (1, 1, 3)])
def test_png_encoder_writes_images_that_decode_to_the_same_pixels(shape):
    from PIL import Image

    from mlagents.example_envs.sdk.png import encode_png

    image = np.random.default_rng(sum(shape)).integers(0, 256, shape, dtype=np.uint8)
    data = encode_png(image)
    with Image.open(io.BytesIO(data)) as opened:
        opened.verify()  # chunk CRCs and structure
    with Image.open(io.BytesIO(data)) as opened:
        assert (opened.mode, opened.size) == ("RGB", (shape[1], shape[0]))
    np.testing.assert_array_equal(decode_png(data), image)


def test_png_encoder_refuses_what_is_not_an_rgb_byte_image():
    from mlagents.example_envs.sdk.png import encode_png

    with pytest.raises(ValueError, match=r"uint8 \(H, W, 3\)"):
        encode_png(np.zeros((4, 4, 3), dtype=np.float32))
    with pytest.raises(ValueError, match=r"uint8 \(H, W, 3\)"):
        encode_png(np.zeros((4, 4), dtype=np.uint8))


# ---------------------------------------------------------------------------------------------
# The output message written as bytes by hand, against the message the generated classes build


def reference_agent_info(batch: DecisionBatch, i: int) -> AgentInfoProto:
    """Agent ``i`` of ``batch`` built field by field with the generated class (what the SDK did
    before it wrote the bytes itself)."""
    info = AgentInfoProto(
        stacked_vector_observation=batch.vector_observations[i].tolist(),
        stored_vector_actions=batch.previous_vector_actions[i].tolist(),
        reward=float(batch.rewards[i]),
        done=bool(batch.local_done[i]),
        max_step_reached=bool(batch.max_reached[i]),
        id=int(batch.agents[i]),
    )
    info.visual_observations.extend(encode_png(camera[i]) for camera in batch.visual_observations)
    if batch.action_masks is not None:
        info.action_mask.extend(batch.action_masks[i].tolist())
    if batch.memories is not None:
        info.memories.extend(batch.memories[i].tolist())
    if batch.text_observations is not None:
        info.text_observation = batch.text_observations[i]
    if batch.previous_text_actions is not None:
        info.stored_text_actions = batch.previous_text_actions[i]
    return info


def reference_output_message(output: AcademyOutput) -> UnityMessage:
    """The output message built with the generated classes: the reference the hand-written
    bytes must parse to."""
    rl_output = UnityRLOutput(global_done=output.global_done)
    for name, batch in output.batches.items():
        infos = rl_output.agentInfos[name].value  # indexing creates the entry, even for k = 0
        infos.extend(reference_agent_info(batch, i) for i in range(len(batch.agents)))
    return UnityMessage(header=Header(status=200), unity_output=UnityOutput(rl_output=rl_output))


def _batch(rng: np.random.Generator, ids: list[int], obs: int, actions: int, **fields) -> DecisionBatch:
    k = len(ids)
    values = dict(
        agents=np.array(ids, dtype=np.int64),
        vector_observations=rng.normal(size=(k, obs)).astype(np.float32),
        visual_observations=[],
        rewards=rng.normal(size=k).astype(np.float32),
        local_done=rng.random(k) < 0.5,
        max_reached=rng.random(k) < 0.5,
        action_masks=None,
        previous_vector_actions=rng.normal(size=(k, actions)).astype(np.float32),
    )
    values.update(fields)
    return DecisionBatch(**values)


def _outputs() -> dict[str, AcademyOutput]:
    rng = np.random.default_rng(3)
    k = 4
    discrete = _batch(
        rng,
        [-1000, 0, 7, 2**31 - 1],
        obs=6,
        actions=2,
        rewards=np.array([0.0, -0.0, 1.5, -1.0], dtype=np.float32),
        local_done=np.array([True, False, True, False]),
        max_reached=np.array([True, False, False, True]),
        action_masks=rng.random((k, 5)) < 0.5,
        memories=rng.normal(size=(k, 3)).astype(np.float32),
        text_observations=["", "naïve text", "b", "c" * 200],
        previous_text_actions=["left", "", "right", "up"],
    )
    continuous = _batch(rng, [-(2**31), -1014, -1028], obs=45, actions=2)
    visual = _batch(
        rng,
        [-2000, -2014],
        obs=0,
        actions=1,
        visual_observations=[
            rng.integers(0, 256, (2, 4, 6, 3), dtype=np.uint8),
            rng.integers(0, 256, (2, 3, 3, 3), dtype=np.uint8),
        ],
    )
    empty = _batch(rng, [], obs=8, actions=2)
    wide = _batch(rng, [-3000] * 3, obs=400, actions=300)  # lengths of 2-byte varints
    return {
        "several brains": AcademyOutput(
            False, {"Discrete": discrete, "Continuous": continuous, "Idle": empty, "Visual": visual}
        ),
        "global done": AcademyOutput(True, {"Continuous": continuous, "Idle": empty}),
        "only empty brains": AcademyOutput(True, {"Idle": empty, "Other": empty}),
        "no brain": AcademyOutput(False, {}),
        "long fields": AcademyOutput(False, {"Wide": wide}),
    }


OUTPUTS = _outputs()


@pytest.mark.parametrize("case", list(OUTPUTS))
def test_output_bytes_parse_to_the_message_the_generated_classes_build(case):
    output = OUTPUTS[case]
    parsed = UnityMessage.FromString(output_message_bytes(output))
    expected = reference_output_message(output)
    assert parsed == expected
    # Presence too: an output always carries rl_output (an empty call carries no unity_output).
    assert parsed.unity_output.HasField("rl_output")
    assert set(parsed.unity_output.rl_output.agentInfos) == set(output.batches)


def test_output_bytes_keep_negative_zero_rewards_and_int32_ids():
    info = UnityMessage.FromString(output_message_bytes(OUTPUTS["several brains"]))
    infos = info.unity_output.rl_output.agentInfos["Discrete"].value
    assert [i.id for i in infos] == [-1000, 0, 7, 2**31 - 1]
    assert np.signbit(infos[1].reward) and infos[1].reward == 0.0
    assert infos[1].text_observation == "naïve text"


@pytest.mark.parametrize(
    "constant, other_field",
    [
        ("_KEY_OBSERVATION", "stored_vector_actions"),
        ("_KEY_STORED_ACTIONS", "memories"),
        ("_KEY_REWARD", "id"),
        ("_KEY_ACTION_MASK", "memories"),
        ("_KEY_VISUAL", "stored_text_actions"),
        ("_KEY_TEXT_OBSERVATION", "stored_text_actions"),
    ],
)
def test_a_wrong_key_is_caught_by_the_comparison(monkeypatch, constant, other_field):
    """The comparison above fails when the encoder writes a field under another field's key."""
    from mlagents.example_envs.sdk import wire

    monkeypatch.setattr(wire, constant, wire._key(AgentInfoProto.DESCRIPTOR, other_field))
    output = OUTPUTS["several brains"]
    try:
        parsed = UnityMessage.FromString(wire.output_message_bytes(output))
    except DecodeError:  # bytes protobuf cannot parse: caught as well
        return
    assert parsed != reference_output_message(output)


def test_output_bytes_refuse_an_id_outside_int32():
    batch = _batch(np.random.default_rng(0), [2**31], obs=1, actions=1)
    with pytest.raises(ValueError, match="int32"):
        output_message_bytes(AcademyOutput(False, {"B": batch}))


def test_varint_matches_protobuf():
    from google.protobuf.internal.encoder import _VarintBytes

    from mlagents.example_envs.sdk.wire import varint

    for value in (0, 1, 127, 128, 300, 2**14, 2**31 - 1, 2**64 - 1):
        assert varint(value) == _VarintBytes(value)


# ---------------------------------------------------------------------------------------------
# Python's reply read back


def _reply(rl_input: UnityRLInput) -> UnityMessage:
    return UnityMessage(header=Header(status=200), unity_input=UnityInput(rl_input=rl_input))


BRAINS = {"A": BrainSpec("A", 1, "continuous", (2,)), "D": BrainSpec("D", 1, "discrete", (3, 2))}


def test_input_gathers_actions_memories_and_texts_of_every_agent():
    rl_input = UnityRLInput(command=0, is_training=True)
    rl_input.agent_actions["A"].value.add(vector_actions=[0.5, -1.0, 9.0], value=0.3)  # extra value dropped
    rl_input.agent_actions["A"].value.add(vector_actions=[0.25, 2.0], memories=[1.0, 2.0, 3.0])
    rl_input.agent_actions["A"].value.add(vector_actions=[1.0, 1.0], memories=[4.0], text_actions="hi")
    rl_input.agent_actions["D"].value.add(vector_actions=[2.0, 1.0])
    rl_input.agent_actions["Unknown"].value.add(vector_actions=[1.0])
    message = input_from_message(_reply(rl_input), BRAINS)
    assert message is not None
    assert set(message.actions) == {"A", "D"}
    np.testing.assert_array_equal(message.actions["A"], [[0.5, -1.0], [0.25, 2.0], [1.0, 1.0]])
    assert message.actions["A"].dtype == np.float32
    np.testing.assert_array_equal(message.actions["D"], [[2.0, 1.0]])
    assert set(message.memories) == {"A"}
    np.testing.assert_array_equal(message.memories["A"], [[0, 0, 0], [1, 2, 3], [4, 0, 0]])
    assert message.text_actions == {"A": ["", "", "hi"]}


def test_input_without_memories_or_texts_has_none():
    rl_input = UnityRLInput()
    for row in ([0.0, 1.0], [2.0, 3.0]):
        rl_input.agent_actions["A"].value.add(vector_actions=row)
    message = input_from_message(_reply(rl_input), BRAINS)
    assert message is not None
    assert message.memories is None and message.text_actions is None
    assert message.actions["A"].shape == (2, 2)


def test_input_with_too_few_action_values_is_refused():
    rl_input = UnityRLInput()
    rl_input.agent_actions["A"].value.add(vector_actions=[1.0, 2.0])
    rl_input.agent_actions["A"].value.add(vector_actions=[1.0])
    with pytest.raises(
        ValueError, match=r"Python sent fewer than 2 action values for an agent of brain 'A'\."
    ):
        input_from_message(_reply(rl_input), BRAINS)
