"""UnityGymnasiumEnv on real builds over real gRPC: Gymnasium's checker, spaces and dtypes,
terminated vs truncated, seeding by restart, reset options, rendering, action checks, errors."""

import itertools
import logging
import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from gym_unity.envs import UnityGymException, UnityGymnasiumEnv
from gym_unity.tests import gym_test_scenes as scenes

# What check_env says about any environment with unbounded vector observations or without a
# registered spec; everything else it could say is a failure.
ACCEPTED_CHECKER_WARNINGS = (
    "A Box observation space minimum value is -infinity",
    "A Box observation space maximum value is infinity",
    "Not able to test alternative render modes due to the environment not having a spec",
)
BRANCH_COMBINATIONS = [list(c) for c in itertools.product(*(range(b) for b in scenes.BRANCHES))]


def checked(env: UnityGymnasiumEnv) -> None:
    """Run Gymnasium's checker; fail on any warning but the accepted ones."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    unexpected = [
        str(w.message) for w in caught if not any(a in str(w.message) for a in ACCEPTED_CHECKER_WARNINGS)
    ]
    assert unexpected == []


@pytest.mark.slow
def test_basic_passes_the_checker_and_reaches_the_goal(make_env, example_build):
    env = make_env(UnityGymnasiumEnv, example_build("Basic"))
    assert env.action_space == spaces.Discrete(3)
    assert env.observation_space == spaces.Box(-np.inf, np.inf, shape=(20,), dtype=np.float32)
    checked(env)

    observation, info = env.reset()
    assert observation.dtype == np.float32 and observation.shape == (20,)
    assert info == {"text_observation": "", "max_step_reached": False}
    for _ in range(7):
        observation, reward, terminated, truncated, info = env.step(np.int64(2))
        assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    assert terminated is True and truncated is False
    assert reward == pytest.approx(0.99)
    assert env.game_over is True
    assert env.brain_info.local_done == [True]


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [
        dict(use_visual=True, render_mode="rgb_array"),
        dict(use_visual=True, uint8_visual=True, render_mode="rgb_array"),
    ],
)
def test_gridworld_passes_the_checker(make_env, example_build, options):
    env = make_env(UnityGymnasiumEnv, example_build("GridWorld"), **options)
    dtype = np.uint8 if options.get("uint8_visual") else np.float32
    high = 255 if dtype == np.uint8 else 1.0
    assert env.observation_space == spaces.Box(0, high, shape=(84, 84, 3), dtype=dtype)
    checked(env)
    observation, _ = env.reset()
    assert observation.dtype == dtype and observation in env.observation_space
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape == (84, 84, 3)
    expected = (
        observation
        if dtype == np.uint8
        else (255.0 * env.brain_info.visual_observations[0][0]).astype(np.uint8)
    )
    np.testing.assert_array_equal(frame, expected)


@pytest.mark.slow
@pytest.mark.parametrize("flatten_branched", [False, True])
def test_branched_actions(make_env, scene_build, flatten_branched):
    env = make_env(UnityGymnasiumEnv, scene_build("Branched"), flatten_branched=flatten_branched)
    env.reset()
    if flatten_branched:
        checked(env)
        assert env.action_space == spaces.Discrete(54)
        for index in [0, 53, 20]:
            observation, *_ = env.step(index)
            np.testing.assert_array_equal(observation[:4], BRANCH_COMBINATIONS[index])
    else:
        assert env.action_space == spaces.MultiDiscrete(list(scenes.BRANCHES))
        observation, *_ = env.step(np.array([2, 0, 1, 1]))
        np.testing.assert_array_equal(observation[:4], [2, 0, 1, 1])


@pytest.mark.slow
def test_several_cameras_as_a_dict(make_env, scene_build):
    env = make_env(
        UnityGymnasiumEnv,
        scene_build("Cameras"),
        use_visual=True,
        uint8_visual=True,
        allow_multiple_visual_obs=True,
    )
    assert env.observation_space == spaces.Dict(
        {
            "camera_0": spaces.Box(0, 255, shape=(12, 16, 1), dtype=np.uint8),
            "camera_1": spaces.Box(0, 255, shape=(6, 8, 3), dtype=np.uint8),
        }
    )
    checked(env)
    env.reset()
    observation, *_ = env.step(1)
    assert np.all(observation["camera_0"] == scenes.camera_value(0, 0, 1))
    assert np.all(observation["camera_1"][..., 2] == 255)


def test_black_and_white_render_has_three_channels(make_env, scene_build):
    env = make_env(UnityGymnasiumEnv, scene_build("Cameras"), use_visual=True, render_mode="rgb_array")
    assert env.observation_space == spaces.Box(0.0, 1.0, shape=(12, 16, 1), dtype=np.float32)
    env.step(1)
    frame = env.render()
    assert frame.shape == (12, 16, 3) and np.all(frame == scenes.camera_value(0, 0, 1))


@pytest.mark.slow
def test_continuous_actions(make_env, scene_build):
    env = make_env(UnityGymnasiumEnv, scene_build("SingleContinuous"))
    assert env.action_space == spaces.Box(-1, 1, shape=(3,), dtype=np.float32)
    checked(env)
    env.reset()
    observation, *_ = env.step(np.array([0.5, -0.25, 1.0], dtype=np.float32))
    np.testing.assert_allclose(observation, [0.5, -0.25, 1.0])
    with pytest.raises(UnityGymException, match=r"not an element of the action space Box"):
        env.step(np.zeros(2))


def test_discrete_action_outside_the_space(make_env, example_build):
    env = make_env(UnityGymnasiumEnv, example_build("Basic"))
    for action in [3, -1, 1.0, "1", np.array([1]), None]:
        with pytest.raises(UnityGymException, match=r"is not an element of the action space Discrete\(3\)"):
            env.step(action)
    env.step(np.array(1))  # a 0-d integer array is an element


def test_terminated_and_truncated(make_env, scene_build):
    env = make_env(UnityGymnasiumEnv, scene_build("Episodes"))
    env.reset()
    _, reward, terminated, truncated, info = env.step(1)
    assert (terminated, truncated, reward) == (True, False, 1.0)
    assert info["max_step_reached"] is False

    env.reset()
    for _ in range(scenes.EPISODE_MAX_STEP + 1):
        _, _, terminated, truncated, info = env.step(0)
        if terminated or truncated:
            break
    assert (terminated, truncated) == (False, True)
    assert info["max_step_reached"] is True


def test_academy_step_limit_truncates(make_env, scene_build):
    env = make_env(UnityGymnasiumEnv, scene_build("AcademyLimit"))
    env.reset()
    results = [env.step(0)[2:4] for _ in range(scenes.ACADEMY_MAX_STEPS)]
    assert results[-1] == (False, True)
    assert all(result == (False, False) for result in results[:-1])
    env.reset()
    assert env.step(0)[2:4] == (False, False)


@pytest.mark.slow
def test_seeding_restarts_the_environment_reproducibly(make_env, scene_build):
    env = make_env(UnityGymnasiumEnv, scene_build("Branched"), seed=7)
    first_process = env.unity_environment.proc1

    draw_7 = env.reset(seed=7)[0][4]
    # Still as started with seed 7: no restart.
    assert env.unity_environment.proc1 is first_process
    draw_next = env.reset()[0][4]
    assert draw_next != draw_7

    assert env.reset(seed=7)[0][4] == draw_7
    assert env.unity_environment.proc1 is not first_process
    assert first_process.poll() is not None  # the first build ended
    assert env.reset()[0][4] == draw_next
    assert env.reset(seed=8)[0][4] != draw_7
    assert env.reset(seed=2**40 + 7)[0][4] == draw_7  # folded into the int32 range


@pytest.mark.slow
def test_reset_options_change_reset_parameters(make_env, scene_build):
    env = make_env(UnityGymnasiumEnv, scene_build("Branched"))
    base = env.reset(seed=3)[0][4]
    shifted = env.reset(seed=3, options={"config": {"offset": 10.0}})[0][4]
    assert shifted == pytest.approx(base + 10.0)
    assert env.unity_environment.reset_parameters["offset"] == 10.0
    # A restart keeps the parameters in effect.
    assert env.reset(seed=3)[0][4] == pytest.approx(base + 10.0)


def test_render_without_render_mode_returns_none(make_env, example_build):
    env = make_env(UnityGymnasiumEnv, example_build("GridWorld"))
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert env.render() is None


def test_render_mode_needs_a_camera(make_env, example_build):
    with pytest.raises(UnityGymException, match="has no visual observation"):
        make_env(UnityGymnasiumEnv, example_build("Basic"), render_mode="rgb_array")


def test_unknown_render_mode(make_env, example_build):
    with pytest.raises(UnityGymException, match="Unknown render_mode 'human'"):
        make_env(UnityGymnasiumEnv, example_build("Basic"), render_mode="human")


def test_several_agents_are_refused(make_env, example_build):
    with pytest.raises(UnityGymException) as error:
        make_env(UnityGymnasiumEnv, example_build("3DBall"))
    assert str(error.value) == (
        "UnityGymnasiumEnv drives exactly one agent, but the brain '3DBallLearning' has 12 agents in the scene. "
        "Use UnityEnv(..., multiagent=True) to drive several agents as lists."
    )


def test_environment_started_by_hand_ignores_later_seeds(example_build, free_port, caplog):
    # filename None: the wrapper waits for an environment that starts by itself (the Unity Editor).
    build = subprocess.Popen(
        [example_build("Basic"), "--port", str(free_port), "-nographics", "-batchmode"],
        env={**os.environ, "MLAGENTS_PYTHON": sys.executable},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        env = UnityGymnasiumEnv(None, base_port=free_port, seed=4)
        try:
            with caplog.at_level(logging.WARNING, logger="gym_unity"):
                observation, _ = env.reset(seed=5)
            assert "The seed 5 is ignored" in caplog.text
            assert observation.shape == (20,)
            env.step(1)
        finally:
            env.close()
        assert build.wait(timeout=30) == 0  # it quit after the goodbye
    finally:
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)
            build.wait()
