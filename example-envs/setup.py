from setuptools import find_namespace_packages, setup

setup(
    name="mlagents_example_envs",
    version="0.9.3",
    description="The ML-Agents example environments, written in Python, speaking the Unity wire protocol",
    license="Apache License 2.0",
    packages=find_namespace_packages(include=["mlagents.*"], exclude=["*.tests", "*.tests.*"]),
    zip_safe=False,
    python_requires=">=3.11",
    install_requires=[
        "mlagents_envs==0.9.3",
        "numpy>=1.24",
        "protobuf>=7.35.1,<8",
        "grpcio>=1.85.1",
        "Pillow>=9",
        "mujoco>=3.1",
    ],
    extras_require={"video": ["imageio>=2.31", "imageio-ffmpeg>=0.4.9"]},
)
