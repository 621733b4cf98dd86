"""The interface every communicator (gRPC, legacy socket, mock) implements."""

import logging
from collections.abc import Callable

from mlagents.envs.communicator_objects import UnityInput, UnityOutput

logger = logging.getLogger("mlagents.envs")

API_VERSION = "API-9"
"""The protocol version this package speaks (sent by the environment at initialization)."""
COMPATIBLE_API_VERSIONS = ("API-9", "API-8")
"""Versions accepted from an environment: API-8 (ML-Agents 0.8) uses the same schema as API-9."""

PeerCheck = Callable[[], None]
"""Called now and then while a communicator waits for the environment; raises (e.g.
``UnityCommunicationException``) to abandon the wait, for instance when the build process exited."""


class Communicator:
    """Carries messages between Python and one environment.

    :param worker_id: number of this environment; the port is ``base_port + worker_id``.
    :param base_port: first port of the range used by environments.
    """

    def __init__(self, worker_id: int = 0, base_port: int = 5005) -> None:
        self.peer_check: PeerCheck | None = None

    def initialize(self, inputs: UnityInput) -> UnityOutput:
        """Send the academy parameters and return the environment's initialization output.

        :param inputs: a ``UnityInput`` carrying ``rl_initialization_input``.
        :raises UnityTimeOutException: the environment did not connect in time.
        """

    def exchange(self, inputs: UnityInput) -> UnityOutput | None:
        """Send ``inputs`` and return the environment's next output.

        :return: the output, or None when the environment stopped the conversation.
        """

    def close(self) -> None:
        """Tell the environment to stop and release every resource (sockets, threads)."""

    def set_peer_check(self, check: PeerCheck | None) -> None:
        """Install a callable that is run about every 0.25 s while waiting for the environment;
        whatever it raises ends the wait (used to notice a build process that exited)."""
        self.peer_check = check
