"""Decisions and value estimates of a small policy network in numpy: :class:`NumpyPolicyNetwork`.

The policy networks of most example brains are a few dense layers over a short vector observation.
Running them through TensorFlow costs tens of microseconds per op and per call, many times the
arithmetic; once per environment step that is a large part of a training loop. This module repeats the
inference part of :class:`~mlagents.trainers.models.LearningModel` with numpy over a copy of the
model's current weights, giving the same outputs as the TensorFlow graph (up to float32 rounding):

* normalization ``clip((x - mean) / sqrt(variance / (steps + 1)), -5, 5)`` and the running update of
  the statistics with the batch mean (staged in the model's normalizer, which writes them into its
  variables before checkpoints, exports or any TensorFlow function read them: no TensorFlow op per
  decision);
* the swish dense encoders of each observation stream;
* discrete control: the concatenated branch logits, the masked renormalized log-probabilities
  ``log(p / sum(p) + 1e-7)`` with ``p = (softmax + 1e-7) * mask`` and the summed branch entropies;
* continuous control: ``mu``, ``action_pre = mu + sqrt(exp(log_sigma_squared)) * epsilon``, the action
  ``clip(action_pre, -3, 3) / 3``, per-dimension log-densities and the entropy;
* one value per reward signal and their mean.

Visual observations and recurrent networks are not covered (:func:`unsupported_reason`): the policy
uses TensorFlow for them. The copy of the weights must be refreshed (:meth:`NumpyNetwork.sync`)
whenever the model's variables change outside this class: the policy does it lazily after updates,
checkpoint loads and exports. A refresh reads every variable in one traced TensorFlow call (read one
by one, the variables of a small network cost more than a decision).

:class:`NumpyNetwork` holds what every numpy copy shares (the weights' re-read, the normalizer, the
value heads); :class:`NumpyPolicyNetwork` is PPO's network, the SAC policy has its own subclass.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.envs.blas_threads import use_single_blas_thread
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.layers import MASK_EPSILON, branch_bounds
from mlagents.trainers.models import ACTION_CLIP, LearningModel

__all__ = ["NumpyNetwork", "NumpyPolicyNetwork", "unsupported_reason"]

LOGGER = logging.getLogger("mlagents.trainers")

_HALF_LOG_2PI = np.float32(0.5 * math.log(2.0 * math.pi))
_LOG_2PI_E = np.float32(math.log(2.0 * math.pi * math.e))
_EPSILON = np.float32(MASK_EPSILON)
_ACTION_CLIP = np.float32(ACTION_CLIP)


def unsupported_reason(model: LearningModel) -> str | None:
    """Why ``model`` cannot run in numpy (None: it can)."""
    if model.vis_obs_shapes:
        return "visual observations (convolutions are faster in TensorFlow)"
    if model.use_recurrent:
        return "a recurrent network (LSTM)"
    if model.vec_obs_size == 0:
        return "no vector observation"
    return None


def _swish(x: np.ndarray) -> np.ndarray:
    # x * sigmoid(x) with sigmoid(x) = (1 + tanh(x / 2)) / 2: no overflow for large |x|.
    return x * (np.float32(0.5) + np.float32(0.5) * np.tanh(np.float32(0.5) * x))


class _Stream:
    """The dense layers of one stream: (kernel, bias) pairs, swish after each."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.layers = layers

    def __call__(self, x: np.ndarray) -> np.ndarray:
        for kernel, bias in self.layers:
            x = _swish(x @ kernel + bias)
        return x


#: The variables a numpy copy reads: name -> variables, in an order its ``_load`` knows.
Weights = dict[str, list[tf.Variable]]


def layer_variables(layers: Sequence[Any]) -> list[tf.Variable]:
    """kernel, bias, kernel, bias, ... of dense layers (:func:`stream_of` pairs them up again)."""
    return [variable for layer in layers for variable in (layer.kernel, layer.bias)]


def stream_of(values: list[np.ndarray]) -> _Stream:
    """The dense stack of the arrays read for :func:`layer_variables`."""
    return _Stream([(values[k], values[k + 1]) for k in range(0, len(values), 2)])


def head_variables(heads: Sequence[Any]) -> list[tf.Variable]:
    """The kernels of dense heads, then the biases of those that have one (see :func:`side_by_side`)."""
    return [head.kernel for head in heads] + [head.bias for head in heads if head.bias is not None]


def side_by_side(values: list[np.ndarray], heads: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernels (and biases) read for :func:`head_variables` of ``heads`` heads concatenated:
    one matmul gives every head's output."""
    kernels, biases = values[:heads], values[heads:]
    bias = np.concatenate(biases) if biases else np.zeros(0, np.float32)
    return np.concatenate(kernels, axis=1), bias


class NumpyNetwork:
    """What the numpy copies of the networks share: the weights re-read from the model in one
    TensorFlow call, the normalizer (applied, and updated as :class:`~mlagents.trainers.layers.Normalizer`
    does), the value heads.

    A subclass names the variables it copies (:meth:`_weights`, read in one traced call by
    :meth:`sync`) and turns the arrays read back into its layers (:meth:`_load`).

    :param model: the network (:func:`unsupported_reason` must be None for it).
    :raises ValueError: the model has visual observations, an LSTM or no vector observation.
    :ivar synced: False until :meth:`sync` ran (and after :meth:`invalidate`).
    """

    def __init__(self, model: LearningModel) -> None:
        reason = unsupported_reason(model)
        if reason is not None:
            raise ValueError(f"The numpy forward pass does not support {reason}: use the TensorFlow path.")
        self.model = model
        self.is_continuous = model.is_continuous
        self.act_size = list(model.act_size)
        self.stream_names = list(model.stream_names)
        self.synced = False
        # The networks here are small: BLAS threads would only wait for the environments.
        use_single_blas_thread()
        self._value_kernel = np.zeros((0, 0), np.float32)
        self._value_bias = np.zeros(0, np.float32)
        self._mean: np.ndarray | None = None
        self._variance = np.zeros(0, np.float32)
        self._steps = 0
        self._std = np.zeros(0, np.float32)
        self._branches = branch_bounds(self.act_size)  # of the discrete heads
        weights = self._weights()
        normalizer = model.normalizer

        def read() -> dict[str, list[tf.Tensor]]:
            values = {
                name: [variable.read_value() for variable in variables] for name, variables in weights.items()
            }
            if normalizer is not None:
                # Read through the normalizer's attributes while tracing: the wrapper then writes
                # statistics staged by the numpy decisions into the variables before every call.
                statistics = (
                    normalizer.running_mean,
                    normalizer.running_variance,
                    normalizer.normalization_steps,
                )
                values["normalizer"] = [variable.read_value() for variable in statistics]
            return values

        # One call reads every variable (one TensorFlow op per variable read eagerly costs more than
        # a whole numpy decision; the copy is re-read after every update).
        self._read_fn = FixedSignatureFunction(read, [])

    def _weights(self) -> Weights:
        """The variables to copy, by name (each name's list in the order :meth:`_load` reads)."""
        raise NotImplementedError

    def _load(self, values: dict[str, list[np.ndarray]]) -> None:
        """Take the arrays read for :meth:`_weights` (same names, same order)."""
        raise NotImplementedError

    def values(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Value estimate (n,) of each reward signal (no normalizer update)."""
        raise NotImplementedError

    def inference(
        self, vector: np.ndarray, action_masks: np.ndarray | None = None, epsilon: np.ndarray | None = None
    ) -> dict[str, Any]:
        """The decision outputs for n agents (vector observations not normalized; action masks for
        discrete control, standard normal noise for continuous control)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ weights

    def invalidate(self) -> None:
        """Mark the copy outdated: the next decision re-reads the model's variables first."""
        self.synced = False

    def sync(self) -> None:
        """Copy the model's current weights and normalizer statistics (one TensorFlow call)."""
        values = {name: [np.array(tensor) for tensor in tensors] for name, tensors in self._read_fn().items()}
        statistics = values.pop("normalizer", None)
        if statistics is None:
            self._mean = None
        else:
            mean, variance, steps = statistics
            self._mean = mean
            self._variance = variance
            self._steps = int(steps)
            self._refresh_std()
        self._load(values)
        self.synced = True

    def _refresh_std(self) -> None:
        self._std = np.sqrt(self._variance / (np.float32(self._steps) + np.float32(1.0)))

    # ------------------------------------------------------------------ normalizer

    def normalized(self, vector: np.ndarray) -> np.ndarray:
        """The vector observations as the network sees them (normalized when the model normalizes)."""
        if self._mean is None:
            return vector
        return np.clip((vector - self._mean) / self._std, np.float32(-5.0), np.float32(5.0))

    def update_normalizer(self, vector: np.ndarray) -> None:
        """Fold the batch mean of ``vector`` (n, size) into the running statistics (the update of
        :class:`~mlagents.trainers.layers.Normalizer`), here and staged for the model's variables."""
        normalizer = self.model.normalizer
        if not self.synced:
            self.sync()
        if self._mean is None or normalizer is None or len(vector) == 0:
            return
        batch_mean = np.mean(vector, axis=0, dtype=np.float32)
        steps = np.float32(self._steps) + np.float32(1.0)
        mean = self._mean
        new_mean = mean + (batch_mean - mean) / steps
        self._variance = self._variance + (batch_mean - new_mean) * (batch_mean - mean)
        self._mean = new_mean
        self._steps += 1
        self._refresh_std()
        # Staged, not assigned: the normalizer writes them into its variables before anything reads
        # them (checkpoints, exports, the update step, GAIL's discriminator, a re-sync of this copy).
        normalizer.stage(new_mean, self._variance, self._steps)

    # ------------------------------------------------------------------ value heads

    def _values(self, hidden: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Each signal's value (n,) and their mean, from the value stream's last hidden layer."""
        heads = hidden @ self._value_kernel + self._value_bias
        names = self.stream_names
        if len(names) == 1:  # the mean of one head is the head (x / 1 == x in float32)
            return {names[0]: heads[:, 0].copy()}, heads[:, 0].copy()
        values = {name: heads[:, k].copy() for k, name in enumerate(names)}
        value = heads.sum(axis=1, dtype=np.float32) / np.float32(len(names))
        return values, value


class NumpyPolicyNetwork(NumpyNetwork):
    """The inference of a feed-forward, vector-only :class:`LearningModel` in numpy.

    :param model: the network (:func:`unsupported_reason` must be None for it).
    :raises ValueError: the model has visual observations, an LSTM or no vector observation.
    :ivar synced: False until :meth:`sync` ran (and after :meth:`invalidate`).
    """

    def __init__(self, model: LearningModel) -> None:
        self._streams: list[_Stream] = []
        self._policy_kernel = np.zeros((0, 0), np.float32)
        self._policy_bias: np.ndarray | None = None
        self._log_sigma_squared = np.zeros(0, np.float32)
        self._sigma = np.zeros(0, np.float32)
        self._sigma_squared = np.zeros(0, np.float32)
        self._entropy = np.float32(0.0)
        super().__init__(model)

    # ------------------------------------------------------------------ weights

    def _weights(self) -> Weights:
        model = self.model
        weights: Weights = {}
        for k, encoder in enumerate(model.vector_encoders):
            assert encoder is not None  # unsupported_reason: vector-only networks
            weights[f"stream_{k}"] = layer_variables(encoder.layers)
        if self.is_continuous:
            weights["mu"] = [model.mu.kernel, model.mu.bias]
            weights["log_sigma_squared"] = [model.log_sigma_squared]
        else:
            # The branches' bias-free layers side by side: one matmul gives the concatenated logits.
            weights["branches"] = [branch.kernel for branch in model.policy_branches]
        weights["value_heads"] = head_variables([model.value_heads[name] for name in self.stream_names])
        return weights

    def _load(self, values: dict[str, list[np.ndarray]]) -> None:
        self._streams = [stream_of(values[f"stream_{k}"]) for k in range(len(self.model.vector_encoders))]
        if self.is_continuous:
            self._policy_kernel, self._policy_bias = values["mu"]
            (log_sigma_squared,) = values["log_sigma_squared"]
            self._log_sigma_squared = log_sigma_squared
            self._sigma_squared = np.exp(log_sigma_squared)
            self._sigma = np.sqrt(self._sigma_squared)
            self._entropy = np.float32(0.5) * np.mean(_LOG_2PI_E + log_sigma_squared, dtype=np.float32)
        else:
            self._policy_kernel = np.concatenate(values["branches"], axis=1)
            self._policy_bias = None
        self._value_kernel, self._value_bias = side_by_side(values["value_heads"], len(self.stream_names))

    # ------------------------------------------------------------------ forward pass

    def values(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Value estimate (n,) of each reward signal (no normalizer update)."""
        if not self.synced:
            self.sync()
        x = self.normalized(np.asarray(vector, dtype=np.float32))
        # Continuous control: the value stream is the second one.
        return self._values(self._streams[-1](x))[0]

    def inference(
        self, vector: np.ndarray, action_masks: np.ndarray | None = None, epsilon: np.ndarray | None = None
    ) -> dict[str, Any]:
        """The decision outputs of the TensorFlow inference for n agents.

        :param vector: (n, vec_size) float32 observations (not normalized).
        :param action_masks: discrete control: (n, sum(branches)), 1 allowed / 0 masked.
        :param epsilon: continuous control: (n, d) standard normal noise.
        :returns: ``action_probs``, ``value_heads``, ``value``, ``entropy`` and, for discrete control,
            ``masked_log_probs``, for continuous control ``action`` and ``pre_action``.
        """
        if not self.synced:
            self.sync()
        x = self.normalized(np.asarray(vector, dtype=np.float32))
        return self._inference(x, action_masks, epsilon)

    def _inference(
        self, x: np.ndarray, action_masks: np.ndarray | None, epsilon: np.ndarray | None
    ) -> dict[str, Any]:
        if self.is_continuous:
            assert epsilon is not None and self._policy_bias is not None
            hidden_policy = self._streams[0](x)
            hidden_value = self._streams[1](x)
            mu = hidden_policy @ self._policy_kernel + self._policy_bias
            action_pre = mu + self._sigma * epsilon
            action_probs = (
                np.float32(-0.5) * np.square(action_pre - mu) / self._sigma_squared
                - _HALF_LOG_2PI
                - np.float32(0.5) * self._log_sigma_squared
            )
            values, value = self._values(hidden_value)
            return {
                "action_probs": action_probs,
                "value_heads": values,
                "value": value,
                "entropy": np.full(len(x), self._entropy, dtype=np.float32),
                "action": np.clip(action_pre, -_ACTION_CLIP, _ACTION_CLIP) / _ACTION_CLIP,
                "pre_action": action_pre,
            }
        assert action_masks is not None
        hidden = self._streams[0](x)
        logits = hidden @ self._policy_kernel
        masks = np.asarray(action_masks, dtype=np.float32)
        single = len(self._branches) == 1  # one branch (most examples): no slicing, no concatenation
        parts: list[np.ndarray] = []
        entropy: np.ndarray | None = None
        for start, end in self._branches:
            branch = logits if single else logits[:, start:end]
            shifted = branch - branch.max(axis=1, keepdims=True)
            exp = np.exp(shifted)
            total = exp.sum(axis=1, keepdims=True)
            probs = exp / total
            log_softmax = shifted - np.log(total)
            # The branch entropies summed in branch order (0 - a == -a exactly in float32).
            branch_entropy = (probs * log_softmax).sum(axis=1)
            if entropy is None:
                entropy = -branch_entropy
            else:
                entropy -= branch_entropy
            kept = (probs + _EPSILON) * (masks if single else masks[:, start:end])
            kept_total = kept.sum(axis=1, keepdims=True)
            # A branch whose actions are all masked gives NaN, as in the TensorFlow graph (quietly);
            # the error-state context is entered only then (it costs more than the rest of a row).
            with nullcontext() if kept_total.all() else np.errstate(invalid="ignore"):
                parts.append(np.log(kept / kept_total + _EPSILON))
        assert entropy is not None
        masked = parts[0] if single else np.concatenate(parts, axis=1)
        values, value = self._values(hidden)
        return {
            "action_probs": logits,
            "value_heads": values,
            "value": value,
            "entropy": entropy,
            "masked_log_probs": masked,
        }
