"""Pyramids: press the switch, topple the brick pyramid that appears, touch the gold brick.

Sixteen walled 100 x 100 areas, each split into a 3 x 3 grid of rooms joined by doors, one
agent each on brain ``PyramidsLearning`` (discrete, one branch of 5: 0 none, 1 forward,
2 backward, 3 turn +4 degrees, 4 turn -4 degrees; a move is a velocity change of 2 m/s per
physics step). Every episode the nine rooms are shuffled: the agent starts in the first, the
switch stands in the second, the brick pyramid will appear in the third when the agent
touches the switch, and the other six hold a stone pyramid each. The gold brick sits on top
of the brick pyramid: the agent must knock the pyramid over and touch the gold.
Observation (172): three sweeps of seven sphere casts (length 35; tags block, wall, goal,
switchOff, switchOn, stone): angles 20, 90, 160, 45, 135, 70, 110 level; 25, 95, 165, 50,
140, 75, 115 rising 5 per 35; 15, 85, 155, 40, 130, 65, 105 rising 10 per 35; then the
switch state (1 on) and the agent's velocity in its own frame (x, y, z).
Rewards: -1/5000 per physics step; touching the gold sets the reward to +2 and ends the
episode. maxStep 5000, decision every 5 physics steps. No reset parameters.

Physics: see ``pyramids_physics``.
"""

from __future__ import annotations

import numpy as np

from .box_arena import (
    TIMESTEP,
    AreaScene,
    add_area_boxes,
    forward_vectors,
    right_vectors,
    velocity_changes,
)
from .pyramids_physics import (
    GOLD_HALF,
    GROUND,
    PYRAMID_ROOT_Y,
    SWITCH_CENTER_Y,
    SWITCH_HALF,
    SWITCH_REST_Y,
    WALLS,
    BrickPyramid,
    PlanarPyramidsWorld,
    stone_layer_boxes,
)
from .pyramids_rays import ReachCastWorld, SweepPerception
from .sdk.messages import DecisionBatch
from .sdk.scene import EngineConfiguration, SceneSpec

BRAIN = "PyramidsLearning"
NUM_AGENTS = 16
MAX_STEP = 5000
DECISION_INTERVAL = 5
RUN_SPEED = 2.0
TURN_DEGREES = 200.0 * TIMESTEP  # 4 degrees per physics step
STEP_PENALTY = -1.0 / MAX_STEP
GOLD_REWARD = 2.0

RAY_DISTANCE = 35.0
DETECTABLE_TAGS = ("block", "wall", "goal", "switchOff", "switchOn", "stone")
SWEEPS = (
    ((20.0, 90.0, 160.0, 45.0, 135.0, 70.0, 110.0), 0.0),
    ((25.0, 95.0, 165.0, 50.0, 140.0, 75.0, 115.0), 5.0),
    ((15.0, 85.0, 155.0, 40.0, 130.0, 65.0, 105.0), 10.0),
)
OBSERVATION_SIZE = sum(len(angles) for angles, _ in SWEEPS) * (len(DETECTABLE_TAGS) + 2) + 4

#: centres of the nine spawn squares (x, z), in order
SQUARES = np.array([[x, z] for z in (-30.0, 0.0, 30.0) for x in (-30.0, 0.0, 30.0)])
SQUARE_HALF_RANGE = 25.0 / 2.1

_TURN = np.array([0.0, 0.0, 0.0, TURN_DEGREES, -TURN_DEGREES])
_FORWARD = np.array([0.0, 1.0, -1.0, 0.0, 0.0])
_PARKED = -1000.0  # y of ray-sensor boxes that are not in the scene


class Pyramids(AreaScene):
    """Pyramids: brain ``PyramidsLearning``, 16 agents (one per area), 172 observations,
    discrete [5]."""

    brain_name = BRAIN
    #: VisualPyramids has one area
    num_agents = NUM_AGENTS
    world: PlanarPyramidsWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return cls.area_spec(
            OBSERVATION_SIZE,
            moves=5,
            stacked=1,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            training=EngineConfiguration(80, 80, 1, 100.0, -1),
        )

    def initialize(self) -> None:
        n = self.num_agents
        self.world = w = PlanarPyramidsWorld(n)
        self.origins = w.origins
        self.areas = np.arange(n)
        self.pyramids = [BrickPyramid() for _ in range(n)]
        self.switch_on = np.zeros(n, dtype=bool)
        self.switch_positions = np.zeros((n, 3))
        self.brick_roots = np.zeros((n, 3))  # where the brick pyramid appears (root, world)
        self.stone_roots = np.zeros((n, 6, 3))
        cast = ReachCastWorld()
        parked = np.tile([0.0, _PARKED, 0.0], (n, 1))
        half = np.tile(SWITCH_HALF, (n, 1))
        self._switch_off_box = cast.add_boxes(parked, half, 0.0, "switchOff", self.areas)
        self._switch_on_box = cast.add_boxes(parked, half, 0.0, "switchOn", self.areas)
        _, layer_half = stone_layer_boxes(np.zeros((1, 3)))
        self._stone_box = cast.add_boxes(
            np.tile([0.0, _PARKED, 0.0], (n * 24, 1)),
            np.tile(layer_half, (n * 6, 1)),
            0.0,
            "stone",
            np.repeat(self.areas, 24),
        )
        self._brick_box = cast.add_boxes(
            np.tile([0.0, _PARKED, 0.0], (n * 25, 1)),
            np.full((n * 25, 3), 0.5),
            0.0,
            "block",
            np.repeat(self.areas, 25),
        )
        self._gold_box = cast.add_boxes(parked, np.full((n, 3), GOLD_HALF), 0.0, "goal", self.areas)
        add_area_boxes(cast, self.origins, WALLS, "wall", self.areas)
        add_area_boxes(cast, self.origins, [GROUND], None, self.areas)
        self.cast_world = cast
        # the three sweeps as one sensor: the observation of three RayPerception3D side by side
        self.sensor = SweepPerception(RAY_DISTANCE, SWEEPS, DETECTABLE_TAGS)

    # ---- reset ----
    def _points_in_squares(self, squares: np.ndarray) -> np.ndarray:
        """Random points (area frame, at height 0) in the spawn squares ``squares`` ``(k,)``."""
        offset = self.academy.rng.uniform(-SQUARE_HALF_RANGE, SQUARE_HALF_RANGE, (len(squares), 2))
        xz = SQUARES[squares] + offset
        return np.stack([xz[:, 0], np.zeros(len(squares)), xz[:, 1]], axis=1)

    def agent_reset(self, agents: np.ndarray) -> None:
        rng = self.academy.rng
        w = self.world
        for a in agents.tolist():
            order = rng.permutation(9)
            points = self._points_in_squares(order)
            origin = self.origins[a]
            w.place_agents(np.array([a]), origin + points[[0]], rng.integers(0, 360, 1).astype(float))
            self.switch_positions[a] = origin + points[1] + [0.0, SWITCH_REST_Y, 0.0]
            self.switch_on[a] = False
            self.brick_roots[a] = origin + points[2] + [0.0, PYRAMID_ROOT_Y, 0.0]
            self.stone_roots[a] = origin + points[3:]
            pyramid = self.pyramids[a]
            pyramid.deactivate()
            pyramid.set_scenery(points[1], points[3:])
        w.place_switches(agents, self.switch_positions[agents])
        w.place_stones(agents, self.stone_roots[agents])
        centers, _ = stone_layer_boxes(self.stone_roots.reshape(-1, 3))
        self.cast_world.update_boxes(self._stone_box, centers.reshape(-1, 3))

    # ---- observations ----
    def _sync_cast_world(self) -> None:
        n = self.num_agents
        switch = self.switch_positions + [0.0, SWITCH_CENTER_Y, 0.0]
        parked = switch * [1.0, 0.0, 1.0] + [0.0, _PARKED, 0.0]
        on = self.switch_on[:, None]
        self.cast_world.update_boxes(self._switch_off_box, np.where(on, parked, switch))
        self.cast_world.update_boxes(self._switch_on_box, np.where(on, switch, parked))
        bricks = np.tile([0.0, _PARKED, 0.0], (n, 25, 1))
        brick_yaws = np.zeros((n, 25))
        gold = np.tile([0.0, _PARKED, 0.0], (n, 1))
        gold_yaws = np.zeros(n)
        for a, pyramid in enumerate(self.pyramids):
            if pyramid.active:
                yaws = pyramid.yaws
                bricks[a] = self.origins[a] + pyramid.brick_positions
                brick_yaws[a] = yaws[:25]
                gold[a] = self.origins[a] + pyramid.gold_position
                gold_yaws[a] = yaws[25]
        self.cast_world.update_boxes(self._brick_box, bricks.reshape(-1, 3), brick_yaws.ravel())
        self.cast_world.update_boxes(self._gold_box, gold, gold_yaws)

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        self._sync_cast_world()
        w = self.world
        positions, yaws = w.agent_positions[agents], w.agent_yaws[agents]
        obs = np.empty((agents.size, OBSERVATION_SIZE), dtype=np.float32)
        sensor = self.sensor
        column = sensor.observation_size
        forwards = forward_vectors(yaws) if sensor.all_ahead else None
        with self.cast_world.aimed(positions, forwards, RAY_DISTANCE):
            obs[:, :column] = sensor.perceive(self.cast_world, positions, yaws, agents)
        velocity = w.agent_velocities[agents]
        obs[:, column] = self.switch_on[agents]
        obs[:, column + 1] = (velocity * right_vectors(yaws)).sum(axis=1)
        obs[:, column + 2] = velocity[:, 1]
        obs[:, column + 3] = (velocity * forward_vectors(yaws)).sum(axis=1)
        return obs

    # ---- step ----
    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return switch_then_gold(self)[agents]

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        w = self.world
        action = actions[:, 0].astype(np.int64)
        w.agent_yaws[agents] += _TURN[action]
        w.add_velocity(agents, velocity_changes(w.agent_yaws[agents], _FORWARD[action] * RUN_SPEED))
        self.academy.add_reward(agents, STEP_PENALTY)

    def physics_step(self) -> None:
        w = self.world
        positions, velocities = w.agent_positions, w.agent_velocities
        touched = w.step()
        pressed = touched[~self.switch_on[touched]]
        for a in pressed.tolist():
            # PyramidSwitch: on, and the brick pyramid appears in the remembered square
            self.switch_on[a] = True
            self.pyramids[a].spawn(self.brick_roots[a] - self.origins[a])
        local = positions - self.origins
        yaws = w.agent_yaws.tolist()
        winners = [
            a
            for a, pyramid in enumerate(self.pyramids)
            if pyramid.active and pyramid.step(local[a], velocities[a], yaws[a])
        ]
        if winners:
            won = np.array(winners)
            self.academy.set_reward(won, GOLD_REWARD)
            self.academy.done(won)


# ---------------------------------------------------------------- scripted player
_DOOR_X = (-28.84, -0.2, 28.6)  # door centres (x) in the walls at z = -15 and z = +15, per column
_DOOR_Z = (-28.8, -0.85, 27.95)  # door centres (z) in the walls at x = -15 and x = +15, per row


def _room(local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column and row (0..2) of area-frame points ``(k, 3)``."""
    return np.digitize(local[:, 0], (-15.0, 15.0)), np.digitize(local[:, 2], (-15.0, 15.0))


def _next_waypoint(local: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Area-frame waypoints ``(k, 3)`` toward ``target`` ``(k, 3)`` through the room doors:
    first along the row to the target's column, then along the column."""
    col, row = _room(local)
    tcol, trow = _room(target)
    out = target.copy()
    move_x = col != tcol
    step = np.sign(tcol - col)
    wall_x = np.where(step > 0, np.where(col == 0, -15.0, 15.0), np.where(col == 2, 15.0, -15.0))
    door_z = np.array(_DOOR_Z)[row]
    out[move_x, 0] = wall_x[move_x] + 3.0 * step[move_x]
    out[move_x, 2] = door_z[move_x]
    move_z = ~move_x & (row != trow)
    step = np.sign(trow - row)
    wall_z = np.where(step > 0, np.where(row == 0, -15.0, 15.0), np.where(row == 2, 15.0, -15.0))
    door_x = np.array(_DOOR_X)[col]
    out[move_z, 2] = wall_z[move_z] + 3.0 * step[move_z]
    out[move_z, 0] = door_x[move_z]
    # not yet lined up with the door: first get in front of it
    in_front = np.where(move_x, np.abs(local[:, 2] - door_z) < 3.0, np.abs(local[:, 0] - door_x) < 3.0)
    before = (move_x | move_z) & ~in_front
    out[before & move_x, 0] = wall_x[before & move_x] - 4.0 * np.sign(tcol - col)[before & move_x]
    out[before & move_z, 2] = wall_z[before & move_z] - 4.0 * np.sign(trow - row)[before & move_z]
    return out


def switch_then_gold(scene: Pyramids) -> np.ndarray:
    """A scripted decision for the 16 agents, float32 ``(16, 1)``: go room by room through the
    doors to the switch, then to the brick pyramid and straight through it, then to the gold
    once it lies on the floor (and through the pyramid again while it does not). Stone
    pyramids near the way push the heading aside. Turns while off by more than 12 degrees,
    moves forward while slower than 7 m/s (14 m/s when ramming)."""
    w = scene.world
    pos = w.agent_positions
    local = pos - scene.origins
    target = scene.switch_positions - scene.origins
    ramming = np.zeros(len(scene.pyramids), dtype=bool)
    for a, pyramid in enumerate(scene.pyramids):
        if not pyramid.active:
            continue
        gold = pyramid.gold_position
        root = scene.brick_roots[a] - scene.origins[a] + [0.6, 0.0, 0.8]
        if gold[1] < 2.6:
            target[a] = gold
        else:
            target[a] = root
            ramming[a] = np.linalg.norm((root - local[a])[[0, 2]]) < 12.0
    waypoint = _next_waypoint(local, target)
    direction = (waypoint - local)[:, [0, 2]]
    direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-9)
    # stone pyramids (footprint centre ~ root + (0.43, 0.78)) within 7 m push the heading away
    stones = (scene.stone_roots - scene.origins[:, None, :])[..., [0, 2]] + [0.43, 0.78]
    away = local[:, None, [0, 2]] - stones
    distance = np.linalg.norm(away, axis=2)
    push = (
        away / np.maximum(distance, 1e-9)[..., None] * np.clip(7.0 - distance, 0.0, None)[..., None] / 3.0
    ).sum(1)
    heading = direction + push
    desired = np.degrees(np.arctan2(heading[:, 0], heading[:, 1]))
    error = (desired - w.agent_yaws + 180.0) % 360.0 - 180.0
    speed = np.linalg.norm(w.agent_velocities, axis=1)
    limit = np.where(ramming, 14.0, 7.0)
    action = np.where(error > 12.0, 3, np.where(error < -12.0, 4, np.where(speed < limit, 1, 0)))
    return action.astype(np.float32)[:, None]
