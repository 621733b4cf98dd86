"""Reading the trainer configuration and creating one trainer per brain.

The trainer configuration is a YAML mapping: a ``default`` section, plus optional sections named
after brains. A brain's hyper-parameters are the ``default`` section updated (shallowly: a brain
section's ``reward_signals`` replaces the default one as a whole) with its own section; a section
may also name another section to reuse (``MyBrain: OtherBrain``). :func:`load_trainer_config` reads
and checks the whole file at once (:class:`~mlagents.trainers.settings.TrainerConfig`), before any
environment is launched.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import yaml

from mlagents.envs.brain import BrainParameters
from mlagents.envs.exception import UnityEnvironmentException
from mlagents.trainers.settings import (
    TRAINER_KINDS,
    PPOSettings,
    RLSettings,
    TrainerConfig,
    merged_section,
    parse_trainer_settings,
)

if TYPE_CHECKING:
    from mlagents.trainers.meta_curriculum import MetaCurriculum
    from mlagents.trainers.trainer import Trainer

LOGGER = logging.getLogger("mlagents.trainers")


class _ConfigLoader(yaml.SafeLoader):
    """YAML safe loader that reads ``5.0e4``, ``1e6`` or ``1e-3`` as numbers.

    PyYAML follows YAML 1.1, whose float pattern needs a dot and a signed exponent, so the shipped
    configs' ``max_steps: 5.0e4`` would load as the string "5.0e4". YAML 1.2 reads them as floats;
    so do we.
    """


_ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def load_config(trainer_config_path: str) -> dict[str, Any]:
    """Read a YAML file (trainer configuration or sampler file).

    Numbers in scientific notation (``5.0e4``) are read as floats.

    :param trainer_config_path: path of the file.
    :returns: the parsed mapping.
    :raises UnityEnvironmentException: the file does not exist or cannot be read, is not UTF-8, is
        not valid YAML, or does not hold a mapping.
    """
    try:
        with open(trainer_config_path, encoding="utf-8") as data_file:
            config = yaml.load(data_file, Loader=_ConfigLoader)
    except FileNotFoundError:
        raise UnityEnvironmentException(
            f"Parameter file could not be found at {trainer_config_path}."
        ) from None
    except IsADirectoryError:
        raise UnityEnvironmentException(
            f"Parameter file could not be found at {trainer_config_path}: it is a directory, not a YAML file."
        ) from None
    except OSError as error:
        raise UnityEnvironmentException(
            f"Parameter file {trainer_config_path} could not be read: {error.strerror}."
        ) from None
    except UnicodeDecodeError:
        raise UnityEnvironmentException(
            f"There was an error decoding Trainer Config from this path : {trainer_config_path}"
        ) from None
    except yaml.YAMLError as error:
        where = ""
        mark = getattr(error, "problem_mark", None)
        if mark is not None:
            where = f" (line {mark.line + 1}, column {mark.column + 1})"
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise UnityEnvironmentException(
            f"The file {trainer_config_path} is not valid YAML{where}: {problem}."
        ) from None
    if not isinstance(config, dict):
        raise UnityEnvironmentException(
            f"The file {trainer_config_path} must hold a mapping of section names to settings "
            f"(e.g. a 'default:' section), but it holds {type(config).__name__ if config is not None else 'nothing'}."
        )
    return config


def load_trainer_config(trainer_config_path: str) -> TrainerConfig:
    """Read the trainer configuration file and check every section of it.

    :raises UnityEnvironmentException: the file cannot be read (see :func:`load_config`), a
        section has no or an unknown ``trainer`` type, or sections refer to each other wrongly.
    :raises UnityTrainerException, UnityPolicyException: a hyper-parameter is missing or invalid.
    """
    return TrainerConfig.from_dict(load_config(trainer_config_path), trainer_config_path)


def initialize_trainers(
    trainer_config: Mapping[str, Any] | TrainerConfig,
    external_brains: Mapping[str, BrainParameters],
    summaries_dir: str,
    run_id: str,
    model_path: str,
    keep_checkpoints: int,
    train_model: bool,
    load_model: bool,
    seed: int,
    meta_curriculum: MetaCurriculum | None = None,
    multi_gpu: bool = False,
) -> dict[str, Trainer]:
    """Create the trainer of every external brain.

    Each brain's settings (its section merged with ``default``) get
    ``summary_path = {summaries_dir}/{run_id}_{B}``, ``model_path = {model_path}/{B}`` and
    ``keep_checkpoints``; their ``trainer`` type picks the class
    (:data:`~mlagents.trainers.settings.TRAINER_KINDS`: ``ppo``, ``sac``, ``offline_bc``, ``online_bc``).

    :param trainer_config: the checked configuration (:func:`load_trainer_config`) or the parsed
        YAML mapping (:func:`load_config`), whose sections of these brains are checked here.
    :param external_brains: brain name -> parameters, as reported by the environment.
    :param summaries_dir: folder of the TensorBoard summaries.
    :param run_id: the run identifier (``--run-id``).
    :param model_path: folder of this run's models (``models/<run-id>-<n>``).
    :param keep_checkpoints: checkpoints to keep per brain.
    :param train_model: train (True) or only run the policies.
    :param load_model: restore each brain's policy from its checkpoint.
    :param seed: the run's random seed.
    :param meta_curriculum: the run's curricula; a PPO brain with a curriculum keeps that many
        episode returns (``min_lesson_length``) in its reward buffer.
    :param multi_gpu: use the multi-GPU PPO policy.
    :returns: brain name -> trainer, in the order of ``external_brains``.
    :raises UnityEnvironmentException: a brain has no configuration, no ``trainer`` key or an unknown
        trainer type.
    :raises UnityTrainerException: a required hyper-parameter is missing or invalid.
    """
    trainers: dict[str, Trainer] = {}
    for brain_name, brain in external_brains.items():
        if isinstance(trainer_config, TrainerConfig):
            brain_settings = trainer_config.for_brain(brain_name)
        else:
            brain_settings = parse_trainer_settings(merged_section(trainer_config, brain_name), brain_name)
        settings = brain_settings.with_run_paths(
            summary_path=f"{summaries_dir}/{run_id}_{brain_name}",
            model_path=f"{model_path}/{brain_name}",
            keep_checkpoints=keep_checkpoints,
        )
        if load_model and not settings.load:
            # The hyper-parameters the trainer prints then say the policy is restored, as it is.
            settings = dataclasses.replace(settings, load=True)
        trainer_class = TRAINER_KINDS[settings.trainer].load_class()
        if isinstance(settings, RLSettings):
            reward_buff_cap = 1
            if meta_curriculum is not None and brain_name in meta_curriculum.brains_to_curriculums:
                reward_buff_cap = meta_curriculum.brains_to_curriculums[brain_name].min_lesson_length
            # --multi-gpu splits PPO's update; SAC's small updates run on one device.
            gpu_option = (multi_gpu,) if isinstance(settings, PPOSettings) else ()
            trainers[brain_name] = trainer_class(
                brain, reward_buff_cap, settings, train_model, load_model, seed, run_id, *gpu_option
            )
        else:
            trainers[brain_name] = trainer_class(brain, settings, train_model, load_model, seed, run_id)
    return trainers
