"""The RollerBall example of docs/Learning-Environment-Create-New.md works as written: in-process,
as ``python -m mlagents.example_envs module:Class`` and through the two-line build script."""

from __future__ import annotations

import importlib.util
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tests.mini_python import CLOSE, MiniPython

DOC = Path(__file__).resolve().parents[4] / "docs" / "Learning-Environment-Create-New.md"
BRAIN = "RollerBallBrain"


def doc_text() -> str:
    return DOC.read_text()


@pytest.fixture
def roller_dir(tmp_path: Path) -> Path:
    match = re.search(r"<!-- example: roller_ball.py -->\n```python\n(.*?)```", doc_text(), re.S)
    assert match, "the RollerBall example block is missing from the page"
    (tmp_path / "roller_ball.py").write_text(match.group(1))
    return tmp_path


def load_roller_ball(directory: Path):
    spec = importlib.util.spec_from_file_location("roller_ball_doc_example", directory / "roller_ball.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RollerBall


def run(env: LocalEnvironment, controller, decisions: int) -> float:
    batch = env.reset()[BRAIN]
    total = 0.0
    for _ in range(decisions):
        batch = env.step({BRAIN: controller(batch.vector_observations)})[BRAIN]
        total += float(batch.rewards.sum())
    return total


def test_roller_ball_scripted_controller_reaches_targets_and_random_does_not(roller_dir):
    scene = load_roller_ball(roller_dir)
    # The controller of the page: push toward the target, damped by the velocity.
    scripted = run(
        LocalEnvironment(scene, seed=1),
        lambda obs: np.clip(2.0 * (obs[:, 0:2] - obs[:, 2:4]) - obs[:, 4:6], -1.0, 1.0),
        100,
    )
    rng = np.random.default_rng(0)
    random = run(LocalEnvironment(scene, seed=1), lambda obs: rng.uniform(-1.0, 1.0, (len(obs), 2)), 100)
    assert scripted >= 50
    assert random < scripted / 4


def test_page_snippets_use_the_real_api(roller_dir):
    text = doc_text()
    snippet = re.findall(r"```python\n(.*?)```", text, re.S)[1]
    namespace: dict = {}
    # The page's snippet imports the reader's roller_ball.py from the folder it runs in, as the
    # reader's own script would: that folder goes on sys.path for the snippet only.
    sys.path.insert(0, str(roller_dir))
    try:
        exec(compile(snippet.replace("print(", "(lambda *a: None)("), "snippet", "exec"), namespace)
    finally:
        sys.path.remove(str(roller_dir))
        sys.modules.pop("roller_ball", None)


def _launch_and_handshake(command: list[str], cwd: Path) -> None:
    side = MiniPython().start()
    env = dict(
        os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    process = subprocess.Popen(
        [*command, "--port", str(side.port)], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        init = side.handshake().unity_output.rl_initialization_output
        assert init.name == "RollerAcademy"
        assert [b.brain_name for b in init.brain_parameters] == [BRAIN]
        assert dict(init.environment_parameters.float_parameters) == {"speed": 10.0}
        out = side.reset()
        assert len(out.unity_output.rl_output.agentInfos[BRAIN].value) == 4
        side.reply(CLOSE)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)
        side.close()


@pytest.mark.slow
def test_roller_ball_runs_as_a_build_by_module_and_through_the_build_script(roller_dir):
    _launch_and_handshake(
        [sys.executable, "-m", "mlagents.example_envs", "roller_ball:RollerBall"], roller_dir
    )
    script = re.search(r"```sh\n(#!/bin/sh\n.*?)```", doc_text(), re.S).group(1)
    build = roller_dir / "RollerBall.x86_64"
    build.write_text(script)
    build.chmod(build.stat().st_mode | stat.S_IXUSR)
    _launch_and_handshake([str(build)], roller_dir)
