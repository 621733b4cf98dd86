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
from ppo_trainer_speed import brain_info, parameters  # parameters: the default trainer section

from mlagents.envs.brain import BrainParameters
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


def resident_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def image_bytes(trainer: PPOTrainer) -> int:
    """Bytes of the camera images in the update buffer, each stored array counted once (an image
    that is one step's next observation and the following step's observation is stored once)."""
    update = trainer.training_buffer.update_buffer
    images = {
        id(image): image for key in ("visual_obs0", "next_visual_obs0") for image in dict.get(update, key, [])
    }
    return sum(image.nbytes for image in images.values())


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
        params = parameters(folder, "default")  # VisualBananaLearning has no section of its own
        params["max_steps"] = 5.0e4
        trainer = PPOTrainer(BRAIN, 1, params, True, False, 0, "bench")
        before = resident_bytes()
        current = brain_info(rng, BRAIN, AGENTS, 0, EPISODE)
        step = 0
        while (args.steps and step < args.steps) or (not args.steps and not trainer.is_ready_update()):
            step += 1
            action = trainer.policy.get_action(current)
            following = brain_info(rng, BRAIN, AGENTS, step, EPISODE)
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
