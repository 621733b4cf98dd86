"""Helper of the tests that judge a policy by its episodes (not a test module): the rewards of
whole episodes played in an environment, through UnityEnvironment or in-process through the
example SDK's LocalEnvironment (both return per-brain batches with ``agents``, ``rewards`` and
``local_done``).

Imported as ``mlagents.trainers.tests.episode_helpers``.
"""

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from mlagents.envs.environment import UnityEnvironment

#: Gives a brain's actions for its last batch, or None to leave the deciding to the environment
#: (a brain of the build that is broadcast to Python).
Act = Callable[[Any], np.ndarray] | None


def episode_rewards(env: Any, brain: str, act: Act, per_agent: int) -> list[float]:
    """The rewards of the first ``per_agent`` episodes of every agent of ``brain`` in ``env``,
    played from a reset in the training configuration; agent by agent, in order of agent id.

    Every agent contributes the same number of episodes, so the short episodes (an agent that
    fails early) weigh no more than they do in the policy's play.
    """
    infos = env.reset(train_mode=True)
    totals: dict[Any, float] = {}
    finished: dict[Any, list[float]] = {}
    while not finished or min(map(len, finished.values())) < per_agent:
        info = infos[brain]
        for agent, reward, done in zip(info.agents, info.rewards, info.local_done):
            totals[agent] = totals.get(agent, 0.0) + float(reward)
            finished.setdefault(agent, [])
            if done:
                finished[agent].append(totals.pop(agent))
        infos = env.step({brain: act(info)} if act is not None else None)
    return [reward for agent in sorted(finished) for reward in finished[agent][:per_agent]]


def rewards_in_build(
    build: Path, brain: str, model: Path, port: int, per_agent: int, seed: int = 11
) -> list[float]:
    """:func:`episode_rewards` of the exported ``model`` acting inside ``build`` (``--model``; the
    brain broadcast so that Python sees the rewards, no brain of it trained by Python)."""
    env = UnityEnvironment(
        str(build),
        worker_id=0,
        base_port=port,
        seed=seed,
        no_graphics=True,
        args=["--model", f"{brain}={model}", "--broadcast", brain],
    )
    try:
        assert env.external_brain_names == []
        return episode_rewards(env, brain, None, per_agent)
    finally:
        env.close()


def within_noise(a: list[float], b: list[float]) -> bool:
    """The two means differ by less than four standard errors of their difference (plus 0.05 for
    samples that happen to have almost no spread)."""
    error = math.sqrt(np.var(a, ddof=1) / len(a) + np.var(b, ddof=1) / len(b))
    return abs(float(np.mean(a)) - float(np.mean(b))) < 4.0 * error + 0.05
