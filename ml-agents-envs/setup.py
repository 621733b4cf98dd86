from setuptools import find_namespace_packages, setup

setup(
    name="mlagents_envs",
    version="0.9.3",
    description="Unity Machine Learning Agents Interface (Python side of the wire)",
    url="https://github.com/Unity-Technologies/ml-agents",
    license="Apache License 2.0",
    packages=find_namespace_packages(include=["mlagents.*"], exclude=["*.tests", "*.tests.*"]),
    zip_safe=False,
    python_requires=">=3.11",
    install_requires=[
        "numpy>=1.24",
        "protobuf>=7.35.1,<8",
        "grpcio>=1.85.1",
        "Pillow>=9",
        "cloudpickle>=2",
        "threadpoolctl>=3.1",
    ],
    extras_require={
        # grpcio-tools regenerates communicator_objects; pinned so the output matches the committed files.
        "protoc": ["grpcio-tools==1.85.1"],
        # the Ray environment manager (mlagents-learn --env-manager=ray)
        "ray": ["ray>=2.9"],
        # the test tools (pytest-xdist runs the suite in parallel: `pytest -n 2 --dist loadfile`) and
        # the checks CI runs (ruff and mypy pinned: new releases bring new rules)
        "test": ["pytest>=8", "pytest-timeout>=2", "pytest-xdist>=3.5", "ruff==0.17.6", "mypy==2.4.1"],
    },
)
