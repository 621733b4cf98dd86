"""Record the expert demonstrations ``demos/Expert<Example>.demo`` from the examples' heuristics.

    .venv/bin/python tools/record_demos.py                  # every demonstration into demos/
    .venv/bin/python tools/record_demos.py ExpertBasic Expert3DBall --folder /tmp/demos

Each example runs in-process, in training mode, seed 0, with every brain on its heuristic
(the build's ``--brain-type BRAIN=heuristic``) and the demonstration recorder on the brain named
in ``mlagents.example_envs.expert_demos.EXPERT_DEMOS``; prints the size, steps and episodes of
every file written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import mlagents.example_envs.registry  # noqa: F401  (registers the examples)
from mlagents.example_envs.expert_demos import EXPERT_DEMOS, ExpertDemo, record_scene
from mlagents.trainers.demo_loader import read_demonstration_file

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="demonstrations to record (default: all)")
    parser.add_argument("--folder", default=str(ROOT / "demos"))
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    known = {demo.name: demo for demo in EXPERT_DEMOS}
    unknown = [name for name in options.names if name not in known]
    if unknown:
        sys.stderr.write(f"Unknown demonstrations {unknown}; known: {', '.join(known)}.\n")
        return 2
    chosen = [known[name] for name in options.names] if options.names else list(EXPERT_DEMOS)
    by_scene: dict[str, list[ExpertDemo]] = {}
    for demo in chosen:
        by_scene.setdefault(demo.scene, []).append(demo)
    for scene, demos in by_scene.items():
        start = time.perf_counter()
        paths = record_scene(scene, demos, options.folder, seed=options.seed)
        seconds = time.perf_counter() - start
        for path in paths:
            meta, _, _ = read_demonstration_file(path)
            size = Path(path).stat().st_size
            print(
                f"{Path(path).name:24s} {scene:14s} {meta.number_steps:6d} steps "
                f"{meta.number_episodes:5d} episodes  mean reward {meta.mean_reward:8.3f}  "
                f"{size / 1e6:6.2f} MB  ({seconds:.0f} s for the scene)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
