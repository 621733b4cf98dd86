"""Model export, apart from the policy: a network's weights written in the formats an inference
engine reads.

A model implements :class:`ExportableModel` (``export_weights() -> NetworkWeights``, plain numpy
data); :func:`export_model` writes one file per format beside ``base_path``. The formats are the
entries of :data:`WRITERS`, one subpackage each with a writer ``(NetworkWeights, path) -> None``:
``barracuda/`` writes the ``.nn`` file Unity ML-Agents 0.9 runs, ``onnx/`` the ``.onnx`` file
(when the optional ``onnx`` package is installed; without it the ``.onnx`` file is skipped with
one log line).

This package imports neither TensorFlow nor the trainers (only numpy), so every trainer and
policy can import it at module level.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence

from mlagents.trainers.export.barracuda import write_nn
from mlagents.trainers.export.network import ExportableModel, NetworkWeights
from mlagents.trainers.export.onnx import OnnxUnavailable, write_onnx

__all__ = [
    "DEFAULT_FORMATS",
    "WRITERS",
    "ExportableModel",
    "NetworkWeights",
    "OnnxUnavailable",
    "export_model",
]

Writer = Callable[[NetworkWeights, str], None]

#: File extension -> writer of that format.
WRITERS: Mapping[str, Writer] = {".nn": write_nn, ".onnx": write_onnx}

#: What :func:`export_model` writes unless told otherwise.
DEFAULT_FORMATS: tuple[str, ...] = (".nn", ".onnx")

logger = logging.getLogger("mlagents.trainers")
_skipped_logged: set[str] = set()


def export_model(
    model: ExportableModel, base_path: str, formats: Sequence[str] = DEFAULT_FORMATS
) -> list[str]:
    """Write ``model``'s current network to ``base_path + extension`` for each of ``formats``
    (creating the folder); returns the written paths. A format whose optional package is missing
    (ONNX without ``onnx``) is skipped; that is logged once per process.

    :raises ValueError: a format has no writer.
    :raises OSError: a file cannot be written.
    """
    unknown = [extension for extension in formats if extension not in WRITERS]
    if unknown:
        raise ValueError(f"No model writer for {unknown}; known formats: {sorted(WRITERS)}")
    weights = model.export_weights()
    os.makedirs(os.path.dirname(os.path.abspath(base_path)), exist_ok=True)
    paths = []
    for extension in formats:
        path = base_path + extension
        try:
            WRITERS[extension](weights, path)
        except OnnxUnavailable as missing:
            if extension not in _skipped_logged:
                _skipped_logged.add(extension)
                logger.info("Skipped the %s file: %s", extension, missing)
            continue
        paths.append(path)
    return paths
