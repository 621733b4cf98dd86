"""When a lost environment worker may be restarted: :class:`RestartPolicy`.

An env manager that loses a worker (its build crashed, hung past ``exchange_timeout`` or never
connected) asks the policy before it starts the worker again:

* :func:`is_restartable` tells a lost environment (worth a restart) from an error a restart would
  only repeat (a wrong build path, an invalid action, an incompatible API version);
* :meth:`RestartPolicy.request` counts the restart, or raises :class:`RestartLimitExceeded` when a
  limit is reached.

The limits apply to each worker on its own, as in later ML-Agents: at most
``max_lifetime_restarts`` restarts during the run, and at most ``rate_limit_n`` restarts within any
``rate_limit_period_s`` seconds. A limit of -1 means unlimited; 0 forbids restarts.

Example::

    policy = RestartPolicy(RestartLimits(max_lifetime_restarts=10, rate_limit_n=1, rate_limit_period_s=60))
    try:
        ...
    except UnityCommunicationException as error:
        if not is_restartable(error):
            raise
        policy.request(worker_id, error)  # raises RestartLimitExceeded past a limit
        ...  # close the worker for good and start it again
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from mlagents.envs.exception import (
    UnityCommunicationException,
    UnityTimeOutException,
)

__all__ = ["UNLIMITED", "RestartLimitExceeded", "RestartLimits", "RestartPolicy", "is_restartable"]

#: A limit value that means "no limit".
UNLIMITED = -1


@dataclass(frozen=True)
class RestartLimits:
    """How often one worker may be restarted (-1: unlimited).

    :ivar max_lifetime_restarts: restarts of one worker during the whole run
        (``--max-lifetime-restarts``).
    :ivar rate_limit_n: restarts of one worker within ``rate_limit_period_s`` seconds
        (``--restarts-rate-limit-n``).
    :ivar rate_limit_period_s: the window of the rate limit (``--restarts-rate-limit-period-s``).
    """

    max_lifetime_restarts: int = 10
    rate_limit_n: int = 1
    rate_limit_period_s: float = 60.0

    def __post_init__(self) -> None:
        for name in ("max_lifetime_restarts", "rate_limit_n"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < UNLIMITED:
                raise ValueError(f"{name} must be a whole number >= -1 (-1: unlimited), not {value!r}")
        if not self.rate_limit_period_s > 0:
            raise ValueError(f"rate_limit_period_s must be positive, not {self.rate_limit_period_s!r}")


class RestartLimitExceeded(UnityCommunicationException):
    """A worker was lost once more than its restart limits allow; the original error is the cause.

    :ivar worker_id: the worker.
    """

    #: mlagents-learn reports it under the name of the class it refines.
    report_as_parent = True

    def __init__(self, message: str, worker_id: int = -1) -> None:
        super().__init__(message)
        self.worker_id = worker_id


def is_restartable(error: BaseException) -> bool:
    """True for the errors of a lost environment: the build or its worker stopped or went silent
    (:class:`UnityCommunicationException`, :class:`UnityTimeOutException`). Configuration and usage
    errors (``UnityEnvironmentException``, ``UnityActionException``, a port in use...) are not."""
    if isinstance(error, RestartLimitExceeded):
        return False
    return isinstance(error, (UnityCommunicationException, UnityTimeOutException))


class RestartPolicy:
    """Counts the restarts of each worker and decides whether one more is allowed.

    :param limits: the limits (default: 10 in the run's lifetime, 1 per 60 seconds, per worker).
    :param clock: seconds, monotonic (for tests).
    :ivar total_restarts: restarts of all workers so far.
    """

    def __init__(
        self, limits: RestartLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or RestartLimits()
        self._clock = clock
        self._lifetime: dict[int, int] = {}
        self._recent: dict[int, deque[float]] = {}
        self.total_restarts = 0

    def restarts_of(self, worker_id: int) -> int:
        """Restarts of ``worker_id`` so far."""
        return self._lifetime.get(worker_id, 0)

    def refusal(self, worker_id: int) -> str | None:
        """Why one more restart of ``worker_id`` is not allowed now, or None when it is."""
        limits = self.limits
        lifetime = self.restarts_of(worker_id)
        if limits.max_lifetime_restarts != UNLIMITED and lifetime >= limits.max_lifetime_restarts:
            return (
                f"worker {worker_id} was restarted {lifetime} time(s), the limit of the run "
                f"(--max-lifetime-restarts={limits.max_lifetime_restarts}; -1 for no limit)"
            )
        recent = self._recent_restarts(worker_id)
        if limits.rate_limit_n != UNLIMITED and len(recent) >= limits.rate_limit_n:
            return (
                f"worker {worker_id} was restarted {len(recent)} time(s) in the last "
                f"{limits.rate_limit_period_s:g} seconds, the limit "
                f"(--restarts-rate-limit-n={limits.rate_limit_n} per --restarts-rate-limit-period-s="
                f"{limits.rate_limit_period_s:g}; -1 for no limit)"
            )
        return None

    def request(self, worker_id: int, error: BaseException | None = None) -> int:
        """Count one restart of ``worker_id`` if the limits allow it.

        :param error: why the worker was lost (named in the exception past the limit).
        :returns: the restart's number for that worker (1 for its first).
        :raises RestartLimitExceeded: a limit is reached (with ``error`` as its cause).
        """
        reason = self.refusal(worker_id)
        if reason is not None:
            lost = "" if error is None else f" after {type(error).__name__}: {first_line(error)}"
            exceeded = RestartLimitExceeded(
                f"UnityEnvironment worker {worker_id} was lost{lost}. Not restarting it: {reason}.",
                worker_id,
            )
            if error is not None:
                exceeded.__cause__ = error
            raise exceeded
        self._lifetime[worker_id] = self.restarts_of(worker_id) + 1
        self._recent.setdefault(worker_id, deque()).append(self._clock())
        self.total_restarts += 1
        return self._lifetime[worker_id]

    def _recent_restarts(self, worker_id: int) -> deque[float]:
        recent = self._recent.setdefault(worker_id, deque())
        horizon = self._clock() - self.limits.rate_limit_period_s
        while recent and recent[0] <= horizon:
            recent.popleft()
        return recent


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (for one-line log messages)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"
