"""The agent ids of a BrainInfo, for code that cannot work without them: :func:`agent_ids`."""

from __future__ import annotations

from collections.abc import Hashable

from mlagents.envs.brain import BrainInfo

__all__ = ["AgentId", "agent_ids"]

AgentId = Hashable
"""An agent's id: ``"$<worker_id>-<id>"`` from an environment (``0`` for the single demonstrator of a
demonstration buffer); the trainers only use it as a key."""


def agent_ids(info: BrainInfo) -> list[AgentId]:
    """``info.agents``, one id per agent.

    ``BrainInfo`` accepts ``agents=None``, but every BrainInfo built from the environment's messages
    (and every join of them) has its list of ids; policies and trainers need it to match rows to
    agents.

    :raises ValueError: ``info`` has no agent ids.
    """
    if info.agents is None:
        raise ValueError("the BrainInfo has no agent ids (agents=None): it does not come from an environment")
    return info.agents
