"""How well SoccerTwos' trained brains play: matches of the trained team against random, scripted
and trained opponents.

SoccerTwos has no benchmark mean reward: both teams share the two brains, so the mean reward of a
brain that plays itself hardly moves however well it plays. This script plays the scene in-process
(the example SDK's ``LocalEnvironment``, 8 pitches) with each team's strikers and goalies decided by
one of: ``trained`` (the exported ``StrikerLearning.nn`` and ``GoalieLearning.nn`` of a run, actions
sampled as a build samples them), ``scripted`` (the example's heuristics) or ``random`` (uniform
actions), and prints per match the pitch episodes that ended, the goals of each team and the
timeouts (3000 physics steps without a goal).

Usage::

    python benchmarks/soccer_match.py models/soccer-0            # the run's models folder
    python benchmarks/soccer_match.py models/soccer-0 --decisions 3000 --seed 2

The folder is the one mlagents-learn writes (``models/<run-id>-0``); without the ``.nn`` files
(a run that was killed) the newest checkpoint of each brain is exported first. Prints figures only;
it asserts nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config" / "trainer_config.yaml"
STRIKER, GOALIE = "StrikerLearning", "GoalieLearning"
#: brain -> discrete actions of its one branch
ACTIONS = {STRIKER: 7, GOALIE: 5}
AGENTS_PER_BRAIN = 16  # 8 pitches x (red, blue)
KINDS = ("trained", "scripted", "random")
MATCHES = [
    ("random", "random"),
    ("scripted", "random"),
    ("trained", "random"),
    ("trained", "scripted"),
    ("trained", "trained"),
]


def export_newest_checkpoint(folder: Path, brain: str) -> Path:
    """``folder/<brain>.nn``, exported from the brain's newest checkpoint when it is missing."""
    model = folder / f"{brain}.nn"
    if model.exists():
        return model
    from mlagents.envs.brain import BrainParameters
    from mlagents.trainers.ppo.policy import PPOPolicy

    if not (folder / brain / "checkpoint").exists():
        raise SystemExit(
            f"{folder} has neither {brain}.nn nor checkpoints of {brain}; give a run's models folder."
        )
    config = yaml.safe_load(CONFIG.read_text())
    section = {**config["default"], **config[brain], "model_path": str(folder / brain)}
    parameters = BrainParameters(brain, 112, 1, [], [ACTIONS[brain]], [""] * ACTIONS[brain], "discrete")
    # writes <model_path>.nn, which is folder/<brain>.nn
    PPOPolicy(0, parameters, section, is_training=False, load=True).export_model()
    return model


def play_match(
    red: str, blue: str, models: dict[str, Path], decisions: int, seed: int
) -> tuple[int, int, int, float]:
    """Play ``decisions`` decisions; return (red goals, blue goals, timeouts, red strikers' mean
    episode return) over the pitch episodes that ended."""
    from mlagents.example_envs import registry  # noqa: F401  (registers the examples)
    from mlagents.example_envs.sdk.inference.policy import load_model_policy
    from mlagents.example_envs.sdk.local import LocalEnvironment
    from mlagents.example_envs.soccer import SoccerTwos, goalie_heuristic, striker_heuristic

    rng = np.random.default_rng(seed)
    with LocalEnvironment("SoccerTwos", seed=seed) as env:
        scene = env.academy.scene
        assert isinstance(scene, SoccerTwos)
        specs = {spec.name: spec for spec in SoccerTwos.spec().brains}
        policies = (
            {brain: load_model_policy(str(models[brain]), specs[brain], seed=seed) for brain in ACTIONS}
            if "trained" in (red, blue)
            else {}
        )
        heuristics: dict[str, Callable[[SoccerTwos, np.ndarray], np.ndarray]] = {
            STRIKER: striker_heuristic,
            GOALIE: goalie_heuristic,
        }
        rows = np.arange(AGENTS_PER_BRAIN)
        team = scene.world.agent_team[rows]  # strikers and goalies alternate red, blue per pitch
        red_goals = blue_goals = timeouts = 0
        returns: list[float] = []
        running = np.zeros(AGENTS_PER_BRAIN)
        batches = env.reset(train_mode=True)

        def decide(kind: str, brain: str) -> np.ndarray:
            """The actions of every agent of ``brain`` as ``kind`` plays them (one column)."""
            if kind == "random":
                return rng.integers(0, ACTIONS[brain], AGENTS_PER_BRAIN).astype(np.float32)
            if kind == "scripted":
                first = 0 if brain == STRIKER else AGENTS_PER_BRAIN  # strikers come first, then goalies
                return np.asarray(heuristics[brain](scene, rows + first), np.float32).reshape(-1)
            return np.asarray(policies[brain].decide(batches[brain]), np.float32).reshape(-1)

        for _ in range(decisions):
            actions = {}
            for brain in ACTIONS:
                chosen = {kind: decide(kind, brain) for kind in {red, blue}}
                actions[brain] = np.where(team == 0, chosen[red], chosen[blue]).reshape(-1, 1)
            batches = env.step(actions)
            strikers = batches[STRIKER]
            running += np.asarray(strikers.rewards)
            done = np.asarray(strikers.local_done, dtype=bool)
            timed_out = np.asarray(strikers.max_reached, dtype=bool)
            for pitch in range(AGENTS_PER_BRAIN // 2):
                red_row, blue_row = 2 * pitch, 2 * pitch + 1
                if not done[red_row]:
                    continue
                if timed_out[red_row]:
                    timeouts += 1
                elif running[red_row] > running[blue_row]:
                    red_goals += 1
                else:
                    blue_goals += 1
                returns.append(float(running[red_row]))
            running[done] = 0.0
    return red_goals, blue_goals, timeouts, float(np.mean(returns)) if returns else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", type=Path, help="the run's models folder (models/<run-id>-0)")
    parser.add_argument("--decisions", type=int, default=1800, help="decisions per match (8 pitches play)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the scene, the samples and random play")
    args = parser.parse_args()
    if not args.models.is_dir():
        raise SystemExit(
            f"There is no folder {args.models}; give the models/<run-id>-0 folder of a SoccerTwos run."
        )
    models = {brain: export_newest_checkpoint(args.models, brain) for brain in ACTIONS}
    print(
        f"SoccerTwos, {args.decisions} decisions per match on 8 pitches (seed {args.seed}); "
        "a pitch episode ends at a goal or after 3000 physics steps (600 decisions):"
    )
    print(
        "| red team | blue team | episodes | red goals | blue goals | timeouts | red striker's mean return |"
    )
    print("|---|---|---|---|---|---|---|")
    for red, blue in MATCHES:
        red_goals, blue_goals, timeouts, mean = play_match(red, blue, models, args.decisions, args.seed)
        episodes = red_goals + blue_goals + timeouts
        print(
            f"| {red} | {blue} | {episodes} | {red_goals} | {blue_goals} | {timeouts} | {mean:.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
