"""Soft Actor-Critic: :class:`SACTrainer`, :class:`SACPolicy`, :class:`SACModel`."""

from mlagents.trainers.sac.models import SACModel
from mlagents.trainers.sac.policy import SACPolicy
from mlagents.trainers.sac.trainer import SACTrainer

__all__ = ["SACModel", "SACPolicy", "SACTrainer"]
