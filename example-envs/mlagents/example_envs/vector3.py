"""Small 3-vector helpers for the MuJoCo examples (cheaper than numpy's generic versions on the
few rows a physics step handles), and the one map between Unity's and MuJoCo's axes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Unity (x, y, z) is MuJoCo (x, z, y)
_SWAP = np.array([0, 2, 1])


def to_mujoco(v: np.ndarray | Sequence[float]) -> np.ndarray:
    """Unity points or vectors ``(..., 3)`` in MuJoCo's axes: Unity (x, y, z) is MuJoCo (x, z, y).
    Swapping two axes turns Unity's left-handed frame into MuJoCo's right-handed one; the swap is
    its own inverse, so :data:`to_unity` is the same map."""
    # take() copies like the fancy index v[..., _SWAP], several times faster on a few rows
    return np.take(np.asarray(v), _SWAP, axis=-1)


#: MuJoCo points or vectors ``(..., 3)`` in Unity's axes (see :func:`to_mujoco`)
to_unity = to_mujoco


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross(a, b)`` over a last axis of length 3, without its generic axis handling: the
    same products and differences in the same order, so the same bits."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
