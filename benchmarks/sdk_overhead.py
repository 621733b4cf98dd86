"""Overhead of the example-environment SDK itself (the Academy engine and the wire), without
physics: prints microseconds per Python step for

* Basic through LocalEnvironment (1 on-demand agent, one academy step per decision),
* an empty 12-agent scene shaped like 3DBall (8 observations, 2 continuous actions, N = 5)
  through LocalEnvironment, i.e. the engine's share of a 3DBall step,
* Basic over real gRPC on loopback (the build as a subprocess, against the minimal Python server
  of the SDK tests, example-envs/mlagents/example_envs/tests/mini_python.py).

Usage: python benchmarks/sdk_overhead.py [--steps N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import mlagents.example_envs.registry  # noqa: F401  (registers the examples' names)
from mlagents.envs.communicator_objects import Header, UnityInput, UnityMessage, UnityRLInput
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.sdk.scene import AgentGroup, BrainSpec, Scene, SceneSpec
from mlagents.example_envs.tests.mini_python import CLOSE, MiniPython

REPO = Path(__file__).resolve().parents[1]
BASIC_BUILD = REPO / "example-envs" / "builds" / "Basic.x86_64"


class EmptyBall(Scene):
    """3DBall's shape without its physics: 12 agents, N = 5, obs 8, continuous 2."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            "Empty",
            [BrainSpec("E", 8, "continuous", (2,))],
            [AgentGroup("E", 12, max_step=5000, decision_interval=5)],
        )

    def initialize(self) -> None:
        self.obs = np.zeros((12, 8), dtype=np.float32)

    def agent_reset(self, agents: np.ndarray) -> None:
        pass

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        return self.obs[agents]

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        self.academy.set_reward(agents, 0.1)


def best_of(repeats: int, function) -> float:
    return min(function() for _ in range(repeats))


def local_step_time(scene, brain: str, actions: np.ndarray, steps: int) -> float:
    env = LocalEnvironment(scene)
    env.reset()
    payload = {brain: actions}

    def run() -> float:
        start = time.perf_counter()
        for _ in range(steps):
            env.step(payload)
        return (time.perf_counter() - start) / steps

    return best_of(5, run)


def grpc_step_time(steps: int) -> float:
    python = MiniPython().start()
    env = dict(os.environ, MLAGENTS_PYTHON=sys.executable)
    build = subprocess.Popen(
        [str(BASIC_BUILD), "--port", str(python.port)], env=env, stderr=subprocess.DEVNULL
    )
    try:
        python.handshake(seed=0)
        python.reset()
        step = UnityRLInput()
        step.agent_actions["BasicLearning"].value.add(vector_actions=[0.0])
        # One message sent again and again: the timed loop is the round trip alone.
        message = UnityMessage(header=Header(status=200), unity_input=UnityInput(rl_input=step))

        def run() -> float:
            start = time.perf_counter()
            for _ in range(steps):
                python.reply(message)
                python.next_call()
            return (time.perf_counter() - start) / steps

        return best_of(3, run)
    finally:
        python.reply(CLOSE)
        build.wait(timeout=30)
        python.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=5000, help="Python steps per timed run")
    args = parser.parse_args()

    basic = local_step_time("Basic", "BasicLearning", np.zeros((1, 1), dtype=np.float32), args.steps)
    print(f"Basic, LocalEnvironment:        {basic * 1e6:8.1f} us per step (1 academy step, 1 agent)")
    empty = local_step_time(EmptyBall, "E", np.zeros((12, 2), dtype=np.float32), args.steps // 5)
    print(
        f"Empty 3DBall shape, Local:      {empty * 1e6:8.1f} us per step (5 academy steps, 12 agents) "
        f"= {12 * 5 / empty:,.0f} agent-physics-steps/s for the engine alone"
    )
    wire = grpc_step_time(max(200, args.steps // 5))
    print(f"Basic over gRPC (loopback):     {wire * 1e6:8.1f} us per step (round trip incl. protobuf)")


if __name__ == "__main__":
    main()
