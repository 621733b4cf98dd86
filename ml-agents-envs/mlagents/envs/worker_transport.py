"""The contract between the asynchronous env manager core and the ways its workers run.

:class:`~mlagents.envs.async_env_manager.AsyncEnvManager` steps several environments, each in a
worker, without knowing how a worker runs: as a local process behind a pipe
(:mod:`mlagents.envs.subprocess_env_manager`) or as a Ray actor (:mod:`mlagents.envs.ray_env_manager`).
It reaches them through a :class:`WorkerTransport`, which starts a worker, sends it one
:class:`WorkerCommand` at a time, waits (never longer than a timeout) for the outcomes of the
commands in flight, and ends workers.

Worker ``w`` (hence port ``base_port + w``) is a slot that holds one :class:`WorkerHandle` at a time;
a restart puts a new handle with the next ``generation`` into the slot. The core moves every handle
through the states of :class:`WorkerState`:

==========  =========  ===================================================================
state       in flight  next
==========  =========  ===================================================================
STARTING    its start  IDLE when ready; at once RESETTING if the manager was reset before
IDLE        nothing    STEPPING, RESETTING or ASKING when the core sends that command
STEPPING    a step     STEPPED with the result, which waits to be handed over
STEPPED     nothing    IDLE once the result is handed over; ASKING when asked meanwhile
RESETTING   a reset    IDLE, its first observations as its last transition
ASKING      question   back to IDLE, or to STEPPED if it holds a result
LOST        nothing    CLOSED once ended; a restart puts a new STARTING handle in the slot
==========  =========  ===================================================================

Any state in flight becomes LOST when its outcome is :class:`Lost`; CLOSED ends every state when
the manager closes. Each handle has at most one command in flight, so a worker's outcomes arrive
in the order of its commands, whatever the transport.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from enum import Enum, StrEnum
from typing import Any, Generic, NamedTuple, TypeVar

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import AllBrainInfo
from mlagents.envs.env_manager import StepInfo
from mlagents.envs.timers import TimerNode

__all__ = ["Lost", "StepResponse", "WorkerCommand", "WorkerHandle", "WorkerState", "WorkerTransport"]


class WorkerCommand(StrEnum):
    """What the core asks a worker to do. The values are the names on the wire (plain strings)."""

    STEP = "step"
    RESET = "reset"
    EXTERNAL_BRAINS = "external_brains"
    RESET_PARAMETERS = "reset_parameters"
    GLOBAL_DONE = "global_done"
    CLOSE = "close"


class WorkerState(Enum):
    """Where a worker is in its life (see the module docstring for the transitions).

    :ivar in_flight: True while the worker has a command in flight (the core waits on it).
    """

    STARTING = ("starting", True)  # creating its environment
    IDLE = ("idle", False)  # nothing in flight; its last observations wait for a decision
    STEPPING = ("stepping", True)  # a step in flight
    STEPPED = ("stepped", False)  # its step finished; the result waits to be handed over
    RESETTING = ("resetting", True)  # a reset in flight
    ASKING = ("asking", True)  # a question in flight (external brains, reset parameters, global done)
    LOST = ("lost", False)  # it failed: being ended, or its error was raised
    CLOSED = ("closed", False)  # ended

    def __init__(self, label: str, in_flight: bool) -> None:
        self.label = label
        # An attribute, not a set lookup: it is read for every worker on every pass of a wait.
        self.in_flight = in_flight


class StepResponse(NamedTuple):
    """The outcome of a step: the new observations and the worker's timers for that step."""

    all_brain_info: AllBrainInfo
    timer_root: TimerNode | None


class Lost(NamedTuple):
    """The outcome of a command whose worker was lost: why (the environment's own error, or an
    explanation such as "stopped unexpectedly" with the exit code)."""

    error: BaseException


class WorkerHandle:
    """The core's handle on one worker; each transport adds its connection (a process and pipe, an actor).

    :ivar worker_id: the worker's slot (its port is the factory's ``base_port + worker_id``).
    :ivar generation: 0 for the slot's first worker, one more for each restart in the slot.
    :ivar state: its :class:`WorkerState`, changed by the core only.
    :ivar previous_step: its last transition handed over (its current observations are the next input).
    :ivar previous_all_action_info: the actions of its step in flight (or of its last step).
    :ivar finished_step: the result of its finished step while ``STEPPED``, else None.
    :ivar answer: the answer to its last question.
    :ivar build_pid: process id of its environment's build, once known (None: unknown, or no build).
    :ivar build_log_path: the build's log file, once known (named when the worker is lost).
    """

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id
        self.generation = 0
        self.state = WorkerState.STARTING
        self.previous_step: StepInfo = StepInfo(None, {}, None)
        self.previous_all_action_info: dict[str, ActionInfo] = {}
        self.finished_step: StepResponse | None = None
        self.answer: Any = None
        self.build_pid: int | None = None
        self.build_log_path: str | None = None

    @property
    def waiting(self) -> bool:
        """True while a step is in flight (the flag of ML-Agents 0.9)."""
        return self.state is WorkerState.STEPPING

    def describe(self) -> str:
        """How log lines and errors name the worker, e.g. ``"UnityEnvironment worker 2"``."""
        return f"UnityEnvironment worker {self.worker_id}"


W = TypeVar("W", bound=WorkerHandle)


class WorkerTransport(ABC, Generic[W]):
    """How the core starts, talks to and ends its workers.

    A transport never blocks longer than the timeout it is given, and reports a lost worker as the
    outcome :class:`Lost` of its command in flight (whether to restart it is the core's decision).
    It raises only errors that end the run whatever the restart policy (e.g. a worker stopped by
    Ctrl-C, workers that could not be placed in time).
    """

    def open(self, n_env: int) -> None:
        """Get ready to run ``n_env`` workers (e.g. join a cluster and check its size); by default nothing.

        :raises: why the workers cannot run.
        """

    @abstractmethod
    def start_worker(self, worker_id: int, restart: int) -> W:
        """Start worker ``worker_id`` without waiting for it: a handle in state ``STARTING`` whose
        readiness is the outcome of a later :meth:`poll`.

        :param restart: how often this slot was restarted before (0: its first start), for the factory.
        """

    @abstractmethod
    def send(self, worker: W, command: WorkerCommand, payload: Any = None) -> None:
        """Send ``command`` to ``worker`` (which has nothing in flight); its outcome comes from :meth:`poll`.

        A worker found lost while sending is reported by the next :meth:`poll`, not raised here.
        """

    @abstractmethod
    def poll(self, workers: Sequence[W], timeout: float) -> list[tuple[W, Any]]:
        """Wait up to ``timeout`` seconds for the first outcome of the commands in flight of
        ``workers``, then take every outcome available.

        :returns: (worker, outcome) pairs, at most one per worker: the payload of its answer
            (readiness, :class:`StepResponse`, AllBrainInfo of a reset, the answer to a question),
            or :class:`Lost`. Empty when nothing arrived in time (the workers checked alive).
        :raises: an error that ends the run whatever the restart policy.
        """

    @abstractmethod
    def end_workers(self, workers: Sequence[W], timeout: float) -> None:
        """Ask ``workers`` to close their environments, wait up to ``timeout`` seconds for all of
        them together, then end the workers and their builds for sure. Never raises."""

    def close(self) -> None:
        """Release what the transport holds besides its workers (called once, after :meth:`end_workers`)."""
