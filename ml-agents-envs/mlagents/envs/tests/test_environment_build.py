"""UnityEnvironment against the real Basic example build over real gRPC on free loopback ports."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mlagents.envs import (
    BrainInfo,
    UnityActionException,
    UnityCommunicationException,
    UnityEnvironment,
    UnityEnvironmentException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents.envs.rpc_communicator import TIMEOUT_MESSAGE

BRAIN = "BasicLearning"


@pytest.fixture
def make_env(basic_build, free_port):
    """``make_env(**kwargs)`` starts Basic on a free port; every env is closed after the test."""
    envs = []

    def make(**kwargs):
        kwargs.setdefault("base_port", free_port)
        kwargs.setdefault("no_graphics", True)
        kwargs.setdefault("timeout_wait", 30)
        env = UnityEnvironment(kwargs.pop("file_name", basic_build), **kwargs)
        envs.append(env)
        return env

    yield make
    for env in envs:
        env._close()


@pytest.fixture
def env(make_env):
    return make_env()


@pytest.fixture(scope="module")
def shared_env(basic_build, free_port_range):
    """One Basic environment for tests that only step it (saves a build start per test)."""
    env = UnityEnvironment(basic_build, base_port=free_port_range(1), no_graphics=True)
    env.reset()
    yield env
    env._close()


@pytest.fixture
def start_failing_env(basic_build, free_port, monkeypatch):
    """``start_failing_env(**kwargs)`` runs the constructor on Basic expecting it to raise;
    returns (the exception, the Popen of the build it launched)."""

    def start(**kwargs):
        launched = []
        original = UnityEnvironment.executable_launcher

        def spy(self, *args):
            original(self, *args)
            launched.append(self.proc1)

        monkeypatch.setattr(UnityEnvironment, "executable_launcher", spy)
        kwargs.setdefault("no_graphics", True)
        with pytest.raises(Exception) as error:
            UnityEnvironment(basic_build, base_port=free_port, **kwargs)
        monkeypatch.undo()
        return error.value, (launched[0] if launched else None)

    return start


def test_reset_step_close(env, assert_gone, port_free):
    assert env.academy_name == "Academy"
    assert env.brain_names == [BRAIN] and env.external_brain_names == [BRAIN]
    brain = env.brains[BRAIN]
    assert brain.vector_action_space_type == "discrete" and brain.vector_action_space_size == [3]
    assert env.global_done is None
    info = env.reset(train_mode=True)[BRAIN]
    assert isinstance(info, BrainInfo)
    assert info.vector_observations.shape == (1, brain.vector_observation_space_size)
    assert info.agents[0].startswith("$0-")
    assert env.global_done is False
    rewards = []
    for _ in range(30):
        info = env.step([2.0])[BRAIN]
        rewards.append(info.rewards[0])
        assert info.previous_vector_actions.shape == (1, 1)
        if env.global_done:
            env.reset()
    assert any(r != 0 for r in rewards)
    popen, port = env.proc1, env.port
    assert os.getsid(popen.pid) == popen.pid  # own session: Ctrl-C reaches Python first
    environ = Path(f"/proc/{popen.pid}/environ").read_bytes().split(b"\0")
    if "MLAGENTS_PYTHON" not in os.environ:
        assert f"MLAGENTS_PYTHON={sys.executable}".encode() in environ
    log_dir = Path(env.build_log_path).parent
    env.close()
    assert_gone(popen)
    assert popen.returncode == 0  # it quit by itself after the goodbye message
    assert port_free(port)
    assert not log_dir.exists()  # a clean close leaves no log behind
    with pytest.raises(UnityEnvironmentException, match="No Unity environment is loaded."):
        env.close()
    with pytest.raises(UnityEnvironmentException, match="No Unity environment is loaded."):
        env.step([1.0])
    with pytest.raises(UnityEnvironmentException, match="No Unity environment is loaded."):
        env.reset()


@pytest.mark.parametrize(
    "action",
    [
        1,
        1.0,
        np.int32(1),
        np.int64(2),
        np.float32(0.0),
        np.float64(1.0),
        [1],
        [[1]],
        np.array([1]),
        np.array([[2]]),
    ],
    ids=lambda a: f"{type(a).__name__}-{np.asarray(a).shape}",
)
def test_step_accepts_every_single_brain_form(shared_env, action):
    expected = float(np.asarray(action).reshape(-1)[0])
    if shared_env.global_done:
        shared_env.reset()
    assert shared_env.step(action)[BRAIN].previous_vector_actions[0, 0] == expected
    if shared_env.global_done:
        shared_env.reset()
    assert shared_env.step({BRAIN: action})[BRAIN].previous_vector_actions[0, 0] == expected


def test_step_with_memory_text_value_and_defaults(env):
    env.reset()
    info = env.step({BRAIN: [1]}, memory={BRAIN: [0.5, 0.25]}, text_action="hello", value={BRAIN: [3.0]})[
        BRAIN
    ]
    assert info.memories.tolist() == [[0.5, 0.25]]  # echoed back by the build
    assert "".join(info.previous_text_actions[0]) == "hello"
    info = env.step()[BRAIN]  # missing actions are zeros
    assert info.previous_vector_actions.tolist() == [[0.0]]


def test_step_validation_errors(env):
    with pytest.raises(UnityActionException, match=r"^You cannot conduct step without first calling reset"):
        env.step([1])
    env.reset()
    with pytest.raises(UnityActionException) as error:
        env.step([1, 2])
    assert str(error.value) == (
        "There was a mismatch between the provided action and the environment's expectation: "
        "The brain BasicLearning expected 1 discrete action(s), but was provided: [1.0, 2.0]"
    )
    with pytest.raises(UnityActionException) as error:
        env.step({"NotABrain": [1]})
    assert (
        str(error.value) == "The name NotABrain does not correspond to an external brain in the environment"
    )
    with pytest.raises(UnityActionException) as error:
        env.step([1], text_action=["a", "b"])
    assert str(error.value) == (
        "There was a mismatch between the provided text_action and the environment's expectation: "
        "The brain BasicLearning expected 1 text_action but was given 2"
    )
    # The environment is still usable after rejected calls.
    assert env.step([1])[BRAIN].previous_vector_actions.tolist() == [[1.0]]


def test_reset_parameter_validation(env):
    with pytest.raises(UnityEnvironmentException) as error:
        env.reset(config={"not_a_parameter": 1.0})
    assert str(error.value) == "The parameter 'not_a_parameter' is not a valid parameter."
    with pytest.raises(UnityEnvironmentException) as error:
        env.reset(config={"anything": "big"})
    assert str(error.value) == "The value for parameter 'anything'' must be an Integer or a Float."
    assert env.reset(config={})[BRAIN].agents


def test_editor_mode_connects_to_a_build_started_by_hand(basic_build, free_port, assert_gone):
    popen = subprocess.Popen(
        [basic_build, "--port", str(free_port), "-nographics"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        env = UnityEnvironment(None, base_port=free_port, timeout_wait=30)
        assert env.proc1 is None
        env.reset()
        assert len(env.step([1])[BRAIN].agents) == 1
        env.close()
        popen.wait(timeout=10)  # the goodbye message made it quit
        assert popen.returncode == 0
    finally:
        if popen.poll() is None:
            popen.kill()
            popen.wait()
    assert_gone(popen)


def test_editor_mode_needs_worker_zero(free_port, port_free):
    with pytest.raises(UnityEnvironmentException) as error:
        UnityEnvironment(None, worker_id=1, base_port=free_port)
    assert str(error.value) == (
        "If the environment name is None, the worker-id must be 0 in order to connect with the Editor."
    )
    assert port_free(free_port + 1)


def test_editor_mode_times_out_when_nothing_connects(free_port, port_free):
    with pytest.raises(UnityTimeOutException) as error:
        UnityEnvironment(None, base_port=free_port, timeout_wait=0.5)
    assert str(error.value).startswith(TIMEOUT_MESSAGE)
    assert f"port {free_port}" in str(error.value)
    assert port_free(free_port)


def test_missing_build(free_port, port_free, tmp_path):
    with pytest.raises(UnityEnvironmentException) as error:
        UnityEnvironment(str(tmp_path / "NoSuchEnv"), base_port=free_port)
    assert str(error.value).startswith(
        "Couldn't launch the NoSuchEnv environment. Provided filename does not match any environments."
    )
    assert port_free(free_port)


def test_port_in_use(make_env, basic_build, free_port):
    make_env()
    with pytest.raises(UnityWorkerInUseException) as error:
        UnityEnvironment(basic_build, base_port=free_port, no_graphics=True)
    assert str(free_port) in str(error.value) and "--base-port" in str(error.value)


def test_incompatible_api_version(start_failing_env, free_port, assert_gone, port_free):
    error, popen = start_failing_env(args=["--api-version", "API-7"])
    assert isinstance(error, UnityEnvironmentException)
    assert str(error) == (
        "The API number is not compatible between Unity and python. Python API : API-9, Unity API : API-7.\n"
        "Please go to https://github.com/Unity-Technologies/ml-agents to download the latest version of ML-Agents."
    )
    assert_gone(popen)
    assert port_free(free_port)


def test_api_8_is_accepted(make_env):
    env = make_env(args=["--api-version", "API-8"])
    env.reset()
    assert env.step([1])[BRAIN].agents


def _assert_kept_log(error_text: str, env_log: str) -> None:
    assert env_log in error_text
    assert Path(env_log).exists()
    Path(env_log).unlink()
    Path(env_log).parent.rmdir()


def test_build_that_exits_mid_run(make_env, assert_gone, port_free):
    env = make_env(args=["--fault-exit-after", "3"])
    env.reset()  # exchange 1
    env.step([1])  # exchange 2
    popen, log = env.proc1, env.build_log_path
    start = time.monotonic()
    with pytest.raises(UnityCommunicationException) as error:
        for _ in range(3):
            env.step([1])
    assert time.monotonic() - start < 20.0  # long before exchange_timeout (120 s), even on a loaded machine
    message = str(error.value)
    assert "exited unexpectedly with code 3" in message
    assert "simulated crash" in message  # the log tail
    assert "--fault-exit-after 3" in message  # the command line
    assert_gone(popen)
    assert port_free(env.port)
    _assert_kept_log(message, log)
    with pytest.raises(UnityEnvironmentException, match="No Unity environment is loaded."):
        env.step([1])


def test_build_killed_mid_run(make_env, assert_gone, port_free):
    env = make_env()
    env.reset()
    popen, log = env.proc1, env.build_log_path
    os.kill(popen.pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(UnityCommunicationException) as error:
        env.step([1])
    assert time.monotonic() - start < 20.0  # long before exchange_timeout (120 s), even on a loaded machine
    assert "SIGKILL" in str(error.value)
    assert_gone(popen)
    assert port_free(env.port)
    _assert_kept_log(str(error.value), log)


@pytest.mark.slow
def test_build_that_hangs(make_env, assert_gone, port_free):
    env = make_env(args=["--fault-hang-after", "2"], exchange_timeout=1.0)
    env.reset()
    env.step([1])
    popen, log = env.proc1, env.build_log_path
    start = time.monotonic()
    with pytest.raises(UnityTimeOutException) as error:
        env.step([1])
    assert 0.9 < time.monotonic() - start < 20.0  # at exchange_timeout, not the 120 s default
    assert "exchange_timeout" in str(error.value) and "Command line:" in str(error.value)
    assert_gone(popen)
    assert port_free(env.port)
    _assert_kept_log(str(error.value), log)


@pytest.mark.slow
def test_build_that_never_connects(start_failing_env, free_port, assert_gone, port_free):
    start = time.monotonic()
    error, popen = start_failing_env(args=["--fault-never-connect"], timeout_wait=1.0)
    assert time.monotonic() - start < 20.0  # at timeout_wait, not the 30 s default
    assert isinstance(error, UnityTimeOutException)
    message = str(error)
    assert message.startswith(TIMEOUT_MESSAGE)
    assert f"--port {free_port} --fault-never-connect" in message
    assert "Command line:" in message and "log" in message
    assert_gone(popen)
    assert port_free(free_port)
    log = message.split("log (", 1)[1].split(")", 1)[0] if "log (" in message else None
    if log:
        _assert_kept_log(message, log)


def test_build_that_exits_while_starting(tmp_path, free_port, port_free):
    build = tmp_path / "Broken.x86_64"
    build.write_text("#!/bin/sh\necho 'cannot load the scene' >&2\nexit 2\n")
    build.chmod(0o755)
    start = time.monotonic()
    with pytest.raises(UnityCommunicationException) as error:
        UnityEnvironment(
            str(tmp_path / "Broken"), base_port=free_port, timeout_wait=120, log_dir=str(tmp_path)
        )
    assert time.monotonic() - start < 20.0  # noticed long before timeout_wait, even on a loaded machine
    message = str(error.value)
    assert "exited unexpectedly with code 2" in message and "cannot load the scene" in message
    assert f"{build} --port {free_port}" in message
    assert port_free(free_port)


def test_open_environments_are_closed_at_exit(basic_build, free_port):
    """A script that forgets close(): its build is told to quit and reaped when the interpreter exits."""
    script = (
        "import atexit\n"
        "from mlagents.envs import UnityEnvironment\n"
        "envs = []\n"
        # Registered first, so it runs after the environment's own exit handler (LIFO).
        "atexit.register(lambda: print('build exit code', envs[0].proc1.returncode, flush=True))\n"
        f"envs.append(UnityEnvironment({basic_build!r}, base_port={free_port}, no_graphics=True))\n"
        "envs[0].reset()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "build exit code 0" in result.stdout


def test_log_dir_keeps_the_build_log(make_env, tmp_path):
    env = make_env(log_dir=str(tmp_path))
    env.reset()
    env.close()
    assert Path(env.build_log_path).parent == tmp_path
    assert Path(env.build_log_path).exists()
