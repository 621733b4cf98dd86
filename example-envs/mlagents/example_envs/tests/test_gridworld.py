"""GridWorld: grid rules, masks and the camera image. Its brain, the shortest path against the
benchmark, determinism, the build over gRPC (the picture as PNG, the masks) and two workers:
test_example_contract.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.gridworld import (
    AGENT_COLOUR,
    GOAL_COLOUR,
    PIT_COLOUR,
    GridRenderer,
    GridWorld,
    read_board,
)
from mlagents.example_envs.sdk.local import LocalEnvironment

BRAIN = "GridWorldLearning"
NOOP, UP, DOWN, LEFT, RIGHT = range(5)


def act(action: int) -> dict[str, np.ndarray]:
    return {BRAIN: np.array([[action]], dtype=np.float32)}


def set_board(env: LocalEnvironment, agent, goals=(), pits=()) -> None:  # type: ignore[no-untyped-def]
    """Put the pieces where a test wants them (the board is random otherwise)."""
    scene: GridWorld = env.academy.scene
    scene.agent_cell = np.array(agent, dtype=np.int64)
    scene.goal_cells = np.array(goals, dtype=np.int64).reshape(-1, 2)
    scene.pit_cells = np.array(pits, dtype=np.int64).reshape(-1, 2)


# ---------------------------------------------------------------- brain and image
def test_reset_shows_the_picture_and_the_masks() -> None:
    env = LocalEnvironment("GridWorld", seed=0)
    batch = env.reset()[BRAIN]
    assert batch.vector_observations.shape == (1, 0)
    assert len(batch.visual_observations) == 1
    assert (
        batch.visual_observations[0].shape == (1, 84, 84, 3)
        and batch.visual_observations[0].dtype == np.uint8
    )
    assert batch.action_masks is not None and batch.action_masks.shape == (1, 5)


def test_picture_shows_ring_plus_and_cross_in_the_right_cells() -> None:
    image = GridRenderer(5).draw(np.array([0, 4]), np.array([[2, 2]]), np.array([[4, 0]]))
    cell = 84 / 5
    # Agent (0, 4) = top-left cell: a hollow square with bars 0.2 cell wide along the border.
    np.testing.assert_array_equal(image[1, 1], AGENT_COLOUR)
    np.testing.assert_array_equal(image[int(cell / 2), 1], AGENT_COLOUR)
    np.testing.assert_array_equal(image[int(cell / 2), int(cell / 2)], 0)  # hollow
    # Goal (2, 2) = centre cell: a plus (centre and arm ends green, cell corners black).
    centre = int(2.5 * cell)
    np.testing.assert_array_equal(image[centre, centre], GOAL_COLOUR)
    np.testing.assert_array_equal(image[centre, int(2 * cell + 1)], GOAL_COLOUR)
    np.testing.assert_array_equal(image[int(2 * cell + 1), centre], GOAL_COLOUR)
    np.testing.assert_array_equal(image[int(2 * cell + 1), int(2 * cell + 1)], 0)
    # Pit (4, 0) = bottom-right cell: an X (centre and diagonals red, arm positions of a plus black).
    pit = int(4.5 * cell)
    np.testing.assert_array_equal(image[pit, pit], PIT_COLOUR)
    np.testing.assert_array_equal(image[pit - 5, pit - 5], PIT_COLOUR)
    np.testing.assert_array_equal(image[pit + 5, pit - 5], PIT_COLOUR)
    np.testing.assert_array_equal(image[pit, pit - 7], 0)
    # Nothing else is drawn; shape areas are as designed (in pixels of 16.8 x 16.8 per cell).
    colours = {tuple(c) for c in image.reshape(-1, 3)}
    assert colours == {(0, 0, 0), tuple(AGENT_COLOUR), tuple(GOAL_COLOUR), tuple(PIT_COLOUR)}
    ring_area = (1.0 - 0.6**2) * cell**2
    plus_area = (2 * 0.2 - 0.04) * cell**2
    assert np.all(image == AGENT_COLOUR, axis=-1).sum() == pytest.approx(ring_area, rel=0.1)
    assert np.all(image == GOAL_COLOUR, axis=-1).sum() == pytest.approx(plus_area, rel=0.15)
    assert np.all(image == PIT_COLOUR, axis=-1).sum() == pytest.approx(plus_area, rel=0.15)


def test_picture_matches_the_board_after_every_reset() -> None:
    env = LocalEnvironment("GridWorld", seed=4)
    env.reset({"numObstacles": 2, "numGoals": 2})
    scene: GridWorld = env.academy.scene
    for _ in range(20):
        batch = env.reset()[BRAIN]
        agent, goals, pits = read_board(batch.visual_observations[0][0])
        assert agent == tuple(scene.agent_cell)
        assert goals == {tuple(c) for c in scene.goal_cells} and len(goals) == 2
        assert pits == {tuple(c) for c in scene.pit_cells} and len(pits) == 2
        assert len({agent} | goals | pits) == 5  # all on distinct cells


# ---------------------------------------------------------------- rules
@pytest.mark.parametrize(
    "cell, masked",
    [((0, 0), {LEFT, DOWN}), ((4, 4), {RIGHT, UP}), ((0, 4), {LEFT, UP}), ((4, 2), {RIGHT}), ((2, 2), set())],
)
def test_action_mask_forbids_moves_into_the_border_walls(cell, masked) -> None:  # type: ignore[no-untyped-def]
    env = LocalEnvironment("GridWorld", seed=0)
    env.reset()
    set_board(env, cell, goals=[(cell[0], (cell[1] + 2) % 5)], pits=[])
    batch = env.step(act(NOOP))[BRAIN]
    assert not batch.local_done[0]
    assert set(np.flatnonzero(batch.action_masks[0]).tolist()) == masked


def test_step_penalty_goal_pit_and_walls() -> None:
    env = LocalEnvironment("GridWorld", seed=0)
    env.reset()
    set_board(env, (0, 0), goals=[(2, 0)], pits=[(0, 1)])
    batch = env.step(act(RIGHT))[BRAIN]
    assert batch.rewards[0] == pytest.approx(-0.01) and not batch.local_done[0]
    assert tuple(env.academy.scene.agent_cell) == (1, 0)
    batch = env.step(act(DOWN))[BRAIN]  # into the wall (masked, but sent anyway): stays
    assert batch.rewards[0] == pytest.approx(-0.01)
    assert tuple(env.academy.scene.agent_cell) == (1, 0)
    batch = env.step(act(RIGHT))[BRAIN]  # onto the goal: SetReward(+1) replaces the step penalty
    assert batch.rewards[0] == 1.0 and batch.local_done[0] and not batch.max_reached[0]
    # On-demand agents reset at once: the done info already shows the next board.
    agent, goals, pits = read_board(batch.visual_observations[0][0])
    assert agent == tuple(env.academy.scene.agent_cell)

    set_board(env, (3, 3), goals=[(0, 0)], pits=[(3, 2)])
    batch = env.step(act(DOWN))[BRAIN]
    assert batch.rewards[0] == -1.0 and batch.local_done[0]


def test_episode_times_out_after_one_hundred_and_one_actions() -> None:
    env = LocalEnvironment("GridWorld", seed=0)
    env.reset()
    set_board(env, (0, 0), goals=[(4, 4)], pits=[(2, 2)])
    total = 0.0
    for action_count in range(1, 200):  # noqa: B007 (read after the loop)
        batch = env.step(act(NOOP))[BRAIN]
        total += float(batch.rewards[0])
        if batch.local_done[0]:
            break
    assert action_count == 101 and batch.max_reached[0]
    assert total == pytest.approx(-1.01, abs=1e-4)


def test_counts_are_read_at_every_reset_but_the_grid_size_only_at_start_up() -> None:
    env = LocalEnvironment("GridWorld", seed=0)
    env.reset({"gridSize": 9, "numObstacles": 4, "numGoals": 3})
    scene: GridWorld = env.academy.scene
    assert scene.grid_size == 5 and scene.renderer.grid_size == 5
    assert len(scene.pit_cells) == 4 and len(scene.goal_cells) == 3
    for _ in range(10):
        env.reset()
        cells = np.concatenate([scene.pit_cells, scene.goal_cells, scene.agent_cell[None]])
        assert cells.min() >= 0 and cells.max() <= 4
    with pytest.raises(ValueError, match="numObstacles \\+ numGoals <= 24"):
        env.reset({"numObstacles": 20, "numGoals": 5})


def test_inference_mode_decides_every_0_15_seconds() -> None:
    env = LocalEnvironment("GridWorld", seed=0, train_mode=False)
    env.reset()
    start = env.academy.total_step_count
    env.step(act(NOOP))
    env.step(act(NOOP))
    # Each decision waits until 0.15 s have passed in 0.02 s steps: 8 waiting steps + 1.
    assert env.academy.total_step_count - start == 18
    training = LocalEnvironment("GridWorld", seed=0)
    training.reset()
    start = training.academy.total_step_count
    training.step(act(NOOP))
    assert training.academy.total_step_count - start == 1
