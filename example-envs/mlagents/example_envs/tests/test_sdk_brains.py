"""Brains that act in the build: brain types, broadcast, the command line and standalone runs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mlagents.envs.environment import UnityEnvironment
from mlagents.example_envs.basic import walk_to_large_goal
from mlagents.example_envs.sdk import cli
from mlagents.example_envs.sdk.arguments import BUILD_ARGS_VARIABLE
from mlagents.example_envs.sdk.brains import BrainSettings, brain_types, register_brain_type
from mlagents.example_envs.sdk.catalogue import registered_scenes
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.sdk.messages import DecisionBatch
from mlagents.example_envs.sdk.scene import BrainSpec, Scene
from mlagents.example_envs.soccer import GOALIE_BRAIN, STRIKER_BRAIN, SoccerTwos, goalie_heuristic
from mlagents.trainers.demo_loader import demo_to_buffer, load_demonstration

BUILDS = Path(__file__).resolve().parents[3] / "builds"
BASIC = "BasicLearning"


def run_cli(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = cli.main(arguments)
    return status, capsys.readouterr().err


# ---------------------------------------------------------------- the command line refuses bad settings
@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            ["--brain-type", "Nope=heuristic"],
            "Basic's brains|has no brain 'Nope'; its brains are: BasicLearning",
        ),
        (
            ["--brain-type", "BasicLearning=magic"],
            "Unknown brain type 'magic'; known types: external, heuristic",
        ),
        (["--brain-type", "BasicLearning"], "BRAIN=KIND"),
        (["--broadcast", "Nope"], "--broadcast: Academy has no brain 'Nope'"),
        (["--record-demo", "BasicLearning"], "--record-demo takes BRAIN=VALUE"),
        (["--brain-type", "BasicLearning=heuristic:fast"], "takes no argument"),
        (["--demo-steps", "many"], "--demo-steps takes a whole number"),
        (["--brain-type", "BasicLearning=player"], "standard input is not a terminal"),
        (["--teacher", "T=Nope"], "--teacher: Academy has no brain 'Nope'"),
        (["--teacher", "BasicLearning=BasicLearning"], "already has a brain 'BasicLearning'"),
    ],
)
def test_bad_brain_settings_are_one_line_exit_2(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BUILD_ARGS_VARIABLE, raising=False)
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))  # noqa: SIM115 (closed by pytest's monkeypatch teardown)
    status, err = run_cli(["Basic", *arguments], capsys)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert any(part in lines[0] for part in message.split("|")), lines[0]


def test_build_args_variable_is_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(BUILD_ARGS_VARIABLE, "--brain-type 'Nope=heuristic'")
    status, err = run_cli(["Basic"], capsys)
    assert status == 2 and "has no brain 'Nope'" in err


def test_every_example_has_a_heuristic_and_player_keys() -> None:
    from mlagents.example_envs.sdk.catalogue import find_scene

    for name in registered_scenes():
        scene = find_scene(name)
        for brain in scene.spec().brains:
            assert scene.has_heuristic(brain.name), (name, brain.name)
            keys = scene.player_keys(brain.name)
            assert keys, (name, brain.name)
            for index, _ in keys.values():
                assert 0 <= index < brain.action_length
    assert {"external", "heuristic", "player"} <= set(brain_types())


# ---------------------------------------------------------------- the seam
class Constant:
    """A registered brain type for the test: a fixed action, and memories counting decisions."""

    def __init__(self, brain: BrainSpec, value: float) -> None:
        self.brain = brain
        self.value = value

    def decide(self, batch: DecisionBatch) -> tuple[np.ndarray, np.ndarray]:
        k = len(batch.agents)
        previous = batch.memories[:, 0] if batch.memories is not None else np.zeros(k, np.float32)
        return np.full((k, self.brain.action_length), self.value, np.float32), (previous + 1.0)[:, None]


def _constant(scene: Scene, brain: BrainSpec, argument: str | None) -> Constant:
    return Constant(brain, float(argument or 0))


def test_registered_brain_type_decides_and_keeps_memories() -> None:
    register_brain_type("constant-test", _constant)
    with pytest.raises(ValueError):
        register_brain_type("external", _constant)
    settings = BrainSettings(kinds={BASIC: ("constant-test", "2")}, broadcast={BASIC})
    env = LocalEnvironment("Basic", brain_settings=settings)
    assert env.brains[BASIC].is_training is False
    batch = env.reset()[BASIC]
    positions = [int(batch.vector_observations[0].argmax())]
    for step in range(3):
        # Python's actions for a brain the build decides for are ignored.
        batch = env.step({BASIC: np.array([[1.0]], np.float32)})[BASIC]
        positions.append(int(batch.vector_observations[0].argmax()))
        assert batch.previous_vector_actions.tolist() == [[2.0]]
        assert batch.memories is not None and batch.memories[0, 0] == step + 1
    assert positions == [10, 11, 12, 13]
    env.close()


def test_hidden_heuristic_brain_next_to_an_external_one() -> None:
    # Goalies play by their heuristic and are not sent; Python sees and moves the strikers.
    settings = BrainSettings(kinds={GOALIE_BRAIN: ("heuristic", None)})
    env = LocalEnvironment("SoccerTwos", seed=0, brain_settings=settings)
    assert list(env.brains) == [STRIKER_BRAIN]
    batches = env.reset()
    assert list(batches) == [STRIKER_BRAIN]
    scene = env.academy.scene
    assert isinstance(scene, SoccerTwos)
    goalies = env.academy.agents_of_brain(GOALIE_BRAIN)
    rng = np.random.default_rng(0)
    for _ in range(4):
        # The goalies decided at this exchange point, on the state Python is shown.
        stored = env.academy._action[goalies, :1]
        np.testing.assert_array_equal(stored, goalie_heuristic(scene, goalies))
        k = len(batches[STRIKER_BRAIN].agents)
        batches = env.step({STRIKER_BRAIN: rng.integers(0, 7, (k, 1)).astype(np.float32)})
    env.close()


def test_teacher_needs_a_scene_that_runs_extra_agents(capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_cli(["3DBall", "--teacher", "Teacher=3DBallLearning"], capsys)
    assert status == 2 and "cannot run extra agents" in err


def test_teacher_plays_beside_the_learner() -> None:
    settings = BrainSettings(teachers={"BasicTeacher": BASIC})
    env = LocalEnvironment("Basic", brain_settings=settings)
    assert list(env.brains) == [BASIC, "BasicTeacher"]
    assert env.brains[BASIC].is_training and not env.brains["BasicTeacher"].is_training
    batches = env.reset()
    teacher_returns, total = [], 0.0
    for _ in range(40):
        observation = batches["BasicTeacher"].vector_observations.copy()
        # The learner walks left; the teacher plays its heuristic on its own line.
        batches = env.step({BASIC: np.array([[1.0]], np.float32)})
        teacher = batches["BasicTeacher"]
        np.testing.assert_array_equal(teacher.previous_vector_actions, walk_to_large_goal(observation))
        assert batches[BASIC].previous_vector_actions.tolist() == [[1.0]]
        total += float(teacher.rewards[0])
        if teacher.local_done[0]:
            teacher_returns.append(total)
            total = 0.0
    assert len(teacher_returns) >= 5 and np.allclose(teacher_returns, 0.93)
    env.close()


# ---------------------------------------------------------------- over the wire and as a process
def test_broadcast_heuristic_brain_over_the_wire(free_port_range: Callable[[int], int]) -> None:
    env = UnityEnvironment(
        str(BUILDS / "Basic.x86_64"),
        base_port=free_port_range(1),
        no_graphics=True,
        args=["--brain-type", f"{BASIC}=heuristic", "--broadcast", BASIC],
    )
    try:
        assert env.external_brain_names == [] and list(env.brains) == [BASIC]
        info = env.reset(train_mode=True)[BASIC]
        observed, taken, returns, total = [], [], [], 0.0
        for _ in range(30):
            observed.append(info.vector_observations.copy())
            info = env.step()[BASIC]
            taken.append(info.previous_vector_actions.copy())
            total += info.rewards[0]
            if info.local_done[0]:
                returns.append(total)
                total = 0.0
        # Python sees the actions the teacher took: the heuristic's, on what it observed.
        for observation, action in zip(observed, taken):
            np.testing.assert_array_equal(action, walk_to_large_goal(observation.astype(np.float32)))
        assert len(returns) >= 3 and np.allclose(returns, 0.93)
    finally:
        env.close()


def test_teacher_over_the_wire_through_the_environment_variable(
    free_port_range: Callable[[int], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BUILD_ARGS_VARIABLE, f"--teacher BasicTeacher={BASIC}")
    env = UnityEnvironment(str(BUILDS / "Basic.x86_64"), base_port=free_port_range(1), no_graphics=True)
    try:
        assert env.external_brain_names == [BASIC] and set(env.brains) == {BASIC, "BasicTeacher"}
        infos = env.reset(train_mode=True)
        for _ in range(5):
            observation = infos["BasicTeacher"].vector_observations.astype(np.float32)
            infos = env.step({BASIC: [[0.0]]})
            expected = walk_to_large_goal(observation)
            np.testing.assert_array_equal(infos["BasicTeacher"].previous_vector_actions, expected)
    finally:
        env.close()


def _build_process(arguments: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mlagents.example_envs", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,  # type: ignore[call-overload]
    )


def test_standalone_build_records_a_demonstration(tmp_path: Path) -> None:
    result = _build_process(
        [
            "Basic",
            "--brain-type",
            f"{BASIC}=heuristic",
            "--record-demo",
            f"{BASIC}=Expert Basic!",
            "--demo-folder",
            str(tmp_path),
            "--demo-steps",
            "40",
        ],
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    path = tmp_path / "Expert Basic.demo"
    brain, infos, expected = load_demonstration(str(path))
    assert brain.brain_name == BASIC and expected == len(infos) == 40
    _, buffer = demo_to_buffer(str(path), 1)
    observations = np.asarray(buffer.update_buffer["vector_obs"], np.float32)
    np.testing.assert_array_equal(
        np.asarray(buffer.update_buffer["actions"]), walk_to_large_goal(observations)
    )


def test_player_brain_is_refused_without_a_terminal() -> None:
    result = _build_process(["Basic", "--brain-type", f"{BASIC}=player"], stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "not a terminal" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_player_brain_reads_keys_from_a_terminal(tmp_path: Path) -> None:
    import os
    import pty

    master, slave = pty.openpty()
    # Turn mode: each decision takes the next key typed; D steps right (7 steps to the large goal,
    # then the done decision), "x" is not a key of the table and means "no key".
    os.write(master, b"x" + b"d" * 7 + b"x" * 4)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlagents.example_envs",
            "Basic",
            "--brain-type",
            f"{BASIC}=player:turns",
            "--record-demo",
            f"{BASIC}=Human",
            "--demo-folder",
            str(tmp_path),
            "--demo-steps",
            "9",
        ],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    try:
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    assert process.returncode == 0, err.decode()
    _, infos, _ = load_demonstration(str(tmp_path / "Human.demo"))
    positions = [int(info.vector_observations[0].argmax()) for info in infos]
    stored = [int(info.previous_vector_actions[0, 0]) for info in infos]
    # The done decision shows the reset agent (on-demand agents reset at once).
    assert positions == [10, 10, 11, 12, 13, 14, 15, 16, 10]
    assert stored[1:] == [0, 2, 2, 2, 2, 2, 2, 2]
    assert [bool(info.local_done[0]) for info in infos] == [False] * 8 + [True]
    assert infos[-1].rewards[0] == pytest.approx(0.99)


def test_recording_while_python_decides_is_closed_by_quit(
    free_port_range: Callable[[int], int], tmp_path: Path
) -> None:
    env = UnityEnvironment(
        str(BUILDS / "Basic.x86_64"),
        base_port=free_port_range(1),
        no_graphics=True,
        args=["--record-demo", f"{BASIC}=FromPython", "--demo-folder", str(tmp_path)],
    )
    try:
        assert env.external_brain_names == [BASIC]
        env.reset(train_mode=True)
        for _ in range(20):
            env.step({BASIC: [[2.0]]})
    finally:
        env.close()
    _, infos, expected = load_demonstration(str(tmp_path / "FromPython.demo"))
    assert expected == len(infos) == 21
    assert {float(info.previous_vector_actions[0, 0]) for info in infos[1:]} == {2.0}


def test_key_names_and_player_actions() -> None:
    from mlagents.example_envs.sdk.player import key_names, player_actions
    from mlagents.example_envs.wall_jump import PLAYER_KEYS, WallJump

    assert key_names("wD \x1b[A\x1b[D\x07") == ["w", "d", "space", "up", "left"]
    brain = WallJump.spec().brains[0]
    actions = player_actions(brain, PLAYER_KEYS, {"w", "d", "space"}, 2)
    assert actions.dtype == np.float32 and actions.tolist() == [[1, 2, 0, 1]] * 2
    assert player_actions(brain, PLAYER_KEYS, set(), 1).tolist() == [[0, 0, 0, 0]]
