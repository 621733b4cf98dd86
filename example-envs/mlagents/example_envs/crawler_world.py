"""Every crawler of a scene in one MuJoCo model: state in Unity axes, drives, contacts, resets.

Arrays are per crawler ``(n, ...)``; parts are ordered body, leg0, foreleg0, leg1, ..., foreleg3.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from .articulated import ArticulatedWorld, com_velocities
from .crawler_body import (
    DAMPER,
    HINGE_PARTS,
    HINGE_RANGES,
    HINGES,
    MAX_FORCE,
    PARTS,
    SUBSTEPS,
    CrawlerSite,
    actuators_xml,
    crawler_xml,
    model_options,
)
from .vector3 import to_mujoco, to_unity

RAY_LENGTH = 10.0
_DOWN = np.array([0.0, 0.0, -1.0])


class CrawlerWorld(ArticulatedWorld):
    """``sites``: the crawlers' spawn points; ``ground_top``: height of the ground's top (Unity y);
    ``extra_xml``: more world geoms/bodies (walls, targets); the geom named ``ground`` is the
    ground, bodies named ``target_<i>`` are targets (free boxes)."""

    def __init__(self, sites: Sequence[CrawlerSite], ground_xml: str, extra_xml: str = "") -> None:
        n = len(sites)
        xml = (
            '<mujoco model="Crawler">'
            + model_options()
            + "<worldbody>"
            + ground_xml
            + "".join(crawler_xml(i, s) for i, s in enumerate(sites))
            + extra_xml
            + "</worldbody><actuator>"
            + "".join(actuators_xml(i) for i in range(n))
            + "</actuator></mujoco>"
        )
        super().__init__(xml, [_part_names(i) for i in range(n)], 20, SUBSTEPS)
        m = self.model
        # crawler state is contiguous: a free joint (7 qpos / 6 qvel) then 12 hinges each
        self._qpos = self.data.qpos[: 19 * n].reshape(n, 19)
        self._qvel = self.data.qvel[: 18 * n].reshape(n, 18)
        self._ctrl = self.data.ctrl.reshape(n, HINGES)
        self._force = self.model.actuator_forcerange.reshape(n, HINGES, 2)
        self._force[:] = 0.0
        first_hinge = 6
        self._damping = self.model.dof_damping[: 18 * n].reshape(n, 18)[:, first_hinge:]
        # geom -> target crawler, -1 elsewhere
        self.targets = np.array(
            [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"target_{i}") for i in range(n)]
        )
        self._target_geom = np.full(m.ngeom, -1)
        if (self.targets >= 0).all():
            for i, body in enumerate(self.targets):
                self._target_geom[m.geom_bodyid == body] = i
        # targets that cannot collide (CrawlerStatic's floating boxes) need no contact check
        target_geoms = self._target_geom >= 0
        self._targets_collide = bool((m.geom_contype[target_geoms] | m.geom_conaffinity[target_geoms]).any())
        if (self.targets >= 0).all() and m.body_jntnum[self.targets[0]] > 0:
            first = m.jnt_qposadr[m.body_jntadr[self.targets[0]]]
            self._target_qpos = self.data.qpos[first : first + 7 * n].reshape(n, 7)
            first_v = m.jnt_dofadr[m.body_jntadr[self.targets[0]]]
            self._target_qvel = self.data.qvel[first_v : first_v + 6 * n].reshape(n, 6)
        self.touching_target = np.zeros((n, PARTS), dtype=bool)
        self._bodies = self.parts[:, 0]
        self._body_roots = self._tree_roots[:, 0]
        self._update_frames()

    # ------------------------------------------------------------ state, Unity axes
    def positions(self) -> np.ndarray:
        """Part origins (the capsule/sphere centres) ``(n, 9, 3)``."""
        return to_unity(self.data.xpos[self.parts])

    def rotations(self) -> np.ndarray:
        """Part rotation matrices ``(n, 9, 3, 3)``, MuJoCo axes (columns = local axes)."""
        return self.data.xmat[self.parts].reshape(self.n, PARTS, 3, 3)

    def body_forward(self) -> np.ndarray:
        """The body's forward direction ``(n, 3)``, Unity axes (the local x axis: the first
        column of the rotation matrix, read in Unity order x, z, y)."""
        return self.data.xmat[self._bodies][:, [0, 6, 3]]

    def body_axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The body's right, up and forward directions ``(n, 3)`` each, Unity axes."""
        xmat = self.data.xmat[self.parts[:, 0]].reshape(self.n, 3, 3)
        forward = to_unity(xmat[:, :, 0])
        left = to_unity(xmat[:, :, 1])
        up = to_unity(xmat[:, :, 2])
        return -left, up, forward

    def velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """Angular velocities and centre-of-mass velocities of the parts ``(n, 9, 3)`` each, Unity
        axes (the angular velocity, a pseudo-vector, changes sign under the axis swap)."""
        omega, linear = com_velocities(self.data, self.parts, self._tree_roots)
        return -to_unity(omega), to_unity(linear)

    def body_com_velocities(self) -> np.ndarray:
        """The body sphere's velocity ``(n, 3)``, Unity axes (the body rows of :meth:`velocities`)."""
        return to_unity(com_velocities(self.data, self._bodies, self._body_roots)[1])

    def target_positions(self) -> np.ndarray:
        """Target box centres ``(n, 3)``, Unity axes."""
        return to_unity(self.data.xpos[self.targets])

    def ground_distances(self) -> np.ndarray:
        """Downward ray from each body centre (the body sphere ignored) to the first geom, capped
        at 10 (the original's raycast)."""
        out = np.full(self.n, RAY_LENGTH)
        hit = np.zeros(1, dtype=np.int32)
        for i in range(self.n):
            body = int(self.parts[i, 0])
            d = mujoco.mj_ray(self.model, self.data, self.data.xpos[body], _DOWN, None, 1, body, hit)
            if 0.0 <= d < RAY_LENGTH:
                out[i] = d
        return out

    # ------------------------------------------------------------ changes
    def set_drives(self, agents: np.ndarray, actions: np.ndarray) -> None:
        """The original's JointDriveController from 20 actions per crawler: target rotations
        (12, each mapped from [-1, 1] to its joint range, clamped) and strengths (8, one per leg
        part: force cap (s + 1) / 2 x 10000, not clamped above; a negative cap acts as 0).
        Crawlers whose actions are the ones already applied are skipped (the scene sets the
        held action again in every physics step, and the result would be the same)."""
        agents, actions = self._applied.new(agents, actions)
        if agents.size == 0:
            return
        a = actions.astype(np.float64)
        k = agents.size
        per_hinge = np.empty((k, HINGES))
        for leg in range(4):
            per_hinge[:, 3 * leg] = a[:, 2 * leg + 1]  # hip Y
            per_hinge[:, 3 * leg + 1] = a[:, 2 * leg]  # hip X
            per_hinge[:, 3 * leg + 2] = a[:, 8 + leg]  # knee X
        t = np.clip((per_hinge + 1.0) * 0.5, 0.0, 1.0)
        low, high = HINGE_RANGES[:, 0], HINGE_RANGES[:, 1]
        self._ctrl[agents] = np.radians(low + (high - low) * t)
        norm = self.norm_targets[agents]
        for leg in range(4):
            norm[:, 1 + 2 * leg, 0] = t[:, 3 * leg + 1]
            norm[:, 1 + 2 * leg, 1] = t[:, 3 * leg]
            norm[:, 2 + 2 * leg, 0] = t[:, 3 * leg + 2]
        self.norm_targets[agents] = norm
        strength = (a[:, 12:20] + 1.0) * 0.5  # legs 0..3 then forelegs 0..3
        part_strength = np.empty((k, PARTS))
        part_strength[:, 0] = 0.0
        part_strength[:, 1::2] = strength[:, 0:4]
        part_strength[:, 2::2] = strength[:, 4:8]
        self.strengths[agents, 1:] = part_strength[:, 1:]
        cap = np.maximum(part_strength[:, HINGE_PARTS], 0.0) * MAX_FORCE
        force = self._force[agents]
        force[..., 0] = -cap
        force[..., 1] = cap
        self._force[agents] = force
        self._damping[agents] = DAMPER * np.clip(part_strength[:, HINGE_PARTS], 0.0, 1.0)

    def reset_bodies(self, agents: np.ndarray) -> None:
        """Teleport the crawlers of ``agents`` back to their spawn pose, at rest; clear their
        contact flags (drive targets and strengths stay)."""
        self._qpos[agents] = self.qpos0[: 19 * self.n].reshape(self.n, 19)[agents]
        self._qvel[agents] = 0.0
        self.touching_ground[agents] = False
        self.touching_target[agents] = False
        self._update_frames()

    def place_target(self, agent: int, position: np.ndarray) -> None:
        """Teleport crawler ``agent``'s target box to ``position`` (Unity axes), upright, at rest."""
        self._target_qpos[agent] = np.concatenate([to_mujoco(position), [1.0, 0.0, 0.0, 0.0]])
        self._target_qvel[agent] = 0.0
        mujoco.mj_kinematics(self.model, self.data)

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        """One physics step. Returns which parts started touching the ground and which touch a
        target, ``(n, 9)`` bool each (contacts seen in any substep count)."""
        pairs, started = self._step_ground()
        target = np.zeros((self.n, PARTS), dtype=bool)
        if pairs is not None:
            self._collect_target_contacts(pairs, target)
        self.touching_target = target
        return started, target

    def _collect_target_contacts(self, geoms: np.ndarray, target: np.ndarray) -> None:
        """Mark the parts in the contact pairs ``geoms`` ``(m, 2)`` (of all substeps) that touch
        their own crawler's target."""
        if not self._targets_collide:
            return
        g1, g2 = geoms[:, 0], geoms[:, 1]
        for a, b in ((g1, g2), (g2, g1)):
            owner = self._target_geom[a]
            agent = self._geom_agent[b]
            ok = (owner >= 0) & (agent == owner)
            target[agent[ok], self._geom_part[b[ok]]] = True


def _part_names(i: int) -> list[str]:
    names = [f"body_{i}"]
    for k in range(4):
        names += [f"leg{k}_{i}", f"foreleg{k}_{i}"]
    return names
