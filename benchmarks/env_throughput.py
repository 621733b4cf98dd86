"""Throughput of the Python side of the wire and of SubprocessEnvManager on the Basic example.

Prints two tables (no asserts):

1. The cost of one ``UnityEnvironment.step`` over real gRPC on Basic (1 agent) and 3DBall (12
   agents), or the examples ``--examples`` names (``all``: every example): wall time, the Python-side CPU per step (``time.process_time``: every thread of the
   Python process, so gRPC's threads count too), the build process's CPU per step, and the CPU of
   the same step in-process with ``LocalEnvironment`` (same academy engine, no wire). "Wire CPU
   overhead" = Python-side + build - in-process: what the protocol costs on top of the
   simulation.
2. ``SubprocessEnvManager`` throughput (environment steps per second) with 1, 2, 4, 8 and 16 workers
   on Basic with ``--frame-time-ms 20`` (each academy step costs 20 ms, like a slow build), and the
   scaling efficiency rate / (N x single-worker rate); then the CPU-bound rate (no frame time) with
   4 workers (``--cpu-workers``): the medians over ``--cpu-rounds`` rounds of the rate and of the CPU
   milliseconds per environment step of the main process, the workers and the builds.

With ``--baseline REV`` every figure of tables 1 and 2 is also measured for that earlier revision
(its packages and builds, in a child process, interleaved with today's), side by side.
3. With ``--ray``: ``RayEnvManager`` (workers as actors of a local Ray instance) next to
   ``SubprocessEnvManager``, steps per second with 1, 4, 8 and 16 workers, same build and frame time,
   the medians of ``--ray-rounds`` (3) alternating rounds; the CPU milliseconds per environment step
   of each side (main process, workers or actors, builds); and how many Ray workers were stepped on
   direct connections (all, unless they fell back to Ray method calls).

Usage::

    python benchmarks/env_throughput.py            # full run (about a minute)
    python benchmarks/env_throughput.py --quick    # short run
    python benchmarks/env_throughput.py --wire-only --baseline 2cf69b1   # table 1 before/after
    python benchmarks/env_throughput.py --wire-only --examples all      # table 1 for every example
    python benchmarks/env_throughput.py --ray --ray-only   # only table 3 (needs mlagents_envs[ray], ~6 min)
    python benchmarks/env_throughput.py --scaling-only --baseline 2cf69b1   # table 2, before/after
"""

import argparse
import json
import logging
import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.env_manager import EnvManager
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.policy import Policy
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.envs.timers import get_timer_root, reset_timers
from mlagents.example_envs.ports import find_free_port_range

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proc_stat import TICKS_PER_SECOND, own_cpu_ticks, stat_fields

BUILDS = Path(__file__).resolve().parents[1] / "example-envs" / "builds"
BASIC_BUILD = str(BUILDS / "Basic.x86_64")
BRAIN = "BasicLearning"


class RandomPolicy(Policy):
    """Uniform random actions for Basic's single branch of 3 (no TensorFlow: measures the plumbing)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def get_action(self, brain_info) -> ActionInfo:
        n = len(brain_info.agents)
        return ActionInfo(self.rng.integers(0, 3, size=(n, 1)).astype(np.float32), None, None, None, None)


def quiet_environment(worker_id: int, build: str = BASIC_BUILD, **kwargs) -> UnityEnvironment:
    """Environment factory for the workers: without the start-up banner of every environment."""
    logging.getLogger("mlagents.envs").setLevel(logging.WARNING)
    return UnityEnvironment(build, worker_id=worker_id, **kwargs)


WIRE_BUILDS = ("Basic", "3DBall")  # the examples of table 1 by default


def build_cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) the process ``pid`` used so far, from /proc."""
    fields = stat_fields(pid)
    if fields is None:
        raise ProcessLookupError(f"process {pid} has ended")
    return own_cpu_ticks(fields) / TICKS_PER_SECOND


def wire_figures(name: str, build: str, steps: int, in_process: bool = True) -> dict[str, float]:
    """Milliseconds per ``UnityEnvironment.step`` of the example ``name`` over gRPC (random
    actions): wall time, the exchange's share (timer), Python-side CPU (``time.process_time``,
    every thread of this process), the build process's CPU, and the CPU of the same step
    in-process (``LocalEnvironment``: the simulation's own work)."""
    import mlagents.example_envs.registry  # noqa: F401  (registers the examples' names)
    from mlagents.example_envs.sdk.local import LocalEnvironment

    rng = np.random.default_rng(0)

    def random_actions(agents_by_brain: dict[str, int]) -> dict[str, np.ndarray]:
        """Uniform random actions for every agent that decides (discrete: per branch)."""
        actions = {}
        for brain_name, k in agents_by_brain.items():
            brain = brains[brain_name]
            if brain.vector_action_space_type == "discrete":
                branches = brain.vector_action_space_size
                actions[brain_name] = rng.integers(0, branches, size=(k, len(branches))).astype(np.float32)
            else:
                size = (k, brain.vector_action_space_size[0])
                actions[brain_name] = rng.uniform(-1, 1, size=size).astype(np.float32)
        return actions

    def play(environment: Any, last: Any, count: int) -> Any:
        """``count`` steps of random actions (resetting when the academy is done) from the
        observations ``last``; the last observations. Both the environment over gRPC and the
        in-process one take and give brain name -> observations with ``agents``."""
        for _ in range(count):
            if environment.global_done:
                last = environment.reset()
            last = environment.step(random_actions({name: len(last[name].agents) for name in brains}))
        return last

    env = UnityEnvironment(build, base_port=find_free_port_range(1))
    try:
        brains = {name: env.brains[name] for name in env.external_brain_names}
        info = env.reset()
        agents = sum(len(info[name].agents) for name in brains)

        info = play(env, info, min(steps, 200))  # warm-up
        reset_timers()
        build_pid = env.proc1.pid if env.proc1 is not None else None
        build_cpu = build_cpu_seconds(build_pid) if build_pid is not None else 0.0
        cpu = time.process_time()
        start = time.perf_counter()
        play(env, info, steps)
        wall = (time.perf_counter() - start) / steps
        cpu = (time.process_time() - cpu) / steps
        build_cpu = (build_cpu_seconds(build_pid) - build_cpu) / steps if build_pid is not None else 0.0
        step_node = get_timer_root().children["UnityEnvironment.step"]
        exchange = step_node.children["communicator.exchange"].total / step_node.count
    finally:
        env.close()

    figures = {
        "agents": agents,
        "step_ms": wall * 1e3,
        "exchange_ms": exchange * 1e3,
        "python_cpu_ms": cpu * 1e3,
        "build_cpu_ms": build_cpu * 1e3,
    }
    if not in_process:
        return figures
    local = LocalEnvironment(name, seed=0)
    batches = play(local, local.reset(), min(steps, 200))
    local_cpu = time.process_time()
    play(local, batches, steps)
    local_cpu = (time.process_time() - local_cpu) / steps
    local.close()
    figures["local_cpu_ms"] = local_cpu * 1e3
    return figures


def measure_wire(
    steps: int, baseline: str | None = None, rounds: int = 3, examples: tuple[str, ...] = WIRE_BUILDS
) -> None:
    """Table 1. With ``baseline``, each figure is the median of ``rounds`` runs of each side,
    alternating (the baseline's in a child process importing that revision)."""
    print(f"1) UnityEnvironment.step over gRPC (random actions), ms per step, mean over {steps} steps")
    if baseline is None:
        print(
            "   example               agents   step (wall)   Python-side CPU   build CPU   in-process CPU"
            "   build / in-process   wire CPU overhead"
        )
        for name in examples:
            f = wire_figures(name, str(BUILDS / f"{name}.x86_64"), steps)
            overhead = f["python_cpu_ms"] + f["build_cpu_ms"] - f["local_cpu_ms"]
            print(
                f"   {name:19s}   {f['agents']:6.0f}   {f['step_ms']:11.3f}   {f['python_cpu_ms']:15.3f}   "
                f"{f['build_cpu_ms']:9.3f}   {f['local_cpu_ms']:14.3f}   {f['build_cpu_ms'] / f['local_cpu_ms']:18.2f}x"
                f"   {overhead:17.3f}",
                flush=True,
            )
        print("   Python-side CPU: time.process_time of the Python process (all its threads) per step;")
        print("   build CPU: the build process's CPU per step; in-process CPU: the same step in")
        print(
            "   LocalEnvironment (the simulation alone); wire CPU overhead: Python-side + build - in-process."
        )
        print("   Random actions for every deciding agent of every brain Python controls.")
        print()
        return
    from baseline import revision_checkout, run_json

    script = Path(__file__).resolve()
    print(f"   before = {baseline}, after = this tree; median of {rounds} alternating runs per side")
    print(
        "   example   agents   Python-side CPU before / after      build CPU before / after      step (wall) before / after"
    )
    with revision_checkout(baseline) as old:
        for name in examples:
            sides: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
            for _ in range(rounds):
                for side, environ, build in (
                    ("before", old.environ(), old.build(name)),
                    ("after", None, BUILDS / f"{name}.x86_64"),
                ):
                    args = ["--wire-json", name, str(build), "--steps", str(steps)]
                    sides[side].append(run_json(script, args, environ))

            figures = [
                tuple(float(np.median([f[key] for f in sides[side]])) for side in ("before", "after"))
                for key in ("python_cpu_ms", "build_cpu_ms", "step_ms")
            ]
            cells = "   ".join(f"{b:7.3f} / {a:7.3f} ({b / a:4.2f}x)" for b, a in figures)
            print(f"   {name:7s}   {sides['after'][0]['agents']:6.0f}   {cells}")
    print()


def measure_manager_cpu(
    n_env: int, seconds: float, frame_time_ms: float, kind: str = "subprocess", build: str = BASIC_BUILD
) -> dict[str, float]:
    """Steps per second (``rate``) and, for subprocess workers, the CPU milliseconds per environment
    step of the main process (``main_ms``), of the worker processes together (``workers_ms``) and of
    the builds together (``builds_ms``): on a loaded machine the CPU figures vary much less than
    the rate."""
    factory = partial(
        quiet_environment,
        build=build,
        base_port=find_free_port_range(n_env),
        args=["--frame-time-ms", f"{frame_time_ms:g}"],
    )
    manager: EnvManager
    if kind == "ray":
        from mlagents.envs.ray_env_manager import RayEnvManager

        manager = RayEnvManager(factory, n_env)
    else:
        manager = SubprocessEnvManager(factory, n_env)
    try:
        manager.set_policy(BRAIN, RandomPolicy())
        manager.reset()
        warm_up_end = time.perf_counter() + min(1.0, seconds / 3)
        while time.perf_counter() < warm_up_end:
            manager.step()
        workers = manager.env_workers if isinstance(manager, SubprocessEnvManager) else []
        worker_pids = [worker.process.pid for worker in workers if worker.process.pid is not None]
        build_pids = [worker.build_pid for worker in workers if worker.build_pid is not None]
        if kind == "ray":
            # The actors of the local Ray instance and their builds run on this machine.
            ray_workers = getattr(manager, "env_workers", [])
            worker_pids = [w.started.actor_pid for w in ray_workers if w.started and w.started.actor_pid]
            build_pids = [w.build_pid for w in ray_workers if w.build_pid is not None]

        def cpu_seconds(pids: list[int]) -> float:
            return sum(build_cpu_seconds(pid) for pid in pids)

        workers_cpu, builds_cpu = cpu_seconds(worker_pids), cpu_seconds(build_pids)
        main_cpu = time.process_time()
        env_steps = 0
        start = time.perf_counter()
        end = start + seconds
        while time.perf_counter() < end:
            env_steps += len(manager.step())
        figures = {"rate": env_steps / (time.perf_counter() - start)}
        if kind == "ray":
            # Workers stepped on direct connections (the others fell back to Ray method calls).
            figures["direct"] = float(sum(worker.conn is not None for worker in ray_workers))
        if worker_pids:
            per_step_ms = 1000.0 / max(env_steps, 1)
            figures["main_ms"] = (time.process_time() - main_cpu) * per_step_ms
            figures["workers_ms"] = (cpu_seconds(worker_pids) - workers_cpu) * per_step_ms
            figures["builds_ms"] = (cpu_seconds(build_pids) - builds_cpu) * per_step_ms
        return figures
    finally:
        manager.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run (fewer steps, shorter windows)")
    parser.add_argument(
        "--frame-time-ms", type=float, default=20.0, help="academy step cost of the build (ms)"
    )
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16], help="worker counts of table 2"
    )
    parser.add_argument(
        "--cpu-workers", type=int, default=4, help="table 2: workers of the CPU-bound rate (no frame time)"
    )
    parser.add_argument(
        "--cpu-rounds", type=int, default=3, help="table 2: rounds of the CPU-bound rate (medians shown)"
    )
    parser.add_argument("--scaling-only", action="store_true", help="only table 2")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="tables 1 and 2: also measure revision REV (e.g. 2cf69b1), interleaved",
    )
    parser.add_argument(
        "--scaling-json", nargs=4, metavar=("N", "FRAME_MS", "SECONDS", "BUILD"), help=argparse.SUPPRESS
    )
    parser.add_argument("--ray", action="store_true", help="also table 3: RayEnvManager next to subprocesses")
    parser.add_argument("--ray-only", action="store_true", help="with --ray: only table 3")
    parser.add_argument(
        "--ray-workers", type=int, nargs="+", default=[1, 4, 8, 16], help="worker counts of table 3"
    )
    parser.add_argument(
        "--ray-rounds",
        type=int,
        default=3,
        help="table 3: alternating rounds per worker count (medians shown)",
    )
    parser.add_argument("--steps", type=int, help="steps per table-1 measurement")
    parser.add_argument("--wire-only", action="store_true", help="only table 1")
    parser.add_argument(
        "--examples",
        default=",".join(WIRE_BUILDS),
        help="table 1: comma-separated example names, or 'all' for every example (default Basic,3DBall)",
    )
    parser.add_argument("--wire-json", nargs=2, metavar=("EXAMPLE", "BUILD"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    logging.getLogger("mlagents.envs").setLevel(logging.WARNING)
    if options.scaling_json:  # one measurement of table 2, for a --baseline run (see measure_side)
        n_env, frame_ms, seconds_text, build = options.scaling_json
        figures = measure_manager_cpu(int(n_env), float(seconds_text), float(frame_ms), build=build)
        print(json.dumps(figures))
        return
    if options.wire_json:  # one side of --baseline: table-1 figures of one build as JSON
        print(json.dumps(wire_figures(*options.wire_json, options.steps or 3000, in_process=False)))
        return

    print(f"CPU cores available: {len(os.sched_getaffinity(0))}; load average: {os.getloadavg()[0]:.2f}")
    print()
    seconds = 2.0 if options.quick else 8.0
    if options.scaling_only:
        measure_subprocess_scaling(options, seconds)
    elif not (options.ray and options.ray_only):
        from mlagents.example_envs import example_names  # here: a --baseline side may predate it

        examples = tuple(example_names()) if options.examples == "all" else tuple(options.examples.split(","))
        unknown = sorted(set(examples) - set(example_names()))
        if unknown:
            raise SystemExit(
                f"--examples: no example named {', '.join(unknown)}; known: {', '.join(example_names())}"
            )
        measure_wire(options.steps or (300 if options.quick else 3000), options.baseline, examples=examples)
        if not options.wire_only:
            measure_subprocess_scaling(options, seconds)
    if options.ray:
        compare_with_ray(options, seconds)


def compare_with_ray(options: argparse.Namespace, seconds: float) -> None:
    import ray

    # One local Ray instance for every measurement (the managers use it and leave it running), sized
    # for the largest worker count; quiet like the one RayEnvManager starts itself.
    ray.init(
        num_cpus=max(max(options.ray_workers), os.cpu_count() or 1),
        include_dashboard=False,
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    rounds = options.ray_rounds
    try:
        print(
            f"3) RayEnvManager (local Ray instance) next to SubprocessEnvManager on Basic, --frame-time-ms "
            f"{options.frame_time_ms:g}, random policy, {seconds:g} s per measurement, medians of {rounds} "
            "alternating rounds"
        )
        print(
            "   CPU ms: per environment step, of the main process, the workers (processes or actors) and the builds"
        )
        print(
            "   workers   subprocess steps/s   ray steps/s   ray / subprocess   subprocess CPU ms   ray CPU ms"
            "   direct connections"
        )
        for n_env in options.ray_workers:
            sides: dict[str, list[dict[str, float]]] = {"subprocess": [], "ray": []}
            for _ in range(rounds):  # alternating: a burst of load elsewhere hits both sides alike
                for kind, runs in sides.items():
                    runs.append(measure_manager_cpu(n_env, seconds, options.frame_time_ms, kind=kind))
            medians = {kind: _medians(runs) for kind, runs in sides.items()}
            by_processes, on_ray = medians["subprocess"], medians["ray"]
            print(
                f"   {n_env:7d}   {by_processes['rate']:18.1f}   {on_ray['rate']:11.1f}   "
                f"{on_ray['rate'] / by_processes['rate']:16.2f}   {_cpu_ms(by_processes):17.3f}   "
                f"{_cpu_ms(on_ray):10.3f}   {min(run['direct'] for run in sides['ray']):.0f} of {n_env}",
                flush=True,
            )
    finally:
        ray.shutdown()


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: float(np.median([run[key] for run in runs])) for key in runs[0]}


def _cpu_ms(figures: dict[str, float]) -> float:
    """CPU milliseconds per environment step of the main process, the workers and the builds."""
    return figures["main_ms"] + figures["workers_ms"] + figures["builds_ms"]


def measure_subprocess_scaling(options: argparse.Namespace, seconds: float) -> None:
    if options.baseline:
        from baseline import revision_checkout

        with revision_checkout(options.baseline) as old:
            print_scaling_table(options, seconds, old.environ(), str(old.build("Basic")), old.commit[:7])
    else:
        print_scaling_table(options, seconds, None, BASIC_BUILD, "")


def measure_side(
    n_env: int, seconds: float, frame_time_ms: float, environ: dict[str, str] | None, build: str
) -> dict[str, float]:
    """:func:`measure_manager_cpu` of today's code (``environ`` None, in this process), or of the
    revision whose ``environ`` is given (in a child process running this script under it)."""
    if environ is None:
        return measure_manager_cpu(n_env, seconds, frame_time_ms)
    from baseline import run_json

    args = ["--scaling-json", str(n_env), f"{frame_time_ms:g}", f"{seconds:g}", build]
    figures: dict[str, float] = run_json(Path(__file__), args, environ)
    return figures


def print_scaling_table(
    options: argparse.Namespace,
    seconds: float,
    old_environ: dict[str, str] | None,
    old_build: str,
    old_name: str,
) -> None:
    """Table 2; with a baseline, each measurement of the old revision right after today's."""
    frame = options.frame_time_ms
    print(
        f"2) SubprocessEnvManager on Basic, --frame-time-ms {frame:g}, random policy, {seconds:g} s per "
        "measurement; efficiency = rate / (N x 1-worker rate)"
    )
    sides = ["today"] + ([f"{old_name} (before)"] if old_environ is not None else [])
    print("   workers" + "".join(f"   {side:>24}" for side in sides))
    print("          " + "   steps/s  efficiency        " * len(sides))
    single: list[float] = []
    for n_env in options.workers:
        rates = [measure_side(n_env, seconds, frame, None, BASIC_BUILD)["rate"]]
        if old_environ is not None:
            rates.append(measure_side(n_env, seconds, frame, old_environ, old_build)["rate"])
        if not single:
            single = [rate / n_env for rate in rates]
        cells = [f"   {rate:10.1f}  {rate / (n_env * one):9.1%}     " for rate, one in zip(rates, single)]
        print(f"   {n_env:7d}" + "".join(cells), flush=True)
    n_cpu = options.cpu_workers
    print(
        f"   CPU-bound (no frame time), {n_cpu} workers, {options.cpu_rounds} alternating rounds; CPU ms "
        "per environment step of the main process, the workers and the builds:"
    )
    print("   side                   steps/s   main ms  workers ms  builds ms  total ms")
    by_side: list[list[dict[str, float]]] = [[] for _ in sides]
    for _ in range(options.cpu_rounds):
        by_side[0].append(measure_side(n_cpu, seconds, 0.0, None, BASIC_BUILD))
        if old_environ is not None:
            by_side[1].append(measure_side(n_cpu, seconds, 0.0, old_environ, old_build))
    medians = [{key: float(np.median([run[key] for run in runs])) for key in runs[0]} for runs in by_side]
    for side, figures in zip(sides, medians):
        total = figures["main_ms"] + figures["workers_ms"] + figures["builds_ms"]
        print(
            f"   {side:20s} {figures['rate']:9.1f} {figures['main_ms']:9.3f} {figures['workers_ms']:11.3f} "
            f"{figures['builds_ms']:10.3f} {total:9.3f}"
        )
    if len(medians) > 1:
        rate_ratio = medians[0]["rate"] / medians[1]["rate"]
        totals = [figures["main_ms"] + figures["workers_ms"] + figures["builds_ms"] for figures in medians]
        print(
            f"   today / {old_name}: {rate_ratio:.2f}x the rate (medians), {totals[1] / totals[0]:.2f}x less "
            "CPU per step"
        )
    print()


if __name__ == "__main__":  # required: worker processes are started with "spawn"
    main()
