"""Long training runs in legs, and the figures of a run from its folder.

A run of a round-two scene to its 5e5 or 1e6 steps takes hours of a small machine. This script runs
it in legs: each leg is the real command

    mlagents-learn <RUN_DIR>/trainer_config.yaml --env example-envs/builds/<Env>.x86_64 --train
                   --run-id long --num-envs N --seed S --no-graphics --base-port <free> [--load]

started in RUN_DIR (``--load`` from the second leg on, so the run goes on from its last checkpoint),
stopped with SIGTERM (saved and exported, as on Ctrl-C) at the leg's time or step limit, or ending by
itself at the run's ``max_steps``. A leg records, next to the run's models and summaries:

* ``legN.log``: the console output;
* ``legN.pid``: the trainer's process id and the leg's start (seconds since the epoch);
* ``legN.tree.cpu``: lines ``<epoch> <CPU seconds>`` of the whole process tree (trainer, its worker
  processes and the builds), every 30 s, and a last line at the exit from the trainer's resource
  usage (its own and that of every process it and its children waited for);
* ``legN.exit``: the trainer's exit status and the leg's end.

``report`` prints a run's figures from that folder: per leg the steps, wall-clock and CPU seconds;
the mean reward of the first, best and last summary windows and of a rolling mean over several
windows (against the scene's benchmark); and per stretch of steps the means of the summary
windows' mean reward, episode length, entropy and the reward signals' figures (TensorBoard events).

Usage::

    python benchmarks/long_run.py leg runs/CrawlerDynamic --env CrawlerDynamic --hours 2
    python benchmarks/long_run.py leg runs/CrawlerDynamic --hours 2          # the next leg (--load)
    python benchmarks/long_run.py leg runs/VisualPushBlock --env VisualPushBlock --max-steps 5e5 --idle
    python benchmarks/long_run.py report runs/CrawlerDynamic --stretch 100000 --rolling 10

Prints figures only; it asserts nothing. The CPU seconds count every process of the run whatever
else runs on the machine; the wall-clock seconds depend on that load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proc_stat import TICKS_PER_SECOND, own_cpu_ticks, stat_fields
from train_to_benchmark import BUILDS, CONFIG, CONSOLE_LINE, TARGETS, LogTail, case_config, start_logged

from mlagents.example_envs.ports import find_free_port_range

RUN_ID = "long"
SAMPLE_SECONDS = 30.0
# The scalars of a run's TensorBoard events shown per stretch, besides the reward signals' own.
REWARD_TAG = "Environment/Cumulative Reward"
STRETCH_TAGS = (REWARD_TAG, "Environment/Episode Length", "Policy/Entropy")
SIGNAL_TAG = re.compile(r"(Curiosity|GAIL)")


# ------------------------------------------------------------------------------------------ one leg


@dataclass
class RunSettings:
    """What every leg of a run shares, kept in ``RUN_DIR/run.json`` by the first leg."""

    env: str
    num_envs: int
    seed: int

    @classmethod
    def load(cls, run_dir: Path) -> RunSettings | None:
        path = run_dir / "run.json"
        return cls(**json.loads(path.read_text())) if path.exists() else None

    def save(self, run_dir: Path) -> None:
        (run_dir / "run.json").write_text(json.dumps(self.__dict__) + "\n")


def tree_cpu_seconds(session: int) -> float:
    """CPU seconds (user + system) of the live processes of ``session``, with what each of them
    already reaped of its children. Linux /proc; 0.0 where it is missing."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(entry.name)
        if fields is not None and int(fields[3]) == session:  # field 3: session id
            total += own_cpu_ticks(fields) + int(fields[13]) + int(fields[14])  # and the reaped children
    return total / TICKS_PER_SECOND


def start_leg(run_dir: Path, args: argparse.Namespace) -> int:
    """Run one leg in ``run_dir``; returns the trainer's exit status."""
    run_dir.mkdir(parents=True, exist_ok=True)
    settings = RunSettings.load(run_dir)
    config = run_dir / "trainer_config.yaml"
    if settings is None:
        if not args.env:
            raise SystemExit(f"{run_dir} holds no run yet: give the scene of its first leg with --env.")
        if args.env not in TARGETS:
            raise SystemExit(f"Unknown environment {args.env}; choose from {', '.join(TARGETS)}.")
        settings = RunSettings(args.env, args.num_envs, args.seed)
        source = Path(args.config) if args.config else CONFIG
        written = case_config(args.env, "ppo", str(run_dir), max_steps=args.max_steps, shipped=source)
        if written != config:
            config.write_text(source.read_text())
        settings.save(run_dir)
    elif args.env not in (None, settings.env) or args.config or args.max_steps is not None:
        raise SystemExit(
            f"{run_dir} already holds a run of {settings.env}: its scene, trainer config and max_steps are "
            f"fixed by its first leg (see run.json and trainer_config.yaml there); give only the leg's limits."
        )
    build = BUILDS / f"{settings.env}.x86_64"
    if not build.exists():
        raise SystemExit(f"The build {build} is missing.")
    leg = len(list(run_dir.glob("leg*.log")))
    resume = (run_dir / "models" / f"{RUN_ID}-0").exists()
    command = [
        sys.executable,
        "-m",
        "mlagents.trainers.learn",
        str(config),
        f"--env={build}",
        f"--run-id={RUN_ID}",
        "--train",
        f"--num-envs={settings.num_envs}",
        f"--seed={settings.seed}",
        "--no-graphics",
        f"--base-port={find_free_port_range(settings.num_envs)}",
    ] + (["--load"] if resume else [])

    def idle() -> None:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

    log_path = run_dir / f"leg{leg}.log"
    process = start_logged(command, run_dir, log_path, preexec_fn=idle if args.idle else None)
    console = LogTail(log_path)
    start = time.time()
    (run_dir / f"leg{leg}.pid").write_text(f"{process.pid} {start:.0f}\n")
    cpu_path = run_dir / f"leg{leg}.tree.cpu"
    print(
        f"Leg {leg} of {run_dir} ({settings.env}, {'from the last checkpoint' if resume else 'a new run'}), "
        f"trainer pid {process.pid}; console: {log_path}",
        flush=True,
    )
    # SIGTERM or Ctrl-C of this script stops the leg the same way as its limits do.
    stop_requested = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGTERM, signal.SIGINT)}
    deadline = None if args.hours is None else start + args.hours * 3600
    stopping = False
    next_sample = start
    status = None
    try:
        while status is None:
            pid, wait_status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(wait_status)
                with open(cpu_path, "a") as out:
                    out.write(f"{time.time():.0f} {usage.ru_utime + usage.ru_stime:.0f}\n")
                break
            now = time.time()
            if now >= next_sample:
                with open(cpu_path, "a") as out:
                    out.write(f"{now:.0f} {tree_cpu_seconds(process.pid):.0f}\n")
                next_sample = now + SAMPLE_SECONDS
            step_reached = False
            for line in console.new_lines():
                match = CONSOLE_LINE.search(line)
                if match:
                    print("  ", line.split("INFO:mlagents.trainers: ", 1)[-1], flush=True)
                    step_reached |= args.until_step is not None and float(match["step"]) >= args.until_step
            if not stopping and (stop_requested or step_reached or (deadline is not None and now > deadline)):
                reason = (
                    "stop requested" if stop_requested else "step limit" if step_reached else "time limit"
                )
                print(
                    f"  {reason}: stopping the leg (the trainer saves and exports the model) ...", flush=True
                )
                process.send_signal(signal.SIGTERM)
                stopping = True
            time.sleep(0.25)
    finally:
        if status is None:  # this script failed: do not leave the run behind
            process.send_signal(signal.SIGTERM)
            process.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    process.returncode = status
    (run_dir / f"leg{leg}.exit").write_text(f"{status} {time.time():.0f}\n")
    print(f"Leg {leg} ended with exit status {status} after {time.time() - start:.0f} s.", flush=True)
    return status


# ------------------------------------------------------------------------------------------ figures


@dataclass
class Leg:
    index: int
    start: float  # seconds since the epoch
    end: float  # the last CPU record (or the exit)
    cpu_seconds: float
    exit_status: int | None


def read_legs(run_dir: Path) -> list[Leg]:
    """The legs recorded in ``run_dir`` (see the module's docstring), in order."""
    legs = []
    index = 0
    while (run_dir / f"leg{index}.pid").exists():
        start = float((run_dir / f"leg{index}.pid").read_text().split()[1])
        samples = [
            line.split()
            for line in (run_dir / f"leg{index}.tree.cpu").read_text().splitlines()
            if line.strip()
        ]
        end, cpu = (float(samples[-1][0]), float(samples[-1][1])) if samples else (start, 0.0)
        exit_path = run_dir / f"leg{index}.exit"
        exit_status = None
        if exit_path.exists():
            status_text, end_text = exit_path.read_text().split()
            exit_status, end = int(status_text), max(end, float(end_text))
        legs.append(Leg(index, start, end, cpu, exit_status))
        index += 1
    return legs


def read_scalars(summary_dir: Path) -> dict[str, list[tuple[int, float, float]]]:
    """Every scalar of the TensorBoard events in ``summary_dir``: tag -> [(step, wall time, value)],
    by step; a step written by two legs (a leg stopped after a summary, before its checkpoint) keeps
    the later value."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up notes are no figures
    from tensorboard.backend.event_processing import event_accumulator

    found: dict[str, dict[int, tuple[float, float]]] = {}
    for path in sorted(summary_dir.glob("events.out.tfevents.*")):
        acc = event_accumulator.EventAccumulator(str(path), size_guidance={event_accumulator.SCALARS: 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            for event in acc.Scalars(tag):
                known = found.setdefault(tag, {}).get(event.step)
                if known is None or known[0] <= event.wall_time:
                    found[tag][event.step] = (event.wall_time, event.value)
    return {tag: [(step, *pair) for step, pair in sorted(points.items())] for tag, points in found.items()}


def stretch_means(points: list[tuple[int, float, float]], size: int) -> dict[int, float]:
    """Stretch index -> the mean value of the points whose step lies in (index*size, (index+1)*size]:
    a summary is labelled with the step that ends its window."""
    sums: dict[int, list[float]] = {}
    for step, _, value in points:
        sums.setdefault((step - 1) // size, []).append(value)
    return {index: sum(values) / len(values) for index, values in sorted(sums.items())}


def rolling_means(points: list[tuple[int, float, float]], windows: int) -> list[tuple[int, float]]:
    """(step, mean of the last ``windows`` values) from the ``windows``-th point on."""
    values = [value for _, _, value in points]
    return [
        (points[i][0], sum(values[i + 1 - windows : i + 1]) / windows)
        for i in range(windows - 1, len(values))
    ]


def figure(value: float) -> str:
    """A figure with three significant digits (at least one decimal below 100)."""
    if round(value, 4) == 0 or not math.isfinite(value):
        return f"{value:g}"
    # Magnitude of the rounded value, so that -0.99997 shows as -1.00 like -1.0 does.
    digits = max(0, 2 - int(math.floor(math.log10(abs(round(value, 4))))))
    return f"{value:.{min(digits, 4)}f}"


def report(run_dir: Path, stretch: int, windows: int) -> None:
    """Print the figures of the run in ``run_dir``."""
    summaries = run_dir / "summaries"
    brains = sorted(p.name.split("_", 1)[1] for p in summaries.glob(f"{RUN_ID}_*") if p.is_dir())
    if not brains:
        raise SystemExit(f"{summaries} holds no TensorBoard summaries of a run {RUN_ID!r}.")
    scalars = {brain: read_scalars(summaries / f"{RUN_ID}_{brain}") for brain in brains}
    legs = read_legs(run_dir)
    benchmarks = {brain: targets for brain, targets, _ in TARGETS.values()}
    last_step = max(points[-1][0] for s in scalars.values() for points in s.values() if points)
    print(f"Run {run_dir}: brains {', '.join(brains)}; last summary at step {last_step}.")

    if legs:
        # Every summary of the first brain, by wall time: a leg's summaries are those written before
        # the next leg started.
        written = sorted({(step, wall) for points in scalars[brains[0]].values() for step, wall, _ in points})
        print()
        print("| Leg | Steps | Wall-clock s | CPU s | CPU ms per step | Steps/s | Ended |")
        print("|---|---|---|---|---|---|---|")
        before = 0
        for leg, following in zip(legs, [*legs[1:], None]):
            reached = max(
                (step for step, wall in written if following is None or wall < following.start),
                default=before,
            )
            steps, wall = reached - before, leg.end - leg.start
            ended = "no exit record" if leg.exit_status is None else f"exit status {leg.exit_status}"
            print(
                f"| {leg.index} | {before} - {reached} | {wall:.0f} | {leg.cpu_seconds:.0f} "
                f"| {1000 * leg.cpu_seconds / steps if steps else float('nan'):.1f} "
                f"| {steps / wall if wall else float('nan'):.0f} | {ended} |"
            )
            before = reached
        wall = sum(leg.end - leg.start for leg in legs)
        cpu = sum(leg.cpu_seconds for leg in legs)
        print(
            f"| all | 0 - {before} | {wall:.0f} ({wall / 3600:.1f} h) | {cpu:.0f} "
            f"| {1000 * cpu / before if before else float('nan'):.1f} | {before / wall if wall else float('nan'):.0f} | |"
        )

    for brain in brains:
        tags = scalars[brain]
        rewards = tags.get(REWARD_TAG, [])
        print()
        if not rewards:
            print(f"{brain}: no episode ended in any summary window.")
            continue
        first, best = rewards[0], max(rewards, key=lambda p: p[2])
        targets = benchmarks.get(brain, ())
        print(
            f"{brain}: {len(rewards)} summary windows with a mean reward. First {figure(first[2])} (step {first[0]}), "
            f"best {figure(best[2])} (step {best[0]}), last {figure(rewards[-1][2])} (step {rewards[-1][0]})."
        )
        rolled = rolling_means(rewards, windows)
        if rolled:
            top = max(rolled, key=lambda p: p[1])
            print(
                f"  Rolling mean of {windows} windows: first {figure(rolled[0][1])} (step {rolled[0][0]}), "
                f"best {figure(top[1])} (step {top[0]}), last {figure(rolled[-1][1])}."
            )
            for target in targets:
                hit = next((step for step, mean in rolled if mean >= target), None)
                print(
                    f"  Benchmark {target:g}: "
                    + (f"reached at step {hit}." if hit is not None else "not reached.")
                )
        shown = [tag for tag in STRETCH_TAGS if tag in tags] + sorted(
            tag for tag in tags if SIGNAL_TAG.search(tag)
        )
        means = {tag: stretch_means(tags[tag], stretch) for tag in shown}
        print()
        print(f"Per {stretch}-step stretch, the mean of its summary windows:")
        print("| Steps | " + " | ".join(tag.split("/", 1)[1] for tag in shown) + " |")
        print("|---" * (len(shown) + 1) + "|")
        for index in sorted({i for m in means.values() for i in m}):
            cells = [figure(means[tag][index]) if index in means[tag] else "-" for tag in shown]
            print(f"| {index * stretch} - {(index + 1) * stretch} | " + " | ".join(cells) + " |")


# ------------------------------------------------------------------------------------------ command line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    leg = commands.add_parser("leg", help="run the next leg of the run in RUN_DIR")
    leg.add_argument("run_dir", type=Path)
    leg.add_argument("--env", default=None, help=f"the scene (first leg only): {', '.join(TARGETS)}")
    leg.add_argument(
        "--config", default=None, help="trainer config (first leg only; default the shipped one)"
    )
    leg.add_argument(
        "--max-steps",
        type=float,
        default=None,
        help="the scene's brains train this many steps (first leg only)",
    )
    leg.add_argument("--num-envs", type=int, default=2, help="--num-envs of the run (first leg only)")
    leg.add_argument("--seed", type=int, default=1, help="--seed of the run (first leg only)")
    leg.add_argument("--hours", type=float, default=None, help="stop the leg after this many hours")
    leg.add_argument(
        "--until-step", type=float, default=None, help="stop the leg once a summary reaches this step"
    )
    leg.add_argument(
        "--idle", action="store_true", help="run at SCHED_IDLE priority (Linux), beside other work"
    )
    figures = commands.add_parser("report", help="print the figures of the run in RUN_DIR")
    figures.add_argument("run_dir", type=Path)
    figures.add_argument("--stretch", type=int, default=100000, help="steps per row of the stretch table")
    figures.add_argument("--rolling", type=int, default=10, help="summary windows of the rolling mean")
    args = parser.parse_args(argv)
    if args.command == "leg":
        sys.exit(start_leg(args.run_dir.resolve(), args))
    report(args.run_dir, args.stretch, args.rolling)


if __name__ == "__main__":
    main()
