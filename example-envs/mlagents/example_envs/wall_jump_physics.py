"""The WallJump world on MuJoCo: per training area a floor, a wall of variable height, a sliding
block and one box-shaped agent that runs, turns and jumps (docs/Learning-Environment-Examples.md).

All areas live in ONE MuJoCo model (timestep 0.02 s), stepped once per academy step. Everything in
and out of this module is in the *area frame* of Unity (x right, +y up, z forward; the area root is
unrotated), so positions compare directly with the Unity scene's geometry; area ``i`` sits at a world
offset far from the others, and only explicit contact pairs inside an area exist.

Frames. MuJoCo runs on Unity's coordinates as they are, with gravity along -y. Read in a
right-handed frame the world is Unity's mirror image, which rigid-body dynamics do not notice;
a hinge about +y by angle a then maps local +z to (sin a, 0, cos a), exactly Unity's yaw a.

Bodies:

* Agent: 1 x 1 x 1 box, mass 25 (the nose cube's collider is disabled in the prefab); slide
  joints x, y, z and a hinge about y (Unity constraints 80: yaw free). Unity caps a Rigidbody's
  angular speed at 7 rad/s (``maxAngularVelocity``); so do we.
* Block: 3 x 2 x 3, mass 10; slide joints x and z only (constraints 116 freeze all rotations and
  y). With y frozen PhysX never builds up a normal force between block and floor, so the block
  slides on the floor without friction; it has no floor contact here.
* Wall: a mocap box from y = 0 (inside the floor) up to y = h / 2 (Unity: a box of y scale h
  centred at y = 0; its part inside or below the floor cannot be touched). Resized in place.
* Floor: a plane at y = 0.5 per area. It is unbounded, unlike the 20 x 20 ground: an agent whose
  centre leaves the ground is flagged done (with -1) in that same step by the fall test (which
  uses the real ground), before anything could touch the missing edge, and resets at its next
  decision; until then it keeps being penalised exactly as in Unity. Blocks never touch floors.
* Goal: a trigger, no MuJoCo geometry (the overlap is tested analytically).

Contacts and friction. MuJoCo's convex soft-contact model adds a separating velocity of about
mu * (sliding speed) to a sliding contact: at dt = 0.02 a box driven across the floor hops
several centimetres on every step and MuJoCo's friction brakes it far more than Coulomb friction
would (measured: 6 m/s instead of ~25 m/s after 45 steps of full run input). PhysX has no such
effect. So the contacts here are frictionless in MuJoCo (``condim`` 1: normal forces only) and
Coulomb friction (mu 0.6 everywhere, the PhysX default material) is applied as an impulse on
the sliding velocity of every contact pair, bounded by mu times the normal impulse MuJoCo
found for that pair in the previous step (a one-step lag; at rest and while sliding the normal
force changes slowly); a pair that separates in the step (a jump's take-off) gets none, as in
PhysX. Tests check the run speed against the Coulomb reference.

Drag. Linear drag (agent 2, block 1) and angular drag (agent 0.05) follow PhysX: the velocity,
including this step's gravity, is multiplied by max(0, 1 - drag * dt). We scale ``qvel`` before
each ``mj_step`` and add back the part of gravity PhysX would have damped (g * dt * drag * dt).

Queries the agent script makes (ground checks, "is there anything below me", trigger overlap
with the goal) are answered analytically over the axis-aligned boxes of each area, vectorized
over agents, instead of with per-agent ray casts.
"""

from __future__ import annotations

import mujoco
import numpy as np

TIMESTEP = 0.02
# WallJumpAcademy.gravityMultiplier 2.5 applied to Unity's default 9.81 at initialization.
GRAVITY = 9.81 * 2.5
FRICTION = 0.6
CONTACT_SOLREF = (0.04, 1.0)  # time constant: 2 timesteps, MuJoCo's stability limit at dt = 0.02
# Bodies of a pair moving apart faster than this (m/s) lose contact within the step (a contact
# sinks a few millimetres at most): no friction for them.
SEPARATING_SPEED = 0.25

GROUND_CENTER = (0.0, 0.0, -4.0)
GROUND_HALF = (10.0, 0.5, 10.0)
FLOOR_TOP = GROUND_CENTER[1] + GROUND_HALF[1]
WALL_CENTER_XZ = (0.0, -1.53)
WALL_HALF_XZ = (10.0, 0.75)
WALL_BOTTOM = 0.0  # bottom of the MuJoCo wall box: inside the floor, never touched
GOAL_CENTER = (6.7, 0.4, 3.3)
# The goal trigger: box collider 1 x 50 x 1 scaled by (4, 0.32738775, 4).
GOAL_HALF = (2.0, 25.0 * 0.32738775, 2.0)
BLOCK_HALF = (1.5, 1.0, 1.5)
BLOCK_HEIGHT = 1.5  # block centre y: spawn-volume y 1.05 + 0.45; frozen there
BLOCK_MASS = 10.0
BLOCK_DRAG = 1.0
AGENT_HALF = 0.5
AGENT_MASS = 25.0
AGENT_DRAG = 2.0
AGENT_ANGULAR_DRAG = 0.05
MAX_ANGULAR_VELOCITY = 7.0  # rad/s, Unity's Rigidbody.maxAngularVelocity default
# Yaw of the agent in the prefab (degrees); the agent script never resets it.
AGENT_START_YAW = 150.74

# Ground checks of WallJumpAgent.DoGroundCheck.
SMALL_CHECK_OFFSET = 0.05  # the ray starts this far below the agent centre ...
SMALL_CHECK_LENGTH = 1.0  # ... and points straight down this far
LARGE_CHECK_HALF = (0.475, 0.5, 0.475)  # overlap box, centred 0.05 below the agent centre
FALL_RAY_LENGTH = 20.0

AREA_SPACING = 60.0  # metres between area origins (cosmetic: areas never interact)
AREA_COLUMNS = 6

# Contact pairs of one area, in friction order (geom1, geom2).
_PAIRS = (("agent", "floor"), ("agent", "block"), ("agent", "wall"), ("block", "wall"))
_KINDS = ("agent", "floor", "wall", "block")
_GOAL_CENTER_XZ = np.array(GOAL_CENTER)[0::2]
_GOAL_HALF_XZ = np.array(GOAL_HALF)[0::2]


def area_origins(num_areas: int) -> np.ndarray:
    """World offsets of the training areas ``(num_areas, 3)``: a grid ``AREA_COLUMNS`` wide."""
    i = np.arange(num_areas)
    return np.stack(
        [AREA_SPACING * (i % AREA_COLUMNS), np.zeros(num_areas), AREA_SPACING * (i // AREA_COLUMNS)], axis=1
    )


def _vec(v) -> str:
    return " ".join(f"{float(x):.9g}" for x in v)


def _model_xml(num_areas: int) -> str:
    bodies: list[str] = []
    pairs: list[str] = []
    for i, origin in enumerate(area_origins(num_areas)):
        bodies.append(
            f'<geom name="floor{i}" type="plane" pos="{_vec(origin + (0.0, FLOOR_TOP, 0.0))}" '
            'zaxis="0 1 0" size="0 0 1"/>'
            f'<body name="wall{i}" mocap="true" pos="{_vec(origin + (WALL_CENTER_XZ[0], 0.0, WALL_CENTER_XZ[1]))}">'
            f'<geom name="wall{i}" type="box" size="{_vec((WALL_HALF_XZ[0], 0.01, WALL_HALF_XZ[1]))}"/></body>'
            f'<body name="block{i}" pos="{_vec(origin + (0.0, BLOCK_HEIGHT, 0.0))}">'
            '<joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 0 1"/>'
            f'<geom name="block{i}" type="box" size="{_vec(BLOCK_HALF)}" mass="{BLOCK_MASS}"/></body>'
            f'<body name="agent{i}" pos="{_vec(origin)}">'
            '<joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/>'
            '<joint type="slide" axis="0 0 1"/><joint type="hinge" axis="0 1 0"/>'
            f'<geom name="agent{i}" type="box" size="{_vec((AGENT_HALF,) * 3)}" mass="{AGENT_MASS}"/></body>'
        )
        pairs.extend(
            f'<pair geom1="{a}{i}" geom2="{b}{i}" condim="1" solref="{_vec(CONTACT_SOLREF)}"/>'
            for a, b in _PAIRS
        )
    return (
        '<mujoco model="WallJump">'
        f'<option timestep="{TIMESTEP}" gravity="0 {-GRAVITY} 0"/>'
        # no automatic collisions: only the explicit pairs below, so areas never interact
        '<default><geom contype="0" conaffinity="0"/></default>'
        f"<worldbody>{''.join(bodies)}</worldbody>"
        f"<contact>{''.join(pairs)}</contact>"
        "</mujoco>"
    )


def _overlap_xz(
    center: np.ndarray, yaw_deg: np.ndarray, half: float, box_center: np.ndarray, box_half: np.ndarray
) -> np.ndarray:
    """Whether squares of half side ``half`` turned by ``yaw_deg`` overlap axis-aligned rectangles
    in the x-z plane (separating-axis test over the four edge normals).

    :param center: ``(..., 2)`` square centres (x, z); ``yaw_deg`` ``(...)`` degrees.
    :param box_center: ``(..., 2)`` rectangle centres; ``box_half`` ``(..., 2)`` half sizes.
    :returns: bool ``(...)``.
    """
    theta = np.radians(yaw_deg)
    sin_t, cos_t = np.sin(theta), np.cos(theta)
    c, s = np.abs(cos_t), np.abs(sin_t)
    d = box_center - center
    hx, hz = box_half[..., 0], box_half[..., 1]
    reach = half * (c + s)
    along_x = np.abs(d[..., 0]) < reach + hx
    along_z = np.abs(d[..., 1]) < reach + hz
    # the square's own axes: right = (cos, -sin) and forward = (sin, cos) in (x, z)
    along_right = np.abs(d[..., 0] * cos_t - d[..., 1] * sin_t) < half + hx * c + hz * s
    along_forward = np.abs(d[..., 0] * sin_t + d[..., 1] * cos_t) < half + hx * s + hz * c
    return along_x & along_z & along_right & along_forward


# ---------------------------------------------------------------------------------------------
# The agent script's physics queries, over the axis-aligned boxes of each area (see
# WallJumpWorld.area_boxes: ground, wall, block, goal), vectorized over agents.
def down_ray_hits(
    origins: np.ndarray, centers: np.ndarray, halves: np.ndarray, length: float, boxes: list[int]
) -> np.ndarray:
    """Whether a ray straight down from ``origins`` ``(k, 3)`` hits one of ``boxes`` (indices into
    the area boxes ``centers`` / ``halves`` ``(k, 4, 3)``) within ``length`` metres.

    A box that contains the origin is not hit (Unity's raycasts ignore colliders they start in),
    and a downward ray can only enter a box through its top face, so it is enough to look at
    the top faces below the origin. :returns: bool ``(k,)``.
    """
    c, h = centers[:, boxes], halves[:, boxes]
    inside_x = np.abs(origins[:, None, 0] - c[..., 0]) < h[..., 0]
    inside = inside_x & (np.abs(origins[:, None, 2] - c[..., 2]) < h[..., 2])
    drop = origins[:, None, 1] - (c[..., 1] + h[..., 1])
    return np.any(inside & (drop > 0.0) & (drop <= length), axis=1)


def small_grounded(positions: np.ndarray, centers: np.ndarray, halves: np.ndarray) -> np.ndarray:
    """DoGroundCheck(true): a 1 m ray down from 0.05 below the agent centre ``(k, 3)`` hits the top
    of a ``walkableSurface`` / ``wall`` / ``block`` collider (every top has normal y = 1).
    :returns: bool ``(k,)``."""
    origins = positions - np.array([0.0, SMALL_CHECK_OFFSET, 0.0])
    return down_ray_hits(origins, centers, halves, SMALL_CHECK_LENGTH, [0, 1, 2])


def large_grounded(
    positions: np.ndarray, yaws: np.ndarray, centers: np.ndarray, halves: np.ndarray
) -> np.ndarray:
    """DoGroundCheck(false): a box of half size (0.475, 0.5, 0.475), centred 0.05 below the agent
    and turned with it (``yaws`` ``(k,)`` degrees), overlaps the floor, the wall or the block.
    :returns: bool ``(k,)``."""
    c, h = centers[:, :3], halves[:, :3]
    probe_y = positions[:, 1] - SMALL_CHECK_OFFSET
    vertical = np.abs(probe_y[:, None] - c[..., 1]) < LARGE_CHECK_HALF[1] + h[..., 1]
    planar = _overlap_xz(
        positions[:, None, 0::2], yaws[:, None], LARGE_CHECK_HALF[0], c[..., 0::2], h[..., 0::2]
    )
    return np.any(vertical & planar, axis=1)


def in_goal(positions: np.ndarray, yaws: np.ndarray) -> np.ndarray:
    """The agents' colliders (``positions`` ``(k, 3)``, ``yaws`` degrees) overlap the goal trigger.
    :returns: bool ``(k,)``."""
    vertical = np.abs(positions[:, 1] - GOAL_CENTER[1]) < AGENT_HALF + GOAL_HALF[1]
    planar = _overlap_xz(positions[:, 0::2], yaws, AGENT_HALF, _GOAL_CENTER_XZ, _GOAL_HALF_XZ)
    return vertical & planar


def fallen(
    agent_positions: np.ndarray, block_positions: np.ndarray, centers: np.ndarray, halves: np.ndarray
) -> np.ndarray:
    """``!Physics.Raycast(agent, down, 20) || !Physics.Raycast(block, down, 20)``: the agent or its
    block has nothing below it (left the platform). :returns: bool ``(k,)``."""
    agent_hit = down_ray_hits(agent_positions, centers, halves, FALL_RAY_LENGTH, [0, 1, 2, 3])
    block_hit = down_ray_hits(block_positions, centers, halves, FALL_RAY_LENGTH, [0, 1, 3])
    return ~(agent_hit & block_hit)


class WallJumpWorld:
    """``num_areas`` WallJump areas simulated together; arrays are float64, area index first.

    State in and out is in the area frame (see the module docstring); yaws are Unity degrees.
    """

    def __init__(self, num_areas: int) -> None:
        self.num_areas = num_areas
        self.model = mujoco.MjModel.from_xml_string(_model_xml(num_areas))
        self.data = mujoco.MjData(self.model)
        self.origins = area_origins(num_areas)
        model = self.model

        def ids(kind: mujoco.mjtObj, prefix: str) -> np.ndarray:
            return np.array([mujoco.mj_name2id(model, kind, f"{prefix}{i}") for i in range(num_areas)])

        agent_joint = model.body_jntadr[ids(mujoco.mjtObj.mjOBJ_BODY, "agent")][:, None] + np.arange(4)
        self._agent_qpos = model.jnt_qposadr[agent_joint]  # (n, 4): x, y, z, yaw (rad)
        self._agent_dof = model.jnt_dofadr[agent_joint]
        block_joint = model.body_jntadr[ids(mujoco.mjtObj.mjOBJ_BODY, "block")][:, None] + np.arange(2)
        self._block_qpos = model.jnt_qposadr[block_joint]  # (n, 2): x, z
        self._block_dof = model.jnt_dofadr[block_joint]
        self._wall_mocap = model.body_mocapid[ids(mujoco.mjtObj.mjOBJ_BODY, "wall")]
        self._wall_geom = ids(mujoco.mjtObj.mjOBJ_GEOM, "wall")
        self.wall_heights = np.zeros(num_areas)
        # Area boxes for the analytic queries (ground, wall, block, goal): (n, 4, 3) each.
        self._box_centers = np.zeros((num_areas, 4, 3))
        self._box_halves = np.zeros((num_areas, 4, 3))
        self._box_centers[:, 0], self._box_halves[:, 0] = GROUND_CENTER, GROUND_HALF
        self._box_centers[:, 1] = (WALL_CENTER_XZ[0], 0.0, WALL_CENTER_XZ[1])
        self._box_halves[:, 1] = (WALL_HALF_XZ[0], 0.0, WALL_HALF_XZ[1])
        self._box_halves[:, 2] = BLOCK_HALF
        self._box_centers[:, 3], self._box_halves[:, 3] = GOAL_CENTER, GOAL_HALF

        # Contact bookkeeping for the friction impulses: geom id -> (kind, area); (kind1, kind2) -> pair.
        self._geom_kind = np.full(model.ngeom, -1)
        self._geom_area = np.zeros(model.ngeom, dtype=np.int64)
        for k, kind in enumerate(_KINDS):
            geoms = ids(mujoco.mjtObj.mjOBJ_GEOM, kind)
            self._geom_kind[geoms] = k
            self._geom_area[geoms] = np.arange(num_areas)
        self._pair_of = np.full((len(_KINDS), len(_KINDS)), -1)
        for p, (a, b) in enumerate(_PAIRS):
            # MuJoCo may list a contact's geoms in either order (planes come first)
            self._pair_of[_KINDS.index(a), _KINDS.index(b)] = p
            self._pair_of[_KINDS.index(b), _KINDS.index(a)] = p
        self._first_kind = np.array([_KINDS.index(a) for a, _ in _PAIRS])
        # Normal force (N) of every pair in the last step, and the force-weighted sum of its contact
        # normals, pointing from the second body to the first: (pairs, n) and (pairs, n, 3).
        self._normal_force = np.zeros((len(_PAIRS), num_areas))
        self._normal_dir = np.zeros((len(_PAIRS), num_areas, 3))

        # Per-dof velocity factor of PhysX damping, and the damped part of gravity added back.
        self._damping = np.ones(model.nv)
        self._damping[self._agent_dof[:, :3].ravel()] = max(0.0, 1.0 - AGENT_DRAG * TIMESTEP)
        self._damping[self._agent_dof[:, 3]] = max(0.0, 1.0 - AGENT_ANGULAR_DRAG * TIMESTEP)
        self._damping[self._block_dof.ravel()] = max(0.0, 1.0 - BLOCK_DRAG * TIMESTEP)
        self._gravity_correction = np.zeros(model.nv)
        self._gravity_correction[self._agent_dof[:, 1]] = GRAVITY * TIMESTEP * AGENT_DRAG * TIMESTEP

        everyone = np.arange(num_areas)
        self.set_agent_yaws(None, AGENT_START_YAW)
        self.place_agents(everyone, np.tile([0.0, 1.0, -12.0], (num_areas, 1)))
        self.place_blocks(everyone, np.tile([0.0, -6.5], (num_areas, 1)))
        self.set_wall_heights(everyone, np.zeros(num_areas))
        mujoco.mj_forward(model, self.data)

    # ------------------------------------------------------------------ state
    # ``areas`` selects areas (int indices); None = all of them, in order.
    def agent_positions(self, areas: np.ndarray | None = None) -> np.ndarray:
        """Agent centres ``(k, 3)`` in the area frame (m)."""
        return self.data.qpos[self._agent_qpos[:, :3] if areas is None else self._agent_qpos[areas, :3]]

    def agent_yaws(self, areas: np.ndarray | None = None) -> np.ndarray:
        """Agent yaws ``(k,)`` in degrees (Unity convention, not wrapped)."""
        return np.degrees(
            self.data.qpos[self._agent_qpos[:, 3] if areas is None else self._agent_qpos[areas, 3]]
        )

    def agent_velocities(self, areas: np.ndarray | None = None) -> np.ndarray:
        """Agent linear velocities ``(k, 3)`` (m/s)."""
        return self.data.qvel[self._agent_dof[:, :3] if areas is None else self._agent_dof[areas, :3]]

    def set_agent_velocities(self, areas: np.ndarray | None, velocities: np.ndarray) -> None:
        """Set the agents' linear velocities ``(k, 3)`` (Unity ``rb.velocity = v``)."""
        self.data.qvel[self._agent_dof[:, :3] if areas is None else self._agent_dof[areas, :3]] = velocities

    def block_positions(self, areas: np.ndarray | None = None) -> np.ndarray:
        """Block centres ``(k, 3)`` in the area frame (m)."""
        xz = self.data.qpos[self._block_qpos if areas is None else self._block_qpos[areas]]
        out = np.full((len(xz), 3), BLOCK_HEIGHT)
        out[:, 0::2] = xz
        return out

    def block_velocities(self, areas: np.ndarray | None = None) -> np.ndarray:
        """Block velocities ``(k, 3)`` (m/s; y is always 0)."""
        vxz = self.data.qvel[self._block_dof if areas is None else self._block_dof[areas]]
        out = np.zeros((len(vxz), 3))
        out[:, 0::2] = vxz
        return out

    # ------------------------------------------------------------------ teleports
    def place_agents(self, areas: np.ndarray, positions: np.ndarray) -> None:
        """Teleport agents to ``positions`` ``(k, 3)`` and zero their linear velocity; yaw and
        angular velocity are kept (WallJumpAgent.AgentReset)."""
        self.data.qpos[self._agent_qpos[areas, :3]] = positions
        self.data.qvel[self._agent_dof[areas, :3]] = 0.0

    def rotate_agents(self, areas: np.ndarray, delta_deg: np.ndarray) -> None:
        """``transform.Rotate`` about +y by ``delta_deg`` ``(k,)`` degrees (a teleport)."""
        self.data.qpos[self._agent_qpos[areas, 3]] += np.radians(delta_deg)

    def set_agent_yaws(self, areas: np.ndarray | None, yaw_deg: np.ndarray | float) -> None:
        """Turn agents to ``yaw_deg`` (degrees; a teleport, the angular velocity is kept)."""
        self.data.qpos[self._agent_qpos[:, 3] if areas is None else self._agent_qpos[areas, 3]] = np.radians(
            yaw_deg
        )

    def place_blocks(self, areas: np.ndarray, xz: np.ndarray) -> None:
        """Teleport blocks to ``xz`` ``(k, 2)`` (centre height stays 1.5) and stop them."""
        self.data.qpos[self._block_qpos[areas]] = xz
        self.data.qvel[self._block_dof[areas]] = 0.0

    def set_wall_heights(self, areas: np.ndarray, heights: np.ndarray) -> None:
        """Set the walls' y scale ``(k,)``: a wall of height h spans y in [-|h|/2, |h|/2]."""
        heights = np.abs(np.asarray(heights, dtype=np.float64))
        self.wall_heights[areas] = heights
        self._box_halves[areas, 1, 1] = heights / 2.0
        top = np.maximum(heights / 2.0, WALL_BOTTOM + 0.01)
        half = (top - WALL_BOTTOM) / 2.0
        geoms = self._wall_geom[areas]
        model = self.model
        model.geom_size[geoms, 1] = half
        # MuJoCo culls contact pairs by these bounds: they must follow the size.
        model.geom_rbound[geoms] = np.linalg.norm(model.geom_size[geoms], axis=1)
        model.geom_aabb[geoms, 3:] = model.geom_size[geoms]
        pos = self.origins[areas] + np.array([WALL_CENTER_XZ[0], 0.0, WALL_CENTER_XZ[1]])
        pos[:, 1] = WALL_BOTTOM + half
        self.data.mocap_pos[self._wall_mocap[areas]] = pos

    # ------------------------------------------------------------------ queries
    def area_boxes(self, block_positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The axis-aligned boxes of every area in the order ground, wall, block, goal: centres and
        half sizes, float ``(num_areas, 4, 3)`` each (the arrays are reused by the next call).

        :param block_positions: ``(num_areas, 3)`` if already at hand (saves reading them again).
        """
        self._box_centers[:, 2] = self.block_positions() if block_positions is None else block_positions
        return self._box_centers, self._box_halves

    # ------------------------------------------------------------------ stepping
    def step(self) -> None:
        """One physics step of 0.02 s for every area: PhysX drag, Coulomb friction, MuJoCo."""
        qvel = self.data.qvel
        qvel *= self._damping
        qvel += self._gravity_correction
        yaw_rate = self._agent_dof[:, 3]
        qvel[yaw_rate] = np.clip(qvel[yaw_rate], -MAX_ANGULAR_VELOCITY, MAX_ANGULAR_VELOCITY)
        self._apply_friction()
        mujoco.mj_step(self.model, self.data)
        self._record_normal_forces()

    def _record_normal_forces(self) -> None:
        """Sum the normal forces MuJoCo applied in the last step per contact pair of each area."""
        self._normal_force[:] = 0.0
        self._normal_dir[:] = 0.0
        ncon = self.data.ncon
        if ncon == 0:
            return
        contact = self.data.contact
        address = contact.efc_address
        active = address >= 0
        if not active.any():
            return
        geoms = contact.geom[active]
        kinds = self._geom_kind[geoms]
        pair = self._pair_of[kinds[:, 0], kinds[:, 1]]
        area = self._geom_area[geoms[:, 0]]
        force = np.maximum(self.data.efc_force[address[active]], 0.0)
        # MuJoCo's normal points from geom1 to geom2; turn it to point at the pair's first body.
        toward_first = np.where(kinds[:, 0] == self._first_kind[pair], -1.0, 1.0)
        np.add.at(self._normal_force, (pair, area), force)
        np.add.at(self._normal_dir, (pair, area), (force * toward_first)[:, None] * contact.frame[active, :3])

    def _apply_friction(self) -> None:
        """Coulomb friction impulses, pair by pair: each removes as much of the pair's sliding
        velocity as mu * normal impulse allows (normal forces of the previous step). Pairs that
        separate in this step (a jump take-off) get none, as PhysX finds no contact there."""
        for p, (first, second) in enumerate(_PAIRS):
            force = self._normal_force[p]
            areas = np.flatnonzero(force > 0.0)
            if areas.size == 0:
                continue
            normal = self._normal_dir[p, areas]
            length = np.linalg.norm(normal, axis=1)
            keep = length > 1e-12
            areas, normal = areas[keep], normal[keep] / length[keep, None]
            if first == "agent":
                v1, inv_m1 = self.agent_velocities(areas), 1.0 / AGENT_MASS
            else:
                v1, inv_m1 = self.block_velocities(areas), 1.0 / BLOCK_MASS
            v2 = self.block_velocities(areas) if second == "block" else np.zeros_like(v1)
            relative = v1 - v2
            approach = np.sum(relative * normal, axis=1)
            sliding = relative - approach[:, None] * normal
            speed = np.linalg.norm(sliding, axis=1)
            moving = (speed > 1e-9) & (approach < SEPARATING_SPEED)
            if not moving.any():
                continue
            areas, sliding, speed = areas[moving], sliding[moving], speed[moving]
            direction = sliding / speed[:, None]
            # Velocity change per unit impulse along the sliding direction; blocks move in x-z only.
            planar = direction[:, 0] ** 2 + direction[:, 2] ** 2
            inv_mass = inv_m1 * (planar if first == "block" else 1.0)
            if second == "block":
                inv_mass = inv_mass + planar / BLOCK_MASS
            with np.errstate(divide="ignore"):
                impulse = np.minimum(FRICTION * force[areas] * TIMESTEP, speed / inv_mass)
            first_dv = -(impulse * inv_m1)[:, None] * direction
            if first == "agent":
                self.set_agent_velocities(areas, self.agent_velocities(areas) + first_dv)
            else:
                self.data.qvel[self._block_dof[areas]] += first_dv[:, [0, 2]]
            if second == "block":
                self.data.qvel[self._block_dof[areas]] += (impulse / BLOCK_MASS)[:, None] * direction[
                    :, [0, 2]
                ]
