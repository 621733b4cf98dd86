"""How often does a behavioural-cloning student fail where its teacher does not? The exported
model of a trained brain plays many whole episodes in-process (the example SDK's numpy inference
brain, nothing rendered) beside the heuristic that recorded the shipped demonstration.

Prints, for the model and the heuristic: episodes, mean reward, the share of failed episodes
(reward below half the heuristic's mean) and the mean reward of those. A CLI summary window of
about 36 episodes judges a student well only when that share is far below the 10% headroom of a
"90% of the heuristic" target; this script measures it on as many episodes as asked.

Usage::

    python benchmarks/bc_student_episodes.py models/<run-id>-0/3DBallLearning.nn \
        [--scene 3DBall] [--per-agent 10] [--seed 7]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from mlagents.example_envs import registry  # noqa: F401  (registers the examples' names)
from mlagents.example_envs.ball3d import balance
from mlagents.example_envs.basic import walk_to_large_goal
from mlagents.example_envs.sdk.brains import BrainSettings
from mlagents.example_envs.sdk.inference.brain import INFERENCE
from mlagents.example_envs.sdk.local import LocalEnvironment

SCENES: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray]]] = {
    "3DBall": ("3DBallLearning", balance),
    "Basic": ("BasicLearning", walk_to_large_goal),
}


def per_agent_rewards(
    env: LocalEnvironment, brain: str, act: Callable[[Any], np.ndarray] | None, n: int
) -> list[float]:
    """The first ``n`` episode rewards of every agent of ``brain`` (``act`` None: the brain decides)."""
    batches = env.reset(train_mode=True)
    totals: dict[int, float] = {}
    finished: dict[int, list[float]] = {}
    while not finished or min(map(len, finished.values())) < n:
        batch = batches[brain]
        for agent, reward, done in zip(
            batch.agents.tolist(), batch.rewards.tolist(), batch.local_done.tolist()
        ):
            totals[agent] = totals.get(agent, 0.0) + reward
            finished.setdefault(agent, [])
            if done:
                finished[agent].append(totals.pop(agent))
        batches = env.step({brain: act(batch)} if act is not None else None)
    return [reward for agent in sorted(finished) for reward in finished[agent][:n]]


def report(name: str, rewards: list[float], reference: float) -> None:
    values = np.asarray(rewards)
    failed = values[values < reference / 2]
    share = len(failed) / len(values)
    failed_mean = f"{failed.mean():.2f}" if len(failed) else "-"
    print(
        f"{name:<10} episodes {len(values):4d}  mean {values.mean():8.3f}  failed {share:6.1%}  "
        f"mean of the failed {failed_mean}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="the exported .nn model of the scene's learning brain")
    parser.add_argument("--scene", default="3DBall", choices=sorted(SCENES))
    parser.add_argument("--per-agent", type=int, default=10, help="episodes per agent")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    brain, heuristic = SCENES[args.scene]
    with LocalEnvironment(args.scene, seed=args.seed) as env:
        teacher = per_agent_rewards(
            env, brain, lambda batch: heuristic(batch.vector_observations), args.per_agent
        )
    settings = BrainSettings(kinds={brain: (INFERENCE, args.model)}, broadcast={brain})
    with LocalEnvironment(args.scene, seed=args.seed, brain_settings=settings) as env:
        student = per_agent_rewards(env, brain, None, args.per_agent)
    reference = float(np.mean(teacher))
    report("heuristic", teacher, reference)
    report("model", student, reference)
    print(f"target (90% of the heuristic) {0.9 * reference:.3f}")


if __name__ == "__main__":
    main()
