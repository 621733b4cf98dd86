"""UnityEnv (classic gym API) on real builds over real gRPC: spaces, reset/step results, visual
observations, branched actions with and without flattening, multi-agent lists, episode ends."""

import itertools
import logging

import numpy as np
import pytest
from gymnasium import spaces

from gym_unity.envs import UnityEnv
from gym_unity.tests import gym_test_scenes as scenes
from mlagents.envs.brain import BrainInfo
from mlagents.envs.exception import UnityActionException

BASIC_START = 10
STEPS_TO_LARGE_GOAL = 7
BRANCH_COMBINATIONS = [list(c) for c in itertools.product(*(range(b) for b in scenes.BRANCHES))]


def one_hot(position: int) -> np.ndarray:
    vector = np.zeros(20)
    vector[position] = 1.0
    return vector


def test_basic_single_agent_vector(make_env, example_build):
    env = make_env(UnityEnv, example_build("Basic"))
    assert env.name == "Academy"
    assert env.brain_name == "BasicLearning"
    assert env.action_space == spaces.Discrete(3)
    assert env.observation_space == spaces.Box(-np.inf, np.inf, shape=(20,), dtype=np.float32)
    assert env.number_agents == 1
    assert env.get_action_meanings() == [""]
    assert env.metadata == {"render.modes": ["rgb_array"]}
    assert env.reward_range == (-float("inf"), float("inf"))
    assert env.spec is None
    assert env.use_visual is False

    observation = env.reset()
    assert observation.shape == (20,) and observation.dtype == np.float64
    np.testing.assert_array_equal(observation, one_hot(BASIC_START))
    assert env.game_over is False

    for step in range(1, STEPS_TO_LARGE_GOAL + 1):
        observation, reward, done, info = env.step(2)  # right, towards the large goal
        assert set(info) == {"text_observation", "brain_info"}
        assert isinstance(info["brain_info"], BrainInfo)
        assert info["text_observation"] == ""
        if step < STEPS_TO_LARGE_GOAL:
            np.testing.assert_array_equal(observation, one_hot(BASIC_START + step))
            assert reward == pytest.approx(-0.01) and done is False
    assert reward == pytest.approx(0.99)
    assert done is True and env.game_over is True
    assert env.render() is None  # no visual observation in use

    np.testing.assert_array_equal(env.reset(), one_hot(BASIC_START))
    assert env.game_over is False


def test_seed_cannot_be_changed_after_start(make_env, example_build, caplog):
    env = make_env(UnityEnv, example_build("Basic"))
    with caplog.at_level(logging.WARNING, logger="gym_unity"):
        assert env.seed(3) is None
    assert "Could not seed environment Academy" in caplog.text


def test_context_manager_closes(example_build, free_port):
    with UnityEnv(example_build("Basic"), base_port=free_port, no_graphics=True) as env:
        process = env.unity_environment.proc1
        env.reset()
    assert process.poll() is not None


@pytest.mark.parametrize("uint8_visual", [False, True])
def test_gridworld_visual(make_env, example_build, uint8_visual):
    env = make_env(UnityEnv, example_build("GridWorld"), use_visual=True, uint8_visual=uint8_visual)
    # As in the original, the space is the float one even when the images are uint8.
    assert env.observation_space == spaces.Box(0, 1, shape=(84, 84, 3), dtype=np.float32)
    assert env.action_space == spaces.Discrete(5)
    observation = env.reset()
    assert observation.shape == (84, 84, 3)
    if uint8_visual:
        assert observation.dtype == np.uint8
        assert observation.max() > 1
    else:
        assert observation.dtype == np.float64
        assert observation.min() >= 0.0 and observation.max() <= 1.0
    observation, reward, done, info = env.step(1)
    assert observation.shape == (84, 84, 3)
    assert env.render() is observation
    raw = info["brain_info"].visual_observations[0][0]
    expected = (255.0 * raw).astype(np.uint8) if uint8_visual else raw
    np.testing.assert_array_equal(observation, expected)


def test_black_and_white_camera(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("Cameras"), use_visual=True, uint8_visual=True)
    assert env.observation_space.shape == (12, 16, 1)
    observation, _, _, _ = env.step(1)
    assert observation.shape == (12, 16, 1) and observation.dtype == np.uint8
    assert np.all(observation == scenes.camera_value(0, 0, 1))


def test_several_cameras_without_allow_multiple_warns_and_gives_the_first(make_env, scene_build, caplog):
    with caplog.at_level(logging.WARNING, logger="gym_unity"):
        env = make_env(UnityEnv, scene_build("Cameras"), use_visual=True)
    assert "You must define allow_multiple_visual_obs=True" in caplog.text
    observation = env.reset()
    assert observation.shape == (12, 16, 1)


def test_several_cameras_with_allow_multiple(make_env, scene_build):
    env = make_env(
        UnityEnv, scene_build("Cameras"), use_visual=True, allow_multiple_visual_obs=True, uint8_visual=True
    )
    assert env.observation_space.shape == (12, 16, 1)  # camera 0, as in the original
    observation, _, _, _ = env.step(1)
    assert isinstance(observation, list) and len(observation) == 2
    gray, colour = observation
    assert gray.shape == (12, 16, 1) and colour.shape == (6, 8, 3)
    assert np.all(gray == scenes.camera_value(0, 0, 1))
    assert np.all(colour[..., :2] == scenes.camera_value(1, 0, 1)) and np.all(colour[..., 2] == 255)
    assert env.render() is observation


def test_branched_actions_not_flattened(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("Branched"))
    assert env.action_space == spaces.MultiDiscrete(list(scenes.BRANCHES))
    assert env.get_action_meanings() == [f"BranchedBrain action {i}" for i in range(4)]
    env.reset()
    observation, reward, done, _ = env.step(np.array([2, 1, 0, 1]))
    np.testing.assert_array_equal(observation[:4], [2, 1, 0, 1])
    assert reward == pytest.approx(0.5) and done is False
    observation, _, _, _ = env.step([0, 2, 1, 0])
    np.testing.assert_array_equal(observation[:4], [0, 2, 1, 0])


def test_branched_actions_flattened(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("Branched"), flatten_branched=True)
    assert env.action_space == spaces.Discrete(54)
    env.reset()
    for index in [0, 1, 17, 53, np.int64(30)]:
        observation, _, _, _ = env.step(index)
        np.testing.assert_array_equal(observation[:4], BRANCH_COMBINATIONS[index])


def test_single_branch_is_not_changed_by_flattening(make_env, example_build):
    env = make_env(UnityEnv, example_build("Basic"), flatten_branched=True)
    assert env.action_space == spaces.Discrete(3)


def test_multiagent_3dball(make_env, example_build):
    env = make_env(UnityEnv, example_build("3DBall"), multiagent=True)
    assert env.number_agents == 12
    assert env.action_space == spaces.Box(-1, 1, shape=(2,), dtype=np.float32)
    assert env.observation_space == spaces.Box(-np.inf, np.inf, shape=(8,), dtype=np.float32)
    observations = env.reset()
    assert isinstance(observations, list) and len(observations) == 12
    assert all(o.shape == (8,) for o in observations)
    for _ in range(3):
        observations, rewards, dones, info = env.step([env.action_space.sample() for _ in range(12)])
    assert len(observations) == len(rewards) == len(dones) == len(info["text_observation"]) == 12
    assert isinstance(info["brain_info"], BrainInfo)
    assert env.game_over == all(dones)


def test_multiagent_each_agent_gets_its_action(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("MultiEcho"), multiagent=True)
    assert env.number_agents == scenes.MULTI_AGENTS
    env.reset()
    actions = [np.array([0.1 * i, -0.2 * i], dtype=np.float32) for i in range(scenes.MULTI_AGENTS)]
    observations, rewards, dones, _ = env.step(actions)
    for i, observation in enumerate(observations):
        np.testing.assert_allclose(observation, [0.1 * i, -0.2 * i, i], rtol=1e-6)
    assert rewards == pytest.approx([0.5] * scenes.MULTI_AGENTS)
    assert dones == [False] * scenes.MULTI_AGENTS and env.game_over is False


def test_multiagent_flattened_branches(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("MultiBranched"), multiagent=True, flatten_branched=True)
    env.reset()
    indices = [5, 0, 53]
    observations, _, _, _ = env.step(indices)
    for observation, index in zip(observations, indices):
        np.testing.assert_array_equal(observation, BRANCH_COMBINATIONS[index])


@pytest.mark.parametrize("uint8_visual", [False, True])
def test_multiagent_visual_is_a_list_per_camera_of_agent_images(make_env, scene_build, uint8_visual):
    env = make_env(
        UnityEnv, scene_build("MultiCameras"), use_visual=True, multiagent=True, uint8_visual=uint8_visual
    )
    observations, _, _, _ = env.step([1, 0, 1])
    assert len(observations) == 2  # cameras
    gray, colour = observations
    assert len(gray) == len(colour) == scenes.MULTI_AGENTS
    for agent, action in enumerate([1, 0, 1]):
        expected = int(scenes.camera_value(0, agent, action))
        if uint8_visual:
            assert gray[agent].dtype == np.uint8 and np.all(gray[agent] == expected)
        else:
            np.testing.assert_allclose(gray[agent], expected / 255.0)
        assert colour[agent].shape == (6, 8, 3)


def test_episode_end_by_the_agent_and_by_its_step_limit(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("Episodes"))
    env.reset()
    _, reward, done, info = env.step(1)
    assert done is True and reward == pytest.approx(1.0)
    assert info["brain_info"].max_reached == [False]
    env.reset()
    steps = steps_until_done(env)
    assert scenes.EPISODE_MAX_STEP <= steps <= scenes.EPISODE_MAX_STEP + 1
    assert env.brain_info.max_reached == [True]


def steps_until_done(env, limit=20):
    for step in range(1, limit + 1):
        if env.step(0)[2]:
            return step
    raise AssertionError(f"no episode end within {limit} steps")


def test_step_after_the_academy_ended_requires_reset(make_env, scene_build):
    env = make_env(UnityEnv, scene_build("AcademyLimit"))
    env.reset()
    for _ in range(scenes.ACADEMY_MAX_STEPS):
        env.step(0)
    assert env.unity_environment.global_done is True
    with pytest.raises(UnityActionException, match="The episode is completed"):
        env.step(0)
    env.reset()
    env.step(0)
