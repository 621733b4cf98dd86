"""The TensorFlow 2 side shared by the trainable policies: :class:`TFPolicy`.

A TFPolicy owns a network (a :class:`~mlagents.trainers.models.LearningModel`), its optimizer, the
step counter ``global_step`` and the checkpoints of all three in ``<model_path>/``. Subclasses
(:class:`~mlagents.trainers.ppo.policy.PPOPolicy`) build the network and implement :meth:`evaluate`
and :meth:`update`.

Files written under ``model_path`` (``models/<run-id>-<n>/<brain>``, ``n`` the run's index):

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
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import tensorflow as tf

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.envs.policy import Policy
from mlagents.envs.timers import hierarchical_timer
from mlagents.trainers import export
from mlagents.trainers.agent_ids import agent_ids
from mlagents.trainers.buffer import MiniBatch, float_images
from mlagents.trainers.checkpoints import CheckpointStore, NoReadableCheckpoint
from mlagents.trainers.components.bc.module import BCModule
from mlagents.trainers.components.reward_signals.reward_signal_factory import create_reward_signal
from mlagents.trainers.exception import UnityPolicyException
from mlagents.trainers.fast_inference import NumpyNetwork, NumpyPolicyNetwork, unsupported_reason
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.layers import branch_bounds
from mlagents.trainers.models import EncoderType, LearningModel
from mlagents.trainers.settings import TRAINER_KINDS, ConfigSource, PolicySettings, RLSettings

if TYPE_CHECKING:
    from mlagents.trainers.components.reward_signals import RewardSignal

LOGGER = logging.getLogger("mlagents.trainers")

# UnityPolicyException is where v0.9 defined it, here, as well as in mlagents.trainers.exception.
__all__ = ["TFPolicy", "UnityPolicyException"]


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
    :param load: restore the newest checkpoint of ``model_path`` (also when the settings say
        ``load``); subclasses do it once their network is built.
    :ivar settings: the typed settings (of the subclass's ``settings_class``).
    :ivar load: whether the policy is restored from a checkpoint.
    :ivar model: the network; every subclass builds it in its constructor (before anything reads it).
    :ivar optimizer: the network's optimizer (None: not trained, nothing to checkpoint for it).
    """

    settings_class: ClassVar[type[PolicySettings]] = PolicySettings
    # The traced entry points every subclass builds (decisions, value estimates, updates).
    _inference_fn: FixedSignatureFunction
    _tf_value_fn: FixedSignatureFunction
    _update_fn: FixedSignatureFunction
    #: The pretraining module of :meth:`_create_learning_parts` (a policy whose network the module's
    #: loss does not fit names its own).
    pretraining_class: ClassVar[type[BCModule]] = BCModule
    #: The numpy copy of the network made by :meth:`_create_fast_network`.
    fast_network_class: ClassVar[type[NumpyNetwork]] = NumpyPolicyNetwork
    model: LearningModel

    #: The graph node names v0.9 exported when present (its public class attribute, kept for code
    #: that reads it); the writers of :mod:`mlagents.trainers.export` name their outputs themselves.
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
        self,
        seed: int,
        brain: BrainParameters,
        trainer_parameters: PolicySettings | Mapping[str, Any],
        load: bool = False,
    ) -> None:
        self.seed = int(seed)
        self.brain = brain
        # Errors in a dict of hyper-parameters name the trainer that reads these settings.
        trainer_class = TRAINER_KINDS[self.settings_class.default_trainer()].class_path
        self.settings = self.settings_class.coerce(
            trainer_parameters, ConfigSource(brain.brain_name, trainer_class=trainer_class)
        )
        self.load = bool(load) or self.settings.load
        self.trainer_parameters: dict[str, Any] = self.settings.to_dict()
        self.optimizer: tf.Module | None = None
        # Name -> the reward signals the policy learns from (none for a policy that learns otherwise).
        self.reward_signals: dict[str, RewardSignal] = {}
        # Behavioural cloning from demonstrations after each update (a ``pretraining`` section).
        self.bc_module: BCModule | None = None
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
        self._fast_network: NumpyNetwork | None = None
        self._use_numpy = False
        # True when learning: the normalizer folds in the observations of every decision.
        self.is_training = False
        # The decision functions are timed under the subclass's name (``PPOPolicy.numpy_inference``).
        self._timer_prefix = type(self).__name__

    # ------------------------------------------------------------------ construction

    def _network_arguments(self) -> dict[str, Any]:
        """The arguments the settings (:class:`~mlagents.trainers.settings.RLSettings`) give every
        reinforcement-learning network (``PPOModel``, ``SACModel``): learning rate, sizes, the
        normalizer, the memory, the seed, one value head per reward signal, the visual encoder."""
        settings = self.settings
        assert isinstance(settings, RLSettings)
        return {
            "lr": settings.learning_rate,
            "h_size": settings.hidden_units,
            "max_step": settings.max_steps,
            "normalize": self.normalize,
            "use_recurrent": self.use_recurrent,
            "num_layers": settings.num_layers,
            "m_size": self.m_size,
            "seed": self.seed,
            "stream_names": list(settings.reward_signals),
            "vis_encode_type": EncoderType(settings.vis_encode_type),
        }

    def _create_learning_parts(self, default_num_epoch: int) -> None:
        """Create what the settings (:class:`~mlagents.trainers.settings.RLSettings`) add to the
        network :attr:`model`: a reward signal per entry of ``reward_signals``, and with a
        ``pretraining`` section the pretraining module :attr:`bc_module` (a ``pretraining_class``:
        ``batch_size`` and ``num_epoch`` default to the policy's ``batch_size`` and
        ``default_num_epoch``)."""
        settings = self.settings
        assert isinstance(settings, RLSettings)
        self.reward_signals = {
            name: create_reward_signal(self, self.model, name, signal_settings)
            for name, signal_settings in settings.reward_signals.items()
        }
        if settings.pretraining is not None:
            self.bc_module = self.pretraining_class(
                self,
                settings.pretraining,
                policy_learning_rate=settings.learning_rate,
                default_batch_size=settings.batch_size,
                default_num_epoch=default_num_epoch,
                seed=self.seed,
            )

    def _create_fast_network(self) -> None:
        """Decide in numpy (a ``fast_network_class`` copy of the network) when the network allows it
        (:func:`~mlagents.trainers.fast_inference.unsupported_reason`), with TensorFlow otherwise."""
        name = type(self).__name__
        reason = unsupported_reason(self.model)
        if reason is None:
            self._fast_network = self.fast_network_class(self.model)
            LOGGER.debug("Brain %s decides in numpy (%s.numpy_inference).", self.brain.brain_name, name)
        else:
            LOGGER.debug(
                "Brain %s decides in TensorFlow (%s.tensorflow_inference): its network has %s.",
                self.brain.brain_name,
                name,
                reason,
            )
        self.set_fast_inference(self._fast_network is not None)

    def set_fast_inference(self, enabled: bool) -> None:
        """Decide and estimate values with the numpy copy of the network (``True``, when the network
        allows it) or with TensorFlow (``False``). Both give the same outputs; numpy is the default
        for vector-only feed-forward networks, where it is several times faster."""
        self._use_numpy = bool(enabled) and self._fast_network is not None
        # The value function of get_batched_value_estimates: feed -> name -> (n,) values.
        self._value_fn = self.numpy_values if self._use_numpy else self.tensorflow_values

    @property
    def inference_path(self) -> str:
        """``"numpy"`` or ``"tensorflow"``: how decisions and value estimates are computed."""
        return "numpy" if self._use_numpy else "tensorflow"

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

    def numpy_inference(self, feed: dict[str, np.ndarray], epsilon: np.ndarray | None) -> dict[str, Any]:
        """The network's decision outputs computed in numpy (the subclass's ``evaluate`` reads them);
        while training, the normalizer then folds the observations in, like the TensorFlow inference."""
        with hierarchical_timer(f"{self._timer_prefix}.numpy_inference"):
            network = self._fast_network
            assert network is not None
            vector = feed["vector_observation"]
            out = network.inference(vector, feed.get("action_masks"), epsilon)
            if self.is_training:
                network.update_normalizer(vector)
            return out

    def tensorflow_inference(self, feed: dict[str, np.ndarray], epsilon: np.ndarray | None) -> dict[str, Any]:
        """The network's decision outputs from the TensorFlow graph (``_inference_fn`` of the
        observation feed, and of the noise unless None), as numpy arrays."""
        with hierarchical_timer(f"{self._timer_prefix}.tensorflow_inference"):
            out = self._inference_fn(feed) if epsilon is None else self._inference_fn(feed, epsilon)
            if self.is_training and self.model.normalizer is not None:
                self.weights_changed()  # the graph updated the normalizer
            return {
                key: {name: v.numpy() for name, v in value.items()}
                if isinstance(value, dict)
                else value.numpy()
                for key, value in out.items()
            }

    def numpy_values(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Value estimate (n,) of each reward signal, computed in numpy."""
        with hierarchical_timer(f"{self._timer_prefix}.numpy_values"):
            network = self._fast_network
            assert network is not None
            return network.values(feed["vector_observation"])

    def tensorflow_values(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Value estimate (n,) of each reward signal from the TensorFlow graph (``_tf_value_fn``)."""
        with hierarchical_timer(f"{self._timer_prefix}.tensorflow_values"):
            return {name: value.numpy() for name, value in self._tf_value_fn(feed).items()}

    def get_value_estimates(self, brain_info: BrainInfo, idx: int, done: bool) -> dict[str, float]:
        """Value estimate of each head for agent ``idx`` of ``brain_info`` (no normalizer update).

        :param done: the episode ended for good: heads of signals that use terminal states give 0.
        """
        values = self.get_batched_value_estimates([(brain_info, idx)], [done])
        return {name: float(value[0]) for name, value in values.items()}

    def get_batched_value_estimates(
        self, rows: Sequence[tuple[BrainInfo, int]], dones: Sequence[bool]
    ) -> dict[str, np.ndarray]:
        """:meth:`get_value_estimates` for several agents at once, in one network call (timed: the
        trainer's bootstrap values show apart from its Python bookkeeping in the timer tree).

        When every episode ended for good and every signal uses terminal states, all values are
        0 and the network is not called.

        :param rows: (brain_info, agent index) per agent.
        :param dones: per agent, whether its episode ended for good.
        :returns: name -> float32 (len(rows),).
        """
        with hierarchical_timer(f"{self._timer_prefix}.get_batched_value_estimates"):
            return self._batched_value_estimates(rows, dones)

    def _batched_value_estimates(
        self, rows: Sequence[tuple[BrainInfo, int]], dones: Sequence[bool]
    ) -> dict[str, np.ndarray]:
        done_mask = np.asarray(dones, dtype=bool).reshape(-1)
        if done_mask.all() and all(signal.use_terminal_states for signal in self.reward_signals.values()):
            return {name: np.zeros(len(rows), dtype=np.float32) for name in self.reward_signals}
        feeds: list[dict[str, np.ndarray]] = []
        groups: dict[int, tuple[BrainInfo, list[int]]] = {}
        for info, idx in rows:
            groups.setdefault(id(info), (info, []))[1].append(idx)
        for info, indices in groups.values():
            feeds.append(self.observation_feed(info, indices))
        feed = (
            feeds[0]
            if len(feeds) == 1
            else {key: np.concatenate([f[key] for f in feeds]) for key in feeds[0]}
        )
        values = {name: np.asarray(value) for name, value in self._value_fn(feed).items()}
        # Rows were grouped by BrainInfo; put them back in the caller's order.
        position: dict[tuple[int, int], int] = {}
        cursor = 0
        for info, indices in groups.values():
            for idx in indices:
                position[(id(info), idx)] = cursor
                cursor += 1
        gather = np.asarray([position[(id(info), idx)] for info, idx in rows], dtype=np.int64)
        result = {}
        for name, value in values.items():
            value = value[gather]
            if self.reward_signals[name].use_terminal_states:
                value = np.where(done_mask, 0.0, value).astype(np.float32)
            result[name] = value
        return result

    def tracing_counts(self) -> dict[str, int]:
        """How often each tf.function was traced (1 each after warm-up: no retracing per batch size)."""
        functions = {"inference": self._inference_fn, "value": self._tf_value_fn, "update": self._update_fn}
        return {name: fn.tracing_count() for name, fn in functions.items()}

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

    def update(self, mini_batch: MiniBatch, num_sequences: int) -> dict[str, float]:
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

    def mini_batch_observations(self, mini_batch: MiniBatch, n: int) -> dict[str, np.ndarray]:
        """The observation inputs of the ``n`` steps of a mini-batch: from the buffer fields
        ``vector_obs``, ``visual_obs{i}`` and, for a discrete recurrent network, ``prev_action``."""
        feed: dict[str, np.ndarray] = {}
        if self.use_vec_obs:
            feed["vector_observation"] = np.asarray(mini_batch["vector_obs"], dtype=np.float32).reshape(n, -1)
        for i in range(self.vis_obs_size):
            feed[f"visual_observation_{i}"] = float_images(mini_batch[f"visual_obs{i}"])
        if self.use_recurrent and not self.use_continuous_act:
            feed["prev_action"] = np.asarray(mini_batch["prev_action"]).reshape(n, -1).astype(np.int32)
        return feed

    def demonstration_feed(self, mini_batch: MiniBatch) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The network inputs of n demonstrated steps (the behavioural-cloning updates): their
        observations, every action allowed, zero memories at each sequence start; and the actions
        taken (continuous float32 (n, d), discrete int32 (n, n_branches))."""
        actions = np.asarray(mini_batch["actions"])
        n = len(actions)
        feed = self.mini_batch_observations(mini_batch, n)
        if not self.use_continuous_act:
            feed["action_masks"] = np.ones(
                (n, int(sum(self.brain.vector_action_space_size))), dtype=np.float32
            )
        if self.use_recurrent:
            feed["recurrent_in"] = np.zeros(
                (max(n // self.sequence_length, 1), self.m_size), dtype=np.float32
            )
        return feed, actions.reshape(n, -1).astype(np.float32 if self.use_continuous_act else np.int32)

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

    def _optimizers(self) -> dict[str, tf.Module]:
        """The network's optimizers by checkpoint name (their moments continue with ``--load``)."""
        return {} if self.optimizer is None else {"optimizer": self.optimizer}

    def _checkpoint_objects(self) -> dict[str, tf.Module]:
        # The reward signals' networks and optimizers are saved and restored with the policy's.
        objects: dict[str, tf.Module] = {"model": self.model, **self._optimizers()}
        for name, signal in self.reward_signals.items():
            for key, trackable in signal.checkpoint_objects().items():
                objects[f"{name}_{key}"] = trackable
        return objects

    def _optional_checkpoint_objects(self) -> dict[str, tf.Module]:
        """Objects saved with the checkpoint but restored only when the checkpoint holds them (a
        component added to a run that saved without it starts afresh): the pretraining optimizer's
        moments and step count."""
        if self.bc_module is None:
            return {}
        return {"pretraining_optimizer": self.bc_module.model.optimizer}

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

    def _load_graph(self) -> None:
        """Restore the newest readable checkpoint of ``model_path`` (weights, optimizer, normalizer,
        step); a newer one that cannot be read (truncated, partly written) is skipped with a warning.

        :raises UnityPolicyException: there is no checkpoint, none can be read, or it does not fit
            this network.
        """
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
