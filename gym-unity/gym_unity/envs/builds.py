"""Starting, restarting and stepping several Unity environments of one build at the same time (the
builds of ``UnityVecEnv``; ``UnityParallelEnv`` uses one).

The builds are separate processes; Python waits for each of them in its own thread, so that they
start and step in parallel while Python only encodes and decodes the messages.
"""

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from gym_unity.envs.core import LAUNCH_DEFAULTS, LaunchOptions, _quiet_logger, _unity_seed
from gym_unity.envs.exception import UnityGymException
from mlagents.envs.brain import AllBrainInfo
from mlagents.envs.environment import UnityEnvironment

T = TypeVar("T")


def launch_options(owner: str, launch: LaunchOptions) -> LaunchOptions:
    """``launch`` completed with ``LAUNCH_DEFAULTS``.

    :raises TypeError: ``launch`` has a key that is not one of ``LaunchOptions``.
    """
    unknown = sorted(set(launch) - set(LAUNCH_DEFAULTS))
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
    return {**LAUNCH_DEFAULTS, **launch}


class Builds:
    """``count`` Unity environments of the same build on ports ``base_port + worker_id + i``,
    build ``i`` started with seed ``seed + i``.

    :ivar environments: the running ``UnityEnvironment`` of each build.
    :ivar seeds: the seed each build was started with.
    """

    def __init__(
        self,
        environment_filename: str | None,
        count: int,
        worker_id: int,
        no_graphics: bool,
        options: LaunchOptions,
    ) -> None:
        if environment_filename is None and count != 1:
            raise UnityGymException(
                "environment_filename=None connects to one environment started by hand (the Unity Editor); "
                f"it cannot start {count} of them. Give the path of a build, or use one environment."
            )
        self._filename = environment_filename
        self._worker_id = worker_id
        self._no_graphics = no_graphics
        self._options = options
        self.train_mode = bool(options["train_mode"])
        self.environments: list[UnityEnvironment] = []
        self.seeds: list[int] = []
        self._pool = (
            ThreadPoolExecutor(max_workers=count, thread_name_prefix="gym-unity-build") if count > 1 else None
        )
        seeds = [_unity_seed(options["seed"] + i) for i in range(count)]
        self.environments = self._start_all(seeds)
        self.seeds = seeds

    @property
    def count(self) -> int:
        return len(self.environments)

    def _launch(self, index: int, seed: int) -> UnityEnvironment:
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
        """Start every build (in parallel); if any fails, close those that started and raise the
        first error."""
        if self._pool is None:
            return [self._launch(0, seeds[0])]
        futures = [self._pool.submit(self._launch, i, seed) for i, seed in enumerate(seeds)]
        started: list[UnityEnvironment] = []
        error: BaseException | None = None
        for future in futures:  # every start is waited for, so that no build is left running
            try:
                started.append(future.result())
            except BaseException as failure:
                error = error or failure
        if error is not None:
            for environment in started:
                environment._close()
            self.close()
            raise error
        return started

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

    @property
    def filename(self) -> str | None:
        """The build's path; None for an environment started by hand."""
        return self._filename

    def reset(self, index: int, config: dict[str, float] | None = None) -> AllBrainInfo:
        """Reset build ``index`` (an Academy reset), in the training or inference configuration."""
        return self.environments[index].reset(config=config, train_mode=self.train_mode)

    def relaunch(self, index: int, seed: int) -> None:
        """Replace build ``index`` by a new process started with ``seed`` (same reset parameters)."""
        parameters = dict(self.environments[index].reset_parameters)
        self.environments[index]._close()
        with _quiet_logger("mlagents.envs"):
            environment = self._launch(index, seed)
        self.environments[index] = environment
        self.seeds[index] = seed
        changed = {k: v for k, v in parameters.items() if environment.reset_parameters.get(k) != v}
        if changed:
            environment.reset_parameters.update(changed)

    def close(self) -> None:
        """End every build and the threads; safe to call several times."""
        for environment in self.environments:
            with contextlib.suppress(Exception):
                environment._close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
