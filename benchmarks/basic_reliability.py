"""How reliably PPO learns Basic: the final mean reward of short runs over many seeds.

For every seed, runs the real command

    mlagents-learn <config> --env example-envs/builds/Basic.x86_64 --train --num-envs 2
                   --no-graphics --run-id reliability --seed <seed> --base-port <free>

where ``<config>`` is the shipped ``config/trainer_config.yaml``. The run is stopped (SIGINT, which
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

With ``--original DIR`` the same seeds also run on an original ML-Agents 0.9.3 trainer that DIR
makes importable (``DIR/mlagents/trainers``, prepared by hand for TensorFlow 2's ``tf.compat.v1``
graph mode; nothing of it ships here) together with this tree's ``mlagents.envs``, builds and
shipped config. The original's ``mlagents.envs`` configured logging when imported; this one does
not, so the runner does it (``logging.basicConfig(level=INFO)``) for every side.

With ``--probe`` every side also prints, after each policy update, the action probabilities at the
start position (stay, left, right) and their entropy, seed by seed: the early learning signal that
tells a run heading for the small goal (left) from one heading for the large goal (right).

Usage::

    python benchmarks/basic_reliability.py                          # seeds 0-9, this tree
    python benchmarks/basic_reliability.py --seeds 0-7 --baseline 2cf69b1
    python benchmarks/basic_reliability.py --seeds 3,5 --steps 30000 --jobs 2
    python benchmarks/basic_reliability.py --decay-over-run
    python benchmarks/basic_reliability.py --original /tmp/orig/run --probe

Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
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

from baseline import add_original_option, original_environ, revision_checkout

from mlagents.example_envs.ports import find_free_port_range

REPO = Path(__file__).resolve().parents[1]
BRAIN = "BasicLearning"
NUM_ENVS = 2
START_POSITION = 10
OBSERVATION_SIZE = 20
#: After which updates (1-based) the probe table at the end shows the start position's policy.
PROBED_UPDATES = (5, 10, 20, 40, 60)

# The runner of every side: logging as mlagents-learn 0.9.3 saw it, optionally a probe after every
# policy update (works with both trainers: the original's graph session or this tree's policy).
RUNNER = """
import logging, signal, sys
# Ctrl-C raises KeyboardInterrupt even when this process was started with SIGINT ignored (a
# background job): both trainers stop cleanly on it.
signal.signal(signal.SIGINT, signal.default_int_handler)
logging.basicConfig(level=logging.INFO)
if {probe}:
    import numpy as np
    from mlagents.trainers.ppo.trainer import PPOTrainer
    start = np.eye({size}, dtype=np.float32)[[{position}]]
    masks = np.ones((1, 3), np.float32)
    plain_update = PPOTrainer.update_policy

    def probed_update(self):
        plain_update(self)
        self.probe_updates = getattr(self, "probe_updates", 0) + 1
        policy = self.policy
        if hasattr(policy, "sess"):
            m = policy.model
            feed = {{m.vector_in: start, m.batch_size: 1, m.sequence_length: 1, m.action_masks: masks}}
            logits = policy.sess.run(m.all_log_probs, feed)[0]
        else:
            feed = {{"vector_observation": start, "action_masks": masks}}
            logits = np.asarray(policy.tensorflow_inference(feed, None)["action_probs"])[0]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        entropy = float(-(p * np.log(p)).sum())
        print(f"PROBE update={{self.probe_updates}} step={{self.get_step}} "
              f"p={{p[0]:.4f}},{{p[1]:.4f}},{{p[2]:.4f}} entropy={{entropy:.4f}}", flush=True)

    PPOTrainer.update_policy = probed_update
from mlagents.trainers.learn import main
sys.argv[0] = "mlagents-learn"
main()
"""

PROBE_LINE = re.compile(
    r"PROBE update=(?P<update>\d+) step=(?P<step>\d+) p=(?P<stay>[\d.]+),(?P<left>[\d.]+),(?P<right>[\d.]+) "
    r"entropy=(?P<entropy>[\d.]+)"
)

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
    #: Per seed, per update: (step, p(stay), p(left), p(right), entropy) at the start position.
    probes: dict[int, list[tuple[int, float, float, float, float]]] = field(default_factory=dict)


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


def run_seed(side: Side, seed: int, steps: int, decay_over_run: bool, verbose: bool, probe: bool) -> None:
    """Train one seed for ``steps`` steps on ``side`` and record its summaries.

    With the shipped ``max_steps`` the run is stopped (SIGINT, i.e. Ctrl-C) at the first
    summary at or after ``steps``; with ``decay_over_run`` the config's ``max_steps`` ends it.
    """
    with tempfile.TemporaryDirectory(prefix="basic-reliability-") as folder:
        workdir = Path(folder)
        runner = RUNNER.format(probe=probe, size=OBSERVATION_SIZE, position=START_POSITION)
        command = [
            sys.executable,
            "-c",
            runner,
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
        probes: list[tuple[int, float, float, float, float]] = []
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
            probed = PROBE_LINE.search(line)
            if probed:
                probes.append(
                    (
                        int(probed["step"]),
                        *(float(probed[key]) for key in ("stay", "left", "right", "entropy")),
                    )  # type: ignore[arg-type]
                )
            match = CONSOLE_LINE.search(line)
            if match and match["brain"] == BRAIN and not stopping:
                curve.append((float(match["step"]), float(match["mean"])))
                if curve[-1][0] >= steps:
                    # Ctrl-C: both this tree's and the original's mlagents-learn stop cleanly on it.
                    process.send_signal(signal.SIGINT)
                    stopping = True
        returncode = process.wait()
        try:  # anything the run left behind (e.g. a worker of a trainer that died) ends with it
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        side.seconds[seed] = time.monotonic() - start
    if (returncode != 0 and not stopping) or not curve:
        tail = "\n".join(output[-15:])
        raise SystemExit(f"{side.label}, seed {seed}: mlagents-learn failed (exit {returncode}):\n{tail}")
    side.curves[seed] = curve
    side.probes[seed] = probes
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


def probe_table(sides: list[Side], seeds: list[int]) -> str:
    """Per seed and side: p(left)/p(right) and the entropy at the start position after the updates
    ``PROBED_UPDATES``."""
    updates = ", ".join(str(update) for update in PROBED_UPDATES)
    lines = [f"p(left)/p(right) entropy at the start position after updates {updates}:"]
    for seed in seeds:
        for side in sides:
            probes = side.probes.get(seed, [])
            cells = "  ".join(
                f"{probes[u - 1][2]:.2f}/{probes[u - 1][3]:.2f} {probes[u - 1][4]:.2f}"
                if u <= len(probes)
                else "-"
                for u in PROBED_UPDATES
            )
            lines.append(f"  seed {seed:3d} {side.label:>10}: {cells}")
    return "\n".join(lines)


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
    add_original_option(parser)
    parser.add_argument(
        "--probe", action="store_true", help="print p(left)/p(right) at the start after each update"
    )
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
                pool.submit(run_seed, side, seed, args.steps, args.decay_over_run, args.verbose, args.probe)
                for side, seed in tasks
            ]:
                future.result()
        print()
        for side in sides:
            print(f"{side.label:>10}: " + "  ".join(f"{seed}:{side.finals[seed]:.3f}" for seed in seeds))
        for side in sides:
            print(summary(side))
        if args.probe:
            print(probe_table(sides, seeds))

    current = Side("current", REPO)
    sides = [current]
    if args.original is not None:
        sides.insert(0, Side("original", REPO, original_environ(args.original)))
    if args.baseline:
        with revision_checkout(args.baseline) as old:
            measure([Side(f"{args.baseline}", old.root, old.environ()), *sides])
    else:
        measure(sides)


if __name__ == "__main__":
    main()
