"""Typed settings, read and validated once: the command line and each brain's trainer configuration.

:class:`RunOptions` is the parsed ``mlagents-learn`` command line. :class:`TrainerConfig` is the
whole trainer configuration file, every section parsed into a typed settings object
(:class:`PPOSettings` for ``trainer: ppo``, :class:`OfflineBCSettings` and :class:`OnlineBCSettings` for
the behavioural-cloning trainers) with its reward signals
(:class:`RewardSignalSettings`) and optional ``pretraining`` section (:class:`PretrainingSettings`).
Numbers are cast, defaults filled in and values checked here, and only here: the trainers, policies
and reward signals take these objects and use their values as they are. Errors name the hyper-parameter,
the brain (or section) and, when known, the configuration file. Whether the files a section names
exist, and fit the brain, is checked by :mod:`mlagents.trainers.prelaunch` and by the components
that read them, not here.

YAML keys stay those of the v0.9 trainer configuration (see docs/Training-ML-Agents.md); keys a
trainer does not use are kept in ``extra`` and shown with the hyper-parameters.

The two registries at the end of this module are the only lists of what a configuration may name:
:data:`TRAINER_KINDS` (the ``trainer`` key: settings class and trainer class) and
:data:`REWARD_SIGNAL_KINDS` (the names under ``reward_signals``: settings class and signal class).
The classes that train are named by their dotted path and imported only when a brain uses them, so
that reading a configuration needs no TensorFlow.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mlagents.envs.exception import UnityEnvironmentException
from mlagents.envs.restart_policy import RestartLimits
from mlagents.trainers.exception import TrainerError, UnityPolicyException, UnityTrainerException

if TYPE_CHECKING:
    from mlagents.trainers.components.reward_signals import RewardSignal
    from mlagents.trainers.trainer import Trainer

__all__ = [
    "BCSettings",
    "CommandLineError",
    "ConfigSource",
    "CuriositySettings",
    "ExtrinsicSettings",
    "GAILSettings",
    "Kind",
    "MissingHyperParameterError",
    "MissingTrainerTypeError",
    "OfflineBCSettings",
    "OnlineBCSettings",
    "PPOSettings",
    "PolicySettings",
    "PretrainingSettings",
    "REWARD_SIGNAL_KINDS",
    "REWARD_SIGNAL_NUM_UPDATE",
    "RLSettings",
    "RewardSignalSettings",
    "SACSettings",
    "RunOptions",
    "TRAINER_KINDS",
    "TrainerConfig",
    "TrainerSettingsError",
    "TrainerSettings",
    "VIS_ENCODE_TYPES",
    "merged_section",
    "parse_trainer_settings",
]


class CommandLineError(TrainerError):
    """A command-line value is invalid (not a number, out of range, contradictory flags)."""


class TrainerSettingsError(UnityTrainerException, ValueError):
    """A hyper-parameter has a value of the wrong kind or out of range."""

    #: Reported under the name of the documented class it refines.
    report_as_parent = True


class MissingHyperParameterError(UnityTrainerException):
    """A required hyper-parameter is missing from a section."""

    #: Reported under the name of the documented class it refines.
    report_as_parent = True


class MissingTrainerTypeError(UnityEnvironmentException):
    """A section does not say which trainer to use."""

    #: Reported under the name of the documented class it refines.
    report_as_parent = True


# ---------------------------------------------------------------------------------------- command line


def _optional_str(value: Any) -> str | None:
    return None if value is None or value == "None" else str(value)


def _int_option(options: Mapping[str, Any], name: str, minimum: int | None = None) -> int:
    value = options[name]
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise CommandLineError(f"{name} must be a whole number, not {value!r}.") from None
    if minimum is not None and number < minimum:
        raise CommandLineError(f"{name} must be at least {minimum}, not {number}.")
    return number


def _restart_options(options: Mapping[str, Any]) -> dict[str, int]:
    """The restart flags (absent from option dicts built for v0.9's command line: defaults)."""
    values = {
        "--max-lifetime-restarts": ("max_lifetime_restarts", 10, -1),
        "--restarts-rate-limit-n": ("restarts_rate_limit_n", 1, -1),
        "--restarts-rate-limit-period-s": ("restarts_rate_limit_period_s", 60, 1),
    }
    return {
        name: _int_option({flag: options.get(flag, default)}, flag, minimum)
        for flag, (name, default, minimum) in values.items()
    }


#: The values of ``--env-manager``: worker processes on this machine, or Ray actors.
ENV_MANAGERS = ("subprocess", "ray")


@dataclass(frozen=True)
class RunOptions:
    """The ``mlagents-learn`` command line, every flag of v0.9.3, typed and checked.

    Build it with :meth:`from_docopt`; paths that depend on ``--docker-target-name`` and the run
    index come from :meth:`trainer_config_file`, :meth:`curriculum_dir`, :meth:`model_path` and
    :meth:`summaries_dir`.
    """

    trainer_config_path: str
    env_path: str | None = None
    curriculum_folder: str | None = None
    sampler_file_path: str | None = None
    keep_checkpoints: int = 5
    lesson: int = 0
    load_model: bool = False
    run_id: str = "ppo"
    num_runs: int = 1
    save_freq: int = 50000
    seed: int = -1
    # Beyond v0.9: the run is a function of its configuration and seed (see learn.py's --deterministic).
    deterministic: bool = False
    slow: bool = False
    train_model: bool = False
    base_port: int = 5005
    num_envs: int = 1
    docker_target_name: str | None = None
    no_graphics: bool = False
    debug: bool = False
    multi_gpu: bool = False
    env_manager: str = "subprocess"
    ray_address: str | None = None
    # Restarts of lost environment workers (beyond v0.9; -1: unlimited), see restart_limits().
    max_lifetime_restarts: int = 10
    restarts_rate_limit_n: int = 1
    restarts_rate_limit_period_s: int = 60
    video_freq: int = 0

    @classmethod
    def from_docopt(cls, options: Mapping[str, Any]) -> RunOptions:
        """Convert docopt's option dict (strings, ``"None"`` for absent values, booleans for flags).

        :raises CommandLineError: a number that is not a whole number or out of range, more than one
            run or environment without ``--env``, or ports beyond 65535.
        """
        run = cls(
            trainer_config_path=str(options["<trainer-config-path>"]),
            env_path=_optional_str(options["--env"]),
            curriculum_folder=_optional_str(options["--curriculum"]),
            sampler_file_path=_optional_str(options["--sampler"]),
            keep_checkpoints=_int_option(options, "--keep-checkpoints", 1),
            lesson=_int_option(options, "--lesson", 0),
            load_model=bool(options["--load"]),
            run_id=str(options["--run-id"]),
            num_runs=_int_option(options, "--num-runs", 1),
            save_freq=_int_option(options, "--save-freq", 1),
            seed=_int_option(options, "--seed", -1),
            deterministic=bool(options.get("--deterministic", False)),
            slow=bool(options["--slow"]),
            train_model=bool(options["--train"]),
            base_port=_int_option(options, "--base-port", 1),
            num_envs=_int_option(options, "--num-envs", 1),
            docker_target_name=_optional_str(options["--docker-target-name"]),
            no_graphics=bool(options["--no-graphics"]),
            debug=bool(options["--debug"]),
            multi_gpu=bool(options["--multi-gpu"]),
            env_manager=str(options.get("--env-manager", "subprocess")),
            ray_address=_optional_str(options.get("--ray-address")),
            **_restart_options(options),
            video_freq=_int_option({"--video-freq": options.get("--video-freq", "0")}, "--video-freq", 0),
        )
        run.check()
        return run

    def check(self) -> None:
        """Check the flag combinations (the numbers are checked when converted).

        :raises CommandLineError: naming the option and what is wrong with it.
        """
        if self.env_path is None and self.num_runs > 1:
            raise CommandLineError(
                "It is not possible to launch more than one concurrent training session when training from the editor."
            )
        if self.env_path is None and self.num_envs > 1:
            raise CommandLineError(
                "--num-envs greater than 1 needs an environment executable (--env): the Unity Editor is one instance."
            )
        if self.video_freq > 0 and self.env_path is None:
            raise CommandLineError(
                "--video-freq needs --env with an example environment (example-envs/builds/<Name>.x86_64)."
            )
        last_port = self.base_port + self.num_runs * self.num_envs - 1
        if last_port > 65535:
            raise CommandLineError(
                f"--base-port is too high: the runs would need ports up to {last_port} (max 65535)."
            )
        self._check_env_manager()

    def _check_env_manager(self) -> None:
        if self.env_manager not in ENV_MANAGERS:
            raise CommandLineError(
                f"--env-manager must be one of {', '.join(ENV_MANAGERS)}, not {self.env_manager!r}."
            )
        if self.ray_address is not None and self.env_manager != "ray":
            raise CommandLineError("--ray-address needs --env-manager=ray.")
        if self.env_manager == "ray":
            from mlagents.envs.ray_env_manager import RAY_MISSING, ray_is_installed

            if not ray_is_installed():
                raise CommandLineError(RAY_MISSING)

    def restart_limits(self) -> RestartLimits:
        """How often a lost environment worker may be restarted (per worker)."""
        return RestartLimits(
            self.max_lifetime_restarts, self.restarts_rate_limit_n, float(self.restarts_rate_limit_period_s)
        )

    @property
    def fast_simulation(self) -> bool:
        """Reset the environments in training mode (no ``--slow``)."""
        return not self.slow

    def trainer_config_file(self) -> str:
        """The trainer configuration path (inside the docker volume with ``--docker-target-name``)."""
        if self.docker_target_name is None:
            return self.trainer_config_path
        return f"/{self.docker_target_name}/{self.trainer_config_path}"

    def curriculum_dir(self) -> str | None:
        """The curriculum folder (inside the docker volume with ``--docker-target-name``), or None."""
        if self.curriculum_folder is None or self.docker_target_name is None:
            return self.curriculum_folder
        return f"/{self.docker_target_name}/{self.curriculum_folder}"

    def model_path(self, sub_id: int) -> str:
        """The models folder of run ``sub_id``: ``./models/<run-id>-<sub_id>``."""
        if self.docker_target_name is None:
            return f"./models/{self.run_id}-{sub_id}"
        return f"/{self.docker_target_name}/models/{self.run_id}-{sub_id}"

    def summaries_dir(self) -> str:
        """The TensorBoard summaries folder: ``./summaries``."""
        if self.docker_target_name is None:
            return "./summaries"
        return f"/{self.docker_target_name}/summaries"


# ---------------------------------------------------------------------------------------- where a value comes from


@dataclass(frozen=True)
class ConfigSource:
    """Where a section of hyper-parameters comes from, for error messages.

    :param section: the brain name, or ``"default"`` for the default section.
    :param path: the configuration file, when known.
    :param trainer_class: dotted name of the trainer class that reads the section (None: PPO's).
    """

    section: str
    path: str | None = None
    trainer_class: str | None = None

    @property
    def where(self) -> str:
        return "the default section" if self.section == "default" else f"brain {self.section}"

    @property
    def in_file(self) -> str:
        return f" (trainer config {self.path})" if self.path else ""

    @property
    def trainer_label(self) -> str:
        """The trainer class as Python prints it: ``<class 'module.Class'>``."""
        return f"<class '{self.trainer_class or TRAINER_KINDS['ppo'].class_path}'>"

    @property
    def trainer_name(self) -> str:
        return (self.trainer_class or TRAINER_KINDS["ppo"].class_path).rsplit(".", 1)[-1]

    def missing(self, key: str) -> MissingHyperParameterError:
        return MissingHyperParameterError(
            f"The hyper-parameter {key} could not be found for the {self.trainer_label} trainer of "
            f"{self.where}{self.in_file}."
        )

    def invalid(self, key: str, expected: str, value: Any) -> TrainerSettingsError:
        return TrainerSettingsError(
            f"The hyper-parameter {key} of {self.where} must be {expected}, not {value!r}{self.in_file}."
        )


# ---------------------------------------------------------------------------------------- casts

Cast = Callable[[Any, str, ConfigSource], Any]


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def real(minimum: float | None = None, maximum: float | None = None) -> Cast:
    """A float (YAML may give ``"5.0e4"`` as a string) within ``[minimum, maximum]``."""
    expected = "a number"
    if minimum is not None and maximum is not None:
        expected = f"a number from {minimum:g} to {maximum:g}"
    elif minimum is not None:
        expected = f"a number of at least {minimum:g}"

    def cast(value: Any, key: str, source: ConfigSource) -> float:
        number = _as_number(value)
        if (
            number is None
            or not math.isfinite(number)
            or (minimum is not None and number < minimum)
            or (maximum is not None and number > maximum)
        ):
            raise source.invalid(key, expected, value)
        return number

    return cast


def whole(minimum: int | None = None) -> Cast:
    """A whole number (``64``, ``64.0``, ``"6.4e1"``) of at least ``minimum``."""
    expected = "a whole number" if minimum is None else f"a whole number of at least {minimum}"

    def cast(value: Any, key: str, source: ConfigSource) -> int:
        number = _as_number(value)
        if number is None or not math.isfinite(number) or number != int(number):
            raise source.invalid(key, expected, value)
        if minimum is not None and number < minimum:
            raise source.invalid(key, expected, value)
        return int(number)

    return cast


def flag(value: Any, key: str, source: ConfigSource) -> bool:
    """true/false (also the strings "true"/"false", "yes"/"no", "on"/"off", "1"/"0")."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
    raise source.invalid(key, "true or false", value)


def text(value: Any, key: str, source: ConfigSource) -> str:
    """A string (numbers are accepted and written out)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise source.invalid(key, "a string", value)


def one_of(*choices: str) -> Cast:
    def cast(value: Any, key: str, source: ConfigSource) -> str:
        if value not in choices:
            raise source.invalid(key, "one of " + ", ".join(choices), value)
        return str(value)

    return cast


def _setting(cast: Cast, default: Any = dataclasses.MISSING) -> Any:
    """A dataclass field read from the YAML key of the same name with ``cast``; required without default."""
    return field(default=default, metadata={"cast": cast})


S = TypeVar("S", bound="TrainerSettings")


def _parse_fields(
    cls: type, params: Mapping[str, Any], source: ConfigSource, on_missing: Callable[[str], Exception]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(field values, extra keys) of ``cls`` read from ``params``."""
    values: dict[str, Any] = {}
    known: set[str] = set()
    for f in dataclasses.fields(cls):
        cast = f.metadata.get("cast")
        if cast is None:
            continue
        known.add(f.name)
        if f.name in params:
            values[f.name] = cast(params[f.name], f.name, source)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise on_missing(f.name)
    extra = {key: value for key, value in params.items() if key not in known}
    return values, extra


# ---------------------------------------------------------------------------------------- reward signals


@dataclass(frozen=True, kw_only=True)
class RewardSignalSettings:
    """Hyper-parameters of one reward signal (the ``extrinsic`` signal: strength and gamma).

    Signals with more hyper-parameters subclass it; every signal is registered, with its settings
    class, in :data:`REWARD_SIGNAL_KINDS`.
    """

    name: str
    strength: float = _setting(real())
    gamma: float = _setting(real(0.0, 1.0))

    @classmethod
    def from_dict(
        cls, name: str, config: Mapping[str, Any] | None, source: ConfigSource | None = None
    ) -> RewardSignalSettings:
        """Parse the section of the signal ``name`` (``reward_signals: {name: config}``).

        :raises UnityTrainerException: unknown signal ("Unknown reward signal type <name>"), a
            missing hyper-parameter, an unexpected one ("Unknown parameters given for reward signal
            <name>"), or a value of the wrong kind.
        """
        context = (
            f" (reward_signals of {source.where}{source.in_file})"
            if source is not None and source.section
            else ""
        )
        kind = REWARD_SIGNAL_KINDS.get(name)
        if kind is None:
            raise UnityTrainerException(f"Unknown reward signal type {name}{context}")
        settings_class = kind.settings_class
        if config is not None and not isinstance(config, Mapping):
            raise TrainerSettingsError(
                f"The reward signal {name} must be a mapping of hyper-parameters, not {config!r}{context}."
            )
        signal_source = source or ConfigSource("")

        def missing(key: str) -> Exception:
            return MissingHyperParameterError(
                f"The hyper-parameter {key} could not be found for {kind.class_name}{context}."
            )

        values, extra = _parse_fields(settings_class, config or {}, signal_source, missing)
        if extra:
            raise TrainerSettingsError(f"Unknown parameters given for reward signal {name}{context}")
        return settings_class(name=name, **values)

    def signal_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of the signal's constructor (every hyper-parameter but the name)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "name"}

    def to_dict(self) -> dict[str, Any]:
        return self.signal_kwargs()


@dataclass(frozen=True, kw_only=True)
class ExtrinsicSettings(RewardSignalSettings):
    """The environment's reward: ``strength`` and ``gamma``."""


@dataclass(frozen=True, kw_only=True)
class CuriositySettings(RewardSignalSettings):
    """The intrinsic curiosity module: ``encoding_size`` is required (as in 0.9), ``learning_rate``
    of its own optimizer defaults to 3e-4."""

    encoding_size: int = _setting(whole(1))
    learning_rate: float = _setting(real(0.0), 3e-4)


@dataclass(frozen=True, kw_only=True)
class GAILSettings(RewardSignalSettings):
    """Generative adversarial imitation from the demonstrations at ``demo_path`` (a ``.demo`` file
    or a folder of them), with the optional variational bottleneck ``use_vail``."""

    demo_path: str = _setting(text)
    encoding_size: int = _setting(whole(1), 64)
    learning_rate: float = _setting(real(0.0), 3e-4)
    use_actions: bool = _setting(flag, False)
    use_vail: bool = _setting(flag, False)


def parse_reward_signals(value: Any, source: ConfigSource) -> dict[str, RewardSignalSettings]:
    if value is None or (isinstance(value, Mapping) and len(value) == 0):
        raise UnityTrainerException(
            f"No reward signals were defined. At least one must be used with {source.trainer_name}"
            + (f" ({source.where}{source.in_file})." if source.path else ".")
        )
    if not isinstance(value, Mapping):
        raise source.invalid("reward_signals", "a mapping of signal names to their hyper-parameters", value)
    return {
        str(name): RewardSignalSettings.from_dict(str(name), config, source) for name, config in value.items()
    }


# ---------------------------------------------------------------------------------------- pretraining


@dataclass(frozen=True, kw_only=True)
class PretrainingSettings:
    """The ``pretraining`` section of a PPO brain: behavioural cloning from demonstrations.

    ``batch_size`` and ``num_epoch`` default to the PPO values (None here).
    """

    demo_path: str = _setting(text)
    strength: float = _setting(real(0.0))
    steps: int = _setting(whole(0))
    batch_size: int | None = _setting(whole(1), None)
    num_epoch: int | None = _setting(whole(1), None)
    samples_per_update: int = _setting(whole(0), 0)

    @classmethod
    def from_dict(cls, value: Any, source: ConfigSource) -> PretrainingSettings | None:
        if value is None or (isinstance(value, Mapping) and len(value) == 0):
            return None
        if not isinstance(value, Mapping):
            raise source.invalid("pretraining", "a mapping of hyper-parameters", value)

        def missing(key: str) -> Exception:
            return MissingHyperParameterError(
                f"The required pre-training hyper-parameter {key} was not defined for {source.where}"
                f"{source.in_file}. Please check your trainer YAML file."
            )

        values, extra = _parse_fields(cls, value, source, missing)
        if extra:
            raise TrainerSettingsError(
                f"Unknown pre-training hyper-parameters {', '.join(map(str, extra))} for {source.where}{source.in_file}."
            )
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------------------- trainers


@dataclass(frozen=True, kw_only=True)
class TrainerSettings:
    """What every trainer reads: the step budget, the summary period and where it writes.

    ``summary_path``, ``model_path`` and ``keep_checkpoints`` are set per run by
    :func:`mlagents.trainers.trainer_util.initialize_trainers`; ``load`` is an optional flag that
    restores the brain's checkpoint like ``--load``.
    """

    trainer: str = "ppo"
    max_steps: float = _setting(real(0.0))
    summary_freq: int = _setting(whole())
    summary_path: str | None = _setting(text, None)
    model_path: str | None = _setting(text, None)
    keep_checkpoints: int = _setting(whole(1), 5)
    load: bool = _setting(flag, False)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls: type[S], params: Mapping[str, Any], source: ConfigSource) -> S:
        """Parse one brain's merged hyper-parameters.

        :raises MissingHyperParameterError: a required key is missing.
        :raises TrainerSettingsError: a value of the wrong kind or out of range.
        :raises UnityTrainerException, UnityPolicyException: an inconsistent section (no reward
            signal, an invalid memory size).
        """
        if not isinstance(params, Mapping):
            raise TrainerSettingsError(f"The section of {source.where} must be a mapping{source.in_file}.")
        values, extra = _parse_fields(cls, params, source, source.missing)
        values.update(cls._parse_sections(params, source))
        extra = {
            key: value for key, value in extra.items() if key not in cls._sections() and key != "trainer"
        }
        settings = cls(trainer=str(params.get("trainer", cls.default_trainer())), extra=extra, **values)
        settings.check(source)
        return settings

    @classmethod
    def coerce(cls: type[S], params: TrainerSettings | Mapping[str, Any], source: ConfigSource) -> S:
        """``params`` if it is already of this class, else parsed with :meth:`from_dict`."""
        if isinstance(params, cls):
            return params
        if isinstance(params, TrainerSettings):
            raise TypeError(f"{cls.__name__} expected, got {type(params).__name__}")
        return cls.from_dict(params, source)

    @classmethod
    def default_trainer(cls) -> str:
        """The ``trainer`` value of this class in :data:`TRAINER_KINDS` (``ppo`` for a base class)."""
        return next((name for name, kind in TRAINER_KINDS.items() if kind.settings_class is cls), "ppo")

    @classmethod
    def _sections(cls) -> tuple[str, ...]:
        """Keys holding nested sections, parsed by :meth:`_parse_sections`."""
        return ()

    @classmethod
    def _parse_sections(cls, params: Mapping[str, Any], source: ConfigSource) -> dict[str, Any]:
        return {}

    def check(self, source: ConfigSource) -> None:
        """Checks across several values (none at this level)."""

    def demonstrations(self) -> list[tuple[str, str]]:
        """(key, path) of every demonstration the section reads: none at this level."""
        return []

    def require_paths(self, source: ConfigSource) -> None:
        """:raises MissingHyperParameterError: ``summary_path`` or ``model_path`` was not set."""
        for key in ("summary_path", "model_path"):
            if getattr(self, key) is None:
                raise source.missing(key)

    def with_run_paths(self: S, summary_path: str, model_path: str, keep_checkpoints: int) -> S:
        """A copy with the paths and checkpoint count of one run."""
        return dataclasses.replace(
            self, summary_path=summary_path, model_path=model_path, keep_checkpoints=keep_checkpoints
        )

    def to_dict(self) -> dict[str, Any]:
        """The hyper-parameters under their YAML keys (typed values; unused keys as given)."""
        result: dict[str, Any] = {"trainer": self.trainer}
        for f in dataclasses.fields(self):
            if f.name in ("trainer", "extra"):
                continue
            value = getattr(self, f.name)
            if value is None and f.name in ("summary_path", "model_path", "pretraining"):
                continue
            if isinstance(value, Mapping):
                value = {
                    key: item.to_dict() if hasattr(item, "to_dict") else item for key, item in value.items()
                }
            elif hasattr(value, "to_dict"):
                value = value.to_dict()
            result[f.name] = value
        result.update(self.extra)
        return result


@dataclass(frozen=True, kw_only=True)
class PolicySettings(TrainerSettings):
    """What a TensorFlow policy reads: the network shape, memory and learning rate."""

    batch_size: int = _setting(whole(1))
    hidden_units: int = _setting(whole(1))
    learning_rate: float = _setting(real(0.0))
    memory_size: int = _setting(whole(0))
    num_layers: int = _setting(whole())
    sequence_length: int = _setting(whole(1))
    use_recurrent: bool = _setting(flag)
    normalize: bool = _setting(flag, False)

    def check(self, source: ConfigSource) -> None:
        if self.use_recurrent and self.memory_size == 0:
            raise UnityPolicyException(
                f"The memory size for {source.where} is 0 even though the trainer uses recurrent.{source.in_file}"
            )
        if self.use_recurrent and self.memory_size % 4 != 0:
            raise UnityPolicyException(
                f"The memory size for {source.where} is {self.memory_size} but it must be divisible by 4."
                f"{source.in_file}"
            )


VIS_ENCODE_TYPES = ("simple", "nature_cnn", "resnet")


@dataclass(frozen=True, kw_only=True)
class RLSettings(PolicySettings):
    """What the reinforcement-learning trainers (PPO, SAC) share: trajectory chunks of at most
    ``time_horizon`` steps, the visual encoder, the reward signals and optional pretraining."""

    normalize: bool = _setting(flag)
    time_horizon: int = _setting(whole(1))
    vis_encode_type: str = _setting(one_of(*VIS_ENCODE_TYPES), "simple")
    reward_signals: Mapping[str, RewardSignalSettings] = field(default_factory=dict)
    pretraining: PretrainingSettings | None = None

    @classmethod
    def _sections(cls) -> tuple[str, ...]:
        return ("reward_signals", "pretraining")

    @classmethod
    def _parse_sections(cls, params: Mapping[str, Any], source: ConfigSource) -> dict[str, Any]:
        if "reward_signals" not in params:
            raise source.missing("reward_signals")
        return {
            "reward_signals": parse_reward_signals(params["reward_signals"], source),
            "pretraining": PretrainingSettings.from_dict(params.get("pretraining"), source),
        }

    def demonstrations(self) -> list[tuple[str, str]]:
        """``pretraining demo_path`` and the ``demo_path`` of every ``gail`` signal."""
        found = [("pretraining demo_path", self.pretraining.demo_path)] if self.pretraining else []
        found.extend(
            (f"{name} demo_path", signal.demo_path)
            for name, signal in self.reward_signals.items()
            if isinstance(signal, GAILSettings)
        )
        return found


@dataclass(frozen=True, kw_only=True)
class PPOSettings(RLSettings):
    """The hyper-parameters of a ``trainer: ppo`` brain (see docs/Training-PPO.md)."""

    beta: float = _setting(real(0.0))
    buffer_size: int = _setting(whole(1))
    epsilon: float = _setting(real(0.0))
    lambd: float = _setting(real(0.0, 1.0))
    num_epoch: int = _setting(whole(1))


#: The key of a SAC brain's ``reward_signals`` section that is not a signal: how many mini-batches
#: the reward signals learn from per policy update (default: ``num_update``).
REWARD_SIGNAL_NUM_UPDATE = "reward_signal_num_update"


@dataclass(frozen=True, kw_only=True)
class SACSettings(RLSettings):
    """The hyper-parameters of a ``trainer: sac`` brain (see docs/Training-SAC.md).

    ``buffer_size`` bounds the replay buffer (in steps); updates start once it holds ``batch_size``
    steps and the brain has taken ``buffer_init_steps`` steps; every ``train_interval`` steps the
    policy takes ``num_update`` gradient steps on mini-batches of ``batch_size`` steps drawn from
    it; the target network follows the value network by ``tau`` per update; ``init_entcoef`` is the
    initial entropy coefficient; ``save_replay_buffer`` keeps the buffer with the checkpoints.
    """

    buffer_size: int = _setting(whole(1))
    buffer_init_steps: int = _setting(whole(0))
    init_entcoef: float = _setting(real(0.0))
    num_update: int = _setting(whole(1))
    tau: float = _setting(real(0.0, 1.0))
    train_interval: int = _setting(whole(1), 1)
    save_replay_buffer: bool = _setting(flag, False)
    reward_signal_num_update: int | None = None

    @classmethod
    def _parse_sections(cls, params: Mapping[str, Any], source: ConfigSource) -> dict[str, Any]:
        signals = params.get("reward_signals")
        num_update = None
        if isinstance(signals, Mapping) and REWARD_SIGNAL_NUM_UPDATE in signals:
            num_update = whole(1)(signals[REWARD_SIGNAL_NUM_UPDATE], REWARD_SIGNAL_NUM_UPDATE, source)
            params = {
                **params,
                "reward_signals": {
                    key: value for key, value in signals.items() if key != REWARD_SIGNAL_NUM_UPDATE
                },
            }
        return {**super()._parse_sections(params, source), "reward_signal_num_update": num_update}

    @property
    def reward_signal_updates(self) -> int:
        """Mini-batches the reward signals learn from per policy update."""
        return self.reward_signal_num_update if self.reward_signal_num_update is not None else self.num_update

    def to_dict(self) -> dict[str, Any]:
        result = super().to_dict()
        num_update = result.pop("reward_signal_num_update", None)
        if num_update is not None:
            result["reward_signals"] = {**result["reward_signals"], REWARD_SIGNAL_NUM_UPDATE: num_update}
        return result


@dataclass(frozen=True, kw_only=True)
class BCSettings(PolicySettings):
    """What both behavioural-cloning trainers read (see docs/Training-Behavioral-Cloning.md).

    ``batch_size`` is the number of sequences (steps without recurrence) per gradient step and
    ``batches_per_epoch`` the most mini-batches per update. The network never normalizes its
    observations (``normalize`` is ignored, as in the original).
    """

    batches_per_epoch: int = _setting(whole(1))


@dataclass(frozen=True, kw_only=True)
class OfflineBCSettings(BCSettings):
    """``trainer: offline_bc``: learns from the demonstrations at ``demo_path`` (a ``.demo`` file or
    a folder of them)."""

    demo_path: str = _setting(text)

    def demonstrations(self) -> list[tuple[str, str]]:
        return [("demo_path", self.demo_path)]


@dataclass(frozen=True, kw_only=True)
class OnlineBCSettings(BCSettings):
    """``trainer: online_bc``: learns from the broadcast brain ``brain_to_imitate`` while it plays,
    in chunks of at most ``time_horizon`` steps per agent."""

    brain_to_imitate: str = _setting(text)
    time_horizon: int = _setting(whole(1))

    def check_brain_to_imitate(self, brain_name: str, brain_names: Collection[str]) -> None:
        """:raises UnityTrainerException: ``brain_to_imitate`` (the teacher of ``brain_name``) is not
        among ``brain_names``, the brains whose observations Python receives."""
        if self.brain_to_imitate not in brain_names:
            raise UnityTrainerException(
                f"The brain_to_imitate {self.brain_to_imitate} of brain {brain_name} is not a brain "
                f"of the environment, or it is not broadcast (brains sending observations: "
                f"{', '.join(sorted(brain_names)) or 'none'}). Name the teacher brain and start the "
                "environment with it broadcast."
            )


# ---------------------------------------------------------------------------------------- the file


def merged_section(trainer_config: Mapping[str, Any], brain_name: str) -> dict[str, Any]:
    """The merged hyper-parameters of ``brain_name``: ``default`` updated with the brain's section.

    The update is shallow (a brain's ``reward_signals`` replaces the default one as a whole), and a
    section may name another section to reuse (``MyBrain: OtherBrain``).

    :raises UnityEnvironmentException: the config has neither a ``default`` nor a ``brain_name``
        section, a section is not a mapping, or a section alias names a missing section / loops.
    """
    default = trainer_config.get("default")
    if default is not None and not isinstance(default, dict):
        raise UnityEnvironmentException(
            "The 'default' section of the trainer config must be a mapping of hyper-parameters."
        )
    if default is None and brain_name not in trainer_config:
        raise UnityEnvironmentException(
            f"The trainer config has no section for the brain {brain_name} and no 'default' section. "
            f"Add a '{brain_name}:' section or a 'default:' section."
        )
    params: dict[str, Any] = dict(default or {})
    if brain_name in trainer_config:
        key: Any = brain_name
        seen = [key]
        while not isinstance(trainer_config[key], dict):
            alias = trainer_config[key]
            if alias is None:
                raise UnityEnvironmentException(
                    f"The section {key} of the trainer config is empty: give it hyper-parameters or "
                    f"remove it to use the 'default' section."
                )
            if alias not in trainer_config:
                raise UnityEnvironmentException(
                    f"The section {key} of the trainer config refers to the section {alias}, which does not exist."
                )
            if alias in seen:
                raise UnityEnvironmentException(
                    f"The sections {' -> '.join(map(str, seen + [alias]))} of the trainer config refer to each other "
                    f"in a loop."
                )
            seen.append(alias)
            key = alias
        params.update(trainer_config[key])
    return params


def parse_trainer_settings(
    params: Mapping[str, Any], section: str, path: str | None = None
) -> TrainerSettings:
    """The typed settings of one merged section, by its ``trainer`` type.

    :param params: the merged hyper-parameters (:func:`merged_section`).
    :param section: the brain name (``"default"`` for the default section alone).
    :param path: the configuration file, named in errors.
    :raises UnityEnvironmentException: no ``trainer`` key or an unknown trainer type.
    :raises UnityTrainerException, UnityPolicyException: see :meth:`TrainerSettings.from_dict`.
    """
    source = ConfigSource(section, path)
    trainer_type = params.get("trainer")
    if trainer_type is None:
        raise MissingTrainerTypeError(
            f"The trainer config does not say which trainer to use for {source.where}{source.in_file}: add "
            f"'trainer: ppo' to its section or to the 'default' section."
        )
    kind = TRAINER_KINDS.get(trainer_type) if isinstance(trainer_type, str) else None
    if kind is None:
        raise UnityEnvironmentException(
            f"The trainer config contains an unknown trainer type for {source.where}: "
            f"'{trainer_type}' (known types: {', '.join(TRAINER_KINDS)}){source.in_file}."
        )
    return kind.settings_class.from_dict(params, dataclasses.replace(source, trainer_class=kind.class_path))


@dataclass(frozen=True)
class TrainerConfig:
    """A whole trainer configuration file, every section parsed and checked.

    Build it with :meth:`from_dict` before any environment starts; :meth:`for_brain` then gives
    each brain its settings. Any error in any section stops :meth:`from_dict`, with one exception
    that depends on which brains the environment has: a ``default`` section that is incomplete while
    brain sections complete it fails only for a brain that uses it alone.

    :ivar raw: the file's mapping as read.
    :ivar path: the file, named in errors.
    :ivar sections: section name -> settings of that section merged with ``default``.
    :ivar default: the settings of the ``default`` section alone (None without one).
    """

    raw: Mapping[str, Any]
    path: str | None = None
    sections: Mapping[str, TrainerSettings] = field(default_factory=dict)
    default: TrainerSettings | None = None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str | None = None) -> TrainerConfig:
        """Parse every section of ``raw`` (see :func:`parse_trainer_settings` for the errors)."""
        if isinstance(raw, TrainerConfig):
            return raw
        names = [str(name) for name in raw if name != "default"]
        sections = {name: parse_trainer_settings(merged_section(raw, name), name, path) for name in names}
        default = None
        if raw.get("default") is not None:
            try:
                default = parse_trainer_settings(merged_section(raw, "default"), "default", path)
            except (MissingHyperParameterError, MissingTrainerTypeError):
                if not names:
                    raise
        elif "default" in raw:
            merged_section(raw, "default")  # raises for a default section that is not a mapping
        return cls(raw=raw, path=path, sections=sections, default=default)

    def for_brain(self, brain_name: str) -> TrainerSettings:
        """The settings of ``brain_name``: its section's, or the default section's.

        :raises UnityEnvironmentException: no section for the brain and no default section.
        :raises UnityTrainerException: the default section alone is incomplete.
        """
        if brain_name in self.sections:
            return self.sections[brain_name]
        if self.default is not None:
            return self.default
        return parse_trainer_settings(merged_section(self.raw, brain_name), brain_name, self.path)


# ---------------------------------------------------------------------------------------- the registries

C = TypeVar("C")
T = TypeVar("T")


@dataclass(frozen=True)
class Kind(Generic[C, T]):
    """An entry of a registry: the settings class of a section and the class that works with them.

    :param settings_class: parses the section.
    :param class_path: the dotted path of the trainer or reward-signal class, imported by
        :meth:`load_class` only when a configuration uses it.
    """

    settings_class: type[C]
    class_path: str

    @property
    def class_name(self) -> str:
        """The class name, for messages (``GAILRewardSignal``)."""
        return self.class_path.rsplit(".", 1)[-1]

    def load_class(self) -> T:
        """The class itself (its module is imported on the first call)."""
        module, name = self.class_path.rsplit(".", 1)
        cls: T = getattr(importlib.import_module(module), name)
        return cls


# The trainer classes differ in their constructors (PPO also takes the reward buffer capacity).
TRAINER_KINDS: dict[str, Kind[TrainerSettings, Callable[..., Trainer]]] = {
    "ppo": Kind(PPOSettings, "mlagents.trainers.ppo.trainer.PPOTrainer"),
    "sac": Kind(SACSettings, "mlagents.trainers.sac.trainer.SACTrainer"),
    "offline_bc": Kind(OfflineBCSettings, "mlagents.trainers.bc.offline_trainer.OfflineBCTrainer"),
    "online_bc": Kind(OnlineBCSettings, "mlagents.trainers.bc.online_trainer.OnlineBCTrainer"),
}
"""The values of the ``trainer`` key: their settings class and trainer class (a new trainer type is
added here)."""

REWARD_SIGNAL_KINDS: dict[str, Kind[RewardSignalSettings, type[RewardSignal]]] = {
    "extrinsic": Kind(
        ExtrinsicSettings,
        "mlagents.trainers.components.reward_signals.extrinsic.signal.ExtrinsicRewardSignal",
    ),
    "curiosity": Kind(
        CuriositySettings,
        "mlagents.trainers.components.reward_signals.curiosity.signal.CuriosityRewardSignal",
    ),
    "gail": Kind(GAILSettings, "mlagents.trainers.components.reward_signals.gail.signal.GAILRewardSignal"),
}
"""The names of the ``reward_signals`` section: their settings class and signal class (in the order the
documentation lists them; a new signal is added here)."""
