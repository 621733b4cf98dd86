"""UnityVecEnv: every agent of a brain over several builds as a stable-baselines3 VecEnv."""

import numpy as np
import pytest
from gymnasium import spaces

from gym_unity.envs import UnityGymException
from gym_unity.tests.gym_test_scenes import EPISODE_MAX_STEP, MULTI_AGENTS

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.vec_env import VecCheckNan, VecEnv, VecMonitor, VecNormalize

from gym_unity.envs import UnityVecEnv


def test_3dball_over_two_builds_is_a_vec_env_of_24_agents(make_env, example_build):
    env = make_env(UnityVecEnv, example_build("3DBall"), n_envs=2, seed=1)
    assert isinstance(env, VecEnv)
    assert env.num_envs == 24 and env.n_builds == 2 and env.agents_per_build == [12, 12]
    assert env.brain_name == "3DBallLearning"
    assert env.observation_space == spaces.Box(-np.inf, np.inf, (8,), np.float32)
    assert env.action_space == spaces.Box(-1, 1, (2,), np.float32)
    assert env.get_attr("render_mode") == [None] * 24
    assert env.env_is_wrapped(VecMonitor) == [False] * 24

    # stable-baselines3's own wrappers check and use the VecEnv API: NaN checks on every
    # observation and action, episode statistics, observation normalization.
    wrapped = VecNormalize(VecMonitor(VecCheckNan(env, raise_exception=True)), norm_reward=False)
    observations = wrapped.reset()
    assert observations.shape == (24, 8) and observations.dtype == np.float32
    rng = np.random.default_rng(0)
    episodes = []
    for _ in range(60):
        actions = rng.uniform(-1, 1, (24, 2)).astype(np.float32)
        observations, rewards, dones, infos = wrapped.step(actions)
        assert observations.shape == (24, 8) and rewards.shape == (24,) and dones.shape == (24,)
        assert dones.dtype == bool and len(infos) == 24
        for done, info in zip(dones, infos):
            assert ("terminal_observation" in info) == bool(done)
            if done:
                assert info["terminal_observation"].shape == (8,)
                assert info["TimeLimit.truncated"] is False  # a dropped ball, long before 5000 steps
                episodes.append(info["episode"])
    # Random actions drop balls within 60 decisions on most platforms, while the other agents go on.
    assert len(episodes) >= 12
    assert all(episode["r"] < 10 for episode in episodes)


def test_done_agents_restart_while_the_others_go_on(make_env, scene_build):
    env = make_env(UnityVecEnv, scene_build("MultiEpisodes"))
    assert env.num_envs == MULTI_AGENTS and env.action_space == spaces.Discrete(2)
    observations = env.reset()
    # observation: last action, agent index, steps in the current episode
    np.testing.assert_array_equal(observations[:, 1], [0, 1, 2])
    np.testing.assert_array_equal(observations[:, 2], [0, 0, 0])

    # Agent 1 ends its episode (action 1); the others go on.
    before = observations
    observations, rewards, dones, infos = env.step(np.array([0, 1, 0]))
    np.testing.assert_array_equal(dones, [False, True, False])
    np.testing.assert_array_equal(rewards, [0.5, 1.0, 0.5])
    assert infos[1]["TimeLimit.truncated"] is False
    np.testing.assert_array_equal(infos[1]["terminal_observation"], before[1])
    assert infos[0] == {} and infos[2] == {}
    np.testing.assert_array_equal(observations[:, 2], [1, 0, 1])  # agent 1 is in a new episode

    # Agents 0 and 2 reach their maximum step count (done in their step EPISODE_MAX_STEP + 1):
    # truncated, not terminated.
    for _ in range(EPISODE_MAX_STEP):
        observations, rewards, dones, infos = env.step(np.zeros(3, dtype=np.int64))
    np.testing.assert_array_equal(dones, [True, False, True])
    assert infos[0]["TimeLimit.truncated"] is True and infos[2]["TimeLimit.truncated"] is True
    np.testing.assert_array_equal(observations[[0, 2], 2], [0, 0])


def test_academy_step_limit_truncates_every_agent_and_the_env_goes_on(make_env, scene_build):
    env = make_env(UnityVecEnv, scene_build("AcademyLimit"))
    env.reset()
    dones_seen = []
    for _ in range(8):
        _, _, dones, infos = env.step(np.zeros(1, dtype=np.int64))
        dones_seen.append(bool(dones[0]))
        if dones[0]:
            assert infos[0]["TimeLimit.truncated"] is True
    assert dones_seen.count(True) >= 2  # the Academy's limit (3 steps) was hit and reset twice


@pytest.mark.slow
def test_seed_restarts_the_builds_so_a_seed_gives_the_same_episodes(make_env, scene_build):
    env = make_env(UnityVecEnv, scene_build("Branched"), n_envs=2, seed=5)
    env.seed(5)
    first = env.reset()  # still as started with seeds 5, 6: no restart
    assert first[0, -1] != first[1, -1]  # builds started with different seeds draw differently
    env.step(np.zeros((2, 4), dtype=np.int64))
    env.seed(5)
    np.testing.assert_array_equal(env.reset(), first)
    env.seed(7)
    assert not np.array_equal(env.reset(), first)

    # Reset parameters set through set_options stay in effect, also across a restart.
    env.set_options({"config": {"offset": 10.0}})
    assert (env.reset()[:, -1] >= 10.0).all()
    env.seed(5)
    assert (env.reset()[:, -1] >= 10.0).all()


def test_agents_that_stop_deciding_are_refused_clearly(make_env, scene_build):
    env = make_env(UnityVecEnv, scene_build("ChangingAgents"))
    env.reset()
    with pytest.raises(UnityGymException, match="to decide at every step.*On-demand"):
        for _ in range(4):
            env.step(np.zeros(env.num_envs, dtype=np.int64))


def test_brain_choice(make_env, scene_build):
    # A constructor that raises ends every build it started (make_env checks each port).
    with pytest.raises(
        UnityGymException, match=r"several external brains \(FirstBrain, SecondBrain\).*brain_name"
    ):
        make_env(UnityVecEnv, scene_build("TwoBrains"), n_envs=2)
    with pytest.raises(UnityGymException, match="no external brain 'Nope'"):
        make_env(UnityVecEnv, scene_build("TwoBrains"), brain_name="Nope")
    env = make_env(UnityVecEnv, scene_build("TwoBrains"), brain_name="SecondBrain")
    assert env.num_envs == 1 and env.brain_name == "SecondBrain"
    env.step(np.array([1]))


def test_bad_arguments_and_actions(make_env, scene_build):
    with pytest.raises(UnityGymException, match="n_envs is the number of builds"):
        make_env(UnityVecEnv, scene_build("MultiEcho"), n_envs=0)
    with pytest.raises(
        UnityGymException, match="use_visual=True, but the brain 'MultiEchoBrain' has no visual"
    ):
        make_env(UnityVecEnv, scene_build("MultiEcho"), use_visual=True)
    env = make_env(UnityVecEnv, scene_build("MultiEcho"))
    with pytest.raises(UnityGymException, match=r"Expected actions of shape \(3, 2\).*got shape \(2, 2\)"):
        env.step(np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(UnityGymException, match="no method 'reset'"):
        env.env_method("reset")
    env.close()
    with pytest.raises(UnityGymException, match="closed"):
        env.reset()


def test_multi_camera_agents_observe_uint8_images(make_env, scene_build):
    env = make_env(UnityVecEnv, scene_build("MultiCameras"), use_visual=True)
    assert env.observation_space == spaces.Box(0, 255, (12, 16, 1), np.uint8)
    observations = env.reset()
    assert observations.shape == (3, 12, 16, 1) and observations.dtype == np.uint8
