"""The Walker's body on MuJoCo: a 16-part humanoid with 26 driven hinges.

Positions and directions are given as (F, U, L) = (forward, up, left) relative to the hips at
spawn, which are Unity's (x, y, z) for a walker facing +x; MuJoCo axes are (F, L, U). Each of the
original's ConfigurableJoints becomes up to three hinges about its joint axes X, Y, Z (an axis
with no range is left out); the order is Y, Z, X. A hand has no joint: it is welded to its lower
arm. Drives: position actuators with spring 10000 N m/rad capped at (s + 1) / 2 x 25000 N m, and
joint damping scaled by the strength fraction (capped at 1): the damper 50 N m s/rad plus the
damping PhysX's implicit drive solve adds at its step (spring x 0.01333 s), without which these
under-damped drives make the simulation diverge under random actions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .vector3 import to_mujoco

TIMESTEP = 0.01333
SUBSTEPS = 8
SPRING = 10000.0
DAMPER = 50.0
MAX_FORCE = 25000.0
#: the prefab's drive before the first action: damper 100, force cap 25000 (spring as above)
INITIAL_DAMPER = 100.0
FEET_CLEARANCE = 0.544  # feet bottoms above the floor at spawn

F = np.array([1.0, 0.0, 0.0])
U = np.array([0.0, 1.0, 0.0])
L = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class Part:
    """One body part. ``shape``: ("capsule", radius, total length, axis), ("sphere", radius) or
    ("box", (F, U, L) size). ``limits``: degrees, (X low, X high, Y, Z) with 0 for no range."""

    name: str
    parent: str
    shape: tuple
    centre: tuple[float, float, float]
    mass: float
    anchor: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    limits: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    penalized: bool = True
    #: the collider's centre when it is not the transform origin (``centre``)
    collider: tuple[float, float, float] | None = None

    @property
    def frame(self) -> np.ndarray:
        """Origin of the MuJoCo body: the transform origin, the hips' at (0, 0, 0)."""
        return np.zeros(3) if not self.parent else np.array(self.centre)


def _side(sign: float) -> list[Part]:
    s = "L" if sign > 0 else "R"
    leg_axes = (L, -F, -U)
    foot_axes = (U, L, F)
    thigh_l = 0.37 if sign > 0 else -0.377
    return [
        Part(
            f"thigh{s}",
            "hips",
            ("capsule", 0.2889, 1.0248, U),
            (0.0, -0.807, thigh_l),
            14.0,
            (0.0, -0.124, thigh_l),
            leg_axes,
            (-90.0, 60.0, 40.0, 0.0),
        ),
        Part(
            f"shin{s}",
            f"thigh{s}",
            ("capsule", 0.1955, 0.7316, U),
            (0.0, -1.876, sign * 0.37),
            7.0,
            (0.0, -1.267, sign * 0.37),
            leg_axes,
            (0.0, 120.0, 0.0, 0.0),
            collider=(0.0, -1.937, sign * 0.37),
        ),
        Part(
            f"foot{s}",
            f"shin{s}",
            ("box", (0.7862, 0.1362, 0.3985)),
            (0.213, -2.475, sign * 0.37),
            5.0,
            (-0.023, -2.475, sign * 0.37),
            foot_axes,
            (-20.0, 20.0, 20.0, 20.0),
            penalized=False,
        ),
    ]


def _arm(sign: float) -> list[Part]:
    s = "L" if sign > 0 else "R"
    arm_axes = (-U, F, L) if sign > 0 else (U, F, -L)
    return [
        Part(
            f"arm{s}",
            "chest",
            ("capsule", 0.2676, 0.9532, L),
            (-0.001, 1.501, sign * 1.286),
            1.5,
            (-0.001, 1.501, sign * 0.81),
            arm_axes,
            (-60.0, 120.0, 100.0, 0.0),
        ),
        Part(
            f"forearm{s}",
            f"arm{s}",
            ("capsule", 0.2314, 0.8327, L),
            (0.001, 1.501, sign * 2.3),
            1.0,
            (0.001, 1.501, sign * 1.745),
            arm_axes,
            (0.0, 160.0, 0.0, 0.0),
        ),
        Part(f"hand{s}", f"forearm{s}", ("sphere", 0.25), (0.0, 1.501, sign * 3.0), 0.5),
    ]


_TORSO_AXES = (-L, -F, U)


def _torso(name: str, parent: str, radius: float, length: float, height: float, mass: float) -> Part:
    """A segment of the torso above the hips (chest, spine): a capsule along L ``height`` above
    the hips, jointed to ``parent`` at its own centre, with the torso's axes and limits."""
    centre = (0.0, height, 0.0)
    return Part(
        name,
        parent,
        ("capsule", radius, length, L),
        centre,
        mass,
        centre,
        _TORSO_AXES,
        (-20.0, 20.0, 20.0, 15.0),
    )


#: every part in the observation order
PARTS: list[Part] = [
    Part("hips", "", ("capsule", 0.2199, 1.2841, L), (0.0, 0.0, 0.0), 15.0, collider=(0.0, 0.078, 0.0)),
    _torso("chest", "spine", 0.3841, 1.5096, 1.501, 8.0),
    _torso("spine", "hips", 0.2151, 1.0861, 0.696, 10.0),
    Part(
        "head",
        "chest",
        ("sphere", 0.6507),
        (0.0, 2.874, 0.0),
        3.0,
        (0.0, 2.028, 0.0),
        _TORSO_AXES,
        (-30.0, 10.0, 20.0, 0.0),
    ),
    *_side(1.0),
    *_side(-1.0),
    *_arm(1.0),
    *_arm(-1.0),
]
PART_INDEX = {p.name: i for i, p in enumerate(PARTS)}
#: parts whose drive target and strength are observed, in observation order
OBSERVED_DRIVES = [
    "chest",
    "spine",
    "thighL",
    "shinL",
    "thighR",
    "shinR",
    "armL",
    "forearmL",
    "armR",
    "forearmR",
]
#: action index -> (part, axis 0/1/2 = X/Y/Z) for the 26 targets; strengths after
TARGET_ACTIONS: list[tuple[str, int]] = [
    ("chest", 0), ("chest", 1), ("chest", 2), ("spine", 0), ("spine", 1), ("spine", 2),
    ("thighL", 0), ("thighL", 1), ("thighR", 0), ("thighR", 1), ("shinL", 0), ("shinR", 0),
    ("footR", 0), ("footR", 1), ("footR", 2), ("footL", 0), ("footL", 1), ("footL", 2),
    ("armL", 0), ("armL", 1), ("armR", 0), ("armR", 1), ("forearmL", 0), ("forearmR", 0),
    ("head", 0), ("head", 1),
]  # fmt: skip
STRENGTH_ACTIONS = [
    "chest", "spine", "head", "thighL", "shinL", "footL", "thighR", "shinR", "footR",
    "armL", "forearmL", "armR", "forearmR",
]  # fmt: skip


def axis_range(part: Part, axis: int) -> tuple[float, float]:
    """Range in degrees of ``part``'s joint axis 0/1/2 (X asymmetric, Y and Z symmetric)."""
    x_low, x_high, y, z = part.limits
    return ((x_low, x_high), (-y, y), (-z, z))[axis]


def hinges() -> list[tuple[str, int]]:
    """Every hinge of a walker as (part, axis) in MuJoCo order (parts depth first, axes Y, Z, X)."""
    out = []
    for part in tree_order():
        for axis in (1, 2, 0):
            low, high = axis_range(part, axis)
            if part.axes is not None and high > low:
                out.append((part.name, axis))
    return out


def tree_order() -> list[Part]:
    """Parts in MuJoCo's depth-first body order."""
    order: list[Part] = []

    def visit(name: str) -> None:
        for p in PARTS:
            if p.parent == name:
                order.append(p)
                visit(p.name)

    order.append(PARTS[0])
    visit("hips")
    return order


def _fmt(v: np.ndarray) -> str:
    return " ".join(f"{x:.6g}" for x in v)


def _geom(part: Part, index: int) -> str:
    kind = part.shape[0]
    offset = np.zeros(3) if part.collider is None else to_mujoco(np.array(part.collider) - part.frame)
    name = f'name="{part.name}_{index}"'
    if kind == "sphere":
        return f'<geom {name} pos="{_fmt(offset)}" type="sphere" size="{part.shape[1]}" mass="{part.mass}"/>'
    if kind == "box":
        size = to_mujoco(np.array(part.shape[1])) / 2
        return f'<geom {name} pos="{_fmt(offset)}" type="box" size="{_fmt(size)}" mass="{part.mass}"/>'
    radius, length, axis = part.shape[1], part.shape[2], to_mujoco(part.shape[3])
    half = max(length / 2 - radius, 1e-4)
    ends = f"{_fmt(offset - half * axis)} {_fmt(offset + half * axis)}"
    return f'<geom {name} type="capsule" size="{radius}" fromto="{ends}" mass="{part.mass}"/>'


def walker_xml(index: int, hips: np.ndarray) -> str:
    """Bodies of walker ``index`` with its hips at ``hips`` (Unity axes). Body frames sit at the
    part centres, unrotated."""

    def body(part: Part, parent_frame: np.ndarray) -> str:
        centre = part.frame
        pos = to_mujoco(hips) if not part.parent else to_mujoco(centre - parent_frame)
        inner = ""
        if not part.parent:
            inner += f'<freejoint name="root_{index}"/>'
        elif part.axes is not None:
            anchor = to_mujoco(np.array(part.anchor) - centre)
            for axis in (1, 2, 0):
                low, high = axis_range(part, axis)
                if high > low:
                    inner += (
                        f'<joint name="{part.name}{"XYZ"[axis]}_{index}" axis="{_fmt(to_mujoco(part.axes[axis]))}" '
                        f'pos="{_fmt(anchor)}" range="{low} {high}"/>'
                    )
        inner += _geom(part, index)
        for child in PARTS:
            if child.parent == part.name:
                inner += body(child, centre)
        return f'<body name="{part.name}_{index}" pos="{_fmt(pos)}">{inner}</body>'

    return body(PARTS[0], np.zeros(3))


def actuators_xml(index: int) -> str:
    return "".join(
        f'<position joint="{part}{"XYZ"[axis]}_{index}" kp="{SPRING}" forcelimited="true" '
        f'forcerange="{-MAX_FORCE} {MAX_FORCE}"/>'
        for part, axis in hinges()
    )
