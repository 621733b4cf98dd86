"""Pieces the articulated MuJoCo examples (Crawler, Walker) share: the world of every agent's body
parts in one model (:class:`ArticulatedWorld`), which agents' joint drives an action changes, the
parts' centre-of-mass velocities, which parts touched the ground during the substeps of one physics
step, and noticing when MuJoCo had to reset an unstable simulation."""

from __future__ import annotations

import logging

import mujoco
import numpy as np

from .sdk.academy import Academy
from .vector3 import cross3

logger = logging.getLogger("mlagents.example_envs")

# The warnings MuJoCo gives for a state it cannot integrate (a NaN, infinite or huge position,
# velocity or acceleration). On each it resets the whole simulation: every body of the model back
# to its initial pose at rest, every control to 0; then it goes on stepping.
_INSTABILITY = (
    mujoco.mjtWarning.mjWARN_BADQPOS,
    mujoco.mjtWarning.mjWARN_BADQVEL,
    mujoco.mjtWarning.mjWARN_BADQACC,
)


def _log_mujoco_warning(message: str) -> None:
    logger.warning("MuJoCo: %s", message)


def route_mujoco_warnings() -> None:
    """Send MuJoCo's warnings to the example's log (stderr of a build) instead of its default, a
    MUJOCO_LOG.TXT file written into whatever directory the build runs in."""
    mujoco.set_mju_user_warning(_log_mujoco_warning)


def end_all_after_instability(academy: Academy, scene: str, agents: np.ndarray) -> None:
    """After MuJoCo reset an unstable simulation every body stands at its spawn pose mid-episode:
    end the episode of every agent (``agents``, all of the scene) without a reward for the step,
    so that each starts anew from a proper reset, and say so in the log."""
    logger.warning(
        "%s: MuJoCo reset the unstable simulation; every agent's episode ends at this step.", scene
    )
    academy.done(agents)


class AppliedActions:
    """The action each agent's joint drives were last set from. A scene sets the held action again
    in every physics step; only agents whose action differs need their drives recomputed."""

    def __init__(self, agents: int, size: int) -> None:
        # NaN never equals an action: every agent's first action counts as new
        self._rows = np.full((agents, size), np.nan, dtype=np.float32)

    def new(self, agents: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The agents among ``agents`` whose ``actions`` rows differ from the ones last applied,
        with those rows (both possibly empty); recorded as applied."""
        changed = (self._rows[agents] != actions).any(1)
        if not changed.all():
            agents, actions = agents[changed], actions[changed]
        self._rows[agents] = actions
        return agents, actions

    def forget(self) -> None:
        """Count every agent's next action as new (after the controls were lost to a reset)."""
        self._rows[:] = np.nan


class InstabilityWatch:
    """Tells whether MuJoCo reset ``data`` as unstable since the last question; after such a reset
    the world's ``applied`` actions are forgotten (the reset zeroed the controls they had set).
    MuJoCo's warnings go to the example's log (see :func:`route_mujoco_warnings`)."""

    def __init__(self, data: mujoco.MjData, applied: AppliedActions) -> None:
        route_mujoco_warnings()
        self._data = data
        self._applied = applied
        self._count = self._total()

    def _total(self) -> int:
        return sum(int(self._data.warning[w].number) for w in _INSTABILITY)

    def reset_since_last(self) -> bool:
        count = self._total()
        reset, self._count = count != self._count, count
        if reset:
            self._applied.forget()
        return reset


def com_velocities(
    data: mujoco.MjData, bodies: np.ndarray, roots: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World angular velocities and centre-of-mass velocities of ``bodies`` (any shape of body
    ids; ``roots`` their kinematic tree roots, same shape), MuJoCo axes. MuJoCo's ``cvel`` gives the
    linear velocity at the tree's centre of mass; it is moved to each body's own."""
    cvel = data.cvel[bodies]
    omega = cvel[..., :3]
    offset = data.xipos[bodies] - data.subtree_com[roots]
    return omega, cvel[..., 3:] + cross3(omega, offset)


def geom_owners(model: mujoco.MjModel, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which agent's part each geom of ``model`` belongs to; ``parts`` int ``(agents, parts)`` holds
    the body id of part j of agent i at ``[i, j]``. Returns int ``(ngeom,)`` arrays: the agent, the
    part, and the flat (agent x part) index that :func:`mark_ground_contacts` scatters into; each
    -1 for a geom of no agent."""
    agent = np.full(model.ngeom, -1)
    part = np.full(model.ngeom, -1)
    for i, bodies in enumerate(parts):
        for j, body in enumerate(bodies):
            geoms = np.flatnonzero(model.geom_bodyid == body)
            agent[geoms] = i
            part[geoms] = j
    flat = np.where(agent >= 0, agent * parts.shape[1] + part, -1)
    return agent, part, flat


def step_contact_pairs(model: mujoco.MjModel, data: mujoco.MjData, substeps: int) -> np.ndarray | None:
    """Step the simulation ``substeps`` times; the geom pairs ``(m, 2)`` of the contacts of every
    substep, or None when there were none."""
    pairs = []
    for _ in range(substeps):
        mujoco.mj_step(model, data)
        ncon = data.ncon
        if ncon:
            pairs.append(data.contact.geom[:ncon].copy())
    return np.concatenate(pairs) if pairs else None


def mark_ground_contacts(pairs: np.ndarray, ground: int, geom_flat: np.ndarray, touching: np.ndarray) -> None:
    """Set ``touching`` ``(agents, parts)`` True for every part in a pair with the ``ground`` geom;
    ``geom_flat`` maps a geom to its flat (agent x part) index, -1 for geoms of no agent."""
    g1, g2 = pairs[:, 0], pairs[:, 1]
    flat = np.where(g1 == ground, geom_flat[g2], np.where(g2 == ground, geom_flat[g1], -1))
    touching.reshape(-1)[flat[flat >= 0]] = True


class ArticulatedWorld:
    """Every agent's articulated body in one MuJoCo model: what the Crawler and Walker worlds
    share. Arrays are per agent and part ``(n, parts, ...)``, parts in the observation order.

    :param xml: the model; its geom named ``ground`` is the ground.
    :param part_names: the body name of each part of each agent, ``[agent][part]``.
    :param action_size: floats in one agent's action (the drives' inputs).
    :param substeps: MuJoCo steps per physics step.

    A subclass sets its drives and state views, then calls :meth:`_update_frames`.
    """

    def __init__(self, xml: str, part_names: list[list[str]], action_size: int, substeps: int) -> None:
        self.model = m = mujoco.MjModel.from_xml_string(xml)
        self.data = mujoco.MjData(m)
        self.n = n = len(part_names)
        self.parts = np.array(
            [[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, p) for p in names] for names in part_names]
        )
        num_parts = self.parts.shape[1]
        self.ground = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "ground")
        # geom -> (agent, part) and its flat index (one scatter marks contacts), -1 elsewhere
        self._geom_agent, self._geom_part, self._geom_flat = geom_owners(m, self.parts)
        self.qpos0 = self.data.qpos.copy()
        # drive state kept for the observations (the originals keep it across resets)
        self.norm_targets = np.zeros((n, num_parts, 3), dtype=np.float32)
        self.strengths = np.zeros((n, num_parts), dtype=np.float32)
        self.touching_ground = np.zeros((n, num_parts), dtype=bool)
        self._tree_roots = m.body_rootid[self.parts]
        self._substeps = substeps
        self._applied = AppliedActions(n, action_size)
        self._instability = InstabilityWatch(self.data, self._applied)
        #: whether MuJoCo reset the simulation as unstable during the last step (every body back at
        #: its spawn pose at rest, controls lost); the scene then ends every agent's episode
        self.unstable = False

    def set_gravity(self, gravity: float) -> None:
        self.model.opt.gravity[:] = (0.0, 0.0, -gravity)

    def _step_ground(self) -> tuple[np.ndarray | None, np.ndarray]:
        """One physics step: the contact pairs ``(m, 2)`` of all its substeps (None when there
        were none) and which parts started touching the ground, bool ``(n, parts)``."""
        ground = np.zeros(self.touching_ground.shape, dtype=bool)
        pairs = step_contact_pairs(self.model, self.data, self._substeps)
        self.unstable = self._instability.reset_since_last()
        if pairs is not None:  # contacts of every substep count
            mark_ground_contacts(pairs, self.ground, self._geom_flat, ground)
        self._update_frames()
        started = ground & ~self.touching_ground
        self.touching_ground = ground
        return pairs, started

    def _update_frames(self) -> None:
        """Poses and velocities of the current state (mj_step leaves those before its integration)."""
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)
        mujoco.mj_comVel(self.model, self.data)
