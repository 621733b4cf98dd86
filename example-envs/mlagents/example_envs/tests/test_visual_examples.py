"""The visual examples (VisualHallway, VisualPushBlock, VisualPyramids, VisualFoodCollector):
pictures rendered offscreen from the scene's state change when the agent turns and show what is in
front of the agent in its colour. Their brains, the same seed giving the same frames, and the
builds sending the same pictures over gRPC as the scenes in process: test_example_contract.py."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.visual_hallway import VisualHallway
from mlagents.example_envs.visual_push_block import VisualPushBlock
from mlagents.example_envs.visual_pyramids import VisualPyramids

# OpenGL and TensorFlow cannot share a process: these run in one of their own (see conftest.py).
pytestmark = pytest.mark.renders


@dataclass(frozen=True)
class Case:
    name: str
    brain: str
    agents: int
    turn: tuple[float, ...]  # an action that turns the agent


CASES = [
    Case("VisualHallway", "VisualHallwayLearning", 1, (3.0,)),
    Case("VisualPushBlock", "VisualPushBlockLearning", 1, (3.0,)),
    Case("VisualPyramids", "VisualPyramidsLearning", 1, (3.0,)),
    Case("VisualFoodCollector", "VisualBananaLearning", 8, (0.0, 0.0, 1.0, 0.0)),
]
IDS = [case.name for case in CASES]


def actions(case: Case, action: tuple[float, ...]) -> dict[str, np.ndarray]:
    return {case.brain: np.tile(np.array(action, np.float32), (case.agents, 1))}


def images(batch) -> np.ndarray:  # type: ignore[no-untyped-def]
    (camera,) = batch.visual_observations
    return camera


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_turning_changes_the_picture(case: Case) -> None:
    env = LocalEnvironment(case.name, seed=0)
    frames = [images(env.reset()[case.brain])]
    for _ in range(3):
        frames.append(images(env.step(actions(case, case.turn))[case.brain]))
    env.close()
    frames = np.stack(frames)
    assert frames.shape == (4, case.agents, 84, 84, 3) and frames.dtype == np.uint8
    for before, after in zip(frames[:-1], frames[1:]):
        assert all(not np.array_equal(x, y) for x, y in zip(before, after))  # every agent's view moved
    changed = np.abs(frames[0].astype(int) - frames[-1].astype(int)).max(axis=-1) > 8
    assert np.all(changed.mean(axis=(1, 2)) > 0.02)  # and after three turns, clearly
    assert np.all(frames.reshape(4, case.agents, -1).std(axis=-1) > 5.0)  # pictures, not flat colours


def centre(image: np.ndarray) -> np.ndarray:
    """Mean colour (float RGB 0..255) of the middle 20 x 20 pixels of an image."""
    return image[32:52, 32:52].reshape(-1, 3).mean(axis=0)


def test_hallway_shows_the_goal_colours_and_flashes_the_floor() -> None:
    env = LocalEnvironment("VisualHallway", seed=0)
    env.reset()
    scene: VisualHallway = env.academy.scene
    orange_goal, red_goal = scene.goal_positions()
    still = actions(CASES[0], (0.0,))
    seen = {}
    for colour, goal in (("orange", orange_goal[0]), ("red", red_goal[0])):
        # 8 m in front of the goal's front face (z = 6.5), facing it (yaw 0 = +z)
        scene.world.place_agents(np.array([0]), np.array([[goal[0], 1.0, goal[2] - 10.5]]), np.zeros(1))
        seen[colour] = centre(images(env.step(still)["VisualHallwayLearning"])[0])
    r, g, b = seen["orange"]
    assert r > 1.3 * b and g > 1.2 * b  # orange: red and green well above blue
    r, g, b = seen["red"]
    assert r > 1.5 * g and r > 1.3 * b
    assert seen["orange"][1] > seen["red"][1] + 20  # orange has much more green than red

    # the floor (bottom rows) turns green after the right goal, red after the wrong one
    floor = images(env.step(still)["VisualHallwayLearning"])[0][-6:].reshape(-1, 3).mean(0)
    right = orange_goal[0] if scene.selection[0] == 0 else red_goal[0]
    scene.world.place_agents(np.array([0]), np.array([[right[0], 1.0, right[2] - 3.2]]), np.zeros(1))
    batch = env.step(actions(CASES[0], (1.0,)))["VisualHallwayLearning"]
    assert batch.local_done[0] and batch.rewards[0] == pytest.approx(1.0, abs=0.01)
    flashed = images(env.step(still)["VisualHallwayLearning"])[0][-6:].reshape(-1, 3).mean(0)
    assert flashed[1] > flashed[0] + 30 and flashed[1] > flashed[2] + 30  # green
    assert abs(floor[0] - floor[1]) < 10  # it was white (grey-lit)


def test_push_block_shows_the_block_at_its_scale() -> None:
    def block_pixels(scale: float) -> int:
        env = LocalEnvironment("VisualPushBlock", seed=0)
        env.reset({"block_scale": scale})
        scene: VisualPushBlock = env.academy.scene
        block = scene.world.block_positions[0]
        scene.world.place_agents(np.array([0]), np.array([[block[0], 1.0, block[2] - 6.0]]))
        scene.world.agent_yaws[0] = 0.0
        image = images(env.step(actions(CASES[1], (0.0,)))["VisualPushBlockLearning"])[0].astype(int)
        env.close()
        orange = (image[..., 0] > image[..., 2] + 80) & (image[..., 1] > image[..., 2] + 40)
        return int(orange.sum())

    small, large = block_pixels(1.0), block_pixels(3.0)
    assert small > 10 and large > 2.5 * small


def test_pyramids_button_turns_green_when_pressed() -> None:
    env = LocalEnvironment("VisualPyramids", seed=0)
    env.reset()
    scene: VisualPyramids = env.academy.scene
    switch = scene.switch_positions[0]
    scene.world.place_agents(np.array([0]), np.array([[switch[0], 1.0, switch[2] - 6.0]]), np.zeros(1))
    brain = "VisualPyramidsLearning"
    before = images(env.step(actions(CASES[2], (0.0,)))[brain])[0].astype(int)
    scene.switch_on[0] = True
    after = images(env.step(actions(CASES[2], (0.0,)))[brain])[0].astype(int)

    def reddish(image: np.ndarray) -> int:
        return int((image[..., 0] > image[..., 1] + 40).sum())

    def greenish(image: np.ndarray) -> int:
        return int((image[..., 1] > image[..., 0] + 40).sum())

    assert reddish(before) > 100 and greenish(before) == 0  # the red button 4 m ahead
    assert greenish(after) > 100 and reddish(after) == 0


def test_food_collector_cameras_are_per_agent() -> None:
    env = LocalEnvironment("VisualFoodCollector", seed=0)
    batch = env.reset()["VisualBananaLearning"]
    frames = images(batch).reshape(8, -1)
    assert len({row.tobytes() for row in frames}) == 8  # every agent sees its own view
