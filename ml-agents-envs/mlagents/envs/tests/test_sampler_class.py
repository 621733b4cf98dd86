import numpy as np
import pytest

from mlagents.envs.exception import SamplerException
from mlagents.envs.sampler_class import (
    GaussianSampler,
    MultiRangeUniformSampler,
    Sampler,
    SamplerFactory,
    SamplerManager,
    UniformSampler,
)


def sampler_config():
    return {
        "mass": {"sampler-type": "uniform", "min_value": 5, "max_value": 10},
        "gravity": {"sampler-type": "multirange_uniform", "intervals": [[8, 11], [15, 20]]},
        "scale": {"sampler-type": "gaussian", "mean": 1.0, "st_dev": 0.5},
    }


def test_manager_builds_one_sampler_per_parameter():
    config = sampler_config()
    manager = SamplerManager(config, seed=3)
    assert not manager.is_empty()
    assert isinstance(manager.samplers["mass"], UniformSampler)
    assert isinstance(manager.samplers["gravity"], MultiRangeUniformSampler)
    assert isinstance(manager.samplers["scale"], GaussianSampler)
    assert config == sampler_config()  # the caller's dict is left alone
    for _ in range(200):
        values = manager.sample_all()
        assert set(values) == {"mass", "gravity", "scale"}
        assert 5 <= values["mass"] < 10
        assert 8 <= values["gravity"] < 11 or 15 <= values["gravity"] < 20
        assert isinstance(values["scale"], float)


def test_same_seed_same_values_different_seed_different_values():
    def draws(seed):
        manager = SamplerManager(sampler_config(), seed=seed)
        return [manager.sample_all() for _ in range(20)]

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)


def test_samplers_own_their_random_state():
    sampler = UniformSampler(0.0, 1.0, seed=11)
    first = [sampler.sample_parameter() for _ in range(5)]
    np.random.seed(0)
    np.random.random(100)  # the global numpy RNG does not interfere
    again = UniformSampler(0.0, 1.0, seed=11)
    assert [again.sample_parameter() for _ in range(5)] == first


def test_distributions():
    gaussian = GaussianSampler(mean=10.0, st_dev=2.0, seed=1)
    values = np.array([gaussian.sample_parameter() for _ in range(4000)])
    assert values.mean() == pytest.approx(10.0, abs=0.15)
    assert values.std() == pytest.approx(2.0, abs=0.15)
    # interval probability proportional to its length: [0,1) is 1/4 of the total length
    multirange = MultiRangeUniformSampler([[0, 1], [10, 13]], seed=2)
    values = np.array([multirange.sample_parameter() for _ in range(4000)])
    assert np.all(((values >= 0) & (values < 1)) | ((values >= 10) & (values < 13)))
    assert np.mean(values < 1) == pytest.approx(0.25, abs=0.03)


def test_empty_manager():
    for empty in (None, {}):
        manager = SamplerManager(empty)
        assert manager.is_empty()
        assert manager.sample_all() == {}


@pytest.mark.parametrize(
    "parameter, message",
    [
        (
            {"min_value": 1, "max_value": 2},
            "'sampler_type' argument hasn't been supplied for the mass parameter",
        ),
        (
            {"sampler-type": "triangular", "low": 1},
            "triangular sampler is not registered in the SamplerFactory. Use the register_sample method to "
            "register the string associated to your sampler in the SamplerFactory.",
        ),
        (
            {"sampler-type": "uniform", "min_value": 1},
            "The sampler class associated to the uniform key in the factory was not provided the required "
            "arguments. Please ensure that the sampler config file consists of the appropriate keys for this "
            "sampler class.",
        ),
    ],
    ids=["missing sampler type", "unknown sampler type", "wrong arguments"],
)
def test_a_wrong_sampler_entry_is_refused_with_its_0_9_message(parameter, message):
    with pytest.raises(SamplerException) as error:
        SamplerManager({"mass": parameter})
    assert str(error.value) == message


def test_register_custom_sampler():
    class ConstantSampler(Sampler):
        def __init__(self, value, seed=None, **kwargs):
            self.value = value
            self.seed = seed

        def sample_parameter(self):
            return self.value

    SamplerFactory.register_sampler("constant", ConstantSampler)
    try:
        manager = SamplerManager({"mass": {"sampler-type": "constant", "value": 4.5}}, seed=9)
        assert manager.sample_all() == {"mass": 4.5}
        assert manager.samplers["mass"].seed == 9
    finally:
        del SamplerFactory.NAME_TO_CLASS["constant"]
