"""Every UnityGymException condition and warning of the original UnityEnv, on real builds.

The ``make_env`` fixture also checks that a constructor that raises leaves no build running.
"""

import logging

import numpy as np
import pytest

from gym_unity.envs import UnityEnv, UnityGymException
from gym_unity.tests import gym_test_scenes as scenes
from mlagents.envs.exception import UnityActionException, UnityCommunicationException


@pytest.mark.parametrize(
    "builder, build, kwargs, message",
    [
        (
            "scene_build",
            "TwoBrains",
            {},
            "There can only be one brain in a UnityEnvironment if it is wrapped in a gym.",
        ),
        ("scene_build", "NoExternalBrain", {}, "There are not any external brain in the UnityEnvironment"),
        (
            "scene_build",
            "Stacked",
            {},
            "There can only be one stacked vector observation in a UnityEnvironment if it is wrapped in a gym.",
        ),
        (
            "example_build",
            "Basic",
            {"use_visual": True},
            "`use_visual` was set to True, however there are no visual observations as part of this environment.",
        ),
        # The original's texts, including their missing space.
        (
            "example_build",
            "3DBall",
            {},
            "The environment was launched as a single-agent environment, howeverthere is more than one agent in "
            "the scene.",
        ),
        (
            "example_build",
            "Basic",
            {"multiagent": True},
            "The environment was launched as a mutli-agent environment, howeverthere is only one agent in the scene.",
        ),
    ],
    ids=[
        "two-brains",
        "no-external-brain",
        "stacked",
        "use-visual-without-cameras",
        "single-agent-mode-with-several-agents",
        "multi-agent-mode-with-one-agent",
    ],
)
def test_environments_the_wrapper_refuses(make_env, request, builder, build, kwargs, message):
    build_path = request.getfixturevalue(builder)(build)
    with pytest.raises(UnityGymException) as error:
        make_env(UnityEnv, build_path, **kwargs)
    assert str(error.value) == message


def test_changing_number_of_agents(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("ChangingAgents"), multiagent=True)
    assert env.number_agents == scenes.CHANGING_AGENTS
    with pytest.raises(UnityGymException) as error:
        for _ in range(scenes.CHANGING_AGENTS_FULL_STEPS + 1):
            env.step([0] * scenes.CHANGING_AGENTS)
    assert str(error.value) == (
        "The number of agents in the environment has changed since initialization. This is not supported."
    )


def test_multiagent_action_must_be_a_list_of_one_action_per_agent(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("MultiEcho"), multiagent=True)
    env.reset()
    with pytest.raises(UnityGymException) as error:
        env.step(np.zeros((scenes.MULTI_AGENTS, 2)))
    assert str(error.value) == "The environment was expecting `action` to be a list."
    with pytest.raises(UnityGymException) as error:
        env.step([np.zeros(2)] * (scenes.MULTI_AGENTS - 1))
    assert str(error.value) == f"The environment was expecting a list of {scenes.MULTI_AGENTS} actions."
    env.step([np.zeros(2)] * scenes.MULTI_AGENTS)  # still usable


def test_action_of_the_wrong_size_is_refused_by_the_environment(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("Branched"))
    env.reset()
    with pytest.raises(UnityActionException, match="expected 4 discrete action"):
        env.step([1, 2])


def test_flattened_action_out_of_range(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("Branched"), flatten_branched=True)
    env.reset()
    with pytest.raises(UnityGymException, match="expected an integer from 0 to 53"):
        env.step(54)


def test_uint8_visual_without_use_visual_warns(make_env, scene_build, caplog):
    with caplog.at_level(logging.WARNING, logger="gym_unity"):
        env = make_env(UnityEnv, scene_build("Cameras"), uint8_visual=True)
    assert (
        "`uint8_visual was set to true, but visual observations are not in use. This setting will not have any effect."
        in caplog.text
    )
    assert env.uint8_visual is False
    assert env.reset().dtype == np.float64  # the vector observation


def test_flattening_a_continuous_space_warns(make_env, scene_build, caplog):
    with caplog.at_level(logging.WARNING, logger="gym_unity"):
        env = make_env(UnityEnv, scene_build("MultiEcho"), multiagent=True, flatten_branched=True)
    assert "The environment has a non-discrete action space. It will not be flattened." in caplog.text
    assert env.action_space.shape == (2,)


def test_a_crashing_build_raises_and_leaves_nothing(make_env, example_build, tmp_path):
    env = make_env(UnityEnv, example_build("Basic"), args=["--fault-exit-after", "3"], log_dir=str(tmp_path))
    process = env.unity_environment.proc1
    with pytest.raises(UnityCommunicationException, match="exited unexpectedly with code 3"):
        for _ in range(5):
            env.step(1)
    assert process.poll() == 3
    env.close()
    assert "simulated crash" in (tmp_path / "Basic-worker0.log").read_text()
