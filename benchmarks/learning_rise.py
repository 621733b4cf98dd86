"""How early and how clearly the reward of CrawlerStatic, Reacher or Tennis rises under PPO with the
shipped configuration (the scenes with a learning test in CI: test_crawler_learning.py and
test_round_two_learning.py).

Runs the real command (the shipped ``config/trainer_config.yaml`` unchanged, so the learning-rate
schedule is the one of a full run) for each of ``--seeds``, at most ``--parallel`` at a time

    mlagents-learn config/trainer_config.yaml --env example-envs/builds/<--env>.x86_64 --train
                   --num-envs 2 --no-graphics --seed S

in a temporary folder, stops it with SIGTERM once its console reports ``--max-steps``, and reads the
run's own summaries: per summary window (the section's summary_freq: 3000 steps for CrawlerStatic
and Reacher, 1000 for Tennis) the console's mean and standard deviation of the episode rewards and
TensorBoard's mean episode length (which gives the number of episodes of the window). For every
budget S it prints the two criteria of ``test_crawler_learning.py`` (``reward_windows.rise`` and
``reward_windows.trend``, the same for Reacher's test): how far the windows after S/2 are above
the first two windows, and the weighted slope of all windows up to S, each with its z-score
(standard errors of the episode-to-episode noise).

With ``--play`` (CrawlerStatic only), every checkpoint the run saved (every ``--save-freq`` steps), and a freshly
initialised network (the model of step 0), is also exported to a ``.nn`` file and played
in-process (the example SDK's ``LocalEnvironment`` and its ``.nn`` reader, actions sampled as in a
build) from ``--eval-seeds`` resets of ``--eval-decisions`` decisions each; every model plays each
agent's k-th episode on the same action noise. For each model the script prints the mean reward per
decision with its standard error over the agent-runs (12 agents per reset), the falls per decision,
the paired difference to the model of step 0 with its standard error, and how many evaluation
decisions per model a separation of five standard errors of that difference would take.

Usage::

    python benchmarks/learning_rise.py --seeds 1 2 3 4 --max-steps 36000   # summaries of 4 runs
    python benchmarks/learning_rise.py --env Reacher --seeds 1 2 3 4 --max-steps 60000 --parallel 2
    python benchmarks/learning_rise.py --env Tennis --seeds 1 2 --max-steps 20000
    python benchmarks/learning_rise.py --play --max-steps 24000 --save-freq 12000 --seed 6 --eval-seeds 20

Prints figures only; it asserts nothing. Wall-clock figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from mlagents.example_envs.ports import find_free_port_range
from mlagents.trainers.tests.learn_helpers import BUILDS, SHIPPED_CONFIG, learn_args
from mlagents.trainers.tests.reward_windows import (  # the learning tests' readers
    read_windows,
    rise,
    summary_lines,
    trend,
)

#: scene -> (brain, agents of one instance, the shipped summary_freq of the brain's section)
SCENES = {
    "CrawlerStatic": ("CrawlerStaticLearning", 12, 3000),
    "Reacher": ("ReacherLearning", 20, 3000),
    "Tennis": ("TennisLearning", 36, 1000),
}
BRAIN, AGENTS, WINDOW = SCENES["CrawlerStatic"]  # --play's scene


def train(workdir: Path, scene: str, max_steps: int, save_freq: int, seed: int) -> str:
    """Run mlagents-learn until the summary of ``max_steps`` (SIGTERM then); return its output.

    A ``save_freq`` of 0 keeps the default checkpoints; otherwise every checkpoint is kept.
    """
    port = find_free_port_range(2)
    checkpoints = [f"--save-freq={save_freq}", "--keep-checkpoints=1000"] if save_freq else []
    args = learn_args(
        BUILDS / f"{scene}.x86_64",
        base_port=port,
        run_id="rise",
        num_envs=2,
        seed=seed,
        config=SHIPPED_CONFIG,
        extra=checkpoints,
    )
    command = [sys.executable, "-m", "mlagents.trainers.learn", *map(str, args)]
    output: list[str] = []
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        for text in process.stdout:
            output.append(text)
            lines = summary_lines(text, SCENES[scene][0])
            if lines:
                line = lines[0]
                print(
                    f"  seed {seed}  step {line['step']:>8.0f}  {time.monotonic() - started:6.0f} s  "
                    f"mean reward {line['mean']:7.3f}  std {line['std']:6.3f}",
                    flush=True,
                )
                if line["step"] >= max_steps:
                    process.send_signal(signal.SIGTERM)
        process.wait(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if process.returncode != 0:
        raise SystemExit(f"mlagents-learn ended with status {process.returncode}; see {workdir}")
    return "".join(output)


def report_rise(seed: int, scene: str, output: str, workdir: Path) -> None:
    """Print the run's summary windows and, for every budget, the rise and trend criteria."""
    brain, agents, window_steps = SCENES[scene]
    windows = read_windows(output, workdir / "summaries" / f"rise_{brain}", brain, window_steps, agents)
    print(
        f"\n{scene}, seed {seed}, summary windows of {window_steps} steps (mean reward +- standard error, episodes):"
    )
    for window in windows:
        print(
            f"  step {window.step:>6}  {window.mean:7.3f} +- {window.variance_of_mean**0.5:.3f}"
            f"  ({window.episodes:.0f} episodes)"
        )
    print("  budget S: rise of the windows after S/2 over the first two; slope of all windows to S")
    for budget in range(4 * window_steps, windows[-1].step + 1, window_steps):
        difference, z = rise(windows, 2, budget // 2, budget)
        slope, slope_z, chi_square = trend(
            [window for window in windows if window.step <= budget], window_steps
        )
        print(
            f"  S {budget:>6}  rise {difference:+6.3f} (z {z:4.1f})"
            f"  slope {slope:+.3f} per window (z {slope_z:4.1f}, reduced chi-square {chi_square:.2f})"
        )


def section() -> dict[str, Any]:
    config = yaml.safe_load(SHIPPED_CONFIG.read_text())
    return {**config["default"], **config[BRAIN]}


def export_models(workdir: Path, seed: int) -> dict[int, str]:
    """Step -> .nn path: every saved checkpoint of the run, and a fresh network as step 0."""
    from mlagents.envs.brain import BrainParameters
    from mlagents.trainers.ppo.policy import PPOPolicy

    brain = BrainParameters(BRAIN, 126, 1, [], [20], [""] * 20, "continuous")
    saved = workdir / "models" / "rise-0" / BRAIN
    models: dict[int, str] = {}
    fresh = workdir / "fresh" / BRAIN
    PPOPolicy(seed, brain, {**section(), "model_path": str(fresh)}, is_training=True).export_model()
    models[0] = f"{fresh}.nn"
    for index in sorted(saved.glob("model-*.index")):
        name = index.name.removesuffix(".index")
        single = workdir / "checkpoints" / name / BRAIN
        single.mkdir(parents=True)
        for part in saved.glob(f"{name}.*"):
            (single / part.name).symlink_to(part)
        (single / "checkpoint").write_text(f'model_checkpoint_path: "{name}"\n')
        PPOPolicy(
            seed, brain, {**section(), "model_path": str(single)}, is_training=False, load=True
        ).export_model()
        models[int(name.split("-")[1])] = f"{single}.nn"
    return models


def evaluate(model: str, seeds: list[int], decisions: int) -> tuple[np.ndarray, float]:
    """Reward per decision of every agent-run (seed x agent) and the falls per decision.

    The action noise is drawn per agent, episode and decision of the episode from ``seed``, so every
    model plays each agent's k-th episode on the same random numbers (the static scene's episodes
    all start from the same pose): the comparison between models is paired.
    """
    from mlagents.example_envs import registry  # noqa: F401  (registers the examples)
    from mlagents.example_envs.crawler import CrawlerStatic
    from mlagents.example_envs.sdk.inference.policy import load_model_policy
    from mlagents.example_envs.sdk.local import LocalEnvironment

    spec = CrawlerStatic.spec().brains[0]
    policy = load_model_policy(model, spec)
    per_run: list[np.ndarray] = []
    falls = 0
    agents = np.arange(AGENTS)
    for seed in seeds:
        # noise for up to 64 episodes per agent (they last about 90 decisions; later ones reuse the last)
        episodes = min(decisions, 64)
        noise = np.random.default_rng(seed).standard_normal(
            (AGENTS, episodes, decisions, 20), dtype=np.float32
        )
        episode = np.zeros(AGENTS, dtype=int)
        step = np.zeros(AGENTS, dtype=int)
        with LocalEnvironment("CrawlerStatic", seed=seed) as env:
            batch = env.reset(train_mode=True)[BRAIN]
            ids = list(batch.agents)  # the rows of every batch are these agents, in this order
            totals = np.zeros(AGENTS)
            for _ in range(decisions):
                feeds = policy.feeds(batch)
                feeds["epsilon"] = noise[agents, np.minimum(episode, episodes - 1), step].reshape(
                    AGENTS, 1, 1, 20
                )
                actions = policy.run(feeds)["action"].reshape(AGENTS, 20)
                batch = env.step({BRAIN: actions})[BRAIN]
                assert list(batch.agents) == ids, "the agents of the batch changed"
                done = np.asarray(batch.local_done, dtype=bool)
                totals += np.asarray(batch.rewards)
                falls += int(done.sum())
                step += 1
                episode[done] += 1
                step[done] = 0
        per_run.append(totals / decisions)
    return np.concatenate(per_run), falls / (len(seeds) * AGENTS * decisions)


def play_checkpoints(workdir: Path, seed: int, eval_seeds: int, eval_decisions: int) -> None:
    """Play the run's checkpoints and a fresh network; print each model's reward per decision."""
    models = export_models(workdir, seed)
    seeds = list(range(1, eval_seeds + 1))
    print(
        f"\nSeed {seed}: models played from {len(seeds)} resets x {AGENTS} agents x {eval_decisions} decisions "
        "(reward per decision, mean +- standard error over agent-runs):",
        flush=True,
    )
    base: np.ndarray | None = None
    for step, model in sorted(models.items()):
        started = time.monotonic()
        rewards, falls = evaluate(model, seeds, eval_decisions)
        se = rewards.std(ddof=1) / np.sqrt(rewards.size)
        row = f"  step {step:>6}  {rewards.mean():7.4f} +- {se:.4f}  falls/decision {falls:.4f}"
        if base is None:
            base = rewards
        else:
            paired = rewards - base
            diff = paired.mean()
            diff_se = paired.std(ddof=1) / np.sqrt(paired.size)
            # decisions per model for 5 standard errors: the SE shrinks with the square root
            needed = rewards.size * eval_decisions * (5.0 * diff_se / abs(diff)) ** 2 if diff else np.inf
            row += f"  vs step 0 {diff:+.4f} +- {diff_se:.4f}  (5 SE need {needed:,.0f} decisions per model)"
        print(f"{row}  [{time.monotonic() - started:.0f} s]", flush=True)


def one_seed(seed: int, args: argparse.Namespace) -> tuple[int, str]:
    """Train with ``seed`` in a temporary folder; report its summaries (and play its checkpoints)."""
    with tempfile.TemporaryDirectory(prefix="learning_rise_") as folder:
        workdir = Path(folder)
        output = train(workdir, args.env, args.max_steps, args.save_freq if args.play else 0, seed)
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            report_rise(seed, args.env, output, workdir)
        if args.play:
            print(buffer.getvalue(), flush=True)
            play_checkpoints(workdir, seed, args.eval_seeds, args.eval_decisions)
            return seed, ""
        return seed, buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", choices=sorted(SCENES), default="CrawlerStatic", help="the scene to train")
    parser.add_argument("--max-steps", type=int, default=36000, help="steps of each training run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[5], help="seeds of the training runs")
    parser.add_argument(
        "--parallel", type=int, default=1, help="training runs at a time (2 cores each would be best)"
    )
    parser.add_argument("--play", action="store_true", help="also play the checkpoints in-process")
    parser.add_argument("--save-freq", type=int, default=6000, help="steps between played checkpoints")
    parser.add_argument("--eval-seeds", type=int, default=10, help="resets (of 12 agents) per played model")
    parser.add_argument("--eval-decisions", type=int, default=200, help="decisions per reset")
    args = parser.parse_args()
    build = BUILDS / f"{args.env}.x86_64"
    if not build.exists():
        raise SystemExit(f"There is no build {build}; build the examples first (see CONTRIBUTING.md).")
    if args.play and args.env != "CrawlerStatic":
        raise SystemExit("--play plays CrawlerStatic's checkpoints; leave --env at CrawlerStatic with it.")
    if args.play and args.parallel != 1:
        raise SystemExit("--play plays the checkpoints one run at a time; leave --parallel at 1 with it.")
    print(
        f"Training {args.env} {args.max_steps} steps per seed, summaries every {SCENES[args.env][2]} steps:",
        flush=True,
    )
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        for _, report in pool.map(lambda seed: one_seed(seed, args), args.seeds):
            print(report, end="", flush=True)


if __name__ == "__main__":
    main()
