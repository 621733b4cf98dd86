"""Figures quoted in the documentation, measured with short real runs of mlagents-learn.

Each figure runs the real command in a temporary folder, with the shipped configuration files
changed only where the output says so (a smaller ``max_steps``), reads its console and its files,
and prints a Markdown table headed by the date of the measurement:

``curriculum``
    WallJump with ``--curriculum=config/curricula/wall-jump/`` (docs/Training-Curriculum-Learning.md):
    for every summary, each brain's lesson (from TensorBoard's ``Environment/Lesson``) and mean
    reward, and the lesson changes in the order the console reported them.
``generalization``
    3DBall with ``--sampler=config/3dball_generalize.yaml`` (docs/Training-Generalized-RL-Agents.md):
    the reset-parameter values of every reset and the mean reward of every summary.
``timers``
    The timer tree of the generalization run (docs/Profiling-Python.md): the nodes of
    ``summaries/<run-id>-0_timers.json``.
``timer-cost``
    The cost of one ``hierarchical_timer`` block (docs/Profiling-Python.md).

Usage::

    python benchmarks/doc_figures.py                      # all figures
    python benchmarks/doc_figures.py curriculum --max-steps 3000

Prints figures only; it asserts nothing. Rewards of such short runs vary from run to run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from mlagents.example_envs.ports import find_free_port_range

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config" / "trainer_config.yaml"
BUILDS = REPO / "example-envs" / "builds"

SUMMARY_LINE = re.compile(
    r"INFO:mlagents\.trainers: \S+: (?P<brain>\S+): Step: (?P<step>[\d.]+)\. "
    r"(?:Time Elapsed: (?P<elapsed>[\d.]+) s Mean Reward: (?P<mean>-?[\d.]+)\.)?"
)
LESSON_LINE = re.compile(
    r"INFO:mlagents\.trainers:(?P<brain>\S+) lesson changed\. Now in lesson (?P<lesson>\d+): (?P<values>.*)"
)
RESET_LINE = re.compile(r"INFO:mlagents\.envs:Academy reset with parameters: (?P<values>.*)")


def run_learn(folder: Path, brains: list[str], changes: dict[str, Any], *args: str) -> str:
    """Run mlagents-learn in ``folder`` with config/trainer_config.yaml, the sections of ``brains``
    updated with ``changes``; return its output (stdout and stderr)."""
    config = yaml.safe_load(CONFIG.read_text())
    for brain in brains:
        config[brain].update(changes)
    (folder / "trainer_config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    command = [
        sys.executable,
        "-m",
        "mlagents.trainers.learn",
        "trainer_config.yaml",
        "--train",
        "--no-graphics",
        "--seed=1",
        f"--base-port={find_free_port_range(1)}",
        *args,
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=900)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"mlagents-learn failed ({done.returncode}):\n{output[-3000:]}")
    return output


def summaries(output: str) -> list[tuple[str, int, float | None]]:
    """(brain, step, mean reward or None) of every summary line."""
    return [
        (m["brain"], int(float(m["step"])), float(m["mean"]) if m["mean"] else None)
        for m in SUMMARY_LINE.finditer(output)
    ]


def tensorboard_scalars(folder: Path, tag: str) -> dict[int, float]:
    """step -> value of ``tag`` in the TensorBoard events of ``folder``."""
    from tensorboard.backend.event_processing import event_accumulator

    accumulator = event_accumulator.EventAccumulator(str(folder))
    accumulator.Reload()
    return {int(e.step): e.value for e in accumulator.Scalars(tag)}


def stamp(title: str, command: str) -> None:
    print(f"\n### {title}\n")
    print(
        f"Measured {datetime.date.today().isoformat()} by `python benchmarks/doc_figures.py` ({command}).\n"
    )


def figure_curriculum(max_steps: int) -> None:
    brains = ["SmallWallJumpLearning", "BigWallJumpLearning"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        summary_freq = max_steps // 12
        output = run_learn(
            folder,
            brains,
            {"max_steps": max_steps, "summary_freq": summary_freq},
            f"--env={BUILDS / 'WallJump'}",
            f"--curriculum={REPO / 'config' / 'curricula' / 'wall-jump'}",
            "--run-id=curriculum",
        )
        lessons = {
            b: tensorboard_scalars(folder / "summaries" / f"curriculum_{b}", "Environment/Lesson")
            for b in brains
        }
    stamp(
        "Curriculum: WallJump",
        f"`curriculum`, max_steps {max_steps} instead of 1e6 and summary_freq {summary_freq} instead of 2000 "
        "for both brains, --seed=1",
    )
    rewards = {(brain, step): mean for brain, step, mean in summaries(output)}
    steps = sorted({step for _, step in rewards})
    print("| Step | " + " | ".join(f"{b} lesson | {b} mean reward" for b in brains) + " |")
    print("|---|" + "---|---|" * len(brains))
    for step in steps:
        cells = []
        for brain in brains:
            mean = rewards.get((brain, step))
            cells += [f"{lessons[brain].get(step, float('nan')):.0f}", "-" if mean is None else f"{mean:.3f}"]
        print(f"| {step} | " + " | ".join(cells) + " |")
    print("\nLesson changes, in order:\n")
    for match in LESSON_LINE.finditer(output):
        print(f"* {match['brain']} -> lesson {match['lesson']}: {match['values']}")


def parse_values(text: str) -> dict[str, float]:
    return {name: float(value) for name, value in (pair.split(" -> ") for pair in text.split(", "))}


def figure_generalization(max_steps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        output = run_learn(
            folder,
            ["3DBallLearning"],
            {"max_steps": max_steps},
            f"--env={BUILDS / '3DBall'}",
            f"--sampler={REPO / 'config' / '3dball_generalize.yaml'}",
            "--run-id=generalize",
        )
        timers = json.loads((folder / "summaries" / "generalize-0_timers.json").read_text())
    stamp(
        "Generalization: 3DBall",
        f"`generalization`, max_steps {max_steps} instead of 5e4, resampling-interval 5000 as shipped, --seed=1",
    )
    print("Resets, in order (the first is the start of training):\n")
    print("| Reset | mass | gravity | scale |")
    print("|---|---|---|---|")
    for index, match in enumerate(RESET_LINE.finditer(output)):
        values = parse_values(match["values"])
        print(f"| {index} | {values['mass']:.2f} | {values['gravity']:.2f} | {values['scale']:.2f} |")
    print("\n| Step | Mean reward |")
    print("|---|---|")
    for _, step, mean in summaries(output):
        print(f"| {step} | {'-' if mean is None else f'{mean:.3f}'} |")
    return timers


def figure_timers(timers: dict[str, Any]) -> None:
    stamp("Timers: the generalization run", "`timers`, the timer tree of the generalization run")
    print("| Node | total (s) | count | self (s) |")
    print("|---|---|---|---|")

    def walk(node: dict[str, Any], depth: int) -> None:
        name = (
            ("&nbsp;&nbsp;" * depth)
            + f"`{node['name']}`"
            + (" (parallel)" if node.get("is_parallel") else "")
        )
        print(f"| {name} | {node['total']:.2f} | {node['count']} | {node['self']:.2f} |")
        if depth < 6:
            for child in node.get("children", []):
                walk(child, depth + 1)

    walk(timers, 0)
    for gauge in timers.get("gauges", []):
        print(
            f"\nGauge `{gauge['name']}`: value {gauge['value']:.3f}, min {gauge['min']:.3f}, "
            f"max {gauge['max']:.3f}, count {gauge['count']}"
        )


def figure_timer_cost(blocks: int = 200000) -> None:
    from time import perf_counter

    from mlagents.envs.timers import TimerStack, hierarchical_timer

    stack = TimerStack()
    start = perf_counter()
    for _ in range(blocks):
        with hierarchical_timer("block", stack):
            pass
    seconds = perf_counter() - start
    stamp("Timer cost", f"`timer-cost`, {blocks} empty blocks")
    print(f"One `hierarchical_timer` block: {seconds / blocks * 1e6:.1f} microseconds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "figures", nargs="*", default=["curriculum", "generalization", "timers", "timer-cost"]
    )
    parser.add_argument("--max-steps", type=int, default=None, help="step budget of the runs")
    args = parser.parse_args()
    if "curriculum" in args.figures:
        figure_curriculum(args.max_steps or 6000)
    if "generalization" in args.figures or "timers" in args.figures:
        timers = figure_generalization(args.max_steps or 20000)
        if "timers" in args.figures:
            figure_timers(timers)
    if "timer-cost" in args.figures:
        figure_timer_cost()


if __name__ == "__main__":
    main()
