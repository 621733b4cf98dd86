"""Episode videos of every example: written, decoded back, of the asked size, and moving."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlagents.example_envs import registry, video_views  # noqa: F401  (views of the examples)

imageio = pytest.importorskip("imageio.v2")

SIZE = (96, 64)

# The recordings run in a child process: MuJoCo's OpenGL (Mesa) and TensorFlow cannot share a
# process (each brings its own LLVM; the second to load crashes), and other tests of the same
# pytest session load TensorFlow.
RECORD_ALL = """
import json, sys
from mlagents.example_envs import registry, video_views
from mlagents.example_envs.sdk.video import VideoOptions, record_video
folder, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
frames = {}
for name in sorted(registry.SCENES):
    path = f"{folder}/{name}.{'mp4' if name in ('3DBall', 'GridWorld') else 'gif'}"
    options = VideoOptions(episodes=1, max_episode_steps=24, width=width, height=height, frame_skip=2, seed=3)
    frames[name] = [path, record_video(name, path, options).frames]
print(json.dumps(frames))
"""


def decode(path: Path) -> np.ndarray:
    return np.stack([np.asarray(frame)[..., :3] for frame in imageio.mimread(str(path), memtest=False)])


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    folder = tmp_path_factory.mktemp("videos")
    done = subprocess.run(
        [sys.executable, "-c", RECORD_ALL, str(folder), str(SIZE[0]), str(SIZE[1])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {name: (Path(path), frames) for name, (path, frames) in json.loads(done.stdout).items()}


# Most examples are MuJoCo scenes, filmed with offscreen OpenGL from the system (see conftest.py).
@pytest.mark.slow
@pytest.mark.opengl
@pytest.mark.parametrize("name", sorted(registry.SCENES))
def test_every_example_records_a_video(recordings: dict[str, tuple[Path, int]], name: str) -> None:
    path, written = recordings[name]
    frames = decode(path)
    assert written >= 6
    if path.suffix == ".mp4":
        assert len(frames) == written
    else:  # a GIF stores a run of identical frames once, shown longer
        assert 2 <= len(frames) <= written
    assert frames.shape[1:] == (SIZE[1], SIZE[0], 3)
    assert frames.std() > 1.0, "a blank video"
    changes = [np.abs(frames[i].astype(int) - frames[i - 1].astype(int)).sum() for i in range(1, len(frames))]
    assert sum(change > 0 for change in changes) >= len(changes) // 3, "the picture does not move"


@pytest.mark.slow
def test_command_line_records_and_refuses_bad_options(tmp_path: Path) -> None:
    path = tmp_path / "basic.gif"
    command = [sys.executable, "-m", "mlagents.example_envs", "Basic", "--record-video", str(path)]
    done = subprocess.run(command + ["--episodes", "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Recorded 2 episode(s) of Basic" in done.stderr and path.exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--record-video", "x.avi"], ".mp4 or .gif"),
        (["--record-video", "x.gif", "--model", "BasicLearning=none.nn"], "There is no model file none.nn"),
        (["--record-video", "x.gif", "--model", "Nobody=none.nn"], "has no brain 'Nobody'"),
        (["--record-video", "x.gif", "--model", "BasicLearning"], "--model takes BRAIN=VALUE"),
    ],
)
def test_bad_options_get_one_line(
    tmp_path: Path, monkeypatch, capsys, extra: list[str], message: str
) -> None:
    from mlagents.example_envs.basic import Basic
    from mlagents.example_envs.sdk.cli import video_main

    monkeypatch.chdir(tmp_path)
    assert video_main(Basic, extra) == 2
    error = capsys.readouterr().err
    assert message in error and error.strip().count("\n") == 0
