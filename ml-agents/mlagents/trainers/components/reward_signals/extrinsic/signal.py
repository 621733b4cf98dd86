"""The environment's reward, scaled: :class:`ExtrinsicRewardSignal`."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mlagents.envs.brain import BrainInfo
from mlagents.trainers.buffer import MiniBatch
from mlagents.trainers.components.reward_signals import RewardSignal, RewardSignalResult

__all__ = ["ExtrinsicRewardSignal"]


class ExtrinsicRewardSignal(RewardSignal):
    """Reward = ``strength * next_info.rewards`` (of a buffered step: ``strength *
    environment_rewards``); no network, no update.

    Configuration keys: ``strength`` (required), ``gamma`` (required).
    """

    @classmethod
    def check_config(cls, config_dict: dict[str, Any] | None, param_keys: list[str] | None = None) -> None:
        super().check_config(config_dict, ["strength", "gamma"])

    def evaluate(self, current_info: BrainInfo, next_info: BrainInfo) -> RewardSignalResult:
        return self._scaled([] if next_info.rewards is None else next_info.rewards)

    def evaluate_batch(self, mini_batch: MiniBatch) -> RewardSignalResult:
        """The environment's rewards of the steps, the column ``environment_rewards``, scaled."""
        return self._scaled(mini_batch["environment_rewards"])

    def _scaled(self, rewards: npt.ArrayLike) -> RewardSignalResult:
        unscaled = np.asarray(rewards, dtype=np.float32).reshape(-1)
        return RewardSignalResult(self.strength * unscaled, unscaled)
