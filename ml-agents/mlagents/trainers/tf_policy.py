"""The TensorFlow 2 side shared by the trainable policies: :class:`TFPolicy`.

A TFPolicy owns a network (a :class:`~mlagents.trainers.models.LearningModel`), its optimizer, the
step counter ``global_step`` and the checkpoints of all three in ``<model_path>/``. Subclasses
(:class:`~mlagents.trainers.ppo.policy.PPOPolicy`) build the network and implement :meth:`evaluate`
and :meth:`update`.

Files written under ``model_path`` (``models/<run-id>/<brain>``):

* ``model-<step>.index`` / ``model-<step>.data-*`` and ``checkpoint``: TF2 checkpoints of the weights,
  the optimizer state, the normalizer and ``global_step`` (the ``keep_checkpoints`` newest are kept),
  written so that a kill during a save leaves the previous ones usable (see
  :mod:`mlagents.trainers.checkpoints`);
* ``<model_path>.nn``: the network for Unity's inference engine (Barracuda format, see
  :mod:`mlagents.trainers.export`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.policy import Policy
from mlagents.trainers import export
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.checkpoints import CheckpointStore, NoReadableCheckpoint
from mlagents.trainers.exception import UnityPolicyException
from mlagents.trainers.fast_inference import NumpyPolicyNetwork
from mlagents.trainers.layers import branch_bounds, recording_normalizer_reads
from mlagents.trainers.models import LearningModel
from mlagents.trainers.settings import ConfigSource, PolicySettings, flag

LOGGER = logging.getLogger("mlagents.trainers")

__all__ = ["FixedSignatureFunction", "TFPolicy", "UnityPolicyException", "as_bool"]


def as_bool(value: Any) -> bool:
    """A configuration flag as bool (``"false"`` as a string is False); the settings classes read
    flags with the same rules (:func:`mlagents.trainers.settings.flag`)."""
    try:
        return flag(value, "flag", ConfigSource(""))
    except ValueError:
        return bool(value)


Signature = Sequence[tf.TensorSpec | dict[str, tf.TensorSpec]]


class FixedSignatureFunction:
    """A ``tf.function`` with a fixed input signature, called without TensorFlow's per-call binding.

    Calling a ``tf.function`` (even through its concrete function) binds and casts every argument
    against the signature in Python, about 30 microseconds per argument: for the small networks of
    the policies that is as long as running them, once per environment step. This wrapper traces the
    function once, converts numpy inputs to the signature's dtypes itself, checks their shapes, and
    calls the traced function with the flat list of tensors.

    Normalizers whose statistics the function reads (recorded while it is traced) get their staged
    statistics written first at every call (:meth:`~mlagents.trainers.layers.Normalizer.flush`), so
    the graph never runs on outdated statistics.

    :param python_function: takes one argument per entry of ``input_signature``.
    :param input_signature: per argument, a ``tf.TensorSpec`` or a dict name -> ``tf.TensorSpec``
        (a dict argument must then have exactly those keys).
    :ivar function: the underlying ``tf.function``.

    Calling it returns what ``python_function`` returns (tensors), like the ``tf.function``.

    :raises TypeError: wrong number of arguments, a dict argument with other keys, a tensor of
        another dtype.
    :raises ValueError: an input whose shape does not fit the signature.
    """

    def __init__(self, python_function: Callable[..., Any], input_signature: Signature) -> None:
        # The networks use no Python control flow on tensors: AutoGraph's source conversion would
        # only add seconds of tracing to every start.
        self.function = tf.function(python_function, input_signature=list(input_signature), autograph=False)
        # Flattened like tf.nest does: arguments in order, dict entries by sorted key.
        self._keys: list[tuple[str, ...] | None] = []
        self._specs: list[tuple[str, tf.TensorSpec]] = []
        for position, spec in enumerate(input_signature):
            if isinstance(spec, dict):
                keys = tuple(sorted(spec))
                self._keys.append(keys)
                self._specs.extend((key, spec[key]) for key in keys)
            else:
                self._keys.append(None)
                self._specs.append((f"argument {position}", spec))
        self._checks = [
            (name, spec.dtype, spec.dtype.as_numpy_dtype, tuple(spec.shape.as_list()))
            for name, spec in self._specs
        ]
        # Traced now, while the policy is built: the first decision of a training run is then as
        # fast as the others, and the loop's timers measure running, not tracing.
        with recording_normalizer_reads() as normalizers:
            self._call: Callable[[list[tf.Tensor]], Any] = self._trace()
        self._flushes: list[Callable[[], None]] = [normalizer.flush for normalizer in normalizers]

    def tracing_count(self) -> int:
        """How often the function was traced (1: once, when the wrapper was created)."""
        return int(self.function.experimental_get_tracing_count())

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self._keys):
            raise TypeError(f"expected {len(self._keys)} arguments, got {len(args)}")
        values: list[Any] = []
        for arg, keys in zip(args, self._keys):
            if keys is None:
                values.append(arg)
            elif isinstance(arg, dict) and len(arg) == len(keys) and all(key in arg for key in keys):
                values.extend(arg[key] for key in keys)
            else:
                got = sorted(arg) if isinstance(arg, dict) else type(arg).__name__
                raise TypeError(f"expected the inputs {list(keys)}, got {got}")
        for flush in self._flushes:
            flush()
        return self._call([self._to_tensor(value, check) for value, check in zip(values, self._checks)])

    def _trace(self) -> Callable[[list[tf.Tensor]], Any]:
        concrete = self.function.get_concrete_function()
        call_flat = getattr(concrete, "_call_flat", None)
        if call_flat is None:  # another TensorFlow version: the public (slower) way
            return lambda tensors: concrete(*tf.nest.pack_sequence_as(self.function.input_signature, tensors))
        return lambda tensors: call_flat(tensors, concrete.captured_inputs)

    @staticmethod
    def _to_tensor(value: Any, check: tuple[str, tf.DType, Any, tuple[int | None, ...]]) -> tf.Tensor:
        name, dtype, numpy_dtype, shape = check
        if isinstance(value, tf.Tensor):
            if value.dtype != dtype:
                raise TypeError(f"input {name}: expected a {dtype.name} tensor, got {value.dtype.name}")
            actual = tuple(value.shape)
        else:
            value = np.asarray(value, dtype=numpy_dtype)
            actual = value.shape
        if len(actual) != len(shape) or any(
            want is not None and want != got for want, got in zip(shape, actual)
        ):
            raise ValueError(f"input {name}: expected shape {list(shape)} (None: any), got {list(actual)}")
        return value if isinstance(value, tf.Tensor) else tf.constant(value)


class TFPolicy(Policy):
    """Base of the TensorFlow policies.

    :param seed: seed of the initial weights and of the action sampling.
    :param brain: the brain's parameters.
    :param trainer_parameters: the brain's :class:`~mlagents.trainers.settings.PolicySettings` (or
        a dict of hyper-parameters, parsed here); reads ``use_recurrent``, ``memory_size``,
        ``sequence_length``, ``normalize``, ``model_path`` (default ``./models/<brain>``) and
        ``keep_checkpoints``.
    :raises UnityPolicyException: recurrent with a memory size of 0 or not divisible by 4 (found
        when the settings are parsed).
    :ivar settings: the typed settings.
    :ivar model: the network; every subclass builds it in its constructor (before anything reads it).
    :ivar optimizer: the network's optimizer (None: not trained, nothing to checkpoint for it).
    """

    model: LearningModel

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

    def __init__(
        self, seed: int, brain: BrainParameters, trainer_parameters: PolicySettings | Mapping[str, Any]
    ) -> None:
        self.seed = int(seed)
        self.brain = brain
        self.settings: PolicySettings = PolicySettings.coerce(
            trainer_parameters, ConfigSource(brain.brain_name)
        )
        self.trainer_parameters: dict[str, Any] = self.settings.to_dict()
        self.optimizer: tf.Module | None = None
        self.use_recurrent = self.settings.use_recurrent
        self.normalize = self.settings.normalize
        self.use_continuous_act = brain.vector_action_space_type == "continuous"
        self.model_path = self.settings.model_path or f"./models/{brain.brain_name}"
        self.keep_checkpoints = self.settings.keep_checkpoints
        self.rng = np.random.default_rng(self.seed)
        self.m_size = self.settings.memory_size if self.use_recurrent else 0
        self.sequence_length = self.settings.sequence_length if self.use_recurrent else 1
        self._checkpoint: tf.train.Checkpoint | None = None
        self._checkpoint_store: CheckpointStore | None = None
        # The step count is kept in Python (None: read global_step first); increments reach the
        # variable only when TensorFlow reads it (see increment_step and write_step_count).
        self._known_step: int | None = None
        self._unwritten_steps = 0
        # The numpy copy of the network for decisions and value estimates (None: TensorFlow only);
        # subclasses that can use one create it with their TensorFlow functions.
        self._fast_network: NumpyPolicyNetwork | None = None

    # ------------------------------------------------------------------ decisions

    def evaluate(self, brain_info: BrainInfo) -> dict[str, Any]:
        """The policy's outputs for the agents of ``brain_info`` (numpy arrays, agents on axis 0)."""
        raise NotImplementedError

    def get_action(self, brain_info: BrainInfo) -> ActionInfo:
        """Decide the actions of the agents of ``brain_info``.

        :returns: ``ActionInfo(action, memory, text=None, value, outputs)``; for no agents
            ``ActionInfo([], [], [], None, None)``.
        """
        if len(agent_ids(brain_info)) == 0:
            return ActionInfo([], [], [], None, None)
        run_out = self.evaluate(brain_info)
        return ActionInfo(
            action=run_out.get("action"),
            memory=run_out.get("memory_out"),
            text=None,
            value=run_out.get("value"),
            outputs=run_out,
        )

    @cached_property
    def _branch_bounds(self) -> tuple[tuple[int, int], ...]:
        # Computed once: the model's act_size is a tracked TensorFlow list, slow to iterate per decision.
        return branch_bounds(self.model.act_size)

    def sample_discrete_actions(self, log_probs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per branch drawn from the masked log-probabilities (Gumbel-max).

        A masked action is never drawn, unless every action of its branch is masked (then the branch
        is drawn from the log-probabilities as they are).

        :param log_probs: (n, sum(branches)) masked log-probabilities.
        :param masks: (n, sum(branches)), 1 allowed / 0 masked.
        :returns: int32 (n, n_branches).
        """
        bounds = self._branch_bounds
        actions = np.empty((log_probs.shape[0], len(bounds)), dtype=np.int32)
        gumbel = self.rng.gumbel
        for k, (start, end) in enumerate(bounds):
            branch = log_probs[:, start:end]
            scores = branch + gumbel(size=branch.shape)
            allowed = masks[:, start:end] > 0
            if not allowed.all():  # otherwise every action is allowed (the usual case): no copy
                allowed |= ~allowed.any(axis=1, keepdims=True)
                scores = np.where(allowed, scores, -np.inf)
            actions[:, k] = scores.argmax(axis=1)
        return actions

    def update(self, mini_batch: dict[str, np.ndarray], num_sequences: int) -> dict[str, float]:
        """One gradient step on ``mini_batch`` (buffer field name -> array); returns statistics."""
        raise NotImplementedError

    def make_empty_memory(self, num_agents: int) -> np.ndarray:
        """Zero memories, float32 (num_agents, memory_size)."""
        return np.zeros((num_agents, self.m_size), dtype=np.float32)

    def weights_changed(self) -> None:
        """Note that the network's variables changed (an update, a checkpoint load, a direct
        ``assign``): the numpy copy used for decisions re-reads them before the next one.

        The policy calls it itself after its updates, loads and exports; code that assigns the
        model's variables directly and then decides must call it.
        """
        if self._fast_network is not None:
            self._fast_network.invalidate()

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

    def observation_feed(self, brain_info: BrainInfo, rows: list[int] | None = None) -> dict[str, np.ndarray]:
        """The network inputs of the agents of ``brain_info`` (all of them, or the indices ``rows``).

        Missing or malformed memories become zeros, missing action masks ones.
        """
        n = len(agent_ids(brain_info))
        index = None if rows is None else np.asarray(rows, dtype=np.int64)

        def pick(values: np.ndarray) -> np.ndarray:
            return values if index is None else values[index]

        feed: dict[str, np.ndarray] = {}
        if self.use_vec_obs:
            feed["vector_observation"] = pick(np.asarray(brain_info.vector_observations, dtype=np.float32))
        for i in range(self.vis_obs_size):
            camera = brain_info.visual_observations[i]
            images = camera if index is None else [camera[j] for j in index]
            feed[f"visual_observation_{i}"] = np.asarray(images, dtype=np.float32)
        if not self.use_continuous_act:
            feed["action_masks"] = pick(self.action_masks_of(brain_info))
            if self.use_recurrent:
                branches = len(self.brain.vector_action_space_size)
                prev = brain_info.previous_vector_actions
                if prev is None or np.shape(prev) != (n, branches):
                    feed["prev_action"] = np.zeros(
                        (n if index is None else len(index), branches), dtype=np.int32
                    )
                else:
                    feed["prev_action"] = pick(np.asarray(prev)).astype(np.int32)
        if self.use_recurrent:
            feed["recurrent_in"] = pick(self.memories_of(brain_info))
        return feed

    def action_masks_of(self, brain_info: BrainInfo) -> np.ndarray:
        """The agents' action masks as float32 (n, sum of branch sizes), 1 allowed / 0 masked; all
        ones when the BrainInfo has none (or masks of another size)."""
        n = len(agent_ids(brain_info))
        total = int(sum(self.brain.vector_action_space_size))
        masks = brain_info.action_masks
        if masks is None or np.shape(masks) != (n, total):
            return np.ones((n, total), dtype=np.float32)
        return np.asarray(masks, dtype=np.float32)

    def memories_of(self, brain_info: BrainInfo) -> np.ndarray:
        """The agents' memories as float32 (n, memory_size): zeros when absent, cut/padded otherwise."""
        n = len(agent_ids(brain_info))
        memories = brain_info.memories
        if (
            memories is None
            or np.ndim(memories) != 2
            or np.shape(memories)[0] != n
            or np.shape(memories)[1] == 0
        ):
            return self.make_empty_memory(n)
        memories = np.asarray(memories, dtype=np.float32)
        if memories.shape[1] >= self.m_size:
            return memories[:, : self.m_size]
        return np.pad(memories, ((0, 0), (0, self.m_size - memories.shape[1])))

    # ------------------------------------------------------------------ steps

    def get_current_step(self) -> int:
        """The policy's step count (``global_step``; restored by ``--load``)."""
        self.write_step_count()
        self._known_step = int(self.model.global_step.numpy())
        return self._known_step

    def step_count(self) -> int:
        """The step count without reading ``global_step`` (after the first time)."""
        return self._known_step if self._known_step is not None else self.get_current_step()

    def increment_step(self, n_steps: int) -> int:
        """Add ``n_steps`` to the step count; returns the new value.

        Called once per loop of the trainer, so it runs no TensorFlow op: the count is kept in
        Python and written into ``global_step`` by :meth:`write_step_count`, which every method
        that lets TensorFlow read the variable calls first (updates, checkpoints, export). Code
        that assigns ``global_step`` directly must call :meth:`get_current_step` afterwards.
        """
        step = self.step_count() + int(n_steps)
        self._known_step = step
        self._unwritten_steps += int(n_steps)
        return step

    def write_step_count(self) -> None:
        """Add the increments counted since the last write to ``global_step``."""
        if self._unwritten_steps:
            self.model.global_step.assign_add(self._unwritten_steps, read_value=False)
            self._unwritten_steps = 0

    # ------------------------------------------------------------------ saving and loading

    def _checkpoint_objects(self) -> dict[str, Any]:
        objects: dict[str, Any] = {"model": self.model}
        if self.optimizer is not None:
            objects["optimizer"] = self.optimizer
        return objects

    def _optional_checkpoint_objects(self) -> dict[str, Any]:
        """Objects saved with the checkpoint but restored only when the checkpoint holds them (a
        component added to a run that saved without it starts afresh)."""
        return {}

    @property
    def checkpoint_store(self) -> CheckpointStore:
        """The checkpoints in ``model_path`` (keeps ``keep_checkpoints``; saves survive a kill)."""
        if self._checkpoint_store is None:
            self._checkpoint = tf.train.Checkpoint(
                **self._checkpoint_objects(), **self._optional_checkpoint_objects()
            )
            self._checkpoint_store = CheckpointStore(
                self._checkpoint, self.model_path, max_to_keep=self.keep_checkpoints, name="model"
            )
        return self._checkpoint_store

    def _initialize_graph(self) -> None:
        """Nothing to do in TensorFlow 2: variables are initialized when the network is built."""

    def _load_graph(self) -> None:
        """Restore the newest readable checkpoint of ``model_path`` (weights, optimizer, normalizer,
        step); a newer one that cannot be read (truncated, partly written) is skipped with a warning.

        :raises UnityPolicyException: there is no checkpoint, none can be read, or it does not fit
            this network.
        """
        self._initialize_graph()
        LOGGER.info("Loading Model for brain %s", self.brain.brain_name)
        try:
            latest = self.checkpoint_store.newest_readable()
        except NoReadableCheckpoint as error:
            raise UnityPolicyException(str(error)) from None
        if latest is None:
            raise UnityPolicyException(
                f"The model {self.model_path} could not be found. Make sure you specified the right --run-id"
            )
        self._known_step = None
        self._unwritten_steps = 0
        if self.model.normalizer is not None:
            # Statistics staged by earlier decisions must not overwrite the restored ones later.
            self.model.normalizer.flush()
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
        self._restore_optional(latest)
        self.weights_changed()

    def _restore_optional(self, checkpoint: str) -> None:
        """Restore each of :meth:`_optional_checkpoint_objects` that ``checkpoint`` holds."""
        optional = self._optional_checkpoint_objects()
        if not optional:
            return
        saved = {name.split("/", 1)[0] for name, _ in tf.train.list_variables(checkpoint)}
        for name, component in optional.items():
            if name not in saved:
                LOGGER.info("The checkpoint %s has no %s: it starts afresh.", checkpoint, name)
                continue
            try:
                tf.train.Checkpoint(**{name: component}).restore(checkpoint).assert_existing_objects_matched()
            except (AssertionError, ValueError, tf.errors.OpError) as error:
                raise UnityPolicyException(
                    f"The {name} in checkpoint {checkpoint} does not fit brain {self.brain.brain_name}: "
                    f"{str(error).splitlines()[0] if str(error) else type(error).__name__}"
                ) from None

    def save_model(self, steps: int) -> None:
        """Save a checkpoint ``<model_path>/model-<steps>`` (the newest ``keep_checkpoints`` are kept)."""
        os.makedirs(self.model_path, exist_ok=True)
        self.write_step_count()
        self.checkpoint_store.save(int(steps))

    def export_model(self) -> None:
        """Write the network for Unity inference beside ``model_path`` (``<model_path>.nn``, see
        :mod:`mlagents.trainers.export`)."""
        self.write_step_count()
        for path in export.export_model(self.model, self.model_path):
            LOGGER.info("Exported %s file", path)
        # Tools that set weights by hand export them next: decisions then follow the exported file.
        self.weights_changed()
