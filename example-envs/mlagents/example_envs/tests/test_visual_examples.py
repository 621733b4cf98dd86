"""The visual examples (VisualHallway, VisualPushBlock, VisualPyramids, VisualFoodCollector): brain
parameters, pictures rendered offscreen from the scene's state (they change when the agent turns,
show what is in front of the agent in its colour), the same seed gives the same frames, and the
builds send the same pictures over gRPC as the scenes in process."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.sdk.scene import CameraResolution
from mlagents.example_envs.visual_food_collector import VisualFoodCollector
from mlagents.example_envs.visual_hallway import VisualHallway
from mlagents.example_envs.visual_push_block import VisualPushBlock
from mlagents.example_envs.visual_pyramids import VisualPyramids

# OpenGL and TensorFlow cannot share a process: these run in one of their own (see conftest.py).
pytestmark = pytest.mark.renders


@dataclass(frozen=True)
class Case:
    name: str
    scene: type
    brain: str
    branches: tuple[int, ...]
    agents: int
    max_step: int
    interval: int
    academy_max_steps: int
    reset_parameters: dict[str, float]
    turn: tuple[float, ...]  # an action that turns the agent


CASES = [
    Case("VisualHallway", VisualHallway, "VisualHallwayLearning", (5,), 1, 3000, 6, 0, {}, (3.0,)),
    Case(
        "VisualPushBlock",
        VisualPushBlock,
        "VisualPushBlockLearning",
        (7,),
        1,
        5000,
        5,
        0,
        {"dynamic_friction": 0.0, "static_friction": 0.0, "block_drag": 0.5, "block_scale": 2.0},
        (3.0,),
    ),
    Case("VisualPyramids", VisualPyramids, "VisualPyramidsLearning", (5,), 1, 5000, 5, 0, {}, (3.0,)),
    Case(
        "VisualFoodCollector",
        VisualFoodCollector,
        "VisualBananaLearning",
        (3, 3, 3, 2),
        8,
        5000,
        5,
        1500,
        {},
        (0.0, 0.0, 1.0, 0.0),
    ),
]
IDS = [case.name for case in CASES]


def actions(case: Case, action: tuple[float, ...]) -> dict[str, np.ndarray]:
    return {case.brain: np.tile(np.array(action, np.float32), (case.agents, 1))}


def random_actions(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    columns = [rng.integers(0, size, case.agents) for size in case.branches]
    return {case.brain: np.stack(columns, axis=1).astype(np.float32)}


def images(batch) -> np.ndarray:  # type: ignore[no-untyped-def]
    (camera,) = batch.visual_observations
    return camera


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_brain_parameters(case: Case) -> None:
    spec = case.scene.spec()
    (brain,) = spec.brains
    assert brain.name == case.brain
    assert brain.vector_observation_size == 0 and brain.num_stacked_vector_observations == 1
    assert brain.camera_resolutions == (CameraResolution(84, 84, gray_scale=False),)
    assert brain.vector_action_space_type == "discrete" and brain.vector_action_size == case.branches
    (group,) = spec.agents
    assert (group.brain, group.count, group.max_step, group.decision_interval, group.on_demand) == (
        case.brain,
        case.agents,
        case.max_step,
        case.interval,
        False,
    )
    assert spec.academy_max_steps == case.academy_max_steps
    assert spec.reset_parameters == case.reset_parameters


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_turning_changes_the_picture_and_the_same_seed_the_same_frames(case: Case) -> None:
    def run(seed: int) -> np.ndarray:
        env = LocalEnvironment(case.name, seed=seed)
        frames = [images(env.reset()[case.brain])]
        for _ in range(3):
            frames.append(images(env.step(actions(case, case.turn))[case.brain]))
        env.close()
        return np.stack(frames)

    frames = run(0)
    assert frames.shape == (4, case.agents, 84, 84, 3) and frames.dtype == np.uint8
    for before, after in zip(frames[:-1], frames[1:]):
        assert all(not np.array_equal(x, y) for x, y in zip(before, after))  # every agent's view moved
    changed = np.abs(frames[0].astype(int) - frames[-1].astype(int)).max(axis=-1) > 8
    assert np.all(changed.mean(axis=(1, 2)) > 0.02)  # and after three turns, clearly
    assert np.all(frames.reshape(4, case.agents, -1).std(axis=-1) > 5.0)  # pictures, not flat colours
    np.testing.assert_array_equal(frames, run(0))
    assert not np.array_equal(frames, run(1))


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


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_build_over_grpc_sends_the_in_process_pictures(case: Case, open_build) -> None:  # type: ignore[no-untyped-def]
    wire = open_build(case.name, seed=5)
    local = LocalEnvironment(case.name, seed=5)
    rng = np.random.default_rng(0)
    info, batch = wire.reset(train_mode=True)[case.brain], local.reset()[case.brain]
    for decision in range(4):
        (camera,) = info.visual_observations
        sent = np.stack(camera)
        assert sent.shape == (case.agents, 84, 84, 3)
        np.testing.assert_array_equal(np.round(sent * 255.0).astype(np.uint8), images(batch))
        assert info.vector_observations.shape == (case.agents, 0)
        if decision < 3:
            step = random_actions(case, rng)
            info, batch = wire.step(step)[case.brain], local.step(step)[case.brain]
    local.close()
