"""The gRPC client: what a Unity build's communicator does.

Python is the server. The build connects to ``127.0.0.1:<port>`` (insecure), sends its
initialization output (call #1), receives the seed, makes the empty call #2 whose reply is the
first reset input, and then makes one call per exchange point. A reply with a status other
than 200, a failed call, a lost connection or a QUIT command end the build cleanly (exit
status 0). The calls are plain unary gRPC calls, made by :mod:`.http2` on the build's own thread.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass, field

from mlagents.envs.communicator_objects import Header, UnityMessage, unity_to_external_pb2

from .academy import Academy
from .brains import BrainSettings
from .http2 import ConnectionEnded, GrpcChannel
from .scene import Scene
from .specs import SceneSpec
from .wire import (
    API_VERSION,
    STATUS_OK,
    initialization_message,
    input_from_message,
    output_message_bytes,
)

logger = logging.getLogger("mlagents.example_envs")

#: The port a build connects to when its command line gives none (Unity's).
DEFAULT_PORT = 5005
#: How long a build keeps trying to reach Python before giving up (seconds).
CONNECT_TIMEOUT = 60.0

_METHOD = unity_to_external_pb2.DESCRIPTOR.services_by_name["UnityToExternal"].methods_by_name["Exchange"]
#: The path of the one method of the ``UnityToExternal`` service, as the generated code names it.
EXCHANGE = f"/{_METHOD.containing_service.full_name}/{_METHOD.name}"


@dataclass
class ClientOptions:
    """Command-line options of a build (read by ``arguments.py``)."""

    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    api_version: str = API_VERSION
    frame_time_ms: float = 0.0
    fault_exit_after: int | None = None
    fault_hang_after: int | None = None
    fault_never_connect: bool = False
    connect_timeout: float = CONNECT_TIMEOUT
    brains: BrainSettings = field(default_factory=BrainSettings)
    #: seed of a build that runs on its own (Python sends the seed otherwise)
    seed: int = 0


def _sleep_forever() -> None:
    while True:
        time.sleep(3600)


class _Faults:
    """The test hooks --fault-exit-after / --fault-hang-after, checked after each answered exchange."""

    def __init__(self, options: ClientOptions) -> None:
        self.exit_after = options.fault_exit_after
        self.hang_after = options.fault_hang_after

    def check(self, exchanges: int) -> None:
        if self.exit_after is not None and exchanges >= self.exit_after:
            sys.stderr.write("simulated crash\n")
            sys.stderr.flush()
            os._exit(3)  # no goodbye, no cleanup: like a crashing player
        if self.hang_after is not None and exchanges >= self.hang_after:
            logger.info("Simulated hang: no more answers.")
            _sleep_forever()


def run_client(scene: type[Scene], options: ClientOptions) -> int:
    """Connect to Python, run the scene until told to stop; returns the process exit status.

    0: Python closed the connection, sent QUIT or went away; 1: Python could not be reached
    within ``options.connect_timeout`` seconds.
    """
    if options.fault_never_connect:
        logger.info("Simulated build that never connects.")
        _sleep_forever()
    name = scene.__name__
    visible = options.brains.initialization_spec(scene.spec())
    if not visible.brains:
        return run_alone(scene, options)
    target = f"{options.host}:{options.port}"
    channel = GrpcChannel.connect(
        options.host,
        options.port,
        options.connect_timeout,
        on_wait=lambda: logger.info("%s: waiting for Python on %s ...", name, target),
    )
    if channel is None:
        logger.error(
            "%s: could not connect to Python on %s within %.0f s. Start the Python side first "
            "(e.g. UnityEnvironment(file_name=None) or mlagents-learn without --env) and use the same port.",
            name,
            target,
            options.connect_timeout,
        )
        return 1
    with channel:
        try:
            return _exchange_loop(scene, visible, channel, options)
        except ConnectionEnded as error:
            logger.info("%s: the connection to Python ended (%s); quitting.", name, error)
            return 0


def run_alone(scene: type[Scene], options: ClientOptions) -> int:
    """A build in which Python sees no brain: run without connecting (like a Unity player with an
    empty Broadcast Hub) until ``--run-steps`` steps are done, every recording is complete, or
    the build is stopped. Returns 0."""
    settings = options.brains
    academy = Academy(
        scene, seed=options.seed, frame_time=options.frame_time_ms / 1000.0, brain_settings=settings
    )
    logger.info("%s: no brain is sent to Python; running on its own.", scene.__name__)
    stop = (lambda: academy.recordings_complete) if settings.demo_steps else None
    try:
        steps = academy.run(max_steps=settings.run_steps, stop=stop)
    finally:
        academy.close()
    logger.info("%s: stopped after %d academy steps.", scene.__name__, steps)
    return 0


def _exchange(channel: GrpcChannel, payload: bytes) -> UnityMessage:
    """One call: the serialized ``UnityMessage`` ``payload`` to Python, its reply back."""
    return UnityMessage.FromString(channel.unary(EXCHANGE, payload))


def _exchange_loop(
    scene: type[Scene], visible: SceneSpec, channel: GrpcChannel, options: ClientOptions
) -> int:
    """Initialization with the scene as Python sees it (``visible``), then every exchange."""
    name = scene.__name__
    reply = _exchange(channel, initialization_message(visible, options.api_version).SerializeToString())
    if reply.header.status != STATUS_OK:
        logger.info("%s: Python refused the initialization (status %d); quitting.", name, reply.header.status)
        return 0
    seed = reply.unity_input.rl_initialization_input.seed
    logger.info("%s: connected to Python on %s:%d (seed %d).", name, options.host, options.port, seed)
    academy = Academy(
        scene, seed=seed, frame_time=options.frame_time_ms / 1000.0, brain_settings=options.brains
    )
    try:
        return _exchanges(academy, channel, options)
    finally:
        academy.close()


def _exchanges(academy: Academy, channel: GrpcChannel, options: ClientOptions) -> int:
    name = type(academy.scene).__name__
    brains = academy.brains
    reply = _exchange(channel, UnityMessage(header=Header(status=STATUS_OK)).SerializeToString())
    faults = _Faults(options)
    exchanges = 0
    faults.check(exchanges)
    while True:
        message = input_from_message(reply, brains)
        if message is None:
            logger.info("%s: Python closed the connection; quitting.", name)
            return 0
        output = academy.advance(message)
        if output is None:
            logger.info("%s: Python sent QUIT; quitting.", name)
            return 0
        reply = _exchange(channel, output_message_bytes(output))
        exchanges += 1
        faults.check(exchanges)
