"""Small 3-vector helpers for the MuJoCo examples (cheaper than numpy's generic versions on the
few rows a physics step handles)."""

from __future__ import annotations

import numpy as np


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross(a, b)`` over a last axis of length 3, without its generic axis handling: the
    same products and differences in the same order, so the same bits."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
