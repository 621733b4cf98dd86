"""Building blocks shared by the planar box-agent scenes on MuJoCo (Hallway, PushBlock,
Pyramids; :class:`AreaScene` is the base of these scenes, one agent per area).

Frames. Scenes speak Unity's frame (left-handed, +y up, yaw in degrees, positive yaw
turns local +z toward +x). MuJoCo is right-handed with +z up. Unity (x, y, z) maps
to MuJoCo (x, z, y) (``vector3.to_mujoco``): swapping two axes turns the left-handed
frame into a right-handed one and is its own inverse. A Unity yaw of a degrees is then a
MuJoCo rotation of -a about +z (the swap flips the sense of rotations).

Planar model. In these scenes every moving body stays on a flat floor (rotations
about x and z frozen, nothing lifts them), so MuJoCo simulates only the horizontal
motion: bodies slide in x and z (plus a yaw hinge where Unity lets collisions turn the
body) and collide with each other, the walls and the goals. Every collision box is
made a tall prism in MuJoCo (``PRISM_HALF_HEIGHT``) so contact normals are always
horizontal; the true heights stay in the scene (for the ray sensor).

The floor is not a MuJoCo geom. We tried: with MuJoCo's soft contacts at the 0.02 s
step, a box that gets Unity's per-step velocity changes (1.5-2 m/s each step) while
sliding on a box or plane floor is thrown upwards (measured up to 10 m/s vertical)
and its floor friction far exceeds Coulomb's bound, whatever the cone type,
impratio or solver settings; only tiny substeps reduce it. On a flat floor the normal
force of such a body is exactly m g, so the floor's Coulomb friction is applied
directly: each step the horizontal speed drops by min(speed, mu g dt) (and a spin by
the matching torsional friction of a square base).

Unity's linear drag d is mimicked by scaling the velocity by max(0, 1 - d * dt) once per
step, before MuJoCo integrates (PhysX damps the velocity in its integration phase,
before the contact solver). MuJoCo's own joint damping is not used: it is a force
proportional to velocity, not Unity's per-step factor.

Collision "enter" events (Unity's OnCollisionEnter) are the rising edge of "touching"
between two geoms from one step to the next: a pair starts touching within 0.02 m
(PhysX's contact offset of 0.01 per collider) and stops touching only when more than
0.1 m apart. The hysteresis stands in for PhysX's resting contact: MuJoCo's soft
contact lets a body that was rammed into a wall rebound by a few centimetres, which
would otherwise raise a second "enter" that Unity never reports. Geoms that raise
events get a contact ``gap`` of 0.1 m: MuJoCo (4.x) then reports such pairs from 0.1 m
apart as inactive contacts, without pushing before real contact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

import mujoco
import numpy as np

from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec
from .vector3 import to_mujoco

if TYPE_CHECKING:
    from .sdk.ray_perception import CastWorld

#: an axis-aligned box in an area's frame (Unity axes): centre, half extents
AreaBox = tuple[Sequence[float], Sequence[float]]

#: the fixed physics step of every example (s)
TIMESTEP = 0.02
#: contact offset of a PhysX collider pair (2 x 0.01): touching starts (m)
EVENT_MARGIN = 0.02
#: distance beyond which a touching pair counts as separated again (m)
EVENT_RELEASE = 0.1
#: PhysX default material friction (static = dynamic)
DEFAULT_FRICTION = 0.6
#: half height of every MuJoCo collision prism (m); the planar model ignores true heights
PRISM_HALF_HEIGHT = 50.0
#: torsional friction of a square base of side a spinning on a floor: the mean distance of
#: the base's points from its centre is 0.3826 a, the inertia m a^2 / 6, so the angular
#: deceleration is 6 * 0.3826 * mu * g / a
_SQUARE_SPIN_FACTOR = 6.0 * 0.3826

#: the player brain keys of the box agents (branch 0: 1 forward, 2 backward, 3 turn right, 4 turn
#: left): W forward, S backward, D turn right, A turn left
PLAYER_KEYS: dict[str, tuple[int, float]] = {"w": (0, 1), "s": (0, 2), "d": (0, 3), "a": (0, 4)}

#: MJCF attributes of static geoms: these collide with the moving geoms (which keep the default
#: contype 1, conaffinity 1) but not with each other
STATIC_COLLIDER = {"contype": 1, "conaffinity": 0}
#: MJCF of the two slide joints of a planar body: along Unity x and Unity z (MuJoCo x and y)
PLANAR_SLIDES = '<joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/>'


def yaw_quaternions(yaw_deg: np.ndarray) -> np.ndarray:
    """MuJoCo quaternions (w, x, y, z) ``(..., 4)`` of Unity yaws ``(...)`` in degrees."""
    half = -0.5 * np.radians(np.asarray(yaw_deg, dtype=np.float64))
    zeros = np.zeros_like(half)
    return np.stack([np.cos(half), zeros, zeros, np.sin(half)], axis=-1)


def forward_vectors(yaw_deg: np.ndarray) -> np.ndarray:
    """Unity ``transform.forward`` ``(k, 3)`` of yaws ``(k,)`` in degrees."""
    theta = np.radians(yaw_deg)
    return np.stack([np.sin(theta), np.zeros_like(theta), np.cos(theta)], axis=-1)


def right_vectors(yaw_deg: np.ndarray) -> np.ndarray:
    """Unity ``transform.right`` ``(k, 3)`` of yaws ``(k,)`` in degrees."""
    theta = np.radians(yaw_deg)
    return np.stack([np.cos(theta), np.zeros_like(theta), -np.sin(theta)], axis=-1)


def linear_drag_factor(drag: float | np.ndarray) -> np.ndarray:
    """Unity's per-step velocity factor max(0, 1 - drag * dt)."""
    return np.maximum(0.0, 1.0 - np.asarray(drag, dtype=np.float64) * TIMESTEP)


def velocity_changes(
    yaw_deg: np.ndarray, forward: np.ndarray, strafe: np.ndarray | None = None
) -> np.ndarray:
    """Unity velocity changes ``(k, 3)`` (m/s) of ``forward`` ``(k,)`` m/s along
    ``transform.forward`` plus ``strafe`` ``(k,)`` m/s along ``transform.right``, for yaws
    ``(k,)`` in degrees."""
    delta = forward_vectors(yaw_deg) * forward[:, None]
    if strafe is not None:
        delta = delta + right_vectors(yaw_deg) * strafe[:, None]
    return delta


def area_origins(num_areas: int, spacing: float) -> np.ndarray:
    """Unity positions ``(num_areas, 3)`` of area origins ``spacing`` m apart along x (far
    enough that the areas never interact)."""
    return np.stack([spacing * np.arange(num_areas), np.zeros(num_areas), np.zeros(num_areas)], axis=1)


def add_area_boxes(
    cast_world: CastWorld, origins: np.ndarray, boxes: Sequence[AreaBox], tag: str | None, areas: np.ndarray
) -> None:
    """Add to a ray-perception ``CastWorld`` one unrotated box per area for each (centre, half
    extents) of ``boxes``, given in the area frame (Unity axes), with ``tag`` (None: seen by
    no ray tag); ``origins`` ``(n, 3)`` and ``areas`` ``(n,)`` name the areas."""
    for center, half in boxes:
        cast_world.add_boxes(origins + center, np.tile(half, (len(origins), 1)), 0.0, tag, areas)


def _fmt(values) -> str:
    return " ".join(f"{float(v):.6g}" for v in np.ravel(values))


def box_geom(name: str, center: np.ndarray, half: np.ndarray, **attributes: object) -> str:
    """MJCF of a box geom from a Unity centre and half extents (static unless inside a body)."""
    extra = "".join(f' {key}="{value}"' for key, value in attributes.items())
    return f'<geom name="{name}" type="box" pos="{_fmt(to_mujoco(center))}" size="{_fmt(to_mujoco(half))}"{extra}/>'


def prism_geom(
    name: str, center_xz: tuple[float, float], half_xz: tuple[float, float], **attributes: object
) -> str:
    """MJCF of a collision prism: a box with the given horizontal Unity centre and half
    sizes (x, z), ``PRISM_HALF_HEIGHT`` high about the body's height."""
    center = np.array([center_xz[0], 0.0, center_xz[1]])
    half = np.array([half_xz[0], PRISM_HALF_HEIGHT, half_xz[1]])
    return box_geom(name, center, half, **attributes)


def mocap_prism(
    body: str,
    pos: Sequence[float] | np.ndarray,
    geom: str,
    center_xz: tuple[float, float],
    half_xz: tuple[float, float],
    **attributes: object,
) -> str:
    """MJCF of a mocap body ``body`` at MuJoCo ``pos`` (the scene moves it, e.g. at every reset)
    holding one collision prism ``geom`` (see :func:`prism_geom`)."""
    position = " ".join(str(v) for v in pos)
    return (
        f'<body name="{body}" mocap="true" pos="{position}">'
        + prism_geom(geom, center_xz, half_xz, **attributes)
        + "</body>"
    )


def resize_prisms(model: mujoco.MjModel, geoms: np.ndarray, half: float) -> None:
    """Give the collision prisms ``geoms`` (of a scaled block or agent) the horizontal half size
    ``half`` along Unity x and z, with their broad-phase bounding sphere and box."""
    model.geom_size[geoms, 0] = half
    model.geom_size[geoms, 1] = half
    model.geom_rbound[geoms] = np.sqrt(2 * half * half + model.geom_size[geoms, 2] ** 2)
    model.geom_aabb[geoms, 3] = half
    model.geom_aabb[geoms, 4] = half


def wall_prisms(walls: Sequence[AreaBox], origin: np.ndarray, area: int) -> list[str]:
    """MJCF of the static collision prisms ``wall{w}_{area}`` of one area: ``walls`` are
    (centre, half extents) pairs in the area frame, ``origin`` ``(3,)`` the area's origin."""
    geoms = []
    for w, (center, half) in enumerate(walls):
        c = origin + center
        geoms.append(prism_geom(f"wall{w}_{area}", (c[0], c[2]), (half[0], half[2]), **STATIC_COLLIDER))
    return geoms


def planar_model_xml(name: str, static: list[str], bodies: list[str]) -> str:
    """MJCF of a planar model: no gravity (see the module docstring), the fixed step, Unity's
    default friction on every geom, then the ``static`` geoms and the ``bodies``."""
    return (
        f'<mujoco model="{name}">'
        f'<option timestep="{TIMESTEP}" gravity="0 0 0" cone="elliptic"/>'
        f'<default><geom friction="{DEFAULT_FRICTION} 0.005 0.0001" contype="1" conaffinity="1"/></default>'
        f"<worldbody>{''.join(static)}{''.join(bodies)}</worldbody>"
        "</mujoco>"
    )


def floor_friction(velocity_xz: np.ndarray, mu_g: np.ndarray | float) -> np.ndarray:
    """Coulomb friction of a flat floor for one step: horizontal velocities ``(k, 2)`` (m/s)
    lose min(speed, mu * g * dt) along their direction. ``mu_g``: friction coefficient times
    gravity (m/s^2), scalar or ``(k,)``. Returns the new velocities ``(k, 2)``."""
    speed = np.sqrt(np.einsum("ij,ij->i", velocity_xz, velocity_xz))
    loss = np.asarray(mu_g) * TIMESTEP
    scale = np.where(speed > loss, 1.0 - loss / np.maximum(speed, 1e-12), 0.0)
    return velocity_xz * scale[:, None]


def spin_friction(angular_velocity: np.ndarray, mu_g: float, side: float) -> np.ndarray:
    """Torsional floor friction of square bases (side ``side`` m) for one step: yaw rates
    ``(k,)`` (rad/s) lose min(|rate|, 6 * 0.3826 * mu * g / side * dt)."""
    loss = _SQUARE_SPIN_FACTOR * mu_g / side * TIMESTEP
    return np.sign(angular_velocity) * np.maximum(np.abs(angular_velocity) - loss, 0.0)


def geom_ids(model: mujoco.MjModel, names: list[str]) -> np.ndarray:
    """Geom ids int64 ``(len(names),)`` by name."""
    return np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, n) for n in names], dtype=np.int64)


def body_ids(model: mujoco.MjModel, names: list[str]) -> np.ndarray:
    """Body ids int64 ``(len(names),)`` by name."""
    return np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names], dtype=np.int64)


class ContactRoles:
    """Collision-enter events between geom roles, per area.

    Every geom of interest gets a role (a small int > 0) and an area (:meth:`assign`).
    :meth:`entered` scans MuJoCo's contact list once per step, with numpy, and reports
    for each watched (role A, role B) pair the areas where such geoms started touching
    in this step (see the module docstring for the hysteresis). One geom of each watched
    pair needs a MuJoCo ``gap`` of ``EVENT_RELEASE``.
    """

    def __init__(self, model: mujoco.MjModel, num_areas: int, pairs: list[tuple[int, int]]) -> None:
        self.num_areas = num_areas
        self.pairs = pairs
        self.role = np.zeros(model.ngeom, dtype=np.int64)
        self.area = np.full(model.ngeom, -1, dtype=np.int64)
        self.touching = np.zeros((len(pairs), num_areas), dtype=bool)

    def assign(self, geoms: np.ndarray, role: int, areas: np.ndarray) -> None:
        """Give ``geoms`` (int ``(n,)``) the ``role`` and their ``areas`` (int ``(n,)``)."""
        self.role[geoms] = role
        self.area[geoms] = areas

    def assign_per_area(self, model: mujoco.MjModel, prefix: str, role: int) -> np.ndarray:
        """Give the geoms named ``{prefix}{i}`` the ``role`` and area ``i``, for every area;
        returns their ids int64 ``(num_areas,)``."""
        areas = np.arange(self.num_areas)
        geoms = geom_ids(model, [f"{prefix}{i}" for i in areas])
        self.assign(geoms, role, areas)
        return geoms

    def forget(self, areas: np.ndarray) -> None:
        """Mark the pairs of ``areas`` as apart (after a teleport)."""
        self.touching[:, areas] = False

    def _within(self, data: mujoco.MjData, max_distance: float) -> np.ndarray:
        out = np.zeros((len(self.pairs), self.num_areas), dtype=bool)
        n = data.ncon
        if n == 0:
            return out
        contact = data.contact
        geoms = contact.geom[:n]
        close = contact.dist[:n] <= max_distance
        r1, r2 = self.role[geoms[:, 0]], self.role[geoms[:, 1]]
        area = np.maximum(self.area[geoms[:, 0]], self.area[geoms[:, 1]])
        for i, (a, b) in enumerate(self.pairs):
            hit = close & (((r1 == a) & (r2 == b)) | ((r1 == b) & (r2 == a)))
            out[i, area[hit]] = True
        return out

    def entered(self, data: mujoco.MjData) -> np.ndarray:
        """bool ``(len(pairs), num_areas)``: the pair started touching in the last step."""
        close = self._within(data, EVENT_MARGIN)
        near = self._within(data, EVENT_RELEASE) if self.touching.any() else close
        now = close | (self.touching & near)
        entered = close & ~self.touching
        self.touching = now
        return entered


class PlanarWorld:
    """Base of the planar worlds: ``num_areas`` areas ``spacing`` m apart in one MuJoCo model
    (built by the subclass's ``_xml``) whose joints are ``dofs`` per area in area order, the
    first two the slides of the area's agent along Unity x and z. Unity frame in and out;
    the agent's centre stays at ``agent_height``. Subclasses provide ``_xml``, ``agent_yaws``
    and ``turn``."""

    def __init__(self, num_areas: int, spacing: float, dofs: int, agent_height: float) -> None:
        self.num_areas = num_areas
        self.agent_height = agent_height
        self.origins = area_origins(num_areas, spacing)
        self.model = mujoco.MjModel.from_xml_string(self._xml())
        self.data = mujoco.MjData(self.model)
        # qpos/qvel per area, columns as the subclass declares its joints
        self._qpos = self.data.qpos.reshape(num_areas, dofs)
        self._qvel = self.data.qvel.reshape(num_areas, dofs)

    def _xml(self) -> str:
        raise NotImplementedError

    def _unity_points(self, columns: int, height: float) -> np.ndarray:
        """Unity positions ``(num_areas, 3)`` from the qpos ``columns`` and ``columns + 1``."""
        q = self._qpos
        return np.stack([q[:, columns], np.full(self.num_areas, height), q[:, columns + 1]], axis=1)

    def _unity_velocities(self, columns: int) -> np.ndarray:
        """Unity velocities ``(num_areas, 3)`` (m/s) from the qvel ``columns`` and ``columns + 1``."""
        v = self._qvel
        return np.stack([v[:, columns], np.zeros(self.num_areas), v[:, columns + 1]], axis=1)

    @property
    def agent_positions(self) -> np.ndarray:
        """Agent centres ``(num_areas, 3)``."""
        return self._unity_points(0, self.agent_height)

    @property
    def agent_velocities(self) -> np.ndarray:
        """Agent linear velocities ``(num_areas, 3)`` (m/s)."""
        return self._unity_velocities(0)

    @property
    def agent_yaws(self) -> np.ndarray:
        """Agent yaws ``(num_areas,)`` in degrees (Unity sense), kept by the subclass."""
        raise NotImplementedError

    def turn(self, areas: np.ndarray, degrees: np.ndarray) -> None:
        """transform.Rotate about up: add ``degrees`` ``(k,)`` to the agents' yaw."""
        raise NotImplementedError

    def add_velocity(self, areas: np.ndarray, delta_v: np.ndarray) -> None:
        """ForceMode.VelocityChange: add the horizontal part of Unity ``delta_v`` ``(k, 3)``."""
        self._qvel[areas, 0] += delta_v[:, 0]
        self._qvel[areas, 1] += delta_v[:, 2]

    def move(
        self, areas: np.ndarray, turn_deg: np.ndarray, forward: np.ndarray, strafe: np.ndarray | None = None
    ) -> None:
        """An agent action as the examples apply it: turn by ``turn_deg`` ``(k,)``, then add a
        velocity change of ``forward`` (and ``strafe``) ``(k,)`` m/s along the new facing."""
        self.turn(areas, turn_deg)
        self.add_velocity(areas, velocity_changes(self.agent_yaws[areas], forward, strafe))


def rectangles_overlap(
    center_a: np.ndarray, half_a: np.ndarray, center_b: np.ndarray, half_b: np.ndarray, yaw_b: np.ndarray
) -> np.ndarray:
    """Separating-axis test in the horizontal (x, z) plane between axis-aligned rectangles A
    and rectangles B turned by ``yaw_b`` degrees (Unity yaw). Centres and half sizes are
    ``(..., 2)`` as (x, z); touching counts as overlapping. Returns bool ``(...)``."""
    theta = np.radians(yaw_b)
    c, s = np.cos(theta), np.sin(theta)
    # B's local x and z axes in world (x, z): right = (c, -s), forward = (s, c)
    bx = np.stack([c, -s], axis=-1)
    bz = np.stack([s, c], axis=-1)
    d = center_b - center_a
    overlap = np.ones(np.broadcast(d[..., 0], theta).shape, dtype=bool)
    # axes of A (world x, z)
    for axis in range(2):
        extent_b = half_b[..., 0] * np.abs(bx[..., axis]) + half_b[..., 1] * np.abs(bz[..., axis])
        overlap &= np.abs(d[..., axis]) <= half_a[..., axis] + extent_b
    # axes of B
    for k, axis_vec in enumerate((bx, bz)):
        extent_a = half_a[..., 0] * np.abs(axis_vec[..., 0]) + half_a[..., 1] * np.abs(axis_vec[..., 1])
        proj = np.abs(d[..., 0] * axis_vec[..., 0] + d[..., 1] * axis_vec[..., 1])
        overlap &= proj <= extent_a + half_b[..., k]
    return overlap


class AreaScene(Scene):
    """Base of the scenes of one box agent per walled area (Hallway, PushBlock, Pyramids): agent
    ``i`` lives in area ``i``, so per-area arrays are indexed by agent. The one brain is discrete,
    one branch of moves played with :data:`PLAYER_KEYS`; the visual version of a scene sets its
    own ``brain_name`` and ``num_agents``."""

    player_key_table = PLAYER_KEYS
    brain_name: ClassVar[str]
    #: agents (= areas)
    num_agents: ClassVar[int]

    @classmethod
    def area_spec(
        cls,
        observation_size: int,
        moves: int,
        stacked: int,
        max_step: int,
        decision_interval: int,
        training: EngineConfiguration,
        reset_parameters: Mapping[str, float] | None = None,
    ) -> SceneSpec:
        """The spec of brain ``brain_name`` (``observation_size`` floats stacked ``stacked`` times;
        ``moves`` actions, each with the empty description of the Unity brain assets) driving the
        ``num_agents`` agents (see :func:`one_brain_spec` for the rest)."""
        brain = BrainSpec(
            cls.brain_name,
            observation_size,
            "discrete",
            (moves,),
            stacked,
            vector_action_descriptions=("",) * moves,
        )
        return one_brain_spec(
            brain,
            cls.num_agents,
            max_step=max_step,
            decision_interval=decision_interval,
            reset_parameters=reset_parameters,
            training=training,
        )
