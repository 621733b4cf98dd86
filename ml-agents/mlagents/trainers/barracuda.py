"""The v0.9 import path of the Barracuda format; it lives in :mod:`mlagents.trainers.export.barracuda.nn_format`."""

from mlagents.trainers.export.barracuda.nn_format import (
    BARRACUDA_VERSION,
    Activation,
    Layer,
    LayerType,
    Model,
    Tensor,
    write,
)

__all__ = ["BARRACUDA_VERSION", "LayerType", "Activation", "Tensor", "Layer", "Model", "write"]
