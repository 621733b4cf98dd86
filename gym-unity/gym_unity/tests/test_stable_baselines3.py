"""stable-baselines3 2.x trains on UnityGymnasiumEnv unchanged (PPO on the Basic example build)."""

import numpy as np
import pytest

from gym_unity.envs import UnityGymnasiumEnv

sb3 = pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")
from stable_baselines3.common.env_checker import check_env as sb3_check_env  # noqa: E402


@pytest.fixture
def one_torch_thread():
    # A small MLP gains nothing from several threads, which only contend with the build for the cores.
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


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
