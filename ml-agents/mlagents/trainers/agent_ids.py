"""The agent ids of a BrainInfo, for code that cannot work without them: :func:`agent_ids`."""

from __future__ import annotations

from typing import Any

from mlagents.envs.brain import BrainInfo

__all__ = ["agent_ids"]


def agent_ids(info: BrainInfo) -> list[Any]:
    """``info.agents``, one id per agent.

    ``BrainInfo`` accepts ``agents=None``, but every BrainInfo built from the environment's messages
    (and every join of them) has its list of ids; policies and trainers need it to match rows to
    agents.

    :raises ValueError: ``info`` has no agent ids.
    """
    if info.agents is None:
        raise ValueError("the BrainInfo has no agent ids (agents=None): it does not come from an environment")
    return info.agents
