"""Where the CPU of a training run goes: CPU seconds per environment step of each kind of process.

Runs ``mlagents-learn`` on an example build (default: the shipped config's 3DBall section,
``--num-envs=4``, 12000 steps) and, while it runs, reads every process of the run from /proc
ten times a second. Each process is counted as one of three kinds:

* **trainer**: the ``mlagents-learn`` process itself (the trainers, the policies' decisions and
  updates, TensorBoard and checkpoint writing);
* **workers**: its child processes (one environment worker per ``--num-envs``);
* **builds**: every other process of the run (the example builds the workers start).

The table gives per side the CPU milliseconds per environment step of each kind, their total,
the wall-clock seconds of the whole run (start-up included) and the steps per wall-clock second,
then the steps per second between the trainer's first and last progress lines ("steady") and the
wall-clock seconds outside the trainer's clock (start-up before it, shutdown after its last line).
"unseen" is the CPU that the operating system accounted to the run when it ended but that no
reading saw (what a process used after the last reading, about a tenth of a second each).

Sides, alternating round by round so that a busy machine slows them alike:

* this tree;
* ``--baseline REV``: an earlier revision of this repository (its trainer, builds and config);
* ``--original DIR``: the original ML-Agents 0.9.3 trainer that DIR makes importable
  (``DIR/mlagents/trainers``, with the original ``DIR/mlagents/envs`` for the whole original
  Python side, prepared by hand as benchmarks/README.md describes; nothing of it ships here),
  with this tree's builds and config: what a run of the original costs on the same builds;
* ``--sac``: this tree once more with ``config/sac_trainer_config.yaml`` (the brain's Soft
  Actor-Critic section) beside the PPO run: what SAC costs per environment step.

Usage::

    python benchmarks/process_cpu.py                                  # 3DBall, 4 envs, 12000 steps
    python benchmarks/process_cpu.py --env Basic --num-envs 2
    python benchmarks/process_cpu.py --baseline 29eb88a --rounds 2    # before / after in one run
    python benchmarks/process_cpu.py --original /path/to/original
    python benchmarks/process_cpu.py --sac --max-steps 6000          # SAC beside PPO

Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import resource
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mlagents.example_envs.ports import find_free_port_range

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import add_original_option, original_environ, revision_checkout
from proc_stat import TICKS_PER_SECOND, own_cpu_ticks, stat_fields
from train_to_benchmark import start_logged

REPO = Path(__file__).resolve().parents[1]
KINDS = ("trainer", "workers", "builds")
#: Seconds between two readings of the run's processes.
READ_INTERVAL = 0.1

# Every side starts its trainer the same way: the installed console script may not exist for the
# original, so ``learn.main`` is called under the name ``mlagents-learn``.
RUNNER = (
    "import logging, sys\n"
    "logging.basicConfig(level=logging.INFO)\n"
    "from mlagents.trainers.learn import main\n"
    "sys.argv[0] = 'mlagents-learn'\n"
    "main()\n"
)


@dataclass
class Side:
    """Where a side's trainer, builds and config come from, and its figures round by round."""

    label: str
    root: Path
    environ: dict[str, str] | None = None
    #: the trainer configuration under ``root/config`` the side trains with
    config: str = "trainer_config.yaml"
    #: per round: CPU seconds of each kind, "unseen", and the run's wall-clock seconds
    rounds: list[dict[str, float]] = field(default_factory=list)


@dataclass
class _Process:
    kind: str
    cpu_ticks: int = 0


def _processes_under(root: int) -> Iterator[tuple[str, int, int]]:
    """(pid, parent pid, own user + system ticks) of ``root`` and every live process below it
    (the builds run in sessions of their own, so the tree is followed by parent ids)."""
    table: dict[int, tuple[str, int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields is not None:
                table[int(entry)] = (entry, int(fields[1]), own_cpu_ticks(fields))
    for pid, row in table.items():
        ancestor = pid
        while ancestor > 1 and ancestor != root and ancestor in table:
            ancestor = table[ancestor][1]
        if ancestor == root:
            yield row


def kind_of(pid: int, parent: int, trainer: int) -> str:
    """The kind of a process of a run whose trainer is ``trainer``."""
    if pid == trainer:
        return "trainer"
    return "workers" if parent == trainer else "builds"


def write_config(source: Path, folder: Path, max_steps: int) -> Path:
    """The shipped config ``source`` with every section's ``max_steps`` set to ``max_steps``."""
    config = yaml.safe_load(source.read_text())
    for section in config.values():
        if isinstance(section, dict):
            section["max_steps"] = max_steps
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def table(sides: list[Side], max_steps: int) -> str:
    """The Markdown table of the sides' medians over their rounds."""
    lines = [
        "| side | trainer | workers | builds | total (+ unseen) | wall s | steps/s | steady steps/s | outside s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for side in sides:
        median = {key: statistics.median(r[key] for r in side.rounds) for key in side.rounds[0]}
        per_step = {key: 1000.0 * median[key] / max_steps for key in (*KINDS, "unseen")}
        total = sum(per_step[kind] for kind in KINDS)
        lines.append(
            f"| {side.label} | {per_step['trainer']:.2f} | {per_step['workers']:.2f} | {per_step['builds']:.2f} "
            f"| {total:.2f} (+ {per_step['unseen']:.2f}) | {median['wall']:.0f} | {max_steps / median['wall']:.0f} "
            f"| {median['steady']:.0f} | {median['outside']:.1f} |"
        )
    lines.append("")
    lines.append(
        "CPU milliseconds per environment step (median over the rounds); wall: the whole run; steady: "
        "between the first and the last progress line; outside: the run's wall-clock seconds before "
        "the trainer's clock started and after its last progress line (start-up and shutdown)."
    )
    if len(sides) > 1:
        last = sides[-1]
        wall = statistics.median(r["wall"] for r in last.rounds)
        for side in sides[:-1]:
            ratio = statistics.median(r["wall"] for r in side.rounds) / wall
            steady = statistics.median(r["steady"] for r in last.rounds) / statistics.median(
                r["steady"] for r in side.rounds
            )
            lines.append(
                f"{last.label}: {ratio:.2f}x the steps per wall-clock second of {side.label} "
                f"({steady:.2f}x steady)."
            )
    return "\n".join(lines)


def run_once(
    side: Side, env: str, num_envs: int, max_steps: int, verbose: bool, base_port: int | None = None
) -> dict[str, float]:
    """One training run of ``side``; CPU seconds per kind, "unseen" and wall seconds."""
    with tempfile.TemporaryDirectory(prefix="mlagents-process-cpu-") as folder:
        workdir = Path(folder)
        command = [
            sys.executable,
            "-c",
            RUNNER,
            str(write_config(side.root / "config" / side.config, workdir, max_steps)),
            f"--env={side.root / 'example-envs' / 'builds' / env}",
            "--train",
            f"--num-envs={num_envs}",
            "--no-graphics",
            "--run-id=process-cpu",
            "--seed=1",
            f"--base-port={base_port or find_free_port_range(num_envs)}",
        ]
        processes: dict[str, _Process] = {}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        process = start_logged(command, workdir, workdir / "output.log", env=side.environ)
        try:
            while process.poll() is None:
                for pid, parent, ticks in _processes_under(process.pid):
                    seen = processes.setdefault(pid, _Process(kind_of(int(pid), parent, process.pid)))
                    seen.cpu_ticks = max(seen.cpu_ticks, ticks)
                time.sleep(READ_INTERVAL)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            process.wait()
            try:  # anything the run left behind ends with it
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        output = (workdir / "output.log").read_text()
        if verbose:
            print(output)
        if process.returncode != 0:
            tail = "\n".join(output.splitlines()[-15:])
            raise SystemExit(f"{side.label}: mlagents-learn failed (exit {process.returncode}):\n{tail}")
    figures = {kind: 0.0 for kind in KINDS}
    for seen in processes.values():
        figures[seen.kind] += seen.cpu_ticks / TICKS_PER_SECOND
    accounted = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    figures["unseen"] = max(0.0, accounted - sum(figures[kind] for kind in KINDS))
    figures["wall"] = wall
    figures.update(progress_figures(output, wall))
    return figures


#: A trainer's progress line (the original's and this tree's): "... Step: 2000. Time Elapsed: 2.376 s ..."
PROGRESS_LINE = re.compile(r"Step: (\d+)(?:\.0)?\. Time Elapsed: ([\d.]+) s")


def progress_points(output: str) -> list[tuple[int, float]]:
    """(step, seconds on the trainer's clock) of every progress line of ``output``."""
    return [(int(step), float(seconds)) for step, seconds in PROGRESS_LINE.findall(output)]


def steady_rate(points: list[tuple[int, float]]) -> float:
    """Steps per second between the first and the last of ``points``; NaN with fewer than two
    points or no time between them."""
    if len(points) < 2 or points[-1][1] <= points[0][1]:
        return math.nan
    (first_step, first_time), (last_step, last_time) = points[0], points[-1]
    return (last_step - first_step) / (last_time - first_time)


def progress_figures(output: str, wall: float) -> dict[str, float]:
    """Steps per second ("steady") between the first and the last progress line of ``output``;
    and ("outside") ``wall`` minus the trainer's clock at its last progress line. NaN where the run
    printed too few progress lines (a run shorter than two ``summary_freq``)."""
    points = progress_points(output)
    outside = wall - points[-1][1] if points else math.nan
    return {"steady": steady_rate(points), "outside": outside}


def main() -> None:
    """Parse the options, run every side ``--rounds`` times (sides alternating), print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="3DBall", help="example build name (default 3DBall)")
    parser.add_argument("--num-envs", type=int, default=4, help="parallel environments (default 4)")
    parser.add_argument("--max-steps", type=int, default=12000, help="steps of each run (default 12000)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each side (default 1)")
    parser.add_argument("--baseline", metavar="REV", help="also run revision REV of this repository")
    add_original_option(parser)
    parser.add_argument(
        "--sac", action="store_true", help="also run this tree with config/sac_trainer_config.yaml"
    )
    parser.add_argument("--verbose", action="store_true", help="print each run's output")
    parser.add_argument("--base-port", type=int, help="first port of the builds (default: a free range)")
    args = parser.parse_args()
    if args.num_envs < 1 or args.max_steps < 1 or args.rounds < 1:
        raise SystemExit("--num-envs, --max-steps and --rounds must be positive integers")
    if not (REPO / "example-envs" / "builds" / f"{args.env}.x86_64").exists():
        raise SystemExit(f"--env: no example build {args.env!r} in example-envs/builds")
    with ExitStack() as stack:
        sides: list[Side] = []
        if args.original is not None:
            sides.append(Side("original 0.9.3", REPO, original_environ(args.original)))
        if args.baseline:
            old = stack.enter_context(revision_checkout(args.baseline))
            sides.append(Side(args.baseline, old.root, old.environ()))
        if args.sac:
            sides.append(Side("this tree, SAC", REPO, config="sac_trainer_config.yaml"))
        sides.append(Side("this tree", REPO))
        print(
            f"{args.env}, --num-envs={args.num_envs}, {args.max_steps} steps, {args.rounds} round(s); "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            flush=True,
        )
        for round_number in range(args.rounds):
            for side in sides:
                figures = run_once(
                    side, f"{args.env}.x86_64", args.num_envs, args.max_steps, args.verbose, args.base_port
                )
                side.rounds.append(figures)
                cpu = sum(figures[kind] for kind in KINDS)
                print(
                    f"  round {round_number + 1}, {side.label}: {cpu:.1f} CPU s, {figures['wall']:.0f} s wall",
                    flush=True,
                )
        print()
        print(table(sides, args.max_steps))


if __name__ == "__main__":
    main()
