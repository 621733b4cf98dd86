"""Pyramids' ray sensor made cheap: its three sweeps are cast together, and only against the
boxes a ray can reach.

The observation is exactly that of three ``RayPerception`` sensors (one per sweep) side by side:

* :class:`SweepPerception` is one sensor whose rays have a rise each, so that the 21 rays of
  the three sweeps go through one cast (one set of array operations instead of three);
* :class:`ReachCastWorld` is a ``CastWorld`` that, while it is aimed at the casting agents,
  offers each agent only the boxes its rays can reach: within the ray length (plus the cast
  radius and the box's half diagonal) of the cast start, and not wholly behind the agent when
  every ray points ahead. Dropping boxes no ray can touch changes no hit; the kept boxes stay in
  index order, so ties still go to the lower index.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from .sdk.ray_perception import CAST_RADIUS, CastWorld, RayPerception, yaw_rotate


class SweepPerception(RayPerception):
    """Several sweeps of RayPerception3D rays (same length and tags, start at the agent's
    centre, each sweep with its own rise per ray length) as one sensor.

    :param ray_distance: the ray length of every sweep (m).
    :param sweeps: ``(angles in degrees, rise)`` per sweep, in observation order.
    :param detectable_tags: the tags, in one-hot order.
    """

    def __init__(
        self,
        ray_distance: float,
        sweeps: Sequence[tuple[Sequence[float], float]],
        detectable_tags: Sequence[str],
    ) -> None:
        angles = [angle for sweep_angles, _ in sweeps for angle in sweep_angles]
        super().__init__(ray_distance, angles, detectable_tags, 0.0, 0.0)
        self.rises = np.concatenate([np.full(len(sweep_angles), rise) for sweep_angles, rise in sweeps])
        #: whether every ray points into the agent's forward half (angles 0 to 180)
        self.all_ahead = bool(((self.angles_deg >= 0.0) & (self.angles_deg <= 180.0)).all())

    def directions(self, yaws: np.ndarray) -> np.ndarray:
        """Unit cast directions float64 ``(k, R, 3)`` for agent yaws ``(k,)``: each ray with
        the rise of its sweep."""
        world = yaw_rotate(self._local_dirs[None, :, :], np.asarray(yaws, dtype=np.float64)[:, None])
        world[..., 1] = self.rises
        return world / np.linalg.norm(world, axis=-1, keepdims=True)


class ReachCastWorld(CastWorld):
    """A ``CastWorld`` that can be aimed (:meth:`aimed`) at the agents about to cast, and then
    offers each of them only the boxes its rays can reach."""

    _aim: tuple[np.ndarray, np.ndarray | None, float] | None = None

    @contextmanager
    def aimed(self, starts: np.ndarray, forwards: np.ndarray | None, reach: float) -> Iterator[None]:
        """Within the block, box candidates are limited to what casts from ``starts`` ``(k, 3)``
        of length ``reach`` (m, without the cast radius) can touch; with ``forwards`` ``(k, 3)``
        (horizontal unit vectors) also to boxes not wholly behind the agent, which is right
        only when every ray points into the forward half."""
        self._aim = (np.asarray(starts, dtype=np.float64), forwards, float(reach))
        try:
            yield
        finally:
            self._aim = None

    def candidates(self, kind: str, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        idx, valid = super().candidates(kind, groups)
        if kind != "boxes" or self._aim is None:
            return idx, valid
        starts, forwards, reach = self._aim
        boxes = self._boxes
        half_diagonal = np.sqrt(np.einsum("ij,ij->i", boxes.shape, boxes.shape))[idx]  # (k, C)
        offset = boxes.centers[idx] - starts[:, None, :]  # (k, C, 3)
        limit = reach + CAST_RADIUS + half_diagonal
        keep = valid & (np.einsum("kci,kci->kc", offset, offset) <= limit * limit)
        if forwards is not None:
            ahead = np.einsum("kci,ki->kc", offset, forwards)
            keep &= ahead >= -(half_diagonal + CAST_RADIUS)
        order = np.argsort(~keep, axis=1, kind="stable")  # kept boxes first, in index order
        width = max(int(keep.sum(axis=1).max()), 1)
        order = order[:, :width]
        return np.take_along_axis(idx, order, axis=1), np.take_along_axis(keep, order, axis=1)
