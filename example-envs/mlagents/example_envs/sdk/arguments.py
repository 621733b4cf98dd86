"""The command line of an example build, read in one place.

Read by the launcher (``cli.py``: ``python -m mlagents.example_envs <Name> [arguments]``, which
every ``example-envs/builds/<Name>.x86_64`` runs), by its ``--record-video`` mode, and by
:func:`mlagents.example_envs.describe_build` (the brains a build would show Python, known without
starting it). Unknown arguments are ignored, as a Unity player ignores them.

Accepted like a Unity player: ``--port N`` (default 5005, also when it cannot be parsed),
``-nographics``, ``-batchmode``; the test hooks ``--frame-time-ms MS``,
``--fault-exit-after K``, ``--fault-hang-after K``, ``--fault-never-connect``,
``--api-version STR``.

What a Unity scene sets in its brain assets and Broadcast Hub (see ``brains.py``), repeatable:
``--brain-type BRAIN=KIND[:ARGUMENT]`` (``external`` by default, ``heuristic``, ``player[:turns]``
or a registered kind), ``--model BRAIN=PATH`` (short for ``--brain-type BRAIN=inference:PATH``:
the brain acts from an exported ``.nn`` model), ``--broadcast BRAIN`` (Python sees a brain the
build decides for), ``--record-demo BRAIN=NAME`` (write its agents' decisions to
``<folder>/<NAME>.demo``) with ``--demo-folder DIR`` (default ``Demonstrations``) and
``--demo-steps N``, ``--teacher TEACHER=BRAIN`` (a heuristic, broadcast copy of BRAIN's agents,
for online imitation); a build whose brains Python does not see runs on its own: ``--run-steps
N``, ``--seed S``. A build also reads these options from the environment variable
``MLAGENTS_BUILD_ARGS`` (placed before the command line's), so that a build started by
``mlagents-learn`` can be given them.

``--record-video PATH`` runs the scene in this process without Python and writes a video of it
instead (``video.py``), with ``--model``, ``--brain-type``, ``--episodes N``,
``--max-episode-steps N``, ``--video-size WxH``, ``--frame-skip N`` and ``--seed S``.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from .brains import BrainSettings, BrainSetupError
from .client import DEFAULT_PORT, ClientOptions
from .inference.brain import INFERENCE
from .scene import Scene
from .video import VideoOptions

__all__ = [
    "BUILD_ARGS_VARIABLE",
    "DEFAULT_PORT",
    "VideoRequest",
    "brain_settings",
    "build_arguments",
    "parse_assignment",
    "parse_brain_type",
    "parse_options",
    "settings_from_options",
    "video_request",
]

#: Environment variable with extra build arguments (shell syntax), read before the command line.
BUILD_ARGS_VARIABLE = "MLAGENTS_BUILD_ARGS"

logger = logging.getLogger("mlagents.example_envs")


# ------------------------------------------------------------------ the build's options
def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--port", default=None)
    parser.add_argument("-nographics", action="store_true")
    parser.add_argument("-batchmode", action="store_true")
    parser.add_argument("--frame-time-ms", type=float, default=0.0)
    parser.add_argument("--fault-exit-after", type=int, default=None)
    parser.add_argument("--fault-hang-after", type=int, default=None)
    parser.add_argument("--fault-never-connect", action="store_true")
    parser.add_argument("--api-version", default=None)
    parser.add_argument("--brain-type", action="append", default=[])
    parser.add_argument("--model", action="append", default=[])
    parser.add_argument("--broadcast", action="append", default=[])
    parser.add_argument("--record-demo", action="append", default=[])
    parser.add_argument("--teacher", action="append", default=[])
    parser.add_argument("--demo-folder", default="Demonstrations")
    parser.add_argument("--demo-steps", default="0")
    parser.add_argument("--run-steps", default="0")
    parser.add_argument("--seed", default="0")
    return parser


def _count(option: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise BrainSetupError(f"{option} takes a whole number, not {text!r}.") from None
    if value < 0:
        raise BrainSetupError(f"{option} takes a number >= 0, not {value}.")
    return value


def parse_brain_type(text: str) -> tuple[str, str, str | None]:
    """``BRAIN=KIND[:ARGUMENT]`` as (brain, kind, argument).

    :raises BrainSetupError: no ``=``, or an empty brain or kind.
    """
    brain, equals, rest = text.partition("=")
    kind, colon, argument = rest.partition(":")
    if not equals or not brain or not kind:
        raise BrainSetupError(
            f"--brain-type takes BRAIN=KIND[:ARGUMENT] (e.g. 3DBallLearning=heuristic), not {text!r}."
        )
    return brain, kind, argument if colon else None


def parse_assignment(option: str, text: str, example: str) -> tuple[str, str]:
    """``BRAIN=VALUE`` as (brain, value).

    :raises BrainSetupError: no ``=`` or an empty side.
    """
    brain, equals, value = text.partition("=")
    if not equals or not brain or not value:
        raise BrainSetupError(f"{option} takes BRAIN=VALUE (e.g. {example}), not {text!r}.")
    return brain, value


def settings_from_options(
    brain_types_: list[str],
    broadcast: list[str],
    record: list[str],
    demo_folder: str = "Demonstrations",
    demo_steps: int = 0,
    run_steps: int = 0,
    teachers: list[str] | None = None,
) -> BrainSettings:
    """A :class:`BrainSettings` from the command-line values (not yet checked against a scene).

    :raises BrainSetupError: a malformed or repeated value.
    """
    settings = BrainSettings(demo_folder=demo_folder, demo_steps=demo_steps, run_steps=run_steps)
    for text in brain_types_:
        brain, kind, argument = parse_brain_type(text)
        if brain in settings.kinds and settings.kinds[brain] != (kind, argument):
            raise BrainSetupError(f"--brain-type gives brain '{brain}' two types.")
        settings.kinds[brain] = (kind, argument)
    settings.broadcast.update(broadcast)
    for text in record:
        brain, name = parse_assignment("--record-demo", text, "3DBallLearning=Expert3DBall")
        if brain in settings.record and settings.record[brain] != name:
            raise BrainSetupError(f"--record-demo gives brain '{brain}' two demonstration names.")
        settings.record[brain] = name
    for text in teachers or []:
        teacher, copied = parse_assignment("--teacher", text, "BasicTeacher=BasicLearning")
        if settings.teachers.get(teacher, copied) != copied:
            raise BrainSetupError(f"--teacher gives the teacher '{teacher}' two brains to copy.")
        settings.teachers[teacher] = copied
    return settings


def brain_settings(arguments: Sequence[str], scene: type[Scene] | None = None) -> BrainSettings:
    """The brain types, broadcast and recordings given by ``arguments`` (checked against ``scene``).

    :raises BrainSetupError: a malformed value, an unknown brain or kind, a refused kind.
    """
    known, _unknown = _build_parser().parse_known_args(list(arguments))
    settings = settings_from_options(
        known.brain_type + [_model_as_brain_type(text) for text in known.model],
        known.broadcast,
        known.record_demo,
        demo_folder=known.demo_folder,
        demo_steps=_count("--demo-steps", known.demo_steps),
        run_steps=_count("--run-steps", known.run_steps),
        teachers=known.teacher,
    )
    if scene is not None:
        settings.validate(scene, scene.spec())
    return settings


def _model_as_brain_type(text: str) -> str:
    """``--model BRAIN=PATH`` as ``BRAIN=inference:PATH``.

    :raises BrainSetupError: no ``=`` or an empty side.
    """
    brain, path = parse_assignment("--model", text, "3DBallLearning=models/run-0/3DBallLearning.nn")
    return f"{brain}={INFERENCE}:{path}"


def build_arguments(arguments: Sequence[str]) -> list[str]:
    """``arguments`` preceded by those in ``$MLAGENTS_BUILD_ARGS``.

    :raises BrainSetupError: the variable is not valid shell syntax.
    """
    extra = os.environ.get(BUILD_ARGS_VARIABLE, "")
    try:
        return shlex.split(extra) + list(arguments)
    except ValueError as error:
        raise BrainSetupError(f"${BUILD_ARGS_VARIABLE} cannot be split into arguments: {error}.") from None


def parse_options(arguments: Sequence[str]) -> ClientOptions:
    """Build options from Unity-style arguments (unknown ones are ignored).

    :raises SystemExit: (status 2) when a test-hook flag has a malformed value.
    """
    known, _unknown = _build_parser().parse_known_args(list(arguments))
    port = DEFAULT_PORT
    if known.port is not None:
        try:
            port = int(known.port)
        except ValueError:
            # Unity falls back to the default port when --port cannot be parsed.
            logger.warning("--port %r is not a number; using %d.", known.port, DEFAULT_PORT)
    options = ClientOptions(port=port, frame_time_ms=known.frame_time_ms)
    options.fault_exit_after = known.fault_exit_after
    options.fault_hang_after = known.fault_hang_after
    options.fault_never_connect = known.fault_never_connect
    if known.api_version is not None:
        options.api_version = known.api_version
    try:
        options.seed = int(known.seed)
    except ValueError:
        logger.warning("--seed %r is not a number; using 0.", known.seed)
    return options


# ------------------------------------------------------------------ --record-video
@dataclass(frozen=True)
class VideoRequest:
    """What ``--record-video`` asks for: the file to write and how to record it."""

    path: str
    options: VideoOptions


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--video-size takes WIDTHxHEIGHT (e.g. 320x240), not {text!r}"
        ) from None
    if min(size) < 16 or max(size) > 4096:
        raise argparse.ArgumentTypeError(f"--video-size {text}: each side must be 16..4096 pixels")
    return size


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number is expected, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a number >= 1 is expected, not {value}")
    return value


def video_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mlagents.example_envs <Name> --record-video",
        description="Record episodes of an example to an MP4 or GIF file.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--record-video", required=True, metavar="PATH", help="the .mp4 or .gif file to write"
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="BRAIN=PATH",
        help="the brain acts from this exported .nn model (repeatable); other brains act with the "
        "scene's heuristic (or at random without one), or as --brain-type BRAIN=KIND says",
    )
    parser.add_argument(
        "--episodes", type=_positive, default=1, help="episodes of the first agent (default 1)"
    )
    parser.add_argument(
        "--max-episode-steps",
        type=_positive,
        default=500,
        help="cut an episode after this many steps (default 500)",
    )
    parser.add_argument("--video-size", type=_size, default=(320, 240), metavar="WxH", help="default 320x240")
    parser.add_argument(
        "--frame-skip", type=_positive, default=2, help="academy steps per frame (default 2: 25 fps)"
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser


def video_request(arguments: Sequence[str]) -> VideoRequest:
    """The video that ``arguments`` (an example's command line with ``--record-video``) ask for.

    :raises SystemExit: (status 2, with argparse's message) for a malformed video option.
    """
    known, _unknown = video_parser().parse_known_args(list(arguments))
    width, height = known.video_size
    options = VideoOptions(
        episodes=known.episodes,
        max_episode_steps=known.max_episode_steps,
        width=width,
        height=height,
        frame_skip=known.frame_skip,
        seed=known.seed,
    )
    return VideoRequest(known.record_video, options)
