"""Bouncer: a cube that jumps around a 40 x 40 platform to catch a floating banana.

Brain ``BouncerLearning``: vector observation 6 (agent position, banana position, both relative
to the environment's origin, Unity axes), stacked 3 times; continuous action of size 3. The agent
decides on demand, only when it lands (a downward ray of 0.51 from its centre hits something):
the action is a jump, a velocity change of 10 x (a0, (a1 + 1) / 2 + 1, a2) m/s (each value
clipped to [-1, 1]), costing 0.05 x mean(a^2). +1 for touching the banana (which then moves to a
new random place), -1 and done for leaving the platform (|x| or |z| > 19) or falling below
y = -1, done without penalty after 20 landings. Reset parameter ``banana_scale`` (150): the
banana's trigger box is 3 x 3 x 6 at 150 and scales with it.

The shipped Unity scene has 20 copies of the environment, of which 19 are driven by a keyboard
brain that is not in the broadcast hub; Python only ever sees the one at the origin. The copies
never interact, so only that one is simulated here.

Physics on MuJoCo: the agent is a 1 x 1 x 1 box of mass 1 on three slide joints (all rotations
frozen), over the ground box (40 x 1 x 40, top at y = 0.5); gravity 2 x 9.8 = 19.6. The banana's
only collider is a trigger, so it never moves except by teleport (it turns 0.5 degrees about the
vertical every physics step); the trigger overlap and the landing ray are computed exactly
against its turned box.

:func:`bouncer_heuristic` is a scripted decision from the observations (jump so that the apex of
the flight meets the banana).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec
from .vector3 import to_mujoco, to_unity

BRAIN = "BouncerLearning"
#: Player brain keys: the arrows aim the jump (index 0 along x, index 2 along z), Space jumps high.
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    "left": (0, -1.0),
    "right": (0, 1.0),
    "up": (2, 1.0),
    "down": (2, -1.0),
    "space": (1, 1.0),
}
OBSERVATION_SIZE = 6
STACKED = 3
ACTION_SIZE = 3
TIMESTEP = 0.02
SUBSTEPS = 4  # MuJoCo steps per physics step: a stiffer ground contact for landings at ~20 m/s
GRAVITY = 9.8 * 2.0  # the academy's gravity multiplier 2 on 9.8 (not 9.81)
STRENGTH = 500.0  # N per unit action, applied for one physics step on mass 1
AGENT_MASS = 1.0
AGENT_HALF = 0.5
GROUND_HALF = (20.0, 0.5, 20.0)  # centred at the origin: top at y = 0.5
RAY_LENGTH = 0.51
COOLDOWN = 0.1  # s between two landings that may request a decision
MAX_JUMPS = 20
BOUNDARY = 19.0  # |local x| or |local z| beyond this: out
FALL_HEIGHT = -1.0
OUT_REWARD = -1.0
BANANA_REWARD = 1.0
ACTION_PENALTY = 0.05
BANANA_TURN_DEG = 0.5  # per physics step, about the vertical
SPAWN_HALF = 5.0
AGENT_START_HEIGHT = 2.0
BANANA_MIN_HEIGHT, BANANA_HEIGHT_RANGE = 2.0, 5.0
RESET_PARAMETERS = {"banana_scale": 150.0}
# The banana's trigger box per unit of banana_scale (Unity axes after its 90 degree roll):
# half extents (x, y, z) and centre offset from the banana's origin (z turns with the banana).
BANANA_HALF_PER_SCALE = np.array([0.01, 0.01, 0.02])
BANANA_OFFSET_PER_SCALE = np.array([0.0, 0.004, 0.0005])


def _model_xml() -> str:
    gx, gy, gz = GROUND_HALF
    h = AGENT_HALF
    return (
        '<mujoco model="Bouncer">'
        f'<option timestep="{TIMESTEP / SUBSTEPS}" gravity="0 0 {-GRAVITY}"/>'
        "<worldbody>"
        # MuJoCo axes: Unity (x, y, z) -> (x, z, y)
        f'<geom name="ground" type="box" size="{gx} {gz} {gy}" friction="0.6 0.005 0.0001"/>'
        f'<body name="agent" pos="0 0 0">'
        '<joint name="x" type="slide" axis="1 0 0"/><joint name="z" type="slide" axis="0 1 0"/>'
        '<joint name="y" type="slide" axis="0 0 1"/>'
        f'<geom name="agent" type="box" size="{h} {h} {h}" mass="{AGENT_MASS}" friction="0.6 0.005 0.0001"/>'
        "</body></worldbody></mujoco>"
    )


class BouncerWorld:
    """One Bouncer environment: the agent box on MuJoCo, the banana as an exact turned box.

    Everything in and out is in Unity axes relative to the environment's origin.
    """

    def __init__(self) -> None:
        self.model = mujoco.MjModel.from_xml_string(_model_xml())
        self.data = mujoco.MjData(self.model)
        self.banana_position = np.array([0.0, 4.0, 0.0])
        self.banana_yaw = 0.0  # degrees, never reset
        self.banana_scale = RESET_PARAMETERS["banana_scale"]
        self.place_agent(np.array([0.0, AGENT_START_HEIGHT, 0.0]))

    # ---- agent (Unity axes) ----
    @property
    def agent_position(self) -> np.ndarray:
        return to_unity(self.data.qpos)

    @property
    def agent_velocity(self) -> np.ndarray:
        return to_unity(self.data.qvel)

    def place_agent(self, position: np.ndarray) -> None:
        """Teleport the agent to ``position`` (Unity (x, y, z)) and stop it."""
        self.data.qpos[:] = to_mujoco(position)
        self.data.qvel[:] = 0.0

    def stop_agent(self) -> None:
        self.data.qvel[:] = 0.0

    def add_velocity(self, delta_v: np.ndarray) -> None:
        """A velocity change (Unity axes), integrated in the coming physics step."""
        self.data.qvel[:] += to_mujoco(delta_v)

    # ---- banana ----
    def banana_box(self) -> tuple[np.ndarray, np.ndarray]:
        """Centre and half extents (Unity axes; x and z in the banana's turned frame) of the trigger."""
        (cx, cy, cz), (hx, hy, hz), _, _ = self._banana_geometry()
        return np.array([cx, cy, cz]), np.array([hx, hy, hz])

    def _banana_geometry(self) -> tuple[tuple[float, float, float], tuple[float, float, float], float, float]:
        """Trigger centre, half extents and (cos, sin) of the banana's yaw, as Python floats
        (this runs every physics step on one box: plain floats are several times faster)."""
        s = self.banana_scale
        ox, oy, oz = (float(v) * s for v in BANANA_OFFSET_PER_SCALE)
        theta = math.radians(self.banana_yaw)
        c, si = math.cos(theta), math.sin(theta)
        bx, by, bz = (float(v) for v in self.banana_position)
        # Unity yaw: local +z turns toward +x, local +x toward -z
        centre = (bx + ox * c + oz * si, by + oy, bz - ox * si + oz * c)
        hx, hy, hz = (abs(float(v)) * s for v in BANANA_HALF_PER_SCALE)
        return centre, (hx, hy, hz), c, si

    def touches_banana(self) -> bool:
        """Whether the agent's box overlaps the banana's trigger box (touching counts): a
        separating-axis test on the vertical, then on the four horizontal axes of the two boxes."""
        (cx, cy, cz), (hx, hy, hz), c, s = self._banana_geometry()
        q = self.data.qpos
        ax, az, ay = float(q[0]), float(q[1]), float(q[2])
        h = AGENT_HALF
        if abs(ay - cy) > h + hy:
            return False
        dx, dz = cx - ax, cz - az
        # the banana's local x axis in world (x, z) is (c, -s), its local z axis (s, c)
        ac, as_ = abs(c), abs(s)
        if abs(dx) > h + hx * ac + hz * as_ or abs(dz) > h + hx * as_ + hz * ac:
            return False
        extent = h * (ac + as_)
        return abs(dx * c - dz * s) <= extent + hx and abs(dx * s + dz * c) <= extent + hz

    def ray_hits(self) -> bool:
        """The downward ray of length 0.51 from the agent's centre hits the ground or the banana
        trigger (a ray that starts inside a collider does not report it)."""
        q = self.data.qpos
        x, z, y = float(q[0]), float(q[1]), float(q[2])
        ground_top = GROUND_HALF[1]
        if abs(x) <= GROUND_HALF[0] and abs(z) <= GROUND_HALF[2] and y - RAY_LENGTH <= ground_top < y:
            return True
        (cx, cy, cz), (hx, hy, hz), c, s = self._banana_geometry()
        if not (y - RAY_LENGTH <= cy + hy < y):
            return False
        dx, dz = x - cx, z - cz
        return abs(dx * c - dz * s) <= hx and abs(dx * s + dz * c) <= hz

    def step(self) -> None:
        mujoco.mj_step(self.model, self.data, nstep=SUBSTEPS)


def bouncer_heuristic(observations: np.ndarray) -> np.ndarray:
    """Scripted decision from stacked observations ``(k, 18)`` (newest frame last): jump so that
    the top of the flight is at the banana's height and right at the banana, as far as the jump
    allows (horizontal speed at most 10 m/s per axis). Returns float32 actions ``(k, 3)``."""
    frame = np.asarray(observations, dtype=np.float64)[:, -OBSERVATION_SIZE:]
    agent, banana = frame[:, :3], frame[:, 3:6]
    # the trigger's centre is 0.6 above the banana's origin (at the default scale); aim a bit lower
    target_height = banana[:, 1] + 0.3
    rise = np.maximum(target_height - agent[:, 1], 0.5)
    vertical = np.clip(np.sqrt(2.0 * GRAVITY * rise), 10.0, 20.0)
    time_up = vertical / GRAVITY
    horizontal = (banana[:, [0, 2]] - agent[:, [0, 2]]) / time_up[:, None]
    actions = np.empty((len(frame), ACTION_SIZE))
    actions[:, 0] = horizontal[:, 0] / 10.0
    actions[:, 1] = 2.0 * (vertical / 10.0 - 1.0) - 1.0
    actions[:, 2] = horizontal[:, 1] / 10.0
    return np.clip(actions, -1.0, 1.0).astype(np.float32)


class Bouncer(Scene):
    """Bouncer: brain ``BouncerLearning``, one on-demand agent, 6 x 3 observations, continuous 3."""

    player_key_table = PLAYER_KEYS

    world: BouncerWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(BRAIN, OBSERVATION_SIZE, "continuous", (ACTION_SIZE,), STACKED),
            on_demand=True,
            reset_parameters=RESET_PARAMETERS,
            training=EngineConfiguration(80, 80, 1, 100.0, -1),
        )

    def initialize(self) -> None:
        self.world = BouncerWorld()
        self.jumps_left = MAX_JUMPS
        self.cooldown = 0.0
        self.touching = False
        self._agent = np.zeros(1, dtype=np.int64)
        self._read_banana_scale()

    def _read_banana_scale(self) -> None:
        scale = float(self.academy.reset_parameters["banana_scale"])
        if not scale > 0.0:
            raise ValueError(f"Bouncer reset parameter banana_scale must be positive, got {scale}.")
        self.world.banana_scale = scale

    def _respawn_banana(self) -> None:
        u = self.academy.rng.random(3)
        self.world.banana_position = np.array(
            [
                (1.0 - 2.0 * u[0]) * SPAWN_HALF,
                BANANA_MIN_HEIGHT + BANANA_HEIGHT_RANGE * u[1],
                (1.0 - 2.0 * u[2]) * SPAWN_HALF,
            ]
        )
        self.touching = False

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        u = self.academy.rng.random(2)
        self.world.place_agent(
            np.array([(1.0 - 2.0 * u[0]) * SPAWN_HALF, AGENT_START_HEIGHT, (1.0 - 2.0 * u[1]) * SPAWN_HALF])
        )
        self._respawn_banana()
        self.jumps_left = MAX_JUMPS
        self._read_banana_scale()

    def pre_step(self) -> None:
        """The banana's turn, then the agent's own per-tick update (landing, bounds, jump count)."""
        w = self.world
        w.banana_yaw = (w.banana_yaw + BANANA_TURN_DEG) % 360.0
        if self.cooldown <= 0.0 and w.ray_hits():
            self.academy.request_decision(self._agent)
            self.jumps_left -= 1
            self.cooldown = COOLDOWN
            w.stop_agent()
        self.cooldown -= TIMESTEP
        x, y, z = w.agent_position
        if y < FALL_HEIGHT or abs(x) > BOUNDARY or abs(z) > BOUNDARY:
            self.academy.add_reward(self._agent, OUT_REWARD)
            self.academy.done(self._agent)
            return
        if self.jumps_left == 0:
            self.academy.done(self._agent)

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        obs = np.concatenate([self.world.agent_position, self.world.banana_position])
        return np.tile(obs.astype(np.float32), (agents.size, 1))

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return bouncer_heuristic(batch.vector_observations)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        a = np.clip(actions[0].astype(np.float64), -1.0, 1.0)
        force = np.array([a[0], (a[1] + 1.0) / 2.0 + 1.0, a[2]]) * STRENGTH
        self.world.add_velocity(force * TIMESTEP / AGENT_MASS)
        self.academy.add_reward(agents, -ACTION_PENALTY * float(np.dot(a, a)) / 3.0)

    def physics_step(self) -> None:
        self.world.step()
        touching = self.world.touches_banana()
        if touching and not self.touching:
            self.academy.add_reward(self._agent, BANANA_REWARD)
            self._respawn_banana()
            return
        self.touching = touching
