"""stable-baselines3 PPO through ``UnityVecEnv`` next to ``mlagents-learn`` on 3DBall, and the cost of
``UnityVecEnv`` over a raw ``UnityEnvironment``.

Two measurements (figures only, no asserts):

1. **Time to 3DBall's benchmark mean reward (100)**, wall-clock seconds from starting the command,
   for each number of builds (``--builds``, default 2 and 4):

   * ``mlagents-learn config/trainer_config.yaml --env 3DBall --num-envs N`` (3DBallLearning's
     shipped settings), run by ``train_to_benchmark.run_one``; its console mean reward is the mean
     return of the episodes that ended in the last 1000 trainer steps (a trainer step is one step
     of one build, so 1000 of them are 12,000 agent steps);
   * stable-baselines3 PPO on ``UnityVecEnv("3DBall", n_envs=N)`` with the settings of
     3DBallLearning where the two algorithms share them (``SB3_SETTINGS`` below), in a child process
     of this script, timed from its start like the command above. Its mean reward is computed as
     mlagents-learn's: the mean return of the episodes that ended in the last 12,000 agent steps.

2. **Throughput**: agent steps per second of ``UnityVecEnv`` against a plain loop over
   ``UnityEnvironment.step`` (each build stepped in turn, actions as one array per build) on 3DBall
   with uniform random actions, for 1 and 2 builds. Both run at the same time, one step of each in
   turn, each step timed, so that both see the same load of the machine.

Usage::

    python benchmarks/sb3_vs_mlagents.py                        # everything (20-40 minutes)
    python benchmarks/sb3_vs_mlagents.py --skip-training        # throughput only (about a minute)
    python benchmarks/sb3_vs_mlagents.py --builds 2 --skip-mlagents --skip-throughput
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BUILD = str(REPO / "example-envs" / "builds" / "3DBall.x86_64")
BRAIN = "3DBallLearning"
AGENTS_PER_BUILD = 12
BENCHMARK = 100.0
#: Agent steps per mean-reward window: mlagents-learn's summary_freq (1000 build steps) x 12 agents.
WINDOW = 1000 * AGENTS_PER_BUILD

#: stable-baselines3 PPO settings, taken from 3DBallLearning in config/trainer_config.yaml where
#: the algorithms share a parameter: buffer_size 12000 (n_steps x agents), batch_size 64, num_epoch 3,
#: learning_rate 3e-4 decaying linearly to 0 over max_steps (5e5 build steps = 6e6 agent steps), beta
#: 0.001 (ent_coef), epsilon 0.2 (clip_range), lambd 0.99 (gae_lambda), gamma 0.99, 2 hidden layers
#: of 128 with the swish activation (SiLU), separate policy and value networks, normalize: true
#: (VecNormalize of the observations; rewards are not normalized, as in mlagents-learn).
BUFFER_SIZE = 12000
MAX_AGENT_STEPS = 500_000 * AGENTS_PER_BUILD
SB3_SETTINGS = {
    "batch_size": 64,
    "n_epochs": 3,
    "ent_coef": 0.001,
    "clip_range": 0.2,
    "gae_lambda": 0.99,
    "gamma": 0.99,
    "max_grad_norm": 0.5,
}
LEARNING_RATE = 3.0e-4


# ------------------------------------------------------------------------------------------------
# 1. Time to the benchmark: stable-baselines3 (child process)


def sb3_child(n_builds: int, seed: int, max_minutes: float) -> None:
    """Train SB3 PPO on ``n_builds`` 3DBall builds; print one ``MEAN <agent steps> <mean>`` line per
    window and ``REACHED <agent steps>`` when the mean reaches the benchmark (then stop)."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from gym_unity.envs import UnityVecEnv
    from mlagents.example_envs.ports import find_free_port_range

    torch.set_num_threads(1)  # a small MLP gains nothing from threads that compete with the builds
    logging.getLogger("mlagents.envs").setLevel(logging.WARNING)

    class Window(BaseCallback):
        """Mean return of the episodes that ended in each window of WINDOW agent steps."""

        def __init__(self) -> None:
            super().__init__()
            self.returns: list[float] = []
            self.next_report = WINDOW
            self.deadline = time.monotonic() + max_minutes * 60

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                episode = info.get("episode")
                if episode is not None:
                    self.returns.append(float(episode["r"]))
            if self.num_timesteps < self.next_report:
                return time.monotonic() < self.deadline
            self.next_report += WINDOW
            if not self.returns:
                return time.monotonic() < self.deadline
            mean = float(np.mean(self.returns))
            self.returns = []
            print(f"MEAN {self.num_timesteps} {mean:.3f}", flush=True)
            if mean >= BENCHMARK:
                print(f"REACHED {self.num_timesteps}", flush=True)
                return False
            return time.monotonic() < self.deadline

    venv = UnityVecEnv(
        BUILD, n_envs=n_builds, no_graphics=True, base_port=find_free_port_range(n_builds), seed=seed
    )
    env = VecNormalize(VecMonitor(venv), norm_obs=True, norm_reward=False)
    try:
        n_envs = venv.num_envs
        model = PPO(
            "MlpPolicy",
            env,
            n_steps=BUFFER_SIZE // n_envs,
            learning_rate=lambda progress: LEARNING_RATE * progress,
            policy_kwargs={"net_arch": {"pi": [128, 128], "vf": [128, 128]}, "activation_fn": torch.nn.SiLU},
            seed=seed,
            device="cpu",
            verbose=0,
            **SB3_SETTINGS,
        )
        model.learn(total_timesteps=MAX_AGENT_STEPS, callback=Window())
    finally:
        env.close()


def run_sb3(n_builds: int, seed: int, max_minutes: float) -> tuple[float | None, float | None, float]:
    """``(agent steps, seconds)`` to the benchmark (None when not reached) and the best mean."""
    command = [
        sys.executable,
        __file__,
        "--sb3-child",
        str(n_builds),
        "--seed",
        str(seed),
        "--max-minutes",
        str(max_minutes),
    ]
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    reached: tuple[float | None, float | None] = (None, None)
    best = float("-inf")
    for line in process.stdout:
        parts = line.split()
        if parts[:1] == ["MEAN"]:
            best = max(best, float(parts[2]))
            print(
                f"   sb3 {n_builds} builds: {int(parts[1]):>8d} agent steps  mean {float(parts[2]):8.3f}",
                flush=True,
            )
        elif parts[:1] == ["REACHED"]:
            reached = (float(parts[1]), time.monotonic() - start)
    process.wait()
    return reached[0], reached[1], best


# ------------------------------------------------------------------------------------------------
# 1. Time to the benchmark: mlagents-learn


def run_mlagents(n_builds: int, max_minutes: float) -> tuple[float | None, float | None, float]:
    """``(build steps, seconds)`` to the benchmark through ``train_to_benchmark.run_one``, and the best mean."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from train_to_benchmark import run_one

    result = run_one("3DBall", n_builds, max_minutes, verbose=False)
    if BENCHMARK in result.reached:
        steps, seconds = result.reached[BENCHMARK]
        return steps, seconds, result.best_mean
    return None, None, result.best_mean


# ------------------------------------------------------------------------------------------------
# 2. Throughput


def measure_throughput(builds: list[int], seconds: float) -> None:
    """For each number of builds, start that many builds for a ``UnityEnvironment`` loop and as many
    for a ``UnityVecEnv``, and alternate one step of each (the loop steps its builds in turn),
    timing every step: both see the same machine load, whatever else runs."""
    from gym_unity.envs import UnityVecEnv
    from mlagents.envs.environment import UnityEnvironment
    from mlagents.example_envs.ports import find_free_port_range

    print(f"2) Throughput on 3DBall, random actions, steps of the two alternated for {seconds:g} s")
    print(
        "| Builds | UnityEnvironment loop: agent steps/s | UnityVecEnv: agent steps/s | UnityVecEnv / loop |"
    )
    print("|---|---|---|---|")
    rng = np.random.default_rng(0)
    for n in builds:
        base = find_free_port_range(2 * n)
        raw = [UnityEnvironment(BUILD, worker_id=i, base_port=base, no_graphics=True) for i in range(n)]
        vec = None
        try:
            vec = UnityVecEnv(BUILD, n_envs=n, worker_id=n, base_port=base, no_graphics=True)
            counts = [len(env.reset()[BRAIN].agents) for env in raw]
            vec.reset()
            raw_time = vec_time = 0.0
            raw_agent_steps = vec_agent_steps = 0
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                actions = [rng.uniform(-1, 1, (count, 2)).astype(np.float32) for count in counts]
                start = time.perf_counter()
                for env, action in zip(raw, actions):
                    raw_agent_steps += len(env.step({BRAIN: action})[BRAIN].agents)
                    if env.global_done:
                        env.reset()
                raw_time += time.perf_counter() - start
                batch = np.concatenate(actions)
                start = time.perf_counter()
                vec.step(batch)
                vec_time += time.perf_counter() - start
                vec_agent_steps += vec.num_envs
            r, v = raw_agent_steps / raw_time, vec_agent_steps / vec_time
            print(f"| {n} | {r:.0f} | {v:.0f} | {v / r:.2f} |", flush=True)
        finally:
            for env in raw:
                env.close()
            if vec is not None:
                vec.close()
    print()


# ------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builds", default="2,4", help="comma-separated numbers of builds (default 2,4)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the SB3 runs")
    parser.add_argument("--max-minutes", type=float, default=15.0, help="time limit per training run")
    parser.add_argument("--skip-training", action="store_true", help="only the throughput")
    parser.add_argument("--skip-mlagents", action="store_true", help="no mlagents-learn runs")
    parser.add_argument("--skip-sb3", action="store_true", help="no stable-baselines3 runs")
    parser.add_argument("--skip-throughput", action="store_true", help="no throughput measurement")
    parser.add_argument("--throughput-builds", default="1,2", help="builds for the throughput (default 1,2)")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds per throughput measurement")
    parser.add_argument("--sb3-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sb3_child is not None:
        sb3_child(args.sb3_child, args.seed, args.max_minutes)
        return
    logging.getLogger("mlagents.envs").setLevel(logging.WARNING)
    logging.getLogger("gym_unity").setLevel(logging.WARNING)
    print(f"CPU cores available: {len(os.sched_getaffinity(0))}; load average: {os.getloadavg()[0]:.2f}")
    print()
    if not args.skip_throughput:
        builds = [int(n) for n in args.throughput_builds.split(",")]
        measure_throughput(builds, args.seconds)
    if args.skip_training:
        return
    rows = []
    for n in [int(n) for n in args.builds.split(",")]:
        if not args.skip_sb3:
            cpu = children_cpu()
            steps, seconds, best = run_sb3(n, args.seed, args.max_minutes)
            rows.append(("SB3 PPO + UnityVecEnv", n, steps, seconds, children_cpu() - cpu, best))
        if not args.skip_mlagents:
            cpu = children_cpu()
            steps, seconds, best = run_mlagents(n, args.max_minutes)
            agent_steps = None if steps is None else steps * AGENTS_PER_BUILD
            rows.append(("mlagents-learn", n, agent_steps, seconds, children_cpu() - cpu, best))
        print(f"   load average now {os.getloadavg()[0]:.2f}", flush=True)
    print("1) 3DBall to mean reward 100 (wall-clock seconds from starting the command; CPU seconds of the")
    print("   whole run, trainer and builds, until it ended)")
    print("| Trainer | Builds | Agent steps to 100 | Seconds to 100 | CPU seconds of the run | Best mean |")
    print("|---|---|---|---|---|---|")
    for name, n, agent_steps, seconds, cpu_seconds, best in rows:
        steps_text = "not reached" if agent_steps is None else f"{agent_steps:.0f}"
        seconds_text = "-" if seconds is None else f"{seconds:.0f}"
        print(f"| {name} | {n} | {steps_text} | {seconds_text} | {cpu_seconds:.0f} | {best:.1f} |")


def children_cpu() -> float:
    """User + system CPU seconds of the ended child processes (and the descendants they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
