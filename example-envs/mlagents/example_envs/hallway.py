"""Hallway (described in docs/Learning-Environment-Examples.md).

Sixteen areas, one agent each. A coloured block (orange or red) stands in the middle
of a walled hall; the agent must touch the goal of the same colour at the far end
(the two goals swap sides at random). It sees the world only through five sphere
casts (RayPerception3D, see ``sdk/ray_perception.py``) and the elapsed fraction of its episode; the trainer config
gives the brain an LSTM.

Brain ``HallwayLearning``: discrete, one branch of 5 (0 no-op, 1 forward, 2 backward,
3 yaw +3 degrees, 4 yaw -3 degrees); vector observation 36, stacked 3 times:
  [0]     agent step count / 3000
  [1:36]  5 rays (20, 60, 90, 120, 160 degrees, length 12) x (orangeGoal, redGoal,
          orangeBlock, redBlock, wall, nothing-hit, distance / 12)
Rewards: -1/3000 per physics step; touching a goal sets the reward to +1 (right
colour) or -0.1 (wrong colour) and ends the episode. maxStep 3000, decision every 6.

Physics on MuJoCo (one model for all areas, Unity frame converted in ``box_arena``):
the agent is a 1 x 1 x 1 box (+ 0.19 nose) of mass 25 with x/y/z slides and a free
yaw hinge (constraints 80), drag 2, angular drag 0.05, friction 0.6 with floor,
walls and goals, 0.3 with the blocks (their ``zeroFriction`` material, Average
combine); gravity 2 x 9.81. The blocks can only move vertically and stand on the
floor from their spawn on, so they are kinematic (mocap) boxes here. Moves are
Unity velocity changes (1.5 m/s along +-forward per physics step); turns teleport
the yaw. Deviations: the goals' thin back plates are left out (the agent cannot
reach them: they sit between the goal and the wall, and rays hit the goal first).
"""

from __future__ import annotations

import mujoco
import numpy as np

from .box_arena import (
    DEFAULT_FRICTION,
    EVENT_RELEASE,
    PLANAR_SLIDES,
    STATIC_COLLIDER,
    TIMESTEP,
    AreaScene,
    ContactRoles,
    PlanarWorld,
    add_area_boxes,
    floor_friction,
    linear_drag_factor,
    mocap_prism,
    planar_model_xml,
    prism_geom,
    spin_friction,
    wall_prisms,
)
from .sdk.messages import DecisionBatch
from .sdk.ray_perception import CastWorld, RayPerception
from .sdk.scene import EngineConfiguration, SceneSpec
from .vector3 import to_mujoco

NUM_AGENTS = 16
MAX_STEP = 3000
DECISION_INTERVAL = 6
GRAVITY = 2.0 * 9.81  # HallwayAcademy: gravityMultiplier 2
RUN_SPEED = 1.5  # m/s velocity change per physics step (academy agentRunSpeed)
TURN_DEGREES = 150.0 * TIMESTEP  # 3 degrees per physics step
STEP_PENALTY = -1.0 / MAX_STEP
RIGHT_GOAL_REWARD = 1.0
WRONG_GOAL_REWARD = -0.1
AGENT_MASS = 25.0
AGENT_DRAG = 2.0
AGENT_ANGULAR_DRAG = 0.05
MAX_ANGULAR_VELOCITY = 7.0  # rad/s, Unity's default Rigidbody.maxAngularVelocity
BLOCK_FRICTION = 0.5 * (0.0 + DEFAULT_FRICTION)  # zeroFriction (0) vs default (0.6), Average combine

RAY_DISTANCE = 12.0
RAY_ANGLES = (20.0, 60.0, 90.0, 120.0, 160.0)
DETECTABLE_TAGS = ("orangeGoal", "redGoal", "orangeBlock", "redBlock", "wall")
OBSERVATION_SIZE = 1 + len(RAY_ANGLES) * (len(DETECTABLE_TAGS) + 2)

AREA_SPACING = 30.0  # metres between the areas along x (they never interact)
# Geometry in the area frame (Unity axes): centre, half extents.
GROUND = ((0.0, 0.0, -12.3), (10.0, 0.5, 25.0))
WALLS = (
    ((-10.0, 1.47, -12.9), (0.5, 2.0, 25.0)),
    ((10.0, 1.47, -12.9), (0.5, 2.0, 25.0)),
    ((0.0, 1.47, -38.0), (10.5, 2.0, 0.5)),
    ((0.0, 1.47, 12.0), (10.5, 2.0, 0.5)),
)
GOAL_HALF = (2.5, 3.275, 2.5)
GOAL_X = 7.0  # goals at (+-7, 0.5, 9)
GOAL_CENTER = (0.0, 0.5, 9.0)
BLOCK_HALF = (1.5, 1.5, 1.5)
HIDDEN_BLOCK_Y = -1000.0
AGENT_HALF = (0.5, 0.5, 0.5)
AGENT_HEIGHT = 1.0  # centre height of an agent resting on the floor (top at 0.5)
FLOOR_MU_G = DEFAULT_FRICTION * GRAVITY  # agent (0.6) on the default-material floor (0.6)
NOSE_CENTER, NOSE_HALF = (0.0, 0.0, 0.49), (0.095, 0.095, 0.095)

_ROLE_AGENT, _ROLE_GOAL_LEFT, _ROLE_GOAL_RIGHT = 1, 2, 3
# per action 0..4: yaw change (degrees) and forward magnitude
_TURN = np.array([0.0, 0.0, 0.0, TURN_DEGREES, -TURN_DEGREES])
_FORWARD = np.array([0.0, 1.0, -1.0, 0.0, 0.0])


class HallwayWorld(PlanarWorld):
    """The physics of ``num_areas`` halls in one planar MuJoCo model (Unity frame in and out).

    Agents slide in x and z and turn about a free yaw hinge; their height stays 1.0
    (resting on the floor top at 0.5). See ``box_arena`` for the planar model and the floor.
    """

    def __init__(self, num_areas: int) -> None:
        # qpos per agent: MuJoCo x, y (= Unity x, z) and the yaw hinge (radians, Unity sense)
        super().__init__(num_areas, AREA_SPACING, dofs=3, agent_height=AGENT_HEIGHT)
        n = num_areas
        self._orange_mocap = np.arange(n)
        self._red_mocap = np.arange(n, 2 * n)
        self.roles = ContactRoles(
            self.model, n, [(_ROLE_AGENT, _ROLE_GOAL_LEFT), (_ROLE_AGENT, _ROLE_GOAL_RIGHT)]
        )
        areas = np.arange(n)
        self.roles.assign_per_area(self.model, "agent", _ROLE_AGENT)
        self.roles.assign_per_area(self.model, "nose", _ROLE_AGENT)
        self.roles.assign_per_area(self.model, "goal_left", _ROLE_GOAL_LEFT)
        self.roles.assign_per_area(self.model, "goal_right", _ROLE_GOAL_RIGHT)
        self._linear_decay = float(linear_drag_factor(AGENT_DRAG))
        self._angular_decay = float(linear_drag_factor(AGENT_ANGULAR_DRAG))
        self.place_agents(areas, self.origins + [0.0, AGENT_HEIGHT, -27.3], np.zeros(n))
        mujoco.mj_forward(self.model, self.data)

    def _xml(self) -> str:
        static, bodies = [], []
        for i, origin in enumerate(self.origins):
            static.extend(wall_prisms(WALLS, origin, i))
            for side, sign in (("left", -1.0), ("right", 1.0)):
                c = origin + GOAL_CENTER + np.array([sign * GOAL_X, 0.0, 0.0])
                static.append(
                    prism_geom(
                        f"goal_{side}{i}",
                        (c[0], c[2]),
                        (GOAL_HALF[0], GOAL_HALF[2]),
                        gap=EVENT_RELEASE,
                        **STATIC_COLLIDER,
                    )
                )
        block_friction = f"{BLOCK_FRICTION} 0.005 0.0001"
        for colour in ("orange", "red"):
            for i, origin in enumerate(self.origins):
                bodies.append(
                    mocap_prism(
                        f"{colour}{i}",
                        to_mujoco(origin + [0.0, HIDDEN_BLOCK_Y, -12.3]),
                        f"{colour}_block{i}",
                        (0.0, 0.0),
                        (BLOCK_HALF[0], BLOCK_HALF[2]),
                        friction=block_friction,
                        priority=1,
                        **STATIC_COLLIDER,
                    )
                )
        inertia = AGENT_MASS / 6.0  # solid unit cube
        for i in range(self.num_areas):
            bodies.append(
                f'<body name="agent_body{i}" pos="0 0 {AGENT_HEIGHT}">'
                + PLANAR_SLIDES
                + '<joint type="hinge" axis="0 0 -1"/>'
                f'<inertial pos="0 0 0" mass="{AGENT_MASS}" diaginertia="{inertia} {inertia} {inertia}"/>'
                + prism_geom(f"agent{i}", (0.0, 0.0), (AGENT_HALF[0], AGENT_HALF[2]))
                + prism_geom(f"nose{i}", (NOSE_CENTER[0], NOSE_CENTER[2]), (NOSE_HALF[0], NOSE_HALF[2]))
                + "</body>"
            )
        return planar_model_xml("Hallway", static, bodies)

    # ---- state (Unity frame) ----
    @property
    def agent_yaws(self) -> np.ndarray:
        """Agent yaws ``(num_areas,)`` in degrees (Unity sense)."""
        return np.degrees(self._qpos[:, 2])

    def place_agents(self, areas: np.ndarray, positions: np.ndarray, yaws_deg: np.ndarray) -> None:
        """Teleport agents to Unity ``positions`` ``(k, 3)`` (the height is fixed) facing
        ``yaws_deg`` ``(k,)`` and zero their linear velocity (HallwayAgent multiplies it by 0;
        the spin is kept)."""
        self._qpos[areas, 0] = positions[:, 0]
        self._qpos[areas, 1] = positions[:, 2]
        self._qpos[areas, 2] = np.radians(yaws_deg)
        self._qvel[areas, :2] = 0.0
        self.roles.forget(areas)

    def place_blocks(self, areas: np.ndarray, orange: np.ndarray, red: np.ndarray) -> None:
        """Teleport the orange and red blocks of ``areas`` to Unity positions ``(k, 3)``."""
        self.data.mocap_pos[self._orange_mocap[areas]] = to_mujoco(orange)
        self.data.mocap_pos[self._red_mocap[areas]] = to_mujoco(red)

    def turn(self, areas: np.ndarray, degrees: np.ndarray) -> None:
        """transform.Rotate about up: add ``degrees`` ``(k,)`` to the agents' yaw."""
        self._qpos[areas, 2] += np.radians(degrees)

    def step(self) -> np.ndarray:
        """Drag and floor friction, one 0.02 s MuJoCo step, then the goal collision-enter
        events: bool ``(2, num_areas)`` (row 0: left goal at x = -7, row 1: right goal at +7)."""
        v = self._qvel
        v[:, :2] = floor_friction(v[:, :2] * self._linear_decay, FLOOR_MU_G)
        spin = spin_friction(v[:, 2] * self._angular_decay, FLOOR_MU_G, 2.0 * AGENT_HALF[0])
        v[:, 2] = np.clip(spin, -MAX_ANGULAR_VELOCITY, MAX_ANGULAR_VELOCITY)
        mujoco.mj_step(self.model, self.data)
        return self.roles.entered(self.data)


class Hallway(AreaScene):
    """Hallway: brain ``HallwayLearning``, 16 agents (one per hall), 36 x 3 observations,
    discrete [5]."""

    brain_name = "HallwayLearning"
    #: VisualHallway has one hall
    num_agents = NUM_AGENTS
    world: HallwayWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return cls.area_spec(
            OBSERVATION_SIZE,
            moves=5,
            stacked=3,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            training=EngineConfiguration(128, 128, 0, 20.0, -1),
        )

    def initialize(self) -> None:
        n = self.num_agents
        self.world = HallwayWorld(n)
        self.origins = self.world.origins
        self.areas = np.arange(n)
        #: 0: the orange block is shown and the orange goal is right; 1: the same for red
        self.selection = np.zeros(n, dtype=np.int64)
        #: True when the orange goal stands at x = +7 (red at -7), else swapped
        self.orange_goal_right = np.ones(n, dtype=bool)
        self.orange_block = self.origins + [0.0, HIDDEN_BLOCK_Y, -12.3]
        self.red_block = self.orange_block.copy()

        self.cast_world = CastWorld()
        # moving boxes first, in one contiguous range: orange goals, red goals, orange blocks, red blocks
        self.cast_world.add_boxes(np.zeros((n, 3)), np.tile(GOAL_HALF, (n, 1)), 0.0, "orangeGoal", self.areas)
        self.cast_world.add_boxes(np.zeros((n, 3)), np.tile(GOAL_HALF, (n, 1)), 0.0, "redGoal", self.areas)
        self.cast_world.add_boxes(
            self.orange_block, np.tile(BLOCK_HALF, (n, 1)), 0.0, "orangeBlock", self.areas
        )
        self.cast_world.add_boxes(self.red_block, np.tile(BLOCK_HALF, (n, 1)), 0.0, "redBlock", self.areas)
        add_area_boxes(self.cast_world, self.origins, WALLS, "wall", self.areas)
        add_area_boxes(self.cast_world, self.origins, [GROUND], None, self.areas)
        self._sync_cast_world()
        self.sensor = RayPerception(RAY_DISTANCE, RAY_ANGLES, DETECTABLE_TAGS)

    # ---- scene state used by the cast world and scripted controllers ----
    def goal_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Unity centres ``(n, 3)`` of the orange and the red goal of every area."""
        sign = np.where(self.orange_goal_right, 1.0, -1.0)[:, None]
        offset = np.array([GOAL_X, 0.0, 0.0])
        base = self.origins + GOAL_CENTER
        return base + sign * offset, base - sign * offset

    def _sync_cast_world(self) -> None:
        orange_goal, red_goal = self.goal_positions()
        self.cast_world.update_boxes(
            0, np.concatenate([orange_goal, red_goal, self.orange_block, self.red_block])
        )

    # ---- hooks ----
    def agent_reset(self, agents: np.ndarray) -> None:
        rng = self.academy.rng
        k = len(agents)
        ground = self.origins[agents] + GROUND[0]
        selection = rng.integers(0, 2, size=k)
        shown = ground + np.stack(
            [rng.uniform(-3.0, 3.0, k), np.full(k, 2.0), rng.uniform(-5.0, 5.0, k)], axis=1
        )
        shown[:, 0] = np.where(selection == 1, ground[:, 0], shown[:, 0])  # red is never shifted sideways
        hidden = ground + np.stack(
            [np.zeros(k), np.full(k, HIDDEN_BLOCK_Y), rng.uniform(-5.0, 5.0, k)], axis=1
        )
        red_shown = (selection == 1)[:, None]
        self.orange_block[agents] = np.where(red_shown, hidden, shown)
        self.red_block[agents] = np.where(red_shown, shown, hidden)
        self.selection[agents] = selection

        # the agent starts 15 m behind the hall's middle (-27.3 in the area frame)
        along = rng.uniform(-5.0, 5.0, k) - 15.0
        position = ground + np.stack([rng.uniform(-3.0, 3.0, k), np.full(k, AGENT_HEIGHT), along], axis=1)
        yaw = rng.uniform(0.0, 360.0, k)
        self.world.place_agents(agents, position, yaw)
        self.orange_goal_right[agents] = rng.integers(0, 2, size=k) == 0
        self.world.place_blocks(agents, self.orange_block[agents], self.red_block[agents])
        self._sync_cast_world()

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        obs = np.empty((len(agents), OBSERVATION_SIZE), dtype=np.float32)
        obs[:, 0] = self.academy.agent_step_counts[agents] / MAX_STEP
        obs[:, 1:] = self.sensor.perceive(
            self.cast_world, self.world.agent_positions[agents], self.world.agent_yaws[agents], agents
        )
        return obs

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return shortest_path(self)[agents]

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        self.academy.add_reward(agents, STEP_PENALTY)
        action = actions[:, 0].astype(np.int64)
        self.world.move(agents, _TURN[action], _FORWARD[action] * RUN_SPEED)

    def physics_step(self) -> None:
        entered = self.world.step()
        left, right = entered
        if not (left.any() or right.any()):
            return
        touched_orange = (left & ~self.orange_goal_right) | (right & self.orange_goal_right)
        touched_red = (left & self.orange_goal_right) | (right & ~self.orange_goal_right)
        right_colour = np.where(self.selection == 0, touched_orange, touched_red)
        scored = np.flatnonzero(right_colour)
        wrong = np.flatnonzero((touched_orange | touched_red) & ~right_colour)
        if scored.size:
            self.academy.set_reward(scored, RIGHT_GOAL_REWARD)
        if wrong.size:
            self.academy.set_reward(wrong, WRONG_GOAL_REWARD)
        self.academy.done(np.concatenate([scored, wrong]))
        self.goals_touched(scored, wrong)

    def goals_touched(self, right: np.ndarray, wrong: np.ndarray) -> None:
        """Called after the agents ``right`` (int64) touched the goal of the right colour and
        ``wrong`` the other one in this physics step (VisualHallway flashes the floor)."""


def shortest_path(scene: Hallway) -> np.ndarray:
    """The heuristic (reads the true state), float32 ``(num_agents, 1)``: Drive past the shown block on the side of the matching goal, then into that goal.
    Turn toward the next waypoint while off by more than 9 degrees, otherwise go forward."""
    pos, yaw = scene.world.agent_positions, scene.world.agent_yaws
    orange_goal, red_goal = scene.goal_positions()
    orange = (scene.selection == 0)[:, None]
    goal = np.where(orange, orange_goal, red_goal)
    block = np.where(orange, scene.orange_block, scene.red_block)
    side = np.sign(goal[:, 0] - scene.origins[:, 0])
    past_block = pos[:, 2] > block[:, 2] + 2.0
    beside_block = np.stack([scene.origins[:, 0] + 7.0 * side, pos[:, 1], block[:, 2] + 3.0], axis=1)
    waypoint = np.where(past_block[:, None], goal - [0.0, 0.0, 2.5], beside_block)
    delta = waypoint - pos
    error = (np.degrees(np.arctan2(delta[:, 0], delta[:, 2])) - yaw + 180.0) % 360.0 - 180.0
    action = np.where(error > 9.0, 3, np.where(error < -9.0, 4, 1))
    return action.astype(np.float32)[:, None]
