"""stable-baselines3 2.x trains on UnityGymnasiumEnv unchanged (PPO on the Basic example build) and
on UnityVecEnv (PPO on every agent of two 3DBall builds)."""

import numpy as np
import pytest

from gym_unity.envs import UnityGymnasiumEnv, UnityVecEnv

sb3 = pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")
from stable_baselines3.common.env_checker import check_env as sb3_check_env  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize  # noqa: E402


@pytest.fixture
def one_torch_thread():
    # A small MLP gains nothing from several threads, which only contend with the build for the cores.
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.mark.slow
def test_ppo_learns_a_few_hundred_steps_on_basic(make_env, example_build, one_torch_thread):
    env = make_env(UnityGymnasiumEnv, example_build("Basic"), seed=1)
    sb3_check_env(env, warn=True)

    model = sb3.PPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=1, device="cpu", verbose=0)
    model.learn(total_timesteps=384)
    assert model.num_timesteps >= 384

    observation, _ = env.reset()
    action, _ = model.predict(observation, deterministic=True)
    assert env.action_space.contains(np.asarray(action).item())
    _, reward, terminated, truncated, _ = env.step(action)
    assert isinstance(reward, float) and not truncated


def test_ppo_learns_on_every_agent_of_two_3dball_builds(make_env, example_build, one_torch_thread):
    vec_env = make_env(UnityVecEnv, example_build("3DBall"), n_envs=2, seed=1)
    env = VecNormalize(VecMonitor(vec_env), norm_reward=False)
    model = sb3.PPO("MlpPolicy", env, n_steps=32, batch_size=256, n_epochs=2, seed=1, device="cpu", verbose=0)
    model.learn(total_timesteps=2 * 32 * 24)
    assert model.num_timesteps == 2 * 32 * 24  # two rollouts of 32 steps of the 24 agents

    observations = env.reset()
    actions, _ = model.predict(observations, deterministic=True)
    assert actions.shape == (24, 2)
    _, rewards, dones, infos = env.step(actions)
    assert rewards.shape == dones.shape == (24,) and len(infos) == 24
