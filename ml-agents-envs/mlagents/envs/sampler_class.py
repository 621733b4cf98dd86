"""Random reset parameters for generalization training (``mlagents-learn --sampler``).

A sampler file maps reset-parameter names to a sampler description, e.g.::

    mass:
        sampler-type: "uniform"
        min_value: 0.5
        max_value: 10
    gravity:
        sampler-type: "multirange_uniform"
        intervals: [[7, 10], [15, 20]]

:class:`SamplerManager` builds one :class:`Sampler` per parameter through :class:`SamplerFactory`
and draws a new value for every parameter with :meth:`SamplerManager.sample_all`.
Every sampler owns its own ``numpy.random.RandomState(seed)`` (as in ML-Agents 0.9.1+), so the same
seed gives the same sequence of values; note that, as in 0.9.1, samplers built with the same seed
start from the same random stream.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from mlagents.envs.exception import SamplerException


class Sampler(ABC):
    """Draws values for one reset parameter."""

    @abstractmethod
    def sample_parameter(self) -> float:
        """Return a new value."""


class UniformSampler(Sampler):
    """Uniform in ``[min_value, max_value)``.

    :param min_value: lower bound (included).
    :param max_value: upper bound (excluded).
    :param seed: seed of this sampler's random stream (None: unpredictable).
    """

    def __init__(self, min_value: float, max_value: float, seed: int | None = None, **kwargs: Any) -> None:
        self.min_value = min_value
        self.max_value = max_value
        self.random_state = np.random.RandomState(seed)

    def sample_parameter(self) -> float:
        return self.random_state.uniform(self.min_value, self.max_value)


class MultiRangeUniformSampler(Sampler):
    """Uniform over a union of intervals: picks interval ``[a, b)`` with probability proportional to
    ``|b - a|``, then a uniform value inside it.

    :param intervals: list of ``[a, b]`` pairs.
    :param seed: seed of this sampler's random stream (None: unpredictable).
    """

    def __init__(self, intervals: Sequence[Sequence[float]], seed: int | None = None, **kwargs: Any) -> None:
        self.intervals = intervals
        self.interval_lengths: list[float] = [abs(interval[1] - interval[0]) for interval in intervals]
        self.cum_interval_length = sum(self.interval_lengths)
        self.random_state = np.random.RandomState(seed)

    def sample_parameter(self) -> float:
        probabilities = [length / self.cum_interval_length for length in self.interval_lengths]
        low, high = self.intervals[self.random_state.choice(len(self.intervals), p=probabilities)]
        return self.random_state.uniform(low, high)


class GaussianSampler(Sampler):
    """Normal distribution ``N(mean, st_dev)``.

    :param mean: mean.
    :param st_dev: standard deviation.
    :param seed: seed of this sampler's random stream (None: unpredictable).
    """

    def __init__(self, mean: float, st_dev: float, seed: int | None = None, **kwargs: Any) -> None:
        self.mean = mean
        self.st_dev = st_dev
        self.random_state = np.random.RandomState(seed)

    def sample_parameter(self) -> float:
        return self.random_state.normal(self.mean, self.st_dev)


class SamplerFactory:
    """Maps the ``sampler-type`` names of a sampler file to :class:`Sampler` classes."""

    NAME_TO_CLASS: ClassVar[dict[str, type[Sampler]]] = {
        "uniform": UniformSampler,
        "gaussian": GaussianSampler,
        "multirange_uniform": MultiRangeUniformSampler,
    }

    @staticmethod
    def register_sampler(name: str, sampler_cls: type[Sampler]) -> None:
        """Make ``sampler-type: name`` build ``sampler_cls`` (its constructor gets the file's keys and ``seed``)."""
        SamplerFactory.NAME_TO_CLASS[name] = sampler_cls

    @staticmethod
    def init_sampler_class(name: str, params: dict[str, Any], seed: int | None = None) -> Sampler:
        """Build the sampler registered as ``name`` with keyword arguments ``params`` plus ``seed``.

        :raises SamplerException: ``name`` is not registered, or ``params`` do not fit the class.
        """
        if name not in SamplerFactory.NAME_TO_CLASS:
            raise SamplerException(
                name + " sampler is not registered in the SamplerFactory."
                " Use the register_sample method to register the string"
                " associated to your sampler in the SamplerFactory."
            )
        sampler_cls = SamplerFactory.NAME_TO_CLASS[name]
        params["seed"] = seed
        try:
            return sampler_cls(**params)
        except TypeError as error:
            raise SamplerException(
                "The sampler class associated to the " + name + " key in the factory "
                "was not provided the required arguments. Please ensure that the sampler "
                "config file consists of the appropriate keys for this sampler class."
            ) from error


class SamplerManager:
    """One sampler per reset parameter, built from the (already parsed) sampler file.

    :param reset_param_dict: parameter name -> dict with ``"sampler-type"`` and that sampler's
        arguments (without the file's ``resampling-interval`` key); None or empty: no samplers.
        The dict is not modified.
    :param seed: seed given to every sampler.
    :raises SamplerException: a parameter has no ``sampler-type``, an unknown one, or wrong arguments.
    """

    def __init__(self, reset_param_dict: dict[str, dict[str, Any]] | None, seed: int | None = None) -> None:
        self.reset_param_dict = reset_param_dict if reset_param_dict else {}
        if not isinstance(self.reset_param_dict, dict):
            raise SamplerException(
                "The sampler configuration must map reset-parameter names to sampler descriptions, "
                f"got {type(self.reset_param_dict).__name__}."
            )
        self.samplers: dict[str, Sampler] = {}
        for param_name, cur_param_dict in self.reset_param_dict.items():
            if not isinstance(cur_param_dict, dict) or "sampler-type" not in cur_param_dict:
                raise SamplerException(
                    f"'sampler_type' argument hasn't been supplied for the {param_name} parameter"
                )
            sampler_args = dict(cur_param_dict)
            sampler_name = sampler_args.pop("sampler-type")
            self.samplers[param_name] = SamplerFactory.init_sampler_class(sampler_name, sampler_args, seed)

    def is_empty(self) -> bool:
        """True when no parameter is sampled."""
        return not self.samplers

    def sample_all(self) -> dict[str, float]:
        """Draw a new value for every parameter: ``{parameter name: value}``."""
        return {param_name: sampler.sample_parameter() for param_name, sampler in self.samplers.items()}
