"""The TensorFlow 2 side shared by the trainable policies: :class:`TFPolicy`.

A TFPolicy owns a network (a :class:`~mlagents.trainers.models.LearningModel`), its optimizer, the
step counter ``global_step`` and the checkpoints of all three in ``<model_path>/``. Subclasses
(:class:`~mlagents.trainers.ppo.policy.PPOPolicy`) build the network and implement :meth:`evaluate`
and :meth:`update`.

Files written under ``model_path`` (``models/<run-id>/<brain>``):

* ``model-<step>.index`` / ``model-<step>.data-*`` and ``checkpoint``: TF2 checkpoints of the weights,
  the optimizer state, the normalizer and ``global_step`` (the ``keep_checkpoints`` newest are kept);
* ``<model_path>.nn``: the network for Unity's inference engine (Barracuda format, see
  :mod:`mlagents.trainers.tensorflow_to_barracuda`).
"""

from __future__ import annotations

import logging
import os
from typing import Any, Dict, List, Optional

import numpy as np
import tensorflow as tf

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.policy import Policy
from mlagents.trainers.exception import UnityPolicyException
from mlagents.trainers.models import LearningModel

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["TFPolicy", "UnityPolicyException", "as_bool"]


def as_bool(value: Any) -> bool:
    """A configuration flag as bool (YAML gives bools, but ``"false"`` as a string must be False)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return bool(value)


class TFPolicy(Policy):
    """Base of the TensorFlow policies.

    :param seed: seed of the initial weights and of the action sampling.
    :param brain: the brain's parameters.
    :param trainer_parameters: the brain's hyper-parameters; reads ``use_recurrent``, ``memory_size``,
        ``sequence_length``, ``normalize``, ``model_path``, ``keep_checkpoints`` (default 5).
    :raises UnityPolicyException: recurrent with a memory size of 0 or not divisible by 4.
    """

    possible_output_nodes = [
        "action",
        "value_estimate",
        "action_probs",
        "recurrent_out",
        "memory_size",
        "version_number",
        "is_continuous_control",
        "action_output_shape",
    ]

    def __init__(self, seed: int, brain: BrainParameters, trainer_parameters: Dict[str, Any]) -> None:
        self.seed = int(seed)
        self.brain = brain
        self.trainer_parameters = trainer_parameters
        self.model: Optional[LearningModel] = None
        self.optimizer: Optional[tf.Module] = None
        self.m_size = 0
        self.sequence_length = 1
        self.use_recurrent = as_bool(trainer_parameters.get("use_recurrent", False))
        self.normalize = as_bool(trainer_parameters.get("normalize", False))
        self.use_continuous_act = brain.vector_action_space_type == "continuous"
        self.model_path = str(trainer_parameters.get("model_path", f"./models/{brain.brain_name}"))
        self.keep_checkpoints = max(1, int(float(trainer_parameters.get("keep_checkpoints", 5))))
        self.rng = np.random.default_rng(self.seed)
        if self.use_recurrent:
            self.m_size = int(float(trainer_parameters["memory_size"]))
            self.sequence_length = max(1, int(float(trainer_parameters["sequence_length"])))
            if self.m_size == 0:
                raise UnityPolicyException(
                    f"The memory size for brain {brain.brain_name} is 0 even though the trainer uses recurrent."
                )
            if self.m_size % 4 != 0:
                raise UnityPolicyException(
                    f"The memory size for brain {brain.brain_name} is {self.m_size} but it must be divisible by 4."
                )
        self._checkpoint: Optional[tf.train.Checkpoint] = None
        self._checkpoint_manager: Optional[tf.train.CheckpointManager] = None

    # ------------------------------------------------------------------ decisions

    def evaluate(self, brain_info: BrainInfo) -> Dict[str, Any]:
        """The policy's outputs for the agents of ``brain_info`` (numpy arrays, agents on axis 0)."""
        raise NotImplementedError

    def get_action(self, brain_info: BrainInfo) -> ActionInfo:
        """Decide the actions of the agents of ``brain_info``.

        :returns: ``ActionInfo(action, memory, text=None, value, outputs)``; for no agents
            ``ActionInfo([], [], [], None, None)``.
        """
        if len(brain_info.agents) == 0:
            return ActionInfo([], [], [], None, None)
        run_out = self.evaluate(brain_info)
        return ActionInfo(
            action=run_out.get("action"),
            memory=run_out.get("memory_out"),
            text=None,
            value=run_out.get("value"),
            outputs=run_out,
        )

    def update(self, mini_batch: Dict[str, np.ndarray], num_sequences: int) -> Dict[str, float]:
        """One gradient step on ``mini_batch`` (buffer field name -> array); returns statistics."""
        raise NotImplementedError

    def make_empty_memory(self, num_agents: int) -> np.ndarray:
        """Zero memories, float32 (num_agents, memory_size)."""
        return np.zeros((num_agents, self.m_size), dtype=np.float32)

    # ------------------------------------------------------------------ properties of the brain

    @property
    def vis_obs_size(self) -> int:
        """Number of cameras."""
        return self.brain.number_visual_observations

    @property
    def vec_obs_size(self) -> int:
        """Length of the (stacked) vector observation."""
        return self.brain.vector_observation_space_size * self.brain.num_stacked_vector_observations

    @property
    def use_vis_obs(self) -> bool:
        return self.vis_obs_size > 0

    @property
    def use_vec_obs(self) -> bool:
        return self.vec_obs_size > 0

    # ------------------------------------------------------------------ observation feeds

    def observation_feed(self, brain_info: BrainInfo, rows: Optional[List[int]] = None) -> Dict[str, np.ndarray]:
        """The network inputs of the agents of ``brain_info`` (all of them, or the indices ``rows``).

        Missing or malformed memories become zeros, missing action masks ones.
        """
        n = len(brain_info.agents)
        index = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
        feed: Dict[str, np.ndarray] = {}
        if self.use_vec_obs:
            feed["vector_observation"] = np.asarray(brain_info.vector_observations, dtype=np.float32)[index]
        for i in range(self.vis_obs_size):
            camera = brain_info.visual_observations[i]
            feed[f"visual_observation_{i}"] = np.asarray([camera[j] for j in index], dtype=np.float32)
        if not self.use_continuous_act:
            feed["action_masks"] = self.action_masks_of(brain_info)[index]
            if self.use_recurrent:
                branches = len(self.brain.vector_action_space_size)
                prev = brain_info.previous_vector_actions
                if prev is None or np.shape(prev) != (n, branches):
                    feed["prev_action"] = np.zeros((len(index), branches), dtype=np.int32)
                else:
                    feed["prev_action"] = np.asarray(prev)[index].astype(np.int32)
        if self.use_recurrent:
            feed["recurrent_in"] = self.memories_of(brain_info)[index]
        return feed

    def action_masks_of(self, brain_info: BrainInfo) -> np.ndarray:
        """The agents' action masks as float32 (n, sum of branch sizes), 1 allowed / 0 masked; all
        ones when the BrainInfo has none (or masks of another size)."""
        n = len(brain_info.agents)
        total = int(sum(self.brain.vector_action_space_size))
        masks = brain_info.action_masks
        if masks is None or np.shape(masks) != (n, total):
            return np.ones((n, total), dtype=np.float32)
        return np.asarray(masks, dtype=np.float32)

    def memories_of(self, brain_info: BrainInfo) -> np.ndarray:
        """The agents' memories as float32 (n, memory_size): zeros when absent, cut/padded otherwise."""
        n = len(brain_info.agents)
        memories = brain_info.memories
        if memories is None or np.ndim(memories) != 2 or np.shape(memories)[0] != n or np.shape(memories)[1] == 0:
            return self.make_empty_memory(n)
        memories = np.asarray(memories, dtype=np.float32)
        if memories.shape[1] >= self.m_size:
            return memories[:, : self.m_size]
        return np.pad(memories, ((0, 0), (0, self.m_size - memories.shape[1])))

    # ------------------------------------------------------------------ steps

    def get_current_step(self) -> int:
        """The policy's step count (``global_step``; restored by ``--load``)."""
        return int(self.model.global_step.numpy())

    def increment_step(self, n_steps: int) -> int:
        """Add ``n_steps`` to ``global_step``; returns the new value."""
        return self.model.increment_step(n_steps)

    # ------------------------------------------------------------------ saving and loading

    def _checkpoint_objects(self) -> Dict[str, Any]:
        objects: Dict[str, Any] = {"model": self.model}
        if self.optimizer is not None:
            objects["optimizer"] = self.optimizer
        return objects

    @property
    def checkpoint_manager(self) -> tf.train.CheckpointManager:
        """Manager of the checkpoints in ``model_path`` (keeps ``keep_checkpoints``)."""
        if self._checkpoint_manager is None:
            self._checkpoint = tf.train.Checkpoint(**self._checkpoint_objects())
            self._checkpoint_manager = tf.train.CheckpointManager(
                self._checkpoint, self.model_path, max_to_keep=self.keep_checkpoints, checkpoint_name="model"
            )
        return self._checkpoint_manager

    def _initialize_graph(self) -> None:
        """Nothing to do in TensorFlow 2: variables are initialized when the network is built."""

    def _load_graph(self) -> None:
        """Restore the newest checkpoint of ``model_path`` (weights, optimizer, normalizer, step).

        :raises UnityPolicyException: there is no checkpoint, or it does not fit this network.
        """
        self._initialize_graph()
        LOGGER.info("Loading Model for brain %s", self.brain.brain_name)
        latest = tf.train.latest_checkpoint(self.model_path)
        if latest is None:
            raise UnityPolicyException(
                f"The model {self.model_path} could not be found. Make sure you specified the right --run-id"
            )
        try:
            status = tf.train.Checkpoint(**self._checkpoint_objects()).restore(latest)
            status.assert_existing_objects_matched()
        except (AssertionError, ValueError, tf.errors.OpError) as error:
            raise UnityPolicyException(
                f"The checkpoint {latest} does not fit the network of brain {self.brain.brain_name}: the "
                "hyper-parameters that shape the network (hidden_units, num_layers, normalize, use_recurrent, "
                "memory_size, vis_encode_type, reward_signals) must be those of the run that saved it. "
                f"({str(error).splitlines()[0] if str(error) else type(error).__name__})"
            ) from None

    def save_model(self, steps: int) -> None:
        """Save a checkpoint ``<model_path>/model-<steps>`` (the newest ``keep_checkpoints`` are kept)."""
        os.makedirs(self.model_path, exist_ok=True)
        self.checkpoint_manager.save(checkpoint_number=int(steps))

    def export_model(self) -> None:
        """Write the network for Unity inference to ``<model_path>.nn`` (Barracuda format 16)."""
        # Imported here: the exporter imports the PPO package, which imports this module.
        from mlagents.trainers.tensorflow_to_barracuda import export_policy

        path = export_policy(self, self.model_path + ".nn")
        LOGGER.info("Exported %s file", path)
