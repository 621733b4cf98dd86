"""The base class of every trainer: statistics, summaries, hyper-parameter checks, saving.

A trainer learns the policy of one brain. :class:`~mlagents.trainers.trainer_controller.TrainerController`
drives it, once per environment step of one environment worker::

    trainer.add_experiences(previous_infos, current_infos, action_info.outputs)
    trainer.process_experiences(previous_infos, current_infos)
    trainer.increment_step(n)                  # n = environment steps just taken
    if trainer.is_ready_update():
        trainer.update_policy()
    trainer.write_summary(global_step, seconds_since_start, lesson)

Subclasses (PPOTrainer) implement the experience handling and the update and name the typed settings
class they read (``settings_class``, see :mod:`mlagents.trainers.settings`): the constructor takes
such an object, or a plain dict of hyper-parameters that it parses once with the same checks. They record
statistics by appending to ``self.stats[tag]`` (e.g. ``"Environment/Cumulative Reward"`` at every
episode end); :meth:`write_summary` turns the values collected since the last summary into one mean
per tag. To get rows in the training-metrics CSV, ``update_policy`` calls
``self.trainer_metrics.start_policy_update_timer(n_experiences, mean_return)`` before the update and
``self.trainer_metrics.end_policy_update()`` after it (as the original PPOTrainer does).
"""

from __future__ import annotations

import logging
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import tensorflow as tf
from tensorboard.compat.proto.summary_pb2 import Summary

from mlagents.envs.timers import set_gauge
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import ConfigSource, TrainerSettings
from mlagents.trainers.trainer_metrics import TrainerMetrics

if TYPE_CHECKING:
    from mlagents.envs.action_info import ActionInfoOutputs
    from mlagents.envs.brain import AllBrainInfo, BrainParameters
    from mlagents.trainers.tf_policy import TFPolicy

LOGGER = logging.getLogger("mlagents.trainers")

#: TensorBoard tags every trainer writes: the episode return and length, the curriculum lesson.
CUMULATIVE_REWARD_TAG = "Environment/Cumulative Reward"
EPISODE_LENGTH_TAG = "Environment/Episode Length"
LESSON_TAG = "Environment/Lesson"


class Trainer:
    """Base class of the trainers of one brain.

    :param brain: the brain's parameters as reported by the environment.
    :param trainer_parameters: the brain's settings (a :class:`TrainerSettings` of ``settings_class``),
        or its merged hyper-parameters as a dict (parsed here); ``max_steps`` and ``summary_freq``
        are required, ``summary_path`` defaults to ``./summaries/<run_id>_<brain>``.
    :param training: True to learn (``--train``); False runs the policy only.
    :param run_id: the run identifier shown on the console (``--run-id``, without the run index).
    :param reward_buff_cap: capacity of :attr:`reward_buffer` (episode returns kept for curricula).

    :ivar settings: the typed settings.
    :ivar trainer_parameters: the settings as a dict under their YAML keys (shown as the
        hyper-parameters).
    :ivar stats: tag -> values collected since the last summary.
    :ivar policy: the policy being trained; set by the subclass (v0.9's ``check_param_keys`` and
        ``param_keys`` remain for subclasses that list keys of their own).
    :ivar cumulative_returns_since_policy_update: episode returns since the last policy update.
    :ivar reward_buffer: the most recent episode returns, newest first (``appendleft``).
    :ivar step: the trainer's step count (environment steps of one worker), see :meth:`increment_step`.
    """

    settings_class: ClassVar[type[TrainerSettings]] = TrainerSettings
    policy: TFPolicy

    def __init__(
        self,
        brain: BrainParameters,
        trainer_parameters: TrainerSettings | Mapping[str, Any],
        training: bool,
        run_id: str,
        reward_buff_cap: int = 1,
    ) -> None:
        self.param_keys: list[str] = []
        self.brain = brain
        self.brain_name: str = brain.brain_name
        self.run_id = run_id
        self.settings = self.settings_class.coerce(trainer_parameters, self.config_source())
        self.trainer_parameters: dict[str, Any] = self.settings.to_dict()
        self.summary_path: str = self.settings.summary_path or f"./summaries/{run_id}_{self.brain_name}"
        self.is_training = training
        self.stats: dict[str, list[float]] = defaultdict(list)
        self.cumulative_returns_since_policy_update: list[float] = []
        self.reward_buffer: deque[float] = deque(maxlen=max(1, int(reward_buff_cap)))
        self.trainer_metrics = TrainerMetrics(path=self.summary_path + ".csv", brain_name=self.brain_name)
        self.step: int = 0
        self._summary_writer: tf.summary.SummaryWriter | None = None

    # ------------------------------------------------------------------ configuration

    def config_source(self) -> ConfigSource:
        """This trainer's brain and class, as named in configuration errors."""
        cls = type(self)
        return ConfigSource(self.brain_name, trainer_class=f"{cls.__module__}.{cls.__qualname__}")

    def check_param_keys(self) -> None:
        """Check that every key of ``self.param_keys`` is among the hyper-parameters (the settings
        classes check their own keys; this remains for trainers that list extra ones).

        :raises UnityTrainerException: naming the first missing key, the trainer class and the brain.
        """
        for key in self.param_keys:
            if key not in self.trainer_parameters:
                raise UnityTrainerException(
                    f"The hyper-parameter {key} could not be found for the {self.__class__} trainer of "
                    f"brain {self.brain_name}."
                )

    @staticmethod
    def dict_to_str(param_dict: object, num_tabs: int) -> str:
        """Render hyper-parameters one ``\\tkey:\\tvalue`` per line; nested dicts indent two spaces per level."""
        if not isinstance(param_dict, dict):
            return str(param_dict)
        lines = [
            "\t" + "  " * num_tabs + f"{key}:\t{Trainer.dict_to_str(value, num_tabs + 1)}"
            for key, value in param_dict.items()
        ]
        return ("\n" if num_tabs > 0 else "") + "\n".join(lines)

    def __str__(self) -> str:
        return (
            f"Hyperparameters for the {self.__class__.__name__} of brain {self.brain_name}: \n"
            f"{self.dict_to_str(self.trainer_parameters, 0)}"
        )

    @property
    def parameters(self) -> dict[str, Any]:
        """The trainer's hyper-parameters."""
        return self.trainer_parameters

    @property
    def get_max_steps(self) -> float:
        """The step budget ``max_steps``."""
        return self.settings.max_steps

    @property
    def get_step(self) -> int:
        """The trainer's current step."""
        return self.step

    def increment_step(self, n_steps: int) -> None:
        """Advance the step count by ``n_steps`` environment steps.

        The policy owns the persistent counter (restored with ``--load``), so the trainer's step is
        whatever the policy returns.
        """
        self.step = int(self.policy.increment_step(n_steps))

    # ------------------------------------------------------------------ subclass hooks

    def add_experiences(
        self,
        curr_info: AllBrainInfo,
        next_info: AllBrainInfo,
        take_action_outputs: ActionInfoOutputs,
    ) -> None:
        """Record the transition ``curr_info`` -> ``next_info`` produced by ``take_action_outputs``."""
        raise NotImplementedError(f"{self.__class__.__name__} does not implement add_experiences.")

    def process_experiences(self, current_info: AllBrainInfo, new_info: AllBrainInfo) -> None:
        """Move finished trajectories (episode ends, time horizon reached) into the update buffer."""
        raise NotImplementedError(f"{self.__class__.__name__} does not implement process_experiences.")

    def end_interrupted_episodes(self, last_info: AllBrainInfo, interrupted_info: AllBrainInfo) -> None:
        """End the episodes of agents whose environment was lost (and restarted in a fresh state).

        ``interrupted_info`` holds their last observations with every agent done and
        ``max_reached``: their trajectories end there like episodes cut by a step limit
        (bootstrapped from the value estimate, not terminal), so that nothing joins them to the
        first steps of the restarted environment, whose agents may carry the same ids.
        """
        if self.brain_name in interrupted_info:
            self.process_experiences(last_info, interrupted_info)

    def end_episode(self) -> None:
        """Forget the partial trajectories of every agent (the environment was reset)."""
        raise NotImplementedError(f"{self.__class__.__name__} does not implement end_episode.")

    def is_ready_update(self) -> bool:
        """True when enough experience was collected for :meth:`update_policy`."""
        raise NotImplementedError(f"{self.__class__.__name__} does not implement is_ready_update.")

    def update_policy(self) -> None:
        """Improve the policy from the collected experience."""
        raise NotImplementedError(f"{self.__class__.__name__} does not implement update_policy.")

    # ------------------------------------------------------------------ saving

    def save_model(self) -> None:
        """Save a checkpoint of the policy at the current step."""
        self.policy.save_model(self.get_step)

    def export_model(self) -> None:
        """Export the policy for inference (``<model_path>.nn``)."""
        self.policy.export_model()

    def write_training_metrics(self) -> None:
        """Write the training-metrics CSV (``<summary_path>.csv``) if any policy update was recorded."""
        self.trainer_metrics.write_training_metrics()

    # ------------------------------------------------------------------ summaries

    @property
    def summary_writer(self) -> tf.summary.SummaryWriter:
        """The TensorBoard writer of ``summary_path``, created (with its folder) on first use."""
        if self._summary_writer is None:
            self._summary_writer = tf.summary.create_file_writer(self.summary_path)
        return self._summary_writer

    def write_summary(self, global_step: int, delta_train_start: float, lesson_num: int = 0) -> None:
        """Every ``summary_freq`` global steps: log the console line and write the TensorBoard scalars.

        Acts only when ``global_step`` is a non-zero multiple of ``summary_freq``. The console line
        (logger ``mlagents.trainers``, INFO) reads::

             <run_id>: <brain>: Step: <step>. Time Elapsed: <s> s Mean Reward: <m>. Std of Reward: <sd>. Training.

        or ``... Step: <step>. No episode was completed since last summary. Training.`` when no episode
        ended. Every statistic with values becomes one scalar (the mean of the values, which are then
        cleared), plus ``Environment/Lesson``, at step ``min(step, max_steps)``.

        :param global_step: the controller's step count (steps of all workers since this run started).
        :param delta_train_start: seconds since training started.
        :param lesson_num: the curriculum lesson of this brain (0 without curriculum).
        """
        summary_freq = self.settings.summary_freq
        if global_step == 0 or summary_freq <= 0 or global_step % summary_freq != 0:
            return
        max_steps = self.get_max_steps
        status = "Training." if self.is_training and self.get_step <= max_steps else "Not Training."
        # The original prints the float max_steps (e.g. "50000.0") once the budget is used up.
        step = self.get_step if self.get_step <= max_steps else max_steps
        rewards = self.stats.get(CUMULATIVE_REWARD_TAG, [])
        if len(rewards) > 0:
            mean_reward = float(np.mean(rewards))
            LOGGER.info(
                " %s: %s: Step: %s. Time Elapsed: %0.3f s Mean Reward: %0.3f. Std of Reward: %0.3f. %s",
                self.run_id,
                self.brain_name,
                step,
                delta_train_start,
                mean_reward,
                float(np.std(rewards)),
                status,
            )
            set_gauge(f"{self.brain_name}.mean_reward", mean_reward)
        else:
            LOGGER.info(
                " %s: %s: Step: %s. No episode was completed since last summary. %s",
                self.run_id,
                self.brain_name,
                step,
                status,
            )
        scalars: dict[str, float] = {}
        for key, values in self.stats.items():
            if len(values) > 0:
                scalars[key] = float(np.mean(values))
                self.stats[key] = []
        scalars[LESSON_TAG] = float(lesson_num)
        self.write_scalars(scalars, int(step))

    def write_scalars(self, scalars: dict[str, float], step: int) -> None:
        """Write ``tag -> value`` scalars at ``step`` and flush.

        They are stored as classic ``simple_value`` summaries (what the original wrote), which
        TensorBoard shows and ``EventAccumulator.Scalars(tag)`` reads back.
        """
        summary = Summary(
            value=[Summary.Value(tag=tag, simple_value=value) for tag, value in scalars.items()]
        )
        with self.summary_writer.as_default():
            tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=step)
        self.summary_writer.flush()

    def write_tensorboard_text(self, key: str, input_dict: dict[str, Any]) -> None:
        """Write ``input_dict`` as a two-column text table (``[key, str(value)]`` rows) named ``key``.

        Used for the ``Hyperparameters`` table at the start of training; written at the current step.
        """
        rows = [[str(name), str(value)] for name, value in input_dict.items()] or [["", ""]]
        with self.summary_writer.as_default():
            tf.summary.text(key, tf.constant(rows), step=int(self.get_step))
        self.summary_writer.flush()

    def close_summary_writer(self) -> None:
        """Flush and close the TensorBoard writer (if one was created)."""
        if self._summary_writer is not None:
            self._summary_writer.close()
            self._summary_writer = None
