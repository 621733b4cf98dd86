"""``python -m mlagents.example_envs <Name> [arguments]``: an example run like a Unity build.

The entry point of every ``example-envs/builds/<Name>.x86_64``. ``<Name>`` is a name registered in
the scene catalogue (``3DBall``; the example environments register theirs when
``mlagents.example_envs.registry`` is imported, as ``python -m mlagents.example_envs`` does) or
``package.module:Class`` for your own scene. The arguments (Unity's, the brain types, recording,
``$MLAGENTS_BUILD_ARGS``) are read by ``arguments.py``; ``-h``/``--help`` prints every option and
exits 0 without starting anything; an unknown ``--option`` (single-dash Unity player options are
ignored), a wrong brain name or kind exits with status 2 and a one-line message. With ``--record-video PATH`` the scene runs in this process
without Python and a video of it is written instead (:func:`video_main`).
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Sequence

from .arguments import (
    USAGE,
    brain_settings,
    build_arguments,
    launcher_help,
    parse_options,
    refused_argument,
    video_request,
    wants_help,
)
from .brains import BrainSetupError
from .catalogue import registered_scenes, resolve_scene
from .client import run_client
from .scene import Scene
from .video import record_video, settings_controllers

__all__ = ["main", "video_main"]

logger = logging.getLogger("mlagents.example_envs")


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
    examples = sorted(registered_scenes())
    if wants_help(arguments):
        # Before the scene is resolved or anything starts: the help names every option.
        sys.stdout.write(launcher_help(examples))
        return 0
    if not arguments or arguments[0].startswith("-"):
        sys.stderr.write(
            f"usage: {USAGE}\n"
            "The first argument is the example's name; run with --help to see the options.\n"
            f"Known examples: {', '.join(examples)}.\n"
        )
        return 2
    name = arguments[0]
    try:
        scene = resolve_scene(name)
    except (KeyError, ValueError) as error:
        sys.stderr.write(f"{error.args[0]}\n")
        return 2
    if "--record-video" in arguments:
        refused = refused_argument(arguments[1:], video=True)
        if refused is not None:
            sys.stderr.write(f"{refused}\n")
            return 2
        return video_main(scene, arguments[1:])
    try:
        build_args = build_arguments(arguments[1:])
        refused = refused_argument(build_args)
        if refused is not None:
            sys.stderr.write(f"{refused}\n")
            return 2
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


def video_main(scene: type[Scene], arguments: Sequence[str]) -> int:
    """``--record-video`` on an example's command line: record, print one summary line; returns
    the exit status (2 with a one-line message for bad options, a bad model or missing packages)."""
    request = video_request(arguments)
    try:
        settings = brain_settings(arguments, scene)
    except BrainSetupError as error:
        sys.stderr.write(f"{error}\n")
        return 2
    started = time.monotonic()
    try:
        result = record_video(scene, request.path, request.options, settings_controllers(settings))
    except (ImportError, ValueError, OSError, RuntimeError) as error:
        sys.stderr.write(f"{str(error).splitlines()[0] if str(error) else type(error).__name__}\n")
        return 2
    seconds = time.monotonic() - started
    rewards = ", ".join(
        f"{name} {result.mean_reward(name):.3f} over {len(values)} agent episodes"
        for name, values in result.episode_rewards.items()
        if values
    )
    logger.info(
        "Recorded %d episode(s) of %s to %s: %d frames of %dx%d in %.1f s%s",
        result.episodes,
        scene.__name__,
        result.path,
        result.frames,
        result.frame_size[0],
        result.frame_size[1],
        seconds,
        f"; mean reward {rewards}." if rewards else ".",
    )
    return 0
