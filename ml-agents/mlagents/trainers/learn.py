"""The ``mlagents-learn`` command: train (or run) the brains of a Unity environment.

``main()`` parses the command line once into :class:`~mlagents.trainers.settings.RunOptions` and
starts one training run in this process, or ``--num-runs`` runs in child processes.
``run_training()`` performs one run: it reads and checks the trainer configuration, the sampler file
and the curricula, then starts ``--num-envs`` environments through a :class:`SubprocessEnvManager`
(or a :class:`RayEnvManager` with ``--env-manager=ray``), creates one trainer per brain and hands
everything to a :class:`TrainerController`.

Errors a user can cause end the command with one line naming the problem and exit status 1. Those
in the files (a missing or malformed configuration file, an unknown trainer type, a missing or
invalid hyper-parameter or reward signal, demonstrations of the default section that cannot be read,
a malformed curriculum or sampler file) are found before any environment is launched, and so are,
for an example build, the demonstrations of the brains it trains (that they can be read and fit the
brain) and a ``brain_to_imitate`` the build does not have (its brains are read from the example
catalogue; see :mod:`mlagents.trainers.prelaunch`); those that need the environment (a brain without
configuration, a curriculum for a brain or parameter it does not have, those demonstration and
imitation errors for other builds, an environment that cannot be launched) right after it started,
before the first step. Ctrl-C during training saves and exports the models, then ends with status 0.
"""

from __future__ import annotations

import os

# TensorFlow's C++ start-up chatter (CPU features, missing CUDA) means nothing to a user; errors still show.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import atexit
import gc
import glob
import logging
import multiprocessing
import queue as queue_module
import shutil
import signal
import sys
import traceback
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any, Protocol

import numpy as np
from docopt import docopt

from mlagents.envs.base_unity_environment import BaseUnityEnvironment
from mlagents.envs.env_manager import EnvManager
from mlagents.envs.exception import SamplerException, UnityException
from mlagents.envs.sampler_class import SamplerManager
from mlagents.trainers.exception import MetaCurriculumError, TrainerError
from mlagents.trainers.meta_curriculum import MetaCurriculum
from mlagents.trainers.prelaunch import check_before_launch
from mlagents.trainers.settings import CommandLineError, RunOptions
from mlagents.trainers.trainer_util import initialize_trainers, load_config, load_trainer_config

__all__ = [
    "CommandLineError",
    "RunOptions",
    "create_env_manager",
    "create_environment_factory",
    "create_sampler_manager",
    "main",
    "parse_command_line",
    "run_training",
    "try_create_meta_curriculum",
    "validate_options",
]

LOGGER = logging.getLogger("mlagents.trainers")


class SupportsPut(Protocol):
    """Where :func:`run_training` reports that training starts: a ``multiprocessing`` or
    ``queue.Queue``."""

    def put(self, obj: bool, /) -> None: ...


USAGE = """
Usage:
  mlagents-learn <trainer-config-path> [options]
  mlagents-learn --help

Options:
  --env=<file>               Environment executable to train in; without it, wait for the
                             Unity Editor (press Play) [default: None].
  --curriculum=<directory>   Folder with one curriculum JSON file per brain [default: None].
  --sampler=<file>           YAML file of reset-parameter samplers for generalization
                             training [default: None].
  --keep-checkpoints=<n>     Model checkpoints kept per brain [default: 5].
  --lesson=<n>               Curriculum lesson to start every curriculum at [default: 0].
  --load                     Continue from the saved model of this --run-id instead of starting
                             from random weights.
  --run-id=<path>            Name of the run: models go to models/<run-id>-<n>/, summaries to
                             summaries/<run-id>_<brain>/ [default: ppo].
  --num-runs=<n>             Independent training runs started side by side, each in its own
                             process [default: 1].
  --save-freq=<n>            Save the models every n steps [default: 50000].
  --seed=<n>                 Random seed of the run; -1 draws one [default: -1].
  --deterministic            Make the run a function of its configuration and seed alone: every
                             environment steps each round, results reach the trainers in worker
                             order, TensorFlow uses deterministic ops (slower; the seed drawn
                             for --seed=-1 is logged).
  --slow                     Run the environment at inference speed (reset with train_mode off).
  --train                    Train the models; without it the policies only act (no updates,
                             no saving) until interrupted.
  --base-port=<n>            First port used to talk to the environments; run k worker w uses
                             base-port + k * num-envs + w [default: 5005].
  --num-envs=<n>             Environment instances run in parallel for each run [default: 1].
  --docker-target-name=<dt>  Docker volume holding the config, environment, models and
                             summaries [default: None].
  --no-graphics              Launch the environment with -nographics -batchmode.
  --debug                    Log in detail (DEBUG level).
  --multi-gpu                Split each PPO update over the visible GPUs: one tower per GPU
                             computes the loss and gradients of its share of the mini-batch, the
                             averaged gradients are applied once; with fewer than two GPUs,
                             training uses one device.
  --env-manager=<kind>       How the environment workers run: subprocess (processes on this
                             machine) or ray (Ray actors, on a local Ray instance or the
                             cluster of --ray-address) [default: subprocess].
  --ray-address=<address>    Ray cluster to run the workers on (HOST:PORT of its head, or auto);
                             without it a local Ray instance is started [default: None].
  --max-lifetime-restarts=<n>
                             Times one environment worker may be restarted after its environment
                             was lost (crashed, hung, never connected); -1: no limit [default: 10].
  --restarts-rate-limit-n=<n>
                             Restarts allowed to one worker within --restarts-rate-limit-period-s
                             seconds; -1: no limit [default: 1].
  --restarts-rate-limit-period-s=<s>
                             The window of --restarts-rate-limit-n, in seconds [default: 60].
  --video-freq=<n>           Every n steps, record one episode of the current policies (example
                             environments only) to models/<run-id>-<n>/videos/ and TensorBoard;
                             0 = never [default: 0].
"""

# The original banner is Unity's logo; this one only spells the name.
BANNER = r"""
   _   _       _ _
  | | | |_ __ (_) |_ _   _
  | | | | '_ \| | __| | | |
  | |_| | | | | | |_| |_| |
   \___/|_| |_|_|\__|\__, |    ML-Agents Toolkit
                     |___/
"""

ENV_EXTENSIONS = (".app", ".exe", ".x86_64", ".x86")
SEED_POOL_SIZE = 10000


# ---------------------------------------------------------------------------------------- options


def parse_command_line(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse ``argv`` (default ``sys.argv[1:]``) into docopt's option dict.

    Values arrive as strings (the absent ones as the string ``"None"``) and flags as booleans.
    ``--help`` prints the usage and exits 0; a malformed command line prints the usage and exits 1.
    """
    return docopt(USAGE, argv=argv)


def validate_options(options: Mapping[str, Any]) -> RunOptions:
    """Check and convert docopt's option dict before anything is launched.

    :raises CommandLineError: naming the option and what is wrong with it.
    """
    return RunOptions.from_docopt(options)


# ---------------------------------------------------------------------------------------- environments


def create_environment_factory(
    env_path: str | None,
    docker_target_name: str | None,
    no_graphics: bool,
    seed: int | None,
    start_port: int,
    *,
    deterministic: bool = False,
) -> Callable[..., BaseUnityEnvironment]:
    """Return ``factory(worker_id, restart=0) -> UnityEnvironment`` for one run.

    Worker ``w`` talks on port ``start_port + w``. Its seed is :func:`worker_seed` of the run seed
    (``seed + w`` at its first start: the original gave every worker the same seed, so parallel
    workers replayed the same random episodes; a seed of its own at each restart). Without
    ``deterministic`` a run seed of 0 (or None) draws each worker's seed from a pool of random
    seeds, as the original did.

    :param env_path: executable path; ``.app``/``.exe``/``.x86_64``/``.x86`` are removed (the
        environment finds the right file for the platform); None connects to the Unity Editor.
    :param docker_target_name: the docker volume name; the executable is copied out of it first.
    :param no_graphics: launch with ``-nographics -batchmode``.
    :param seed: the run seed.
    :param start_port: port of worker 0.
    :param deterministic: seeds come from the run seed alone, also when it is 0.
    """
    if env_path is not None:
        env_path = env_path.strip()
        for extension in ENV_EXTENSIONS:
            env_path = env_path.replace(extension, "")
    docker_training = docker_target_name is not None
    if docker_training and env_path is not None:
        env_path = _copy_env_out_of_docker_volume(env_path, docker_target_name or "")
    seed_pool = (
        [] if deterministic else [int(np.random.randint(0, SEED_POOL_SIZE)) for _ in range(SEED_POOL_SIZE)]
    )

    def create_unity_environment(worker_id: int, restart: int = 0) -> BaseUnityEnvironment:
        # Imported here: the factory runs in the env worker processes.
        from mlagents.envs.environment import UnityEnvironment

        if seed or deterministic:
            env_seed = worker_seed(seed or 0, worker_id, restart)
        else:
            env_seed = seed_pool[(worker_id + restart) % len(seed_pool)]
        return UnityEnvironment(
            file_name=env_path,
            worker_id=worker_id,
            seed=env_seed,
            docker_training=docker_training,
            no_graphics=no_graphics,
            base_port=start_port,
        )

    return create_unity_environment


def worker_seed(run_seed: int, worker_id: int, restart: int = 0) -> int:
    """The seed sent to the environment of worker ``worker_id`` at its ``restart``-th restart.

    ``run_seed + worker_id`` at the first start; after a restart a seed drawn from the three
    numbers, so that a restarted environment neither replays its first episodes nor depends on
    anything but the run seed. Always within the wire's int32.
    """
    if restart == 0:
        return int(run_seed) + int(worker_id)
    state = np.random.SeedSequence([int(run_seed) % 2**32, int(worker_id), int(restart)]).generate_state(1)
    return int(state[0] % 2**31)


def _copy_env_out_of_docker_volume(env_path: str, docker_target_name: str) -> str:
    """Copy every entry of ``/<volume>/`` whose path contains the environment name to ``/ml-agents/``."""
    for source in glob.glob(f"/{docker_target_name}/*"):
        if env_path not in source:
            continue
        destination = os.path.join("/ml-agents", os.path.basename(source))
        if os.path.isdir(source):
            shutil.copytree(source, destination, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, destination)
            os.chmod(destination, 0o775)
    return f"/ml-agents/{env_path}"


def create_sampler_manager(
    sampler_file_path: str | None, env_reset_params: dict[str, float], run_seed: int | None = None
) -> tuple[SamplerManager, int | None]:
    """Build the reset-parameter samplers of ``--sampler`` (none without a file).

    ``env_reset_params`` is not used (kept for the original signature); :func:`run_training`
    checks the sampled names against the environment once it runs.

    :returns: the manager and the resampling interval in global steps (None without a file).
    :raises SamplerException: no valid ``resampling-interval`` or an invalid sampler description.
    """
    sampler_config = None
    resample_interval = None
    if sampler_file_path is not None:
        sampler_config = load_config(sampler_file_path)
        if "resampling-interval" not in sampler_config:
            raise SamplerException(
                "Resampling interval was not specified in the sampler file. Please specify it with the "
                "'resampling-interval' key in the sampler config file."
            )
        resample_interval = sampler_config.pop("resampling-interval")
        if (
            isinstance(resample_interval, bool)
            or not isinstance(resample_interval, int)
            or resample_interval <= 0
        ):
            raise SamplerException(
                "Specified resampling-interval is not valid. Please provide a positive integer value for "
                "resampling-interval"
            )
    return SamplerManager(sampler_config, run_seed), resample_interval


def try_create_meta_curriculum(
    curriculum_folder: str | None, env_reset_params: Mapping[str, float] | None, lesson: int
) -> MetaCurriculum | None:
    """The curricula of ``--curriculum`` set to ``lesson``, or None without a folder.

    With ``env_reset_params`` None the parameter names are left to
    :meth:`MetaCurriculum.check_reset_parameters` (the environment is not running yet).
    """
    if curriculum_folder is None:
        return None
    meta_curriculum = MetaCurriculum(curriculum_folder, env_reset_params)
    meta_curriculum.set_all_curriculums_to_lesson_num(lesson)
    return meta_curriculum


def create_env_manager(
    run: RunOptions,
    env_factory: Callable[..., BaseUnityEnvironment],
    while_starting: Callable[[], None] | None = None,
) -> EnvManager:
    """The env manager of ``--env-manager``: worker processes, or Ray actors (``--ray-address``);
    either restarts lost workers within the run's restart limits, and steps every worker each
    round with ``--deterministic``. ``while_starting`` runs once the workers were started, before
    they are waited for."""
    from mlagents.envs.restart_policy import RestartPolicy

    restart_policy = RestartPolicy(run.restart_limits())
    if run.env_manager == "ray":
        from mlagents.envs.ray_env_manager import RayEnvManager

        return RayEnvManager(
            env_factory,
            run.num_envs,
            address=run.ray_address,
            restart_policy=restart_policy,
            synchronous=run.deterministic,
            while_starting=while_starting,
        )
    from mlagents.envs.subprocess_env_manager import SubprocessEnvManager

    return SubprocessEnvManager(
        env_factory,
        run.num_envs,
        restart_policy=restart_policy,
        synchronous=run.deterministic,
        while_starting=while_starting,
    )


# ---------------------------------------------------------------------------------------- one run


def run_training(
    sub_id: int, run_seed: int, options: RunOptions | Mapping[str, Any], queue: SupportsPut
) -> None:
    """Perform training run ``sub_id`` (``models/<run-id>-<sub_id>``) with ``run_seed``.

    The trainer configuration, the sampler file and the curricula are read and checked before the
    environments are launched.

    :param sub_id: index of the run among ``--num-runs``.
    :param run_seed: the run's random seed.
    :param options: the run options, or docopt's option dict (:func:`parse_command_line`).
    :param queue: receives True once the trainers are built, just before training starts.
    :raises UnityException, TrainerError: the errors a user can cause (see the module docstring).
    """
    run = options if isinstance(options, RunOptions) else RunOptions.from_docopt(options)
    model_path = run.model_path(sub_id)
    summaries_dir = run.summaries_dir()
    curriculum_folder = run.curriculum_dir()

    trainer_config = load_trainer_config(run.trainer_config_file())
    # An example build's brains are known without starting it: errors of settings that name
    # demonstrations or brains show at once (in a docker volume the build is not one of ours).
    check_before_launch(trainer_config, run.env_path if run.docker_target_name is None else None)
    sampler_manager, resampling_interval = create_sampler_manager(run.sampler_file_path, {}, run_seed)
    meta_curriculum = try_create_meta_curriculum(curriculum_folder, None, run.lesson)
    # checkpoint_video loads no TensorFlow: its error for a build that is no example shows at once.
    from mlagents.trainers.checkpoint_video import CheckpointVideos, example_name

    example = example_name(run.env_path) if run.video_freq > 0 and run.train_model else None

    os.makedirs(summaries_dir, exist_ok=True)
    env_path = run.env_path
    if env_path is not None and run.env_manager == "ray":
        # Ray actors do not run in this working directory.
        env_path = os.path.abspath(env_path)
    env_factory = create_environment_factory(
        env_path,
        run.docker_target_name,
        run.no_graphics,
        run_seed,
        run.base_port + sub_id * run.num_envs,
        deterministic=run.deterministic,
    )
    # TensorFlow is imported only now, so that `mlagents-learn --help`, command-line and
    # configuration errors answer at once; and while the environments launch, so that its seconds
    # of loading overlap theirs.
    env = create_env_manager(run, env_factory, while_starting=_import_tensorflow_quietly)
    try:
        if run.deterministic:
            from mlagents.trainers.determinism import use_deterministic_ops

            use_deterministic_ops()
        from mlagents.trainers.trainer_controller import TrainerController

        external_brains = env.external_brains
        if meta_curriculum is not None:
            meta_curriculum.check_reset_parameters(env.reset_parameters)
            for brain_name in meta_curriculum.brains_to_curriculums:
                if brain_name not in external_brains:
                    raise MetaCurriculumError(
                        f"One of the curricula defined in {curriculum_folder} does not have a corresponding "
                        f"Brain. Check that the curriculum file has the same name as the Brain whose curriculum "
                        f"it defines. (No brain called {brain_name}; the environment's brains to train are: "
                        f"{', '.join(external_brains) or 'none'}.)"
                    )
        unknown = sorted(set(sampler_manager.samplers) - set(env.reset_parameters))
        if unknown:
            raise SamplerException(
                f"The sampler file {run.sampler_file_path} names reset parameters the environment does not have: "
                f"{', '.join(unknown)}. The environment's reset parameters are: "
                f"{', '.join(env.reset_parameters) or 'none'}."
            )
        trainers = initialize_trainers(
            trainer_config,
            external_brains,
            summaries_dir,
            run.run_id,
            model_path,
            run.keep_checkpoints,
            run.train_model,
            run.load_model,
            run_seed,
            meta_curriculum,
            run.multi_gpu,
        )
        tc = TrainerController(
            trainers,
            model_path,
            summaries_dir,
            f"{run.run_id}-{sub_id}",
            run.save_freq,
            meta_curriculum,
            run.train_model,
            run_seed,
            run.fast_simulation,
            sampler_manager,
            resampling_interval,
            videos=None
            if example is None
            else CheckpointVideos(example, trainers, model_path, run.video_freq),
        )
    except BaseException:
        env.close()
        raise
    queue.put(True)
    tc.start_learning(env)


def _run_training_in_child(sub_id: int, run_seed: int, options: RunOptions, queue: SupportsPut) -> None:
    """Process target of one of several runs: a user error ends the child with one line and status 1."""
    _configure_logging(options.debug)
    signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    try:
        run_training(sub_id, run_seed, options, queue)
    except KeyboardInterrupt:
        sys.exit(130)
    except (UnityException, TrainerError) as error:
        _report_error(error, options.debug, prefix=f"Run {sub_id}: ")
        sys.exit(1)


# ---------------------------------------------------------------------------------------- main


def _import_tensorflow_quietly() -> None:
    """Import TensorFlow without its start-up lines on stderr (CPU features, no CUDA driver).

    Those lines are written by native code before its logging is configured, so no setting hides
    them; stderr is sent to a temporary file for the import and the device discovery (which
    reports a missing GPU driver as an error) and replayed only if the import fails.
    """
    if "tensorflow" in sys.modules:
        return
    import tempfile

    sys.stderr.flush()
    saved_fd = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import tensorflow

            tensorflow.config.list_physical_devices()
        except BaseException:
            os.dup2(saved_fd, 2)
            captured.seek(0)
            sys.stderr.write(captured.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
    # With TensorFlow loaded, the collections of the interpreter's shutdown walk millions of
    # objects: about a second of CPU after the run has ended. Objects frozen at exit are left to
    # the operating system, as they would be anyway a moment later; files are closed before.
    atexit.register(gc.freeze)


def _configure_logging(debug: bool) -> None:
    logging.basicConfig(level=logging.INFO)
    level = logging.DEBUG if debug else logging.INFO
    logging.getLogger("mlagents.trainers").setLevel(level)
    logging.getLogger("mlagents.envs").setLevel(level)
    # TensorFlow's own Python warnings (retracing hints, deprecations) are for developers.
    logging.getLogger("tensorflow").setLevel(logging.DEBUG if debug else logging.ERROR)
    # absl reports every checkpoint write at INFO.
    logging.getLogger("absl").setLevel(logging.DEBUG if debug else logging.WARNING)


def _public_name(error: BaseException) -> str:
    """The class name shown for ``error``: the settings module's precise subclasses
    (``report_as_parent``) are shown as the documented class they refine."""
    for cls in type(error).__mro__:
        if not cls.__dict__.get("report_as_parent", False):
            return cls.__name__
    return type(error).__name__


def _report_error(error: BaseException, debug: bool, prefix: str = "") -> None:
    if debug:
        LOGGER.error("%s%s", prefix, "".join(traceback.format_exception(error)).rstrip())
    else:
        LOGGER.error("%s%s: %s", prefix, _public_name(error), error)


def _print_banner() -> None:
    try:
        print(BANNER)
    except Exception:
        print("\n\n\tUnity Technologies\n")


def _random_seed() -> int:
    return int(np.random.randint(0, 10000))


def _run_several(options: RunOptions, num_runs: int, seed: int) -> int:
    """Start ``num_runs`` runs one after the other (each once the previous one started training),
    wait for all of them and return the exit status (1 if any run failed)."""
    context = multiprocessing.get_context("spawn")
    processes: list[multiprocessing.process.BaseProcess] = []
    failed = False
    try:
        for sub_id in range(num_runs):
            run_seed = _random_seed() if seed == -1 else seed
            if options.deterministic and seed == -1:
                LOGGER.info(
                    "Run %d: deterministic with the seed %d (repeat it with --seed=%d).",
                    sub_id,
                    run_seed,
                    run_seed,
                )
            run_queue = context.Queue()
            process = context.Process(
                target=_run_training_in_child,
                args=(sub_id, run_seed, options, run_queue),
                name=f"run-{sub_id}",
            )
            process.start()
            processes.append(process)
            # Unlike the original, a run that dies before it starts training does not hang us.
            while True:
                try:
                    run_queue.get(timeout=1.0)
                    break
                except queue_module.Empty:
                    if not process.is_alive():
                        break
            if not process.is_alive() and process.exitcode not in (0, None):
                LOGGER.error(
                    "Training run %d ended before it started training (exit status %s); not starting the "
                    "remaining runs.",
                    sub_id,
                    process.exitcode,
                )
                failed = True
                break
        _join_all(processes)
    except KeyboardInterrupt as interrupt:
        if interrupt.args == (f"signal {signal.SIGTERM}",):
            # SIGTERM reached only this process: pass it on.
            for running in processes:
                if running.is_alive() and running.pid is not None:
                    os.kill(running.pid, signal.SIGTERM)
        # Ctrl-C reaches every run itself (same process group). Let them save their models and exit.
        LOGGER.info("Waiting for the training runs to save their models.")
        _join_all(processes, patience=True)
    if any(finished.exitcode not in (0, None) for finished in processes):
        failed = True
    return 1 if failed else 0


def _join_all(processes: list[multiprocessing.process.BaseProcess], patience: bool = False) -> None:
    for process in processes:
        while process.is_alive():
            try:
                process.join()
            except KeyboardInterrupt:
                if patience:
                    # A second Ctrl-C: stop waiting politely.
                    for other in processes:
                        if other.is_alive():
                            other.terminate()
                patience = True


def _interrupt_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


#: Exit status when the reader of the output went away (``mlagents-learn --help | head``), as a
#: process ended by SIGPIPE reports it in a shell.
BROKEN_PIPE_STATUS = 128 + signal.SIGPIPE


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``mlagents-learn``; exits with status 0 on success, 1 on an error.

    SIGTERM (``kill``, ``docker stop``) is handled like Ctrl-C: the models are saved and exported.
    When the reader of the output closes it early (``--help | head``), the command ends quietly
    with status 141, as a shell tool ended by SIGPIPE does.
    """
    try:
        _main(argv)
    except BrokenPipeError:
        # Python would report the unflushable output again at exit: point stdout at nothing.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(BROKEN_PIPE_STATUS)


def _main(argv: list[str] | None) -> None:
    _print_banner()
    options = parse_command_line(argv)
    debug = bool(options["--debug"])
    _configure_logging(debug)
    signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    LOGGER.info(options)
    try:
        run = RunOptions.from_docopt(options)
        if run.num_runs == 1:
            run_seed = _random_seed() if run.seed == -1 else run.seed
            if run.deterministic and run.seed == -1:
                LOGGER.info(
                    "Deterministic run with the seed %d (repeat it with --seed=%d).", run_seed, run_seed
                )
            run_training(0, run_seed, run, queue_module.SimpleQueue())
        else:
            sys.exit(_run_several(run, run.num_runs, run.seed))
    except (UnityException, TrainerError) as error:
        _report_error(error, debug)
        sys.exit(1)
    except KeyboardInterrupt:
        LOGGER.info("Interrupted.")
        sys.exit(130)


if __name__ == "__main__":
    main()
