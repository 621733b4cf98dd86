"""Overhead of the example-environment SDK itself (the Academy engine and the wire), without
physics: prints microseconds per Python step for

* Basic through LocalEnvironment (1 on-demand agent, one academy step per decision),
* an empty 12-agent scene shaped like 3DBall (8 observations, 2 continuous actions, N = 5)
  through LocalEnvironment, i.e. the engine's share of a 3DBall step,
* Basic over real gRPC on loopback (the build as a subprocess, a minimal Python server here).

Usage: python benchmarks/sdk_overhead.py [--steps N]
"""
from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc
import numpy as np
from mlagents.envs.communicator_objects import (
    EnvironmentParametersProto,
    Header,
    UnityInput,
    UnityMessage,
    UnityRLInitializationInput,
    UnityRLInput,
)
from mlagents.envs.communicator_objects import unity_to_external_pb2_grpc as service

from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.sdk.scene import AgentGroup, BrainSpec, Scene, SceneSpec

BASIC_BUILD = Path(__file__).resolve().parents[1] / "example-envs" / "builds" / "Basic.x86_64"


class EmptyBall(Scene):
    """3DBall's shape without its physics: 12 agents, N = 5, obs 8, continuous 2."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            "Empty", [BrainSpec("E", 8, "continuous", (2,))], [AgentGroup("E", 12, max_step=5000, decision_interval=5)]
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


class _Server(service.UnityToExternalServicer):
    def __init__(self) -> None:
        self.calls: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()

    def Exchange(self, request, context):  # noqa: N802
        self.calls.put(request)
        return self.replies.get()


def grpc_step_time(steps: int) -> float:
    servicer = _Server()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    service.add_UnityToExternalServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    env = dict(os.environ, MLAGENTS_PYTHON=sys.executable)
    build = subprocess.Popen([str(BASIC_BUILD), "--port", str(port)], env=env, stderr=subprocess.DEVNULL)
    try:
        servicer.calls.get(timeout=60)
        seed = UnityInput(rl_initialization_input=UnityRLInitializationInput(seed=0))
        servicer.replies.put(UnityMessage(header=Header(status=200), unity_input=seed))
        servicer.calls.get(timeout=60)
        reset = UnityRLInput(command=1, is_training=True, environment_parameters=EnvironmentParametersProto())
        servicer.replies.put(UnityMessage(header=Header(status=200), unity_input=UnityInput(rl_input=reset)))
        servicer.calls.get(timeout=60)
        step = UnityRLInput()
        step.agent_actions["BasicLearning"].value.add(vector_actions=[0.0])
        message = UnityMessage(header=Header(status=200), unity_input=UnityInput(rl_input=step))

        def run() -> float:
            start = time.perf_counter()
            for _ in range(steps):
                servicer.replies.put(message)
                servicer.calls.get(timeout=60)
            return (time.perf_counter() - start) / steps

        return best_of(3, run)
    finally:
        servicer.replies.put(UnityMessage(header=Header(status=400)))
        build.wait(timeout=30)
        server.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
