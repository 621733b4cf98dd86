"""Is the inference brain ever the bottleneck of a build? Agent decisions per second of an
exported model run by the build-side runtime (numpy) against the scene's own step rate.

For 3DBall (12 agents, continuous, 2 x 128 hidden units with normalization: the shipped
3DBallLearning network) and Basic (1 agent, discrete), a PPO policy with its initial weights is
exported to ``.nn`` (the runtime's speed does not depend on the values), then on one core:

* scene: academy steps per second of the scene alone with fixed actions (``LocalEnvironment``),
  times its agents = agent-steps per second the scene can simulate;
* model: ``ModelPolicy.decide`` on the scene's own decision batch, calls per second, times the
  agents in a batch = agent decisions per second;
* both: the scene stepping with the model deciding every decision (what a build with
  ``--model`` runs), agent-steps per second.

Usage::

    python benchmarks/inference_speed.py [--seconds 5]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from mlagents.example_envs import registry  # noqa: E402, F401
from mlagents.example_envs.sdk.inference import load_model_policy  # noqa: E402
from mlagents.example_envs.sdk.local import LocalEnvironment  # noqa: E402
from mlagents.example_envs.sdk.scene import BrainSpec  # noqa: E402

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config", "trainer_config.yaml")
# Scene -> its section of the shipped trainer configuration (the network the policy has).
NETWORKS = {"3DBall": "3DBallLearning", "Basic": "BasicLearning"}


def export_initial_model(brain: BrainSpec, folder: str, section: str) -> str:
    """A PPO policy for ``brain`` with the network of the shipped configuration's ``section`` and
    its initial weights, exported; returns the .nn path."""
    from mlagents.envs.brain import BrainParameters
    from mlagents.trainers.ppo.policy import PPOPolicy
    from mlagents.trainers.settings import merged_section
    from mlagents.trainers.trainer_util import load_config

    params = BrainParameters(
        brain.name,
        brain.vector_observation_size,
        brain.num_stacked_vector_observations,
        [],
        list(brain.vector_action_size),
        [""] * len(brain.vector_action_size),
        brain.vector_action_space_type,
    )
    settings = merged_section(load_config(CONFIG), section)
    settings.update(
        summary_path=os.path.join(folder, "summaries"),
        model_path=os.path.join(folder, brain.name),
        keep_checkpoints=1,
    )
    policy = PPOPolicy(0, params, settings, is_training=False)
    policy.export_model()
    return policy.model_path + ".nn"


def rate(function: Callable[[], object], seconds: float) -> float:
    """Calls per CPU second of ``function`` over about ``seconds``."""
    function()
    calls, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        function()
        calls += 1
    return calls / (time.process_time() - start)


def measure(name: str, seconds: float, folder: str) -> None:
    env = LocalEnvironment(name, seed=0)
    (brain_name,) = env.brain_names
    brain = env.brains[brain_name]
    path = export_initial_model(brain, folder, NETWORKS[name])
    policy = load_model_policy(path, brain)
    batches = env.reset()
    batch = batches[brain_name]
    agents = len(batch.agents)
    fixed = np.zeros((agents, brain.action_length), dtype=np.float32)

    def scene_step() -> None:
        nonlocal batches
        if env.global_done:
            batches = env.reset()
        batches = env.step({brain_name: fixed[: len(batches[brain_name].agents)]})

    def decide() -> None:
        policy.decide(batch)

    def both() -> None:
        nonlocal batches
        if env.global_done:
            batches = env.reset()
        batches = env.step({brain_name: policy.decide(batches[brain_name])})

    scene = rate(scene_step, seconds)
    model = rate(decide, seconds)
    together = rate(both, seconds)
    print(
        f"{name:8s} {agents:3d} agents | scene {scene:8.0f} steps/s = {scene * agents:9.0f} agent-steps/s | "
        f"model {model:8.0f} calls/s = {model * agents:9.0f} agent decisions/s ({model / scene:5.1f}x the scene) | "
        f"scene + model {together * agents:9.0f} agent-steps/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    with tempfile.TemporaryDirectory() as folder:
        for name in NETWORKS:
            measure(name, args.seconds, folder)


if __name__ == "__main__":
    main()
