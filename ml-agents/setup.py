from setuptools import find_namespace_packages, setup

setup(
    name="mlagents",
    version="0.9.3",
    description="Unity Machine Learning Agents: trainers and the mlagents-learn command",
    url="https://github.com/Unity-Technologies/ml-agents",
    license="Apache License 2.0",
    packages=find_namespace_packages(include=["mlagents.*"], exclude=["*.tests", "*.tests.*"]),
    zip_safe=False,
    python_requires=">=3.11",
    install_requires=[
        "mlagents_envs==0.9.3",
        "tensorflow>=2.16,<3",
        "tensorboard>=2.16",
        "numpy>=1.24",
        "pyyaml>=6",
        "docopt-ng>=0.9",
        "cloudpickle>=2",
        "tqdm>=4.60",
    ],
    extras_require={
        # pip install -e "./ml-agents[ray]": environment workers on Ray (mlagents-learn --env-manager=ray)
        "ray": ["mlagents_envs[ray]==0.9.3"],
        "onnx": ["onnx>=1.14", "onnxruntime>=1.14"],
        "video": ["mlagents_example_envs[video]==0.9.3"],
    },
    entry_points={"console_scripts": ["mlagents-learn=mlagents.trainers.learn:main"]},
)
