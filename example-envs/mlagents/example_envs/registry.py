"""Where each example environment lives: build name -> "module:Scene class".

The launchers in example-envs/builds/ and the benchmarks look scenes up here.
Imports are lazy so that starting one build does not import every scene.
"""

from __future__ import annotations

import importlib

from .sdk.scene import Scene

SCENES: dict[str, str] = {
    "Basic": "mlagents.example_envs.basic:Basic",
    "3DBall": "mlagents.example_envs.ball3d:Ball3D",
    "3DBallHard": "mlagents.example_envs.ball3d:Ball3DHard",
    "GridWorld": "mlagents.example_envs.gridworld:GridWorld",
    "Hallway": "mlagents.example_envs.hallway:Hallway",
    "PushBlock": "mlagents.example_envs.push_block:PushBlock",
    "WallJump": "mlagents.example_envs.wall_jump:WallJump",
    "Bouncer": "mlagents.example_envs.bouncer:Bouncer",
    "Reacher": "mlagents.example_envs.reacher:Reacher",
    "Tennis": "mlagents.example_envs.tennis:Tennis",
}


def load_scene(name: str) -> type[Scene]:
    """The Scene class of the example called ``name`` (e.g. "3DBall").

    :raises KeyError: with the list of known examples when ``name`` is unknown.
    """
    try:
        target = SCENES[name]
    except KeyError:
        known = ", ".join(sorted(SCENES))
        raise KeyError(f"There is no example environment called '{name}'. Known examples: {known}.") from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)
