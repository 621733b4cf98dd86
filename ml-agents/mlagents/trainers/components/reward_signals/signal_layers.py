"""Pieces the learned reward signals (curiosity, GAIL) build their networks from."""

from __future__ import annotations

from mlagents.trainers.encoders import EncoderType, VisualEncoder
from mlagents.trainers.layers import Initializer


def signal_visual_encoders(
    vis_obs_shapes: list[tuple[int, int, int]], encoding_size: int, init: Initializer, prefix: str
) -> list[VisualEncoder]:
    """One simple one-layer visual encoder per camera, to ``encoding_size`` features, named
    ``<prefix>_stream_<i>_visual_obs_encoder``."""
    return [
        VisualEncoder(
            h,
            w,
            c,
            encoding_size,
            1,
            EncoderType.SIMPLE,
            init,
            name=f"{prefix}_stream_{i}_visual_obs_encoder",
        )
        for i, (h, w, c) in enumerate(vis_obs_shapes)
    ]


def action_width(act_size: list[int], is_continuous: bool) -> int:
    """Floats per action as the signals see it: the continuous vector, or the one-hot branches."""
    return act_size[0] if is_continuous else sum(act_size)
