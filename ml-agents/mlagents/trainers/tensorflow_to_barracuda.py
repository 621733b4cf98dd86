"""The v0.9 import path of the ``.nn`` exporter; it lives in :mod:`mlagents.trainers.export`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlagents.trainers.export import export_model
from mlagents.trainers.export.barracuda import convert_model

if TYPE_CHECKING:
    from mlagents.trainers.tf_policy import TFPolicy

__all__ = ["convert_model", "export_policy"]

_EXTENSION = ".nn"


def export_policy(policy: TFPolicy, target_file: str) -> str:
    """Write the network of ``policy`` (a TFPolicy) to ``target_file``, a ``.nn`` path; returns it.

    :raises ValueError: ``target_file`` does not end with ``.nn``.
    :raises OSError: the file cannot be written.
    """
    if not target_file.endswith(_EXTENSION):
        raise ValueError(f"A Barracuda model file ends with {_EXTENSION}, not {target_file!r}")
    return export_model(policy.model, target_file[: -len(_EXTENSION)], (_EXTENSION,))[0]
