"""The Python side of the Unity ML-Agents wire: environments, brains, and the policy/action types."""

from .action_info import ActionInfo, ActionInfoOutputs  # noqa: F401
from .brain import AllBrainInfo, BrainInfo, BrainParameters  # noqa: F401
from .environment import *  # noqa: F403
from .exception import *  # noqa: F403
from .policy import Policy  # noqa: F401
