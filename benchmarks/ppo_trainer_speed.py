"""How fast is the PPO trainer itself, without any environment?

Drives PPOTrainer with synthetic BrainInfos shaped like two shipped examples and prints, per
environment step, the time spent deciding (get_action), in the trainer's bookkeeping
(add_experiences + process_experiences, split into add_experiences, the bootstrap value estimates
of process_experiences, and the rest of process_experiences), and the time of one policy update,
plus the one-time cost of building the policy (tracing the tf.functions). Wall-clock and process CPU time are both shown:
on a busy machine the wall clock mostly measures the other processes.

    python benchmarks/ppo_trainer_speed.py [--steps N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.ppo.trainer import PPOTrainer
from mlagents.trainers.settings import merged_section
from mlagents.trainers.trainer_util import load_config

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config", "trainer_config.yaml")

# Each case: a brain shaped like a shipped example, its agents, decisions per episode, and its
# section of the shipped trainer configuration.
CASES = {
    # 3DBall: 12 agents, 8 observations, 2 continuous actions.
    "3DBall-like": dict(
        brain=BrainParameters("3DBallLearning", 8, 1, [], [2], ["", ""], "continuous"),
        agents=12,
        episode=400,
        section="3DBallLearning",
    ),
    # Basic: 1 agent, 20 observations, 1 branch of 3.
    "Basic-like": dict(
        brain=BrainParameters("BasicLearning", 20, 1, [], [3], [""], "discrete"),
        agents=1,
        episode=12,
        section="BasicLearning",
    ),
}


def parameters(folder: str, section: str) -> dict:
    """The shipped configuration's ``section`` (over ``default``), writing into ``folder``."""
    params = merged_section(load_config(CONFIG), section)
    params.update(summary_path=os.path.join(folder, "summaries"), model_path=os.path.join(folder, "model"))
    return params


def brain_info(
    rng: np.random.Generator, brain: BrainParameters, n: int, step: int, episode: int
) -> BrainInfo:
    """A decision of ``n`` agents of ``brain``: random observations and rewards, every episode
    ending after ``episode`` decisions. Camera images are as the envs API decodes them (k / 255,
    float64)."""
    done = (step % episode) == episode - 1
    n_masks = sum(brain.vector_action_space_size) if brain.vector_action_space_type == "discrete" else 0
    vector_observation = rng.normal(size=(n, brain.vector_observation_space_size))
    visual_observation = [
        [
            rng.integers(
                0, 256, size=(camera["height"], camera["width"], 1 if camera["blackAndWhite"] else 3)
            )
            / 255.0
            for _ in range(n)
        ]
        for camera in brain.camera_resolutions
    ]
    return BrainInfo(
        visual_observation=visual_observation,
        vector_observation=vector_observation,
        text_observations=[""] * n,
        memory=np.zeros((0, 0)),
        reward=list(rng.normal(size=n)),
        agents=[f"$0-{i}" for i in range(n)],
        local_done=[done] * n,
        vector_action=np.zeros((n, len(brain.vector_action_space_size))),
        text_action=[[] for _ in range(n)],
        max_reached=[False] * n,
        action_mask=np.ones((n, n_masks)),
    )


def run_case(name: str, case: dict, steps: int) -> None:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        start = clocks()
        trainer = PPOTrainer(case["brain"], 1, parameters(folder, case["section"]), True, False, 0, "bench")
        build = clocks() - start
        current = brain_info(rng, case["brain"], case["agents"], 0, case["episode"])
        decide = np.zeros(2)
        bookkeeping = np.zeros(2)
        adding = np.zeros(2)
        bootstrap = np.zeros(2)
        estimate = trainer.policy.get_batched_value_estimates

        def timed_estimate(*args, **kwargs):
            nonlocal bootstrap
            start_estimate = clocks()
            values = estimate(*args, **kwargs)
            bootstrap += clocks() - start_estimate
            return values

        trainer.policy.get_batched_value_estimates = timed_estimate  # type: ignore[method-assign]
        update = np.zeros(2)
        updates = 0
        first_update = None
        for step in range(1, steps + 1):
            t0 = clocks()
            action = trainer.policy.get_action(current)
            t1 = clocks()
            following = brain_info(rng, case["brain"], case["agents"], step, case["episode"])
            t2 = clocks()
            trainer.add_experiences(
                {trainer.brain_name: current}, {trainer.brain_name: following}, action.outputs
            )
            adding += clocks() - t2
            trainer.process_experiences({trainer.brain_name: current}, {trainer.brain_name: following})
            t3 = clocks()
            trainer.increment_step(1)
            if trainer.is_ready_update():
                trainer.update_policy()
                elapsed = clocks() - t3
                if first_update is None:
                    first_update = elapsed
                else:
                    update += elapsed
                    updates += 1
            decide += t1 - t0
            bookkeeping += t3 - t2
            current = following
        print(f"{name}: {case['agents']} agents, {steps} steps          wall ms    cpu ms")
        show("build policy (incl. tracing)", build)
        show("get_action per step", decide / steps)
        show("add+process_experiences per step", bookkeeping / steps)
        show("  add_experiences", adding / steps)
        show("  process: bootstrap values", bootstrap / steps)
        show("  process: the rest", (bookkeeping - adding - bootstrap) / steps)
        if first_update is not None:
            show("first update_policy", first_update)
        if updates:
            show(f"later update_policy (mean of {updates})", update / updates)


def clocks() -> np.ndarray:
    """(wall-clock seconds, CPU seconds of this process)."""
    return np.array([time.perf_counter(), time.process_time()])


def show(label: str, seconds: np.ndarray) -> None:
    print(f"  {label:<36} {seconds[0] * 1000:9.2f} {seconds[1] * 1000:9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=3000, help="environment steps per case")
    args = parser.parse_args()
    for name, case in CASES.items():
        run_case(name, case, args.steps)


if __name__ == "__main__":
    main()
