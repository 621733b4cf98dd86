"""Running exported models on the build side (Unity's inference engine, in numpy).

* ``nn_file.py``: reading a Barracuda ``.nn`` file (format version 16) into :class:`NNModel`.
* ``engine.py``: executing its layers (:class:`Engine`), on one BLAS thread (``blas_threads.py``).
* ``policy.py``: a model acting for a brain (:class:`ModelPolicy`): the checks against the brain's
  spaces, memories per agent and the sampling of actions.

Nothing here imports TensorFlow or the trainers: a build runs a model with numpy alone.
"""

from .engine import Engine, UnsupportedLayerError
from .nn_file import (
    SUPPORTED_VERSION,
    ModelFormatError,
    NNLayer,
    NNMemory,
    NNModel,
    NNTensor,
    parse_nn,
    read_nn,
)
from .policy import MODEL_API_VERSION, ModelMismatchError, ModelPolicy, check_model, load_model_policy

__all__ = [
    "Engine",
    "MODEL_API_VERSION",
    "ModelFormatError",
    "ModelMismatchError",
    "ModelPolicy",
    "NNLayer",
    "NNMemory",
    "NNModel",
    "NNTensor",
    "SUPPORTED_VERSION",
    "UnsupportedLayerError",
    "check_model",
    "load_model_policy",
    "parse_nn",
    "read_nn",
]
