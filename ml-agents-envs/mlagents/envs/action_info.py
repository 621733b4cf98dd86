"""What a policy decided for one brain's agents: :class:`ActionInfo`."""

from typing import Any, NamedTuple

ActionInfoOutputs = dict[str, Any] | None
"""The policy's raw outputs (e.g. log-probabilities, value estimates per reward stream), or None."""


class ActionInfo(NamedTuple):
    """The decision of a policy for the agents of one :class:`~mlagents.envs.brain.BrainInfo`.

    Per-agent fields hold the agents on axis 0, in the order of ``BrainInfo.agents`` (n agents):

    :ivar action: vector actions, array-like of shape (n, action_size) — one column per discrete
        branch or per continuous action; ``[]`` when there are no agents.
    :ivar memory: recurrent memories, shape (n, memory_size), or None / ``[]`` when not recurrent.
    :ivar text: text actions (one str per agent), or None.
    :ivar value: value estimates, shape (n,), or None.
    :ivar outputs: the policy's raw outputs (:data:`ActionInfoOutputs`): arrays with the agents on
        axis 0, nested dicts of such arrays, or scalars shared by all agents.
    """

    action: Any
    memory: Any
    text: Any
    value: Any
    outputs: ActionInfoOutputs
