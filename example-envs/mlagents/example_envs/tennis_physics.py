"""The Tennis world: 18 planar courts, each with two rackets and a ball.

Everything in and out is in Unity axes relative to each court's origin O, in the plane of play
(x to the right, y up; z is frozen for every moving body). Court geometry relative to O (boxes,
x-range x y-range; all of them "iWall" fault surfaces for the ball):

* floorA / floorB: [-12.5, 0] / [0, 12.5] x [-3.75, -3.25] (the court, top at -3.25);
* net: [-0.05, 0.05] x [-5, -1] (2.25 above the court);
* wallA / wallB: [-13.73, -12.27] / [12.27, 13.73] x [-30.45, 30.45];
* the "over" trigger: the zero-thickness plane x = 0, y in [-1, 9], above the net.

Rackets run on MuJoCo: each is a box of 1.1 x 1.875 (x 2 deep) turned about z by +angle
(player A, left) or -angle (player B, right), its centre 0.5 from the racket's origin along the
box's local -x (A) or +x (B), mass 4, on two slide joints (x, y), under gravity, colliding
without friction and without bounce (racketMat) with the court boxes. The ball is a MuJoCo body
on two slide joints too (mass 0.75, radius 0.5 x scale, gravity, no drag), but its contacts are
resolved here, exactly: its material is frictionless with restitution 1 (ballMat, combined by
Maximum), which MuJoCo's soft contacts cannot reproduce. A ball touching a racket bounces
elastically off it (normal velocity reversed relative to the racket; no bounce below PhysX's
threshold of 2 m/s); a racket standing on the court is supported by it, so the ball bounces off
it as off an immovable body, while an airborne racket takes its share of the impulse (mass 4).
Any ball contact with a court box ends the point, so those are only detected.
"""

from __future__ import annotations

import mujoco
import numpy as np

TIMESTEP = 0.02
SUBSTEPS = 4  # MuJoCo steps per physics step: a stiff racket-court contact
GRAVITY = 9.81
BALL_MASS = 0.75
BALL_RADIUS = 0.5  # times the ball scale
RACKET_MASS = 4.0
RACKET_HALF = (0.55, 0.9375)  # local x, local y (the box is 2 deep in z)
RACKET_DEPTH_HALF = 1.0
RACKET_OFFSET = 0.5  # box centre from the racket origin, along local -x (A) / +x (B)
BOUNCE_THRESHOLD = 2.0  # m/s: slower approaches do not bounce (PhysX)
COURT_TOP = -3.25
REST_TOLERANCE = 0.02  # a racket this close above its resting height stands on the court

AREA_X = (-45.6, 0.0, 44.4)
AREA_Z = (0.0, 30.0, 60.0, 91.2, 121.2, 151.2)

# Court boxes relative to O (x_min, x_max, y_min, y_max); the order gives the surface codes.
FLOOR_A, FLOOR_B, NET, WALL_A, WALL_B = range(5)
COURT_BOXES = np.array(
    [
        [-12.5, 0.0, -3.75, -3.25],
        [0.0, 12.5, -3.75, -3.25],
        [-0.05, 0.05, -5.0, -1.0],
        [-13.73, -12.27, -30.45, 30.45],
        [12.27, 13.73, -30.45, 30.45],
    ]
)
UNDER_FLOOR = (-12.5, 12.5, -5.5, -3.5)  # solid for the rackets only; the ball never gets there
OVER_Y = (-1.0, 9.0)  # the over-the-net trigger's extent in y, at x = 0


def area_origins() -> np.ndarray:
    """Court origins (Unity x, y, z) ``(18, 3)``, in scene order."""
    return np.array([[x, 0.0, z] for x in AREA_X for z in AREA_Z])


def racket_rest_height(angle_deg: float) -> float:
    """Racket origin height (relative to O) when its lowest corner rests on the court."""
    theta = np.radians(angle_deg)
    s, c = abs(np.sin(theta)), abs(np.cos(theta))
    return COURT_TOP + RACKET_OFFSET * s + RACKET_HALF[0] * s + RACKET_HALF[1] * c


def _box_xml(name: str, origin: np.ndarray, box: tuple[float, float, float, float]) -> str:
    x0, x1, y0, y1 = box
    # MuJoCo axes: Unity (x, y, z) -> (x, z, y); the court is 7 deep in Unity z
    return (
        f'<geom name="{name}" type="box" pos="{origin[0] + (x0 + x1) / 2} {origin[2]} {(y0 + y1) / 2}" '
        f'size="{(x1 - x0) / 2} 3.5 {(y1 - y0) / 2}" contype="0" conaffinity="1" condim="1"/>'
    )


def _model_xml(origins: np.ndarray) -> str:
    static, bodies = [], []
    for i, o in enumerate(origins):
        for k, box in enumerate(COURT_BOXES):
            static.append(_box_xml(f"court{i}_{k}", o, tuple(box)))
        static.append(_box_xml(f"under{i}", o, UNDER_FLOOR))
        for side in ("A", "B"):
            bodies.append(
                f'<body name="racket{i}{side}" pos="{o[0]} {o[2]} 0">'
                '<joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 0 1"/>'
                f'<inertial pos="0 0 0" mass="{RACKET_MASS}" diaginertia="1 1 1"/>'
                # the box lives on a jointless child frame, turned and moved at run time (MuJoCo's
                # collision bounds of a body stay valid when its geoms do not move inside it)
                f'<body name="racket_frame{i}{side}">'
                f'<geom name="racket{i}{side}" type="box" size="{RACKET_HALF[0]} {RACKET_DEPTH_HALF} '
                f'{RACKET_HALF[1]}" mass="0" contype="1" conaffinity="0" condim="1"/>'
                "</body></body>"
            )
        bodies.append(
            f'<body name="ball{i}" pos="{o[0]} {o[2]} 0">'
            '<joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 0 1"/>'
            f'<geom name="ball{i}" type="sphere" size="{BALL_RADIUS}" mass="{BALL_MASS}" '
            'contype="0" conaffinity="0"/></body>'
        )
    return (
        '<mujoco model="Tennis">'
        f'<option timestep="{TIMESTEP / SUBSTEPS}" gravity="0 0 {-GRAVITY}"/>'
        f"<worldbody>{''.join(static)}{''.join(bodies)}</worldbody></mujoco>"
    )


def _closest_offsets(
    local: np.ndarray, half: np.ndarray | tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Offset of points ``(..., 2)`` (in a box's frame) from the nearest point of the box with
    half sizes ``half``, and its length; 0 inside."""
    offset = local - np.clip(local, -np.asarray(half), np.asarray(half))
    return offset, np.sqrt((offset * offset).sum(-1))


class TennisWorld:
    """``num_areas`` courts. Racket arrays are ``(num_areas, 2, ...)`` (player A, player B);
    ball arrays ``(num_areas, ...)``. Positions are relative to each court's origin."""

    def __init__(self, num_areas: int = 18) -> None:
        self.num_areas = num_areas
        self.origins = area_origins()[:num_areas]
        self.model = mujoco.MjModel.from_xml_string(_model_xml(self.origins))
        self.data = mujoco.MjData(self.model)
        # qpos/qvel per area: racket A (x, y), racket B (x, y), ball (x, y): the slide joints'
        # displacements from the court origin, MuJoCo (x, z) = Unity (x, y)
        self._qpos = self.data.qpos.reshape(num_areas, 3, 2)
        self._qvel = self.data.qvel.reshape(num_areas, 3, 2)
        self._racket_frames = np.array(
            [
                [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, f"racket_frame{i}{s}") for s in "AB"]
                for i in range(num_areas)
            ]
        )
        self._ball_geoms = np.array(
            [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, f"ball{i}") for i in range(num_areas)]
        )
        self.mirror = np.array([1.0, -1.0])  # m: +1 for A, -1 for B
        self.angles = np.zeros((num_areas, 2))  # racket z-rotation (degrees): +angle A, -angle B
        self.ball_radius = np.full(num_areas, BALL_RADIUS)
        self._in_over = np.zeros(num_areas, dtype=bool)
        self._touching = np.zeros((num_areas, 2), dtype=bool)
        self.set_racket_angles(np.arange(num_areas), 55.0)

    # ---- state (relative to each court's origin, Unity x and y) ----
    @property
    def racket_positions(self) -> np.ndarray:
        """``(n, 2, 2)``: (x, y) of the racket origins."""
        return self._qpos[:, :2].copy()

    @property
    def racket_velocities(self) -> np.ndarray:
        return self._qvel[:, :2].copy()

    @property
    def ball_positions(self) -> np.ndarray:
        """``(n, 2)``: (x, y) of the ball centres."""
        return self._qpos[:, 2].copy()

    @property
    def ball_velocities(self) -> np.ndarray:
        return self._qvel[:, 2].copy()

    # ---- changes ----
    def set_gravity(self, gravity: float) -> None:
        self.model.opt.gravity[:] = (0.0, 0.0, -gravity)

    def set_racket_angles(self, areas: np.ndarray, angle: float, sides: tuple[int, ...] = (0, 1)) -> None:
        """Turn the rackets of players ``sides`` (0 = A, 1 = B) of ``areas``: A to +angle, B to
        -angle degrees about z."""
        areas = np.asarray(areas)
        for side in sides:
            sign = 1.0 if side == 0 else -1.0
            theta = np.radians(sign * angle)
            frames = self._racket_frames[areas, side]
            # centre 0.5 along local -x for A, +x for B: R(theta) (-/+0.5, 0)
            offset = -sign * RACKET_OFFSET
            self.model.body_pos[frames] = [offset * np.cos(theta), 0.0, offset * np.sin(theta)]
            # a Unity turn by theta about z is a MuJoCo turn by -theta about +y
            self.model.body_quat[frames] = [np.cos(-theta / 2), 0.0, np.sin(-theta / 2), 0.0]
            self.angles[areas, side] = sign * angle

    def place_rackets(self, areas: np.ndarray, side: int, positions: np.ndarray) -> None:
        """Teleport the rackets of player ``side`` (0 = A, 1 = B) to ``positions`` ``(k, 2)`` and stop them."""
        self._qpos[areas, side] = positions
        self._qvel[areas, side] = 0.0

    def set_racket_velocities(self, areas: np.ndarray, side: int, velocities: np.ndarray) -> None:
        self._qvel[areas, side] = velocities

    def clamp_racket_x(self, areas: np.ndarray, side: int, limit: float) -> None:
        """Teleport rackets that crossed ``limit`` (relative x) back onto it: A stays at x <= -1,
        B at x >= +1 (``side`` tells which)."""
        x = self._qpos[areas, side, 0]
        crossed = x > limit if side == 0 else x < limit
        if crossed.any():
            self._qpos[areas[crossed], side, 0] = limit

    def serve(self, areas: np.ndarray, positions: np.ndarray) -> None:
        """Put the balls of ``areas`` at ``positions`` ``(k, 2)``, at rest, at scale 1."""
        self._qpos[areas, 2] = positions
        self._qvel[areas, 2] = 0.0
        self.set_ball_scale(areas, 1.0)

    def set_ball_scale(self, areas: np.ndarray, scale: float) -> None:
        if not scale > 0.0:
            raise ValueError(f"Tennis reset parameter scale must be positive, got {scale}.")
        self.ball_radius[areas] = BALL_RADIUS * scale
        self.model.geom_size[self._ball_geoms[areas], 0] = BALL_RADIUS * scale

    def racket_boxes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Racket box centres ``(n, 2, 2)`` (relative to O) and local axes u (local x), w (local y)."""
        theta = np.radians(self.angles)
        u = np.stack([np.cos(theta), np.sin(theta)], -1)
        w = np.stack([-np.sin(theta), np.cos(theta)], -1)
        offset = -RACKET_OFFSET * self.mirror[None, :, None] * u
        return self.racket_positions + offset, u, w

    # ---- stepping ----
    def step(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One 0.02 s physics step: the ball's velocity clamp (+-9 per axis), MuJoCo, then the
        ball's contacts. Returns ``(hit, fault_surface, left_over)``: bool ``(n, 2)`` the ball
        started touching racket A/B; int ``(n,)`` the court box the ball touched (-1 none, else
        FLOOR_A, FLOOR_B, NET, WALL_A or WALL_B); bool ``(n,)`` the ball left the over trigger."""
        ball_v = self._qvel[:, 2]
        np.clip(ball_v, -9.0, 9.0, out=ball_v)
        mujoco.mj_step(self.model, self.data, nstep=SUBSTEPS)
        hit = self._racket_contacts()
        ball = self.ball_positions
        r = self.ball_radius
        # court boxes: which does the ball touch (the first in code order wins)
        centre = np.stack(
            [(COURT_BOXES[:, 0] + COURT_BOXES[:, 1]) / 2, (COURT_BOXES[:, 2] + COURT_BOXES[:, 3]) / 2], 1
        )
        half = np.stack(
            [(COURT_BOXES[:, 1] - COURT_BOXES[:, 0]) / 2, (COURT_BOXES[:, 3] - COURT_BOXES[:, 2]) / 2], 1
        )
        _, dist = _closest_offsets(ball[:, None, :] - centre[None], half[None])
        touching = dist <= r[:, None]
        fault = np.where(touching.any(1), np.argmax(touching, 1), -1)
        # over trigger: the plane x = 0, y in [-1, 9]
        dy = np.maximum(0.0, np.maximum(OVER_Y[0] - ball[:, 1], ball[:, 1] - OVER_Y[1]))
        inside = ball[:, 0] ** 2 + dy * dy <= r * r
        left = self._in_over & ~inside
        self._in_over = inside
        return hit, fault, left

    def _racket_contacts(self) -> np.ndarray:
        """Resolve ball-racket contacts; returns bool ``(n, 2)``: contact began in this step."""
        centre, u, w = self.racket_boxes()
        ball = self.ball_positions[:, None, :]
        rel = ball - centre
        local = np.stack([(rel * u).sum(-1), (rel * w).sum(-1)], -1)
        offset, dist = _closest_offsets(local, RACKET_HALF)
        r = self.ball_radius[:, None]
        touching = dist < r
        began = touching & ~self._touching
        self._touching = touching
        if not touching.any():
            return began
        for area, side in zip(*np.nonzero(touching)):
            self._bounce(
                int(area), int(side), local[area, side], offset[area, side], float(dist[area, side]), u, w
            )
        return began

    def _bounce(
        self,
        area: int,
        side: int,
        local: np.ndarray,
        offset: np.ndarray,
        dist: float,
        u: np.ndarray,
        w: np.ndarray,
    ) -> None:
        radius = float(self.ball_radius[area])
        if dist > 1e-9:
            n_local, depth = offset / dist, radius - dist
        else:  # the centre is inside the box: leave through the nearest face
            gaps = np.array(RACKET_HALF) - np.abs(local)
            axis = int(np.argmin(gaps))
            n_local = np.zeros(2)
            n_local[axis] = 1.0 if local[axis] >= 0 else -1.0
            depth = radius + gaps[axis]
        normal = n_local[0] * u[area, side] + n_local[1] * w[area, side]
        self._qpos[area, 2] += normal * depth
        racket_v = self._qvel[area, side]
        vn = float((self._qvel[area, 2] - racket_v) @ normal)
        if vn >= 0.0:
            return
        e = 1.0 if -vn > BOUNCE_THRESHOLD else 0.0
        standing = (
            self.racket_positions[area, side, 1]
            <= racket_rest_height(abs(self.angles[area, side])) + REST_TOLERANCE
        )
        inverse_mass = 1.0 / BALL_MASS + (0.0 if standing else 1.0 / RACKET_MASS)
        impulse = -(1.0 + e) * vn / inverse_mass
        self._qvel[area, 2] += impulse / BALL_MASS * normal
        if not standing:
            self._qvel[area, side] -= impulse / RACKET_MASS * normal
