"""``mlagents-learn`` with test hooks for worker restarts (a script, not a test module).

Usage: ``python faulty_learn.py <mlagents-learn arguments>`` with the environment variable
``MLAGENTS_TEST_FAULTS`` holding a JSON object:

* ``"first_launch_args"``: worker id (as a string) -> extra build arguments for that worker's FIRST
  launch only, e.g. ``{"2": ["--fault-hang-after", "300"]}`` (the example builds' fault flags); a
  marker file per worker in ``"markers"`` (a folder) remembers the launches, so a restarted build
  runs normally;
* ``"args"``: extra build arguments for every launch of every worker (e.g. ``--frame-time-ms``);
* ``"exchange_timeout"``: seconds a worker waits for each answer of its build (default 120), short
  so that a hang is noticed quickly;
* ``"report"``: a JSON file written at exit: ``chunks`` (trajectory chunks that reached the update
  buffer) and ``breaks`` (chunks in which an agent's next observation is not the observation of its
  following step, i.e. a transition that crosses a restart or a reset).

Everything else is the real command: :func:`mlagents.trainers.learn.main` with the environment
factory wrapped so that its environments get those arguments.
"""

import atexit
import json
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.trainers import learn
from mlagents.trainers.buffer import Buffer

SETTINGS: dict[str, Any] = json.loads(os.environ.get("MLAGENTS_TEST_FAULTS", "{}"))
#: mlagents-learn's own environment factory, which :func:`faulty_environment_factory` wraps.
REAL_FACTORY = learn.create_environment_factory


def faulty_environment_factory(*args: Any, **kwargs: Any) -> Callable[..., BaseUnityEnvironment]:
    """The real factory (same arguments) whose environments get the first-launch arguments and the
    exchange timeout."""
    create_real = REAL_FACTORY(*args, **kwargs)
    first_launch_args: dict[str, list[str]] = SETTINGS.get("first_launch_args", {})
    every_launch_args: list[str] = SETTINGS.get("args", [])
    markers: str = SETTINGS.get("markers", ".")
    exchange_timeout = float(SETTINGS.get("exchange_timeout", 120.0))

    def create(worker_id: int, restart: int = 0) -> BaseUnityEnvironment:
        from mlagents.envs import environment

        marker = os.path.join(markers, f"worker-{worker_id}")
        args = list(every_launch_args)
        if not os.path.exists(marker):
            args += first_launch_args.get(str(worker_id), [])
        with open(marker, "a") as launches:
            launches.write("launch\n")
        # The real factory looks UnityEnvironment up in its module when it creates one.
        real_class = environment.UnityEnvironment
        environment.UnityEnvironment = partial(  # type: ignore[misc, assignment]
            real_class, args=args, exchange_timeout=exchange_timeout
        )
        try:
            return create_real(worker_id, restart)
        finally:
            environment.UnityEnvironment = real_class  # type: ignore[misc]

    return create


class ContinuityCheck:
    """Checks every trajectory chunk moved to the update buffer: step i's ``next_vector_in`` must be
    step i+1's ``vector_obs`` (the agent saw one continuous episode)."""

    def __init__(self) -> None:
        self.chunks = 0
        self.breaks: list[str] = []

    def install(self) -> None:
        original = Buffer.append_update_buffer
        check = self

        def append_update_buffer(buffer: Buffer, agent_id: Any, *args: Any, **kwargs: Any) -> None:
            check.check(agent_id, buffer[agent_id])
            original(buffer, agent_id, *args, **kwargs)

        Buffer.append_update_buffer = append_update_buffer  # type: ignore[method-assign]

    def check(self, agent_id: Any, agent_buffer: Any) -> None:
        observations = np.asarray(agent_buffer["vector_obs"])
        next_observations = np.asarray(agent_buffer["next_vector_in"])
        if len(observations) == 0:
            return
        self.chunks += 1
        for i in range(len(observations) - 1):
            if not np.array_equal(next_observations[i], observations[i + 1]):
                self.breaks.append(f"{agent_id} step {i} of {len(observations)}")
                return

    def write(self, path: str) -> None:
        with open(path, "w") as report:
            json.dump({"chunks": self.chunks, "breaks": self.breaks}, report)


def main() -> None:
    learn.create_environment_factory = faulty_environment_factory
    check = ContinuityCheck()
    check.install()
    report = SETTINGS.get("report")
    if report:
        atexit.register(check.write, report)
    learn.main(sys.argv[1:])


if __name__ == "__main__":
    main()
