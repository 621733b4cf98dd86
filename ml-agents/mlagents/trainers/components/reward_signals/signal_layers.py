"""What the networks of the learned reward signals (curiosity, GAIL) share: :class:`SignalModel`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt
import tensorflow as tf

from mlagents.trainers.encoders import EncoderType, VisualEncoder
from mlagents.trainers.layers import Initializer

if TYPE_CHECKING:
    from mlagents.trainers.models import LearningModel

__all__ = ["SignalModel", "SignalShapes", "signal_initializer"]


class SignalShapes(NamedTuple):
    """What a signal's network sees of the policy: its observations and actions.

    :ivar vec_obs_size: length of the (stacked) vector observation, 0 for none.
    :ivar vis_obs_shapes: (height, width, channels) of every camera.
    :ivar act_size: continuous: [d]; discrete: the branch sizes.
    :ivar is_continuous: continuous or discrete actions.
    """

    vec_obs_size: int
    vis_obs_shapes: Sequence[tuple[int, int, int]]
    act_size: Sequence[int]
    is_continuous: bool

    @classmethod
    def of(cls, policy_model: LearningModel) -> SignalShapes:
        """The observations and actions of the policy's network ``policy_model``."""
        return cls(
            policy_model.vec_obs_size,
            policy_model.vis_obs_shapes,
            policy_model.act_size,
            policy_model.is_continuous,
        )


def signal_initializer(seed: int, stream: int) -> Initializer:
    """Initial values of a signal's own, stream ``stream`` of the policy's ``seed`` (adding the
    signal leaves the policy's weights alone)."""
    return Initializer(seed * 7919 + stream)


class SignalModel(tf.Module):
    """The inputs of a signal's network and one simple one-layer visual encoder per camera, to
    ``encoding_size`` features, named ``<prefix>_stream_<i>_visual_obs_encoder``.

    :param name: the module's name.
    :param prefix: of the visual encoders' names.
    :param shapes: the policy's observations and actions.
    :param encoding_size: width of each camera's encoding.
    :param init: initial values of the weights.
    :ivar action_width: floats per action as the network sees it: the continuous vector, or the
        one-hot branches.
    """

    def __init__(
        self,
        name: str,
        prefix: str,
        shapes: SignalShapes,
        encoding_size: int,
        init: Initializer,
    ) -> None:
        super().__init__(name=name)
        self.vec_obs_size = int(shapes.vec_obs_size)
        self.vis_obs_shapes = list(shapes.vis_obs_shapes)
        self.act_size = [int(a) for a in shapes.act_size]
        self.is_continuous = bool(shapes.is_continuous)
        self.encoding_size = int(encoding_size)
        self.action_width = self.act_size[0] if self.is_continuous else sum(self.act_size)
        self.visual_encoders = [
            VisualEncoder(
                h,
                w,
                c,
                self.encoding_size,
                1,
                EncoderType.SIMPLE,
                init,
                name=f"{prefix}_stream_{i}_visual_obs_encoder",
            )
            for i, (h, w, c) in enumerate(self.vis_obs_shapes)
        ]

    def action_spec(self) -> tf.TensorSpec:
        """The actions of n steps: continuous float32 (n, d), discrete int32 (n, n_branches)."""
        if self.is_continuous:
            return tf.TensorSpec([None, self.act_size[0]], tf.float32)
        return tf.TensorSpec([None, len(self.act_size)], tf.int32)

    def action_array(self, actions: npt.ArrayLike, n: int) -> np.ndarray:
        """The actions of n steps as :meth:`action_spec` describes them."""
        if self.is_continuous:
            return np.asarray(actions, dtype=np.float32).reshape(n, self.act_size[0])
        return np.asarray(actions).reshape(n, len(self.act_size)).astype(np.int32)

    def selected_actions(self, actions: tf.Tensor) -> tf.Tensor:
        """The actions as the network takes them, (n, action_width): continuous as given, discrete
        one-hot per branch."""
        if self.is_continuous:
            return actions
        return tf.concat([tf.one_hot(actions[:, k], size) for k, size in enumerate(self.act_size)], axis=1)
