"""The Crawler's body on MuJoCo: a sphere with four two-segment legs, driven by position actuators.

Unity (x, y, z) is MuJoCo (x, z, y). At rest the body faces +x (Unity and MuJoCo), left is Unity
+z (MuJoCo +y). All crawlers of a scene are one MuJoCo model (one ``mj_step`` moves them all).

Per crawler, in MuJoCo's depth-first body order: the body, then for legs 0..3 the upper leg and
its lower leg. Legs point outward along u_0 = (-1, 0, -1)/sqrt 2 (rear right), u_1 = (-1, 0, 1)
(rear left), u_2 = (1, 0, 1) (front left), u_3 = (1, 0, -1) (front right) in Unity axes.

Joints (the original's ConfigurableJoints decomposed into hinges, ranges in degrees): a hip has
Y (about world down, a forward/backward sweep, +-20) then X (about u x up, [-60, 0]: -60 lifts the
thigh 60 degrees above horizontal, 0 is horizontal); a knee has X only ([0, 150]: the shin folds
down). Every hinge has a position actuator: the original's slerp drive with spring 40000 N m/rad
as ``kp`` with its force cap set per part from the strength action, and the damper 3000 N m s/rad
as joint damping scaled by the same strength fraction (capped at 1): MuJoCo integrates joint
damping implicitly and never clips it, which keeps these stiff drives stable where a clipped
actuator damping term is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .vector3 import to_mujoco

#: Unity's fixedDeltaTime set by the Crawler academy (one physics step).
TIMESTEP = 0.01333
#: MuJoCo steps per physics step (implicit drives, stiff contacts)
SUBSTEPS = 4
BODY_RADIUS = 0.315
LEG_RADIUS = 0.15
BODY_MASS = 20.0
LEG_MASS = 3.0
FORELEG_MASS = 1.0
#: along u: (anchor, capsule centre, capsule total length) of the upper and the lower leg
LEG = (0.42, 0.9, 0.816)
FORELEG = (1.2, 2.073, 1.326)
LEG_DROP = 0.15  # every leg part hangs this much below the body centre
SPRING = 40000.0
DAMPER = 3000.0
MAX_FORCE = 10000.0
HIP_X = (-60.0, 0.0)
HIP_Y = 20.0
KNEE_X = (0.0, 150.0)
SPAWN_HEIGHT = 1.75  # body centre above the ground's top at every reset
PARTS = 9
HINGES = 12
_S = 1.0 / np.sqrt(2.0)
#: outward leg directions, Unity axes
LEG_DIRECTIONS = np.array([[-_S, 0.0, -_S], [-_S, 0.0, _S], [_S, 0.0, _S], [_S, 0.0, -_S]])
#: per hinge of a crawler (hip Y, hip X, knee X for legs 0..3): range low, high in degrees
HINGE_RANGES = np.array([[-HIP_Y, HIP_Y], list(HIP_X), list(KNEE_X)] * 4)
#: the part (1..8) each hinge belongs to
HINGE_PARTS = np.array([1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8])


@dataclass(frozen=True)
class CrawlerSite:
    """Where one crawler starts: its body centre, Unity axes."""

    position: tuple[float, float, float]


def _fmt(v: np.ndarray) -> str:
    return " ".join(f"{x:.6g}" for x in v)


def crawler_xml(index: int, site: CrawlerSite) -> str:
    """The MuJoCo bodies, joints and geoms of crawler ``index`` (names end in ``_<index>``)."""
    drop = np.array([0.0, 0.0, -LEG_DROP])
    legs = []
    for k, u_unity in enumerate(LEG_DIRECTIONS):
        u = to_mujoco(u_unity)
        x_axis = np.cross([0.0, 0.0, 1.0], u)  # positive angle turns u downward
        upper_centre = LEG[1] * u + drop
        lower_centre = FORELEG[1] * u + drop
        upper_half = 0.5 * LEG[2] - LEG_RADIUS
        lower_half = 0.5 * FORELEG[2] - LEG_RADIUS
        legs.append(
            f'<body name="leg{k}_{index}" pos="{_fmt(upper_centre)}">'
            f'<joint name="hipY{k}_{index}" axis="0 0 -1" pos="{_fmt((LEG[0] - LEG[1]) * u)}" '
            f'range="{-HIP_Y} {HIP_Y}"/>'
            f'<joint name="hipX{k}_{index}" axis="{_fmt(x_axis)}" pos="{_fmt((LEG[0] - LEG[1]) * u)}" '
            f'range="{HIP_X[0]} {HIP_X[1]}"/>'
            f'<geom name="leg{k}_{index}" type="capsule" size="{LEG_RADIUS}" '
            f'fromto="{_fmt(-upper_half * u)} {_fmt(upper_half * u)}" mass="{LEG_MASS}"/>'
            f'<body name="foreleg{k}_{index}" pos="{_fmt(lower_centre - upper_centre)}">'
            f'<joint name="knee{k}_{index}" axis="{_fmt(x_axis)}" pos="{_fmt((FORELEG[0] - FORELEG[1]) * u)}" '
            f'range="{KNEE_X[0]} {KNEE_X[1]}"/>'
            f'<geom name="foreleg{k}_{index}" type="capsule" size="{LEG_RADIUS}" '
            f'fromto="{_fmt(-lower_half * u)} {_fmt(lower_half * u)}" mass="{FORELEG_MASS}"/>'
            "</body></body>"
        )
    return (
        f'<body name="body_{index}" pos="{_fmt(to_mujoco(np.array(site.position)))}">'
        f'<freejoint name="root_{index}"/>'
        f'<geom name="body_{index}" type="sphere" size="{BODY_RADIUS}" mass="{BODY_MASS}"/>'
        + "".join(legs)
        + "</body>"
    )


def actuators_xml(index: int) -> str:
    """The 12 position actuators of crawler ``index``, in hinge order (the world sets their force
    caps to 0 after loading: the original's prefab has no drive until the first action)."""
    names = [f"{j}{k}_{index}" for k in range(4) for j in ("hipY", "hipX", "knee")]
    return "".join(
        f'<position joint="{n}" kp="{SPRING}" forcelimited="true" forcerange="-1 1"/>' for n in names
    )


def model_options() -> str:
    """Options shared by the Crawler scenes: implicit velocity terms, 0.6 friction, a contact margin."""
    return (
        f'<option timestep="{TIMESTEP / SUBSTEPS:.8g}" integrator="implicitfast" gravity="0 0 -9.81"/>'
        '<compiler angle="degree"/>'
        '<default><geom friction="0.6 0.005 0.0001" margin="0.01" gap="0.01" solref="0.02 1"/>'
        '<joint limited="true" damping="0"/></default>'
    )
