"""PNG encoding of visual observations (what a Unity build sends for each camera).

The encoder writes the PNG itself: the signature, an ``IHDR`` chunk (8-bit RGB, no interlace),
one ``IDAT`` chunk with the rows (each with filter type 0, "none") compressed by zlib, and
``IEND``. The example scenes are drawn in flat colours, which zlib compresses as well without
PNG's row filters as with them; choosing a filter per row (what image libraries do) costs
several times the compression itself, and a build encodes every camera of every deciding agent
at every decision.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from PIL import Image

# zlib level 1: images are small and sent every decision, so speed beats size here.
COMPRESS_LEVEL = 1

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# IHDR's fields after width and height: bit depth 8, colour type 2 (RGB), deflate, filters of
# method 0, no interlace.
_RGB8 = bytes((8, 2, 0, 0, 0))


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


_IEND = _chunk(b"IEND", b"")


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of one RGB image.

    :param image: uint8 ``(H, W, 3)``, row 0 = top of the picture.
    :raises ValueError: for another shape or dtype.
    """
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"A visual observation must be uint8 (H, W, 3); got {image.dtype} {image.shape}.")
    height, width, _ = image.shape
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # column 0: each row's filter type
    rows[:, 1:] = image.reshape(height, 3 * width)
    header = struct.pack(">II", width, height) + _RGB8
    return b"".join(
        (
            _SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), COMPRESS_LEVEL)),
            _IEND,
        )
    )


def decode_png(data: bytes) -> np.ndarray:
    """The uint8 ``(H, W, 3)`` image stored in PNG bytes (inverse of :func:`encode_png`)."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)
