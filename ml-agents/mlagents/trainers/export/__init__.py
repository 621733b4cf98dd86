"""Model export, apart from the policy: a network's weights written in the formats an inference
engine reads.

A model implements :class:`ExportableModel` (``export_weights() -> NetworkWeights``, plain numpy
data); :func:`export_model` writes one file per format beside ``base_path``. The formats are the
entries of :data:`WRITERS`, one subpackage each: ``barracuda/`` writes the ``.nn`` file Unity
ML-Agents 0.9 runs. Another format (ONNX) is added as a subpackage with a writer
``(NetworkWeights, path) -> None`` and an entry in :data:`WRITERS`.

This package imports neither TensorFlow nor the trainers (only numpy), so every trainer and
policy can import it at module level.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from mlagents.trainers.export.barracuda import write_nn
from mlagents.trainers.export.network import ExportableModel, NetworkWeights

__all__ = ["DEFAULT_FORMATS", "WRITERS", "ExportableModel", "NetworkWeights", "export_model"]

Writer = Callable[[NetworkWeights, str], None]

#: File extension -> writer of that format.
WRITERS: Mapping[str, Writer] = {".nn": write_nn}

#: What :func:`export_model` writes unless told otherwise.
DEFAULT_FORMATS: tuple[str, ...] = (".nn",)


def export_model(
    model: ExportableModel, base_path: str, formats: Sequence[str] = DEFAULT_FORMATS
) -> list[str]:
    """Write ``model``'s current network to ``base_path + extension`` for each of ``formats``
    (creating the folder); returns the written paths.

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
        WRITERS[extension](weights, path)
        paths.append(path)
    return paths
