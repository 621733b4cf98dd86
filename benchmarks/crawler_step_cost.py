"""Where the CPU of one trainer step goes for CrawlerStatic, CrawlerDynamic and Walker.

A trainer step is one environment step of one instance (``--num-envs 2`` makes two per round):
the build simulates one decision of every agent (5 physics steps), the step crosses the wire,
the policy picks the agents' next actions, the trainer files the experiences, and every
``buffer_size / agents`` trainer steps PPO updates the networks. For each scene this prints CPU
milliseconds (``time.process_time``, or /proc for the build process) per trainer step by part:

* simulation: the scene's step in process (``LocalEnvironment``, random actions), i.e. the
  build's own work without the protocol;
* wire: what gRPC adds, Python side (``UnityEnvironment.step``) + the build process - simulation;
* action selection: ``PPOPolicy.get_action`` on the scene's agents (shipped network, training);
* bookkeeping: ``add_experiences`` + ``process_experiences`` of the PPO trainer;
* update: one ``update_policy`` (not the first one, which traces) divided by the trainer steps
  that fill its buffer.

The trainer parts use the shipped ``config/trainer_config.yaml`` section of the brain and
synthetic observations of the brain's shape (their values do not change the cost). Projected
hours for 1e6 steps on two free cores = total ms x 1e6 / 2 / 3.6e6 (the subprocess manager's
pipes, the summaries and checkpoints are not counted).

Usage::

    python benchmarks/crawler_step_cost.py                        # all three scenes
    python benchmarks/crawler_step_cost.py --scenes CrawlerStatic --steps 300
    python benchmarks/crawler_step_cost.py --baseline 2cf69b1     # before / after in one run
    python benchmarks/crawler_step_cost.py --parts sim,wire       # only the build-side parts

Figures only; it asserts nothing.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SCENES = {  # scene -> (brain, agents, vector observation size, stacked, continuous actions)
    "CrawlerStatic": ("CrawlerStaticLearning", 12, 126, 1, 20),
    "CrawlerDynamic": ("CrawlerDynamicLearning", 9, 126, 1, 20),
    "Walker": ("WalkerLearning", 11, 212, 5, 39),
}
PARTS = ("sim", "wire", "action", "bookkeeping", "update")
LABELS = {
    "sim": "simulation (in process)",
    "wire": "wire (both sides)",
    "action": "action selection",
    "bookkeeping": "trainer bookkeeping",
    "update": "PPO update (per step)",
}


def build_figures(scene: str, steps: int) -> dict[str, float]:
    """Simulation and wire ms per step: the scene in process and a real build over gRPC, both
    with the same random actions."""
    from env_throughput import build_cpu_seconds

    import mlagents.example_envs.registry  # noqa: F401  (registers the examples' names)
    from mlagents.envs.environment import UnityEnvironment
    from mlagents.example_envs.ports import find_free_port_range
    from mlagents.example_envs.sdk.local import LocalEnvironment

    brain_name, agents, _, _, size = SCENES[scene]
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, size=(agents, size)).astype(np.float32) for _ in range(steps + 50)]
    build = HERE.parent / "example-envs" / "builds" / f"{scene}.x86_64"
    # a generous start-up wait: on a loaded machine the build's imports take long
    env = UnityEnvironment(str(build), base_port=find_free_port_range(1), timeout_wait=600)
    try:
        env.reset()
        for i in range(50):  # warm-up
            env.step(actions[i])
        assert env.proc1 is not None
        pid = env.proc1.pid
        build_cpu = build_cpu_seconds(pid)
        python_cpu = time.process_time()
        for i in range(steps):
            env.step(actions[50 + i])
        python_cpu = time.process_time() - python_cpu
        build_cpu = build_cpu_seconds(pid) - build_cpu
    finally:
        env.close()
    local = LocalEnvironment(scene, seed=0)
    local.reset()
    for i in range(50):
        local.step({brain_name: actions[i]})
    local_cpu = time.process_time()
    for i in range(steps):
        local.step({brain_name: actions[50 + i]})
    local_cpu = time.process_time() - local_cpu
    local.close()
    return {
        "sim": local_cpu / steps * 1e3,
        "wire": (python_cpu + build_cpu - local_cpu) / steps * 1e3,
    }


def shipped_section(brain: str) -> dict[str, Any]:
    with open(HERE.parent / "config" / "trainer_config.yaml") as f:
        config = yaml.safe_load(f)
    section = dict(config["default"])
    section.update(config.get(brain, {}))
    return section


def trainer_figures(scene: str, with_update: bool) -> dict[str, float]:
    """Action selection, bookkeeping and update CPU ms per trainer step (synthetic observations)."""
    from mlagents.envs.brain import BrainInfo, BrainParameters
    from mlagents.trainers.ppo.trainer import PPOTrainer

    brain_name, agents, size, stack, actions = SCENES[scene]
    brain = BrainParameters(brain_name, size, stack, [], [actions], [""] * actions, "continuous")
    rng = np.random.default_rng(0)
    episode = 100

    def info(step: int) -> BrainInfo:
        return BrainInfo(
            visual_observation=[],
            vector_observation=rng.normal(size=(agents, size * stack)),
            text_observations=[""] * agents,
            memory=np.zeros((0, 0)),
            reward=list(rng.normal(size=agents)),
            agents=[f"$0-{i}" for i in range(agents)],
            local_done=[step % episode == episode - 1] * agents,
            vector_action=np.zeros((agents, actions)),
            text_action=[[] for _ in range(agents)],
            max_reached=[False] * agents,
            action_mask=np.ones((agents, 0)),
        )

    with tempfile.TemporaryDirectory() as folder:
        params = shipped_section(brain_name)
        params["summary_path"] = os.path.join(folder, "summaries")
        params["model_path"] = os.path.join(folder, "model")
        trainer = PPOTrainer(brain, 1, params, True, False, 0, "bench")
        fill = math.ceil(params["buffer_size"] / agents)
        steps = 2 * fill + episode if with_update else 400
        action_cpu = bookkeeping_cpu = 0.0
        updates: list[float] = []
        current = info(0)
        for step in range(1, steps + 1):
            t0 = time.process_time()
            out = trainer.policy.get_action(current)
            t1 = time.process_time()
            following = info(step)
            t2 = time.process_time()
            trainer.add_experiences({brain_name: current}, {brain_name: following}, out.outputs)
            trainer.process_experiences({brain_name: current}, {brain_name: following})
            t3 = time.process_time()
            action_cpu += t1 - t0
            bookkeeping_cpu += t3 - t2
            trainer.increment_step(1)
            if with_update and trainer.is_ready_update():
                t4 = time.process_time()
                trainer.update_policy()
                updates.append(time.process_time() - t4)
            current = following
    figures = {"action": action_cpu / steps * 1e3, "bookkeeping": bookkeeping_cpu / steps * 1e3}
    if with_update:
        later = updates[1:] or updates  # the first update also traces the graph
        seconds = float(np.mean(later))
        figures["update"] = seconds / (params["buffer_size"] / agents) * 1e3
        figures["update_seconds"] = seconds
        flops = update_flops(size * stack, actions, params)
        figures["update_gflops"] = flops / seconds / 1e9
        figures["matmul_gflops"] = matmul_gflops(params["batch_size"], params["hidden_units"])
    return figures


def update_flops(inputs: int, actions: int, params: dict[str, Any]) -> float:
    """Multiply-add FLOPs of one update's dense layers: separate policy and value networks of
    ``num_layers`` x ``hidden_units``, forward (2 per weight and sample) and backward (4)."""
    hidden, layers = params["hidden_units"], params["num_layers"]
    body = inputs * hidden + (layers - 1) * hidden * hidden
    weights = (body + hidden * actions) + (body + hidden * 1)
    samples = params["num_epoch"] * (params["buffer_size"] // params["batch_size"]) * params["batch_size"]
    return 6.0 * weights * samples


def matmul_gflops(rows: int, width: int, repeats: int = 100) -> float:
    """CPU GFLOP/s of a bare TensorFlow matmul (rows x width) @ (width x width), the update's
    typical product, in this process."""
    import tensorflow as tf

    a = tf.random.normal((rows, width))
    b = tf.random.normal((width, width))
    product = tf.function(lambda x, y: tf.matmul(x, y))
    product(a, b).numpy()
    start = time.process_time()
    for _ in range(repeats):
        out = product(a, b)
    out.numpy()
    return 2.0 * rows * width * width * repeats / (time.process_time() - start) / 1e9


def measure(scene: str, parts: set[str], steps: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    if parts & {"sim", "wire"}:
        figures.update(build_figures(scene, steps))
    if parts & {"action", "bookkeeping", "update"}:
        figures.update(trainer_figures(scene, "update" in parts))
    return figures


def total(figures: dict[str, float], parts: list[str]) -> float:
    return sum(figures.get(p, 0.0) for p in parts)


def print_table(scene: str, sides: dict[str, dict[str, float]], parts: list[str]) -> None:
    names = list(sides)
    print(f"{scene}: CPU ms per trainer step ({SCENES[scene][1]} agents x 5 physics steps)")
    print("  part                          " + "".join(f"{n:>10}" for n in names))
    for part in parts:
        print(f"  {LABELS[part]:<30}" + "".join(f"{sides[n].get(part, 0.0):10.2f}" for n in names))
    totals = [total(sides[n], parts) for n in names]
    print(f"  {'total':<30}" + "".join(f"{t:10.2f}" for t in totals))
    hours = [t * 1e6 / 2 / 3.6e6 for t in totals]
    print(f"  {'hours for 1e6 steps, 2 cores':<30}" + "".join(f"{h:10.2f}" for h in hours))
    for n in names:
        if "update_seconds" in sides[n]:
            f = sides[n]
            print(
                f"  ({n}: one update {f['update_seconds']:.2f} s CPU, {f['update_gflops']:.0f} GFLOP/s"
                f" in its dense layers; a bare matmul of the same size: {f['matmul_gflops']:.0f} GFLOP/s)"
            )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenes", default=",".join(SCENES), help="comma-separated, of " + ", ".join(SCENES))
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated, of " + ", ".join(PARTS))
    parser.add_argument("--steps", type=int, default=600, help="environment steps for sim and wire")
    parser.add_argument("--baseline", metavar="REV", help="also measure this earlier revision")
    parser.add_argument("--json", metavar="SCENE", help=argparse.SUPPRESS)  # one side, JSON out
    args = parser.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}; choose among {', '.join(PARTS)}")
    scenes = [s.strip() for s in args.scenes.split(",") if s.strip()]
    unknown = [s for s in scenes if s not in SCENES]
    if unknown:
        parser.error(f"unknown scene(s) {', '.join(unknown)}; choose among {', '.join(SCENES)}")
    if args.json:
        print(json.dumps(measure(args.json, set(parts), args.steps)))
        return
    if args.baseline is None:
        for scene in scenes:
            print_table(scene, {"now": measure(scene, set(parts), args.steps)}, parts)
        return
    from baseline import revision_checkout, run_json

    script = Path(__file__).resolve()
    flags = ["--parts", ",".join(parts), "--steps", str(args.steps)]
    with revision_checkout(args.baseline) as old:
        for scene in scenes:
            before = run_json(script, ["--json", scene, *flags], old.environ())
            after = run_json(script, ["--json", scene, *flags])
            print_table(scene, {"before": before, "after": after}, parts)
    print(f"before = {args.baseline}, after = this tree; each side in its own process, back to back.")


if __name__ == "__main__":
    main()
