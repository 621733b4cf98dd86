"""The physics of Pyramids on MuJoCo: a planar world for the agents and one 3-D model per area
for the brick pyramid and its gold brick.

Planar world (see ``box_arena``): the 16 agents (1 x 1 x 1 boxes, mass 25, drag 2, rotations
frozen) slide in x and z against the walls, the switch and the stone pyramids, all of which
stay put: the switch can only move vertically and turn in Unity, and a stone pyramid (25 cubes
of 50 kg) is an obstacle whose bottom ring leaves no gap an agent fits through, so it is one
prism of the ring's footprint. The floor's Coulomb friction (0.6) is applied per step.

Brick pyramids: each area has its own small 3-D MuJoCo model (floor, walls, stone pyramids and
switch as static boxes, 25 free bricks of 2 kg and the free 2 x 2 x 2 gold brick, gravity 9.81,
one 0.02 s step per physics step: two substeps of 0.01 s cost about 1.5 times as much for
no difference the tests or the scripted player notice). It is built once and simulated only while its pyramid
exists (from the switch press to the end of the episode). The agent appears in it as a box
that follows the planar agent (its position and velocity are copied in before every step), so
it knocks bricks about but bricks never slow it (a 25 kg agent against 2 kg bricks). Brick
spin is capped at 7 rad/s (Unity's default maximum angular velocity).

Sleeping (as PhysX puts resting bodies to sleep): once every brick and the gold have moved
slower than 0.05 m/s and 0.05 rad/s for 10 physics steps, the pile falls asleep (their velocities
are zeroed) and its model is not stepped until the agent comes within reach of a brick again.
A standing pyramid then costs nothing while the agent is elsewhere; only a pile the agent is
pushing, or one still moving, is simulated.
"""

from __future__ import annotations

import mujoco
import numpy as np

from .box_arena import (
    DEFAULT_FRICTION,
    EVENT_MARGIN,
    EVENT_RELEASE,
    PLANAR_SLIDES,
    STATIC_COLLIDER,
    TIMESTEP,
    AreaBox,
    box_geom,
    floor_friction,
    linear_drag_factor,
    mocap_prism,
    planar_model_xml,
    prism_geom,
    wall_prisms,
    yaw_quaternions,
)
from .vector3 import to_mujoco

GRAVITY = 9.81
FLOOR_TOP = 0.5
AGENT_MASS = 25.0
AGENT_DRAG = 2.0
AGENT_HEIGHT = FLOOR_TOP + 0.5
AREA_SPACING = 150.0  # metres between the areas along x (Unity stacks them vertically)
MAX_BRICK_SPIN = 7.0
BRICK_SUBSTEPS = 1
#: a pile whose bodies all move slower than this (m/s and rad/s) for SLEEP_STEPS steps sleeps
SLEEP_SPEED = 0.05
SLEEP_STEPS = 10
#: the agent wakes a sleeping pile when it may touch a body within the coming step: its centre
#: nearer than the body's and its own half diagonals, the way it moves in a step and this margin (m)
WAKE_MARGIN = 0.5
_AGENT_HALF_DIAGONAL = float(np.sqrt(2.0) * 0.5)


def _box(x: tuple[float, float], z: tuple[float, float], y: tuple[float, float]) -> AreaBox:
    return ((sum(x) / 2, sum(y) / 2, sum(z) / 2), ((x[1] - x[0]) / 2, (y[1] - y[0]) / 2, (z[1] - z[0]) / 2))


_OUTER_Y = (-47.4, 52.6)
_INNER_Y = (-7.4, 12.6)
WALLS: tuple[AreaBox, ...] = (
    _box((-50.5, 50.5), (49.5, 50.5), _OUTER_Y),
    _box((-50.5, 50.5), (-50.5, -49.5), _OUTER_Y),
    _box((49.5, 50.5), (-49.5, 49.5), _OUTER_Y),
    _box((-50.5, -49.5), (-49.5, 49.5), _OUTER_Y),
    *(
        _box(x, z, _INNER_Y)
        for x, z in (
            ((-15.55, -14.55), (-49.5, -34.5)),
            ((-15.75, -14.75), (-23.1, -8.1)),
            ((-15.75, -14.75), (6.4, 21.4)),
            ((-15.35, -14.35), (34.5, 49.5)),
            ((15.05, 16.05), (-49.5, -34.5)),
            ((14.35, 15.35), (-23.1, -8.1)),
            ((14.35, 15.35), (6.4, 21.4)),
            ((14.95, 15.95), (34.5, 49.5)),
            ((-50.0, -34.85), (-16.2, -15.2)),
            ((-22.83, -7.68), (-16.1, -15.1)),
            ((7.27, 22.42), (-16.1, -15.1)),
            ((34.85, 50.0), (-15.4, -14.4)),
            ((-50.0, -34.85), (14.3, 15.3)),
            ((-22.83, -7.68), (13.4, 14.4)),
            ((7.27, 22.42), (13.4, 14.4)),
            ((34.85, 50.0), (14.8, 15.8)),
        )
    ),
)
GROUND: AreaBox = ((0.0, 0.0, 0.0), (50.0, 0.5, 50.0))
#: the switch's collider relative to the switch origin, which rests 0.5 above the floor top
SWITCH_CENTER_Y = 1.803
SWITCH_HALF = (2.0, 2.3025, 2.0)
SWITCH_REST_Y = FLOOR_TOP + 0.5

# Pyramid cubes relative to the pyramid root (x, y, z as spawned, root 2 above the ground centre).
_RING4_X, _RING4_Z = (-1.34, -0.213, 1.087, 2.2), (-1.06, 0.101, 1.451, 2.62)


def _ring(xs: tuple[float, ...], zs: tuple[float, ...], y: float) -> list[tuple[float, float, float]]:
    """The cubes on the perimeter of the grid ``xs`` x ``zs`` at height ``y``."""
    return [
        (x, y, z)
        for i, x in enumerate(xs)
        for j, z in enumerate(zs)
        if i in (0, len(xs) - 1) or j in (0, len(zs) - 1)
    ]


BRICK_OFFSETS = np.array(
    _ring(_RING4_X, _RING4_Z, 0.151)
    + _ring((-0.803, 0.387, 1.687), (-0.473, 0.771, 2.121), 1.601)
    + _ring((-0.143, 1.047), (0.131, 1.375), 3.111)
    + [(0.52, 4.29, 0.8)]
)
GOLD_OFFSET = np.array([0.45, 6.0, 0.8])
GOLD_HALF = 1.0
PYRAMID_ROOT_Y = 2.0
# Stone pyramids after settling, as four solid layers (their rings leave no gaps a 0.5 m
# sphere or a 1 m agent passes): (x range, z range) relative to the root; the layers rest on
# each other, centres 1, 2, 3 and 4 m above the ground centre (0.5 m above its top and up).
STONE_LAYERS: tuple[tuple[tuple[float, float], tuple[float, float]], ...] = (
    ((-1.84, 2.7), (-1.56, 3.12)),
    ((-1.32, 2.187), (-0.973, 2.621)),
    ((-0.77, 1.42), (-0.369, 1.875)),
    ((-0.16, 0.84), (0.3, 1.3)),
)


def stone_layer_boxes(roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centres ``(n, 4, 3)`` and half extents ``(4, 3)`` of the four layers of stone pyramids
    whose roots (Unity, horizontal position; the height is ignored) are ``roots`` ``(n, 3)``."""
    centers = np.zeros((len(roots), 4, 3))
    halves = np.zeros((4, 3))
    for layer, ((x0, x1), (z0, z1)) in enumerate(STONE_LAYERS):
        centers[:, layer, 0] = roots[:, 0] + (x0 + x1) / 2
        centers[:, layer, 1] = FLOOR_TOP + 0.5 + layer
        centers[:, layer, 2] = roots[:, 2] + (z0 + z1) / 2
        halves[layer] = ((x1 - x0) / 2, 0.5, (z1 - z0) / 2)
    return centers, halves


def _fmt(v: np.ndarray) -> str:
    return " ".join(f"{float(x):.6g}" for x in np.ravel(v))


class PlanarPyramidsWorld:
    """The agents of ``num_areas`` areas in one planar MuJoCo model (Unity frame in and out).

    Joints: two slides per agent. Static: walls; mocap: the switch and six stone pyramid
    footprints per area (moved at every reset).
    """

    def __init__(self, num_areas: int) -> None:
        self.num_areas = num_areas
        self.origins = np.stack(
            [AREA_SPACING * np.arange(num_areas), np.zeros(num_areas), np.zeros(num_areas)], axis=1
        )
        self.model = mujoco.MjModel.from_xml_string(self._xml())
        self.data = mujoco.MjData(self.model)
        geom = mujoco.mjtObj.mjOBJ_GEOM
        self._agent_geoms = np.array(
            [mujoco.mj_name2id(self.model, geom, f"agent{i}") for i in range(num_areas)]
        )
        self._switch_geoms = np.array(
            [mujoco.mj_name2id(self.model, geom, f"switch{i}") for i in range(num_areas)]
        )
        self._agent_frames = np.array(
            [
                mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, f"agent_frame{i}")
                for i in range(num_areas)
            ]
        )
        self._qpos = self.data.qpos.reshape(num_areas, 2)
        self._qvel = self.data.qvel.reshape(num_areas, 2)
        self.agent_yaws = np.zeros(num_areas)
        self._decay = float(linear_drag_factor(AGENT_DRAG))
        self._switch_of = np.full(self.model.ngeom, -1, dtype=np.int64)
        self._switch_of[self._switch_geoms] = np.arange(num_areas)
        self._is_agent = np.zeros(self.model.ngeom, dtype=bool)
        self._is_agent[self._agent_geoms] = True
        body = mujoco.mjtObj.mjOBJ_BODY
        self._switch_mocap = self.model.body_mocapid[
            [mujoco.mj_name2id(self.model, body, f"switch_body{a}") for a in range(num_areas)]
        ]
        self._stone_mocap = self.model.body_mocapid[
            [
                [mujoco.mj_name2id(self.model, body, f"stone_body{a}_{s}") for s in range(6)]
                for a in range(num_areas)
            ]
        ]
        self._qpos[:] = self.origins[:, [0, 2]]
        mujoco.mj_forward(self.model, self.data)

    def _xml(self) -> str:
        static, bodies = [], []
        for a, origin in enumerate(self.origins):
            static.extend(wall_prisms(WALLS, origin, a))
            bodies.append(
                mocap_prism(
                    f"switch_body{a}",
                    (origin[0], origin[2] + 30.0, 0),
                    f"switch{a}",
                    (0.0, 0.0),
                    (SWITCH_HALF[0], SWITCH_HALF[2]),
                    gap=EVENT_RELEASE,
                    **STATIC_COLLIDER,
                )
            )
            (x0, x1), (z0, z1) = STONE_LAYERS[0]
            for s in range(6):
                bodies.append(
                    mocap_prism(
                        f"stone_body{a}_{s}",
                        (origin[0] + 8.0 * s - 20.0, origin[2] - 30.0, 0),
                        f"stone{a}_{s}",
                        ((x0 + x1) / 2, (z0 + z1) / 2),
                        ((x1 - x0) / 2, (z1 - z0) / 2),
                        **STATIC_COLLIDER,
                    )
                )
        for i in range(self.num_areas):
            bodies.append(
                f'<body name="agent_body{i}" pos="0 0 {AGENT_HEIGHT}">'
                + PLANAR_SLIDES
                + f'<inertial pos="0 0 0" mass="{AGENT_MASS}" diaginertia="1 1 1"/>'
                f'<body name="agent_frame{i}">'
                + prism_geom(f"agent{i}", (0.0, 0.0), (0.5, 0.5), mass=0)
                + "</body></body>"
            )
        return planar_model_xml("Pyramids", static, bodies)

    @property
    def agent_positions(self) -> np.ndarray:
        """Agent centres ``(num_areas, 3)``."""
        q = self._qpos
        return np.stack([q[:, 0], np.full(self.num_areas, AGENT_HEIGHT), q[:, 1]], axis=1)

    @property
    def agent_velocities(self) -> np.ndarray:
        """Agent velocities ``(num_areas, 3)`` (m/s)."""
        v = self._qvel
        return np.stack([v[:, 0], np.zeros(self.num_areas), v[:, 1]], axis=1)

    def place_agents(self, areas: np.ndarray, positions: np.ndarray, yaws: np.ndarray) -> None:
        """Teleport agents to Unity ``positions`` ``(k, 3)`` facing ``yaws`` ``(k,)``, at rest."""
        self._qpos[areas] = positions[:, [0, 2]]
        self._qvel[areas] = 0.0
        self.agent_yaws[areas] = yaws

    def place_switches(self, areas: np.ndarray, positions: np.ndarray) -> None:
        """Move the switches of ``areas`` to Unity ``positions`` ``(k, 3)`` (their origins)."""
        mocap = self._switch_mocap[areas]
        self.data.mocap_pos[mocap, 0] = positions[:, 0]
        self.data.mocap_pos[mocap, 1] = positions[:, 2]

    def place_stones(self, areas: np.ndarray, roots: np.ndarray) -> None:
        """Move the six stone pyramids of ``areas`` to the Unity roots ``(k, 6, 3)``."""
        mocap = self._stone_mocap[areas]  # (k, 6)
        self.data.mocap_pos[mocap, 0] = roots[..., 0]
        self.data.mocap_pos[mocap, 1] = roots[..., 2]

    def add_velocity(self, areas: np.ndarray, delta_v: np.ndarray) -> None:
        """ForceMode.VelocityChange: add the horizontal part of Unity ``delta_v`` ``(k, 3)``."""
        self._qvel[areas] += delta_v[:, [0, 2]]

    def step(self) -> np.ndarray:
        """Drag, floor friction, one 0.02 s step; returns the areas (int64) whose agent is
        touching its switch after it."""
        self._qvel[:] = floor_friction(self._qvel * self._decay, DEFAULT_FRICTION * GRAVITY)
        self.model.body_quat[self._agent_frames] = yaw_quaternions(self.agent_yaws)
        mujoco.mj_step(self.model, self.data)
        n = self.data.ncon
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        contact = self.data.contact
        g = contact.geom[:n]
        close = contact.dist[:n] <= EVENT_MARGIN
        switch = np.maximum(self._switch_of[g[:, 0]], self._switch_of[g[:, 1]])
        agent = self._is_agent[g[:, 0]] | self._is_agent[g[:, 1]]
        return np.unique(switch[close & agent & (switch >= 0)])


class BrickPyramid:
    """The brick pyramid and gold brick of one area in their own 3-D MuJoCo model, in the
    area's frame (Unity axes in and out; the area origin is the ground centre)."""

    def __init__(self) -> None:
        self.model = mujoco.MjModel.from_xml_string(self._xml())
        self.data = mujoco.MjData(self.model)
        self.active = False
        geom = mujoco.mjtObj.mjOBJ_GEOM
        self._agent_geom = mujoco.mj_name2id(self.model, geom, "agent")
        self._gold_geom = mujoco.mj_name2id(self.model, geom, "gold")
        self._free_qpos = self.data.qpos[2:].reshape(26, 7)  # 25 bricks then the gold
        self._free_qvel = self.data.qvel[2:].reshape(26, 6)
        self.touching_gold = False
        self._agent_yaw = 0.0  # the yaw the agent's box in the model was last turned to
        self._park()

    def _xml(self) -> str:
        walls = "".join(box_geom(f"wall{w}", np.array(c), np.array(h)) for w, (c, h) in enumerate(WALLS))
        stones = "".join(
            f'<body name="stone{s}" mocap="true" pos="0 0 0">'
            + "".join(
                box_geom(
                    f"stone{s}_{layer}",
                    np.array([(x0 + x1) / 2, FLOOR_TOP + 0.5 + layer, (z0 + z1) / 2]),
                    np.array([(x1 - x0) / 2, 0.5, (z1 - z0) / 2]),
                )
                for layer, ((x0, x1), (z0, z1)) in enumerate(STONE_LAYERS)
            )
            + "</body>"
            for s in range(6)
        )
        switch = (
            '<body name="switch" mocap="true" pos="0 0 0">'
            + box_geom("switch", np.array([0.0, SWITCH_REST_Y + SWITCH_CENTER_Y, 0.0]), np.array(SWITCH_HALF))
            + "</body>"
        )
        agent = (
            f'<body name="agent_body" pos="0 0 {AGENT_HEIGHT}">{PLANAR_SLIDES}'
            f'<inertial pos="0 0 0" mass="{AGENT_MASS}" diaginertia="1 1 1"/>'
            '<body name="agent_frame"><geom name="agent" type="box" size="0.5 0.5 0.5" mass="0" contype="2" conaffinity="2"/></body>'
            "</body>"
        )
        bricks = "".join(
            f'<body name="brick{b}" pos="0 0 -50"><freejoint/>'
            f'<geom type="box" size="0.5 0.5 0.5" mass="2" contype="3" conaffinity="3"/></body>'
            for b in range(25)
        )
        gold = (
            '<body name="gold_body" pos="0 0 -50"><freejoint/>'
            f'<geom name="gold" type="box" size="{GOLD_HALF} {GOLD_HALF} {GOLD_HALF}" mass="2" contype="3" conaffinity="3" gap="{EVENT_RELEASE}"/>'
            "</body>"
        )
        return (
            '<mujoco model="BrickPyramid">'
            f'<option timestep="{TIMESTEP / BRICK_SUBSTEPS}" gravity="0 0 {-GRAVITY}" cone="elliptic"/>'
            f'<default><geom friction="{DEFAULT_FRICTION} 0.005 0.0001"/></default>'
            f'<worldbody><geom name="floor" type="plane" size="60 60 1" pos="0 0 {FLOOR_TOP}"/>'
            f"{walls}{agent}{stones}{switch}{bricks}{gold}</worldbody></mujoco>"
        )

    def _park(self) -> None:
        """Bricks and gold far below, at rest, in a row (the model is not stepped meanwhile)."""
        self._free_qpos[:, :3] = np.stack([np.arange(26) * 3.0, np.zeros(26), np.full(26, -50.0)], axis=1)
        self._start_still(active=False)

    def deactivate(self) -> None:
        """Destroy the pyramid (episode reset)."""
        self._park()

    def set_scenery(self, switch: np.ndarray, stone_roots: np.ndarray) -> None:
        """Place the switch origin ``(3,)`` and the six stone roots ``(6, 3)`` (area frame)."""
        self.data.mocap_pos[:6] = to_mujoco(stone_roots * [1.0, 0.0, 1.0])
        self.data.mocap_pos[6] = to_mujoco(switch * [1.0, 0.0, 1.0])

    def spawn(self, root: np.ndarray) -> None:
        """Instantiate the pyramid with its root at the area-frame point ``root`` ``(3,)``."""
        self._free_qpos[:25, :3] = to_mujoco(root + BRICK_OFFSETS)
        self._free_qpos[25, :3] = to_mujoco(root + GOLD_OFFSET)
        self._start_still(active=True)

    def _start_still(self, active: bool) -> None:
        """Every brick and the gold unrotated and at rest, nothing touched or asleep yet."""
        self._free_qpos[:, 3:] = [1.0, 0.0, 0.0, 0.0]
        self._free_qvel[:] = 0.0
        self.active = active
        self.touching_gold = False
        self.asleep = False
        self.resting_steps = 0

    @property
    def brick_positions(self) -> np.ndarray:
        """Brick centres ``(25, 3)`` (area frame, Unity axes)."""
        return to_mujoco(self._free_qpos[:25, :3])

    @property
    def gold_position(self) -> np.ndarray:
        """Gold centre ``(3,)`` (area frame, Unity axes)."""
        return to_mujoco(self._free_qpos[25, :3])

    @property
    def yaws(self) -> np.ndarray:
        """Unity yaw (degrees) of the 25 bricks and the gold ``(26,)``: the heading of each body's
        local x axis in the horizontal plane (tilts are ignored)."""
        w, x, y, z = self._free_qpos[:, 3:].T
        # MuJoCo yaw about +z of the local x axis
        mj_yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
        return -np.degrees(mj_yaw)

    def step(self, agent: np.ndarray, velocity: np.ndarray, yaw: float) -> bool:
        """One physics step with the agent at area-frame ``agent`` ``(3,)`` moving at
        ``velocity`` ``(3,)`` with ``yaw``; returns True when the agent started touching the
        gold (OnCollisionEnter)."""
        if self.asleep:
            if not self._agent_near(agent, velocity):
                return False
            self.asleep = False
            self.resting_steps = 0
        qpos, qvel = self.data.qpos, self.data.qvel
        if yaw != self._agent_yaw:
            self.model.body_quat[2] = yaw_quaternions(np.array(yaw))
            self._agent_yaw = yaw
        x, z = float(agent[0]), float(agent[2])
        vx, vz = float(velocity[0]), float(velocity[2])
        spin = self._free_qvel[:, 3:]
        for _ in range(BRICK_SUBSTEPS):
            qpos[0], qpos[1] = x, z
            qvel[0], qvel[1] = vx, vz
            mujoco.mj_step(self.model, self.data)
            rate2 = np.einsum("ij,ij->i", spin, spin)
            if rate2.max() > MAX_BRICK_SPIN * MAX_BRICK_SPIN:
                fast = rate2 > MAX_BRICK_SPIN * MAX_BRICK_SPIN
                spin[fast] *= (MAX_BRICK_SPIN / np.sqrt(rate2[fast]))[:, None]
            x += vx * (TIMESTEP / BRICK_SUBSTEPS)
            z += vz * (TIMESTEP / BRICK_SUBSTEPS)
        n = self.data.ncon
        touching = False
        if n:
            g = self.data.contact.geom[:n]
            pair = ((g[:, 0] == self._agent_geom) & (g[:, 1] == self._gold_geom)) | (
                (g[:, 1] == self._agent_geom) & (g[:, 0] == self._gold_geom)
            )
            if pair.any():
                touching = bool((self.data.contact.dist[:n][pair] <= EVENT_MARGIN).any())
        entered = touching and not self.touching_gold
        self._rest_or_sleep(np.array([x, agent[1], z]), velocity)
        self.touching_gold = touching
        return entered

    def _agent_near(self, agent: np.ndarray, velocity: np.ndarray) -> bool:
        """Whether the agent at area-frame ``agent`` ``(3,)`` moving at ``velocity`` ``(3,)`` may
        touch a brick or the gold within the coming physics step."""
        offset = self._free_qpos[:, :3] - to_mujoco(agent)
        distance2 = np.einsum("ij,ij->i", offset, offset)
        speed = float(np.sqrt(velocity[0] ** 2 + velocity[1] ** 2 + velocity[2] ** 2))
        reach = _WAKE_REACH + speed * TIMESTEP
        return bool((distance2 <= reach * reach).any())

    def _rest_or_sleep(self, agent: np.ndarray, velocity: np.ndarray) -> None:
        """Count the steps the pile rested; put it to sleep after SLEEP_STEPS unless the agent is near."""
        velocities = self._free_qvel
        if max(velocities.max(), -velocities.min()) < SLEEP_SPEED:
            self.resting_steps += 1
        else:
            self.resting_steps = 0
        if self.resting_steps >= SLEEP_STEPS and not self._agent_near(agent, velocity):
            velocities[:] = 0.0
            self.asleep = True


#: half diagonals of the 25 unit bricks and the 2 m gold cube (m)
_BODY_HALF_DIAGONALS = np.array([np.sqrt(3.0) * 0.5] * 25 + [np.sqrt(3.0) * GOLD_HALF])
#: per body: the distance from the agent's centre within which it may touch the body, before
#: the way the agent moves in the step
_WAKE_REACH = _BODY_HALF_DIAGONALS + _AGENT_HALF_DIAGONAL + WAKE_MARGIN
