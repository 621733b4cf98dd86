"""An exported model acting for a brain: what Unity's inference engine does with a ``.nn`` file.

:class:`ModelPolicy` checks the model against the brain (format version, the model's API version,
observation sizes, cameras, action space, memory) and then decides for a
:class:`~..messages.DecisionBatch`: it feeds the observations, masks, previous actions and each
agent's memory, runs the layers and turns the ``action`` output into actions the way Unity does
(discrete: one sample per branch from the masked log-probabilities; continuous: the output for a
standard-normal ``epsilon``).
"""

from __future__ import annotations

import os

import numpy as np

from ..messages import DecisionBatch
from ..specs import BrainSpec
from .engine import Engine
from .nn_file import ModelFormatError, NNModel, read_nn

__all__ = ["MODEL_API_VERSION", "ModelMismatchError", "ModelPolicy", "load_model_policy"]

#: The ``version_number`` constant of models that ML-Agents 0.9 runs.
MODEL_API_VERSION = 2


class ModelMismatchError(ValueError):
    """The model does not fit the brain it was given to (one-line message saying what differs)."""


def _input_size(model: NNModel, name: str) -> int | None:
    shape = model.inputs.get(name)
    return None if shape is None else int(shape[-1])


def check_model(model: NNModel, brain: BrainSpec, source: str) -> None:
    """Refuse a model that was not trained for ``brain``.

    :raises ModelMismatchError: naming the first difference and the brain.
    """

    def refuse(what: str) -> ModelMismatchError:
        return ModelMismatchError(f"The model {source} does not fit brain '{brain.name}': {what}.")

    required = ("version_number", "is_continuous_control", "action_output_shape", "memory_size")
    missing = [name for name in required if model.constant(name) is None]
    if missing or "action" not in model.outputs:
        raise refuse(f"it has no {missing or ['action output']} (not an ML-Agents model)")
    version = int(model.constant("version_number") or 0)
    if version != MODEL_API_VERSION:
        raise refuse(f"its API version is {version}, this runtime runs version {MODEL_API_VERSION}")
    continuous = bool(model.constant("is_continuous_control"))
    brain_continuous = brain.vector_action_space_type == "continuous"
    if continuous != brain_continuous:
        kinds = {True: "continuous", False: "discrete"}
        raise refuse(
            f"the model has {kinds[continuous]} actions, the brain {kinds[brain_continuous]} actions"
        )
    outputs = int(model.constant("action_output_shape") or 0)
    expected = brain.action_length if brain_continuous else brain.mask_length
    if outputs != expected:
        raise refuse(f"the model outputs {outputs} action values, the brain's action space needs {expected}")
    if not brain_continuous:
        mask_size = _input_size(model, "action_masks")
        if mask_size is not None and mask_size != brain.mask_length:
            raise refuse(
                f"the model's action branches total {mask_size} actions, the brain's {brain.mask_length}"
            )
        prev = _input_size(model, "prev_action")
        if prev is not None and prev != brain.action_length:
            raise refuse(f"the model expects {prev} action branches, the brain has {brain.action_length}")
    vector = brain.vector_observation_size * max(1, brain.num_stacked_vector_observations)
    model_vector = _input_size(model, "vector_observation") or 0
    if model_vector != vector:
        raise refuse(
            f"the model reads {model_vector} vector observations, the brain sends {vector} "
            f"({brain.vector_observation_size} x {max(1, brain.num_stacked_vector_observations)} stacked)"
        )
    cameras = sorted(name for name in model.inputs if name.startswith("visual_observation_"))
    if len(cameras) != len(brain.camera_resolutions):
        raise refuse(
            f"the model reads {len(cameras)} visual observations, the brain has {len(brain.camera_resolutions)}"
        )
    for i, resolution in enumerate(brain.camera_resolutions):
        shape = model.inputs.get(f"visual_observation_{i}")
        want = [resolution.height, resolution.width, 1 if resolution.gray_scale else 3]
        if shape is None or list(shape[1:]) != want:
            raise refuse(
                f"visual observation {i} is {shape and shape[1:]} (H, W, C) in the model, {want} in the brain"
            )
    memory = int(model.constant("memory_size") or 0)
    memory_total = sum(int(m.shape[-1]) for m in model.memories)
    if memory_total != memory:
        raise refuse(f"its memories hold {memory_total} values but its memory_size is {memory}")


class ModelPolicy:
    """Decides for the agents of one brain with an exported model.

    :param model: the parsed model file.
    :param brain: the brain it acts for (checked, see :func:`check_model`).
    :param seed: seed of the action sampling.
    :param source: how messages name the model (its path).
    :raises ModelMismatchError: the model does not fit the brain.
    :raises ModelFormatError: the model uses layers this runtime does not execute.
    """

    def __init__(self, model: NNModel, brain: BrainSpec, seed: int = 0, source: str = "the model") -> None:
        check_model(model, brain, source)
        self.model = model
        self.brain = brain
        self.source = source
        self.engine = Engine(model)
        self.rng = np.random.default_rng(seed)
        self.continuous = brain.vector_action_space_type == "continuous"
        self.branch_sizes = [int(size) for size in brain.vector_action_size]
        self.memories = model.sorted_memories()
        self.memory_size = sum(int(m.shape[-1]) for m in self.memories)
        self.gray = [resolution.gray_scale for resolution in brain.camera_resolutions]
        self._agent_memory: dict[int, np.ndarray] = {}
        inputs = set(model.inputs)
        self._reads_vector = "vector_observation" in inputs
        self._reads_masks = "action_masks" in inputs
        self._reads_prev_action = "prev_action" in inputs
        self._reads_epsilon = "epsilon" in inputs

    def reset(self) -> None:
        """Forget every agent's memory."""
        self._agent_memory.clear()

    def feeds(self, batch: DecisionBatch) -> dict[str, np.ndarray]:
        """The model inputs (rank 4) for the agents of ``batch``, without memories and noise."""
        k = len(batch.agents)
        feeds: dict[str, np.ndarray] = {}
        if self._reads_vector:
            feeds["vector_observation"] = np.asarray(batch.vector_observations, np.float32).reshape(
                k, 1, 1, -1
            )
        for i, images in enumerate(batch.visual_observations):
            pixels = np.asarray(images, dtype=np.float32) * np.float32(1.0 / 255.0)
            if self.gray[i]:
                pixels = pixels.mean(axis=3, keepdims=True)
            feeds[f"visual_observation_{i}"] = pixels
        if self._reads_masks:
            if batch.action_masks is None:
                masks = np.ones((k, self.brain.mask_length), dtype=np.float32)
            else:
                masks = (~np.asarray(batch.action_masks, dtype=bool)).astype(np.float32)
            feeds["action_masks"] = masks.reshape(k, 1, 1, -1)
        if self._reads_prev_action:
            prev = np.asarray(batch.previous_vector_actions, np.float32)
            feeds["prev_action"] = prev.reshape(k, 1, 1, -1)
        return feeds

    def run(self, feeds: dict[str, np.ndarray], memory: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Run the model on ``feeds`` with the agents' memory vectors ``memory`` (k, memory_size)
        split over the model's memory inputs; returns every computed tensor."""
        if self.memories:
            k = next(iter(feeds.values())).shape[0]
            memory = np.zeros((k, self.memory_size), np.float32) if memory is None else memory
            offset = 0
            for item in self.memories:
                size = int(item.shape[-1])
                feeds[item.input_name] = memory[:, offset : offset + size].reshape(k, 1, 1, size)
                offset += size
        return self.engine.run(feeds)

    def memory_out(self, values: dict[str, np.ndarray]) -> np.ndarray:
        """The agents' next memory vectors (k, memory_size) from a run's tensors."""
        parts = [values[item.output_name] for item in self.memories]
        return np.concatenate([p.reshape(p.shape[0], -1) for p in parts], axis=1).astype(np.float32)

    def decide(self, batch: DecisionBatch) -> np.ndarray:
        """Actions float32 ``(k, action_length)`` for the agents of ``batch`` (k may be 0).

        Memories are kept per agent id and forgotten when an agent's episode ends.
        """
        k = len(batch.agents)
        if k == 0:
            return np.zeros((0, self.brain.action_length), dtype=np.float32)
        feeds = self.feeds(batch)
        if self._reads_epsilon:
            epsilon = self.rng.standard_normal((k, self.brain.action_length)).astype(np.float32)
            feeds["epsilon"] = epsilon.reshape(k, 1, 1, -1)
        ids = [int(agent) for agent in batch.agents]
        memory = None
        if self.memories:
            empty = np.zeros(self.memory_size, dtype=np.float32)
            memory = np.stack([self._agent_memory.get(agent, empty) for agent in ids])
        values = self.run(feeds, memory)
        if self.memories:
            new_memory = self.memory_out(values)
            for row, agent in enumerate(ids):
                if batch.local_done[row]:
                    self._agent_memory.pop(agent, None)
                else:
                    self._agent_memory[agent] = new_memory[row]
        action = values["action"].reshape(k, -1)
        if self.continuous:
            return action.astype(np.float32)
        return self._sample(action)

    def _sample(self, log_probs: np.ndarray) -> np.ndarray:
        """One action per branch drawn from the branch's (log) probabilities."""
        k = log_probs.shape[0]
        actions = np.zeros((k, len(self.branch_sizes)), dtype=np.float32)
        start = 0
        for b, size in enumerate(self.branch_sizes):
            branch = log_probs[:, start : start + size].astype(np.float64)
            probs = np.exp(branch - branch.max(axis=1, keepdims=True))
            cumulative = np.cumsum(probs, axis=1)
            draws = self.rng.random((k, 1)) * cumulative[:, -1:]
            actions[:, b] = np.minimum((cumulative < draws).sum(axis=1), size - 1)
            start += size
        return actions


def load_model_policy(path: str, brain: BrainSpec, seed: int = 0) -> ModelPolicy:
    """The :class:`ModelPolicy` of the ``.nn`` file at ``path`` for ``brain``.

    :raises FileNotFoundError: there is no file at ``path`` (one-line message).
    :raises ModelFormatError: the file is no Barracuda model of the supported version.
    :raises ModelMismatchError: the model was trained for another brain.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"There is no model file {path} (the .nn file that mlagents-learn exports).")
    if not path.endswith(".nn"):
        raise ModelFormatError(f"{path} is not a .nn file; give the .nn model that mlagents-learn exports.")
    return ModelPolicy(read_nn(path), brain, seed=seed, source=path)
