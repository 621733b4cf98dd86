"""WallJump (described in docs/Learning-Environment-Examples.md): 24 agents that must get over a wall to a goal,
each switched per episode between two brains.

Every episode an agent draws a configuration c in {0..4}: no wall (c = 0) or a small wall (c = 1)
with brain ``SmallWallJumpLearning``, or a big wall (c >= 2, height drawn between
``big_wall_min_height`` and ``big_wall_max_height``) with brain ``BigWallJumpLearning``, which needs
the block pushed to the wall and a jump from its top. As in Unity the configuration is applied on
the agent's next physics tick after its reset (its own FixedUpdate, here :meth:`WallJump.pre_step`):
the done info of the finished episode goes to the old brain, the following decision to the new one.

Observation (74, stacked 6 times): two ray sweeps (D = 20, angles 0, 45, 90, 135, 180, 110, 70,
tags wall / goal / block; the second starts 2.5 above the agent and rises 2.5 per 20), the agent
position relative to the ground centre / 20 (3) and the small ground check (1/0).
Actions, discrete branches (3, 3, 3, 2): forward/back, turn left/right (6 degrees a step),
strafe left/right (replaces forward/back), jump.
Rewards: -0.0005 every physics step; +1 (SetReward) standing in the goal; -1 (SetReward) when the
agent or the block leaves the platform. The dynamics run in :class:`WallJumpWorld` (MuJoCo).
"""

from __future__ import annotations

import numpy as np

from .sdk.messages import DecisionBatch
from .sdk.ray_perception import CastWorld, RayPerception
from .sdk.scene import AgentGroup, BrainSpec, EngineConfiguration, Scene, SceneSpec
from .wall_jump_physics import (
    BLOCK_HALF,
    GOAL_CENTER,
    GOAL_HALF,
    GROUND_CENTER,
    GROUND_HALF,
    TIMESTEP,
    WALL_CENTER_XZ,
    WALL_HALF_XZ,
    WallJumpWorld,
    fallen,
    in_goal,
    large_grounded,
    small_grounded,
)

SMALL_BRAIN = "SmallWallJumpLearning"
BIG_BRAIN = "BigWallJumpLearning"
NUM_AGENTS = 24
MAX_STEP = 2000
DECISION_INTERVAL = 5
OBSERVATION_SIZE = 74
STACKED_OBSERVATIONS = 6
BRANCHES = (3, 3, 3, 2)
RESET_PARAMETERS = {
    "no_wall_height": 0.0,
    "small_wall_height": 4.0,
    "big_wall_min_height": 8.0,
    "big_wall_max_height": 8.0,
}

RAY_DISTANCE = 20.0
RAY_ANGLES = (0.0, 45.0, 90.0, 135.0, 180.0, 110.0, 70.0)
DETECTABLE_TAGS = ("wall", "goal", "block")
UPPER_RAY_OFFSET = 2.5  # start and end offset of the second sweep
POSITION_SCALE = 20.0

STEP_REWARD = -0.0005
GOAL_REWARD = 1.0
FALL_REWARD = -1.0

# WallJumpAcademy / WallJumpAgent constants.
RUN_SPEED = 1.5  # velocity change per physics step at full input (m/s)
AIR_CONTROL = 0.5  # input factor while not large-grounded
STRAFE_SPEED = 0.6
TURN_DEGREES = 300.0 * TIMESTEP  # 300 deg/s
JUMP_TIME = np.float32(0.2)  # seconds of jump steering (float32, as the C# timer)
JUMP_HEIGHT = 2.75
JUMP_VELOCITY_GAIN = 777.0
JUMP_MAX_VELOCITY_CHANGE = 10.0
FALLING_ACCELERATION = 111.0
# Agent spawn: local (18 * (U[0,1) - 0.5), 1, -12); block spawn: spawn-volume centre + U(-extent, extent).
AGENT_SPAWN_HALF_WIDTH = 9.0
AGENT_SPAWN_Y = 1.0
AGENT_SPAWN_Z = -12.0
SPAWN_VOLUME_CENTER_XZ = (0.0, -6.5)
SPAWN_VOLUME_EXTENT_XZ = (8.1, 3.5)
#: Player brain keys: W/S forward/back (branch 0), A/D turn left/right (branch 1), Space jumps (branch 3).
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    "w": (0, 1),
    "s": (0, 2),
    "a": (1, 1),
    "d": (1, 2),
    "space": (3, 1),
}
WALL_FRONT = WALL_CENTER_XZ[1] - WALL_HALF_XZ[1]  # z of the wall's near face
GOAL_XZ = np.array([GOAL_CENTER[0], GOAL_CENTER[2]])
NUM_CONFIGURATIONS = 5  # Random.Range(0, 5): 0 no wall, 1 small wall, 2..4 big wall


def move_towards(current: np.ndarray, target: np.ndarray, max_delta: float) -> np.ndarray:
    """Unity ``Vector3.MoveTowards`` for rows ``(k, 3)``: step from ``current`` toward ``target``
    by at most ``max_delta`` (Euclidean), landing on ``target`` when it is that close."""
    delta = target - current
    distance = np.linalg.norm(delta, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        stepped = current + delta / distance * max_delta
    return np.where(distance <= max_delta, target, stepped)


class WallJump(Scene):
    """WallJump: brains ``SmallWallJumpLearning`` and ``BigWallJumpLearning`` shared by 24 agents."""

    player_key_table = PLAYER_KEYS

    world: WallJumpWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        brains = [
            BrainSpec(
                name=name,
                vector_observation_size=OBSERVATION_SIZE,
                vector_action_space_type="discrete",
                vector_action_size=BRANCHES,
                num_stacked_vector_observations=STACKED_OBSERVATIONS,
                vector_action_descriptions=("",) * len(BRANCHES),
            )
            for name in (SMALL_BRAIN, BIG_BRAIN)
        ]
        return SceneSpec(
            academy_name="Academy",
            brains=brains,
            # The prefab's brain is empty; every agent gets its brain on its first physics tick
            # (pre_step), before the first observation is collected.
            agents=[
                AgentGroup(
                    brain=SMALL_BRAIN,
                    count=NUM_AGENTS,
                    max_step=MAX_STEP,
                    decision_interval=DECISION_INTERVAL,
                )
            ],
            reset_parameters=dict(RESET_PARAMETERS),
            training_configuration=EngineConfiguration(80, 80, 1, 100.0, -1),
            inference_configuration=EngineConfiguration(1280, 720, 5, 1.0, 60),
        )

    # ------------------------------------------------------------------ set-up
    def initialize(self) -> None:
        n = NUM_AGENTS
        self.world = WallJumpWorld(n)
        areas = np.arange(n)
        self._areas = areas
        # Jump state of WallJumpAgent: the timer counts down in float32 like the C# field.
        self._jump_time = np.zeros(n, dtype=np.float32)
        self._jump_start_y = np.zeros(n)
        # Configuration waiting for the agent's next physics tick (-1 = none); InitializeAgent draws one.
        self._pending_configuration = self.academy.rng.integers(0, NUM_CONFIGURATIONS, size=n)
        self.configurations = np.zeros(n, dtype=np.int64)  # the configuration each area runs now
        self._actions = np.zeros((n, len(BRANCHES)), dtype=np.float32)
        self._acting = np.zeros(n, dtype=bool)
        self._observations: np.ndarray | None = None  # this step's observations of every agent

        # What the ray sensors see, in the area frame; rays only see their own area (group).
        cast = CastWorld()
        cast.add_boxes(
            np.tile(GROUND_CENTER, (n, 1)), np.tile(GROUND_HALF, (n, 1)), 0.0, "walkableSurface", areas
        )
        wall_center = (WALL_CENTER_XZ[0], 0.0, WALL_CENTER_XZ[1])
        self._wall_box = cast.add_boxes(
            np.tile(wall_center, (n, 1)), self._wall_half_extents(), 0.0, "wall", areas
        )
        cast.add_boxes(np.tile(GOAL_CENTER, (n, 1)), np.tile(GOAL_HALF, (n, 1)), 0.0, "goal", areas)
        blocks = self.world.block_positions()
        self._block_box = cast.add_boxes(blocks, np.tile(BLOCK_HALF, (n, 1)), 0.0, "block", areas)
        self.cast_world = cast
        self._lower_rays = RayPerception(RAY_DISTANCE, RAY_ANGLES, DETECTABLE_TAGS)
        self._upper_rays = RayPerception(
            RAY_DISTANCE, RAY_ANGLES, DETECTABLE_TAGS, UPPER_RAY_OFFSET, UPPER_RAY_OFFSET
        )

    def _wall_half_extents(self) -> np.ndarray:
        half = np.tile([WALL_HALF_XZ[0], 0.0, WALL_HALF_XZ[1]], (self.world.num_areas, 1))
        half[:, 1] = self.world.wall_heights / 2.0
        return half

    def set_wall_heights(self, areas: np.ndarray, heights: np.ndarray) -> None:
        """Give the walls of ``areas`` ``(k,)`` the y scale ``heights`` ``(k,)``, for the physics
        and for the ray sensors alike."""
        self.world.set_wall_heights(areas, heights)
        self.cast_world.set_box_half_extents(self._wall_box, self._wall_half_extents())
        self._observations = None

    # ------------------------------------------------------------------ hooks
    def pre_step(self) -> None:
        # WallJumpAgent.FixedUpdate: apply the configuration drawn at the last reset.
        pending = np.flatnonzero(self._pending_configuration >= 0)
        if pending.size:
            self._configure(pending, self._pending_configuration[pending])
            self._pending_configuration[pending] = -1

    def _configure(self, agents: np.ndarray, configuration: np.ndarray) -> None:
        """ConfigureAgent: set the wall height from the reset parameters and give the brain."""
        params = self.academy.reset_parameters
        heights = np.where(configuration == 0, params["no_wall_height"], params["small_wall_height"])
        big = configuration >= 2
        if big.any():
            low, high = params["big_wall_min_height"], params["big_wall_max_height"]
            heights = heights.astype(np.float64)
            heights[big] = low + self.academy.rng.random(int(big.sum())) * (high - low)
        self.set_wall_heights(agents, heights)
        self.configurations[agents] = configuration
        if (~big).any():
            self.academy.set_brain(agents[~big], SMALL_BRAIN)
        if big.any():
            self.academy.set_brain(agents[big], BIG_BRAIN)

    def agent_reset(self, agents: np.ndarray) -> None:
        k = agents.size
        if k == 0:
            return
        self._reset_blocks(agents)
        x = 2.0 * AGENT_SPAWN_HALF_WIDTH * (self.academy.rng.random(k) - 0.5)
        self.world.place_agents(
            agents, np.stack([x, np.full(k, AGENT_SPAWN_Y), np.full(k, AGENT_SPAWN_Z)], axis=1)
        )
        self._pending_configuration[agents] = self.academy.rng.integers(0, NUM_CONFIGURATIONS, size=k)
        self._observations = None

    def _reset_blocks(self, agents: np.ndarray) -> None:
        extent = np.array(SPAWN_VOLUME_EXTENT_XZ)
        xz = np.array(SPAWN_VOLUME_CENTER_XZ) + self.academy.rng.uniform(
            -extent, extent, size=(agents.size, 2)
        )
        self.world.place_blocks(agents, xz)
        self._observations = None

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        # All agents decide in the same steps (N = 5, lock-step) but the Academy asks brain by brain:
        # observe every agent once per step and hand out rows.
        if self._observations is None:
            self._observations = self._observe_all()
        return self._observations[agents]

    def _observe_all(self) -> np.ndarray:
        world, areas = self.world, self._areas
        self.cast_world.update_boxes(self._block_box, world.block_positions())
        position = world.agent_positions()
        yaw = world.agent_yaws()
        obs = np.empty((areas.size, OBSERVATION_SIZE), dtype=np.float32)
        rays = self._lower_rays.observation_size
        obs[:, :rays] = self._lower_rays.perceive(self.cast_world, position, yaw, areas)
        obs[:, rays : 2 * rays] = self._upper_rays.perceive(self.cast_world, position, yaw, areas)
        obs[:, 2 * rays : 2 * rays + 3] = (position - np.array(GROUND_CENTER)) / POSITION_SCALE
        centers, halves = world.area_boxes()
        obs[:, 2 * rays + 3] = small_grounded(position, centers, halves)
        return obs

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return jump_sequence(self.world, agents)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        # The Academy calls this brain by brain; WallJumpAgent.AgentAction only touches its own area
        # and nothing reads the world before the physics step, so all agents act together there.
        self._actions[agents] = actions
        self._acting[agents] = True

    def physics_step(self) -> None:
        acting = np.flatnonzero(self._acting)
        if acting.size:
            self._acting[:] = False
            self._act(acting, self._actions[acting].astype(np.int64))
        world = self.world
        world.step()
        self._observations = None
        # OnTriggerStay with the goal, after the simulation step.
        position, yaw = world.agent_positions(), world.agent_yaws()
        scored = in_goal(position, yaw)
        if scored.any():
            centers, halves = world.area_boxes()
            scored &= small_grounded(position, centers, halves)
            if scored.any():
                winners = self._areas[scored]
                self.academy.set_reward(winners, GOAL_REWARD)
                self.academy.done(winners)

    def _act(self, agents: np.ndarray, act: np.ndarray) -> None:
        """WallJumpAgent.AgentAction (MoveAgent, then the fall test) for ``agents`` ``(k,)`` with
        integer branch values ``act`` ``(k, 4)``."""
        world = self.world
        self.academy.add_reward(agents, STEP_REWARD)
        block = world.block_positions()
        centers, halves = world.area_boxes(block)
        everyone = agents.size == self._areas.size
        position = world.agent_positions(None if everyone else agents)
        yaw = world.agent_yaws(None if everyone else agents)
        if not everyone:
            block, centers, halves = block[agents], centers[agents], halves[agents]
        small = small_grounded(position, centers, halves)
        large = large_grounded(position, yaw, centers, halves)
        forward_action, turn_action, side_action, jump_action = act[:, 0], act[:, 1], act[:, 2], act[:, 3]

        # Directions from the yaw before this step's turn, as in MoveAgent.
        theta = np.radians(yaw)
        sin, cos = np.sin(theta), np.cos(theta)
        forward = np.zeros((agents.size, 3))
        forward[:, 0], forward[:, 2] = sin, cos
        right = np.zeros((agents.size, 3))
        right[:, 0], right[:, 2] = cos, -sin
        direction = np.where((forward_action == 1)[:, None], forward, 0.0)
        direction = np.where((forward_action == 2)[:, None], -forward, direction)
        direction = np.where((side_action == 1)[:, None], -STRAFE_SPEED * right, direction)
        direction = np.where((side_action == 2)[:, None], STRAFE_SPEED * right, direction)
        direction *= np.where(large, 1.0, AIR_CONTROL)[:, None]

        jump = (jump_action == 1) & (self._jump_time[agents] <= 0.0) & small
        if jump.any():
            self._jump_time[agents[jump]] = JUMP_TIME
            self._jump_start_y[agents[jump]] = position[jump, 1]

        turn = np.where(turn_action == 1, -TURN_DEGREES, np.where(turn_action == 2, TURN_DEGREES, 0.0))
        world.rotate_agents(agents, turn)

        # rb.velocity is set by the jump steering; the run input is a pending VelocityChange and the
        # extra fall an Acceleration, both added by the next simulation step.
        velocity = world.agent_velocities(agents)
        jumping = self._jump_time[agents] > 0.0
        if jumping.any():
            target = position[jumping].copy()
            target[:, 1] = self._jump_start_y[agents[jumping]] + JUMP_HEIGHT
            target += direction[jumping]
            desired = TIMESTEP * JUMP_VELOCITY_GAIN * (target - position[jumping])
            velocity[jumping] = move_towards(velocity[jumping], desired, JUMP_MAX_VELOCITY_CHANGE)
        velocity += RUN_SPEED * direction
        velocity[~jumping & ~large, 1] -= FALLING_ACCELERATION * TIMESTEP
        world.set_agent_velocities(agents, velocity)
        self._jump_time[agents] -= np.float32(TIMESTEP)

        lost = fallen(position, block, centers, halves)
        if lost.any():
            lost_agents = agents[lost]
            self.academy.done(lost_agents)
            self.academy.set_reward(lost_agents, FALL_REWARD)
            self._reset_blocks(lost_agents)


def wrap(angle: np.ndarray) -> np.ndarray:
    """Angles in degrees wrapped to [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0


def jump_sequence(world: WallJumpWorld, areas: np.ndarray) -> np.ndarray:
    """The heuristic (reads the true state): run to the wall beside the block, jump about
    2.5 m in front of it, then head for the goal. Big-wall episodes walk off the back edge so
    that they end at once. Returns float32 ``(k, 4)`` actions."""
    position, yaw, velocity = (
        world.agent_positions(areas),
        world.agent_yaws(areas),
        world.agent_velocities(areas),
    )
    block, heights = world.block_positions(areas), world.wall_heights[areas]
    actions = np.zeros((areas.size, 4), dtype=np.float32)
    for i in range(areas.size):
        x, y, z = position[i]
        big = heights[i] > 5.0
        if big:
            target = np.array([x, -20.0])
        elif z < WALL_FRONT + 0.5 and y < 1.6:
            # cross the wall in front of the goal, or at the first lane the block leaves free
            for lane in (GOAL_XZ[0], 4.0, 8.5, 1.0, -2.0, -5.0, -8.0):
                path = np.linspace([x, z], [lane, WALL_FRONT - 2.0], 20)
                if not np.any(np.all(np.abs(path - block[i, 0::2]) < 2.3, axis=1)):
                    break
            target = np.array([lane, WALL_FRONT - 2.0]) if z < WALL_FRONT - 2.5 else np.array([x, 0.0])
        else:
            target = GOAL_XZ
        error = wrap(np.degrees(np.arctan2(target[0] - x, target[1] - z)) - yaw[i])
        if error > 12.0:
            actions[i, 1] = 2
        elif error < -12.0:
            actions[i, 1] = 1
        if abs(error) < 40.0 and np.hypot(velocity[i, 0], velocity[i, 2]) < 8.0:
            actions[i, 0] = 1
        to_wall = WALL_FRONT - (z + 0.5)
        if not big and heights[i] > 0.5 and -0.3 < to_wall < 2.5 and abs(wrap(yaw[i])) < 60.0:
            actions[i, 3] = 1
    return actions
