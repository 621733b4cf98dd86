"""Command line of an example build: ``python -m mlagents.example_envs <Name> [Unity arguments]``.

``<Name>`` is a name registered in the scene catalogue (``3DBall``; the example environments
register theirs when ``mlagents.example_envs.registry`` is imported, as ``python -m
mlagents.example_envs`` does) or ``package.module:Class`` for your own scene.

Accepted like a Unity player: ``--port N`` (default 5005, also when it cannot be parsed),
``-nographics``, ``-batchmode``; the test hooks ``--frame-time-ms MS``,
``--fault-exit-after K``, ``--fault-hang-after K``, ``--fault-never-connect``,
``--api-version STR``. Unknown arguments are ignored, as Unity ignores them.

``--record-video PATH`` runs the scene without Python and writes a video instead (``video.py``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from .catalogue import registered_scenes
from .client import ClientOptions, run_client
from .loading import resolve_scene

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
    return parser


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
    options = parse_options(arguments[1:])
    try:
        return run_client(scene, options)
    except KeyboardInterrupt:
        return 0
