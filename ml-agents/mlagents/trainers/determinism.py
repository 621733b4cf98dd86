"""What ``mlagents-learn --deterministic`` asks of TensorFlow: :func:`use_deterministic_ops`.

The rest of a deterministic run needs nothing global: the env managers step every worker each
round (their ``synchronous`` mode), every environment gets a seed derived from the run's seed
(:func:`mlagents.trainers.learn.worker_seed`), and every random draw of the trainers already comes
from a generator of its own, seeded from the run's seed (the policy's action sampling, each
trainer's mini-batch shuffles, the BC module's and GAIL's demonstration draws, the samplers).
"""

from __future__ import annotations

import tensorflow as tf

__all__ = ["use_deterministic_ops"]


def use_deterministic_ops() -> None:
    """Make every TensorFlow op of this process give the same result for the same inputs.

    TensorFlow otherwise lets some kernels sum in whichever order their threads finish; with
    determinism on it picks kernels that do not (or raises for an op that has none). Applies to
    the whole process, from now on; it cannot be switched off again.
    """
    tf.config.experimental.enable_op_determinism()
