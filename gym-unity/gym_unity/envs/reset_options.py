"""The reset options every wrapper takes (``UnityGymnasiumEnv.reset(options=...)``,
``UnityParallelEnv.reset(options=...)``, ``UnityVecEnv.set_options(...)``), checked by one rule.

The only option is ``"config"``: reset parameters to change, as ``UnityEnvironment.reset(config=...)``
takes them. A reset parameter the environment does not have is an error that names it and lists
those it has, as ``UnityEnvironment.reset`` treats it, raised before anything is sent to the
environment (or a build restarted for a seed). Another option key is an error too, except where
the API says that unknown options are ignored (PettingZoo: its ``parallel_api_test`` resets with
an option of its own); there it is ignored with a warning.
"""

import logging
from collections.abc import Mapping
from typing import Any

from gym_unity.envs.exception import UnityGymException
from mlagents.envs.exception import UnityEnvironmentException

logger = logging.getLogger("gym_unity")

#: Option keys the wrappers understand.
RESET_OPTIONS = ("config",)


def reset_config(
    options: Any, reset_parameters: Mapping[str, float], *, ignore_other_options: bool = False
) -> dict[str, float] | None:
    """The reset parameters to change that ``options`` asks for (None when it asks for none).

    :param options: the options given to ``reset`` (None, or a dict with the key ``"config"``).
    :param reset_parameters: the environment's reset parameters (``UnityEnvironment.reset_parameters``).
    :param ignore_other_options: keys other than ``"config"`` are ignored with a warning instead of
        raising (for an API whose callers may pass options meant for others, as PettingZoo's).
    :raises UnityGymException: ``options`` or its ``"config"`` is not a dict, or ``options`` has
        another key (the error names it) and ``ignore_other_options`` is False.
    :raises mlagents.envs.exception.UnityEnvironmentException: ``"config"`` names a parameter the
        environment does not have (the error names it and lists those it has), as
        ``UnityEnvironment.reset`` raises.
    """
    if options is None:
        return None
    if not isinstance(options, dict):
        raise UnityGymException(f"reset(options=...) takes a dict, got {type(options).__name__}.")
    unknown_options = sorted(set(options) - set(RESET_OPTIONS))
    if unknown_options:
        message = f"Unknown reset option(s) {unknown_options}; the only option is 'config' (a dict of reset parameters)."
        if not ignore_other_options:
            raise UnityGymException(message)
        logger.warning("%s They are ignored.", message)
    config = options.get("config")
    if config is None:
        return None
    if not isinstance(config, dict):
        raise UnityGymException(
            f"reset(options={{'config': ...}}) takes a dict, got {type(config).__name__}."
        )
    _check_parameter_names(config, reset_parameters)
    return config


def _check_parameter_names(config: Mapping[str, Any], reset_parameters: Mapping[str, float]) -> None:
    """:raises UnityEnvironmentException: ``config`` has a name that is not in ``reset_parameters``."""
    unknown = [name for name in config if name not in reset_parameters]
    if not unknown:
        return
    names = ", ".join(repr(name) for name in unknown)
    known = ", ".join(repr(name) for name in reset_parameters)
    what = (
        f"The parameter {names} is not a valid parameter"
        if len(unknown) == 1
        else (f"The parameters {names} are not valid parameters")
    )
    has = f"its reset parameters are {known}" if known else "it has no reset parameters"
    raise UnityEnvironmentException(f"{what} of the environment; {has}.")
