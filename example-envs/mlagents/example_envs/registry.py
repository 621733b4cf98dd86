"""The example catalogue: build name -> "module:Scene class", registered in the SDK's scene
catalogue (:mod:`mlagents.example_envs.sdk.catalogue`) when this module is imported.

The launchers in example-envs/builds/ (through ``python -m mlagents.example_envs``) and the
benchmarks import it. The scenes themselves are imported only when one is looked up.
"""

from __future__ import annotations

from .sdk.catalogue import find_scene, register_scene
from .sdk.scene import Scene

__all__ = ["SCENES", "load_scene"]

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
    "FoodCollector": "mlagents.example_envs.food_collector:FoodCollector",
    "Pyramids": "mlagents.example_envs.pyramids:Pyramids",
    "SoccerTwos": "mlagents.example_envs.soccer:SoccerTwos",
    "VisualHallway": "mlagents.example_envs.visual_hallway:VisualHallway",
    "VisualPushBlock": "mlagents.example_envs.visual_push_block:VisualPushBlock",
    "VisualPyramids": "mlagents.example_envs.visual_pyramids:VisualPyramids",
    "VisualFoodCollector": "mlagents.example_envs.visual_food_collector:VisualFoodCollector",
    "CrawlerStatic": "mlagents.example_envs.crawler:CrawlerStatic",
    "CrawlerDynamic": "mlagents.example_envs.crawler:CrawlerDynamic",
    "Walker": "mlagents.example_envs.walker:Walker",
}

for _name, _path in SCENES.items():
    register_scene(_name, _path)


def load_scene(name: str) -> type[Scene]:
    """The Scene class of the example called ``name`` (e.g. "3DBall").

    :raises KeyError: with the list of known examples when ``name`` is unknown.
    """
    return find_scene(name)
