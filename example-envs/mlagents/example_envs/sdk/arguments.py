"""The command line of an example build, read in one place.

Read by the launcher (``cli.py``: ``python -m mlagents.example_envs <Name> [arguments]``, which
every ``example-envs/builds/<Name>.x86_64`` runs), by its ``--record-video`` mode, and by
:func:`mlagents.example_envs.describe_build` (the brains a build would show Python, known without
starting it). Every option is declared, with its one-line help, in :func:`launcher_parser`
(``--help`` prints them: :func:`launcher_help`). A single-dash argument the build does not know is
a Unity player option (``-logFile FILE``, ``-screen-width 640``): accepted and ignored with the
word after it; an unknown ``--option`` or a stray word is refused (:func:`refused_argument`).

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .brains import BrainSettings, BrainSetupError
from .client import DEFAULT_PORT, ClientOptions
from .inference.brain import INFERENCE
from .scene import Scene
from .video import VideoOptions

__all__ = [
    "BUILD_ARGS_VARIABLE",
    "DEFAULT_PORT",
    "USAGE",
    "VIDEO_ONLY_OPTIONS",
    "VideoRequest",
    "brain_settings",
    "build_arguments",
    "launcher_help",
    "launcher_parser",
    "parse_assignment",
    "parse_brain_type",
    "parse_options",
    "refused_argument",
    "settings_from_options",
    "video_parser",
    "video_request",
    "wants_help",
]

#: Environment variable with extra build arguments (shell syntax), read before the command line.
BUILD_ARGS_VARIABLE = "MLAGENTS_BUILD_ARGS"

logger = logging.getLogger("mlagents.example_envs")


# ------------------------------------------------------------------ the build's options
#: How to call a build, at the top of ``--help`` and of argparse's errors.
USAGE = (
    "python -m mlagents.example_envs <Name | package.module:Class> [options]\n"
    "       example-envs/builds/<Name>.x86_64 [options]"
)


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


#: The options read only with ``--record-video`` (which also reads ``--model``, ``--brain-type`` and
#: ``--seed``): flag, value check, default, metavar, help.
VIDEO_ARGUMENTS: tuple[tuple[str, Callable[[str], Any], Any, str, str], ...] = (
    ("--episodes", _positive, 1, "N", "episodes of the first agent (default 1)"),
    ("--max-episode-steps", _positive, 500, "N", "cut an episode after N steps (default 500)"),
    ("--video-size", _size, (320, 240), "WxH", "frame size (default 320x240)"),
    ("--frame-skip", _positive, 2, "N", "academy steps per frame (default 2: 25 fps)"),
)
VIDEO_ONLY_OPTIONS = tuple(flag for flag, *_ in VIDEO_ARGUMENTS)


def _repeatable(add_argument: Callable[..., object], flag: str, metavar: str, help: str) -> None:
    """An option that may be given several times; its values are collected in a list."""
    add_argument(flag, action="append", default=[], metavar=metavar, help=help)


def _add_video_options(add_argument: Callable[..., object], checked: bool) -> None:
    """Declare :data:`VIDEO_ARGUMENTS` through ``add_argument`` (of a parser or group): with their value checks and defaults
    (``checked``, for recording) or as plain strings defaulting to None (the launcher, which only
    needs to know them)."""
    for flag, check, default, metavar, help_text in VIDEO_ARGUMENTS:
        if checked:
            add_argument(flag, type=check, default=default, metavar=metavar, help=help_text)
        else:
            add_argument(flag, default=None, metavar=metavar, help=help_text)


#: The rule for arguments the build does not know, printed by ``--help``.
OTHER_ARGUMENTS = (
    "Other arguments: one that starts with a single dash is a Unity player option (-logFile FILE, "
    "-screen-width 640, -screen-fullscreen 0, -force-glcore, ...): it is accepted and ignored, "
    "with the value that follows it; an unknown --option or a stray word is an error (exit 2). "
    f"${BUILD_ARGS_VARIABLE} holds more options (shell syntax), read before the command line's."
)


def launcher_parser() -> argparse.ArgumentParser:
    """Every option a build accepts, each with its one-line help (``--help`` prints them all).

    The video options are parsed again, with their checks, by :func:`video_parser`.
    """
    parser = argparse.ArgumentParser(
        prog="python -m mlagents.example_envs", usage=USAGE, add_help=False, allow_abbrev=False
    )
    unity = parser.add_argument_group("Unity player")
    unity.add_argument(
        "--port", default=None, metavar="N", help=f"port of the Python side (default {DEFAULT_PORT})"
    )
    unity.add_argument("-nographics", action="store_true", help="accepted (nothing is drawn on screen)")
    unity.add_argument("-batchmode", action="store_true", help="accepted (the build never waits for input)")
    brains = parser.add_argument_group("brains (a scene's brain assets and Broadcast Hub; repeatable)")
    _repeatable(
        brains.add_argument,
        "--brain-type",
        "BRAIN=KIND[:ARG]",
        "who decides for BRAIN: external (Python, the default), heuristic, player[:realtime|turns], "
        "inference:PATH or a registered kind",
    )
    _repeatable(
        brains.add_argument,
        "--model",
        "BRAIN=PATH",
        "short for --brain-type BRAIN=inference:PATH: BRAIN acts from an exported .nn model",
    )
    _repeatable(
        brains.add_argument,
        "--broadcast",
        "BRAIN",
        "Python also sees BRAIN although the build decides for it",
    )
    _repeatable(
        brains.add_argument,
        "--teacher",
        "TEACHER=BRAIN",
        "add a heuristic, broadcast brain TEACHER on a copy of BRAIN's agents (online imitation)",
    )
    demos = parser.add_argument_group("demonstrations")
    _repeatable(
        demos.add_argument,
        "--record-demo",
        "BRAIN=NAME",
        "record BRAIN's decisions to <folder>/NAME.demo (repeatable)",
    )
    demos.add_argument(
        "--demo-folder",
        default="Demonstrations",
        metavar="DIR",
        help="where recordings go (default Demonstrations)",
    )
    demos.add_argument(
        "--demo-steps",
        default="0",
        metavar="N",
        help="decisions per recording (default 0: until the build stops)",
    )
    alone = parser.add_argument_group("a build whose brains Python does not see runs on its own")
    alone.add_argument(
        "--run-steps", default="0", metavar="N", help="stop after N academy steps (default 0: never)"
    )
    alone.add_argument(
        "--seed", default="0", metavar="S", help="random seed (default 0; also of --record-video)"
    )
    video = parser.add_argument_group(
        "video (run in this process without Python and write a video; reads --model, --brain-type, --seed)"
    )
    video.add_argument("--record-video", default=None, metavar="PATH", help="the .mp4 or .gif file to write")
    _add_video_options(video.add_argument, checked=False)
    hooks = parser.add_argument_group("test hooks")
    hooks.add_argument(
        "--frame-time-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="sleep MS milliseconds per academy step (a fixed frame cost, for benchmarks)",
    )
    hooks.add_argument(
        "--api-version", default=None, metavar="STR", help="report this protocol version at start-up"
    )
    hooks.add_argument(
        "--fault-exit-after",
        type=int,
        default=None,
        metavar="K",
        help="exit at once after K exchanges (a crash)",
    )
    hooks.add_argument(
        "--fault-hang-after",
        type=int,
        default=None,
        metavar="K",
        help="stop answering after K exchanges (a hang)",
    )
    hooks.add_argument("--fault-never-connect", action="store_true", help="never connect to Python")
    return parser


def launcher_help(examples: Sequence[str] = ()) -> str:
    """The text of ``--help``: the usage, every option on one line, the rule for other arguments."""
    parser = launcher_parser()
    groups = [
        (group.title or "", list(group._group_actions))
        for group in parser._action_groups
        if group._group_actions
    ]
    rows = [("-h, --help", "print this help and exit")]
    sections: list[tuple[str, list[tuple[str, str]]]] = [("help", rows)]
    for title, actions in groups:
        lines = []
        for action in actions:
            invocation = ", ".join(action.option_strings)
            if action.nargs != 0:
                invocation += f" {action.metavar or action.dest.upper()}"
            lines.append((invocation, action.help or ""))
        sections.append((title, lines))
    width = max(len(invocation) for _, lines in sections for invocation, _ in lines) + 2
    text = [
        f"usage: {USAGE}",
        "",
        "Runs an example scene like a Unity build: it connects to Python (UnityEnvironment, "
        "mlagents-learn) on --port, or runs on its own.",
    ]
    for title, lines in sections:
        text += ["", f"{title}:"]
        text += [f"  {invocation:<{width}}{help_}" for invocation, help_ in lines]
    text += ["", OTHER_ARGUMENTS]
    if examples:
        text += ["", f"Known examples: {', '.join(examples)}."]
    return "\n".join(text) + "\n"


def wants_help(arguments: Sequence[str]) -> bool:
    """Whether ``arguments`` ask for the help (``-h`` or ``--help`` anywhere)."""
    return any(argument in ("-h", "--help") for argument in arguments)


def refused_argument(arguments: Sequence[str], video: bool = False) -> str | None:
    """A one-line message for the first argument a build refuses, or None when it takes them all.

    Refused: an unknown ``--option``, a word that is no option's value, a video option without
    ``--record-video`` (``video`` false). A single-dash argument the build does not know is a Unity
    player option, ignored with the word that follows it.

    :raises SystemExit: (status 2) when argparse refuses a known option's value.
    """
    known, extras = launcher_parser().parse_known_args(list(arguments))
    see = "run with --help to see the options"
    after_unity_option = False
    for argument in extras:
        if argument.startswith("--"):
            return f"Unknown option {argument.partition('=')[0]} ({see})."
        if argument.startswith("-") and argument != "-":
            after_unity_option = True
            continue
        if not after_unity_option:
            return f"Unexpected argument {argument!r}: it is no option's value ({see})."
        after_unity_option = False
    if not video:
        for option in VIDEO_ONLY_OPTIONS:
            if getattr(known, option[2:].replace("-", "_")) is not None:
                return f"{option} is only read with --record-video ({see})."
    return None


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
    known, _unknown = launcher_parser().parse_known_args(list(arguments))
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
    """Build options from Unity-style arguments (others are ignored here: the launcher refuses the
    ones :func:`refused_argument` names before it reads them).

    :raises SystemExit: (status 2) when a test-hook flag has a malformed value.
    """
    known, _unknown = launcher_parser().parse_known_args(list(arguments))
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


def video_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mlagents.example_envs <Name> --record-video",
        description="Record episodes of an example to an MP4 or GIF file.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--record-video", required=True, metavar="PATH", help="the .mp4 or .gif file to write"
    )
    _repeatable(
        parser.add_argument,
        "--model",
        "BRAIN=PATH",
        "the brain acts from this exported .nn model (repeatable); other brains act with the "
        "scene's heuristic (or at random without one), or as --brain-type BRAIN=KIND says",
    )
    _add_video_options(parser.add_argument, checked=True)
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
