"""How fast do the example environments simulate? Agent-steps per second on one core.

For every example in the registry whose module imports, runs random actions through
:class:`~mlagents.example_envs.sdk.local.LocalEnvironment` (the same Academy engine a build
runs, without the wire) and prints one table row:

    agent-steps/s = agents x academy (physics) steps / CPU seconds of this process

(the same per wall-clock second is printed beside it: on a busy machine it is lower).

Random actions: uniform in [-1, 1] for continuous brains; for discrete brains a uniform
choice per branch among the actions the agent's mask allows. The time also splits into the
scene's hooks (the simulation itself), the Academy engine, and drawing the random actions.

The process pins itself to one CPU and limits numeric libraries to one thread, so the figure
is a one-core figure. Usage::

    python benchmarks/env_speed.py                    # every example, 5 s each
    python benchmarks/env_speed.py 3DBall GridWorld --seconds 10
    python benchmarks/env_speed.py 3DBall --profile   # plus the top functions by own time
    python benchmarks/env_speed.py Pyramids-standing  # Pyramids with every brick pyramid standing
    python benchmarks/env_speed.py Pyramids-scripted  # Pyramids as training sees it (see below)

For the examples with cameras (the Visual* ones) a second table gives the cost of one rendered
camera frame: the time of the scene's ``render`` hook (moving the view model to the scene's
state and drawing) per image it returned.

Variants (not in the registry): ``Pyramids-standing`` presses every switch right after the reset,
so that all 16 brick pyramids stand (and rest) while the random agents move about.
``Pyramids-scripted`` is Pyramids the way a policy that has learnt something drives it: the
scripted player (``switch_then_gold``: to the switch, through the brick pyramid, to the gold)
with one decision in five replaced by a random action, so that switches are pressed, piles are
knocked over and scattered bricks pushed about (random actions alone seldom press a switch).
"""

from __future__ import annotations

import os

# Before numpy is imported: one thread for every numeric library.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import importlib  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

from mlagents.example_envs.registry import SCENES  # noqa: E402
from mlagents.example_envs.sdk.academy import DecisionBatch, agent_indices  # noqa: E402
from mlagents.example_envs.sdk.local import LocalEnvironment  # noqa: E402
from mlagents.example_envs.sdk.scene import BrainSpec, Scene  # noqa: E402

SCENE_HOOKS = (
    "pre_step",
    "academy_reset",
    "agent_reset",
    "collect_observations",
    "render",
    "academy_step",
    "agent_action",
    "physics_step",
)


@dataclass
class SpeedResult:
    """One row of the table."""

    name: str
    agents: int
    academy_steps: int
    decisions: int  # LocalEnvironment.step calls (exchange points)
    seconds: float  # wall clock
    cpu_seconds: float  # CPU time of this process (what one core delivered)
    scene_seconds: float
    action_seconds: float
    frames: int = 0  # camera images the scene rendered
    render_seconds: float = 0.0  # CPU time in the scene's render hook

    @property
    def ms_per_frame(self) -> float:
        """CPU milliseconds of the render hook per camera image."""
        return 1000.0 * self.render_seconds / self.frames if self.frames else float("nan")

    @property
    def agent_steps_per_second(self) -> float:
        """Per wall-clock second."""
        return self.agents * self.academy_steps / self.seconds

    @property
    def agent_steps_per_cpu_second(self) -> float:
        """Per second of CPU time: the one-core figure even when other processes share the CPU."""
        return self.agents * self.academy_steps / self.cpu_seconds

    @property
    def engine_seconds(self) -> float:
        """Everything that is neither the scene nor the random policy: Academy + LocalEnvironment."""
        return self.seconds - self.scene_seconds - self.action_seconds


class RandomPolicy:
    """Random actions for every brain of a scene (masks respected)."""

    def __init__(self, brains: dict[str, BrainSpec], seed: int = 0) -> None:
        self.brains = brains
        self.rng = np.random.default_rng(seed)

    def __call__(self, batches: dict[str, DecisionBatch]) -> dict[str, np.ndarray]:
        actions: dict[str, np.ndarray] = {}
        for name, batch in batches.items():
            k = len(batch.agents)
            if k == 0:
                continue
            brain = self.brains[name]
            if brain.vector_action_space_type == "continuous":
                actions[name] = self.rng.uniform(-1.0, 1.0, (k, brain.action_length)).astype(np.float32)
                continue
            columns, start = [], 0
            for size in brain.vector_action_size:
                scores = self.rng.random((k, size))
                if batch.action_masks is not None:
                    scores[batch.action_masks[:, start : start + size]] = -1.0
                columns.append(np.argmax(scores, axis=1))
                start += size
            actions[name] = np.stack(columns, axis=1).astype(np.float32)
        return actions


def _time_scene_hooks(scene: Scene, spent: list[float]) -> None:
    """Wrap the scene's hooks on the instance so that their run time adds up in ``spent[0]``."""
    for hook in SCENE_HOOKS:
        original = getattr(scene, hook)

        def timed(*args, _original=original, **kwargs):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        setattr(scene, hook, timed)


def _raise_every_pyramid(env: LocalEnvironment) -> None:
    """Pyramids: press every switch, so that every area's brick pyramid stands."""
    scene = env.academy.scene
    for area, pyramid in enumerate(scene.pyramids):  # type: ignore[attr-defined]
        scene.switch_on[area] = True  # type: ignore[attr-defined]
        pyramid.spawn(scene.brick_roots[area] - scene.origins[area])  # type: ignore[attr-defined]


class ScriptedPyramidsPolicy:
    """Pyramids' scripted player with a random action instead of its own for each agent with
    probability ``random_share`` per decision."""

    def __init__(self, env: LocalEnvironment, seed: int = 0, random_share: float = 0.2) -> None:
        from mlagents.example_envs.pyramids import switch_then_gold

        self.scene = env.academy.scene
        self.decide = switch_then_gold
        self.rng = np.random.default_rng(seed)
        self.random_share = random_share

    def __call__(self, batches: dict[str, DecisionBatch]) -> dict[str, np.ndarray]:
        actions = {}
        for name, batch in batches.items():
            chosen = self.decide(self.scene)[agent_indices(batch.agents)]  # type: ignore[arg-type]
            random = self.rng.random(len(chosen)) < self.random_share
            chosen[random, 0] = self.rng.integers(0, 5, int(random.sum()))
            actions[name] = chosen
        return actions


#: variant name -> (registry name, setup after the reset, warm-up decisions)
VARIANTS: dict[str, tuple[str, Callable[[LocalEnvironment], None] | None, int]] = {
    # 60 decisions: the piles drop onto the floor and come to rest first
    "Pyramids-standing": ("Pyramids", _raise_every_pyramid, 60),
    "Pyramids-scripted": ("Pyramids", None, 20),
}
#: variants driven by another policy than random actions: name -> policy(env, seed)
VARIANT_POLICIES: dict[
    str, Callable[[LocalEnvironment, int], Callable[[dict[str, DecisionBatch]], dict[str, np.ndarray]]]
] = {
    "Pyramids-scripted": ScriptedPyramidsPolicy,
}


def _count_frames(scene: Scene, counts: list[float]) -> None:
    """Wrap the scene's render hook: counts[0] += images returned, counts[1] += CPU seconds spent
    (of this process, OpenGL's software rasteriser threads included)."""
    original = scene.render

    def render(agents: np.ndarray, camera: int) -> np.ndarray:
        start = time.process_time()
        images = original(agents, camera)
        counts[1] += time.process_time() - start
        counts[0] += len(images)
        return images

    scene.render = render  # type: ignore[method-assign]


def measure(name: str, seconds: float, split_time: bool = True, seed: int = 0) -> SpeedResult:
    """Run ``name`` (a registry name or a variant) with random actions for about ``seconds``
    (after a short warm-up)."""
    scene_name, setup, warm_up = VARIANTS.get(name, (name, None, 20))
    env = LocalEnvironment(scene_name, seed=seed)
    policy: Callable[[dict[str, DecisionBatch]], dict[str, np.ndarray]] = (
        VARIANT_POLICIES[name](env, seed) if name in VARIANT_POLICIES else RandomPolicy(env.brains, seed)
    )
    batches = env.reset()
    if setup is not None:
        setup(env)
    for _ in range(warm_up):  # warm-up: first-call costs, caches
        batches = env.step(policy(batches))
    counted = [0.0, 0.0]
    _count_frames(env.academy.scene, counted)
    spent = [0.0]
    if split_time:
        _time_scene_hooks(env.academy.scene, spent)
    academy = env.academy
    first_step = academy.total_step_count
    action_seconds = 0.0
    decisions = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        t0 = time.perf_counter()
        actions = policy(batches)
        action_seconds += time.perf_counter() - t0
        batches = env.step(actions)
        decisions += 1
        if env.global_done:
            batches = env.reset()
        if decisions % 16 == 0 and time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    env.close()
    return SpeedResult(
        name=name,
        agents=academy.num_agents,
        academy_steps=academy.total_step_count - first_step,
        decisions=decisions,
        seconds=elapsed,
        cpu_seconds=cpu,
        scene_seconds=spent[0] if split_time else float("nan"),
        action_seconds=action_seconds,
        frames=int(counted[0]),
        render_seconds=counted[1],
    )


def importable(name: str) -> str | None:
    """None when the scene's module imports, else the reason it does not."""
    module = SCENES[VARIANTS[name][0] if name in VARIANTS else name].split(":")[0]
    try:
        importlib.import_module(module)
    except ImportError as error:
        return str(error)
    return None


def pin_to_one_cpu() -> int | None:
    """Restrict this process to the first CPU it may run on; returns that CPU (None if unsupported)."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def print_table(results: list[SpeedResult]) -> None:
    header = (
        f"{'environment':<20} {'agents':>6} {'agent-steps/s':>14} {'(wall clock)':>13} {'academy steps/s':>16}"
        f" {'decisions/s':>12} {'scene %':>8} {'engine %':>9} {'actions %':>10}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.name:<20} {r.agents:>6} {r.agent_steps_per_cpu_second:>14,.0f} {r.agent_steps_per_second:>13,.0f}"
            f" {r.academy_steps / r.cpu_seconds:>16,.0f} {r.decisions / r.cpu_seconds:>12,.0f}"
            f" {100 * r.scene_seconds / r.seconds:>8.1f}"
            f" {100 * r.engine_seconds / r.seconds:>9.1f} {100 * r.action_seconds / r.seconds:>10.1f}"
        )
    print(
        "\nRates are per CPU-second of this process (one core); '(wall clock)' is agent-steps per elapsed\n"
        "second (lower when other processes shared the core). Shares of the elapsed time: scene = the\n"
        "scene's hooks (simulation), engine = Academy + LocalEnvironment, actions = drawing random actions."
    )
    rendered = [r for r in results if r.frames]
    if rendered:
        print(f"\n{'environment':<20} {'camera frames':>14} {'CPU ms per frame':>17} {'share of CPU':>13}")
        for r in rendered:
            print(
                f"{r.name:<20} {r.frames:>14,} {r.ms_per_frame:>17.2f} {100 * r.render_seconds / r.cpu_seconds:>12.1f}%"
            )
        print(
            "CPU ms per frame: the scene's render hook (view model moved to the state, offscreen OpenGL\n"
            "draw, read-back) per camera image, in CPU time of this process."
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "envs", nargs="*", help="registry names (default: every example whose module imports)"
    )
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="measuring time per environment (default 5)"
    )
    parser.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU")
    parser.add_argument("--profile", action="store_true", help="also print the top functions by own time")
    args = parser.parse_args(argv)

    unknown = [name for name in args.envs if name not in SCENES and name not in VARIANTS]
    if unknown:
        parser.error(f"unknown example(s) {unknown}; known: {sorted(SCENES) + sorted(VARIANTS)}")
    cpu = None if args.no_pin else pin_to_one_cpu()
    print(
        f"one core: {'CPU ' + str(cpu) if cpu is not None else 'not pinned'}; {args.seconds:g} s per environment"
    )

    results = []
    for name in args.envs or list(SCENES) + list(VARIANTS):
        reason = importable(name)
        if reason is not None:
            print(f"{name}: skipped, its module does not import ({reason})")
            continue
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            result = measure(name, args.seconds, split_time=False)
            profiler.disable()
            print(f"\n{name}: top functions by own time")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
            result = measure(name, args.seconds)
        else:
            result = measure(name, args.seconds)
        results.append(result)
    print()
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
