"""SoccerTwos: two-a-side soccer on eight pitches, strikers against goalies.

Each 30 x 15 pitch holds four agents: a red and a blue striker on brain ``StrikerLearning``
(discrete, one branch of 7: 0 none, 1 forward (kick), 2 backward, 3 turn +2 degrees, 4 turn
-2 degrees, 5 left, 6 right at 0.75) and a red and a blue goalie on brain ``GoalieLearning``
(discrete, one branch of 5: 0 none, 1 forward (kick), 2 backward, 3 right, 4 left; goalies
never turn). 16 + 16 agents, decision every 5 physics steps, maxStep 3000.
Observation (112, both brains): two sweeps of seven sphere casts (length 20, angles 0, 45,
90, 135, 180, 110, 70), from the agent's centre and 1 m higher, tags in own-team-first order
(red: ball, redGoal, blueGoal, wall, redAgent, blueAgent; blue: ball, blueGoal, redGoal,
wall, blueAgent, redAgent).
Rewards: strikers -1/3000 and goalies +1/3000 per physics step; when the ball touches a
goal the scoring striker gets +1 and goalie +0.1, the conceding striker -0.1 and goalie -1,
and the pitch's four episodes end. Red defends the goal at +x and starts at +x; blue the
other. Reset parameters ``ball_scale`` 7.5 (ball radius 0.11 x scale) and ``gravity`` 9.81.
An agent that moves forward kicks: touching the ball then adds 10 m/s to the ball, away
from the agent's centre. Invisible walls keep goalies at |x| >= 9 in their own half and
strikers at |x| <= 10.5; the ball passes both.

Physics on MuJoCo, planar (see ``box_arena``): agents (spheres of radius 1, mass 50, drag 3,
rotations frozen) and the ball (mass 4, drag 0.1) move in x and z and collide as vertical
capsules with each other, the walls, the goal posts and the goals. The pitch's floor
friction (0.6) is applied per step; the ball rolls: its spin decays by its angular drag
(1) and is capped at 7 rad/s, so a ball faster than 7 x radius slides and loses 0.6 g per
second until it rolls, and a rolling ball loses what the angular drag takes from its spin.
"""

from __future__ import annotations

from collections.abc import Mapping

import mujoco
import numpy as np

from . import box_arena as arena
from .box_arena import AreaBox, floor_friction, forward_vectors, linear_drag_factor, prism_geom, right_vectors
from .sdk.messages import DecisionBatch
from .sdk.ray_perception import CastWorld, RayPerception
from .sdk.scene import AgentGroup, BrainSpec, EngineConfiguration, Scene, SceneSpec

STRIKER_BRAIN = "StrikerLearning"
GOALIE_BRAIN = "GoalieLearning"
#: Player brain keys (branch 0). Striker: W forward, S back, D/A turn right/left, Q/E strafe left/right.
#: Goalie: W forward, S back, D right, A left.
PLAYER_KEYS: dict[str, dict[str, tuple[int, float]]] = {
    STRIKER_BRAIN: {"w": (0, 1), "s": (0, 2), "d": (0, 3), "a": (0, 4), "q": (0, 5), "e": (0, 6)},
    GOALIE_BRAIN: {"w": (0, 1), "s": (0, 2), "d": (0, 3), "a": (0, 4)},
}
NUM_FIELDS = 8
NUM_STRIKERS = 2 * NUM_FIELDS
NUM_AGENTS = 4 * NUM_FIELDS
MAX_STEP = 3000
DECISION_INTERVAL = 5
RESET_PARAMETERS = {"ball_scale": 7.5, "gravity": 9.81}

RAY_DISTANCE = 20.0
RAY_ANGLES = (0.0, 45.0, 90.0, 135.0, 180.0, 110.0, 70.0)
RED_TAGS = ("ball", "redGoal", "blueGoal", "wall", "redAgent", "blueAgent")
BLUE_TAGS = ("ball", "blueGoal", "redGoal", "wall", "blueAgent", "redAgent")
HIGH_SWEEP_OFFSET = 1.0
OBSERVATION_SIZE = 2 * len(RAY_ANGLES) * (len(RED_TAGS) + 2)

RUN_SPEED = 2.0  # academy agentRunSpeed: velocity change per physics step (m/s)
STRAFE_SCALE = 0.75
TURN_DEGREES = 100.0 * arena.TIMESTEP  # 2 degrees per physics step
KICK_SPEED = 2000.0 * arena.TIMESTEP / 4.0  # 2000 N for one step on the 4 kg ball: 10 m/s
STRIKER_STEP_REWARD = -1.0 / MAX_STEP
GOALIE_STEP_REWARD = 1.0 / MAX_STEP
STRIKER_SCORES, GOALIE_SCORES = 1.0, 0.1
STRIKER_CONCEDES, GOALIE_CONCEDES = -0.1, -1.0

AGENT_RADIUS = 1.0
AGENT_MASS = 50.0
AGENT_DRAG = 3.0
BALL_MASS = 4.0
BALL_DRAG = 0.1
BALL_ANGULAR_DRAG = 1.0
BALL_RADIUS_PER_SCALE = 0.11
MAX_BALL_SPIN = 7.0  # rad/s, Unity's default maximum angular velocity
WALL_SOLREF = "0.04 0.1"  # soft and lightly damped: the walls' bouncy material (restitution 0.75)

# Field frame: origin at the centre of the pitch's top surface, +x toward the red goal.
FIELD_ORIGINS = np.array([[x, 0.0, z] for x in (0.0, -40.0) for z in (0.0, 25.0, 50.0, 75.0)])
PITCH_CENTER_Y = -0.5
SPAWN_HEIGHT = PITCH_CENTER_Y + 2.0  # agents and ball are dropped 1.5 above the pitch


def _box(x: tuple[float, float], y: tuple[float, float], z: tuple[float, float]) -> AreaBox:
    return ((sum(x) / 2, sum(y) / 2, sum(z) / 2), ((x[1] - x[0]) / 2, (y[1] - y[0]) / 2, (z[1] - z[0]) / 2))


def _mirror(box: AreaBox) -> AreaBox:
    (cx, cy, cz), half = box
    return ((-cx, cy, cz), half)


_RED_END = (
    _box((14.48, 16.36), (-0.15, 3.46), (4.43, 5.51)),  # posts
    _box((14.48, 16.36), (-0.15, 3.46), (-5.51, -4.50)),
    _box((16.34, 16.84), (-0.22, 3.45), (-5.54, 5.40)),  # back wall
)
WALLS: tuple[AreaBox, ...] = (
    _box((-15.0, 15.0), (-2.0, 4.0), (7.59, 8.34)),
    _box((-15.0, 15.0), (-2.0, 4.0), (-8.43, -7.68)),
    _box((15.0, 15.76), (-1.9, 4.05), (5.09, 8.24)),
    _box((15.0, 15.76), (-1.9, 4.05), (-8.38, -5.23)),
    _box((-15.54, -14.9), (-1.9, 4.05), (-8.37, -5.22)),
    _box((-15.54, -14.9), (-1.9, 4.05), (5.11, 8.26)),
    *_RED_END,
    *(_mirror(b) for b in _RED_END),
)
RED_GOAL = _box((14.84, 16.40), (-0.3, 4.01), (-4.66, 4.66))
BLUE_GOAL = _box((-16.42, -14.91), (-0.3, 4.01), (-4.66, 4.66))
_ROLE_WALL_HALF = (0.05, 2.945, 7.5)
_ROLE_WALL_Y, _ROLE_WALL_Z = 1.075, 0.23
GOALIE_WALL_X = 9.0
STRIKER_WALL_X = 10.5
# start offsets along x: red striker, blue striker, red goalie, blue goalie
_X_OFFSET = {(0, 0): 7.0, (0, 1): -7.0, (1, 0): 13.0, (1, 1): -13.0}

# collision bits: 1 everything solid, 2 goalie walls (goalies only), 4 striker walls (strikers only)
_STATIC = {"contype": 1, "conaffinity": 0}
_STRIKER_ONLY = {"contype": 4, "conaffinity": 0}
_GOALIE_ONLY = {"contype": 2, "conaffinity": 0}

# striker action -> turn (degrees), forward, right; goalie action -> forward, right
_STRIKER_TURN = np.array([0.0, 0.0, 0.0, TURN_DEGREES, -TURN_DEGREES, 0.0, 0.0])
_STRIKER_FORWARD = np.array([0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0])
_STRIKER_RIGHT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -STRAFE_SCALE, STRAFE_SCALE])
_GOALIE_FORWARD = np.array([0.0, 1.0, -1.0, 0.0, 0.0])
_GOALIE_RIGHT = np.array([0.0, 0.0, 0.0, 1.0, -1.0])


def inside_unit_ball(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` points uniform in the unit ball ``(count, 3)`` (Random.insideUnitSphere)."""
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return direction * rng.random(count)[:, None] ** (1.0 / 3.0)


def ball_rolling(velocity: np.ndarray, radius: float, mu_g: float) -> np.ndarray:
    """One step of a ball on the pitch, horizontal velocities ``(k, 2)``: faster than
    ``MAX_BALL_SPIN`` x radius it slides (friction ``mu_g`` m/s^2, but not below that speed);
    otherwise it rolls and its angular drag slows it by a factor (1 + 0.4 (1 - drag dt)) / 1.4
    (spin and speed of a solid sphere coupled by friction)."""
    speed = np.linalg.norm(velocity, axis=1)
    rolling_limit = MAX_BALL_SPIN * radius
    rolling = (1.0 + 0.4 * (1.0 - BALL_ANGULAR_DRAG * arena.TIMESTEP)) / 1.4
    slid = np.maximum(speed - mu_g * arena.TIMESTEP, rolling_limit)
    new_speed = np.where(speed > rolling_limit, slid, speed * rolling)
    scale = np.where(speed > 0.0, new_speed / np.maximum(speed, 1e-12), 0.0)
    return velocity * scale[:, None]


class SoccerWorld:
    """Eight pitches in one planar MuJoCo model (Unity frame in and out).

    Bodies: the 32 agents in agent order (strikers: red, blue per pitch; then goalies), then
    the 8 balls; each has two slides (Unity x, z). Agent yaws are kept here (``agent_yaws``).
    """

    def __init__(self) -> None:
        self.origins = FIELD_ORIGINS
        index = np.arange(NUM_AGENTS)
        self.agent_role = (index >= NUM_STRIKERS).astype(np.int64)  # 0 striker, 1 goalie
        self.agent_team = index % 2  # 0 red, 1 blue
        self.agent_field = (index % NUM_STRIKERS) // 2
        self.model = mujoco.MjModel.from_xml_string(self._xml())
        self.data = mujoco.MjData(self.model)
        bodies = NUM_AGENTS + NUM_FIELDS
        self._qpos = self.data.qpos.reshape(bodies, 2)
        self._qvel = self.data.qvel.reshape(bodies, 2)
        geom = mujoco.mjtObj.mjOBJ_GEOM

        def ids(names: list[str]) -> np.ndarray:
            return np.array([mujoco.mj_name2id(self.model, geom, n) for n in names], dtype=np.int64)

        self._agent_geoms = ids([f"agent{i}" for i in range(NUM_AGENTS)])
        self._ball_geoms = ids([f"ball{f}" for f in range(NUM_FIELDS)])
        goals = ids([f"goal{f}_{t}" for f in range(NUM_FIELDS) for t in range(2)])
        self._agent_of = np.full(self.model.ngeom, -1, dtype=np.int64)
        self._agent_of[self._agent_geoms] = np.arange(NUM_AGENTS)
        self._ball_of = np.full(self.model.ngeom, -1, dtype=np.int64)
        self._ball_of[self._ball_geoms] = np.arange(NUM_FIELDS)
        self._goal_of = np.full(self.model.ngeom, -1, dtype=np.int64)
        self._goal_of[goals] = np.arange(2 * NUM_FIELDS)  # field * 2 + (0 red goal, 1 blue goal)
        self.agent_yaws = np.where(self.agent_team == 0, -90.0, 90.0)
        self.ball_radius = BALL_RADIUS_PER_SCALE * RESET_PARAMETERS["ball_scale"]
        self.mu_g = arena.DEFAULT_FRICTION * RESET_PARAMETERS["gravity"]
        self._agent_decay = float(linear_drag_factor(AGENT_DRAG))
        self._ball_decay = float(linear_drag_factor(BALL_DRAG))
        self.ball_touching = np.zeros(NUM_AGENTS, dtype=bool)
        self.goal_touching = np.zeros(2 * NUM_FIELDS, dtype=bool)
        self.pending_kick = np.zeros((NUM_FIELDS, 2))
        starts = np.array([_X_OFFSET[(int(r), int(t))] for r, t in zip(self.agent_role, self.agent_team)])
        self._qpos[:NUM_AGENTS, 0] = self.origins[self.agent_field, 0] + starts
        self._qpos[:NUM_AGENTS, 1] = self.origins[self.agent_field, 2]
        self._qpos[NUM_AGENTS:] = self.origins[:, [0, 2]]
        mujoco.mj_forward(self.model, self.data)

    def _xml(self) -> str:
        static, bodies = [], []
        for f, origin in enumerate(self.origins):
            for w, (center, half) in enumerate(WALLS):
                c = origin + center
                static.append(
                    prism_geom(
                        f"wall{f}_{w}", (c[0], c[2]), (half[0], half[2]), solref=WALL_SOLREF, **_STATIC
                    )
                )
            for t, (center, half) in enumerate((RED_GOAL, BLUE_GOAL)):
                c = origin + center
                static.append(prism_geom(f"goal{f}_{t}", (c[0], c[2]), (half[0], half[2]), **_STATIC))
            for x, bits in ((GOALIE_WALL_X, _GOALIE_ONLY), (STRIKER_WALL_X, _STRIKER_ONLY)):
                for sign in (1.0, -1.0):
                    c = origin + (sign * x, 0.0, _ROLE_WALL_Z)
                    name = f"role{f}_{x}_{sign}"
                    static.append(
                        prism_geom(
                            name,
                            (c[0], c[2]),
                            (_ROLE_WALL_HALF[0], _ROLE_WALL_HALF[2]),
                            solref=WALL_SOLREF,
                            **bits,
                        )
                    )
        for i in range(NUM_AGENTS):
            affinity = 3 if self.agent_role[i] else 5  # goalies meet goalie walls, strikers striker walls
            bodies.append(
                f'<body name="agent_body{i}" pos="0 0 0">'
                + arena.PLANAR_SLIDES
                + f'<inertial pos="0 0 0" mass="{AGENT_MASS}" diaginertia="1 1 1"/>'
                f'<geom name="agent{i}" type="capsule" size="{AGENT_RADIUS} 50" mass="0" contype="1" conaffinity="{affinity}"/>'
                "</body>"
            )
        for f in range(NUM_FIELDS):
            r = BALL_RADIUS_PER_SCALE * RESET_PARAMETERS["ball_scale"]
            bodies.append(
                f'<body name="ball_body{f}" pos="0 0 0">'
                + arena.PLANAR_SLIDES
                + f'<inertial pos="0 0 0" mass="{BALL_MASS}" diaginertia="1 1 1"/>'
                f'<geom name="ball{f}" type="capsule" size="{r} 50" mass="0" gap="{arena.EVENT_RELEASE}"/>'
                "</body>"
            )
        return (
            '<mujoco model="SoccerTwos">'
            f'<option timestep="{arena.TIMESTEP}" gravity="0 0 0" cone="elliptic"/>'
            f'<default><geom friction="{arena.DEFAULT_FRICTION} 0.005 0.0001" contype="1" conaffinity="1"/></default>'
            f"<worldbody>{''.join(static)}{''.join(bodies)}</worldbody>"
            "</mujoco>"
        )

    # ---- state (Unity frame) ----
    @property
    def agent_positions(self) -> np.ndarray:
        """Agent centres ``(32, 3)`` (1 m above the pitch)."""
        q = self._qpos[:NUM_AGENTS]
        return np.stack([q[:, 0], np.full(NUM_AGENTS, AGENT_RADIUS), q[:, 1]], axis=1)

    @property
    def agent_velocities(self) -> np.ndarray:
        """Agent velocities ``(32, 3)`` (m/s)."""
        v = self._qvel[:NUM_AGENTS]
        return np.stack([v[:, 0], np.zeros(NUM_AGENTS), v[:, 1]], axis=1)

    @property
    def ball_positions(self) -> np.ndarray:
        """Ball centres ``(8, 3)`` (one radius above the pitch)."""
        q = self._qpos[NUM_AGENTS:]
        return np.stack([q[:, 0], np.full(NUM_FIELDS, self.ball_radius), q[:, 1]], axis=1)

    @property
    def ball_velocities(self) -> np.ndarray:
        """Ball velocities ``(8, 3)`` (m/s)."""
        v = self._qvel[NUM_AGENTS:]
        return np.stack([v[:, 0], np.zeros(NUM_FIELDS), v[:, 1]], axis=1)

    # ---- changes ----
    def place_agents(self, agents: np.ndarray, positions: np.ndarray, yaws: np.ndarray) -> None:
        """Teleport ``agents`` to Unity ``positions`` ``(k, 3)`` facing ``yaws`` ``(k,)``, at rest."""
        self._qpos[agents] = positions[:, [0, 2]]
        self._qvel[agents] = 0.0
        self.agent_yaws[agents] = yaws
        self.ball_touching[agents] = False

    def place_balls(self, fields: np.ndarray, positions: np.ndarray) -> None:
        """Teleport the balls of ``fields`` to Unity ``positions`` ``(k, 3)``, at rest."""
        self._qpos[NUM_AGENTS + fields] = positions[:, [0, 2]]
        self._qvel[NUM_AGENTS + fields] = 0.0
        self.pending_kick[fields] = 0.0
        self.ball_touching[np.isin(self.agent_field, fields)] = False
        self.goal_touching[np.isin(np.arange(2 * NUM_FIELDS) // 2, fields)] = False

    def set_ball_velocities(self, fields: np.ndarray, velocities: np.ndarray) -> None:
        """Set the horizontal part of the balls' Unity velocities ``(k, 3)``."""
        self._qvel[NUM_AGENTS + fields] = velocities[:, [0, 2]]

    def set_ball_radius(self, radius: float) -> None:
        """Every ball's radius (m), for the collisions.

        :raises ValueError: if ``radius`` is not positive.
        """
        if not radius > 0.0:
            raise ValueError(f"SoccerTwos reset parameter ball_scale must be positive, got radius {radius}.")
        g = self._ball_geoms
        self.model.geom_size[g, 0] = radius
        self.model.geom_rbound[g] = radius + self.model.geom_size[g, 1]
        self.model.geom_aabb[g, 3] = radius
        self.model.geom_aabb[g, 4] = radius
        self.ball_radius = radius

    def add_velocity(self, agents: np.ndarray, delta_v: np.ndarray) -> None:
        """ForceMode.VelocityChange: add the horizontal part of Unity ``delta_v`` ``(k, 3)``."""
        self._qvel[agents] += delta_v[:, [0, 2]]

    def step(self, kick_power: np.ndarray) -> np.ndarray:
        """Drag, floor friction and the ball's rolling, one 0.02 s MuJoCo step, then the
        collision-enter callbacks: an agent that starts touching its ball kicks it with
        ``kick_power`` ``(32,)`` x 10 m/s (applied in the next step, like a force); returns
        bool ``(8, 2)``: the ball started touching the red (column 0) / blue (1) goal."""
        v = self._qvel
        v[:NUM_AGENTS] = floor_friction(v[:NUM_AGENTS] * self._agent_decay, self.mu_g)
        balls = v[NUM_AGENTS:] + self.pending_kick
        self.pending_kick[:] = 0.0
        v[NUM_AGENTS:] = ball_rolling(balls * self._ball_decay, self.ball_radius, self.mu_g)
        mujoco.mj_step(self.model, self.data)

        n = self.data.ncon
        ball_close = np.zeros(NUM_AGENTS, dtype=bool)
        ball_near = np.zeros(NUM_AGENTS, dtype=bool)
        goal_close = np.zeros(2 * NUM_FIELDS, dtype=bool)
        goal_near = np.zeros(2 * NUM_FIELDS, dtype=bool)
        if n:
            contact = self.data.contact
            g = contact.geom[:n]
            dist = contact.dist[:n]
            close, near = dist <= arena.EVENT_MARGIN, dist <= arena.EVENT_RELEASE
            for a_col, b_col in ((0, 1), (1, 0)):
                ball = self._ball_of[g[:, b_col]] >= 0
                agent = self._agent_of[g[:, a_col]]
                goal = self._goal_of[g[:, a_col]]
                hit = ball & (agent >= 0)
                ball_close[agent[hit & close]] = True
                ball_near[agent[hit & near]] = True
                hit = ball & (goal >= 0)
                goal_close[goal[hit & close]] = True
                goal_near[goal[hit & near]] = True

        kicked = ball_close & ~self.ball_touching
        self.ball_touching = ball_close | (self.ball_touching & ball_near)
        kickers = np.flatnonzero(kicked & (kick_power > 0.0))
        if kickers.size:
            fields = self.agent_field[kickers]
            away = self._qpos[NUM_AGENTS + fields] - self._qpos[kickers]
            away /= np.maximum(np.linalg.norm(away, axis=1, keepdims=True), 1e-9)
            np.add.at(self.pending_kick, fields, away * (KICK_SPEED * kick_power[kickers])[:, None])
        scored = goal_close & ~self.goal_touching
        self.goal_touching = goal_close | (self.goal_touching & goal_near)
        return scored.reshape(NUM_FIELDS, 2)


class SoccerTwos(Scene):
    """SoccerTwos: brains ``StrikerLearning`` (agents 0-15) and ``GoalieLearning`` (16-31), 112
    observations each, discrete [7] and [5]. Agent 2f is pitch f's red striker, 2f + 1 its
    blue striker, 16 + 2f its red goalie and 17 + 2f its blue goalie."""

    world: SoccerWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        def brain(name: str, actions: int) -> BrainSpec:
            return BrainSpec(
                name=name,
                vector_observation_size=OBSERVATION_SIZE,
                vector_action_space_type="discrete",
                vector_action_size=(actions,),
                num_stacked_vector_observations=1,
                vector_action_descriptions=("",) * actions,
            )

        return SceneSpec(
            academy_name="Academy",
            brains=[brain(STRIKER_BRAIN, 7), brain(GOALIE_BRAIN, 5)],
            agents=[
                AgentGroup(
                    STRIKER_BRAIN, NUM_STRIKERS, max_step=MAX_STEP, decision_interval=DECISION_INTERVAL
                ),
                AgentGroup(
                    GOALIE_BRAIN, NUM_STRIKERS, max_step=MAX_STEP, decision_interval=DECISION_INTERVAL
                ),
            ],
            reset_parameters=dict(RESET_PARAMETERS),
            training_configuration=EngineConfiguration(800, 500, 0, 10.0, 60),
            inference_configuration=EngineConfiguration(1280, 720, 5, 1.0, 60),
        )

    def initialize(self) -> None:
        self.world = w = SoccerWorld()
        self.origins = w.origins
        self.kick_power = np.zeros(NUM_AGENTS)
        self.gravity = RESET_PARAMETERS["gravity"]
        fields = np.arange(NUM_FIELDS)
        cast = CastWorld()
        self._ball_sphere = cast.add_spheres(
            w.ball_positions, np.full(NUM_FIELDS, w.ball_radius), "ball", fields
        )
        # per team: index of its first agent sphere and its agents
        self._team_spheres: list[tuple[int, np.ndarray]] = []
        for team, tag in ((0, "redAgent"), (1, "blueAgent")):
            members = np.flatnonzero(w.agent_team == team)
            first = cast.add_spheres(
                w.agent_positions[members], np.full(members.size, AGENT_RADIUS), tag, w.agent_field[members]
            )
            self._team_spheres.append((first, members))
        for center, half in WALLS:
            cast.add_boxes(self.origins + center, np.tile(half, (NUM_FIELDS, 1)), 0.0, "wall", fields)
        for (center, half), tag in ((RED_GOAL, "redGoal"), (BLUE_GOAL, "blueGoal")):
            cast.add_boxes(self.origins + center, np.tile(half, (NUM_FIELDS, 1)), 0.0, tag, fields)
        for x in (GOALIE_WALL_X, STRIKER_WALL_X):
            for sign in (1.0, -1.0):
                wall_centers = self.origins + (sign * x, _ROLE_WALL_Y, _ROLE_WALL_Z)
                cast.add_boxes(wall_centers, np.tile(_ROLE_WALL_HALF, (NUM_FIELDS, 1)), 0.0, None, fields)
        self.cast_world = cast
        self._sensors = [
            (
                RayPerception(RAY_DISTANCE, RAY_ANGLES, tags),
                RayPerception(RAY_DISTANCE, RAY_ANGLES, tags, HIGH_SWEEP_OFFSET),
            )
            for tags in (RED_TAGS, BLUE_TAGS)
        ]

    # ---- reset ----
    def academy_reset(self) -> None:
        params = {**RESET_PARAMETERS, **self.academy.reset_parameters}
        self.gravity = float(params["gravity"])
        self.world.mu_g = arena.DEFAULT_FRICTION * self.gravity

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        w = self.world
        rng = self.academy.rng
        k = agents.size
        field = w.agent_field[agents]
        offsets = np.array([_X_OFFSET[(int(w.agent_role[a]), int(w.agent_team[a]))] for a in agents])
        spread = 2.0 * inside_unit_ball(rng, k)
        positions = self.origins[field] + np.stack(
            [offsets + spread[:, 0], np.zeros(k), spread[:, 2]], axis=1
        )
        w.place_agents(agents, positions, np.where(w.agent_team[agents] == 0, -90.0, 90.0))
        self.kick_power[agents] = 0.0
        # every agent reset also resets its pitch's ball: the last draw per pitch counts
        params = {**RESET_PARAMETERS, **self.academy.reset_parameters}
        w.set_ball_radius(BALL_RADIUS_PER_SCALE * float(params["ball_scale"]))
        ball_spread = 2.0 * inside_unit_ball(rng, k)
        last = {int(f): i for i, f in enumerate(field)}
        fields = np.array(sorted(last))
        rows = np.array([last[f] for f in fields])
        ball = self.origins[fields] + np.stack(
            [ball_spread[rows, 0], np.zeros(rows.size), ball_spread[rows, 2]], axis=1
        )
        w.place_balls(fields, ball)

    # ---- observations ----
    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        w = self.world
        cast = self.cast_world
        cast.update_spheres(self._ball_sphere, w.ball_positions)
        cast.set_sphere_radii(self._ball_sphere, np.full(NUM_FIELDS, w.ball_radius))
        positions = w.agent_positions
        for first, members in self._team_spheres:
            cast.update_spheres(first, positions[members])
        obs = np.empty((agents.size, OBSERVATION_SIZE), dtype=np.float32)
        half = OBSERVATION_SIZE // 2
        for team, (low, high) in enumerate(self._sensors):
            rows = np.flatnonzero(w.agent_team[agents] == team)
            if rows.size == 0:
                continue
            who = agents[rows]
            origins, yaws, fields = positions[who], w.agent_yaws[who], w.agent_field[who]
            obs[rows, :half] = low.perceive(cast, origins, yaws, fields)
            obs[rows, half:] = high.perceive(cast, origins, yaws, fields)
        return obs

    # ---- actions ----
    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        if brain == STRIKER_BRAIN:
            return striker_heuristic(self, agents)
        return goalie_heuristic(self, agents)

    @classmethod
    def player_keys(cls, brain: str) -> Mapping[str, tuple[int, float]] | None:
        return PLAYER_KEYS.get(brain)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        w = self.world
        action = actions[:, 0].astype(np.int64)
        goalie = w.agent_role[agents] == 1
        forward = np.where(goalie, _GOALIE_FORWARD[np.minimum(action, 4)], _STRIKER_FORWARD[action])
        right = np.where(goalie, _GOALIE_RIGHT[np.minimum(action, 4)], _STRIKER_RIGHT[action])
        turn = np.where(goalie, 0.0, _STRIKER_TURN[action])
        self.kick_power[agents] = (action == 1).astype(np.float64)
        yaws = w.agent_yaws[agents]
        delta = forward_vectors(yaws) * forward[:, None] + right_vectors(yaws) * right[:, None]
        w.agent_yaws[agents] = yaws + turn
        w.add_velocity(agents, RUN_SPEED * delta)
        self.academy.add_reward(agents, np.where(goalie, GOALIE_STEP_REWARD, STRIKER_STEP_REWARD))

    def physics_step(self) -> None:
        w = self.world
        scored = w.step(self.kick_power)  # (8, 2): ball touched the red / blue goal
        if not scored.any():
            return
        for field, goal in zip(*np.nonzero(scored)):
            scorer = 1 - goal  # a ball in the red goal scores for blue
            members = np.flatnonzero(w.agent_field == field)
            team, role = w.agent_team[members], w.agent_role[members]
            reward = np.where(
                team == scorer,
                np.where(role == 0, STRIKER_SCORES, GOALIE_SCORES),
                np.where(role == 0, STRIKER_CONCEDES, GOALIE_CONCEDES),
            )
            self.academy.add_reward(members, reward)
            self.academy.done(members)


# ---------------------------------------------------------------- scripted players
def _team_direction(team: np.ndarray) -> np.ndarray:
    """Unity +x or -x: the direction a team attacks in (red attacks toward -x)."""
    return np.where(team == 0, -1.0, 1.0)


def _best_moves(
    position: np.ndarray, velocity: np.ndarray, yaw: np.ndarray, target: np.ndarray, moves: np.ndarray
) -> np.ndarray:
    """Index into ``moves`` ``(m, 2)`` (forward, right magnitudes) whose 5 repeated velocity
    changes, drag and coasting bring each agent closest to ``target`` (``(k, 3)`` Unity)."""
    decay = 1.0 - AGENT_DRAG * arena.TIMESTEP
    fwd, right = forward_vectors(yaw), right_vectors(yaw)
    delta = RUN_SPEED * (
        moves[None, :, 0, None] * fwd[:, None, :] + moves[None, :, 1, None] * right[:, None, :]
    )
    v = np.repeat(velocity[:, None, :], len(moves), axis=1)
    moved = np.zeros_like(v)
    for _ in range(DECISION_INTERVAL):
        v = (v + delta) * decay
        moved += v * arena.TIMESTEP
    rest = moved + v * (arena.TIMESTEP * decay / (1.0 - decay))
    cost = (((position - target)[:, None, :] + rest)[..., [0, 2]] ** 2).sum(-1)
    return np.argmin(cost, axis=1)


_STRIKER_MOVES = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, -STRAFE_SCALE], [0.0, STRAFE_SCALE]])
_STRIKER_MOVE_ACTIONS = np.array([0, 1, 2, 5, 6])
_GOALIE_MOVES = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])


def striker_heuristic(scene: SoccerTwos, agents: np.ndarray) -> np.ndarray:
    """Scripted strikers ``agents`` (indices < 16), float32 ``(k, 1)``: keep facing the
    opponent goal; get behind the ball on the line from the opponent goal through it (going
    around it when on the wrong side), then run through it moving forward, which kicks."""
    w = scene.world
    team = w.agent_team[agents]
    field = w.agent_field[agents]
    attack = _team_direction(team)
    position, velocity, yaw = w.agent_positions[agents], w.agent_velocities[agents], w.agent_yaws[agents]
    ball = w.ball_positions[field]
    goal = scene.origins[field] + np.stack([15.6 * attack, np.zeros(agents.size), np.zeros(agents.size)], 1)
    u = goal - ball
    u[:, 1] = 0.0
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    normal = np.stack([-u[:, 2], np.zeros(agents.size), u[:, 0]], axis=1)
    rel = position - ball
    along = (rel * u).sum(1)
    lateral = (rel * normal).sum(1)
    reach = w.ball_radius + AGENT_RADIUS
    behind = along < -0.5 * reach
    lined_up = behind & (np.abs(lateral) < 0.5)
    side = np.where(lateral >= 0.0, 1.0, -1.0)
    around = ball - u * (reach + 1.5) + normal * (side * (reach + 1.5))[:, None]
    approach = ball - u * (reach + 1.0)
    target = np.where(lined_up[:, None], ball + u * 3.0, np.where(behind[:, None], approach, around))
    action = _STRIKER_MOVE_ACTIONS[_best_moves(position, velocity, yaw, target, _STRIKER_MOVES)]
    action = np.where(lined_up, 1, action)
    facing = np.where(team == 0, -90.0, 90.0)
    error = (yaw - facing + 180.0) % 360.0 - 180.0
    action = np.where(np.abs(error) > 8.0, np.where(error > 0, 4, 3), action)
    return action.astype(np.float32)[:, None]


def goalie_heuristic(scene: SoccerTwos, agents: np.ndarray) -> np.ndarray:
    """Scripted goalies ``agents`` (indices >= 16), float32 ``(k, 1)``: stand 2.5 m in front
    of the own goal at the ball's z (within the posts); when the ball comes within 4 m on the
    field side, run through it (forward kicks)."""
    w = scene.world
    team = w.agent_team[agents]
    field = w.agent_field[agents]
    attack = _team_direction(team)
    position, velocity, yaw = w.agent_positions[agents], w.agent_velocities[agents], w.agent_yaws[agents]
    ball = w.ball_positions[field] - scene.origins[field]
    home_x = -attack * 12.5
    guard = np.stack([home_x, np.zeros(agents.size), np.clip(ball[:, 2], -3.5, 3.5)], axis=1)
    mine = position - scene.origins[field]
    close = (np.linalg.norm((ball - mine)[:, [0, 2]], axis=1) < 4.0) & (
        (ball[:, 0] - mine[:, 0]) * attack > 0.0
    )
    target = scene.origins[field] + np.where(
        close[:, None], ball + np.stack([attack * 2.0, 0 * attack, 0 * attack], 1), guard
    )
    move = _best_moves(position, velocity, yaw, target, _GOALIE_MOVES)
    action = np.where(close & (move == 0), 1, move)
    return action.astype(np.float32)[:, None]
