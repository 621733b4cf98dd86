"""What every wrapper class does the same way, because it starts, restarts and ends its build(s)
through one ``Builds`` and reads its reset options through one ``reset_config``: the launch
keywords, closing, and the reset-parameter rule."""

import importlib
import logging
from typing import Any

import pytest

from gym_unity.envs import UnityGymException
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import UnityEnvironmentException

ALL = ["UnityEnv", "UnityGymnasiumEnv", "UnityVecEnv", "UnityParallelEnv"]
#: The classes with reset options (UnityEnv's classic ``reset()`` takes none).
WITH_OPTIONS = ALL[1:]


def wrapper(name: str) -> type:
    """The class ``name`` of ``gym_unity.envs`` (the test is skipped when its extra is missing)."""
    try:
        return getattr(importlib.import_module("gym_unity.envs"), name)
    except ImportError as missing:
        pytest.skip(f"{name} needs an optional package: {missing}")


def environment_of(env: Any) -> UnityEnvironment:
    """The (first) wrapped ``UnityEnvironment``."""
    environments = getattr(env, "unity_environments", None)
    return environments[0] if environments else env.unity_environment


def reset(env: Any, seed: int | None = None, options: Any = None) -> Any:
    """``reset(seed=, options=)`` as each API takes them (``UnityVecEnv``: ``seed()`` and
    ``set_options()`` before ``reset()``)."""
    if not hasattr(env, "set_options"):
        return env.reset(seed=seed, options=options)
    if seed is not None:
        env.seed(seed)
    if options is not None:
        env.set_options(options)
    return env.reset()


@pytest.mark.parametrize("name", ALL)
def test_an_unknown_launch_keyword_is_a_type_error(scene_build, name):
    with pytest.raises(TypeError, match=rf"{name}\(\) got an unexpected keyword argument 'port'"):
        wrapper(name)(scene_build("Branched"), port=5005)


@pytest.mark.parametrize("name", ALL)
def test_close_is_idempotent_and_final(make_env, scene_build, name):
    env = make_env(wrapper(name), scene_build("Branched"))
    process = environment_of(env).proc1
    env.close()
    env.close()
    assert process.poll() is not None
    with pytest.raises(UnityGymException, match=f"The {name} is closed"):
        env.reset()


@pytest.mark.parametrize("name", WITH_OPTIONS)
def test_an_unknown_reset_parameter_is_named_with_the_known_ones_before_any_restart(
    make_env, scene_build, name
):
    env = make_env(wrapper(name), scene_build("Branched"), seed=3)
    process = environment_of(env).proc1
    expected = (
        r"The parameter 'offest' is not a valid parameter of the environment; "
        r"its reset parameters are 'offset'\."
    )
    with pytest.raises(UnityEnvironmentException, match=expected):
        reset(env, seed=4, options={"config": {"offest": 1.0}})
    assert environment_of(env).proc1 is process  # refused before the restart for the seed
    reset(env, seed=4, options={"config": {"offset": 1.0}})
    assert environment_of(env).proc1 is not process
    assert environment_of(env).reset_parameters["offset"] == 1.0


@pytest.mark.parametrize("name", WITH_OPTIONS)
def test_an_option_other_than_config(make_env, scene_build, name, caplog):
    env = make_env(wrapper(name), scene_build("Branched"))
    if name == "UnityParallelEnv":
        # PettingZoo's own API test resets with an option of its own: ignored, with a warning.
        with caplog.at_level(logging.WARNING, logger="gym_unity"):
            reset(env, options={"options": 1})
        assert "Unknown reset option(s) ['options']" in caplog.text
    else:
        with pytest.raises(UnityGymException, match=r"Unknown reset option\(s\) \['offset'\]"):
            reset(env, options={"offset": 1.0})
    with pytest.raises(UnityGymException, match="takes a dict"):
        reset(env, options={"config": 3})
