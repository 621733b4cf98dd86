from setuptools import find_packages, setup

setup(
    name="gym_unity",
    version="0.4.6",
    description="Unity Machine Learning Agents Gym Interface",
    license="Apache License 2.0",
    packages=find_packages(exclude=["*.tests", "*.tests.*"]),
    zip_safe=False,
    python_requires=">=3.11",
    # The classic gym package does not work with numpy 2: the spaces and the Gymnasium-API
    # environment come from gymnasium.
    install_requires=["mlagents_envs==0.9.3", "gymnasium>=1.0", "numpy>=1.24"],
    extras_require={
        # UnityVecEnv is a stable-baselines3 VecEnv; UnityParallelEnv a PettingZoo ParallelEnv.
        "sb3": ["stable-baselines3>=2.0"],
        "pettingzoo": ["pettingzoo>=1.24"],
        # The tests run the example builds, train stable-baselines3 PPO on two of them and run
        # PettingZoo's API test; torch is pinned to the CPU build installed on the project's machines.
        "test": [
            "pytest>=8",
            "pytest-timeout>=2",
            "mlagents_example_envs==0.9.3",
            "stable-baselines3>=2.0",
            "torch==2.13.0",
            "pettingzoo>=1.24",
        ],
    },
)
