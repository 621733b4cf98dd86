"""How early and how clearly CrawlerStatic's reward rises under PPO with the shipped configuration.

Runs the real command (the shipped ``config/trainer_config.yaml`` unchanged, so the learning-rate
schedule is the one of a full run)

    mlagents-learn config/trainer_config.yaml --env example-envs/builds/CrawlerStatic.x86_64 --train
                   --num-envs 2 --no-graphics --seed S --save-freq F --keep-checkpoints 1000

in a temporary folder, stops it with SIGTERM once its console reports ``--max-steps``, and prints
the console's summary lines (mean and standard deviation of the episode rewards of each window).
Then every checkpoint the run saved (every ``--save-freq`` steps), and a freshly initialised network
(the model of step 0), is exported to a ``.nn`` file and played in-process (the example SDK's
``LocalEnvironment`` and its ``.nn`` reader, actions sampled as in a build) from ``--eval-seeds``
resets of ``--eval-decisions`` decisions each; every model plays each agent's k-th episode on the
same action noise. For each model the script prints the mean reward per decision with its standard
error over the agent-runs (12 agents per reset), the falls per decision, the paired difference to
the model of step 0 with its standard error, and how many evaluation decisions per model a
separation of five standard errors of that difference would take.

Usage::

    python benchmarks/crawler_rise.py                                   # 42,000 steps, checkpoints every 6000
    python benchmarks/crawler_rise.py --max-steps 24000 --save-freq 12000 --seed 6 --eval-seeds 20

Prints figures only; it asserts nothing. Wall-clock figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from mlagents.example_envs.ports import find_free_port_range

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config" / "trainer_config.yaml"
BUILD = REPO / "example-envs" / "builds" / "CrawlerStatic.x86_64"
BRAIN = "CrawlerStaticLearning"
AGENTS = 12
SUMMARY = re.compile(
    r"INFO:mlagents\.trainers: \S+: CrawlerStaticLearning: Step: (?P<step>[\d.]+)\. "
    r"Time Elapsed: (?P<elapsed>[\d.]+) s Mean Reward: (?P<mean>-?[\d.]+)\. Std of Reward: (?P<std>[\d.]+)\."
)


def train(workdir: Path, max_steps: int, save_freq: int, seed: int) -> list[dict[str, float]]:
    """Run mlagents-learn until the summary of ``max_steps`` (SIGTERM then); its summary lines."""
    port = find_free_port_range(2)
    command = [
        sys.executable,
        "-m",
        "mlagents.trainers.learn",
        str(CONFIG),
        "--env",
        str(BUILD),
        "--train",
        "--num-envs=2",
        "--no-graphics",
        f"--seed={seed}",
        "--run-id=rise",
        f"--base-port={port}",
        f"--save-freq={save_freq}",
        "--keep-checkpoints=1000",
    ]
    lines: list[dict[str, float]] = []
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
            match = SUMMARY.search(text)
            if match:
                line = {key: float(value) for key, value in match.groupdict().items()}
                lines.append(line)
                print(
                    f"  step {line['step']:>8.0f}  {time.monotonic() - started:6.0f} s  "
                    f"mean reward {line['mean']:6.2f}  std {line['std']:5.2f}",
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
    return lines


def section() -> dict[str, Any]:
    config = yaml.safe_load(CONFIG.read_text())
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-steps", type=int, default=42000, help="steps of the training run")
    parser.add_argument("--save-freq", type=int, default=6000, help="steps between evaluated checkpoints")
    parser.add_argument("--seed", type=int, default=5, help="seed of the training run")
    parser.add_argument("--eval-seeds", type=int, default=10, help="resets (of 12 agents) per model")
    parser.add_argument("--eval-decisions", type=int, default=200, help="decisions per reset")
    args = parser.parse_args()
    if not BUILD.exists():
        raise SystemExit(f"There is no build {BUILD}; build the examples first (see CONTRIBUTING.md).")
    with tempfile.TemporaryDirectory(prefix="crawler_rise_") as folder:
        workdir = Path(folder)
        print(f"Training {args.max_steps} steps (seed {args.seed}), summaries every 3000 steps:", flush=True)
        train(workdir, args.max_steps, args.save_freq, args.seed)
        models = export_models(workdir, args.seed)
        seeds = list(range(1, args.eval_seeds + 1))
        print(
            f"\nModels played from {len(seeds)} resets x {AGENTS} agents x {args.eval_decisions} decisions "
            "(reward per decision, mean +- standard error over agent-runs):",
            flush=True,
        )
        base: np.ndarray | None = None
        for step, model in sorted(models.items()):
            started = time.monotonic()
            rewards, falls = evaluate(model, seeds, args.eval_decisions)
            se = rewards.std(ddof=1) / np.sqrt(rewards.size)
            row = f"  step {step:>6}  {rewards.mean():7.4f} +- {se:.4f}  falls/decision {falls:.4f}"
            if base is None:
                base = rewards
            else:
                paired = rewards - base
                diff = paired.mean()
                diff_se = paired.std(ddof=1) / np.sqrt(paired.size)
                # decisions per model for 5 standard errors: the SE shrinks with the square root
                needed = (
                    rewards.size * args.eval_decisions * (5.0 * diff_se / abs(diff)) ** 2 if diff else np.inf
                )
                row += (
                    f"  vs step 0 {diff:+.4f} +- {diff_se:.4f}  (5 SE need {needed:,.0f} decisions per model)"
                )
            print(f"{row}  [{time.monotonic() - started:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
