"""The ``inference`` brain type: a brain of the build acts from an exported ``.nn`` model.

``--brain-type BRAIN=inference:PATH`` (or its short form ``--model BRAIN=PATH``) on a build's
command line. The model is read and checked against the brain when the command line is read, so
that a missing file or a model of another brain stops the build at once with one line.
"""

from __future__ import annotations

from ..controller import BrainSetupError
from ..scene import Scene
from ..specs import BrainSpec
from .nn_file import ModelFormatError
from .policy import ModelMismatchError, ModelPolicy, load_model_policy

__all__ = ["INFERENCE", "InferenceSetupError", "inference_check", "inference_factory"]

#: The brain type's name.
INFERENCE = "inference"


class InferenceSetupError(BrainSetupError):
    """The model of an inference brain cannot be used (one-line message)."""


def _load(brain: BrainSpec, argument: str | None, seed: int) -> ModelPolicy:
    if not argument:
        raise InferenceSetupError(
            f"Brain '{brain.name}': the inference brain type needs the model file, "
            f"--brain-type {brain.name}=inference:PATH or --model {brain.name}=PATH."
        )
    try:
        return load_model_policy(argument, brain, seed=seed)
    except (OSError, ModelFormatError, ModelMismatchError) as error:
        raise InferenceSetupError(str(error)) from None


def inference_check(scene: type[Scene], brain: BrainSpec, argument: str | None) -> None:
    """Read the model and check it against ``brain`` (before the build starts)."""
    _load(brain, argument, 0)


def inference_factory(scene: Scene, brain: BrainSpec, argument: str | None) -> ModelPolicy:
    """The model policy of ``brain``, its sampling seeded from the scene's seed."""
    return _load(brain, argument, scene.academy.seed)
