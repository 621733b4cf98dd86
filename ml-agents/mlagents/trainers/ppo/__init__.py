"""Proximal Policy Optimization: :class:`PPOTrainer`, :class:`PPOPolicy`, :class:`PPOModel`."""

from mlagents.trainers.ppo.models import PPOModel
from mlagents.trainers.ppo.policy import PPOPolicy
from mlagents.trainers.ppo.trainer import PPOTrainer, discount_rewards, get_gae

__all__ = ["PPOModel", "PPOPolicy", "PPOTrainer", "discount_rewards", "get_gae"]
