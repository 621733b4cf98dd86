"""Command line of an example build: ``python -m mlagents.example_envs <Name> [Unity arguments]``.

``<Name>`` is a name registered in the scene catalogue (``3DBall``; the example environments
register theirs when ``mlagents.example_envs.registry`` is imported, as ``python -m
mlagents.example_envs`` does) or ``package.module:Class`` for your own scene.

Accepted like a Unity player: ``--port N`` (default 5005, also when it cannot be parsed),
``-nographics``, ``-batchmode``; the test hooks ``--frame-time-ms MS``,
``--fault-exit-after K``, ``--fault-hang-after K``, ``--fault-never-connect``,
``--api-version STR``. Unknown arguments are ignored, as Unity ignores them.

What a Unity scene sets in its brain assets and Broadcast Hub (see ``brains.py``), repeatable:
``--brain-type BRAIN=KIND[:ARGUMENT]`` (``external`` by default, ``heuristic``, ``player[:turns]``
or a registered kind), ``--broadcast BRAIN`` (Python sees a brain the build decides for),
``--record-demo BRAIN=NAME`` (write its agents' decisions to ``<folder>/<NAME>.demo``) with
``--demo-folder DIR`` (default ``Demonstrations``) and ``--demo-steps N``, ``--teacher
TEACHER=BRAIN`` (a heuristic, broadcast copy of BRAIN's agents, for online imitation); a build whose brains
Python does not see runs on its own: ``--run-steps N``, ``--seed S``. These options are also read
from the environment variable ``MLAGENTS_BUILD_ARGS`` (placed before the command line's), so a
build started by ``mlagents-learn`` can be given them. A wrong brain name or kind exits with
status 2 and a one-line message. ``--model BRAIN=PATH`` is short for
``--brain-type BRAIN=inference:PATH`` (the brain acts from an exported ``.nn`` model).

``--record-video PATH`` runs the scene in this process without Python and writes a video of it
instead (``video.py``).
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import signal
import sys
from collections.abc import Sequence

from .brains import BrainSettings, BrainSetupError, parse_assignment, settings_from_options
from .catalogue import registered_scenes
from .client import ClientOptions, run_client
from .loading import resolve_scene
from .scene import Scene

#: Environment variable with extra build arguments (shell syntax), read before the command line.
BUILD_ARGS_VARIABLE = "MLAGENTS_BUILD_ARGS"

DEFAULT_PORT = 5005

logger = logging.getLogger("mlagents.example_envs")


def _parser() -> argparse.ArgumentParser:
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


def brain_settings(arguments: Sequence[str], scene: type[Scene] | None = None) -> BrainSettings:
    """The brain types, broadcast and recordings given by ``arguments`` (checked against ``scene``).

    :raises BrainSetupError: a malformed value, an unknown brain or kind, a refused kind.
    """
    known, _unknown = _parser().parse_known_args(list(arguments))
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
    return f"{brain}=inference:{path}"


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
    known, _unknown = _parser().parse_known_args(list(arguments))
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


def _configure_logging() -> None:
    """Short lines on stderr, whatever an imported library configured for the root logger."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the example named by the first argument; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    _configure_logging()
    known = ", ".join(sorted(registered_scenes()))
    if not arguments or arguments[0].startswith("-"):
        sys.stderr.write(
            "usage: python -m mlagents.example_envs <Name | package.module:Class> [--port N] "
            "[-nographics] [-batchmode]\n"
            f"Known examples: {known}.\n"
        )
        return 2
    name = arguments[0]
    try:
        scene = resolve_scene(name)
    except (KeyError, ValueError) as error:
        sys.stderr.write(f"{error.args[0]}\n")
        return 2
    if "--record-video" in arguments:
        from .video import video_main

        return video_main(scene, arguments[1:])
    try:
        build_args = build_arguments(arguments[1:])
        settings = brain_settings(build_args, scene)
    except BrainSetupError as error:
        sys.stderr.write(f"{error}\n")
        return 2
    options = parse_options(build_args)
    options.brains = settings
    if settings.record:
        # End on SIGTERM through the normal exits, so that recordings are closed with their counts.
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return run_client(scene, options)
    except KeyboardInterrupt:
        return 0


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
