"""The ONNX writer: a network's weights as an ONNX model (``<brain>.onnx``), which onnxruntime,
Unity's later Sentis/Barracuda importers and other runtimes load. :mod:`.graph` builds the graph
and documents its inputs and outputs.

The ``onnx`` package is an optional extra of ml-agents (``pip install -e "./ml-agents[onnx]"``); it is
imported only when a file is written, and :class:`OnnxUnavailable` says it is missing.
"""

from __future__ import annotations

from mlagents.trainers.export.network import NetworkWeights
from mlagents.trainers.export.onnx.graph import ONNX_OPSET, build_onnx_model

__all__ = ["ONNX_OPSET", "OnnxUnavailable", "build_onnx_model", "write_onnx"]


class OnnxUnavailable(ImportError):
    """The ``onnx`` package is not installed (the .onnx file cannot be written)."""


def write_onnx(weights: NetworkWeights, path: str) -> None:
    """Write ``weights`` to ``path`` as an ONNX model (opset :data:`ONNX_OPSET`), checked by
    ``onnx.checker``.

    :raises OnnxUnavailable: the ``onnx`` package is not installed.
    :raises OSError: the file cannot be written.
    """
    try:
        import onnx
    except ImportError:
        raise OnnxUnavailable(
            "The ONNX export needs the onnx package: pip install -e './ml-agents[onnx]' from the repository "
            "(or pip install onnx onnxruntime)."
        ) from None
    name = path.rsplit("/", 1)[-1].removesuffix(".onnx") or "policy"
    proto = build_onnx_model(weights, onnx, name)
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
