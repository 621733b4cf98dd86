"""RayPerception3D (the sphere-cast sensor of Unity ML-Agents 0.9), shared by Hallway, PushBlock,
WallJump (and later FoodCollector, Pyramids, Soccer).

INTERFACE CONTRACT (implementation owned by the Hallway/PushBlock work; do not change
the signatures below without updating every user):

    world = CastWorld()                              # the static + moving colliders of a scene
    world.add_boxes(centers, half_extents, yaws, tags, groups)   # oriented boxes (yaw about +y, degrees)
    world.add_spheres(centers, radii, tags, groups)
    world.update_boxes(first_index, centers, yaws)   # move boxes (e.g. blocks, agents) each step
    world.update_spheres(first_index, centers)

    sensor = RayPerception(ray_distance, angles_deg, detectable_tags, start_offset=0.0, end_offset=0.0)
    obs = sensor.perceive(world, origins, yaws, groups, exclude=None)
        origins: float (k, 3) agent positions; yaws: float (k,) agent yaw in degrees
        (Unity convention: yaw 0 looks along +z, positive yaw turns toward +x);
        groups: int (k,) training-area id of each agent: a ray only sees colliders of its own
        group or of group -1 (shared); exclude: optional int (k,) collider index of the
        agent's own collider (overlaps at the cast start are ignored anyway, as in Unity).
        returns float32 (k, len(angles) * (len(tags) + 2)), laid out ray by ray as
        Unity lays them out (one-hot of the hit tag, "nothing hit" flag, distance / ray_distance).
    Tags are strings; a collider whose tag is not in detectable_tags is still hit
    (and then yields all zeros for that ray).

Details of the implementation (additions to the contract, none changes it):

* ``add_boxes`` / ``add_spheres`` return the index of the first collider they added
  (``int``); boxes and spheres are numbered separately, in the order they were added.
  ``update_boxes(first_index, ...)`` moves the boxes ``first_index .. first_index + n - 1``.
  ``exclude`` holds *box* indices (an agent's own collider is a box; ``-1`` = none).
* ``centers`` / ``half_extents`` are float ``(n, 3)`` in metres, ``yaws`` float ``(n,)``
  degrees, ``radii`` float ``(n,)`` metres, ``tags`` one string per collider (or a single
  string for all; ``None`` or ``""`` = untagged), ``groups`` int ``(n,)`` (or a single int).
* ``set_box_half_extents(first_index, half_extents)`` resizes boxes (PushBlock's
  ``block_scale``, WallJump's wall height); ``set_sphere_radii`` likewise.
* The cast is Unity's ``Physics.SphereCast`` with radius 0.5: the sphere swept from the
  start point along the normalised direction up to ``ray_distance``. The swept sphere
  meets an oriented box exactly where the ray meets the box inflated by the radius with
  **rounded** edges and corners (the Minkowski sum): three face-inflated boxes, twelve
  edge cylinders and eight corner spheres. No approximation is made there.
* A collider the sphere already overlaps at its start (closest distance <= radius + 1e-4)
  is not reported by that ray, as in Unity; the small tolerance makes a sphere that
  rests exactly on a floor (agent centre 0.5 above the floor top) ignore that floor
  instead of reporting a grazing hit at distance 0.
* Triggers are reported like solid colliders (the project's "queries hit triggers").
* Ties (two colliders hit at the same distance) go to the lower index, boxes first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: radius of the swept sphere of RayPerception3D (metres)
CAST_RADIUS = 0.5
#: start overlaps within this distance beyond the radius count as overlaps (metres)
_OVERLAP_TOLERANCE = 1e-4

_EDGE_SIGNS = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])  # (4, 2)
_CORNER_SIGNS = np.array(
    [[sx, sy, sz] for sx in (1.0, -1.0) for sy in (1.0, -1.0) for sz in (1.0, -1.0)]
)  # (8, 3)


def yaw_rotate(vectors: np.ndarray, yaw_deg: np.ndarray) -> np.ndarray:
    """Rotate local vectors into world space by a yaw about +y (Unity convention: positive
    yaw turns local +z toward world +x).

    :param vectors: float ``(..., 3)``.
    :param yaw_deg: float, broadcastable against ``vectors[..., 0]``, degrees.
    :returns: float64 ``(..., 3)``.
    """
    theta = np.radians(yaw_deg)
    c, s = np.cos(theta), np.sin(theta)
    x, y, z = vectors[..., 0], vectors[..., 1], vectors[..., 2]
    return np.stack(np.broadcast_arrays(x * c + z * s, y, -x * s + z * c), axis=-1)


def _as_rows(values: np.ndarray | Sequence, n: int, width: int, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if width == 0:
        arr = np.broadcast_to(arr, (n,)) if arr.ndim == 0 else arr
        if arr.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    else:
        if arr.shape != (n, width):
            raise ValueError(f"{name} must have shape ({n}, {width}), got {arr.shape}")
    return np.array(arr, dtype=np.float64)


class _ColliderSet:
    """Growable arrays of one collider kind (boxes or spheres)."""

    def __init__(self, shape_width: int) -> None:
        self.centers = np.zeros((0, 3))
        self.shape = np.zeros((0, shape_width)) if shape_width else np.zeros((0,))
        self.yaws = np.zeros((0,))
        self.tags = np.zeros((0,), dtype=np.int64)
        self.groups = np.zeros((0,), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.centers)

    def append(self, centers, shape, yaws, tags, groups) -> int:
        first = len(self)
        self.centers = np.concatenate([self.centers, centers])
        self.shape = np.concatenate([self.shape, shape])
        self.yaws = np.concatenate([self.yaws, yaws])
        self.tags = np.concatenate([self.tags, tags])
        self.groups = np.concatenate([self.groups, groups])
        return first

    def check_range(self, first_index: int, n: int, kind: str) -> slice:
        if first_index < 0 or first_index + n > len(self):
            raise IndexError(
                f"{kind} {first_index}..{first_index + n - 1} do not exist (the world has {len(self)} {kind})"
            )
        return slice(first_index, first_index + n)


class CastWorld:
    """The colliders a scene's ray sensors can see: oriented boxes (yaw only) and spheres,
    each with a tag and a training-area group (``-1`` = seen from every group)."""

    def __init__(self) -> None:
        self._boxes = _ColliderSet(3)
        self._spheres = _ColliderSet(0)
        self._tag_names: list[str] = [""]  # id 0 = untagged
        self._tag_ids: dict[str, int] = {"": 0}
        self._version = 0  # bumped when colliders are added (candidate tables go stale)
        self._candidate_cache: dict[str, tuple[int, np.ndarray, np.ndarray, np.ndarray]] = {}

    # ----------------------------------------------------------------- building
    @property
    def num_boxes(self) -> int:
        return len(self._boxes)

    @property
    def num_spheres(self) -> int:
        return len(self._spheres)

    def tag_id(self, tag: str | None) -> int:
        """The integer id of ``tag`` (registered on first use; untagged = 0)."""
        tag = tag or ""
        if tag not in self._tag_ids:
            self._tag_ids[tag] = len(self._tag_names)
            self._tag_names.append(tag)
        return self._tag_ids[tag]

    def _tags_and_groups(self, tags, groups, n: int) -> tuple[np.ndarray, np.ndarray]:
        if tags is None or isinstance(tags, str):
            tags = [tags] * n
        if len(tags) != n:
            raise ValueError(f"expected {n} tags, got {len(tags)}")
        tag_ids = np.array([self.tag_id(t) for t in tags], dtype=np.int64)
        group_arr = np.asarray(groups, dtype=np.int64)
        group_arr = np.broadcast_to(group_arr, (n,)) if group_arr.ndim == 0 else group_arr
        if group_arr.shape != (n,):
            raise ValueError(f"groups must have shape ({n},), got {group_arr.shape}")
        return tag_ids, np.array(group_arr)

    def add_boxes(self, centers, half_extents, yaws, tags, groups) -> int:
        """Add ``n`` oriented boxes; returns the box index of the first one.

        :param centers: float ``(n, 3)`` world positions (m).
        :param half_extents: float ``(n, 3)`` half sizes along the box's local axes (m).
        :param yaws: float ``(n,)`` (or scalar) yaw about +y in degrees.
        :param tags: one tag per box, or one tag for all (``None``/``""`` = untagged).
        :param groups: int ``(n,)`` (or scalar) training-area id, ``-1`` = shared.
        :raises ValueError: on mismatched shapes or negative half extents.
        """
        c = np.asarray(centers, dtype=np.float64).reshape(-1, 3)
        n = len(c)
        h = _as_rows(half_extents, n, 3, "half_extents")
        if np.any(h < 0):
            raise ValueError("half_extents must be >= 0")
        y = _as_rows(yaws, n, 0, "yaws")
        t, g = self._tags_and_groups(tags, groups, n)
        self._version += 1
        return self._boxes.append(c, h, y, t, g)

    def add_spheres(self, centers, radii, tags, groups) -> int:
        """Add ``n`` spheres; returns the sphere index of the first one.

        :param centers: float ``(n, 3)`` (m). :param radii: float ``(n,)`` (or scalar) (m).
        :raises ValueError: on mismatched shapes or negative radii.
        """
        c = np.asarray(centers, dtype=np.float64).reshape(-1, 3)
        n = len(c)
        r = _as_rows(radii, n, 0, "radii")
        if np.any(r < 0):
            raise ValueError("radii must be >= 0")
        t, g = self._tags_and_groups(tags, groups, n)
        self._version += 1
        return self._spheres.append(c, r, np.zeros(n), t, g)

    # ----------------------------------------------------------------- moving
    def update_boxes(self, first_index: int, centers, yaws=None) -> None:
        """Move boxes ``first_index .. first_index + n - 1`` to ``centers`` (n, 3) with
        ``yaws`` (n,) degrees (``None`` keeps their yaw)."""
        c = np.asarray(centers, dtype=np.float64).reshape(-1, 3)
        sl = self._boxes.check_range(first_index, len(c), "boxes")
        self._boxes.centers[sl] = c
        if yaws is not None:
            self._boxes.yaws[sl] = yaws

    def update_spheres(self, first_index: int, centers) -> None:
        """Move spheres ``first_index .. first_index + n - 1`` to ``centers`` (n, 3)."""
        c = np.asarray(centers, dtype=np.float64).reshape(-1, 3)
        sl = self._spheres.check_range(first_index, len(c), "spheres")
        self._spheres.centers[sl] = c

    def set_box_half_extents(self, first_index: int, half_extents) -> None:
        """Resize boxes ``first_index ..`` to ``half_extents`` (n, 3) metres."""
        h = np.asarray(half_extents, dtype=np.float64).reshape(-1, 3)
        sl = self._boxes.check_range(first_index, len(h), "boxes")
        self._boxes.shape[sl] = h

    def set_sphere_radii(self, first_index: int, radii) -> None:
        """Resize spheres ``first_index ..`` to ``radii`` (n,) metres."""
        r = np.atleast_1d(np.asarray(radii, dtype=np.float64))
        sl = self._spheres.check_range(first_index, len(r), "spheres")
        self._spheres.shape[sl] = r

    def box_centers(self, first_index: int, n: int) -> np.ndarray:
        """A copy of the centres (n, 3) of boxes ``first_index ..``."""
        return self._boxes.centers[self._boxes.check_range(first_index, n, "boxes")].copy()

    # ----------------------------------------------------------------- queries
    def candidates(self, kind: str, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the colliders of ``kind`` ("boxes"/"spheres") visible from each agent
        group: int ``(k, C)`` padded with 0, and a bool ``(k, C)`` validity mask."""
        colliders = self._boxes if kind == "boxes" else self._spheres
        cached = self._candidate_cache.get(kind)
        if cached is None or cached[0] != self._version:
            own = np.unique(colliders.groups[colliders.groups >= 0])
            shared = np.flatnonzero(colliders.groups < 0)
            rows = [np.concatenate([np.flatnonzero(colliders.groups == g), shared]) for g in own]
            rows.append(shared)  # agents of groups without own colliders see the shared ones
            width = max(len(r) for r in rows)
            table = np.zeros((len(rows), width), dtype=np.int64)
            valid = np.zeros((len(rows), width), dtype=bool)
            for i, r in enumerate(rows):
                table[i, : len(r)] = np.sort(r)
                valid[i, : len(r)] = True
            cached = (self._version, own, table, valid)
            self._candidate_cache[kind] = cached
        _, own, table, valid = cached
        row = np.full(len(groups), len(own))  # default: the shared-only row
        if len(own):
            pos = np.minimum(np.searchsorted(own, groups), len(own) - 1)
            row = np.where(own[pos] == groups, pos, row)
        return table[row], valid[row]


# --------------------------------------------------------------------- geometry
def _slab_entry(o: np.ndarray, inv_d: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Entry distance of rays ``o + t d`` (``inv_d`` = 1/d, inf for 0) into axis-aligned
    boxes of half size ``half`` centred at the origin; inf on a miss. Shapes (..., 3)."""
    with np.errstate(invalid="ignore"):
        t1 = (-half - o) * inv_d
        t2 = (half - o) * inv_d
    # fmin/fmax skip the NaN of 0 * inf (ray parallel to and on a slab plane)
    t_near = np.fmax.reduce(np.fmin(t1, t2), axis=-1)
    t_far = np.fmin.reduce(np.fmax(t1, t2), axis=-1)
    hit = (t_near <= t_far) & (t_near >= 0.0)
    return np.where(hit, t_near, np.inf)


def _sphere_entry(oc: np.ndarray, d: np.ndarray, radius: np.ndarray | float) -> np.ndarray:
    """Entry distance of unit-direction rays into spheres; ``oc`` = origin - centre
    (..., 3), ``d`` (..., 3) unit; inf on a miss or when the origin is inside."""
    b = np.einsum("...i,...i->...", oc, d)
    c = np.einsum("...i,...i->...", oc, oc) - radius * radius
    disc = b * b - c
    with np.errstate(invalid="ignore"):
        t = -b - np.sqrt(disc)
    return np.where((disc >= 0.0) & (t >= 0.0), t, np.inf)


def _rounded_box_entry(o: np.ndarray, d: np.ndarray, half: np.ndarray, r: float) -> np.ndarray:
    """Entry distance of rays (``(m, 3)`` origins outside, unit directions) into the
    Minkowski sum of boxes ``half`` ``(m, 3)`` and a sphere of radius ``r``: three
    face-inflated boxes, twelve edge cylinders and eight corner spheres; inf on a miss."""
    with np.errstate(divide="ignore"):
        inv_d = 1.0 / d
    best = np.full(o.shape[:-1], np.inf)
    eye = np.eye(3)
    for axis in range(3):  # boxes inflated across one pair of faces
        best = np.minimum(best, _slab_entry(o, inv_d, half + r * eye[axis]))

    for axis in range(3):  # edge cylinders parallel to ``axis``
        b, c = [i for i in range(3) if i != axis]
        ob = o[..., b, None] - _EDGE_SIGNS[:, 0] * half[..., b, None]  # (..., 4)
        oc = o[..., c, None] - _EDGE_SIGNS[:, 1] * half[..., c, None]
        db, dc = d[..., b, None], d[..., c, None]
        qa = db * db + dc * dc
        qb = ob * db + oc * dc
        qc = ob * ob + oc * oc - r * r
        disc = qb * qb - qa * qc
        with np.errstate(invalid="ignore", divide="ignore"):
            t = (-qb - np.sqrt(disc)) / qa
            along = np.abs(o[..., axis, None] + t * d[..., axis, None])
            ok = (disc >= 0.0) & (qa > 1e-12) & (t >= 0.0) & (along <= half[..., axis, None])
        best = np.minimum(best, np.where(ok, t, np.inf).min(axis=-1))

    corners = _CORNER_SIGNS * half[..., None, :]  # (..., 8, 3)
    t_corner = _sphere_entry(o[..., None, :] - corners, d[..., None, :], r)
    return np.minimum(best, t_corner.min(axis=-1))


def sphere_cast_boxes(
    o: np.ndarray, d: np.ndarray, half: np.ndarray, radius: float, max_distance: float = np.inf
) -> np.ndarray:
    """Distance a sphere of ``radius`` travels along unit ``d`` from ``o`` before touching an
    axis-aligned box of half size ``half`` centred at the origin (the box's local frame).

    Exact: the ray is intersected with the Minkowski sum of box and sphere (rounded
    edges and corners). Arrays broadcast over leading dimensions, last dimension 3.
    The box inflated by the radius (sharp edges) bounds the rounded one from outside, so
    it is tested first: a ray that misses it, or meets it beyond ``max_distance``,
    misses; a ray that enters it through a face region (at most one coordinate beyond
    the box) enters the rounded box there too. Only rays that enter near an edge or a
    corner need the edge cylinders and corner spheres.

    :returns: float ``(...)`` distance, ``inf`` when the sphere does not touch the box within
        ``max_distance`` or already overlaps it at ``o`` (Unity does not report such colliders).
    """
    o, d, half = np.broadcast_arrays(o, d, half)
    shape = o.shape[:-1]
    o, d, half = o.reshape(-1, 3), d.reshape(-1, 3), half.reshape(-1, 3)
    r = radius
    q = np.maximum(np.abs(o) - half, 0.0)
    overlapping = np.einsum("ij,ij->i", q, q) <= (r + _OVERLAP_TOLERANCE) ** 2
    with np.errstate(divide="ignore"):
        inv_d = 1.0 / d
    t = _slab_entry(o, inv_d, half + r)
    t[overlapping | (t > max_distance)] = np.inf
    # a start inside the sharp inflated box but not overlapping lies beside an edge or corner
    inside = ~overlapping & (np.abs(o) <= half + r).all(axis=1)
    candidates = np.flatnonzero(np.isfinite(t))
    if candidates.size or inside.any():
        entry = o[candidates] + t[candidates, None] * d[candidates]
        beyond = (np.abs(entry) > half[candidates] + 1e-9).sum(axis=1)
        rounded = np.union1d(candidates[beyond >= 2], np.flatnonzero(inside))
        if rounded.size:
            exact = _rounded_box_entry(o[rounded], d[rounded], half[rounded], r)
            t[rounded] = np.where(exact <= max_distance, exact, np.inf)
    return t.reshape(shape)


def sphere_cast_spheres(o: np.ndarray, d: np.ndarray, radii: np.ndarray, radius: float) -> np.ndarray:
    """Like :func:`sphere_cast_boxes` for spheres centred at the origin: ``o`` is the start
    relative to the sphere centre (..., 3), ``radii`` (...)."""
    o, d = np.broadcast_arrays(o, d)
    total = radii + radius
    overlapping = np.einsum("...i,...i->...", o, o) <= (total + _OVERLAP_TOLERANCE) ** 2
    return np.where(overlapping, np.inf, _sphere_entry(o, d, total))


# --------------------------------------------------------------------- the sensor
def _nearer_hits(
    t: np.ndarray,
    valid: np.ndarray,
    idx: np.ndarray,
    tags: np.ndarray,
    best_t: np.ndarray,
    best_tag: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per ray, the nearer of the best hit so far (``best_t``, ``best_tag`` ``(k, R)``) and the
    nearest hit among one kind of collider: ``t`` float64 ``(k, R, C)`` the distances to the
    candidate colliders ``idx`` ``(k, C)`` (those not ``valid`` ignored), ``tags`` the tag id of
    every collider of that kind."""
    t = np.where(valid[:, None, :], t, np.inf)
    j = np.argmin(t, axis=-1)  # (k, R)
    tj = np.take_along_axis(t, j[..., None], axis=-1)[..., 0]
    better = tj < best_t
    return np.where(better, tj, best_t), np.where(better, tags[np.take_along_axis(idx, j, axis=1)], best_tag)


class RayPerception:
    """RayPerception3D.Perceive for many agents at once.

    :param ray_distance: D, cast length in metres (> 0).
    :param angles_deg: ray angles in degrees, in output order (90 = ahead, 0 = right).
    :param detectable_tags: the K tags, in one-hot order.
    :param start_offset: s, the cast starts this far above the agent position.
    :param end_offset: e, the world y component of the (length-D) direction.

    Example::

        world = CastWorld()
        world.add_boxes([[0, 1, 5]], [[1, 1, 1]], 0.0, "wall", -1)
        sensor = RayPerception(10, [90], ["wall"])
        sensor.perceive(world, np.array([[0.0, 1, 0]]), np.zeros(1), np.zeros(1, int))
        # -> [[1, 0, 0.35]]  (wall, hit, travelled 3.5 m of 10)
    """

    def __init__(
        self,
        ray_distance: float,
        angles_deg: Sequence[float],
        detectable_tags: Sequence[str],
        start_offset: float = 0.0,
        end_offset: float = 0.0,
    ) -> None:
        if ray_distance <= 0:
            raise ValueError(f"ray_distance must be > 0, got {ray_distance}")
        if len(angles_deg) == 0:
            raise ValueError("RayPerception needs at least one angle")
        self.ray_distance = float(ray_distance)
        self.angles_deg = np.asarray(angles_deg, dtype=np.float64)
        self.detectable_tags = tuple(detectable_tags)
        self.start_offset = float(start_offset)
        self.end_offset = float(end_offset)
        alpha = np.radians(self.angles_deg)
        # local directions (R, 3), horizontal length D, before the y replacement
        self._local_dirs = np.stack(
            [ray_distance * np.cos(alpha), np.zeros_like(alpha), ray_distance * np.sin(alpha)], axis=-1
        )

    @property
    def observation_size(self) -> int:
        """Floats per agent: len(angles) * (len(tags) + 2)."""
        return len(self.angles_deg) * (len(self.detectable_tags) + 2)

    def directions(self, yaws: np.ndarray) -> np.ndarray:
        """Unit cast directions float64 ``(k, R, 3)`` for agent yaws ``(k,)`` in degrees."""
        world = yaw_rotate(self._local_dirs[None, :, :], np.asarray(yaws, dtype=np.float64)[:, None])
        world[..., 1] = self.end_offset
        return world / np.linalg.norm(world, axis=-1, keepdims=True)

    def cast(
        self,
        world: CastWorld,
        origins: np.ndarray,
        yaws: np.ndarray,
        groups: np.ndarray,
        exclude: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The nearest hit of every ray: distance float64 ``(k, R)`` (inf = nothing within
        ``ray_distance``) and the world tag id int64 ``(k, R)`` of the collider hit (-1 = none)."""
        origins = np.asarray(origins, dtype=np.float64).reshape(-1, 3)
        k = len(origins)
        yaws = np.broadcast_to(np.asarray(yaws, dtype=np.float64), (k,))
        groups = np.broadcast_to(np.asarray(groups, dtype=np.int64), (k,))
        starts = origins + np.array([0.0, self.start_offset, 0.0])
        dirs = self.directions(yaws)  # (k, R, 3)
        n_rays = dirs.shape[1]
        best_t = np.full((k, n_rays), np.inf)
        best_tag = np.full((k, n_rays), -1, dtype=np.int64)

        boxes = world._boxes
        if len(boxes) and k:
            idx, valid = world.candidates("boxes", groups)  # (k, C)
            if exclude is not None:
                valid = valid & (idx != np.asarray(exclude, dtype=np.int64).reshape(k, 1))
            yaw = boxes.yaws[idx]  # (k, C)
            rel = starts[:, None, :] - boxes.centers[idx]  # (k, C, 3)
            o_local = yaw_rotate(rel, -yaw)[:, None]  # (k, 1, C, 3)
            d_local = yaw_rotate(dirs[:, :, None, :], -yaw[:, None, :])  # (k, R, C, 3)
            t = sphere_cast_boxes(o_local, d_local, boxes.shape[idx][:, None], CAST_RADIUS, self.ray_distance)
            best_t, best_tag = _nearer_hits(t, valid, idx, boxes.tags, best_t, best_tag)

        spheres = world._spheres
        if len(spheres) and k:
            idx, valid = world.candidates("spheres", groups)
            rel = starts[:, None, :] - spheres.centers[idx]  # (k, C, 3)
            t = sphere_cast_spheres(
                rel[:, None], dirs[:, :, None, :], spheres.shape[idx][:, None], CAST_RADIUS
            )
            best_t, best_tag = _nearer_hits(t, valid, idx, spheres.tags, best_t, best_tag)

        hit = best_t <= self.ray_distance
        return np.where(hit, best_t, np.inf), np.where(hit, best_tag, -1)

    def perceive(
        self,
        world: CastWorld,
        origins: np.ndarray,
        yaws: np.ndarray,
        groups: np.ndarray,
        exclude: np.ndarray | None = None,
    ) -> np.ndarray:
        """RayPerception3D.Perceive for ``k`` agents (see the module docstring).

        :returns: float32 ``(k, len(angles) * (len(tags) + 2))``.
        """
        distance, tag = self.cast(world, origins, yaws, groups, exclude)
        k, n_rays = distance.shape
        n_tags = len(self.detectable_tags)
        # world tag id -> detectable slot (first match wins, as in the C# loop), -1 = not detectable
        slot_of = np.full(len(world._tag_names) + 1, -1, dtype=np.int64)
        for i, name in reversed(list(enumerate(self.detectable_tags))):
            if name in world._tag_ids:
                slot_of[world._tag_ids[name]] = i
        out = np.zeros((k, n_rays, n_tags + 2), dtype=np.float32)
        hit = tag >= 0
        slot = np.where(hit, slot_of[tag], -1)
        detected = slot >= 0
        kk, rr = np.nonzero(detected)
        out[kk, rr, slot[detected]] = 1.0
        out[..., n_tags + 1] = np.where(detected, distance / self.ray_distance, 0.0)
        out[..., n_tags] = ~hit
        return out.reshape(k, n_rays * (n_tags + 2))
