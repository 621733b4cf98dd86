"""WallJump: brain switching, physics pieces, rewards, reset parameters, curricula, the scripted
jump sequence against the benchmark and random actions below it (episodes counted per brain).
Its brains, determinism, the build over gRPC and two workers: test_example_contract.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlagents.example_envs import wall_jump_physics as physics
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tests.playing import scene_of
from mlagents.example_envs.wall_jump import (
    BIG_BRAIN,
    JUMP_HEIGHT,
    OBSERVATION_SIZE,
    SMALL_BRAIN,
    WALL_FRONT,
    WallJump,
    jump_sequence,
)
from mlagents.example_envs.wall_jump_physics import WallJumpWorld

CURRICULA = Path(__file__).resolve().parents[4] / "config" / "curricula" / "wall-jump"
BRAINS = (SMALL_BRAIN, BIG_BRAIN)
N = 24
DT = physics.TIMESTEP
# Speed an agent sliding on the floor loses to friction per step: mu * 0.96 * g * dt (see below).
FLOOR_FRICTION_DV = physics.FRICTION * physics.GRAVITY * (1 - physics.AGENT_DRAG * DT) * DT


def area_index(env: LocalEnvironment, ids: np.ndarray) -> np.ndarray:
    """Agent ids of a DecisionBatch -> agent (= area) indices."""
    order = np.argsort(env.academy.ids)
    return order[np.searchsorted(env.academy.ids[order], np.asarray(ids))]


def zero_actions(batches) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return {name: np.zeros((len(b.agents), 4), dtype=np.float32) for name, b in batches.items()}


def random_actions(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` uniformly random discrete actions, float32 ``(count, 4)``."""
    return np.stack([rng.integers(0, n, count) for n in (3, 3, 3, 2)], axis=1).astype(np.float32)


def random_batch_actions(rng: np.random.Generator, batches) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return {name: random_actions(rng, len(b.agents)) for name, b in batches.items()}


# ---------------------------------------------------------------- the jump sequence
def episode_returns(policy: str, decisions: int, seed: int = 0) -> dict[str, list[float]]:
    """Returns of the episodes that ended within ``decisions`` decisions, per brain (like the
    trainers count them: an episode's return goes to the brain that reported its done)."""
    env = LocalEnvironment("WallJump", seed=seed)
    world = scene_of(env, WallJump).world
    rng = np.random.default_rng(seed)
    running = np.zeros(N)
    returns: dict[str, list[float]] = {name: [] for name in BRAINS}
    batches = env.reset()
    for _ in range(decisions):
        actions = {}
        for name, batch in batches.items():
            areas = area_index(env, batch.agents)
            if policy == "scripted":
                actions[name] = jump_sequence(world, areas)
            else:
                actions[name] = random_actions(rng, areas.size)
        batches = env.step(actions)
        for name, batch in batches.items():
            areas = area_index(env, batch.agents)
            running[areas] += batch.rewards
            returns[name].extend(running[areas[batch.local_done]].tolist())
            running[areas[batch.local_done]] = 0.0
    env.close()
    return returns


# ---------------------------------------------------------------- brains
def test_every_output_has_both_brains_and_all_24_agents_on_the_brain_of_their_wall() -> None:
    env = LocalEnvironment("WallJump", seed=4)
    scene = scene_of(env, WallJump)
    batches = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        assert set(batches) == set(BRAINS)
        assert sum(len(b.agents) for b in batches.values()) == N
        for batch in batches.values():
            assert batch.vector_observations.shape == (len(batch.agents), 444)
            assert batch.action_masks is None
        batches = env.step(random_batch_actions(rng, batches))
        # Agents that did not just finish an episode run the wall of their brain.
        for name, batch in batches.items():
            areas = area_index(env, batch.agents)[~batch.local_done]
            big = scene.configurations[areas] >= 2
            assert (big if name == BIG_BRAIN else ~big).all()
            heights = scene.world.wall_heights[areas]
            small = np.where(scene.configurations[areas] == 1, 4.0, 0.0)
            np.testing.assert_allclose(heights, np.where(big, 8.0, small))
    env.close()


def test_brain_switch_reports_done_to_the_old_brain_and_starts_a_fresh_stack_on_the_new_one() -> None:
    env = LocalEnvironment("WallJump", seed=2)
    scene = scene_of(env, WallJump)
    batches = env.step(zero_actions(env.reset()))
    # Agent 0 walks off the platform at once: teleport it behind the back edge.
    scene.world.place_agents(np.array([0]), np.array([[0.0, 1.0, -15.0]]))
    brain_before = env.academy.brain_of([0])[0]
    batches = env.step(zero_actions(batches))
    done_brain = [name for name, b in batches.items() if 0 in area_index(env, b.agents)]
    assert done_brain == [brain_before]
    batch = batches[brain_before]
    row = int(np.flatnonzero(area_index(env, batch.agents) == 0)[0])
    assert batch.local_done[row] and batch.rewards[row] == pytest.approx(-1.0)
    new_configuration = int(scene._pending_configuration[0])
    assert new_configuration >= 0  # drawn at the reset, applied on the next physics step
    batches = env.step(zero_actions(batches))
    expected_brain = BIG_BRAIN if new_configuration >= 2 else SMALL_BRAIN
    assert env.academy.brain_of([0]) == [expected_brain]
    batch = batches[expected_brain]
    row = int(np.flatnonzero(area_index(env, batch.agents) == 0)[0])
    assert not batch.local_done[row]
    stack = batch.vector_observations[row]
    # GiveBrain cleared the stack: only the newest frame is filled.
    assert not stack[: 5 * OBSERVATION_SIZE].any()
    assert stack[5 * OBSERVATION_SIZE :].any()
    env.close()


# ---------------------------------------------------------------- physics pieces
def _lone_world(yaw: float = 0.0) -> WallJumpWorld:
    world = WallJumpWorld(1)
    world.set_agent_yaws(None, yaw)
    world.place_blocks(np.array([0]), np.array([[-7.0, -8.0]]))
    return world


def _push(world: WallJumpWorld, dv: np.ndarray, steps: int) -> list[np.ndarray]:
    """Velocity change ``dv`` on the agent every step (the run input on the ground)."""
    trace = []
    for _ in range(steps):
        world.set_agent_velocities(None, world.agent_velocities() + dv)
        world.step()
        trace.append(world.agent_velocities()[0].copy())
    return trace


def test_running_speed_follows_drag_and_coulomb_friction_without_hopping() -> None:
    world = _lone_world()
    world.place_agents(np.array([0]), np.array([[0.0, 1.0, -13.5]]))
    trace = _push(world, np.array([0.0, 0.0, 1.5]), 150)
    # PhysX: v <- (v + 1.5) * (1 - 2 * 0.02), minus mu * (normal impulse) / m of floor friction;
    # at rest on the floor PhysX damps gravity before the contact, so the normal force is 0.96 m g.
    expected, v = [], 0.0
    for _ in range(150):
        v = (v + 1.5) * (1 - 2 * DT) - FLOOR_FRICTION_DV
        expected.append(v)
    speeds = np.array([t[2] for t in trace])
    np.testing.assert_allclose(speeds[[15, 30, 149]], np.array(expected)[[15, 30, 149]], rtol=0.05)
    assert speeds[-1] == pytest.approx((1.44 - FLOOR_FRICTION_DV) / 0.04, rel=0.02)  # ~28.9 m/s
    assert abs(world.agent_positions()[0, 1] - 1.0) < 0.005  # stays on the floor, no hopping


def test_floor_friction_stops_a_sliding_agent_at_mu_g() -> None:
    world = _lone_world()
    world.place_agents(np.array([0]), np.array([[0.0, 1.0, -10.0]]))
    for _ in range(3):
        world.step()  # settle, so that the floor's normal force is known
    world.set_agent_velocities(None, np.array([[0.0, 0.0, 5.0]]))
    speeds = [s[2] for s in _push(world, np.zeros(3), 40)]
    assert speeds[0] == pytest.approx(5.0 * (1 - 2 * DT) - FLOOR_FRICTION_DV, abs=0.005)
    assert abs(speeds[-1]) < 1e-9  # friction stops the agent and never reverses the motion


def test_free_fall_reaches_the_physx_terminal_speed_of_drag_two() -> None:
    world = _lone_world()
    world.place_agents(np.array([0]), np.array([[0.0, 100.0, -10.0]]))
    _push(world, np.zeros(3), 150)
    assert world.agent_positions()[0, 1] > 10.0  # still falling
    # PhysX damps the velocity with this step's gravity: v <- (v - g dt)(1 - d dt), d = 2,
    # which tends to the terminal speed g dt (1 - d dt) / (d dt) = 11.77 m/s.
    v = 0.0
    for _ in range(150):
        v = (v - physics.GRAVITY * DT) * (1 - 2 * DT)
    assert world.agent_velocities()[0, 1] == pytest.approx(v, rel=1e-6)
    assert v == pytest.approx(-physics.GRAVITY * DT * (1 - 2 * DT) / (2 * DT), rel=3e-3)


def test_block_slides_without_floor_friction_with_drag_one() -> None:
    world = _lone_world()
    world.place_blocks(np.array([0]), np.array([[0.0, -8.0]]))
    world.data.qvel[world._block_dof[0, 1]] = 2.0
    for _ in range(10):
        world.step()
    assert world.block_velocities()[0, 2] == pytest.approx(2.0 * 0.98**10, rel=1e-6)
    assert world.block_positions()[0, 1] == physics.BLOCK_HEIGHT


def test_agent_pushes_the_block_and_stands_on_it() -> None:
    world = _lone_world()
    world.place_blocks(np.array([0]), np.array([[0.0, -8.0]]))
    world.place_agents(np.array([0]), np.array([[0.0, 1.0, -11.0]]))
    _push(world, np.array([0.0, 0.0, 1.5]), 20)
    assert world.block_positions()[0, 2] > -7.0  # pushed toward +z
    assert world.agent_positions()[0, 2] < world.block_positions()[0, 2] - 1.9  # not through it
    world.place_blocks(np.array([0]), np.array([[0.0, -8.0]]))
    world.place_agents(np.array([0]), np.array([[0.0, 3.0, -8.0]]))
    _push(world, np.zeros(3), 20)
    assert world.agent_positions()[0, 1] == pytest.approx(3.0, abs=0.01)  # block top 2.5 + 0.5
    centers, halves = world.area_boxes()
    assert physics.small_grounded(world.agent_positions(), centers, halves)[0]
    assert physics.large_grounded(world.agent_positions(), world.agent_yaws(), centers, halves)[0]


@pytest.mark.parametrize("height, blocked", [(0.0, False), (4.0, True), (8.0, True)])
def test_wall_height_changes_the_mujoco_wall(height: float, blocked: bool) -> None:
    world = _lone_world()
    world.set_wall_heights(np.array([0]), np.array([8.0]))  # grow and shrink: bounds must follow
    world.set_wall_heights(np.array([0]), np.array([height]))
    world.place_agents(np.array([0]), np.array([[0.0, 1.0, -6.0]]))
    _push(world, np.array([0.0, 0.0, 1.5]), 40)
    z = world.agent_positions()[0, 2]
    if blocked:
        assert z == pytest.approx(WALL_FRONT - 0.5, abs=0.05)
    else:
        assert z > 0.0
    geom = world._wall_geom[0]
    top = world.data.geom_xpos[geom, 1] + world.model.geom_size[geom, 1]
    assert top == pytest.approx(max(height / 2.0, physics.WALL_BOTTOM + 0.01))


def test_ground_checks_goal_overlap_and_fall_test() -> None:
    world = _lone_world()
    centers, halves = world.area_boxes()
    positions = np.array(
        [
            [0.0, 1.0, -10.0],  # on the floor
            [0.0, 1.5, -10.0],  # 0.5 above the floor: small check yes, large check no
            [0.0, 1.6, -10.0],  # too high for both
            [0.0, 3.0, -8.0],  # on the block top
            [0.0, 11.0, -10.0],  # far above the floor: the fall ray (20) still hits it
            [10.6, 1.0, -10.0],  # centre off the side of the platform
            [0.0, 1.0, 6.4],  # centre off the far edge
            [6.7, 1.0, 3.3],  # in the goal
            [6.7, 4.0, 3.3],  # in the goal trigger, but in the air
        ]
    )
    k = len(positions)
    yaws = np.zeros(k)
    c, h = np.repeat(centers, k, axis=0), np.repeat(halves, k, axis=0)
    c[:, 2] = [0.0, 1.5, -8.0]  # the block at (0, -8)
    blocks = c[:, 2]
    np.testing.assert_array_equal(physics.small_grounded(positions, c, h), [1, 1, 0, 1, 0, 0, 0, 1, 0])
    # (the overlap box reaches 0.475 beyond the centre: over the far edge it still touches the floor)
    np.testing.assert_array_equal(physics.large_grounded(positions, yaws, c, h), [1, 0, 0, 1, 0, 0, 1, 1, 0])
    np.testing.assert_array_equal(physics.fallen(positions, blocks, c, h), [0, 0, 0, 0, 0, 1, 1, 0, 0])
    np.testing.assert_array_equal(physics.in_goal(positions, yaws), [0, 0, 0, 0, 0, 0, 0, 1, 1])
    # A turned agent reaches further: its corner enters the goal at 45 degrees.
    edge = np.array([[physics.GOAL_CENTER[0] - 2.0 - 0.6, 1.0, 3.3]])
    assert not physics.in_goal(edge, np.zeros(1))[0]
    assert physics.in_goal(edge, np.full(1, 45.0))[0]
    # The block off the platform counts as a fall too.
    assert physics.fallen(positions[:1], np.array([[0.0, 1.5, 7.0]]), c[:1], h[:1])[0]


def test_jump_rises_toward_two_point_seven_five_above_take_off_and_clears_the_small_wall() -> None:
    env = LocalEnvironment("WallJump", seed=0)
    scene = scene_of(env, WallJump)
    world = scene.world
    batches = env.reset()
    batches = env.step(zero_actions(batches))
    world.place_agents(np.arange(N), np.tile([0.0, 1.0, -12.5], (N, 1)))  # behind every block
    world.set_agent_yaws(None, 0.0)
    heights = []
    original = scene.physics_step

    def record() -> None:
        original()
        heights.append(world.agent_positions()[0, 1])

    scene.physics_step = record  # type: ignore[method-assign]
    actions = zero_actions(batches)
    for name in actions:
        actions[name][:, 3] = 1
    batches = env.step(actions)
    for _ in range(5):
        batches = env.step(zero_actions(batches))
    apex = max(heights)
    assert 3.4 < apex < 1.0 + JUMP_HEIGHT
    assert apex - 0.5 > 2.0 + 1.0  # the bottom clears a 4-high wall (top at 2) by over 1
    assert heights[-1] == pytest.approx(1.0, abs=0.05)  # and lands again
    env.close()


# ---------------------------------------------------------------- observations and rewards
def test_observation_layout_rays_position_and_ground_flag() -> None:
    env = LocalEnvironment("WallJump", seed=0)
    scene = scene_of(env, WallJump)
    world = scene.world
    env.reset()
    areas = np.arange(N)
    scene.set_wall_heights(areas, np.full(N, 4.0))
    world.place_agents(areas, np.tile([6.7, 1.0, -8.0], (N, 1)))
    world.set_agent_yaws(None, 0.0)  # facing +z: the wall, then the goal
    world.place_blocks(areas, np.tile([-7.0, -8.0], (N, 1)))
    scene._observations = None
    obs = scene.collect_observations(areas)
    assert obs.shape == (N, 74) and obs.dtype == np.float32
    ray = obs[0, :70].reshape(2, 7, 5)  # (sweep, angle, [wall, goal, block, nothing, distance])
    ahead = 2  # the third angle, 90 degrees
    np.testing.assert_allclose(ray[0, ahead], [1, 0, 0, 0, (WALL_FRONT + 8.0 - 0.5) / 20], atol=1e-5)
    rising = (physics.GOAL_CENTER[2] - 2.0 - 0.5 + 8.0) * np.hypot(20.0, 2.5) / 20.0
    np.testing.assert_allclose(ray[1, ahead], [0, 1, 0, 0, rising / 20], atol=1e-5)
    left = 4  # 180 degrees: toward -x, where the block is 13.7 away
    np.testing.assert_allclose(ray[0, left], [0, 0, 1, 0, (13.7 - 1.5 - 0.5) / 20], atol=1e-5)
    right = 0  # 0 degrees: +x, nothing within 20
    np.testing.assert_allclose(ray[0, right], [0, 0, 0, 1, 0])
    np.testing.assert_allclose(obs[0, 70:73], np.array([6.7, 1.0, -8.0 + 4.0]) / 20, atol=1e-6)
    assert obs[0, 73] == 1.0
    env.close()


def test_rewards_per_decision_goal_and_fall() -> None:
    env = LocalEnvironment("WallJump", seed=1)
    world = scene_of(env, WallJump).world
    batches = env.step(zero_actions(env.reset()))
    for batch in batches.values():
        np.testing.assert_allclose(batch.rewards, -0.0025, rtol=1e-4)  # 5 physics steps of -0.0005
        assert not batch.local_done.any()
    world.place_agents(np.array([3]), np.array([[6.7, 1.0, 3.3]]))  # into the goal
    world.place_agents(np.array([5]), np.array([[11.0, 1.0, -8.0]]))  # off the platform
    world.place_blocks(np.array([7]), np.array([[0.0, 7.0]]))  # the block off the platform
    batches = env.step(zero_actions(batches))
    rewards = {
        int(a): (float(r), bool(d))
        for b in batches.values()
        for a, r, d in zip(area_index(env, b.agents), b.rewards, b.local_done)
    }
    assert rewards[3] == (1.0, True)
    assert rewards[5] == (-1.0, True)
    # the block is put back at once, so the steps after the fall add their -0.0005 again
    assert rewards[7] == (pytest.approx(-1.002, abs=1e-5), True)
    assert rewards[4] == (pytest.approx(-0.0025, rel=1e-4), False)
    # The lost block is back in the spawn volume; reset agents are back at the near edge.
    block = world.block_positions(np.array([7]))[0]
    assert abs(block[0]) <= 8.1 and -10.0 <= block[2] <= -3.0
    position = world.agent_positions(np.array([3, 5, 7]))
    assert np.all(np.abs(position[:, 0]) <= 9.0)
    np.testing.assert_allclose(position[:, 1:], [[1.0, -12.0]] * 3)
    env.close()


def test_agent_reset_keeps_the_yaw_and_draws_positions_in_range() -> None:
    env = LocalEnvironment("WallJump", seed=5)
    world = scene_of(env, WallJump).world
    env.reset()
    np.testing.assert_allclose(world.agent_yaws(), physics.AGENT_START_YAW)  # the prefab's yaw, never reset
    position, block = world.agent_positions(), world.block_positions()
    assert np.all(np.abs(position[:, 0]) <= 9.0) and len(np.unique(position[:, 0])) == N
    np.testing.assert_allclose(position[:, 1:], np.tile([1.0, -12.0], (N, 1)))
    assert np.all(np.abs(block[:, 0]) <= 8.1) and np.all((block[:, 2] >= -10.0) & (block[:, 2] <= -3.0))
    env.close()


# ---------------------------------------------------------------- reset parameters and curricula
def test_reset_parameters_set_the_wall_height_of_each_configuration() -> None:
    env = LocalEnvironment("WallJump", seed=3)
    scene = scene_of(env, WallJump)
    config = {
        "no_wall_height": 0.5,
        "small_wall_height": 1.5,
        "big_wall_min_height": 2.0,
        "big_wall_max_height": 3.0,
    }
    batches = env.reset(config)
    batches = env.step(zero_actions(batches))  # configurations apply on the step after the reset
    c = scene.configurations
    heights = scene.world.wall_heights
    assert set(np.unique(c)) <= {0, 1, 2, 3, 4} and (c >= 2).any() and (c < 2).any()
    np.testing.assert_allclose(heights[c == 0], 0.5)
    np.testing.assert_allclose(heights[c == 1], 1.5)
    assert np.all((heights[c >= 2] >= 2.0) & (heights[c >= 2] <= 3.0))
    assert len(np.unique(heights[c >= 2])) > 1  # uniform between min and max
    # The ray sensors see the same walls.
    np.testing.assert_allclose(
        scene.cast_world._boxes.shape[scene._wall_box : scene._wall_box + N, 1], heights / 2
    )
    env.close()


def test_curricula_parse_and_reference_the_scene_reset_parameters() -> None:
    files = sorted(CURRICULA.iterdir())
    assert [f.name for f in files] == ["BigWallJumpLearning.json", "SmallWallJumpLearning.json"]
    defaults = WallJump.spec().reset_parameters
    expected = {
        "SmallWallJumpLearning": {"small_wall_height": [1.5, 2.0, 2.5, 4.0]},
        "BigWallJumpLearning": {
            "big_wall_min_height": [0.0, 4.0, 6.0, 8.0],
            "big_wall_max_height": [4.0, 7.0, 8.0, 8.0],
        },
    }
    for path in files:
        data = json.loads(path.read_text())
        brain = path.name.split(".")[0]
        assert brain in BRAINS
        assert data["measure"] == "progress"
        assert data["thresholds"] == [0.1, 0.3, 0.5]
        assert data["min_lesson_length"] == 100
        assert data["signal_smoothing"] is True
        assert data["parameters"] == expected[brain]
        for name, values in data["parameters"].items():
            assert name in defaults
            assert len(values) == len(data["thresholds"]) + 1
            assert values[-1] == defaults[name]  # the scene's defaults are the last lesson
    # And the trainers' loader accepts them against the scene's reset parameters.
    from mlagents.trainers.meta_curriculum import MetaCurriculum

    meta = MetaCurriculum(str(CURRICULA), defaults)
    assert meta.lesson_nums == {SMALL_BRAIN: 0, BIG_BRAIN: 0}
    assert meta.get_config() == {
        "small_wall_height": 1.5,
        "big_wall_min_height": 0.0,
        "big_wall_max_height": 4.0,
    }


# ---------------------------------------------------------------- controllers
@pytest.mark.slow
def test_jump_sequence_reaches_the_benchmark_on_the_small_wall_brain() -> None:
    returns = episode_returns("scripted", decisions=160)
    small = returns[SMALL_BRAIN]
    assert len(small) >= 40
    assert np.mean(small) >= 0.8 * 0.8, np.round(small, 3)


def test_random_policy_stays_far_below_the_benchmark() -> None:
    returns = episode_returns("random", decisions=120)
    small = returns[SMALL_BRAIN] + returns[BIG_BRAIN]
    assert len(small) >= 20
    assert np.mean(small) < 0.0
