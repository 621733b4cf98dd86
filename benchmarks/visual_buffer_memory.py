"""How much memory does the PPO trainer's experience buffer take for a camera scene?

Drives PPOTrainer with synthetic BrainInfos shaped like VisualFoodCollector (brain
VisualBananaLearning: 8 agents, one 84 x 84 RGB camera, no vector observation, discrete
[3, 3, 3, 2], the default section's buffer of 10240 steps) until the update buffer is full and
prints the bytes of the images held by the update buffer, the growth of the process's resident
memory while collecting, and with --update how much one policy update adds to its peak, also as a
share of the buffer's images (an update that stacked all of them into one array would add about
100% more).

    python benchmarks/visual_buffer_memory.py [--steps N] [--update]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
from ppo_trainer_speed import parameters  # the default section of config/trainer_config.yaml

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.ppo.trainer import PPOTrainer

AGENTS = 8
EPISODE = 500  # decisions per episode (maxStep 5000, decision interval 10)
BRAIN = BrainParameters(
    "VisualBananaLearning",
    0,
    1,
    [{"height": 84, "width": 84, "blackAndWhite": False}],
    [3, 3, 3, 2],
    ["", "", "", ""],
    "discrete",
)


def brain_info(rng: np.random.Generator, step: int) -> BrainInfo:
    """A decision of the 8 agents: camera images as the envs API decodes them (k / 255, float64)."""
    done = (step % EPISODE) == EPISODE - 1
    images = [rng.integers(0, 256, size=(84, 84, 3)) / 255.0 for _ in range(AGENTS)]
    return BrainInfo(
        visual_observation=[images],
        vector_observation=np.zeros((AGENTS, 0)),
        text_observations=[""] * AGENTS,
        memory=np.zeros((0, 0)),
        reward=list(rng.normal(size=AGENTS)),
        agents=[f"$0-{i}" for i in range(AGENTS)],
        local_done=[done] * AGENTS,
        vector_action=np.zeros((AGENTS, 4)),
        text_action=[[] for _ in range(AGENTS)],
        max_reached=[False] * AGENTS,
        action_mask=np.ones((AGENTS, 11)),
    )


def resident_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def image_bytes(trainer: PPOTrainer) -> int:
    """Bytes of the camera images in the update buffer."""
    update = trainer.training_buffer.update_buffer
    return sum(
        image.nbytes for key in ("visual_obs0", "next_visual_obs0") for image in dict.get(update, key, [])
    )


def peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--steps", type=int, default=0, help="decisions to collect (default: until the buffer is full)"
    )
    parser.add_argument("--update", action="store_true", help="then run one policy update")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        trainer = PPOTrainer(BRAIN, 1, parameters(folder, dict(max_steps=5.0e4)), True, False, 0, "bench")
        before = resident_bytes()
        current = brain_info(rng, 0)
        step = 0
        while (args.steps and step < args.steps) or (not args.steps and not trainer.is_ready_update()):
            step += 1
            action = trainer.policy.get_action(current)
            following = brain_info(rng, step)
            trainer.add_experiences(
                {BRAIN.brain_name: current}, {BRAIN.brain_name: following}, action.outputs
            )
            trainer.process_experiences({BRAIN.brain_name: current}, {BRAIN.brain_name: following})
            trainer.increment_step(1)
            current = following
            if step % 200 == 0:
                print(
                    f"  {step} decisions, update buffer {trainer.training_buffer.update_buffer.num_experiences()}"
                )
        held = image_bytes(trainer)
        grown = resident_bytes() - before
        experiences = trainer.training_buffer.update_buffer.num_experiences()
        peak_before = peak_bytes()
        if args.update:
            trainer.update_policy()
        peak = peak_bytes()
    mib = 1024.0 * 1024.0
    print(
        f"VisualFoodCollector-like: {AGENTS} agents, {step} decisions, {experiences} experiences in the update buffer"
    )
    print(f"  images in the update buffer   {held / mib:9.1f} MiB")
    print(f"  resident memory grew by       {grown / mib:9.1f} MiB while collecting")
    print(f"  peak resident memory          {peak_before / mib:9.1f} MiB before the update")
    if args.update:
        added = peak - peak_before
        print(
            f"  the update added to the peak  {added / mib:9.1f} MiB ({100.0 * added / max(held, 1):.0f}% of the images)"
        )


if __name__ == "__main__":
    main()
