"""A model trained by a short mlagents-learn run: exported as .nn and .onnx, filmed at its
checkpoints (--video-freq), and run by the build's inference brain."""

from pathlib import Path

import numpy as np
import pytest
from learn_helpers import LearnProcess, assert_nothing_left, trainer_config
from tensorboard.backend.event_processing import event_accumulator

REPO = Path(__file__).resolve().parents[4]
BASIC = REPO / "example-envs" / "builds" / "Basic.x86_64"
STEPS = 3000
VIDEO_FREQ = 1500

pytestmark = pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing")
imageio = pytest.importorskip("imageio.v2")


@pytest.fixture(scope="module")
def trained(tmp_path_factory, free_port_range):
    """Train Basic for ``STEPS`` steps with a video every ``VIDEO_FREQ`` steps; returns the run's folder."""
    cwd = tmp_path_factory.mktemp("deploy")
    config = trainer_config(learning_rate=3.0e-3, max_steps=STEPS, summary_freq=1000)
    (cwd / "config.yaml").write_text(config)
    port = free_port_range(1)
    run = LearnProcess(
        cwd,
        "config.yaml",
        "--env",
        BASIC,
        "--base-port",
        port,
        "--train",
        "--run-id=basic",
        f"--save-freq={VIDEO_FREQ}",
        f"--video-freq={VIDEO_FREQ}",
        "--seed=4",
        "--no-graphics",
    )
    status = run.finish(timeout=300)
    output = run.output()
    assert status == 0, output[-4000:]
    assert_nothing_left([port], pgid=run.pid)
    return cwd, output


def test_every_format_is_exported(trained):
    cwd, output = trained
    for extension in (".nn", ".onnx"):
        assert (cwd / "models" / "basic-0" / f"BasicLearning{extension}").is_file()
        assert f"Exported ./models/basic-0/BasicLearning{extension} file" in output


def test_a_video_at_each_checkpoint_also_in_tensorboard(trained):
    cwd, output = trained
    videos = cwd / "models" / "basic-0" / "videos"
    assert sorted(p.name for p in videos.iterdir()) == [
        f"step-{VIDEO_FREQ}.mp4",
        f"step-{2 * VIDEO_FREQ}.mp4",
    ]
    frames = np.stack(imageio.mimread(str(videos / f"step-{VIDEO_FREQ}.mp4"), memtest=False))
    assert frames.shape[1:] == (240, 320, 3) and len(frames) > 5
    assert f"Wrote the video ./models/basic-0/videos/step-{VIDEO_FREQ}.mp4" in output
    acc = event_accumulator.EventAccumulator(
        str(cwd / "summaries" / "basic_BasicLearning"), size_guidance={event_accumulator.TENSORS: 0}
    )
    acc.Reload()
    assert "Policy/Video" in acc.Tags()["tensors"], acc.Tags()
    events = acc.Tensors("Policy/Video")
    assert [event.step for event in events] == [VIDEO_FREQ, 2 * VIDEO_FREQ]
    # width, height, then one PNG per frame
    assert len(events[0].tensor_proto.string_val) == 2 + 8
