"""A model trained by a short mlagents-learn run: exported as .nn and .onnx, filmed at its
checkpoints (--video-freq), and run by the build's inference brain."""

import subprocess
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

from mlagents.envs.environment import UnityEnvironment
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.tests.episode_helpers import episode_rewards, rewards_in_build, within_noise
from mlagents.trainers.tests.learn_helpers import (
    BASIC_LEARNING,
    BUILDS,
    LearnProcess,
    assert_nothing_left,
    finish_ok,
    learn_args,
    trainer_config,
)

BASIC = BUILDS / "Basic.x86_64"
STEPS = 3000
VIDEO_FREQ = 1500
LEARNING_RATE = 3.0e-3
EPISODES = 10

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing"),
    # The module's training run (up to 300 s) counts in the first test that uses it.
    pytest.mark.timeout(420),
]
imageio = pytest.importorskip("imageio.v2")


@pytest.fixture(scope="module")
def trained(tmp_path_factory, free_port_range):
    """Train Basic for ``STEPS`` steps with a video every ``VIDEO_FREQ`` steps; returns the run's folder."""
    cwd = tmp_path_factory.mktemp("deploy")
    config = trainer_config(learning_rate=LEARNING_RATE, max_steps=STEPS, summary_freq=1000)
    (cwd / "config.yaml").write_text(config)
    port = free_port_range(1)
    frequencies = [f"--save-freq={VIDEO_FREQ}", f"--video-freq={VIDEO_FREQ}"]
    run = LearnProcess(cwd, *learn_args(BASIC, base_port=port, run_id="basic", seed=4, extra=frequencies))
    output = finish_ok(run, [port], timeout=300)
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


def python_policy_rewards(cwd: Path, port: int) -> list[float]:
    """The trained policy (its last checkpoint) acting through Python on the build."""
    env = UnityEnvironment(str(BASIC), worker_id=0, base_port=port, seed=11, no_graphics=True)
    try:
        settings = dict(
            BASIC_LEARNING,
            learning_rate=LEARNING_RATE,
            max_steps=STEPS,
            model_path=str(cwd / "models" / "basic-0" / "BasicLearning"),
            summary_path=str(cwd / "summaries" / "check"),
            keep_checkpoints=5,
            vis_encode_type="simple",
        )
        policy = PPOPolicy(11, env.brains["BasicLearning"], settings, is_training=False, load=True)
        return episode_rewards(env, "BasicLearning", lambda info: policy.get_action(info).action, EPISODES)
    finally:
        env.close()


def test_the_build_runs_the_model_as_python_does(trained, free_port_range):
    """The exported model acting inside the build (``--model``, its brain broadcast so that Python
    sees the rewards) earns what the trained policy earns acting through Python."""
    cwd, _ = trained
    port = free_port_range(2)
    through_python = python_policy_rewards(cwd, port)
    model = cwd / "models" / "basic-0" / "BasicLearning.nn"
    in_build = rewards_in_build(BASIC, "BasicLearning", model, port + 1, EPISODES)  # Basic has one agent
    assert_nothing_left([port, port + 1])
    # A random policy averages far below (about 0.1 to 0.3); the trained one about 0.9.
    assert np.mean(through_python) > 0.6, through_python
    assert within_noise(through_python, in_build), (through_python, in_build)


def test_a_model_of_another_brain_is_refused_by_the_build(trained):
    cwd, _ = trained
    model = cwd / "models" / "basic-0" / "BasicLearning.nn"
    ball = BUILDS / "3DBall.x86_64"
    done = subprocess.run(
        [str(ball), "--model", f"3DBallLearning={model}", "--run-steps", "10"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"The model {model} does not fit brain '3DBallLearning': the model has discrete actions, "
        "the brain continuous actions."
    )
