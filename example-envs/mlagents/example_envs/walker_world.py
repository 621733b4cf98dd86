"""Every walker of the scene in one MuJoCo model: state in Unity axes, drives, masses, contacts.

Arrays are per walker ``(n, ...)``; parts follow :data:`.walker_body.PARTS` (observation order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .articulated import ArticulatedWorld, com_velocities
from .vector3 import to_unity
from .walker_body import (
    DAMPER,
    INITIAL_DAMPER,
    MAX_FORCE,
    PART_INDEX,
    PARTS,
    SPRING,
    STRENGTH_ACTIONS,
    SUBSTEPS,
    TARGET_ACTIONS,
    TIMESTEP,
    actuators_xml,
    axis_range,
    hinges,
    walker_xml,
)

NUM_PARTS = len(PARTS)
#: the damper plus the damping PhysX's implicit drive adds at its 0.01333 s step (spring x step)
DRIVE_DAMPING = DAMPER + SPRING * TIMESTEP
HINGE_LIST = hinges()
NUM_HINGES = len(HINGE_LIST)
#: for each of the 26 target actions, the hinge it sets
_TARGET_HINGE = np.array([HINGE_LIST.index(a) for a in TARGET_ACTIONS])
_HINGE_RANGES = np.array([axis_range(PARTS[PART_INDEX[p]], a) for p, a in HINGE_LIST])
_HINGE_PART = np.array([PART_INDEX[p] for p, _ in HINGE_LIST])
_STRENGTH_PART = np.array([PART_INDEX[p] for p in STRENGTH_ACTIONS])


class WalkerWorld(ArticulatedWorld):
    """``hips``: spawn positions of the walkers' hips ``(n, 3)``, Unity axes; ``floor_top``: the
    floor's height."""

    def __init__(self, hips: Sequence[np.ndarray], floor_top: float) -> None:
        n = len(hips)
        xml = (
            '<mujoco model="Walker">'
            f'<option timestep="{TIMESTEP / SUBSTEPS:.8g}" integrator="implicitfast" gravity="0 0 -9.81"/>'
            '<compiler angle="degree"/>'
            '<default><geom friction="0.6 0.005 0.0001" margin="0.01" gap="0.01"/>'
            '<joint limited="true"/></default><worldbody>'
            f'<geom name="ground" type="plane" size="0 0 1" pos="0 0 {floor_top}"/>'
            + "".join(walker_xml(i, h) for i, h in enumerate(hips))
            + "</worldbody><actuator>"
            + "".join(actuators_xml(i) for i in range(n))
            + "</actuator></mujoco>"
        )
        part_names = [[f"{p.name}_{i}" for p in PARTS] for i in range(n)]
        super().__init__(xml, part_names, len(TARGET_ACTIONS) + len(STRENGTH_ACTIONS), SUBSTEPS)
        m = self.model
        nq, nv = 7 + NUM_HINGES, 6 + NUM_HINGES
        self._qpos = self.data.qpos.reshape(n, nq)
        self._qvel = self.data.qvel.reshape(n, nv)
        self._ctrl = self.data.ctrl.reshape(n, NUM_HINGES)
        self._force = m.actuator_forcerange.reshape(n, NUM_HINGES, 2)
        self._damping = m.dof_damping.reshape(n, nv)[:, 6:]
        self._damping[:] = INITIAL_DAMPER
        self._mass0 = m.body_mass.copy()
        self._inertia0 = m.body_inertia.copy()
        self._update_frames()

    # ------------------------------------------------------------ state, Unity axes
    def positions(self) -> np.ndarray:
        """Part transform origins ``(n, 16, 3)``."""
        return to_unity(self.data.xpos[self.parts])

    def hips_axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The hips' right, up and forward ``(n, 3)`` each (local x = right = -L at spawn)."""
        xmat = self.data.xmat[self.parts[:, 0]].reshape(self.n, 3, 3)
        return -to_unity(xmat[:, :, 1]), to_unity(xmat[:, :, 2]), to_unity(xmat[:, :, 0])

    def part_positions(self, parts: list[int]) -> np.ndarray:
        """The transform origins of the parts ``parts`` (indices into PARTS) ``(n, len(parts), 3)``."""
        return to_unity(self.data.xpos[self.parts[:, parts]])

    def hips_forward(self) -> np.ndarray:
        """The hips' forward ``(n, 3)`` (the local x axis, read in Unity order x, z, y)."""
        return self.data.xmat[self.parts[:, 0]][:, [0, 6, 3]]

    def velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """Angular velocities (pseudo-vectors: sign flipped by the axis swap) and centre-of-mass
        velocities ``(n, 16, 3)`` each."""
        omega, linear = com_velocities(self.data, self.parts, self._tree_roots)
        return -to_unity(omega), to_unity(linear)

    def part_velocities(self, parts: list[int]) -> np.ndarray:
        """The centre-of-mass velocities of the parts ``parts`` ``(n, len(parts), 3)`` (those
        rows of :meth:`velocities`)."""
        return to_unity(com_velocities(self.data, self.parts[:, parts], self._tree_roots[:, parts])[1])

    # ------------------------------------------------------------ changes
    def set_drives(self, agents: np.ndarray, actions: np.ndarray) -> None:
        """Targets from actions 0..25 (each mapped from [-1, 1] to its axis range, clamped) and
        strengths from 26..38 (force cap (s + 1) / 2 x 25000, a negative cap acting as 0).
        Walkers whose actions are the ones already applied are skipped (the scene sets the held
        action again in every physics step, and the result would be the same)."""
        agents, actions = self._applied.new(agents, actions)
        if agents.size == 0:
            return
        a = actions.astype(np.float64)
        k = agents.size
        t = np.clip((a[:, :26] + 1.0) * 0.5, 0.0, 1.0)
        low, high = _HINGE_RANGES[_TARGET_HINGE, 0], _HINGE_RANGES[_TARGET_HINGE, 1]
        ctrl = self._ctrl[agents]
        ctrl[:, _TARGET_HINGE] = np.radians(low + (high - low) * t)
        self._ctrl[agents] = ctrl
        norm = self.norm_targets[agents]
        for j, (part, axis) in enumerate(TARGET_ACTIONS):
            norm[:, PART_INDEX[part], axis] = t[:, j]
        self.norm_targets[agents] = norm
        part_strength = np.zeros((k, NUM_PARTS))
        part_strength[:, _STRENGTH_PART] = (a[:, 26:39] + 1.0) * 0.5
        strengths = self.strengths[agents]
        strengths[:, _STRENGTH_PART] = part_strength[:, _STRENGTH_PART]
        self.strengths[agents] = strengths
        cap = np.maximum(part_strength[:, _HINGE_PART], 0.0) * MAX_FORCE
        force = self._force[agents]
        force[..., 0], force[..., 1] = -cap, cap
        self._force[agents] = force
        self._damping[agents] = DRIVE_DAMPING * np.clip(part_strength[:, _HINGE_PART], 0.0, 1.0)

    def set_masses(self, agents: np.ndarray, masses: dict[str, float]) -> None:
        """Set the mass of the named parts (inertia scaled with it, as Unity's rigidbody does)."""
        for name, mass in masses.items():
            bodies = self.parts[agents, PART_INDEX[name]]
            ratio = mass / self._mass0[bodies]
            self.model.body_mass[bodies] = mass
            self.model.body_inertia[bodies] = self._inertia0[bodies] * ratio[:, None]
        # (the dynamics read masses and inertias at every step; nothing derived needs refreshing)

    def reset_bodies(self, agents: np.ndarray) -> None:
        """Teleport the walkers of ``agents`` back to their spawn pose at rest, contact flags cleared."""
        self._qpos[agents] = self.qpos0.reshape(self.n, -1)[agents]
        self._qvel[agents] = 0.0
        self.touching_ground[agents] = False
        self._update_frames()

    def step(self) -> np.ndarray:
        """One physics step; returns which parts started touching the ground ``(n, 16)``."""
        return self._step_ground()[1]
