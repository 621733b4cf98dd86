"""Peak memory of the trainer process while training a camera scene (VisualFoodCollector).

Runs ``mlagents-learn config/trainer_config.yaml --env example-envs/builds/VisualFoodCollector.x86_64
--train --num-envs 1`` (brain VisualBananaLearning: 8 agents, one 84 x 84 RGB camera each, the
``default`` section: buffer of 10240 steps) for ``--steps`` environment steps (the first policy update
comes after about 1300; the default 4000 runs three updates), and prints the peak resident memory of
the trainer process: its ``VmHWM`` in ``/proc/<pid>/status``, read every 0.2 s while it runs (the
high-water mark, so a short peak between two reads still counts), and ``ru_maxrss`` of
``resource.getrusage(RUSAGE_CHILDREN)`` of a process that started only that run (the largest of the
trainer and the processes it waited for, such as the environment's).

With ``--baseline REV`` the same run is also made under that earlier revision (its packages, build
and trainer configuration, checked out by ``benchmarks/baseline.py``) and the ratio of the peaks is
printed.

    python benchmarks/visual_memory.py                       # this tree only
    python benchmarks/visual_memory.py --baseline HEAD        # before (HEAD) and after (this tree)
    python benchmarks/visual_memory.py --baseline HEAD --steps 3000 --rounds 2

Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPOSITORY = Path(__file__).resolve().parent.parent
ENV = "VisualFoodCollector"
BRAIN = "VisualBananaLearning"
STEP_LINE = re.compile(rf"{BRAIN}: Step: (?P<step>\d+)")
MIB = 1024.0 * 1024.0


def status_bytes(pid: int, field: str) -> int | None:
    """``field`` (e.g. ``VmHWM``) of ``/proc/<pid>/status`` in bytes; None once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def write_config(root: Path, folder: Path, steps: int) -> Path:
    """The trainer configuration of the tree ``root`` with the brain's section training ``steps`` steps."""
    config: dict[str, Any] = yaml.safe_load((root / "config" / "trainer_config.yaml").read_text())
    config[BRAIN] = dict(config.get(BRAIN) or {}, max_steps=steps)
    path = folder / "trainer_config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def measure(root: Path, steps: int, seed: int, verbose: bool) -> dict[str, Any]:
    """Train ``steps`` steps with the tree ``root`` (this process imports that tree's packages) and
    return the trainer's peak resident bytes, the steps reached and the seconds taken."""
    from mlagents.example_envs.ports import find_free_port_range

    with tempfile.TemporaryDirectory(prefix="visual-memory-") as workdir:
        folder = Path(workdir)
        command = [
            sys.executable,
            "-m",
            "mlagents.trainers.learn",
            str(write_config(root, folder, steps)),
            "--env",
            str(root / "example-envs" / "builds" / f"{ENV}.x86_64"),
            "--train",
            "--num-envs=1",
            "--no-graphics",
            "--run-id=memory",
            f"--seed={seed}",
            f"--base-port={find_free_port_range(1)}",
        ]
        log_path = folder / "learn.log"
        start = time.monotonic()
        with open(log_path, "w") as log:
            process = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
        high_water = 0
        while process.poll() is None:
            high_water = max(high_water, status_bytes(process.pid, "VmHWM") or 0)
            time.sleep(0.2)
        seconds = time.monotonic() - start
        children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        output = log_path.read_text()
        if verbose:
            sys.stderr.write(output)
        reached = [int(match["step"]) for match in STEP_LINE.finditer(output)]
        if process.returncode != 0:
            sys.stderr.write(output[-4000:])
            raise SystemExit(f"mlagents-learn exited with status {process.returncode}")
    return {
        "vmhwm": high_water,
        "children_maxrss": children_peak,
        "last_step": max(reached, default=0),
        "seconds": seconds,
    }


def run_side(label: str, environ: dict[str, str] | None, root: Path, options: argparse.Namespace) -> dict:
    """One measurement in a child process of its own (so that RUSAGE_CHILDREN covers that run only)."""
    from baseline import run_json

    print(f"  {label}: training {options.steps} steps...", flush=True)
    args = ["--side-json", str(root), "--steps", str(options.steps), "--seed", str(options.seed)]
    figures: dict = run_json(Path(__file__), args + (["--verbose"] if options.verbose else []), environ)
    print(
        f"  {label}: peak {figures['vmhwm'] / MIB:.0f} MiB (VmHWM), "
        f"{figures['children_maxrss'] / MIB:.0f} MiB (getrusage children), "
        f"last step {figures['last_step']}, {figures['seconds']:.0f} s",
        flush=True,
    )
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=4000, help="environment steps to train (default 4000)")
    parser.add_argument("--seed", type=int, default=0, help="--seed of mlagents-learn (default 0)")
    parser.add_argument("--rounds", type=int, default=1, help="runs per side, alternating (default 1)")
    parser.add_argument("--baseline", metavar="REV", help="also run revision REV (e.g. HEAD) and compare")
    parser.add_argument("--verbose", action="store_true", help="echo the output of mlagents-learn")
    parser.add_argument("--side-json", metavar="ROOT", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.side_json:  # one run, for run_side: figures as JSON on the last line
        print(json.dumps(measure(Path(options.side_json), options.steps, options.seed, options.verbose)))
        return

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print(f"{ENV} (brain {BRAIN}), --num-envs 1, {options.steps} steps, seed {options.seed}")
    after: list[dict] = []
    before: list[dict] = []
    if options.baseline is None:
        for _ in range(options.rounds):
            after.append(run_side("this tree", None, REPOSITORY, options))
    else:
        from baseline import revision_checkout

        with revision_checkout(options.baseline) as old:
            for round_index in range(options.rounds):
                sides = [("before", old), ("after", None)]
                if round_index % 2:
                    sides.reverse()
                for label, checkout in sides:
                    if checkout is None:
                        after.append(
                            run_side(f"after (this tree), round {round_index + 1}", None, REPOSITORY, options)
                        )
                    else:
                        label = (
                            f"before ({options.baseline} = {checkout.commit[:8]}), round {round_index + 1}"
                        )
                        before.append(run_side(label, checkout.environ(), checkout.root, options))
    print()
    print("| code | peak RSS of the trainer (VmHWM) | getrusage children max | steps | seconds |")
    print("|---|---|---|---|---|")
    for label, runs in (("before", before), ("after", after)):
        for figures in runs:
            print(
                f"| {label} | {figures['vmhwm'] / MIB:.0f} MiB | {figures['children_maxrss'] / MIB:.0f} MiB "
                f"| {figures['last_step']} | {figures['seconds']:.0f} |"
            )
    if before and after:
        old_peak = max(figures["vmhwm"] for figures in before)
        new_peak = max(figures["vmhwm"] for figures in after)
        print()
        print(
            f"peak RSS before / after: {old_peak / MIB:.0f} MiB / {new_peak / MIB:.0f} MiB "
            f"= {old_peak / max(new_peak, 1):.2f}x lower"
        )


if __name__ == "__main__":
    main()
