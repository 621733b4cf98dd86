"""The Barracuda ``.nn`` writer: :mod:`.nn_format` (the file format) and :mod:`.convert` (a
network's weights as a Barracuda layer graph)."""

from __future__ import annotations

from mlagents.trainers.export.barracuda import nn_format
from mlagents.trainers.export.barracuda.convert import convert_model
from mlagents.trainers.export.network import NetworkWeights

__all__ = ["convert_model", "write_nn"]


def write_nn(weights: NetworkWeights, path: str) -> None:
    """Write ``weights`` to ``path`` as a Barracuda model (format version 16).

    :raises OSError: the file cannot be written.
    """
    nn_format.write(convert_model(weights), path)
