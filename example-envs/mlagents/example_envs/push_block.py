"""PushBlock (described in docs/Learning-Environment-Examples.md).

Thirty-two walled 25 x 25 areas, one agent and one block each. The agent must push the
block onto the goal strip that fills the far end of the area (the whole area turns by a
random multiple of 90 degrees at every episode start, so the strip can be on any side).
It sees through two sweeps of seven sphere casts (RayPerception3D, ``sdk/ray_perception.py``): one at its own
height, which sees the block, and one 1.5 higher, which passes over the block.

Brain ``PushBlockLearning``: discrete, one branch of 7 (0 no-op, 1 forward, 2 backward,
3 yaw +4 degrees, 4 yaw -4 degrees, 5 strafe left, 6 strafe right); vector observation
70, stacked 3 times: 2 sweeps x 7 rays (0, 45, 90, 135, 180, 110, 70 degrees, length 12)
x (block, goal, wall, nothing-hit, distance / 12).
Rewards: -1/5000 per physics step; +5 when the block touches the goal, which ends the
episode. maxStep 5000, decision every 5.
Reset parameters (read at every agent reset): ``dynamic_friction`` 0 and
``static_friction`` 0 of the ground, ``block_drag`` 0.5, ``block_scale`` 2.

Physics on MuJoCo, planar (see ``box_arena``): the agent (1 x 1 x 1 box + 0.2 nose,
mass 10, drag 4, rotations frozen: its yaw is teleported) and the block
(block_scale x 0.75 x block_scale, mass 10, drag block_drag, rotations frozen) slide
in x and z and collide with each other (friction 0.6), the walls and the solid goal.
The floor's Coulomb friction is applied per step with the Average-combined
coefficient (0.6 + dynamic_friction) / 2 (0.3 by default; the ground's material in the Unity scene is not
known for certain, this is the value of a missing material). MuJoCo has one friction coefficient, so
``static_friction`` is accepted and stored but the dynamic value is used for both.
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
    body_ids,
    floor_friction,
    linear_drag_factor,
    mocap_prism,
    planar_model_xml,
    prism_geom,
    rectangles_overlap,
    resize_prisms,
    wall_prisms,
    yaw_quaternions,
)
from .sdk.messages import DecisionBatch
from .sdk.ray_perception import CastWorld, RayPerception, yaw_rotate
from .sdk.scene import EngineConfiguration, SceneSpec

NUM_AGENTS = 32
MAX_STEP = 5000
DECISION_INTERVAL = 5
GRAVITY = 9.81  # the academy's gravityMultiplier (2.5) is never applied
RUN_SPEED = 2.0  # academy agentRunSpeed: m/s velocity change per physics step
STRAFE_SCALE = 0.75
TURN_DEGREES = 200.0 * TIMESTEP  # 4 degrees per physics step
STEP_PENALTY = -1.0 / MAX_STEP
GOAL_REWARD = 5.0
AGENT_MASS = 10.0
AGENT_DRAG = 4.0
BLOCK_MASS = 10.0
RESET_PARAMETERS = {"dynamic_friction": 0.0, "static_friction": 0.0, "block_drag": 0.5, "block_scale": 2.0}

RAY_DISTANCE = 12.0
RAY_ANGLES = (0.0, 45.0, 90.0, 135.0, 180.0, 110.0, 70.0)
DETECTABLE_TAGS = ("block", "goal", "wall")
HIGH_SWEEP_OFFSET = 1.5
OBSERVATION_SIZE = 2 * len(RAY_ANGLES) * (len(DETECTABLE_TAGS) + 2)

AREA_SPACING = 40.0  # metres between the areas along x (they never interact)
# Geometry in the (unrotated) area frame, Unity axes: centre, half extents.
GROUND = ((0.0, 0.0, 0.0), (12.5, 0.5, 12.5))
WALLS = (
    ((0.0, 1.0, 13.0), (12.5, 1.5, 0.5)),
    ((0.0, 1.0, -13.0), (12.5, 1.5, 0.5)),
    ((13.0, 1.0, 0.0), (0.5, 1.5, 13.5)),
    ((-13.0, 1.0, 0.0), (0.5, 1.5, 13.5)),
)
GOAL = ((0.0, 0.36, 10.0), (12.5, 3.27, 2.5))
AGENT_HALF = (0.5, 0.5, 0.5)
AGENT_HEIGHT = 1.0  # centre height of the agent resting on the floor (top at 0.5)
NOSE_CENTER, NOSE_HALF = (0.0, 0.0, 0.5), (0.1, 0.1, 0.1)
BLOCK_HALF_HEIGHT = 0.375
BLOCK_HEIGHT = 0.5 + BLOCK_HALF_HEIGHT  # spawned at 1.0, it drops 0.125 onto the floor
# GetRandomSpawnPos: ground half extent 12.5 x spawnAreaMarginMultiplier 0.5; an
# overlap box of half size (2.5, 0.01, 2.5) at height 1 must be free.
SPAWN_HALF_RANGE = 12.5 * 0.5
SPAWN_CLEARANCE = 2.5

_ROLE_BLOCK, _ROLE_GOAL = 1, 2
# per action 0..6: yaw change (degrees), forward and strafe-right magnitudes
_TURN = np.array([0.0, 0.0, 0.0, TURN_DEGREES, -TURN_DEGREES, 0.0, 0.0])
_FORWARD = np.array([0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0])
_STRAFE = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -STRAFE_SCALE, STRAFE_SCALE])


def ground_friction(dynamic_friction: float) -> float:
    """Coefficient between the default material (0.6) and the ground, Average combine."""
    return 0.5 * (DEFAULT_FRICTION + dynamic_friction)


class PushBlockWorld(PlanarWorld):
    """The physics of ``num_areas`` push-block areas in one planar MuJoCo model.

    Unity frame in and out. Agent and block heights are fixed (1.0 and 0.875); the agent's
    yaw is owned here (``agent_yaws``) and written to its geoms before each step.
    """

    def __init__(self, num_areas: int) -> None:
        # qpos/qvel per area (area origins = ground centres): agent MuJoCo x, y (= Unity x, z), block x, y
        super().__init__(num_areas, AREA_SPACING, dofs=4, agent_height=AGENT_HEIGHT)
        n = num_areas
        areas = np.arange(n)
        self._agent_frames = body_ids(self.model, [f"agent_frame{i}" for i in areas])
        self.roles = ContactRoles(self.model, n, [(_ROLE_BLOCK, _ROLE_GOAL)])
        self._block_geoms = self.roles.assign_per_area(self.model, "block", _ROLE_BLOCK)
        self.roles.assign_per_area(self.model, "goal", _ROLE_GOAL)
        self._agent_yaws = np.zeros(n)
        self.area_yaws = np.zeros(n)
        self.block_halves = np.zeros((n, 2))  # (x, z) half sizes
        self.floor_mu = np.full(n, ground_friction(RESET_PARAMETERS["dynamic_friction"]))
        self.block_decay = np.full(n, float(linear_drag_factor(RESET_PARAMETERS["block_drag"])))
        self._agent_decay = float(linear_drag_factor(AGENT_DRAG))
        self.set_block_scale(areas, RESET_PARAMETERS["block_scale"])
        self.place_agents(areas, self.origins + [0.0, AGENT_HEIGHT, -5.0])
        self.place_blocks(areas, self.origins + [0.0, BLOCK_HEIGHT, 0.0])
        self.set_area_yaws(areas, np.zeros(n))
        mujoco.mj_forward(self.model, self.data)

    def _xml(self) -> str:
        static, bodies = [], []
        for i, origin in enumerate(self.origins):
            static.extend(wall_prisms(WALLS, origin, i))
            bodies.append(
                mocap_prism(
                    f"goal_body{i}",
                    (origin[0], origin[2], 0),
                    f"goal{i}",
                    (0.0, 0.0),
                    (GOAL[1][0], GOAL[1][2]),
                    gap=EVENT_RELEASE,
                    **STATIC_COLLIDER,
                )
            )
        for i in range(self.num_areas):
            # the agent's yaw lives on a jointless child frame, so the slides stay world-aligned
            bodies.append(
                f'<body name="agent{i}" pos="0 0 {AGENT_HEIGHT}">'
                + PLANAR_SLIDES
                + f'<inertial pos="0 0 0" mass="{AGENT_MASS}" diaginertia="1 1 1"/>'
                f'<body name="agent_frame{i}">'
                + prism_geom(f"agent_box{i}", (0.0, 0.0), (AGENT_HALF[0], AGENT_HALF[2]), mass=0)
                + prism_geom(
                    f"nose{i}", (NOSE_CENTER[0], NOSE_CENTER[2]), (NOSE_HALF[0], NOSE_HALF[2]), mass=0
                )
                + "</body></body>"
                f'<body name="block_body{i}" pos="0 0 {BLOCK_HEIGHT}">'
                + PLANAR_SLIDES
                + f'<inertial pos="0 0 0" mass="{BLOCK_MASS}" diaginertia="1 1 1"/>'
                + prism_geom(f"block{i}", (0.0, 0.0), (1.0, 1.0), mass=0)
                + "</body>"
            )
        return planar_model_xml("PushBlock", static, bodies)

    # ---- state (Unity frame) ----
    @property
    def block_positions(self) -> np.ndarray:
        """Block centres ``(num_areas, 3)``."""
        return self._unity_points(2, BLOCK_HEIGHT)

    @property
    def block_velocities(self) -> np.ndarray:
        """Block linear velocities ``(num_areas, 3)`` (m/s)."""
        return self._unity_velocities(2)

    def goal_centers(self, areas: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Goal centres ``(k, 3)`` (the goal turns with its area)."""
        yaws = self.area_yaws[areas]
        return self.origins[areas] + yaw_rotate(np.broadcast_to(GOAL[0], (len(yaws), 3)), yaws)

    # ---- changes ----
    def place_agents(self, areas: np.ndarray, positions: np.ndarray) -> None:
        """Teleport agents to Unity ``positions`` ``(k, 3)`` and stop them."""
        self._qpos[areas, 0] = positions[:, 0]
        self._qpos[areas, 1] = positions[:, 2]
        self._qvel[areas, :2] = 0.0

    def place_blocks(self, areas: np.ndarray, positions: np.ndarray) -> None:
        """Teleport blocks to Unity ``positions`` ``(k, 3)`` and stop them."""
        self._qpos[areas, 2] = positions[:, 0]
        self._qpos[areas, 3] = positions[:, 2]
        self._qvel[areas, 2:] = 0.0
        self.roles.forget(areas)

    def set_area_yaws(self, areas: np.ndarray, yaws_deg: np.ndarray) -> None:
        """Turn the goal strips of ``areas`` to ``yaws_deg`` ``(k,)`` (walls are symmetric)."""
        self.area_yaws[areas] = yaws_deg
        center = self.goal_centers(areas)
        self.data.mocap_pos[areas, 0] = center[:, 0]
        self.data.mocap_pos[areas, 1] = center[:, 2]
        self.data.mocap_quat[areas] = yaw_quaternions(yaws_deg)

    def set_block_scale(self, areas: np.ndarray, scale: float) -> None:
        """Block size (scale, 0.75, scale) for ``areas`` (broad-phase bounds updated too).

        :raises ValueError: if ``scale`` is not positive.
        """
        if not scale > 0.0:
            raise ValueError(f"PushBlock reset parameter block_scale must be positive, got {scale}.")
        half = 0.5 * scale
        resize_prisms(self.model, self._block_geoms[areas], half)
        self.block_halves[areas] = half

    def set_block_velocities(self, areas: np.ndarray, velocities: np.ndarray) -> None:
        """Set the horizontal part of the blocks' Unity velocities ``(k, 3)`` (m/s)."""
        self._qvel[areas, 2] = velocities[:, 0]
        self._qvel[areas, 3] = velocities[:, 2]

    @property
    def agent_yaws(self) -> np.ndarray:
        """Agent yaws ``(num_areas,)`` in degrees (Unity sense); the array itself, updated in place."""
        return self._agent_yaws

    def turn(self, areas: np.ndarray, degrees: np.ndarray) -> None:
        """transform.Rotate about up (frozen rotations: a teleport of the yaw)."""
        self._agent_yaws[areas] += degrees

    def step(self) -> np.ndarray:
        """Drag and floor friction, one 0.02 s MuJoCo step; returns bool ``(num_areas,)``:
        the block started touching the goal in this step (OnCollisionEnter)."""
        v = self._qvel
        mu_g = self.floor_mu * GRAVITY
        v[:, :2] = floor_friction(v[:, :2] * self._agent_decay, mu_g)
        v[:, 2:] = floor_friction(v[:, 2:] * self.block_decay[:, None], mu_g)
        self.model.body_quat[self._agent_frames] = yaw_quaternions(self.agent_yaws)
        mujoco.mj_step(self.model, self.data)
        return self.roles.entered(self.data)[0]


class PushBlock(AreaScene):
    """PushBlock: brain ``PushBlockLearning``, 32 agents (one per area), 70 x 3 observations,
    discrete [7]."""

    brain_name = "PushBlockLearning"
    #: VisualPushBlock has one area
    num_agents = NUM_AGENTS
    world: PushBlockWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return cls.area_spec(
            OBSERVATION_SIZE,
            moves=7,
            stacked=3,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            training=EngineConfiguration(400, 300, 0, 15.0, 60),
            reset_parameters=RESET_PARAMETERS,
        )

    def initialize(self) -> None:
        n = self.num_agents
        self.world = PushBlockWorld(n)
        self.origins = self.world.origins
        self.areas = np.arange(n)
        self.static_friction = np.full(n, RESET_PARAMETERS["static_friction"])
        self.cast_world = CastWorld()
        # moving boxes first: goals [0, n), blocks [n, 2n)
        self.cast_world.add_boxes(
            self.world.goal_centers(), np.tile(GOAL[1], (n, 1)), 0.0, "goal", self.areas
        )
        self.cast_world.add_boxes(
            self.world.block_positions, self._block_half_extents(), 0.0, "block", self.areas
        )
        add_area_boxes(self.cast_world, self.origins, WALLS, "wall", self.areas)
        add_area_boxes(self.cast_world, self.origins, [GROUND], "ground", self.areas)
        self.sensor = RayPerception(RAY_DISTANCE, RAY_ANGLES, DETECTABLE_TAGS)

    def _block_half_extents(self) -> np.ndarray:
        h = self.world.block_halves
        return np.stack([h[:, 0], np.full(len(h), BLOCK_HALF_HEIGHT), h[:, 1]], axis=1)

    # ---- reset ----
    def _spawn_positions(self, agents: np.ndarray) -> np.ndarray:
        """GetRandomSpawnPos for the areas of ``agents``: uniform points until the overlap
        box (half 2.5 x 2.5 at height 1) is clear of the goal, the block and the agent at
        their current places (the mover's own collider included, as in Unity). The walls'
        inner faces, 12.5 from the centre, are never within reach of 6.25 + 2.5."""
        rng = self.academy.rng
        w = self.world
        out = np.zeros((len(agents), 3))
        pending = np.arange(len(agents))
        while pending.size:
            areas = agents[pending]
            m = pending.size
            offset = rng.uniform(-SPAWN_HALF_RANGE, SPAWN_HALF_RANGE, (m, 2))
            point = self.origins[areas] + np.stack([offset[:, 0], np.ones(m), offset[:, 1]], axis=1)
            xz, clear = point[:, [0, 2]], np.full((m, 2), SPAWN_CLEARANCE)
            goal_half = np.tile([GOAL[1][0], GOAL[1][2]], (m, 1))
            blocked = rectangles_overlap(
                xz, clear, w.goal_centers(areas)[:, [0, 2]], goal_half, w.area_yaws[areas]
            )
            block_xz = w.block_positions[areas][:, [0, 2]]
            blocked |= rectangles_overlap(xz, clear, block_xz, w.block_halves[areas], np.zeros(m))
            agent_xz, yaw = w.agent_positions[areas][:, [0, 2]], w.agent_yaws[areas]
            blocked |= rectangles_overlap(xz, clear, agent_xz, np.full((m, 2), AGENT_HALF[0]), yaw)
            nose_xz = agent_xz + yaw_rotate(np.broadcast_to(NOSE_CENTER, (m, 3)), yaw)[:, [0, 2]]
            blocked |= rectangles_overlap(xz, clear, nose_xz, np.full((m, 2), NOSE_HALF[0]), yaw)
            out[pending[~blocked]] = point[~blocked]
            pending = pending[blocked]
        return out

    def agent_reset(self, agents: np.ndarray) -> None:
        rng = self.academy.rng
        w = self.world
        turn = 90.0 * rng.integers(0, 4, size=len(agents))
        w.set_area_yaws(agents, (w.area_yaws[agents] + turn) % 360.0)
        w.turn(agents, turn)  # the agent turns with its area; its yaw is never reset
        w.place_blocks(agents, self._spawn_positions(agents))
        w.place_agents(agents, self._spawn_positions(agents))
        self._apply_reset_parameters(agents)
        self.cast_world.update_boxes(0, w.goal_centers(), w.area_yaws)
        self.cast_world.set_box_half_extents(self.world.num_areas, self._block_half_extents())

    def _apply_reset_parameters(self, agents: np.ndarray) -> None:
        """SetResetParameters: ground friction, block drag and block scale of the areas."""
        params = {**RESET_PARAMETERS, **self.academy.reset_parameters}
        w = self.world
        w.floor_mu[agents] = ground_friction(float(params["dynamic_friction"]))
        self.static_friction[agents] = float(params["static_friction"])
        w.block_decay[agents] = linear_drag_factor(float(params["block_drag"]))
        w.set_block_scale(agents, float(params["block_scale"]))

    # ---- step ----
    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        w = self.world
        self.cast_world.update_boxes(w.num_areas, w.block_positions)
        origins = w.agent_positions[agents]
        yaws = w.agent_yaws[agents]
        k = len(agents)
        # both sweeps in one cast: the high sweep is the low one started 1.5 higher
        rays = self.sensor.perceive(
            self.cast_world,
            np.concatenate([origins, origins + [0.0, HIGH_SWEEP_OFFSET, 0.0]]),
            np.concatenate([yaws, yaws]),
            np.concatenate([agents, agents]),
        )
        return np.concatenate([rays[:k], rays[k:]], axis=1)

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return push_toward_goal(self)[agents]

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        action = actions[:, 0].astype(np.int64)
        self.world.move(agents, _TURN[action], _FORWARD[action] * RUN_SPEED, _STRAFE[action] * RUN_SPEED)
        self.academy.add_reward(agents, STEP_PENALTY)

    def physics_step(self) -> None:
        scored = np.flatnonzero(self.world.step())
        if scored.size:
            self.academy.add_reward(scored, GOAL_REWARD)
            self.academy.done(scored)
            self.goal_scored(scored)

    def goal_scored(self, agents: np.ndarray) -> None:
        """Called after the blocks of ``agents`` (int64) touched their goal in this physics step
        (VisualPushBlock flashes the floor)."""


def goal_axes(world: PushBlockWorld) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors toward the goal strip and across it, per area ``(n, 3)``."""
    n = world.num_areas
    toward = yaw_rotate(np.tile([0.0, 0.0, 1.0], (n, 1)), world.area_yaws)
    across = yaw_rotate(np.tile([1.0, 0.0, 0.0], (n, 1)), world.area_yaws)
    return toward, across


_MOVES = np.array([0, 1, 2, 5, 6])  # no-op, forward, backward, strafe left, strafe right


def push_toward_goal(scene: PushBlock) -> np.ndarray:
    """The heuristic (reads the true state), float32 ``(num_agents, 1)``. Get behind the block (as seen from the goal), then push it straight at the goal.

    The agent keeps its axes aligned with the goal strip (turning while off by more than
    10 degrees) and picks the move whose outcome after the 5 repeated physics steps
    (velocity changes of 2 m/s, drag factor 0.92 per step) and the coasting that follows
    comes closest to the waypoint; while pushing, the move whose velocity comes closest to
    a fast push toward the goal with a small sideways correction.
    """
    w = scene.world
    n = w.num_areas
    agent, block, velocity, yaw = w.agent_positions, w.block_positions, w.agent_velocities, w.agent_yaws
    toward, across = goal_axes(w)
    half = w.block_halves[:, 0]
    s_agent, t_agent = (agent * toward).sum(1), (agent * across).sum(1)
    s_block, t_block = (block * toward).sum(1), (block * across).sum(1)
    behind = s_agent < s_block - (half + 0.6)
    pushing = behind & (np.abs(t_agent - t_block) < half)
    side = np.where(t_agent >= t_block, 1.0, -1.0)
    in_lane = np.abs(t_agent - t_block) < half + 1.5
    # waypoints: behind the block; else step out of its lane; else go back past it
    s_target = np.where(behind, s_block - (half + 1.5), np.where(in_lane, s_agent, s_block - (half + 2.0)))
    t_target = np.where(behind, t_block, np.where(in_lane, t_block + side * (half + 2.5), t_agent))
    target = toward * s_target[:, None] + across * t_target[:, None]

    theta = np.radians(yaw)
    forward = np.stack([np.sin(theta), np.zeros(n), np.cos(theta)], 1)
    right = np.stack([np.cos(theta), np.zeros(n), -np.sin(theta)], 1)
    delta_v = 2.0 * np.stack([np.zeros((n, 3)), forward, -forward, -0.75 * right, 0.75 * right], 1)
    moved = np.zeros(delta_v.shape)
    v = np.repeat(velocity[:, None, :], 5, axis=1)
    for _ in range(5):
        v = (v + delta_v) * 0.92
        moved = moved + v * 0.02
    rest = moved + v * (0.02 * 0.92 / 0.08)
    cost = (((agent - target)[:, None, :] + rest) ** 2).sum(-1)
    push_velocity = toward * 12.0 + across * (2.0 * (t_block - t_agent))[:, None]
    cost = np.where(pushing[:, None], ((v - push_velocity[:, None, :]) ** 2).sum(-1), cost)
    action = _MOVES[np.argmin(cost, axis=1)]
    misaligned = (yaw - w.area_yaws + 45.0) % 90.0 - 45.0
    action = np.where((np.abs(misaligned) > 10.0) & ~pushing, np.where(misaligned > 0, 4, 3), action)
    return action.astype(np.float32)[:, None]
