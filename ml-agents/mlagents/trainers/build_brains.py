"""The brains a run will train, known before any environment starts.

For an example build (``example-envs/builds/<Name>.x86_64``, a link to the ``unity-build-launcher``
script) the brains are known without starting it: :func:`mlagents.example_envs.describe_build`
reads them from the example catalogue, with the brain options of ``$MLAGENTS_BUILD_ARGS``
(:func:`example_build_brains`). A demonstration file tells the brain it was recorded with
(:func:`demonstration_brain`). Together they let the checks of settings that name files run before
launch.
"""

from __future__ import annotations

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.exception import UnityTrainerException

__all__ = ["demonstration_brain", "example_build_brains"]


def example_build_brains(env_path: str | None) -> dict[str, tuple[BrainParameters, bool]] | None:
    """The brains Python will see from the example build at ``env_path``: name -> (parameters,
    external), read from the example catalogue without starting the build; None when ``env_path`` is
    not an example build, the examples are not installed, or the build would refuse its options
    (the build itself reports that when it starts)."""
    if env_path is None:
        return None
    try:
        from mlagents.example_envs import describe_build

        description = describe_build(env_path)
    except ImportError:
        return None
    if description is None:
        return None
    return {
        name: (BrainParameters.from_proto(brain.parameters), brain.external)
        for name, brain in description.brains.items()
    }


def demonstration_brain(demo_path: str) -> BrainParameters:
    """The brain parameters a demonstration (a ``.demo`` file, or the last of a folder's, as the
    loader takes them) was recorded with.

    :raises UnityTrainerException: no readable demonstration at ``demo_path``.
    """
    from mlagents.trainers.demo_loader import DemonstrationError, load_demonstration

    try:
        brain, _, _ = load_demonstration(demo_path)
    except DemonstrationError as error:
        raise UnityTrainerException(str(error)) from None
    return brain
