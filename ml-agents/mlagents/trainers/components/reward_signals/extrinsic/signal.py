"""The environment's reward, scaled: :class:`ExtrinsicRewardSignal`."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlagents.envs.brain import BrainInfo
from mlagents.trainers.components.reward_signals import RewardSignal, RewardSignalResult

__all__ = ["ExtrinsicRewardSignal"]


class ExtrinsicRewardSignal(RewardSignal):
    """Reward = ``strength * next_info.rewards``; no network, no update.

    Configuration keys: ``strength`` (required), ``gamma`` (required).
    """

    @classmethod
    def check_config(cls, config_dict: dict[str, Any] | None, param_keys: list[str] | None = None) -> None:
        super().check_config(config_dict, ["strength", "gamma"])

    def evaluate(self, current_info: BrainInfo, next_info: BrainInfo) -> RewardSignalResult:
        unscaled = np.asarray(next_info.rewards, dtype=np.float32).reshape(-1)
        return RewardSignalResult(self.strength * unscaled, unscaled)
