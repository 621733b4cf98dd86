"""How reliably PPO learns Basic: the final mean reward of short runs over many seeds.

For every seed, runs the real command

    mlagents-learn <config> --env example-envs/builds/Basic.x86_64 --train --num-envs 2
                   --no-graphics --run-id reliability --seed <seed> --base-port <free>

where ``<config>`` is the shipped ``config/trainer_config.yaml``. The run is stopped (SIGTERM, which
``mlagents-learn`` handles like Ctrl-C) at the first console summary at or after the run length
(20,000 steps by default), so the learning rate, clip range and entropy coefficient follow the
shipped ``max_steps`` of 5e5 and have hardly decayed. With ``--decay-over-run`` BasicLearning's
``max_steps`` is set to the run length instead, so they decay to their floors over the run (the
final rewards are then markedly lower: learning nearly stops towards the end). It reads the console
summaries (``Step: ... Mean Reward: ...``, every ``summary_freq`` steps) and reports, per seed, the
last mean reward, then the mean and the lowest over the seeds.

With ``--baseline REV`` the same seeds also run on revision ``REV`` of this repository (its trainer,
its builds, its shipped config), checked out with :mod:`benchmarks.baseline`; the two sides
alternate seed by seed so that a busy machine slows both alike.

Usage::

    python benchmarks/basic_reliability.py                          # seeds 0-9, this tree
    python benchmarks/basic_reliability.py --seeds 0-7 --baseline 2cf69b1
    python benchmarks/basic_reliability.py --seeds 3,5 --steps 30000 --jobs 2
    python benchmarks/basic_reliability.py --decay-over-run

Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import revision_checkout

from mlagents.example_envs.ports import find_free_port_range

REPO = Path(__file__).resolve().parents[1]
BRAIN = "BasicLearning"
NUM_ENVS = 2

CONSOLE_LINE = re.compile(
    r"INFO:mlagents\.trainers: \S+: (?P<brain>\S+): Step: (?P<step>[\d.]+)\. "
    r"Time Elapsed: [\d.]+ s Mean Reward: (?P<mean>-?[\d.]+)\."
)


@dataclass
class Side:
    """One side of the comparison: where its code and files live and how to start its Python."""

    label: str
    root: Path
    environ: dict[str, str] | None = None
    finals: dict[int, float] = field(default_factory=dict)
    curves: dict[int, list[tuple[float, float]]] = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)


def parse_seeds(text: str) -> list[int]:
    """``"0-9"``, ``"1,4,7"`` or a mix (``"0-3,8"``) -> the seeds in order."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                low, high = part.split("-", 1)
                seeds.extend(range(int(low), int(high) + 1))
            else:
                seeds.append(int(part))
        except ValueError as error:
            raise SystemExit(f"--seeds: {part!r} is not a seed or a range like 0-9") from error
    if not seeds:
        raise SystemExit("--seeds: give at least one seed, e.g. --seeds 0-9")
    return seeds


def write_config(root: Path, folder: Path, max_steps: int | None) -> Path:
    """The shipped trainer config of ``root``; with ``max_steps``, BasicLearning's is set to it."""
    config = yaml.safe_load((root / "config" / "trainer_config.yaml").read_text())
    if max_steps is not None:
        config[BRAIN] = dict(config.get(BRAIN) or {})
        config[BRAIN]["max_steps"] = max_steps
    path = folder / "trainer_config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run_seed(side: Side, seed: int, steps: int, decay_over_run: bool, verbose: bool) -> None:
    """Train one seed for ``steps`` steps on ``side`` and record its summaries.

    With the shipped ``max_steps`` the run is stopped (SIGTERM, handled like Ctrl-C) at the first
    summary at or after ``steps``; with ``decay_over_run`` the config's ``max_steps`` ends it.
    """
    with tempfile.TemporaryDirectory(prefix="basic-reliability-") as folder:
        workdir = Path(folder)
        command = [
            sys.executable,
            "-m",
            "mlagents.trainers.learn",
            str(write_config(side.root, workdir, steps if decay_over_run else None)),
            "--env",
            str(side.root / "example-envs" / "builds" / "Basic.x86_64"),
            "--train",
            f"--num-envs={NUM_ENVS}",
            "--no-graphics",
            "--run-id=reliability",
            f"--seed={seed}",
            f"--base-port={find_free_port_range(NUM_ENVS)}",
        ]
        start = time.monotonic()
        output: list[str] = []
        curve: list[tuple[float, float]] = []
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=side.environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        assert process.stdout is not None
        stopping = False
        for line in process.stdout:
            output.append(line.rstrip("\n"))
            if verbose:
                print(f"   {side.label} {seed} |", output[-1])
            match = CONSOLE_LINE.search(line)
            if match and match["brain"] == BRAIN and not stopping:
                curve.append((float(match["step"]), float(match["mean"])))
                if curve[-1][0] >= steps:
                    process.send_signal(signal.SIGTERM)
                    stopping = True
        returncode = process.wait()
        side.seconds[seed] = time.monotonic() - start
    if (returncode != 0 and not stopping) or not curve:
        tail = "\n".join(output[-15:])
        raise SystemExit(f"{side.label}, seed {seed}: mlagents-learn failed (exit {returncode}):\n{tail}")
    side.curves[seed] = curve
    side.finals[seed] = curve[-1][1]
    print(
        f"{side.label:>10}  seed {seed:3d}: final mean reward {curve[-1][1]:6.3f} at step {curve[-1][0]:.0f}"
        f"  ({side.seconds[seed]:.0f} s)",
        flush=True,
    )


def summary(side: Side) -> str:
    finals = list(side.finals.values())
    return (
        f"{side.label:>10}: mean {statistics.fmean(finals):.3f}  min {min(finals):.3f}  "
        f"max {max(finals):.3f}  over {len(finals)} seeds"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0-9", help="seeds, e.g. 0-9 or 1,4,7 (default 0-9)")
    parser.add_argument("--steps", type=int, default=20000, help="steps per run (default 20000)")
    parser.add_argument(
        "--decay-over-run",
        action="store_true",
        help="set max_steps to --steps, so that the schedules decay over the run (default: the "
        "shipped max_steps 5e5; the run is stopped at --steps)",
    )
    parser.add_argument("--baseline", metavar="REV", help="also run revision REV (e.g. 2cf69b1)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    parser.add_argument("--verbose", action="store_true", help="echo the output of mlagents-learn")
    args = parser.parse_args()
    seeds = parse_seeds(args.seeds)
    if args.steps < 1 or args.jobs < 1:
        raise SystemExit("--steps and --jobs must be positive integers")

    def measure(sides: list[Side]) -> None:
        # Seed by seed, the sides alternate (and with --jobs > 1, neighbouring runs overlap).
        tasks = [(side, seed) for seed in seeds for side in sides]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for future in [
                pool.submit(run_seed, side, seed, args.steps, args.decay_over_run, args.verbose)
                for side, seed in tasks
            ]:
                future.result()
        print()
        for side in sides:
            print(f"{side.label:>10}: " + "  ".join(f"{seed}:{side.finals[seed]:.3f}" for seed in seeds))
        for side in sides:
            print(summary(side))

    current = Side("current", REPO)
    if args.baseline:
        with revision_checkout(args.baseline) as old:
            measure([Side(f"{args.baseline}", old.root, old.environ()), current])
    else:
        measure([current])


if __name__ == "__main__":
    main()
