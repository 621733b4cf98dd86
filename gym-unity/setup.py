from setuptools import find_packages, setup

setup(
    name="gym_unity",
    version="0.4.6",
    description="Unity Machine Learning Agents Gym Interface",
    license="Apache License 2.0",
    packages=find_packages(exclude=["*.tests", "*.tests.*"]),
    zip_safe=False,
    python_requires=">=3.11",
    install_requires=["mlagents_envs==0.9.3", "gymnasium>=1.0", "numpy>=1.24"],
)
