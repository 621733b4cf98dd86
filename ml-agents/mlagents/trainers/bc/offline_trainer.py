"""Behavioural cloning from recorded demonstrations: :class:`OfflineBCTrainer` (``trainer: offline_bc``).

The ``.demo`` file (or folder of them) at ``demo_path`` is read once, when the trainer is built, into
the demonstration buffer, which is never cleared: an update runs after every environment step. The
environment only shows how well the student does (its agents act with the current policy).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.bc.trainer import BCTrainer
from mlagents.trainers.demo_loader import load_demonstrations_for
from mlagents.trainers.settings import OfflineBCSettings

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["OfflineBCTrainer"]


class OfflineBCTrainer(BCTrainer):
    """Learns the policy of one brain from the demonstrations at ``demo_path``.

    Same constructor arguments as :class:`~mlagents.trainers.bc.trainer.BCTrainer`.

    :raises UnityTrainerException: no readable demonstration at ``demo_path``, or demonstrations
        that do not fit the brain (other observations or actions).
    """

    settings_class = OfflineBCSettings
    settings: OfflineBCSettings

    def __init__(
        self,
        brain: BrainParameters,
        trainer_parameters: OfflineBCSettings | Mapping[str, Any],
        training: bool,
        load: bool,
        seed: int,
        run_id: str,
    ) -> None:
        super().__init__(brain, trainer_parameters, training, load, seed, run_id)
        demo_path = self.settings.demo_path
        _, self.demonstration_buffer = load_demonstrations_for(brain, demo_path, self.policy.sequence_length)
        # The demonstrations never change: converted to arrays once.
        self._arrays = super().demonstration_arrays()
        LOGGER.info(
            "Brain %s: %d demonstration steps loaded from %s",
            self.brain_name,
            len(self.demonstration_buffer.update_buffer["actions"]),
            demo_path,
        )

    def demonstration_arrays(self) -> dict[str, np.ndarray]:
        """The demonstrations as arrays, converted once (they never change)."""
        return self._arrays
