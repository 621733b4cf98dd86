"""The 3DBall world on MuJoCo: kinematic tilting platforms, each balancing one free ball.

All areas live in ONE MuJoCo model, stepped once per academy step (0.02 s). The
interface speaks Unity's frame (left-handed, +y up, quaternions as (x, y, z, w));
the conversion to MuJoCo's right-handed, +z-up frame happens only here.

Frames. Unity (x, y, z) maps to MuJoCo (x, z, y): swapping two axes turns the
left-handed frame into a right-handed one, so vectors map by that permutation
and a Unity rotation with quaternion (v, w) is the MuJoCo rotation (w, -P v)
(P = the swap; a reflection flips the sense of every rotation axis).

Physics choices (the differences from Unity are listed in docs/Learning-Environment-Examples.md):

* The platform is a MuJoCo *mocap* box (5 x 0.2 x 5): like Unity's moved static
  collider it is teleported each step and has no velocity, so the ball is only
  pushed out of the penetration the new pose creates.
* The ball is a free solid sphere (radius 0.5 * scale, inertia 2/5 m r^2).
* Ball-platform contact: one explicit contact pair per area (every other
  collision is off, so areas never interact), friction 0.6 (Average of the
  ``bounce`` material 0.6 and the default 0.6), elliptic friction cone.
* Time step: the world advances 0.02 s per academy step (Unity's fixed step), integrated by
  MuJoCo in 5 substeps of 4 ms. MuJoCo's contacts are soft with a time constant of at
  least 2 timesteps; at a 0.02 s timestep (time constant >= 0.04 s) the contact is too soft
  to follow the platform: turning at the maximum 2 degrees per step, the platform sweeps
  through a ball resting 1.4 m off centre (measured: the ball sinks 0.49 into it and drops
  through). With 4 ms substeps and a 8 ms time constant the same sweep leaves < 0.03 of
  penetration and a falling ball sinks < 0.01 into the platform. The platform is
  teleported once per 0.02 s step, like Unity's transform.
* Restitution 0.05 (Average of 0.1 and 0): a soft contact bounces according to the damping
  ratio of its spring-damper. solref = (0.008 s, damping ratio 1.3) with a stiff impedance
  (solimp 0.99..0.999) gives a measured coefficient of restitution of 0.049 for the 8 m/s
  fall at the start of every episode (tests/test_ball3d.py::test_restitution_is_about_five_percent).
  Being a property of the discretised spring-damper, it varies with the impact speed
  (measured 0.002 at 2 m/s, 0.05 at 8-14 m/s, 0.14 at 5 and 28 m/s: bounces of at most a
  few centimetres); PhysX has no bounce below 2 m/s.
* Angular drag 0.01: Unity multiplies the angular velocity by (1 - 0.01 * 0.02)
  every 0.02 s step; we scale the ball's angular velocity the same way after each
  academy step (linear drag is 0).
"""

from __future__ import annotations

import mujoco
import numpy as np

from .vector3 import to_mujoco, to_unity

TIMESTEP = 0.02  # seconds per academy step
SUBSTEPS = 5  # MuJoCo steps of TIMESTEP / SUBSTEPS each, see the module docstring
PLATFORM_HALF_SIZE = (2.5, 0.1, 2.5)  # Unity axes: 5 x 0.2 x 5 box
BALL_RADIUS = 0.5  # times the ``scale`` reset parameter
FRICTION = 0.6
# (time constant in s, damping ratio): the stiffest stable contact; restitution ~0.05 (module docstring)
CONTACT_SOLREF = (2.0 * TIMESTEP / SUBSTEPS, 1.3)
CONTACT_SOLIMP = (0.99, 0.999, 0.001, 0.5, 2.0)
ANGULAR_DRAG = 0.01
AREA_SPACING = 20.0  # metres between training areas (cosmetic: areas never collide)
# Where the prefab puts the platform inside its area ("Game" root), Unity axes.
PLATFORM_LOCAL_POSITION = (0.0, 2.22, -5.0)


_TO_MUJOCO_ORDER = np.array([3, 0, 2, 1])
_TO_MUJOCO_SIGN = np.array([1.0, -1.0, -1.0, -1.0])


def to_mujoco_quaternions(q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Unity rotations ``(..., 4)`` as (x, y, z, w) -> the same rotations in MuJoCo, (w, x, y, z).

    :param out: where to write the result (same shape as ``q``); a new array when None.
    """
    # take() and a multiplication by +-1 (exact): cheaper than a fancy index on a few rows.
    return np.multiply(np.take(q, _TO_MUJOCO_ORDER, axis=-1), _TO_MUJOCO_SIGN, out=out)


def quaternion_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` of (x, y, z, w) quaternions ``(k, 4)`` (Unity's ``a * b``:
    rotate by ``b`` first, then by ``a``)."""
    ax, ay, az, aw = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    bx, by, bz, bw = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[:, 0] = aw * bx + ax * bw + ay * bz - az * by
    out[:, 1] = aw * by - ax * bz + ay * bw + az * bx
    out[:, 2] = aw * bz + ax * by - ay * bx + az * bw
    out[:, 3] = aw * bw - ax * bx - ay * by - az * bz
    return out


def axis_angle_quaternions(axis: int, angles_deg: np.ndarray) -> np.ndarray:
    """Unity ``Quaternion.AngleAxis(angle, e_axis)`` for each angle: ``(k,)`` degrees -> ``(k, 4)``.

    :param axis: 0, 1 or 2 for the x, y or z axis.
    """
    half = np.radians(np.asarray(angles_deg, dtype=np.float64)) * 0.5
    q = np.zeros(half.shape + (4,))
    q[..., axis] = np.sin(half)
    q[..., 3] = np.cos(half)
    return q


# rotate_local's product, component by component: out[i] = q[i] * c + SIGN[i] * q[PERM[i]] * s for
# a turn about axis 0 (x), 1 (y) or 2 (z) (quaternions (x, y, z, w)).
_ROTATE_PERMUTATION = (np.array([3, 2, 1, 0]), np.array([2, 3, 0, 1]), np.array([1, 0, 3, 2]))
_ROTATE_SIGN = (
    np.array([1.0, 1.0, -1.0, -1.0]),
    np.array([-1.0, 1.0, 1.0, -1.0]),
    np.array([1.0, -1.0, 1.0, -1.0]),
)


def rotate_local(rotations: np.ndarray, axis: int, angles_deg: np.ndarray) -> np.ndarray:
    """Unity ``transform.Rotate(e_axis, angle)`` (local space): ``rotation * AngleAxis(angle, e_axis)``,
    renormalised. ``rotations`` ``(k, 4)`` (x, y, z, w), ``angles_deg`` ``(k,)``; a zero angle
    leaves a rotation unchanged. This is :func:`quaternion_multiply` with the zeros of the
    axis-angle quaternion folded in: each component is one product with ``cos`` plus or minus one
    with ``sin``, written as whole-array operations (it runs every physics step).

    Every value is computed as ``q * c + (SIGN * s) * q[PERM]``; a sign of +-1 multiplies exactly,
    so this is bit for bit ``q * c + (q[PERM] * SIGN) * s`` in any grouping. The grouping used here
    needs the fewest broadcasting operations, which dominate the cost on a dozen rows.
    """
    half = np.radians(angles_deg)
    half *= 0.5
    out = rotations * np.cos(half)[:, None]
    turned = rotations.take(_ROTATE_PERMUTATION[axis], axis=1)
    turned *= np.multiply.outer(np.sin(half), _ROTATE_SIGN[axis])
    out += turned
    norms = np.einsum("ij,ij->i", out, out)
    out /= np.sqrt(norms, out=norms)[:, None]
    return out


def _model_xml(num_areas: int) -> str:
    hx, hy, hz = to_mujoco(np.array(PLATFORM_HALF_SIZE))
    bodies, pairs = [], []
    for i, (px, py, pz) in enumerate(to_mujoco(area_platform_positions(num_areas))):
        bodies.append(
            f'<body name="platform{i}" mocap="true" pos="{px} {py} {pz}">'
            f'<geom name="platform{i}" type="box" size="{hx} {hy} {hz}"/></body>'
            f'<body name="ball{i}" pos="{px} {py} {pz + 4.0}"><freejoint/>'
            f'<geom name="ball{i}" type="sphere" size="{BALL_RADIUS}" mass="1"/></body>'
        )
        pairs.append(
            f'<pair geom1="ball{i}" geom2="platform{i}" condim="3" '
            f'friction="{FRICTION} {FRICTION} 0.005 0.0001 0.0001" '
            f'solref="{CONTACT_SOLREF[0]} {CONTACT_SOLREF[1]}" '
            f'solimp="{" ".join(str(v) for v in CONTACT_SOLIMP)}"/>'
        )
    return (
        '<mujoco model="3DBall">'
        f'<option timestep="{TIMESTEP / SUBSTEPS}" gravity="0 0 -9.81" cone="elliptic"/>'
        # contype/conaffinity 0: only the explicit pairs below collide
        '<default><geom contype="0" conaffinity="0"/></default>'
        f"<worldbody>{''.join(bodies)}</worldbody>"
        f"<contact>{''.join(pairs)}</contact>"
        "</mujoco>"
    )


def area_platform_positions(num_areas: int) -> np.ndarray:
    """World positions (Unity axes) of the platforms: areas on a grid 4 wide, ``(num_areas, 3)``."""
    i = np.arange(num_areas)
    area = np.stack([AREA_SPACING * (i % 4), np.zeros(num_areas), AREA_SPACING * (i // 4)], axis=1)
    return area + np.array(PLATFORM_LOCAL_POSITION)


class BallPlatformWorld:
    """``num_areas`` platforms with one ball each, simulated together.

    All positions, velocities and rotations in and out are in Unity's frame; arrays
    are float64 with the area index first. Platform rotations are owned here (the
    scene changes them through :meth:`set_platform_rotations`) and pushed to the
    MuJoCo mocap bodies before each step.
    """

    def __init__(self, num_areas: int) -> None:
        self.num_areas = num_areas
        self.model = mujoco.MjModel.from_xml_string(_model_xml(num_areas))
        self.data = mujoco.MjData(self.model)
        self.platform_positions = area_platform_positions(num_areas)
        self.platform_rotations = np.tile([0.0, 0.0, 0.0, 1.0], (num_areas, 1))
        # Views into MuJoCo's state (free joint: qpos = pos(3) quat(4); qvel = linear world(3), angular(3)).
        self._qpos = self.data.qpos.reshape(num_areas, 7)
        self._qvel = self.data.qvel.reshape(num_areas, 6)
        self._mocap_quat = self.data.mocap_quat
        self._ball_bodies = np.array(
            [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, f"ball{i}") for i in range(num_areas)]
        )
        self._ball_geoms = np.array(
            [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, f"ball{i}") for i in range(num_areas)]
        )
        self.ball_masses = np.ones(num_areas)
        self.ball_scales = np.ones(num_areas)
        self._angular_decay = max(0.0, 1.0 - ANGULAR_DRAG * TIMESTEP)
        self.set_platform_rotations(np.arange(num_areas), self.platform_rotations)
        mujoco.mj_forward(self.model, self.data)

    # ---- state read-out (Unity frame) ----
    @property
    def ball_positions(self) -> np.ndarray:
        """Ball centres ``(num_areas, 3)``."""
        return to_unity(self._qpos[:, :3])

    @property
    def ball_velocities(self) -> np.ndarray:
        """Ball linear velocities ``(num_areas, 3)`` in m/s."""
        return to_unity(self._qvel[:, :3])

    @property
    def ball_angular_velocities(self) -> np.ndarray:
        """Ball angular velocities ``(num_areas, 3)`` in rad/s, in the ball's own (MuJoCo) frame."""
        return self._qvel[:, 3:].copy()

    # ---- state changes ----
    def set_platform_rotations(self, areas: np.ndarray, rotations: np.ndarray) -> None:
        """Teleport the platforms of ``areas`` ``(k,)`` to ``rotations`` ``(k, 4)`` (x, y, z, w).

        ``areas`` are distinct; when they are all the areas (``k == num_areas``) they must be in
        order, as ``np.arange(num_areas)`` (the scene's agent indices are).
        """
        if len(areas) == self.num_areas:
            # Every platform (each academy step): whole-array copies instead of fancy indexing.
            np.copyto(self.platform_rotations, rotations)
            to_mujoco_quaternions(rotations, out=self._mocap_quat)
        else:
            self.platform_rotations[areas] = rotations
            self._mocap_quat[areas] = to_mujoco_quaternions(rotations)

    def place_balls(self, areas: np.ndarray, positions: np.ndarray) -> None:
        """Teleport the balls of ``areas`` to ``positions`` ``(k, 3)`` and zero their linear velocity.

        The angular velocity is kept, as in Ball3DAgent.AgentReset of the Unity scene.
        """
        self._qpos[areas, :3] = to_mujoco(positions)
        self._qvel[areas, :3] = 0.0

    def set_ball_properties(self, areas: np.ndarray, mass: float, scale: float) -> None:
        """Set the mass (kg) and uniform scale (radius 0.5 * scale) of the balls of ``areas``.

        Only balls whose values change are touched. Mirrors what Unity does when a
        script sets ``Rigidbody.mass`` and ``localScale``: the sphere collider grows and the
        inertia tensor follows (solid sphere). Mass-dependent constants that MuJoCo
        precomputes (``mj_setConst``) are updated in place for these lone free bodies.

        :raises ValueError: if mass or scale is not positive.
        """
        if not mass > 0.0 or not scale > 0.0:
            raise ValueError(
                f"3DBall reset parameters must be positive: got mass={mass}, scale={scale}. "
                "Send positive values in the reset config."
            )
        areas = np.asarray(areas)
        changed = areas[(self.ball_masses[areas] != mass) | (self.ball_scales[areas] != scale)]
        if changed.size == 0:
            return
        radius = BALL_RADIUS * scale
        inertia = 0.4 * mass * radius * radius
        bodies, geoms = self._ball_bodies[changed], self._ball_geoms[changed]
        m = self.model
        m.body_mass[bodies] = mass
        m.body_subtreemass[bodies] = mass
        m.body_subtreemass[0] = m.body_mass.sum()  # every body hangs directly off the world body
        m.body_inertia[bodies] = inertia
        # What mj_setConst computes for a single free body: 1/m for translation, 1/I for rotation.
        m.body_invweight0[bodies] = (1.0 / mass, 1.0 / inertia)
        dofs = (m.body_dofadr[bodies][:, None] + np.arange(6)).ravel()
        m.dof_invweight0[dofs] = np.tile([1.0 / mass] * 3 + [1.0 / inertia] * 3, len(changed))
        m.geom_size[geoms, 0] = radius
        m.geom_rbound[geoms] = radius
        m.geom_aabb[geoms, 3:] = radius
        self.ball_masses[changed] = mass
        self.ball_scales[changed] = scale

    def set_gravity(self, gravity: float) -> None:
        """Global gravity (0, -gravity, 0) in Unity axes, m/s^2."""
        self.model.opt.gravity[:] = (0.0, 0.0, -gravity)

    def step(self) -> None:
        """Advance the world by one 0.02 s step, then apply the ball's angular drag."""
        mujoco.mj_step(self.model, self.data, nstep=SUBSTEPS)
        self._qvel[:, 3:] *= self._angular_decay
