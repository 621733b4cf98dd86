"""FoodCollector ("BananaCollectors"): agents collect good food and avoid bad food in four
walled 100 x 100 areas, and may freeze each other with a laser.

Four areas of five agents (20 agents) on brain ``BananaLearning``: discrete branches
(3, 3, 3, 2): forward/backward, right/left (replaces forward/backward), turn (6 degrees a
physics step), laser. Vector observation 53: one sweep of seven sphere casts (length 50;
angles 20, 90, 160, 45, 135, 70, 110; tags banana, agent, wall, badBanana, frozenAgent) =
49, the agent's velocity in its own frame (x, z), frozen (1/0), fired the laser in the last
physics step (1/0). Rewards: +1 for touching good food, -1 for bad food (the food re-appears
at a random point of its area). No step penalty; every 1500 physics steps the academy ends
every episode and lays out fresh food (agent maxStep 5000 is never reached). Decision every
5 physics steps. Reset parameters ``laser_length`` 1 (only the drawn laser) and
``agent_scale`` 1 (the agent's cube size, read at every agent reset).

The laser is a sphere cast (radius 2, length 25) straight ahead; the first agent it meets is
frozen for 4 s (200 physics steps): it ignores its actions and is seen as ``frozenAgent``.

Physics on MuJoCo, planar (see ``box_arena``): agents (1 x 1 x 1 boxes, mass 10, drag 0.5)
and food (1.086 x 1.088 x 2.901 boxes at a fixed random yaw, mass 5, drag 0.25) slide in x
and z, rotations frozen, and push each other; the floor's Coulomb friction (0.6) is applied
per step. Food that re-appears is put straight onto the floor (Unity drops it from 3 m).
"""

from __future__ import annotations

import mujoco
import numpy as np

from .box_arena import (
    DEFAULT_FRICTION,
    EVENT_MARGIN,
    EVENT_RELEASE,
    PLANAR_SLIDES,
    TIMESTEP,
    AreaBox,
    area_origins,
    floor_friction,
    forward_vectors,
    linear_drag_factor,
    planar_model_xml,
    prism_geom,
    resize_prisms,
    right_vectors,
    wall_prisms,
    yaw_quaternions,
)
from .sdk.messages import DecisionBatch
from .sdk.ray_perception import CastWorld, RayPerception, sphere_cast_boxes, yaw_rotate
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec

BRAIN = "BananaLearning"
#: Player brain keys: W/S forward/back (branch 0), E/Q strafe right/left (branch 1), A/D turn left/right
#: (branch 2), Space fires the laser (branch 3).
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    "w": (0, 1),
    "s": (0, 2),
    "e": (1, 1),
    "q": (1, 2),
    "a": (2, 1),
    "d": (2, 2),
    "space": (3, 1),
}
NUM_AREAS = 4
AGENTS_PER_AREA = 5
NUM_AGENTS = NUM_AREAS * AGENTS_PER_AREA
GOOD_PER_AREA = 25
BAD_PER_AREA = 25
FOOD_PER_AREA = GOOD_PER_AREA + BAD_PER_AREA
MAX_STEP = 5000
DECISION_INTERVAL = 5
ACADEMY_MAX_STEPS = 1500
BRANCHES = (3, 3, 3, 2)
RESET_PARAMETERS = {"laser_length": 1.0, "agent_scale": 1.0}

RAY_DISTANCE = 50.0
RAY_ANGLES = (20.0, 90.0, 160.0, 45.0, 135.0, 70.0, 110.0)
DETECTABLE_TAGS = ("banana", "agent", "wall", "badBanana", "frozenAgent")
OBSERVATION_SIZE = len(RAY_ANGLES) * (len(DETECTABLE_TAGS) + 2) + 4

GRAVITY = 9.81
FLOOR_MU_G = DEFAULT_FRICTION * GRAVITY
MOVE_SPEED = 2.0  # velocity change per physics step (m/s)
TURN_DEGREES = 300.0 * TIMESTEP  # 6 degrees per physics step
SPEED_LIMIT_SQUARED = 25.0  # above it the velocity is scaled by 0.95 every step
SPEED_DAMPING = 0.95
SHOOT_MOVE_SCALE = 0.5
SHOOT_VELOCITY_SCALE = 0.75
LASER_RADIUS = 2.0
LASER_LENGTH = 25.0
FREEZE_STEPS = 200  # 4 s of physics steps
AGENT_MASS = 10.0
AGENT_DRAG = 0.5
FOOD_MASS = 5.0
FOOD_DRAG = 0.25
GOOD_REWARD = 1.0
BAD_REWARD = -1.0

AREA_SPACING = 150.0  # metres between the areas along x (Unity stacks them 25 m apart vertically)
SPAWN_RANGE = 45.0  # positions U(-45, 45) about the area centre in x and z
GROUND: AreaBox = ((0.0, 0.0, 0.0), (50.0, 0.5, 50.0))
WALLS: tuple[AreaBox, ...] = (
    ((0.0, 0.0, -50.0), (50.5, 25.0, 0.5)),
    ((0.0, 0.0, 50.0), (50.5, 25.0, 0.5)),
    ((-50.0, 0.0, 0.0), (0.5, 25.0, 49.5)),
    ((50.0, 0.0, 0.0), (0.5, 25.0, 49.5)),
)
FLOOR_TOP = 0.5
#: food collider half extents in its own frame (x across, y up, z along the long axis)
FOOD_HALF = (0.543, 0.544, 1.4505)
FOOD_HEIGHT = FLOOR_TOP + FOOD_HALF[1]

# action branches -> motion: branch 0 forward/backward, branch 1 right/left, branch 2 turn
_FORWARD = np.array([0.0, 1.0, -1.0])
_RIGHT = np.array([0.0, 1.0, -1.0])
_TURN = np.array([0.0, -TURN_DEGREES, TURN_DEGREES])


def agent_height(scale: np.ndarray | float) -> np.ndarray:
    """Centre height of an agent cube of side ``scale`` resting on the floor."""
    return FLOOR_TOP + 0.5 * np.asarray(scale, dtype=np.float64)


class FoodWorld:
    """The physics of the areas (four in FoodCollector) in one planar MuJoCo model (Unity frame
    in and out).

    Bodies: the agents (area-major), then the 50 food boxes of each area (area-major, good before
    bad). Each has two slides (Unity x, z); its yaw lives on a jointless child frame.
    """

    def __init__(self, num_areas: int = NUM_AREAS, agents_per_area: int = AGENTS_PER_AREA) -> None:
        self.num_areas = num_areas
        self.num_agents = num_areas * agents_per_area
        self.origins = area_origins(num_areas, AREA_SPACING)
        self.agent_area = np.repeat(np.arange(num_areas), agents_per_area)
        self.food_area = np.repeat(np.arange(num_areas), FOOD_PER_AREA)
        self.food_good = np.tile(np.arange(FOOD_PER_AREA) < GOOD_PER_AREA, num_areas)
        self.model = mujoco.MjModel.from_xml_string(self._xml())
        self.data = mujoco.MjData(self.model)
        bodies = self.num_agents + len(self.food_area)
        self._qpos = self.data.qpos.reshape(bodies, 2)
        self._qvel = self.data.qvel.reshape(bodies, 2)
        name = mujoco.mjtObj
        self._agent_frames = np.array(
            [
                mujoco.mj_name2id(self.model, name.mjOBJ_BODY, f"agent_frame{i}")
                for i in range(self.num_agents)
            ]
        )
        self._food_frames = np.array(
            [
                mujoco.mj_name2id(self.model, name.mjOBJ_BODY, f"food_frame{j}")
                for j in range(len(self.food_area))
            ]
        )
        self._agent_geoms = np.array(
            [mujoco.mj_name2id(self.model, name.mjOBJ_GEOM, f"agent{i}") for i in range(self.num_agents)]
        )
        # geom id -> agent index / food index (-1: neither)
        self._agent_of_geom = np.full(self.model.ngeom, -1, dtype=np.int64)
        self._agent_of_geom[self._agent_geoms] = np.arange(self.num_agents)
        self._food_of_geom = np.full(self.model.ngeom, -1, dtype=np.int64)
        for j in range(len(self.food_area)):
            self._food_of_geom[mujoco.mj_name2id(self.model, name.mjOBJ_GEOM, f"food{j}")] = j
        self.agent_yaws = np.zeros(self.num_agents)
        self.food_yaws = np.zeros(len(self.food_area))
        self.agent_scales = np.ones(self.num_agents)
        self._agent_decay = float(linear_drag_factor(AGENT_DRAG))
        self._food_decay = float(linear_drag_factor(FOOD_DRAG))
        # until the first reset: agents and food on a grid, apart from each other
        grid = np.stack(np.meshgrid(np.arange(-40.0, 41.0, 8.0), np.arange(-40.0, 41.0, 8.0)), -1).reshape(
            -1, 2
        )
        for area, origin in enumerate(self.origins):
            agents = np.flatnonzero(self.agent_area == area)
            food = np.flatnonzero(self.food_area == area)
            spots = origin[[0, 2]] + grid[: agents.size + food.size]
            self._qpos[agents] = spots[: agents.size]
            self._qpos[self.num_agents + food] = spots[agents.size :]
        mujoco.mj_forward(self.model, self.data)

    def _xml(self) -> str:
        static, bodies = [], []
        for a, origin in enumerate(self.origins):
            static.extend(wall_prisms(WALLS, origin, a))
        for i in range(self.num_agents):
            bodies.append(
                f'<body name="agent_body{i}" pos="0 0 0">'
                + PLANAR_SLIDES
                + f'<inertial pos="0 0 0" mass="{AGENT_MASS}" diaginertia="1 1 1"/>'
                f'<body name="agent_frame{i}">'
                + prism_geom(f"agent{i}", (0.0, 0.0), (0.5, 0.5), mass=0)
                + "</body></body>"
            )
        for j in range(len(self.food_area)):
            bodies.append(
                f'<body name="food_body{j}" pos="0 0 0">'
                + PLANAR_SLIDES
                + f'<inertial pos="0 0 0" mass="{FOOD_MASS}" diaginertia="1 1 1"/>'
                f'<body name="food_frame{j}">'
                + prism_geom(f"food{j}", (0.0, 0.0), (FOOD_HALF[0], FOOD_HALF[2]), mass=0, gap=EVENT_RELEASE)
                + "</body></body>"
            )
        return planar_model_xml("FoodCollector", static, bodies)

    # ---- state (Unity frame) ----
    @property
    def agent_positions(self) -> np.ndarray:
        """Agent centres ``(num_agents, 3)``."""
        q = self._qpos[: self.num_agents]
        return np.stack([q[:, 0], agent_height(self.agent_scales), q[:, 1]], axis=1)

    @property
    def agent_velocities(self) -> np.ndarray:
        """Agent velocities ``(num_agents, 3)`` (m/s)."""
        v = self._qvel[: self.num_agents]
        return np.stack([v[:, 0], np.zeros(self.num_agents), v[:, 1]], axis=1)

    @property
    def food_positions(self) -> np.ndarray:
        """Food centres ``(50 x num_areas, 3)``."""
        q = self._qpos[self.num_agents :]
        return np.stack([q[:, 0], np.full(len(q), FOOD_HEIGHT), q[:, 1]], axis=1)

    # ---- changes ----
    def place_agents(self, agents: np.ndarray, positions: np.ndarray, yaws: np.ndarray) -> None:
        """Teleport ``agents`` to Unity ``positions`` ``(k, 3)`` (height ignored) facing ``yaws``
        ``(k,)`` degrees, at rest."""
        self._qpos[agents] = positions[:, [0, 2]]
        self._qvel[agents] = 0.0
        self.agent_yaws[agents] = yaws

    def place_food(self, food: np.ndarray, positions: np.ndarray, yaws: np.ndarray) -> None:
        """Teleport ``food`` to Unity ``positions`` ``(k, 3)`` turned by ``yaws`` ``(k,)``, at rest."""
        self._qpos[self.num_agents + food] = positions[:, [0, 2]]
        self._qvel[self.num_agents + food] = 0.0
        self.food_yaws[food] = yaws
        self.model.body_quat[self._food_frames[food]] = yaw_quaternions(yaws)

    def set_agent_velocities(self, agents: np.ndarray, velocities: np.ndarray) -> None:
        """Set the horizontal part of the agents' Unity velocities ``(k, 3)``."""
        self._qvel[agents] = velocities[:, [0, 2]]

    def set_agent_scales(self, agents: np.ndarray, scale: float) -> None:
        """Cube side ``scale`` for ``agents`` (collision geoms and broad-phase bounds).

        :raises ValueError: if ``scale`` is not positive.
        """
        if not scale > 0.0:
            raise ValueError(f"FoodCollector reset parameter agent_scale must be positive, got {scale}.")
        resize_prisms(self.model, self._agent_geoms[agents], 0.5 * scale)
        self.agent_scales[agents] = scale

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        """Drag and floor friction, one 0.02 s MuJoCo step; returns the (agent, food) index
        pairs int64 ``(m,)`` each that touch after it (OnCollisionEnter: food that is touched
        re-appears elsewhere at once, so every touch is a new one)."""
        v = self._qvel
        v[: self.num_agents] = floor_friction(v[: self.num_agents] * self._agent_decay, FLOOR_MU_G)
        v[self.num_agents :] = floor_friction(v[self.num_agents :] * self._food_decay, FLOOR_MU_G)
        self.model.body_quat[self._agent_frames] = yaw_quaternions(self.agent_yaws)
        mujoco.mj_step(self.model, self.data)
        n = self.data.ncon
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        contact = self.data.contact
        geoms = contact.geom[:n]
        close = contact.dist[:n] <= EVENT_MARGIN
        g1, g2 = geoms[:, 0], geoms[:, 1]
        a1, a2 = self._agent_of_geom[g1], self._agent_of_geom[g2]
        f1, f2 = self._food_of_geom[g1], self._food_of_geom[g2]
        first = close & (a1 >= 0) & (f2 >= 0)
        second = close & (a2 >= 0) & (f1 >= 0)
        agents = np.concatenate([a1[first], a2[second]])
        food = np.concatenate([f2[first], f1[second]])
        return agents, food


class FoodCollector(Scene):
    """FoodCollector: brain ``BananaLearning``, 20 agents (5 in each of 4 areas), 53
    observations, discrete (3, 3, 3, 2); the academy ends all episodes every 1500 steps."""

    player_key_table = PLAYER_KEYS

    brain_name = BRAIN
    #: areas and agents per area; VisualFoodCollector has two of four
    num_areas = NUM_AREAS
    agents_per_area = AGENTS_PER_AREA
    world: FoodWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(
                cls.brain_name,
                OBSERVATION_SIZE,
                "discrete",
                BRANCHES,
                vector_action_descriptions=("",) * len(BRANCHES),
            ),
            cls.num_areas * cls.agents_per_area,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            reset_parameters=RESET_PARAMETERS,
            academy_max_steps=ACADEMY_MAX_STEPS,
            training=EngineConfiguration(500, 500, 0, 15.0, -1),
        )

    def initialize(self) -> None:
        self.world = w = FoodWorld(self.num_areas, self.agents_per_area)
        self.num_agents = w.num_agents
        self.origins = w.origins
        self.agent_area = w.agent_area
        self.frozen = np.zeros(self.num_agents, dtype=bool)
        self.frozen_at = np.zeros(self.num_agents, dtype=np.int64)
        self.shot = np.zeros(self.num_agents, dtype=bool)
        self.laser_length = RESET_PARAMETERS["laser_length"]
        self.tick = 0  # physics steps since start (the agents' clock for the freeze time)
        cast = CastWorld()
        far = np.tile([0.0, -1000.0, 0.0], (self.num_agents, 1))
        half = np.full((self.num_agents, 3), 0.5)
        # every agent twice: as "agent" and as "frozenAgent"; the copy not in use is parked far below
        self._agent_box = cast.add_boxes(far, half, 0.0, "agent", w.agent_area)
        self._frozen_box = cast.add_boxes(far, half, 0.0, "frozenAgent", w.agent_area)
        food_half = np.tile(FOOD_HALF, (len(w.food_area), 1))
        self._good_box = cast.add_boxes(
            w.food_positions[w.food_good], food_half[w.food_good], 0.0, "banana", w.food_area[w.food_good]
        )
        self._bad_box = cast.add_boxes(
            w.food_positions[~w.food_good],
            food_half[~w.food_good],
            0.0,
            "badBanana",
            w.food_area[~w.food_good],
        )
        areas = np.arange(self.num_areas)
        for center, half_extents in WALLS:
            cast.add_boxes(
                self.origins + center, np.tile(half_extents, (self.num_areas, 1)), 0.0, "wall", areas
            )
        cast.add_boxes(self.origins + GROUND[0], np.tile(GROUND[1], (self.num_areas, 1)), 0.0, None, areas)
        self.cast_world = cast
        self.sensor = RayPerception(RAY_DISTANCE, RAY_ANGLES, DETECTABLE_TAGS)
        # the laser's targets per area: 5 agents, 50 food boxes, 4 walls (the floor is always
        # overlapped at the start of the cast, so it never blocks)
        self._wall_centers = np.array([c for c, _ in WALLS])
        self._wall_halves = np.array([h for _, h in WALLS])

    # ---- reset ----
    def _random_points(self, areas: np.ndarray) -> np.ndarray:
        rng = self.academy.rng
        xz = rng.uniform(-SPAWN_RANGE, SPAWN_RANGE, (len(areas), 2))
        return self.origins[areas] + np.stack([xz[:, 0], np.zeros(len(areas)), xz[:, 1]], axis=1)

    def _spawn_food(self, food: np.ndarray) -> None:
        positions = self._random_points(self.world.food_area[food])
        self.world.place_food(food, positions, self.academy.rng.uniform(0.0, 360.0, len(food)))

    def academy_reset(self) -> None:
        # BananaAcademy.AcademyReset: agents to random places, then fresh food in every area
        agents = np.arange(self.num_agents)
        positions = self._random_points(self.agent_area)
        self.world.place_agents(
            agents, positions, self.academy.rng.integers(0, 360, self.num_agents).astype(float)
        )
        self._spawn_food(np.arange(len(self.world.food_area)))

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        self.frozen[agents] = False
        self.shot[agents] = False
        positions = self._random_points(self.agent_area[agents])
        yaws = self.academy.rng.integers(0, 360, agents.size).astype(float)
        self.world.place_agents(agents, positions, yaws)
        params = {**RESET_PARAMETERS, **self.academy.reset_parameters}
        self.laser_length = float(params["laser_length"])
        self.world.set_agent_scales(agents, float(params["agent_scale"]))

    # ---- observations ----
    def _sync_cast_world(self) -> None:
        w = self.world
        positions, yaws = w.agent_positions, w.agent_yaws
        parked = positions.copy()
        parked[:, 1] = -1000.0
        frozen = self.frozen[:, None]
        self.cast_world.update_boxes(self._agent_box, np.where(frozen, parked, positions), yaws)
        self.cast_world.update_boxes(self._frozen_box, np.where(frozen, positions, parked), yaws)
        half = np.repeat(0.5 * w.agent_scales[:, None], 3, axis=1)
        self.cast_world.set_box_half_extents(self._agent_box, half)
        self.cast_world.set_box_half_extents(self._frozen_box, half)
        food = w.food_positions
        self.cast_world.update_boxes(self._good_box, food[w.food_good], w.food_yaws[w.food_good])
        self.cast_world.update_boxes(self._bad_box, food[~w.food_good], w.food_yaws[~w.food_good])

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        self._sync_cast_world()
        w = self.world
        yaws = w.agent_yaws[agents]
        obs = np.empty((agents.size, OBSERVATION_SIZE), dtype=np.float32)
        rays = self.sensor.observation_size
        obs[:, :rays] = self.sensor.perceive(
            self.cast_world, w.agent_positions[agents], yaws, self.agent_area[agents]
        )
        velocity = w.agent_velocities[agents]
        obs[:, rays] = (velocity * right_vectors(yaws)).sum(axis=1)
        obs[:, rays + 1] = (velocity * forward_vectors(yaws)).sum(axis=1)
        obs[:, rays + 2] = self.frozen[agents]
        obs[:, rays + 3] = self.shot[agents]
        return obs

    # ---- actions ----
    def _laser_hits(self, shooters: np.ndarray) -> np.ndarray:
        """The agent index each shooter's laser meets first, int64 ``(k,)`` (-1: food, a
        wall or nothing). Sphere cast of radius 2 and length 25 along the agent's forward;
        colliders the sphere overlaps where it starts are ignored, as in Unity."""
        w = self.world
        k = shooters.size
        area = self.agent_area[shooters]
        members = area[:, None] * self.agents_per_area + np.arange(
            self.agents_per_area
        )  # (k, agents per area)
        food = area[:, None] * FOOD_PER_AREA + np.arange(FOOD_PER_AREA)  # (k, 50)
        agent_pos, food_pos = w.agent_positions, w.food_positions
        centers = np.concatenate(
            [agent_pos[members], food_pos[food], self.origins[area][:, None, :] + self._wall_centers], axis=1
        )
        scales = 0.5 * w.agent_scales[members]
        halves = np.concatenate(
            [
                np.repeat(scales[..., None], 3, axis=2),
                np.broadcast_to(FOOD_HALF, (k, FOOD_PER_AREA, 3)),
                np.broadcast_to(self._wall_halves, (k, len(WALLS), 3)),
            ],
            axis=1,
        )
        yaws = np.concatenate([w.agent_yaws[members], w.food_yaws[food], np.zeros((k, len(WALLS)))], axis=1)
        start = agent_pos[shooters]
        direction = forward_vectors(w.agent_yaws[shooters])
        local_start = yaw_rotate(start[:, None, :] - centers, -yaws)
        local_dir = yaw_rotate(np.broadcast_to(direction[:, None, :], centers.shape), -yaws)
        t = sphere_cast_boxes(local_start, local_dir, halves, LASER_RADIUS, LASER_LENGTH)
        first = np.argmin(t, axis=1)
        hit = np.isfinite(t[np.arange(k), first]) & (first < self.agents_per_area)
        return np.where(hit, members[np.arange(k), np.minimum(first, self.agents_per_area - 1)], -1)

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return collect_good_food(self)[agents]

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        w = self.world
        act = actions.astype(np.int64)
        self.shot[agents] = False
        thawed = agents[self.frozen[agents] & (self.tick - self.frozen_at[agents] >= FREEZE_STEPS)]
        self.frozen[thawed] = False
        # The agents act one after another: a laser can freeze an agent that acts later in
        # this step, which then ignores its action. Shots are resolved in agent order first.
        active = np.zeros(self.num_agents, dtype=bool)
        active[agents] = ~self.frozen[agents]
        fire = np.zeros(self.num_agents, dtype=bool)
        fire[agents] = act[:, 3] == 1
        turn = np.zeros(self.num_agents)
        turn[agents] = _TURN[act[:, 2]]
        shooters = np.flatnonzero(fire & active)
        if shooters.size:
            # the laser points along the heading after this step's turn
            yaw_before = w.agent_yaws.copy()
            w.agent_yaws[shooters] += turn[shooters]
            targets = self._laser_hits(shooters)
            w.agent_yaws[:] = yaw_before
            for shooter, target in zip(shooters.tolist(), targets.tolist()):
                if not active[shooter] and self.frozen[shooter]:
                    continue  # frozen by an earlier agent of this step
                if target >= 0 and not self.frozen[target]:
                    self.frozen[target] = True
                    self.frozen_at[target] = self.tick
                    if target > shooter:  # it has not acted yet in this step
                        active[target] = False
        moving = agents[active[agents]]
        velocity = w.agent_velocities
        if moving.size:
            a = act[active[agents]]
            yaw = w.agent_yaws[moving]
            direction = forward_vectors(yaw) * _FORWARD[a[:, 0], None]
            sideways = a[:, 1] != 0
            direction[sideways] = right_vectors(yaw[sideways]) * _RIGHT[a[sideways, 1], None]
            firing = a[:, 3] == 1
            self.shot[moving[firing]] = True
            direction[firing] *= SHOOT_MOVE_SCALE
            velocity[moving[firing]] *= SHOOT_VELOCITY_SCALE
            w.agent_yaws[moving] += turn[moving]
        fast = (velocity[agents] ** 2).sum(axis=1) > SPEED_LIMIT_SQUARED
        velocity[agents[fast]] *= SPEED_DAMPING
        if moving.size:
            velocity[moving] += MOVE_SPEED * direction  # the VelocityChange lands in the physics step
        w.set_agent_velocities(agents, velocity[agents])

    def physics_step(self) -> None:
        self.tick += 1
        agents, food = self.world.step()
        if agents.size == 0:
            return
        good = self.world.food_good[food]
        reward = np.where(good, GOOD_REWARD, BAD_REWARD)
        self.academy.add_reward(agents, reward)
        self._spawn_food(np.unique(food))
        self.food_eaten(agents, good)

    def food_eaten(self, agents: np.ndarray, good: np.ndarray) -> None:
        """Called after ``agents`` (int64) touched food in this physics step, good food where
        ``good`` (bool, one per agent) (VisualFoodCollector colours the eaters)."""


def collect_good_food(scene: FoodCollector) -> np.ndarray:
    """A scripted decision for every agent of the scene (20 in FoodCollector, 8 in
    VisualFoodCollector), float32 ``(agents, 4)``: head for the nearest good
    food of the area whose straight path passes no bad food, preferring food no team-mate is
    closer to; turn while it is more than 15 degrees off the heading, move forward while it is
    less than 60 degrees off. Never fires the laser."""
    w = scene.world
    pos, yaw = w.agent_positions, w.agent_yaws
    food = w.food_positions
    per_area = scene.agents_per_area
    actions = np.zeros((scene.num_areas * per_area, 4), dtype=np.float32)
    for area in range(scene.num_areas):
        members = np.arange(area * per_area, (area + 1) * per_area)
        ids = np.arange(area * FOOD_PER_AREA, (area + 1) * FOOD_PER_AREA)
        good = ids[w.food_good[ids]]
        bad = ids[~w.food_good[ids]]
        delta = food[good][None, :, [0, 2]] - pos[members][:, None, [0, 2]]  # (5, G, 2)
        distance = np.linalg.norm(delta, axis=2)
        cost = distance.copy()
        # a team-mate is nearer: leave that food to it
        cost += 30.0 * (distance > distance.min(axis=0, keepdims=True) + 1e-9)
        # bad food within 2.2 m of the straight path
        rel = food[bad][None, None, :, [0, 2]] - pos[members][:, None, None, [0, 2]]  # (5, 1, B, 2)
        unit = delta / np.maximum(distance, 1e-9)[..., None]
        along = (rel * unit[:, :, None, :]).sum(-1)  # (5, G, B)
        across = np.abs(rel[..., 0] * unit[:, :, None, 1] - rel[..., 1] * unit[:, :, None, 0])
        blocked = ((along > 0) & (along < distance[..., None]) & (across < 2.2)).any(axis=2)
        cost += 100.0 * blocked
        target = np.argmin(cost, axis=1)
        d = delta[np.arange(len(members)), target]
        error = (np.degrees(np.arctan2(d[:, 0], d[:, 1])) - yaw[members] + 180.0) % 360.0 - 180.0
        actions[members, 2] = np.where(error > 15.0, 2, np.where(error < -15.0, 1, 0))
        actions[members, 0] = np.where(np.abs(error) < 60.0, 1, 0)
    return actions
