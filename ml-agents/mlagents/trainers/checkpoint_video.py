"""``mlagents-learn --video-freq=<n>``: a short video of the current policies every n steps.

When the run trains on an example environment (``--env`` names an example build such as
``example-envs/builds/3DBall.x86_64``), every ``n`` global steps :class:`CheckpointVideos` exports
the trained brains' models (``.nn``), records one episode of the example acting from them with
``python -m mlagents.example_envs <Name> --record-video`` (in a child process, waited for) into
``<model_path>/videos/step-<step>.mp4``, and writes frames of it to each brain's TensorBoard
summary as an image sequence (tag ``Policy/Video``, up to :data:`TENSORBOARD_FRAMES` frames).

A video that cannot be made (no OpenGL, imageio missing) is reported in one warning line and
training goes on.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from mlagents.trainers.exception import TrainerError

if TYPE_CHECKING:
    from mlagents.trainers.trainer import Trainer

__all__ = ["CheckpointVideos", "VideoSetupError", "example_name"]

LOGGER = logging.getLogger("mlagents.trainers")

#: Frames of each video written to TensorBoard (evenly spaced).
TENSORBOARD_FRAMES = 8


class VideoSetupError(TrainerError):
    """``--video-freq`` cannot be used with this run (one-line message)."""


def example_name(env_path: str | None) -> str:
    """The example an ``--env`` path starts (``.../3DBall.x86_64`` -> ``3DBall``).

    :raises VideoSetupError: no ``--env``, or it is not one of the example environments.
    """
    if env_path is None:
        raise VideoSetupError(
            "--video-freq needs --env with an example environment (example-envs/builds/<Name>.x86_64)."
        )
    try:
        import mlagents.example_envs as examples
    except ImportError:
        raise VideoSetupError(
            "--video-freq needs the example environments: pip install mlagents_example_envs[video]."
        ) from None
    name = examples.example_name(env_path)
    if name is None:
        raise VideoSetupError(
            f"--video-freq records the example environments only ({', '.join(examples.example_names())}); "
            f"{env_path} is not one."
        )
    return name


class CheckpointVideos:
    """Records the videos of one run.

    :param example: the example's name (see :func:`example_name`).
    :param trainers: brain -> trainer (``export_model()``, ``summary_writer``, ``policy.model_path``).
    :param model_path: the run's models folder; videos go to its ``videos/`` folder.
    :param every: global steps between two videos.
    """

    def __init__(
        self,
        example: str,
        trainers: Mapping[str, Trainer],
        model_path: str,
        every: int,
        episode_steps: int = 300,
        size: tuple[int, int] = (320, 240),
        timeout: float = 300.0,
    ) -> None:
        self.example = example
        self.trainers = trainers
        self.folder = os.path.join(model_path, "videos")
        self.every = int(every)
        self.episode_steps = int(episode_steps)
        self.size = size
        self.timeout = float(timeout)
        self.written: list[str] = []

    def due(self, global_step: int) -> bool:
        return self.every > 0 and global_step > 0 and global_step % self.every == 0

    def command(self, path: str, global_step: int) -> list[str]:
        command = [sys.executable, "-m", "mlagents.example_envs", self.example, "--record-video", path]
        for brain, trainer in self.trainers.items():
            command += ["--model", f"{brain}={trainer.policy.model_path}.nn"]
        command += [
            "--episodes",
            "1",
            "--max-episode-steps",
            str(self.episode_steps),
            "--video-size",
            f"{self.size[0]}x{self.size[1]}",
            "--seed",
            str(global_step),
        ]
        return command

    def record(self, global_step: int) -> str | None:
        """Export the models, record the video and log it to TensorBoard; returns its path (None
        when it could not be made)."""
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, f"step-{global_step}.mp4")
        for trainer in self.trainers.values():
            trainer.export_model()
        try:
            done = subprocess.run(
                self.command(path, global_step), capture_output=True, text=True, timeout=self.timeout
            )
        except subprocess.TimeoutExpired:
            LOGGER.warning("No video at step %d: recording took more than %.0f s.", global_step, self.timeout)
            return None
        if done.returncode != 0 or not os.path.isfile(path):
            reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
            LOGGER.warning("No video at step %d: %s", global_step, reason)
            return None
        self.written.append(path)
        LOGGER.info("Wrote the video %s", path)
        self._to_tensorboard(path, global_step)
        return path

    def _to_tensorboard(self, path: str, global_step: int) -> None:
        try:
            import imageio.v2 as imageio
        except ImportError:
            return
        frames = np.stack([np.asarray(frame)[..., :3] for frame in imageio.mimread(path, memtest=False)])
        chosen = frames[np.linspace(0, len(frames) - 1, min(TENSORBOARD_FRAMES, len(frames))).astype(int)]
        import tensorflow as tf

        for trainer in self.trainers.values():
            writer = trainer.summary_writer
            with writer.as_default():
                tf.summary.image("Policy/Video", chosen, step=global_step, max_outputs=len(chosen))
            writer.flush()
