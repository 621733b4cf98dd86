"""PNG encoding of visual observations (what a Unity build sends for each camera)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

# zlib level 1: images are small and sent every decision, so speed beats size here.
COMPRESS_LEVEL = 1


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of one RGB image.

    :param image: uint8 ``(H, W, 3)``, row 0 = top of the picture.
    :raises ValueError: for another shape or dtype.
    """
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"A visual observation must be uint8 (H, W, 3); got {image.dtype} {image.shape}.")
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buffer, format="PNG", compress_level=COMPRESS_LEVEL)
    return buffer.getvalue()


def decode_png(data: bytes) -> np.ndarray:
    """The uint8 ``(H, W, 3)`` image stored in PNG bytes (inverse of :func:`encode_png`)."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)
