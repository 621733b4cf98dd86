"""Cost of one decision and of one batch of bootstrap value estimates of PPOPolicy: the TensorFlow
graph against the numpy copy of the network (microseconds per call).

For Basic-, 3DBall- and Pyramids-sized networks (the shipped trainer configuration's sections: Basic
20 observations, 3 actions, 1 x 20 units; 3DBall 8 observations, 2 continuous actions, 2 x 128 units
with normalization; Pyramids 172 observations, 5 actions, 2 x 512 units with a curiosity value head)
and 1, 12 and 48 agents per call, a training policy (the normalizer updates at every decision) runs

* ``get_action`` (what the env manager calls once per step: the network, the sampling and, while
  training, the normalizer update), and
* ``get_batched_value_estimates`` (what the trainer calls for trajectories cut at ``time_horizon``),

first with ``set_fast_inference(False)`` (TensorFlow), then with the numpy path, alternating rounds
so both sides see the same machine load; each figure is the median of the rounds, in CPU time of the
process (``time.process_time``: all threads, robust to other processes competing for the cores).

A second table sets PPO beside SAC (``config/sac_trainer_config.yaml``'s sections of the same brains):
the numpy ``get_action`` and the re-read of the numpy copy's weights (``sync``: one TensorFlow call
for all variables), which SAC pays after every update, once per environment step.

Usage::

    python benchmarks/trainer_throughput.py [--rounds 5] [--seconds 0.3] [--networks Basic,3DBall]

Prints a Markdown table; asserts nothing.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.sac.policy import SACPolicy
from mlagents.trainers.tests.policy_helpers import make_info  # the tests' BrainInfo builder
from mlagents.trainers.trainer_util import load_config

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config", "trainer_config.yaml")
SAC_CONFIG = os.path.join(os.path.dirname(CONFIG), "sac_trainer_config.yaml")

# Network -> (brain section of the shipped config, observation size, action sizes, action space).
NETWORKS: dict[str, tuple[str, int, list[int], str]] = {
    "Basic": ("BasicLearning", 20, [3], "discrete"),
    "3DBall": ("3DBallLearning", 8, [2], "continuous"),
    "Pyramids": ("PyramidsLearning", 172, [5], "discrete"),
}


def make_policy(network: str, folder: str, sac: bool = False) -> PPOPolicy | SACPolicy:
    """A training policy of ``network`` with the shipped section of its brain (SAC's with ``sac``)."""
    section, obs_size, actions, space = NETWORKS[network]
    config = load_config(SAC_CONFIG if sac else CONFIG)
    params = dict(config["default"])
    params.update(config.get(section, {}))
    params["model_path"] = os.path.join(folder, f"{network}-sac" if sac else network)
    params["summary_path"] = os.path.join(folder, f"summaries-{network}")
    brain = BrainParameters(section, obs_size, 1, [], actions, [""] * len(actions), space)
    return (
        SACPolicy(0, brain, params, is_training=True)
        if sac
        else PPOPolicy(0, brain, params, is_training=True)
    )


def brain_info(policy: PPOPolicy, n: int, rng: np.random.Generator) -> BrainInfo:
    """A step of ``n`` agents with normally distributed observations."""
    observations = rng.normal(size=(n, policy.brain.vector_observation_space_size)).astype(np.float32)
    return make_info(policy.brain, observations)


def microseconds(call: Callable[[], Any], seconds: float) -> float:
    """Mean CPU microseconds of this process (all its threads) per call over about ``seconds`` of
    wall-clock time (after a warm-up call). CPU time, unlike wall-clock time, barely changes when
    other processes compete for the cores."""
    call()
    calls = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    while True:
        for _ in range(10):
            call()
        calls += 10
        if time.perf_counter() - start >= seconds:
            return (time.process_time() - cpu_start) / calls * 1e6


def measure(network: str, batch_sizes: list[int], rounds: int, seconds: float) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory(prefix="trainer-throughput-") as folder:
        policy = make_policy(network, folder)
        for n in batch_sizes:
            info = brain_info(policy, n, rng)
            value_rows = [(info, i) for i in range(n)]
            dones = [False] * n
            samples: dict[str, list[float]] = {key: [] for key in ("tf_act", "np_act", "tf_val", "np_val")}
            for _ in range(rounds):
                for path in ("tf", "np"):
                    policy.set_fast_inference(path == "np")
                    act = lambda info=info: policy.get_action(info)  # noqa: E731
                    values = lambda r=value_rows, d=dones: policy.get_batched_value_estimates(r, d)  # noqa: E731
                    samples[f"{path}_act"].append(microseconds(act, seconds))
                    samples[f"{path}_val"].append(microseconds(values, seconds))
            rows.append(
                {"network": network, "agents": n, **{k: statistics.median(v) for k, v in samples.items()}}
            )
    return rows


def measure_sync(network: str, agents: int, rounds: int, seconds: float) -> list[dict[str, Any]]:
    """PPO and SAC: CPU microseconds of a numpy ``get_action`` of ``agents`` agents and of one
    re-read of the numpy copy's weights (median of the rounds)."""
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory(prefix="trainer-throughput-") as folder:
        for trainer, sac in (("PPO", False), ("SAC", True)):
            policy = make_policy(network, folder, sac)
            network_copy = policy._fast_network
            assert network_copy is not None, "a vector-only feed-forward network decides in numpy"
            info = brain_info(policy, agents, rng)
            decide = lambda p=policy, i=info: p.get_action(i)  # noqa: E731
            act = [microseconds(decide, seconds) for _ in range(rounds)]
            sync = [microseconds(network_copy.sync, seconds) for _ in range(rounds)]
            rows.append(
                {
                    "network": network,
                    "trainer": trainer,
                    "act": statistics.median(act),
                    "sync": statistics.median(sync),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--networks", default=",".join(NETWORKS), help="comma-separated: Basic, 3DBall, Pyramids"
    )
    parser.add_argument("--batch-sizes", default="1,12,48", help="comma-separated agents per call")
    parser.add_argument(
        "--rounds", type=int, default=5, help="alternating TensorFlow/numpy rounds per figure"
    )
    parser.add_argument("--seconds", type=float, default=0.3, help="length of one round of one side")
    args = parser.parse_args()
    batch_sizes = [int(n) for n in args.batch_sizes.split(",") if n.strip()]
    rows = []
    sync_rows = []
    for network in [name.strip() for name in args.networks.split(",") if name.strip()]:
        if network not in NETWORKS:
            raise SystemExit(f"unknown network {network!r}: choose from {', '.join(NETWORKS)}")
        rows.extend(measure(network, batch_sizes, args.rounds, args.seconds))
        sync_rows.extend(measure_sync(network, max(batch_sizes), args.rounds, args.seconds))
    print()
    print("CPU microseconds per call (median of the rounds), training policy (normalizer updates included):")
    print()
    print(
        "| Network | Agents | get_action TF | get_action numpy | speed-up | values TF | values numpy | speed-up |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['network']} | {r['agents']} | {r['tf_act']:.0f} | {r['np_act']:.0f} | "
            f"{r['tf_act'] / r['np_act']:.1f}x | {r['tf_val']:.0f} | {r['np_val']:.0f} | "
            f"{r['tf_val'] / r['np_val']:.1f}x |"
        )

    print()
    print(
        f"CPU microseconds per call (median of the rounds): numpy get_action of {max(batch_sizes)} agents and "
        "the weights' re-read after an update (sync), PPO beside SAC:"
    )
    print()
    print("| Network | Trainer | get_action numpy | sync | decision + sync |")
    print("|---|---|---|---|---|")
    for r in sync_rows:
        print(
            f"| {r['network']} | {r['trainer']} | {r['act']:.0f} | {r['sync']:.0f} | {r['act'] + r['sync']:.0f} |"
        )


if __name__ == "__main__":
    main()
