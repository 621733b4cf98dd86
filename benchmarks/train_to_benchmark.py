"""Time to the benchmark mean reward: mlagents-learn with the shipped config on the examples.

For every environment and every --num-envs value, runs the real command

    mlagents-learn config/trainer_config.yaml --env example-envs/builds/<Env>.x86_64 --train
                   --num-envs N --no-graphics --run-id bench --base-port <free>

in a temporary folder, reads its console lines (``Step: ... Mean Reward: ...``, written every
``summary_freq`` steps) and stops it with SIGTERM (handled like Ctrl-C: the model is saved and exported) as soon as
the mean reward reaches the benchmark, or when the run hits its ``max_steps`` or the time limit. It
then prints the steps and wall-clock seconds to the benchmark and how the training time split between
environment stepping, action selection, policy updates, bootstrap value estimates and the trainer's
bookkeeping (from the run's timers JSON).

Benchmarks (docs/Learning-Environment-Examples.md): Basic 0.94, 3DBall 100, Bouncer 10, Reacher 30,
Tennis 2.5, FoodCollector 10, Pyramids 1.75, CrawlerStatic 2000, CrawlerDynamic 400, Walker 1000.
Under the Basic scene's rules the best possible episode return is 0.93 (7 steps of -0.01 to the +1
goal), so Basic is measured against 0.93. The script also reports when the console shows 0.94: as in ML-Agents 0.9,
the trainer does not count the reward of the first step after an episode ends (that step's action
was chosen from the finished episode's last observation), so the optimal policy shows 0.94 in the
console and TensorBoard; that is where the documented 0.94 comes from.

Usage::

    python benchmarks/train_to_benchmark.py                       # Basic and 3DBall, 1 and 4 envs
    python benchmarks/train_to_benchmark.py --envs Basic --num-envs 1 --max-minutes 10
    python benchmarks/train_to_benchmark.py --envs Reacher,Tennis --num-envs 1 --max-steps 5e5
    python benchmarks/train_to_benchmark.py --envs 3DBall --num-envs 1 --cases ppo,pretraining --seeds 1,2,3
    python benchmarks/train_to_benchmark.py --envs 3DBall --num-envs 4 --cases ppo,sac --seeds 1,2,3

    python benchmarks/train_to_benchmark.py --signal-cases Pyramids --num-envs 1 --side-by-side --seeds 1

``--signal-cases Pyramids`` is the curiosity comparison: the shipped ``PyramidsLearning`` section
(extrinsic + curiosity) against the same section with the extrinsic signal alone, on the same seeds
and step budget (``--max-steps``, default the section's 500000), run one after the other or, with
``--side-by-side``, at the same time; the tables show both.

``--cases sac`` trains with the brain's Soft Actor-Critic section of ``config/sac_trainer_config.yaml``
instead (``--cases ppo,sac --seeds 1,2,3``: both trainers on the same seeds).
``--cases pretraining`` trains with the brain's shipped section plus the ``pretraining`` section of
:data:`PRETRAINING` (behavioural cloning from the shipped demonstration, ``demos/Expert<Env>.demo``);
``--seeds`` runs every case once per seed (``--seed``), so that the cases compare on the same seeds;
``--demo PATH`` uses another demonstration for the pretraining case.
``--baseline REV`` also runs every case under an earlier revision (its packages, builds and
trainer configuration, checked out by ``benchmarks/baseline.py``), each old run right after the
same new one, and prints both in the tables (column ``Revision``).

Prints figures only; it asserts nothing. Wall-clock figures depend on the machine (and on what else
runs on it); the step counts much less so.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mlagents.example_envs.ports import find_free_port_range
from mlagents.trainers.curriculum import Curriculum
from mlagents.trainers.tests.learn_helpers import gail_alone_on_basic  # the GAIL test's signals

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import Checkout, revision_checkout

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config" / "trainer_config.yaml"
SAC_CONFIG = REPO / "config" / "sac_trainer_config.yaml"
BUILDS = REPO / "example-envs" / "builds"

# Environment -> (brain, mean rewards to reach (the run stops at the last), note).
TARGETS = {
    "Basic": (
        "BasicLearning",
        (0.93, 0.94),
        "best possible return 0.93; the console shows 0.94 at the optimum",
    ),
    "3DBall": ("3DBallLearning", (100.0,), ""),
    "3DBallHard": ("3DBallHardLearning", (100.0,), ""),
    "GridWorld": ("GridWorldLearning", (0.8,), ""),
    "Hallway": ("HallwayLearning", (0.7,), ""),
    "PushBlock": ("PushBlockLearning", (4.5,), ""),
    # Trained with its curriculum (CURRICULA); the big-wall brain is followed under OTHER_BRAINS.
    "WallJump": ("SmallWallJumpLearning", (0.8,), "with the wall-jump curriculum, in its last lesson"),
    # The round-two examples (benchmarks of the 0.9 docs). SoccerTwos has none: each team's striker
    # and goalie play the other team's, so a brain's mean reward rises only as much as the goals
    # scored per episode do; the run reports how far both brains get (the goalie under OTHER_BRAINS).
    "SoccerTwos": ("StrikerLearning", (), "no benchmark; the run goes to its max_steps or time limit"),
    "Bouncer": ("BouncerLearning", (10.0,), ""),
    "Reacher": ("ReacherLearning", (30.0,), ""),
    "Tennis": ("TennisLearning", (2.5,), ""),
    "FoodCollector": ("BananaLearning", (10.0,), ""),
    "Pyramids": ("PyramidsLearning", (1.75,), ""),
    # The camera variants, with the benchmarks of their vector scenes (the 0.9 docs give one per scene).
    "VisualHallway": ("VisualHallwayLearning", (0.7,), ""),
    "VisualPushBlock": ("VisualPushBlockLearning", (4.5,), ""),
    "VisualPyramids": ("VisualPyramidsLearning", (1.75,), ""),
    "VisualFoodCollector": ("VisualBananaLearning", (10.0,), "the default section, as in 0.9.3"),
    # The articulated bodies on MuJoCo (benchmarks of the 0.9 docs; far beyond a short run).
    "CrawlerStatic": ("CrawlerStaticLearning", (2000.0,), ""),
    "CrawlerDynamic": ("CrawlerDynamicLearning", (400.0,), ""),
    "Walker": ("WalkerLearning", (1000.0,), ""),
}

# Environment -> summary windows averaged into each figure. One agent of a sparse-reward scene ends
# one or two episodes per 1000-step window, so a single lucky episode can put one window above the
# benchmark; for these scenes every figure (reaching the target, best, first and last mean) is the
# mean of the last ROLLING windows that completed an episode.
ROLLING = {"Hallway": 10, "PushBlock": 10, "VisualHallway": 10, "VisualPushBlock": 10, "VisualPyramids": 10}

# Environment -> the brains followed besides the one of TARGETS (their mean rewards are reported too).
OTHER_BRAINS = {"SoccerTwos": ("GoalieLearning",), "WallJump": ("BigWallJumpLearning",)}

# Environment -> the curriculum folder its runs use (--curriculum), as the 0.9 docs train it. The
# benchmark counts only in the brain's last lesson (the full task): the first lessons are easier.
CURRICULA = {"WallJump": REPO / "config" / "curricula" / "wall-jump"}
# The curriculum's log line reads "INFO:mlagents.trainers:<brain> lesson changed. Now in lesson <n>: ...".
LESSON_LINE = re.compile(r"(?P<brain>[^\s:]+) lesson changed\. Now in lesson (?P<lesson>\d+)")


def last_lesson(env: str, brain: str) -> int:
    """The number of the last lesson of ``brain``'s curriculum in ``env`` (0 without one)."""
    if env not in CURRICULA:
        return 0
    return Curriculum(str(CURRICULA[env] / f"{brain}.json"), None).max_lesson_num


# Environment -> the pretraining section of the "pretraining" case (demo path relative to the repository).
PRETRAINING = {
    "3DBall": {"demo_path": "demos/Expert3DBall.demo", "strength": 1.0, "steps": 20000},
}

CONSOLE_LINE = re.compile(
    r"INFO:mlagents\.trainers: \S+: (?P<brain>\S+): Step: (?P<step>[\d.]+)\. "
    r"(?:Time Elapsed: (?P<elapsed>[\d.]+) s Mean Reward: (?P<mean>-?[\d.]+)\.)?"
)


def scene_brains(env: str) -> tuple[str, ...]:
    """Every brain the run of ``env`` trains: the benchmark's brain, then OTHER_BRAINS."""
    return (TARGETS[env][0], *OTHER_BRAINS.get(env, ()))


def case_config(
    env: str,
    case: str,
    workdir: str,
    demo: str | None = None,
    max_steps: float | None = None,
    shipped: Path = CONFIG,
) -> Path:
    """The trainer config of ``case``: the shipped one (``ppo``), the shipped SAC one (``sac``: the
    file ``sac_trainer_config.yaml`` beside ``shipped``), or with the brain's ``pretraining``
    section added (``pretraining``, from ``demo`` when given), written to ``workdir``; with
    ``max_steps``, the brain's section trains that many steps. ``shipped``: the configuration file
    to start from (another revision's for ``--baseline``)."""
    if case == "sac":
        shipped = shipped.with_name(SAC_CONFIG.name)
    if case in ("ppo", "sac") and max_steps is None:
        return shipped
    from mlagents.trainers.trainer_util import load_config

    brain = TARGETS[env][0]
    config = load_config(str(shipped))
    config[brain] = dict(config.get(brain, {}))
    if case == "pretraining":
        section = dict(PRETRAINING[env])
        section["demo_path"] = str(Path(demo).resolve()) if demo else str(REPO / section["demo_path"])
        config[brain]["pretraining"] = section
    if max_steps is not None:
        for name in scene_brains(env):
            config[name] = dict(config.get(name, {}), max_steps=max_steps)
    path = Path(workdir) / "trainer_config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@dataclass
class Result:
    env: str
    num_envs: int
    targets: tuple[float, ...]
    # target -> (steps, wall-clock seconds since the command started) when first reached
    reached: dict[float, tuple[float, float]] = field(default_factory=dict)
    best_mean: float = float("-inf")
    first_mean: float | None = None
    last_mean: float | None = None
    # the other brains of the scene (OTHER_BRAINS): brain -> (first, last, best mean reward)
    others: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    last_step: float = 0.0
    stop_reason: str = ""
    shares: dict[str, float] = field(default_factory=dict)
    total_steps_per_second: float | None = None
    # steps per second of training (startup excluded): from the timers, else the last console line
    training_steps_per_second: float | None = None
    case: str = "ppo"
    seed: int | None = None
    revision: str = ""  # "" for the current tree, else the --baseline revision


def find_node(node: dict, name: str) -> dict | None:
    if node.get("name") == name:
        return node
    for child in node.get("children", []):
        found = find_node(child, name)
        if found is not None:
            return found
    return None


def timer_shares(timers_path: Path) -> dict[str, float]:
    """Shares of the training loop's time (``TrainerController.advance``) per activity.

    env step = waiting for the environments (``env_step``) minus action selection inside it;
    action selection = the env manager's batched ``get_action`` calls (``_take_step``);
    update = ``update_policy``; bootstrap values = the value-network calls for trajectories cut at
    ``time_horizon`` or by an agent's step limit (``PPOPolicy.get_batched_value_estimates``, inside
    ``process_experiences``); bookkeeping = the trainer's own Python work, ``add_experiences`` +
    ``process_experiences`` without the bootstrap values.
    """
    tree = json.loads(timers_path.read_text())
    advance = find_node(tree, "TrainerController.advance")
    if advance is None or advance["total"] <= 0:
        return {}
    total = advance["total"]

    def seconds(name: str) -> float:
        node = find_node(advance, name)
        return node["total"] if node else 0.0

    take_step = seconds("SubprocessEnvManager._take_step")
    env_step = seconds("env_step") - take_step
    update = seconds("update_policy")
    bootstrap = seconds("PPOPolicy.get_batched_value_estimates")
    bookkeeping = seconds("add_experiences") + seconds("process_experiences") - bootstrap
    other = total - env_step - take_step - update - bootstrap - bookkeeping
    return {
        "env step": env_step / total,
        "action selection": take_step / total,
        "update": update / total,
        "bootstrap values": bootstrap / total,
        "bookkeeping": bookkeeping / total,
        "other": max(0.0, other) / total,
        "reward signals": signal_seconds(advance) / total,
    }


def loop_steps_per_second(timers_path: Path, brains: int = 1) -> float | None:
    """Environment steps per second of the training loop: the transitions handed to the trainers
    (``add_experiences`` calls, one per brain and environment step, so divided by the scene's
    ``brains``) over the time in ``TrainerController.advance`` (start-up, saving and summaries
    excluded)."""
    tree = json.loads(timers_path.read_text())
    advance = find_node(tree, "TrainerController.advance")
    if advance is None or advance["total"] <= 0:
        return None
    node = find_node(advance, "add_experiences")
    return node["count"] / brains / advance["total"] if node and node.get("count") else None


def signal_seconds(node: dict) -> float:
    """Seconds in the reward signals' own networks (``<Signal>RewardSignal.evaluate`` in the
    bookkeeping, ``.update`` in the update), summed over every place of the tree they appear."""
    name = node.get("name", "")
    if name.endswith(("RewardSignal.evaluate", "RewardSignal.update")):
        return float(node.get("total", 0.0))
    return sum(signal_seconds(child) for child in node.get("children", []))


def start_logged(
    command: list[str], cwd: str | Path, log_path: Path, **popen: Any
) -> subprocess.Popen[bytes]:
    """Start ``command`` in ``cwd`` in a session of its own (so that its whole tree can be found and
    signalled), its output and errors going to ``log_path``; ``popen``: further ``Popen`` arguments."""
    with open(log_path, "w") as log:
        return subprocess.Popen(
            command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **popen
        )


class LogTail:
    """The complete lines a growing log file gained since the previous call of :meth:`new_lines`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.pending = ""  # the start of a line not yet complete

    def new_lines(self) -> list[str]:
        with open(self.path) as log:
            log.seek(self.offset)
            self.pending += log.read()
            self.offset = log.tell()
        *lines, self.pending = self.pending.split("\n")
        return lines


def run_one(
    env: str,
    num_envs: int,
    max_minutes: float,
    verbose: bool,
    case: str = "ppo",
    seed: int | None = None,
    demo: str | None = None,
    max_steps: float | None = None,
    signal_case: SignalCase | None = None,
    checkout: Checkout | None = None,
) -> Result:
    """Train one case; with ``checkout``, under that revision (its packages, build and config)."""
    if signal_case is None:
        brain, targets, _ = TARGETS[env]
        result = Result(env, num_envs, targets, case=case, seed=seed)
    else:
        brain, targets = signal_case.brain, signal_case.targets
        seed = signal_case.seed if seed is None else seed
        result = Result(signal_case.name, num_envs, targets, case=signal_case.note, seed=seed)
    build = BUILDS / f"{env}.x86_64" if checkout is None else checkout.build(env)
    shipped = CONFIG if checkout is None else checkout.root / "config" / "trainer_config.yaml"
    if checkout is not None:
        result.revision = checkout.revision
    with tempfile.TemporaryDirectory(prefix=f"bench-{env}-") as workdir:
        base_port = find_free_port_range(num_envs)
        command = [
            sys.executable,
            "-m",
            "mlagents.trainers.learn",
            str(
                case_config(env, case, workdir, demo, max_steps, shipped)
                if signal_case is None
                else signal_case.write_config(Path(workdir), max_steps)
            ),
            "--env",
            str(build),
            "--train",
            f"--num-envs={num_envs}",
            "--no-graphics",
            "--run-id=bench",
            f"--base-port={base_port}",
        ] + ([] if seed is None else [f"--seed={seed}"])
        if env in CURRICULA:
            command.append(f"--curriculum={CURRICULA[env]}")
        log_path = Path(workdir) / "learn.log"
        start = time.monotonic()
        process = start_logged(
            command, workdir, log_path, env=None if checkout is None else checkout.environ()
        )
        console = LogTail(log_path)
        deadline = start + max_minutes * 60
        stopping = False
        recent: list[float] = []  # the brain's window means so far
        rolling = ROLLING.get(env, 1)
        lesson, final_lesson = 0, last_lesson(env, brain)
        while True:
            finished = process.poll() is not None
            for line in console.new_lines():
                if verbose:
                    print(f"   | {result.env}:", line, flush=True)
                changed = LESSON_LINE.search(line)
                if changed and changed["brain"] == brain:
                    lesson = int(changed["lesson"])
                match = CONSOLE_LINE.search(line)
                if match and match["mean"] is not None and match["brain"] in OTHER_BRAINS.get(env, ()):
                    mean = float(match["mean"])
                    first, _, best = result.others.get(match["brain"], (mean, mean, mean))
                    result.others[match["brain"]] = (first, mean, max(best, mean))
                if not match or match["brain"] != brain:
                    continue
                result.last_step = float(match["step"])
                if match["elapsed"] is not None and float(match["elapsed"]) > 0:
                    result.training_steps_per_second = result.last_step / float(match["elapsed"])
                if match["mean"] is None:
                    continue
                recent.append(float(match["mean"]))
                if len(recent) < rolling:
                    continue
                mean = sum(recent[-rolling:]) / rolling
                result.best_mean = max(result.best_mean, mean)
                result.first_mean = mean if result.first_mean is None else result.first_mean
                result.last_mean = mean
                for target in targets:
                    if mean >= target and target not in result.reached and lesson == final_lesson:
                        result.reached[target] = (float(match["step"]), time.monotonic() - start)
                if targets and targets[-1] in result.reached and not result.stop_reason:
                    result.stop_reason = "benchmark reached"
            if finished:
                break
            reached_all = bool(targets) and targets[-1] in result.reached
            if not stopping and (reached_all or time.monotonic() > deadline):
                if not reached_all:
                    result.stop_reason = f"time limit ({max_minutes:g} min)"
                # SIGTERM, which mlagents-learn handles like Ctrl-C (SIGINT may be ignored in background jobs).
                process.send_signal(signal.SIGTERM)
                stopping = True
            time.sleep(0.2)
        process.wait()
        if not result.stop_reason:
            result.stop_reason = (
                "max_steps reached" if process.returncode == 0 else f"exit status {process.returncode}"
            )
        elapsed = time.monotonic() - start
        if result.last_step:
            result.total_steps_per_second = result.last_step / elapsed
        timers = Path(workdir) / "summaries" / "bench-0_timers.json"
        if timers.exists():
            result.shares = timer_shares(timers)
            result.training_steps_per_second = (
                loop_steps_per_second(timers, brains=len(scene_brains(env)))
                or result.training_steps_per_second
            )
    return result


CASE_LABELS = {"ppo": "PPO", "sac": "SAC", "pretraining": "PPO + pretraining"}


def print_results(results: list[Result]) -> None:
    print()
    cases = any(r.case != "ppo" or r.seed is not None for r in results)
    revisions = any(r.revision for r in results)
    print(
        "| Environment | --num-envs | "
        + ("Revision | " if revisions else "")
        + ("Case | Seed | " if cases else "")
        + "Target mean reward | Steps to target | Wall-clock s to target | Best mean reward | Stopped by "
        + "| First / last mean reward | Steps/s |"
    )
    print(
        "|---|---|---|---|---|---|---|---|---|"
        + ("---|---|" if cases else "")
        + ("---|" if revisions else "")
    )
    for r in results:
        best = f"{r.best_mean:.3f}" if r.best_mean > float("-inf") else "-"
        ends = "-" if r.first_mean is None else f"{r.first_mean:.3f} / {r.last_mean:.3f}"
        label = f"{r.revision or 'this tree'} | " if revisions else ""
        label += (
            f"{CASE_LABELS.get(r.case, r.case)} | {'-' if r.seed is None else r.seed} | " if cases else ""
        )
        rate = f"{r.total_steps_per_second:.0f}" if r.total_steps_per_second else "-"
        for target in r.targets or (None,):
            if target is None:
                wanted, reached = "none", "- | -"
            elif target in r.reached:
                steps, seconds = r.reached[target]
                wanted, reached = f"{target:g}", f"{steps:.0f} | {seconds:.0f}"
            else:
                wanted, reached = f"{target:g}", "not reached | -"
            print(
                f"| {r.env} | {r.num_envs} | {label}{wanted} | {reached} | {best} | {r.stop_reason} | {ends} "
                f"| {rate} |"
            )
        for brain, (first, last, other_best) in r.others.items():
            print(
                f"| {r.env} ({brain}) | {r.num_envs} | {label}none | - | - | {other_best:.3f} | {r.stop_reason} "
                f"| {first:.3f} / {last:.3f} | {rate} |"
            )
    print()
    print("Share of the training loop time (TrainerController.advance):")
    print(
        "| Environment | --num-envs | "
        + ("Revision | " if revisions else "")
        + "env step | action selection | update | bootstrap values | bookkeeping | other "
        "| of which reward signals' networks (in update and bookkeeping) | steps/s (with startup) "
        "| steps/s of training |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if revisions else ""))
    for r in results:
        if not r.shares:
            continue
        s = r.shares
        side = f"{r.revision or 'this tree'} | " if revisions else ""
        rate = "-" if r.total_steps_per_second is None else f"{r.total_steps_per_second:.1f}"
        training = "-" if r.training_steps_per_second is None else f"{r.training_steps_per_second:.1f}"
        print(
            f"| {r.env} | {r.num_envs} | {side}{s['env step']:.0%} | {s['action selection']:.0%} "
            f"| {s['update']:.0%} | {s['bootstrap values']:.0%} | {s['bookkeeping']:.0%} | {s['other']:.0%} "
            f"| {s.get('reward signals', 0.0):.0%} | {rate} | {training} |"
        )


# ------------------------------------------------------------------------------------------ reward signals
#
# Curiosity: Pyramids (sparse reward: +2 for the gold brick, -0.001 per step) with the shipped
# PyramidsLearning section (extrinsic + curiosity) against the same section with the extrinsic
# signal alone, same seed and step budget. GAIL: Basic from the shipped demonstration with the
# extrinsic strength at 0, so the discriminator alone guides the policy, to 80% of the
# demonstrator's mean reward. The discriminator sees the actions (use_actions): Basic's expert
# states alone do not tell the policy to hurry.


@dataclass
class SignalCase:
    """One reward-signal case: an example, its brain, the trainer config it is trained with."""

    name: str
    env: str
    brain: str
    targets: tuple[float, ...]
    note: str
    section: dict
    seed: int = 1
    extra_sections: dict = field(default_factory=dict)

    def write_config(self, folder: Path, max_steps: float | None = None) -> Path:
        import yaml

        shipped = yaml.safe_load(CONFIG.read_text())
        section = self.section if max_steps is None else dict(self.section, max_steps=max_steps)
        config = {"default": shipped["default"], self.brain: section, **self.extra_sections}
        path = folder / f"{self.brain}-{self.name}.yaml".replace(" ", "_").replace("+", "_")
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path


def signal_cases() -> dict[str, SignalCase]:
    import yaml

    shipped = yaml.safe_load(CONFIG.read_text())
    pyramids = dict(shipped["PyramidsLearning"])
    extrinsic_only = dict(pyramids, reward_signals={"extrinsic": pyramids["reward_signals"]["extrinsic"]})
    gail_basic = dict(shipped["BasicLearning"], reward_signals=gail_alone_on_basic())
    return {
        "Pyramids+curiosity": SignalCase(
            "Pyramids+curiosity", "Pyramids", "PyramidsLearning", (1.75,), "extrinsic + curiosity", pyramids
        ),
        "Pyramids-extrinsic": SignalCase(
            "Pyramids-extrinsic", "Pyramids", "PyramidsLearning", (1.75,), "extrinsic alone", extrinsic_only
        ),
        "Basic+GAIL": SignalCase(
            "Basic+GAIL",
            "Basic",
            "BasicLearning",
            (0.8 * 0.93,),
            "GAIL alone (extrinsic strength 0), 80% of the demonstrator's 0.93",
            gail_basic,
        ),
    }


#: Names that stand for several cases: the comparison the curiosity issue asks for.
SIGNAL_COMPARISONS = {"Pyramids": ["Pyramids+curiosity", "Pyramids-extrinsic"]}


def run_signal_cases(
    names: list[str],
    num_envs: int,
    max_minutes: float,
    verbose: bool,
    seeds: list[int | None] | None = None,
    max_steps: float | None = None,
    side_by_side: bool = False,
) -> list[Result]:
    """Run each case once per seed (None: the case's own seed), with ``max_steps`` when given;
    ``side_by_side`` runs the cases of one seed at the same time, so that they share the machine's
    load and their wall-clock figures compare."""
    cases = signal_cases()
    expanded = [case for name in names for case in SIGNAL_COMPARISONS.get(name, [name])]
    chosen = []
    for name in expanded:
        if name not in cases:
            print(f"Unknown case {name}; choose from {', '.join([*cases, *SIGNAL_COMPARISONS])}.")
            continue
        chosen.append(cases[name])

    def run(case: SignalCase, seed: int | None) -> Result:
        wanted = ", ".join(f"{t:g}" for t in case.targets)
        print(
            f"{case.name} ({case.brain}, {case.note}), --num-envs={num_envs}, --seed={case.seed if seed is None else seed}"
            + (f", max_steps {max_steps:g}" if max_steps is not None else "")
            + f": training to mean reward {wanted} ...",
            flush=True,
        )
        result = run_one(
            case.env, num_envs, max_minutes, verbose, seed=seed, max_steps=max_steps, signal_case=case
        )
        reached = ", ".join(
            f"{t:g} at step {s:.0f} after {sec:.0f} s" for t, (s, sec) in result.reached.items()
        )
        print(
            f"  -> {case.name}: {result.stop_reason}; {reached or 'benchmark not reached'}; best mean "
            f"{result.best_mean:.3f}; last step {result.last_step:.0f}",
            flush=True,
        )
        return result

    results = []
    for seed in seeds or [None]:
        if side_by_side and len(chosen) > 1:
            with ThreadPoolExecutor(len(chosen)) as pool:
                results.extend(pool.map(run, chosen, [seed] * len(chosen)))
        else:
            results.extend(run(case, seed) for case in chosen)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--envs", default="Basic,3DBall", help=f"comma-separated environments ({', '.join(TARGETS)})"
    )
    parser.add_argument(
        "--signal-cases",
        default="",
        help="comma-separated reward-signal cases instead of --envs (Pyramids+curiosity, Pyramids-extrinsic, "
        "Basic+GAIL, or Pyramids for the first two); uses the first --num-envs value, --seeds (default: "
        "seed 1) and --max-steps",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="run the reward-signal cases of one seed at the same time (same machine load)",
    )
    parser.add_argument("--num-envs", default="1,4", help="comma-separated --num-envs values")
    parser.add_argument("--max-minutes", type=float, default=20.0, help="time limit per run (minutes)")
    parser.add_argument("--verbose", action="store_true", help="echo the output of mlagents-learn")
    parser.add_argument(
        "--max-steps",
        type=float,
        default=None,
        help="train this many steps instead of the config's max_steps",
    )
    parser.add_argument(
        "--cases",
        default="ppo",
        help="comma-separated: ppo, sac (config/sac_trainer_config.yaml), pretraining (PPO with the "
        "pretraining section)",
    )
    parser.add_argument("--seeds", default="", help="comma-separated --seed values (default: none given)")
    parser.add_argument(
        "--demo", default=None, help="demonstration of the pretraining case (default: the shipped one)"
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="REV",
        help="also run every case under this git revision (its packages, builds and config), "
        "interleaved with the current tree's runs",
    )
    args = parser.parse_args()
    if args.baseline:
        with revision_checkout(args.baseline) as checkout:
            run_all(args, checkout)
    else:
        run_all(args, None)


def run_all(args: argparse.Namespace, checkout: Checkout | None) -> None:
    """The runs of ``main``; with ``checkout``, each run is followed by the same one under it."""
    sides: list[Checkout | None] = [None] if checkout is None else [None, checkout]
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    seeds: list[int | None] = [int(s) for s in args.seeds.split(",") if s.strip()] or [None]

    if args.signal_cases:
        names = [n.strip() for n in args.signal_cases.split(",") if n.strip()]
        num_envs = int(args.num_envs.split(",")[0])
        if checkout is not None:
            print("--baseline applies to --envs runs only; the signal cases run on this tree.")
        print_results(
            run_signal_cases(
                names, num_envs, args.max_minutes, args.verbose, seeds, args.max_steps, args.side_by_side
            )
        )
        return

    results = []
    for env in [e.strip() for e in args.envs.split(",") if e.strip()]:
        if env not in TARGETS:
            print(f"Unknown environment {env}; choose from {', '.join(TARGETS)}.")
            continue
        if not (BUILDS / f"{env}.x86_64").exists():
            print(f"Skipping {env}: the build example-envs/builds/{env}.x86_64 is missing.")
            continue
        brain, targets, note = TARGETS[env]
        runs = [
            (num_envs, case, seed)
            for num_envs in [int(n) for n in args.num_envs.split(",")]
            for case in cases
            for seed in seeds
            if case in ("ppo", "sac") or env in PRETRAINING
        ]
        for (num_envs, case, seed), side in [(run, side) for run in runs for side in sides]:
            wanted = ", ".join(f"{t:g}" for t in targets)
            print(
                ("" if side is None else f"[{side.revision}] ")
                + f"{env} ({brain}), --num-envs={num_envs}"
                + (f", {CASE_LABELS.get(case, case)}" if case != "ppo" else "")
                + (f", --seed={seed}" if seed is not None else "")
                + (f": training to mean reward {wanted}" if targets else ": training")
                + (f" (the mean of the last {ROLLING[env]} summary windows)" if env in ROLLING else "")
                + (f" ({note})" if note else "")
                + " ...",
                flush=True,
            )
            result = run_one(
                env,
                num_envs,
                args.max_minutes,
                args.verbose,
                case,
                seed,
                args.demo,
                args.max_steps,
                checkout=side,
            )
            reached = ", ".join(
                f"{t:g} at step {s:.0f} after {sec:.0f} s" for t, (s, sec) in result.reached.items()
            )
            others = "".join(
                f"; {name} mean {first:.3f} -> {last:.3f} (best {best:.3f})"
                for name, (first, last, best) in result.others.items()
            )
            print(
                f"  -> {result.stop_reason}; {reached or ('benchmark not reached' if targets else 'no benchmark')}; "
                f"best mean {result.best_mean:.3f}; last step {result.last_step:.0f}{others}",
                flush=True,
            )
            results.append(result)
    print_results(results)


if __name__ == "__main__":
    main()
