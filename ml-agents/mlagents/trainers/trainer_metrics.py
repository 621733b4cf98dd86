"""Per-policy-update timing figures of one trainer, written as a CSV file at the end of training.

A row is added each time a trainer finishes a policy update:

======================================== =====================================================
Column                                   Meaning
======================================== =====================================================
Brain name                               the brain the trainer learns for
Time to update policy                    seconds spent in the update
Time since start of training             seconds from the trainer's creation to the update
Time for last experience collection      seconds of environment stepping and bookkeeping since
                                         the previous update
Number of experiences used for training  steps in the update buffer
Mean return                              mean episode return since the previous update
======================================== =====================================================

The original 0.9.3 never wrote this file (its controller forgot to register the trainers); here it
is written at the end of a training run by every trainer that recorded at least one update.
"""

from __future__ import annotations

import csv
import logging
from time import perf_counter

LOGGER = logging.getLogger("mlagents.trainers")

FIELD_NAMES = [
    "Brain name",
    "Time to update policy",
    "Time since start of training",
    "Time for last experience collection",
    "Number of experiences used for training",
    "Mean return",
]


class TrainerMetrics:
    """Collects the timing rows of one trainer; see the module docstring for the columns.

    :param path: the CSV file to write (``summaries/<run-id>_<brain>.csv``).
    :param brain_name: the brain the trainer learns for.
    """

    def __init__(self, path: str, brain_name: str) -> None:
        self.path = path
        self.brain_name = brain_name
        self.rows: list[list[str]] = []
        self.time_training_start = perf_counter()
        self.time_start_experience_collection: float | None = None
        self.delta_last_experience_collection: float | None = None
        self.last_buffer_length: int | None = None
        self.last_mean_return: float | None = None
        self.time_policy_update_start: float | None = None
        self.delta_policy_update: float | None = None

    def start_experience_collection_timer(self) -> None:
        """Start timing a stretch of experience collection (call before bookkeeping)."""
        if self.time_start_experience_collection is None:
            self.time_start_experience_collection = perf_counter()

    def end_experience_collection_timer(self) -> None:
        """Stop the timer started by :meth:`start_experience_collection_timer` and accumulate it."""
        if self.time_start_experience_collection is not None:
            self.add_delta_step(perf_counter() - self.time_start_experience_collection)
            self.time_start_experience_collection = None

    def add_delta_step(self, delta: float) -> None:
        """Add ``delta`` seconds (an environment step, say) to the current experience collection."""
        self.delta_last_experience_collection = (self.delta_last_experience_collection or 0.0) + delta

    def start_policy_update_timer(self, number_experiences: int, mean_return: float) -> None:
        """Mark the start of a policy update.

        :param number_experiences: steps in the update buffer used by this update.
        :param mean_return: mean episode return since the previous update (NaN if none ended).
        """
        self.last_buffer_length = number_experiences
        self.last_mean_return = mean_return
        self.time_policy_update_start = perf_counter()

    def end_policy_update(self) -> None:
        """Mark the end of the policy update begun with :meth:`start_policy_update_timer`; add a row."""
        now = perf_counter()
        if self.time_policy_update_start is not None:
            self.delta_policy_update = now - self.time_policy_update_start
        else:
            self.delta_policy_update = 0.0
        self._add_row(now - self.time_training_start)
        LOGGER.debug(
            "Policy Update Training Metrics for %s: %s",
            self.brain_name,
            dict(zip(FIELD_NAMES[1:], self.rows[-1][1:])),
        )
        self.delta_last_experience_collection = None
        self.time_policy_update_start = None

    def _add_row(self, delta_train_start: float) -> None:
        def fmt(value: float | None) -> str:
            return "" if value is None else f"{value:0.3f}"

        self.rows.append(
            [
                self.brain_name,
                fmt(self.delta_policy_update),
                fmt(delta_train_start),
                fmt(self.delta_last_experience_collection),
                "" if self.last_buffer_length is None else str(self.last_buffer_length),
                fmt(self.last_mean_return),
            ]
        )

    def write_training_metrics(self) -> None:
        """Write the header and every row to :attr:`path`; does nothing when no update was recorded.

        A folder that cannot be written only logs a warning: losing this file must not lose a run.
        """
        if not self.rows:
            return
        try:
            with open(self.path, "w", newline="") as file:
                writer = csv.writer(file)
                writer.writerow(FIELD_NAMES)
                writer.writerows(self.rows)
        except OSError as error:
            LOGGER.warning("Unable to write the training metrics to %s: %s", self.path, error)
