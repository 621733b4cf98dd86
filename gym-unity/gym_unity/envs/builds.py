"""The one place where gym_unity starts, restarts and ends Unity environments.

``LaunchOptions`` are the keyword-only constructor arguments every wrapper takes to say how its
build is started. ``Builds`` holds the running ``UnityEnvironment`` of each build of a wrapper (one
for ``UnityEnv``, ``UnityGymnasiumEnv`` and ``UnityParallelEnv``; ``n_envs`` for ``UnityVecEnv``):
it starts them, resets and steps them, restarts one with a new seed (the only way to seed a Unity
environment after start-up) and ends them. With several builds, Python waits for each in its own
thread, so that they start and step in parallel while Python only encodes and decodes messages.
"""

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypedDict, TypeVar

import numpy as np

from gym_unity.envs.exception import UnityGymException
from mlagents.envs.brain import AllBrainInfo
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import UnityEnvironmentException

logger = logging.getLogger("gym_unity")

T = TypeVar("T")

#: Largest seed the wire carries (``UnityRLInitializationInput.seed`` is an int32).
MAX_UNITY_SEED = 2**31 - 1


class LaunchOptions(TypedDict, total=False):
    """How a wrapper starts its build(s): the keyword-only arguments that every wrapper takes (each
    optional; defaults in ``LAUNCH_DEFAULTS``).

    :ivar base_port: first port of the range; build ``i`` listens on ``base_port + worker_id + i``
        (default 5005, the port the original always used).
    :ivar seed: random seed sent to the environment at start-up (default 0); build ``i`` of a
        wrapper with several gets ``seed + i``.
    :ivar timeout_wait: seconds to wait for the build to connect (default 30).
    :ivar exchange_timeout: seconds to wait for each answer of the build (default 120).
    :ivar args: extra command-line arguments for the build (default none).
    :ivar train_mode: reset in training configuration (fast, the default) or inference
        configuration (real time).
    :ivar log_dir: folder for the build's log (kept); by default a temporary folder, removed on a
        clean close and kept when the environment failed (see ``UnityEnvironment``).
    """

    base_port: int
    seed: int
    timeout_wait: float
    exchange_timeout: float
    args: Sequence[str] | None
    train_mode: bool
    log_dir: str | None


LAUNCH_DEFAULTS: LaunchOptions = {
    "base_port": 5005,
    "seed": 0,
    "timeout_wait": 30,
    "exchange_timeout": 120.0,
    "args": None,
    "train_mode": True,
    "log_dir": None,
}


def _launch_options(owner: str, launch: LaunchOptions) -> LaunchOptions:
    """``launch`` completed with ``LAUNCH_DEFAULTS``.

    :param owner: the wrapper class whose constructor received ``launch`` (named in the error).
    :raises TypeError: ``launch`` has a key that is not one of ``LaunchOptions``, as Python says
        of any unexpected keyword argument.
    """
    unknown = sorted(set(launch) - set(LAUNCH_DEFAULTS))
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
    return {**LAUNCH_DEFAULTS, **launch}


def unity_seed(seed: Any) -> int:
    """A seed as the int32 the wire carries (larger seeds are folded into ``[0, 2**31 - 1]``).

    :raises UnityGymException: ``seed`` is not an integer.
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise UnityGymException(f"The seed must be an integer, got {seed!r}.")
    seed = int(seed)
    if -(2**31) <= seed <= MAX_UNITY_SEED:
        return seed
    return seed % (MAX_UNITY_SEED + 1)


@contextlib.contextmanager
def _quiet_logger(name: str) -> Iterator[None]:
    """Only warnings and errors of logger ``name`` inside the block."""
    target = logging.getLogger(name)
    level = target.level
    target.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        target.setLevel(level)


def _close_environment(environment: UnityEnvironment) -> None:
    """End ``environment`` and its build process, whatever state it is in.

    ``UnityEnvironment.close()`` raises ``UnityEnvironmentException`` when nothing is loaded: the
    environment was closed already, by us or by itself when its build failed (it then ended the
    build and kept the log). Either way nothing is left to end.
    """
    with contextlib.suppress(UnityEnvironmentException):
        environment.close()


class Builds:
    """``count`` Unity environments of the same build on ports ``base_port + worker_id + i``,
    build ``i`` started with seed ``seed + i``.

    :param owner: the wrapper class (named in errors).
    :param launch: the wrapper's ``LaunchOptions`` as given (missing ones take their defaults).
    :ivar environments: the running ``UnityEnvironment`` of each build.
    :ivar seeds: the seed each build was started with.
    :raises TypeError: ``launch`` has a key that is not one of ``LaunchOptions``.
    :raises UnityGymException: several builds asked of an environment started by hand
        (``environment_filename=None``), or a seed that is not an integer.
    :raises mlagents.envs.exception.UnityException: a build could not be started (the others that
        started are ended).
    """

    def __init__(
        self,
        owner: str,
        environment_filename: str | None,
        worker_id: int,
        no_graphics: bool,
        launch: LaunchOptions,
        count: int = 1,
    ) -> None:
        options = _launch_options(owner, launch)
        if environment_filename is None and count != 1:
            raise UnityGymException(
                "environment_filename=None connects to one environment started by hand (the Unity Editor); "
                f"it cannot start {count} of them. Give the path of a build, or use one environment."
            )
        self._owner = owner
        self._filename = environment_filename
        self._worker_id = worker_id
        self._no_graphics = no_graphics
        self._options = options
        self.train_mode = bool(options["train_mode"])
        self._closed = False
        self.environments: list[UnityEnvironment] = []
        self.seeds = [unity_seed(options["seed"] + i) for i in range(count)]
        # Exchanges (resets and steps) with each build since it started; 1 is only the start-up reset.
        self._exchanges = [0] * count
        self._pool = (
            ThreadPoolExecutor(max_workers=count, thread_name_prefix="gym-unity-build") if count > 1 else None
        )
        self.environments = self._start_all(self.seeds)

    # ----------------------------------------------------------------------------------------------
    # Starting

    def _start(self, index: int, seed: int) -> UnityEnvironment:
        """Start build ``index`` with ``seed``: the one place gym_unity creates a UnityEnvironment."""
        args = self._options["args"]
        return UnityEnvironment(
            self._filename,
            self._worker_id + index,
            base_port=self._options["base_port"],
            seed=seed,
            no_graphics=self._no_graphics,
            timeout_wait=self._options["timeout_wait"],
            args=list(args) if args is not None else [],
            exchange_timeout=self._options["exchange_timeout"],
            log_dir=self._options["log_dir"],
        )

    def _start_all(self, seeds: Sequence[int]) -> list[UnityEnvironment]:
        """Start every build (in parallel); if any fails, end those that started and raise the
        first error."""
        if self._pool is None:
            return [self._start(0, seeds[0])]
        futures = [self._pool.submit(self._start, i, seed) for i, seed in enumerate(seeds)]
        started: list[UnityEnvironment] = []
        error: BaseException | None = None
        for future in futures:  # every start is waited for, so that no build is left running
            try:
                started.append(future.result())
            except BaseException as failure:
                error = error or failure
        if error is not None:
            self.environments = started
            self.close()
            raise error
        return started

    # ----------------------------------------------------------------------------------------------
    # Driving the builds

    @property
    def count(self) -> int:
        return len(self.environments)

    @property
    def filename(self) -> str | None:
        """The build's path; None for an environment started by hand."""
        return self._filename

    @property
    def closed(self) -> bool:
        """True once ``close()`` ended the builds (also after a failed restart)."""
        return self._closed

    def require_open(self) -> None:
        """:raises UnityGymException: the builds were ended."""
        if self._closed:
            raise UnityGymException(f"The {self._owner} is closed; create a new one to continue.")

    def map(self, function: Callable[[int], T]) -> list[T]:
        """``[function(0), function(1), ...]`` over the builds, in parallel when there are several."""
        if self._pool is None:
            return [function(0)]
        return list(self._pool.map(function, range(self.count)))

    def submit(self, function: Callable[..., T], *args: Any) -> "Future[T]":
        """Run ``function(*args)`` in a build thread (at once, in this thread, with one build)."""
        if self._pool is not None:
            return self._pool.submit(function, *args)
        future: Future[T] = Future()
        try:
            future.set_result(function(*args))
        except BaseException as error:
            future.set_exception(error)
        return future

    def reset(self, index: int, config: dict[str, float] | None = None) -> AllBrainInfo:
        """Reset build ``index`` (an Academy reset), in the training or inference configuration.

        :param config: reset parameters to change; None keeps those in effect.
        """
        self.require_open()
        answer = self.environments[index].reset(config=config, train_mode=self.train_mode)
        self._exchanges[index] += 1
        return answer

    def step(self, index: int, vector_action: Any) -> AllBrainInfo:
        """Send ``vector_action`` (as ``UnityEnvironment.step`` takes it) to build ``index`` and
        return its next decisions."""
        self.require_open()
        answer = self.environments[index].step(vector_action)
        self._exchanges[index] += 1
        return answer

    # ----------------------------------------------------------------------------------------------
    # Seeding by restart

    def reseed(self, index: int, seed: Any) -> AllBrainInfo | None:
        """Restart build ``index`` with ``seed`` (see ``unity_seed``) and reset it as at start-up, so
        that a seed always gives the same episodes (a Unity environment takes its seed only when it
        starts).

        Nothing is done when the build is still exactly as started with ``seed`` (only its
        start-up reset happened), nor, with a warning, for an environment started by hand, which
        cannot be restarted. The reset parameters in effect stay in effect.

        :return: the answer to the start-up reset of the new build; None when it was not restarted.
        :raises UnityGymException: ``seed`` is not an integer, or the new build declares other
            brains than the old one.
        :raises mlagents.envs.exception.UnityException: the build could not be restarted.
            After any error every build is ended (``closed`` is True).
        """
        self.require_open()
        seed = unity_seed(seed)
        if seed == self.seeds[index] and self._exchanges[index] == 1:
            return None
        if self._filename is None:
            logger.warning(
                "The seed %d is ignored: an environment that was started by hand (the Unity Editor) cannot be "
                "restarted with a new seed; it keeps the seed %d it was started with.",
                seed,
                self.seeds[index],
            )
            return None
        try:
            answer = self._restart(index, seed)
        except BaseException:
            self.close()
            raise
        logger.info("Restarted '%s' with seed %d.", self.environments[index].academy_name, seed)
        return answer

    def _restart(self, index: int, seed: int) -> AllBrainInfo:
        old = self.environments[index]
        brains = dict(old.brains)
        parameters = dict(old.reset_parameters)
        _close_environment(old)
        # The start-up banner was shown once already; the restart is announced in one line.
        with _quiet_logger("mlagents.envs"):
            new = self._start(index, seed)
        self.environments[index] = new
        self.seeds[index] = seed
        self._exchanges[index] = 0
        if new.brains != brains:
            raise UnityGymException(
                f"After a restart with seed {seed}, the environment no longer declares the brains "
                f"{sorted(brains)} it had at start-up (it declares {sorted(new.brains)})."
            )
        return self.reset(index, parameters if parameters != new.reset_parameters else None)

    # ----------------------------------------------------------------------------------------------
    # Ending

    def close(self) -> None:
        """End every build and the threads; safe to call several times."""
        if self._closed:
            return
        self._closed = True
        for environment in self.environments:
            with contextlib.suppress(Exception):
                _close_environment(environment)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
