"""The training loop: steps the environments, feeds the trainers, saves, summarizes, exports.

:class:`TrainerController` works with any :class:`~mlagents.envs.env_manager.EnvManager`. One pass
of the loop (:meth:`TrainerController.advance`) collects whatever environment steps are ready, hands
each trainer the transitions of its brain (as the env manager batched them: the steps of several
environments decided by one policy call arrive as one transition), advances
the trainers' step counts and runs the policy updates that are due. The controller counts a global
step per environment step; every ``save_freq`` global steps it saves every model, and every trainer
writes its summary every ``summary_freq`` global steps.

When the env manager restarted a lost environment, the trainers first end the episodes of its
agents (:meth:`~mlagents.trainers.trainer.Trainer.end_interrupted_episodes`), and the number of
restarts so far is written to TensorBoard as ``Environment/Restarts``.

Time spent is recorded in the hierarchical timers and written to
``<summaries_dir>/<run_id>_timers.json`` at the end: ``env_step`` (waiting for the environments,
including action selection by the env manager), ``add_experiences`` and ``process_experiences``
(the trainers' bookkeeping) and ``update_policy`` appear as separate nodes under
``TrainerController.advance``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from time import perf_counter

import numpy as np
import tensorflow as tf

from mlagents.envs.action_info import ActionInfoOutputs
from mlagents.envs.brain import AllBrainInfo
from mlagents.envs.env_manager import EnvManager, StepBatch, StepInfo
from mlagents.envs.exception import UnityEnvironmentException, UnityException
from mlagents.envs.sampler_class import SamplerManager
from mlagents.envs.timers import get_timer_tree, hierarchical_timer, timed
from mlagents.trainers.checkpoint_video import CheckpointVideos
from mlagents.trainers.meta_curriculum import MetaCurriculum
from mlagents.trainers.progress import console_progress
from mlagents.trainers.trainer import Trainer

LOGGER = logging.getLogger("mlagents.trainers")
# The original logs these messages (hyper-parameters, "Saved Model") on the environment logger.
ENV_LOGGER = logging.getLogger("mlagents.envs")
#: TensorBoard scalar: environment workers restarted so far in this run (written when it changes).
RESTARTS_TAG = "Environment/Restarts"


class TrainerController:
    """Runs the training (or inference) of a set of trainers on an environment manager.

    :param trainers: brain name -> trainer (see :func:`~mlagents.trainers.trainer_util.initialize_trainers`).
    :param model_path: folder of this run's models (``models/<run-id>-<n>``), created at start.
    :param summaries_dir: folder of the summaries; the timer tree goes to ``<summaries_dir>/<run_id>_timers.json``.
    :param run_id: the run identifier with its run index (``<run-id>-<n>``).
    :param save_freq: save every model every ``save_freq`` global steps.
    :param meta_curriculum: the run's curricula, or None.
    :param train: True to train, False to only run the policies (no update, no save, no export).
    :param training_seed: seeds numpy's and TensorFlow's global random generators.
    :param fast_simulation: reset the environments in training mode (``not --slow``).
    :param sampler_manager: reset-parameter samplers (generalization training).
    :param resampling_interval: global steps between two resamplings, or None.
    :param videos: records a video of the policies when due (``--video-freq``), or None.

    While training with stderr on a terminal, a progress line (steps, steps per second, time left)
    stays below the log lines (:mod:`mlagents.trainers.progress`); other output is unchanged.
    """

    def __init__(
        self,
        trainers: dict[str, Trainer],
        model_path: str,
        summaries_dir: str,
        run_id: str,
        save_freq: int,
        meta_curriculum: MetaCurriculum | None,
        train: bool,
        training_seed: int,
        fast_simulation: bool,
        sampler_manager: SamplerManager,
        resampling_interval: int | None,
        videos: CheckpointVideos | None = None,
    ) -> None:
        self.trainers = trainers
        self.videos = videos
        self.model_path = model_path
        self.summaries_dir = summaries_dir
        self.run_id = run_id
        self.save_freq = int(save_freq)
        self.meta_curriculum = meta_curriculum
        self.train_model = train
        self.seed = training_seed
        self.fast_simulation = fast_simulation
        self.sampler_manager = sampler_manager
        self.resampling_interval = resampling_interval
        self.logger = LOGGER
        self.global_step = 0
        self.training_start_time = perf_counter()
        self._restarts_written = 0
        # The signal (SIGINT/SIGTERM) that asked the running loop to stop, see _stop_requests.
        self._stop_signal: int | None = None
        np.random.seed(training_seed)
        tf.random.set_seed(training_seed)

    # ------------------------------------------------------------------ measures and curricula

    def _get_measure_vals(self) -> dict[str, float]:
        """Brain -> the measure its curriculum advances on (progress or mean recent return)."""
        measures: dict[str, float] = {}
        if self.meta_curriculum is None:
            return measures
        for brain_name, curriculum in self.meta_curriculum.brains_to_curriculums.items():
            trainer = self.trainers.get(brain_name)
            if trainer is None:
                continue
            if curriculum.measure == "progress":
                measures[brain_name] = trainer.get_step / trainer.get_max_steps
            elif curriculum.measure == "reward":
                buffer = trainer.reward_buffer
                measures[brain_name] = float(np.mean(buffer)) if len(buffer) > 0 else float("nan")
        return measures

    def _lesson_num(self, brain_name: str) -> int:
        if self.meta_curriculum is None:
            return 0
        curriculum = self.meta_curriculum.brains_to_curriculums.get(brain_name)
        return curriculum.lesson_num if curriculum is not None else 0

    # ------------------------------------------------------------------ saving and export

    def _save_model(self) -> None:
        """Save a checkpoint of every trainer's policy."""
        for trainer in self.trainers.values():
            trainer.save_model()
        ENV_LOGGER.info("Saved Model")

    def _save_model_when_interrupted(self) -> None:
        ENV_LOGGER.info("Learning was interrupted. Please wait while the graph is generated.")
        self._save_model()

    @staticmethod
    @contextmanager
    def _ignoring_sigint() -> Iterator[None]:
        """Let an impatient second Ctrl-C not break the final save and export (SIGTERM still does)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    @contextmanager
    def _stop_requests(self) -> Iterator[None]:
        """While the loop runs, Ctrl-C (SIGINT) and SIGTERM ask it to stop after the current pass.

        Raising KeyboardInterrupt from the signal handler at an arbitrary point is not safe here:
        inside a TensorFlow call it surfaces as a SystemError and the run would end without saving.
        The first signal is therefore only recorded (the loop raises KeyboardInterrupt itself at the
        end of the pass); a second one raises at once, for a pass that does not end.
        """
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self._stop_signal = None

        def request_stop(signum: int, frame: object) -> None:
            if self._stop_signal is not None:
                raise KeyboardInterrupt(f"signal {signum}")
            self._stop_signal = signum
            ENV_LOGGER.info("Stopping after the current step (interrupt again to stop at once).")

        previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _write_training_metrics(self) -> None:
        for trainer in self.trainers.values():
            trainer.write_training_metrics()

    def _export_graph(self) -> None:
        """Export every trainer's policy for inference (``<model_path>/<brain>.nn``)."""
        for trainer in self.trainers.values():
            trainer.export_model()

    def _write_timing_tree(self) -> None:
        timing_path = os.path.join(self.summaries_dir, f"{self.run_id}_timers.json")
        try:
            with open(timing_path, "w") as file:
                json.dump(get_timer_tree(), file, indent=2)
        except OSError:
            LOGGER.warning("Unable to save to %s. Make sure the directory exists", timing_path)

    @staticmethod
    def _create_model_path(model_path: str) -> None:
        try:
            os.makedirs(model_path, exist_ok=True)
        except OSError:
            raise UnityEnvironmentException(
                f"The folder {model_path} containing the generated model could not be accessed. Please make "
                f"sure the permissions are set correctly."
            ) from None

    # ------------------------------------------------------------------ resets

    def _reset_env(self, env: EnvManager) -> list[StepInfo]:
        """Reset every environment with fresh samples and the current lessons (curriculum values win)."""
        config = self.sampler_manager.sample_all()
        if self.meta_curriculum is not None:
            config.update(self.meta_curriculum.get_config())
        return env.reset(config=config, train_mode=self.fast_simulation)

    def _check_environment_brains(self, step_infos: list[StepInfo]) -> None:
        """Let trainers that read other brains (online BC's teacher) check that the environment has them."""
        brain_names = {name for step_info in step_infos for name in step_info.current_all_brain_info}
        for trainer in self.trainers.values():
            check = getattr(trainer, "check_environment_brains", None)
            if check is not None:
                check(brain_names)

    def _not_done_training(self) -> bool:
        return (
            any(trainer.get_step <= trainer.get_max_steps for trainer in self.trainers.values())
            or not self.train_model
        )

    def end_trainer_episodes(self, env: EnvManager, lessons_incremented: dict[str, bool]) -> None:
        """Reset the environments, end every trainer's episodes, clear the reward buffer of advanced brains."""
        self._reset_env(env)
        for trainer in self.trainers.values():
            trainer.end_episode()
        for brain_name, changed in lessons_incremented.items():
            if changed and brain_name in self.trainers:
                self.trainers[brain_name].reward_buffer.clear()

    def reset_env_if_ready(self, env: EnvManager, steps: int) -> None:
        """Advance curricula whose brains collected enough episodes; reset if a lesson changed or a
        generalization resampling is due (every ``resampling_interval`` global steps)."""
        lessons_incremented: dict[str, bool] = {}
        if self.meta_curriculum is not None:
            reward_buff_sizes = {name: len(trainer.reward_buffer) for name, trainer in self.trainers.items()}
            lessons_incremented = self.meta_curriculum.increment_lessons(
                self._get_measure_vals(), reward_buff_sizes=reward_buff_sizes
            )
        meta_curriculum_reset = any(lessons_incremented.values())
        interval = self.resampling_interval
        generalization_reset = (
            not self.sampler_manager.is_empty()
            and steps != 0
            and interval is not None
            and interval != 0
            and steps % int(interval) == 0
        )
        if meta_curriculum_reset or generalization_reset:
            self.end_trainer_episodes(env, lessons_incremented)

    # ------------------------------------------------------------------ the loop

    def start_learning(self, env_manager: EnvManager) -> None:
        """Train (or run) until every trainer used its ``max_steps``, Ctrl-C, or an environment failure.

        On Ctrl-C (SIGINT), SIGTERM, a KeyboardInterrupt or a lost environment (any ``UnityException``
        from the env manager, after the first step) the models are saved and exported when training;
        a signal stops the loop at the end of the current pass (a second one at once). An
        interruption then ends normally, an environment failure is re-raised after saving. Any other
        exception is re-raised without saving (the trainer state may be broken). In every case the
        timer tree is written and the env manager closed (no environment process survives).
        """
        self._create_model_path(self.model_path)
        for trainer in self.trainers.values():
            ENV_LOGGER.info("%s", trainer)
        if self.train_model:
            for trainer in self.trainers.values():
                trainer.write_tensorboard_text("Hyperparameters", trainer.parameters)
        self.global_step = 0
        self.training_start_time = perf_counter()
        env_error: UnityException | None = None
        interrupted = False
        try:
            try:
                for brain_name, trainer in self.trainers.items():
                    env_manager.set_policy(brain_name, trainer.policy)
                self._check_environment_brains(self._reset_env(env_manager))
                progress = console_progress(self.trainers, self.run_id, self.train_model)
                with self._stop_requests(), ExitStack() as console:
                    if progress is not None:
                        console.enter_context(progress)
                    while self._not_done_training():
                        n_steps = self.advance(env_manager)
                        for _ in range(n_steps):
                            self.global_step += 1
                            self.reset_env_if_ready(env_manager, self.global_step)
                            if self._should_save_model(self.global_step):
                                self._save_model()
                            if (
                                self.train_model
                                and self.videos is not None
                                and self.videos.due(self.global_step)
                            ):
                                self.videos.record(self.global_step)
                            self.write_to_tensorboard(self.global_step)
                        if progress is not None:
                            progress.update()
                        if self._stop_signal is not None:
                            raise KeyboardInterrupt(f"signal {self._stop_signal}")
                if self.global_step != 0 and self.train_model:
                    self._save_model()
            except KeyboardInterrupt:
                interrupted = True
            except UnityException as error:
                if self._stop_signal is not None:
                    # Ctrl-C also reached the environment workers, which stopped: that is the
                    # interruption, not an environment failure.
                    interrupted = True
                else:
                    env_error = error
                    # Nothing to keep when the environments failed before the first step.
                    interrupted = self.global_step > 0
            with self._ignoring_sigint():
                if interrupted and self.train_model:
                    self._save_model_when_interrupted()
                if self.train_model and (env_error is None or interrupted):
                    self._write_training_metrics()
                    self._export_graph()
        finally:
            with self._ignoring_sigint():
                self._write_timing_tree()
                for trainer in self.trainers.values():
                    trainer.close_summary_writer()
                try:
                    env_manager.close()
                except UnityEnvironmentException as error:
                    # An environment that failed has already closed itself ("No Unity environment is loaded").
                    LOGGER.debug("Closing the environments: %s", error)
        if env_error is not None:
            raise env_error

    def _should_save_model(self, global_step: int) -> bool:
        return self.train_model and self.save_freq > 0 and global_step % self.save_freq == 0

    def write_to_tensorboard(self, global_step: int) -> None:
        """Let every trainer write its summary (each acts every ``summary_freq`` global steps)."""
        delta_train_start = perf_counter() - self.training_start_time
        for brain_name, trainer in self.trainers.items():
            trainer.write_summary(global_step, delta_train_start, self._lesson_num(brain_name))

    def _end_interrupted_episodes(self, env: EnvManager) -> None:
        """Let the trainers end the episodes of environments that were lost and restarted, and
        write the number of restarts so far (``Environment/Restarts``) when it changed."""
        for last_info, interrupted_info, _ in env.take_interrupted_steps():
            for trainer in self.trainers.values():
                trainer.end_interrupted_episodes(last_info or {}, interrupted_info)
        restarts = env.restart_count
        if restarts != self._restarts_written and self.train_model:
            self._restarts_written = restarts
            for trainer in self.trainers.values():
                trainer.write_scalars({RESTARTS_TAG: float(restarts)}, int(trainer.get_step))

    @staticmethod
    def _transitions(
        brain_name: str, batches: list[StepBatch]
    ) -> list[tuple[AllBrainInfo, AllBrainInfo, ActionInfoOutputs]]:
        """The transitions of ``brain_name`` in ``batches``: (previous infos, current infos, policy
        outputs of the decision taken on the previous infos), one per batch that has a decision for
        the brain (steps right after a reset have none).

        A batch from a manager that decides for several environments at once already joins their
        agents (the BrainInfo the policy saw, its unsplit outputs, the new BrainInfos joined in the
        same order), so the trainer does its per-step work once per decision; nothing is joined here.
        """
        transitions = []
        for batch in batches:
            previous, current, action_infos = batch.transition
            action_info = (action_infos or {}).get(brain_name)
            if previous is not None and action_info is not None:
                transitions.append((previous, current, action_info.outputs))
        return transitions

    @timed
    def advance(self, env: EnvManager) -> int:
        """One pass of the loop: step the environments that are ready and feed the trainers.

        :returns: the number of environment steps taken (1 to the number of environments).
        """
        with hierarchical_timer("env_step"):
            time_start_step = perf_counter()
            batches = env.step_batches()
            delta_time_step = perf_counter() - time_start_step
        n_steps = sum(len(batch.step_infos) for batch in batches)
        # First: the restarted environments' new agents may carry the ids of the lost ones.
        self._end_interrupted_episodes(env)

        for brain_name, trainer in self.trainers.items():
            for previous, current, outputs in self._transitions(brain_name, batches):
                with hierarchical_timer("add_experiences"):
                    trainer.add_experiences(previous, current, outputs)
                with hierarchical_timer("process_experiences"):
                    trainer.process_experiences(previous, current)
        for brain_name, trainer in self.trainers.items():
            trainer.trainer_metrics.add_delta_step(delta_time_step)
            if self.train_model and trainer.get_step <= trainer.get_max_steps:
                trainer.increment_step(n_steps)
                if trainer.is_ready_update():
                    with hierarchical_timer("update_policy"):
                        trainer.update_policy()
                    env.set_policy(brain_name, trainer.policy)
        return n_steps
