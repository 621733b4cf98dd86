"""What ``mlagents-learn --deterministic`` costs: training steps per second of wall time with and
without it, on the same example build, configuration and seed, measured in one run.

Each round runs the real command twice, once in the default (asynchronous) mode and once with
``--deterministic``, in alternating order so both see the same machine load; the rate of a run is
taken between its first and its last summary line (start-up and the final export excluded). The
figures are the medians over the rounds, and the ratio is deterministic / default.

Usage::

    python benchmarks/deterministic_cost.py [--env 3DBall] [--num-envs 4] [--steps 8000] [--rounds 2]
        [--config config/quickstart_config.yaml] [--env-manager subprocess]

Prints a Markdown table; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

import yaml

from mlagents.example_envs.ports import find_free_port_range

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import progress_points, steady_rate

ROOT = Path(__file__).resolve().parents[1]


def write_config(source: Path, folder: Path, steps: int, summaries: int) -> Path:
    """``source`` with every section's ``max_steps`` set to ``steps`` and ``summary_freq`` to a
    ``summaries``-th of it."""
    config = yaml.safe_load(source.read_text())
    for section in config.values():
        section["max_steps"] = steps
        section["summary_freq"] = max(1, steps // summaries)
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run(folder: Path, config: Path, options: argparse.Namespace, deterministic: bool) -> float:
    """One training run; its steps per second between its first and last summary line."""
    folder.mkdir(parents=True)
    args = [
        sys.executable,
        "-m",
        "mlagents.trainers.learn",
        str(config),
        f"--env={ROOT / 'example-envs' / 'builds' / options.env}",
        "--train",
        "--run-id=cost",
        "--seed=1",
        f"--num-envs={options.num_envs}",
        f"--base-port={find_free_port_range(options.num_envs)}",
        f"--env-manager={options.env_manager}",
        "--no-graphics",
    ]
    if deterministic:
        args.append("--deterministic")
    result = subprocess.run(args, cwd=folder, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"the run failed ({result.returncode}):\n{result.stderr[-3000:]}")
    points = progress_points(result.stderr + result.stdout)
    if len(points) < 2:
        raise SystemExit("the run wrote fewer than two summary lines: raise --steps")
    return steady_rate(points)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="3DBall", help="example build name (example-envs/builds/<env>)")
    parser.add_argument("--config", default=str(ROOT / "config" / "quickstart_config.yaml"))
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=8000, help="max_steps of each run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--env-manager", default="subprocess", choices=["subprocess", "ray"])
    options = parser.parse_args()

    rates: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        config = write_config(Path(options.config), folder, options.steps, summaries=8)
        for index in range(options.rounds):
            order = (False, True) if index % 2 == 0 else (True, False)
            for deterministic in order:
                name = f"round{index}-{'deterministic' if deterministic else 'default'}"
                rate = run(folder / name, config, options, deterministic)
                rates[deterministic].append(rate)
                print(f"{name}: {rate:.1f} steps/s", file=sys.stderr)
    default, deterministic = (statistics.median(rates[mode]) for mode in (False, True))
    print(
        f"{options.env}, --num-envs={options.num_envs}, --env-manager={options.env_manager}, "
        f"{options.steps} steps, {options.rounds} rounds, {date.today().isoformat()}\n"
    )
    print("| mode | steps per second (median) | runs |")
    print("|---|---|---|")
    print(f"| default (asynchronous) | {default:.1f} | {', '.join(f'{r:.1f}' for r in rates[False])} |")
    print(f"| --deterministic | {deterministic:.1f} | {', '.join(f'{r:.1f}' for r in rates[True])} |")
    print(f"\nratio deterministic / default: {deterministic / default:.2f}")


if __name__ == "__main__":
    main()
