"""Calling a ``tf.function`` with numpy inputs at the cost of running it: :class:`FixedSignatureFunction`.

A leaf of the trainers (TensorFlow and the normalizers' read recording only): the policies, the
reward signals and the pretraining module wrap their TensorFlow entry points with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from mlagents.trainers.layers import recording_normalizer_reads

__all__ = ["FixedSignatureFunction", "Signature"]


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
