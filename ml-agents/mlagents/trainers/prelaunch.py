"""The checks of the trainer configuration that need more than the file, run before any environment
starts: :func:`check_before_launch`.

A setting that names demonstrations (the ``demo_path`` of offline BC, of PPO's ``pretraining`` and
of the ``gail`` reward signal) or another brain (online BC's ``brain_to_imitate``) can be checked
fully only against the brains the environment has. For an example build those are read from the
example catalogue without starting it (:func:`mlagents.trainers.build_brains.example_build_brains`),
so such errors show at once, one line, before anything is launched. Only the brains the build trains
are checked: a shared configuration (``config/gail_config.yaml``) may name demonstrations of brains
it does not have. For other builds only the demonstrations of a ``default`` section that is the
only section, and so every brain's, are read before launch (:func:`check_demo_paths`); the rest is
checked by the trainers once the build reported its brains, before the first step.

The rules themselves are those of :mod:`mlagents.trainers.demo_loader` (which demonstrations can be
read and fit a brain) and :meth:`~mlagents.trainers.settings.OnlineBCSettings.check_brain_to_imitate`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

from mlagents.envs.brain import BrainParameters
from mlagents.envs.exception import UnityException
from mlagents.trainers.build_brains import example_build_brains
from mlagents.trainers.demo_loader import DemonstrationError, check_demo_compatible, demonstration_brain
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.settings import OnlineBCSettings, TrainerConfig, TrainerSettings

__all__ = ["check_before_launch", "check_demo_paths", "trained_brains"]

logger = logging.getLogger("mlagents.trainers")


def trained_brains(
    config: TrainerConfig, brains: Mapping[str, tuple[BrainParameters, bool]]
) -> Iterator[tuple[str, TrainerSettings, BrainParameters]]:
    """(name, settings, parameters) of every external brain of ``brains`` (name -> (parameters,
    external)) that has usable settings; a brain without them is reported once the build started."""
    for name, (brain, external) in brains.items():
        if not external:
            continue
        try:
            settings = config.for_brain(name)
        except (UnityException, UnityTrainerException):
            continue
        yield name, settings, brain


class _Demonstrations:
    """Reads the brain of each demonstration once (a file may be named twice: pretraining and gail),
    naming the setting that names it in the errors."""

    def __init__(self, config: TrainerConfig) -> None:
        self.config = config
        self.read: dict[str, BrainParameters] = {}

    def brain(self, key: str, path: str, section: str) -> BrainParameters:
        """:raises DemonstrationError: the demonstrations at ``path`` cannot be read."""
        if path not in self.read:
            try:
                self.read[path] = demonstration_brain(path)
            except DemonstrationError as error:
                where = "the default section" if section == "default" else f"brain {section}"
                in_file = f", trainer config {self.config.path}" if self.config.path else ""
                raise type(error)(f"{error} (the {key} of {where}{in_file})") from None
        return self.read[path]


def check_demo_paths(config: TrainerConfig) -> None:
    """Check, without the brains, that the demonstrations of a ``default`` section that is the only
    section can be read. (With brain sections, the ``default`` section may be a template: the shipped
    ``offline_bc_config.yaml`` names a placeholder there.)

    :raises DemonstrationError: naming the file, why it cannot be read and the setting.
    """
    if config.default is None or config.sections:
        return
    demonstrations = _Demonstrations(config)
    for key, path in config.default.demonstrations():
        demonstrations.brain(key, path, "default")


def check_before_launch(config: TrainerConfig, env_path: str | None) -> bool:
    """Check what needs more than the configuration file before ``env_path`` is launched.

    For an example build, every brain it trains: its demonstrations can be read and fit the brain,
    and its ``brain_to_imitate`` is a brain of the build. For other builds (or ``env_path`` None),
    :func:`check_demo_paths`.

    :returns: True when ``env_path`` is an example build and was checked.
    :raises UnityTrainerException: the first problem found, with the message the trainers give when
        they find it after the start.
    """
    brains = example_build_brains(env_path)
    if brains is None:
        check_demo_paths(config)
        return False
    demonstrations = _Demonstrations(config)
    for name, settings, brain in trained_brains(config, brains):
        if isinstance(settings, OnlineBCSettings):
            settings.check_brain_to_imitate(name, brains)
        for key, path in settings.demonstrations():
            check_demo_compatible(demonstrations.brain(key, path, name), brain, path)
    logger.debug("Settings that need the brains checked against %s before it starts.", env_path)
    return True
