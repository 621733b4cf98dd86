"""Helper of the tests that judge a policy by its episodes (not a test module): the rewards of
whole episodes played in an environment, through UnityEnvironment or in-process through the
example SDK's LocalEnvironment (both return per-brain batches with ``agents``, ``rewards`` and
``local_done``).

Imported as ``mlagents.trainers.tests.episode_helpers``.
"""

from collections.abc import Callable
from typing import Any

import numpy as np

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
