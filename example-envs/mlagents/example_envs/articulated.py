"""Pieces the articulated MuJoCo examples (Crawler, Walker) share: which agents' joint drives an
action changes, the parts' centre-of-mass velocities, and which parts touched the ground during the
substeps of one physics step."""

from __future__ import annotations

import mujoco
import numpy as np

from .vector3 import cross3


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
