"""Episode videos: a scene run in this process, its agents acting from exported models (or the
scene's heuristic, or at random), every few physics steps drawn (:mod:`.frames`) and written to
MP4 or GIF with imageio.

``python -m mlagents.example_envs <Name> --record-video out.mp4 [--model BRAIN=PATH] [--episodes N]``
(the options are read by ``arguments.py``, the command run by ``cli.py``). ``imageio`` (and ``imageio-ffmpeg`` for MP4) are the
optional extra ``video`` of mlagents_example_envs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .brains import BrainSettings, controllers_for
from .closing import Closable
from .frames import even, frame_source
from .heuristic import HeuristicController
from .local import LocalEnvironment
from .messages import DecisionBatch
from .scene import Scene
from .specs import BrainSpec

__all__ = [
    "VideoOptions",
    "VideoResult",
    "VideoUnavailable",
    "open_video_writer",
    "record_video",
    "settings_controllers",
]

#: ``decide(batch) -> actions`` float32 (k, action_length) (or (actions, memories)).
Decide = Callable[[DecisionBatch], Any]

VIDEO_FORMATS = (".mp4", ".gif")


class VideoUnavailable(ImportError):
    """imageio (or its ffmpeg plugin for MP4) is not installed (one-line message)."""


class VideoWriter(Closable):
    """Frames (uint8 (H, W, 3), all of one size) to an MP4 (H.264) or GIF file."""

    def __init__(self, path: str, fps: float) -> None:
        extension = os.path.splitext(path)[1].lower()
        if extension not in VIDEO_FORMATS:
            raise ValueError(f"A video file ends with {' or '.join(VIDEO_FORMATS)}, not {path!r}.")
        try:
            import imageio.v2 as imageio
        except ImportError:
            raise VideoUnavailable(
                "Videos need imageio: pip install 'mlagents_example_envs[video]' (imageio and imageio-ffmpeg)."
            ) from None
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        self.path = path
        self.frames = 0
        if extension == ".mp4":
            try:
                import imageio_ffmpeg  # noqa: F401
            except ImportError:
                raise VideoUnavailable(
                    "MP4 videos need imageio-ffmpeg: pip install 'mlagents_example_envs[video]' (or write a .gif)."
                ) from None
            self._writer: Any = imageio.get_writer(
                path, format="FFMPEG", mode="I", fps=fps, codec="libx264", quality=7, macro_block_size=2
            )
        else:
            self._writer = imageio.get_writer(path, format="GIF", mode="I", duration=1000.0 / fps, loop=0)

    def append(self, frame: np.ndarray) -> None:
        self._writer.append_data(np.ascontiguousarray(frame, dtype=np.uint8))
        self.frames += 1

    def close(self) -> None:
        self._writer.close()


def open_video_writer(path: str, fps: float) -> VideoWriter:
    """A :class:`VideoWriter` for ``path`` (``.mp4`` or ``.gif``).

    :raises VideoUnavailable: imageio (or imageio-ffmpeg for MP4) is missing.
    :raises ValueError: another extension.
    """
    return VideoWriter(path, fps)


@dataclass
class VideoOptions:
    """What to record.

    :ivar episodes: episodes of the first agent to record.
    :ivar max_episode_steps: academy steps after which an episode is cut (and the scene reset).
    :ivar frame_skip: academy steps (0.02 s each) per frame; the video plays in real time.
    """

    episodes: int = 1
    max_episode_steps: int = 500
    width: int = 320
    height: int = 240
    frame_skip: int = 2
    seed: int = 0
    train_mode: bool = False


@dataclass
class VideoResult:
    """What was recorded: frames, episodes of the first agent, and the rewards of every finished
    agent episode, per brain."""

    path: str
    frames: int
    episodes: int
    frame_size: tuple[int, int]
    episode_rewards: dict[str, list[float]] = field(default_factory=dict)

    def mean_reward(self, brain: str) -> float | None:
        rewards = self.episode_rewards.get(brain)
        return float(np.mean(rewards)) if rewards else None


class RandomController:
    """Uniform random actions (continuous in [-1, 1]; discrete among the allowed actions)."""

    def __init__(self, brain: BrainSpec, rng: np.random.Generator) -> None:
        self.brain = brain
        self.rng = rng

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        k = len(batch.agents)
        if self.brain.vector_action_space_type == "continuous":
            return self.rng.uniform(-1.0, 1.0, (k, self.brain.action_length)).astype(np.float32)
        actions = np.zeros((k, self.brain.action_length), dtype=np.float32)
        start = 0
        for b, size in enumerate(self.brain.vector_action_size):
            allowed = np.ones((k, size), dtype=bool)
            if batch.action_masks is not None:
                allowed = ~np.asarray(batch.action_masks[:, start : start + size], dtype=bool)
            scores = self.rng.random((k, size)) * allowed
            actions[:, b] = scores.argmax(axis=1)
            start += size
        return actions


def _actions_of(result: Any) -> np.ndarray:
    return result[0] if isinstance(result, tuple) else result


def record_video(
    scene: str | type[Scene],
    path: str,
    options: VideoOptions | None = None,
    controllers: Mapping[str, Any] | Callable[[Scene], Mapping[str, Any]] | None = None,
) -> VideoResult:
    """Run ``scene`` in this process and write a video of it to ``path``.

    :param controllers: brain -> an object with ``decide(batch)`` (a BrainController), or a
        function building them from the scene instance; brains without one act at random.
    :raises BrainSetupError: a controller cannot be made (a model of another brain).
    :raises VideoUnavailable: imageio is missing; :raises RenderingUnavailable: no offscreen OpenGL.
    """
    options = options or VideoOptions()
    env = LocalEnvironment(scene, seed=options.seed, train_mode=options.train_mode)
    academy = env.academy
    width, height = even(options.width), even(options.height)
    draw = frame_source(academy.scene, width, height)
    built = controllers(academy.scene) if callable(controllers) else dict(controllers or {})
    rng = np.random.default_rng(options.seed)
    deciders = {name: built.get(name) or RandomController(spec, rng) for name, spec in env.brains.items()}
    fps = 1.0 / (academy.FIXED_DELTA_TIME * max(1, options.frame_skip))
    writer = open_video_writer(path, fps)
    first_brain = next(iter(env.brains))
    tracked = academy.ids[academy.agents_of_brain(first_brain)[:1]]
    rewards: dict[str, dict[int, float]] = {name: {} for name in env.brains}
    finished: dict[str, list[float]] = {name: [] for name in env.brains}
    steps = {"count": 0}
    scene_instance = academy.scene
    physics_step = scene_instance.physics_step

    def physics_and_frame() -> None:
        physics_step()
        steps["count"] += 1
        if steps["count"] % max(1, options.frame_skip) == 0:
            writer.append(draw())

    scene_instance.physics_step = physics_and_frame  # type: ignore[method-assign]
    episodes = 0
    episode_start = 0
    try:
        batches = env.reset()
        writer.append(draw())
        while episodes < options.episodes:
            ended = False
            for name, batch in batches.items():
                totals = rewards[name]
                for agent, reward, done in zip(
                    batch.agents.tolist(), batch.rewards.tolist(), batch.local_done.tolist()
                ):
                    totals[agent] = totals.get(agent, 0.0) + reward
                    if done:
                        finished[name].append(totals.pop(agent))
                        if name == first_brain and tracked.size and agent == int(tracked[0]):
                            ended = True
            if ended or env.global_done:
                episodes += 1
                episode_start = steps["count"]
                if env.global_done:
                    batches = env.reset()
                    continue
            elif steps["count"] - episode_start >= options.max_episode_steps:
                episodes += 1
                episode_start = steps["count"]
                for totals in rewards.values():
                    totals.clear()
                batches = env.reset()
                continue
            if episodes >= options.episodes:
                break
            actions = {
                name: np.asarray(_actions_of(deciders[name].decide(batch)), dtype=np.float32)
                for name, batch in batches.items()
                if len(batch.agents)
            }
            batches = env.step(actions)
    finally:
        writer.close()
        env.close()
    return VideoResult(path, writer.frames, episodes, (width, height), finished)


def settings_controllers(settings: BrainSettings) -> Callable[[Scene], dict[str, Any]]:
    """A function building the controllers of a scene instance: the brain types of ``settings``
    (``--model``, ``--brain-type``), and for every other brain the scene's heuristic when it has
    one (else :class:`RandomController`, chosen by :func:`record_video`)."""

    def build(scene: Scene) -> dict[str, Any]:
        brains = scene.academy.brains
        controllers: dict[str, Any] = dict(controllers_for(scene, brains, settings))
        for name, brain in brains.items():
            if name not in controllers and type(scene).has_heuristic(name):
                controllers[name] = HeuristicController(scene, brain)
        return controllers

    return build
