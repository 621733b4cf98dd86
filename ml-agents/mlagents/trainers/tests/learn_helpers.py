"""Helpers of the mlagents-learn tests (not a test module): trainer config files, the real
``mlagents-learn`` command run as a user runs it, and checks that it leaves no process behind
(neither in its own process group nor a build on one of its ports).

Imported as ``mlagents.trainers.tests.learn_helpers``.
"""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml

from mlagents.envs.tests.processes import builds_on_ports, process_group_members
from mlagents.trainers.settings import merged_section

#: The example builds of the repository.
BUILDS = Path(__file__).resolve().parents[4] / "example-envs" / "builds"
#: The shipped demonstration of Basic.
EXPERT_BASIC = BUILDS.parents[1] / "demos" / "ExpertBasic.demo"
#: The shipped trainer configuration.
SHIPPED_CONFIG = BUILDS.parents[1] / "config" / "trainer_config.yaml"
#: The shipped Soft Actor-Critic configuration.
SHIPPED_SAC_CONFIG = SHIPPED_CONFIG.with_name("sac_trainer_config.yaml")

#: The BasicLearning section of the shipped config/trainer_config.yaml merged into its default section.
BASIC_LEARNING: dict[str, Any] = {
    "trainer": "ppo",
    "batch_size": 32,
    "beta": 5.0e-3,
    "buffer_size": 256,
    "epsilon": 0.2,
    "hidden_units": 20,
    "lambd": 0.95,
    "learning_rate": 3.0e-4,
    "max_steps": 5.0e5,
    "memory_size": 256,
    "normalize": False,
    "num_epoch": 3,
    "num_layers": 1,
    "time_horizon": 3,
    "sequence_length": 64,
    "summary_freq": 2000,
    "use_recurrent": False,
    "reward_signals": {"extrinsic": {"strength": 1.0, "gamma": 0.9}},
}


#: Changes to ``BASIC_LEARNING`` for short 3DBall runs that check the command, not what it learns:
#: a small network on normalized observations that updates every 600 steps.
SMALL_3DBALL: dict[str, Any] = {
    "batch_size": 64,
    "buffer_size": 600,
    "hidden_units": 32,
    "num_layers": 1,
    "normalize": True,
    "time_horizon": 64,
}


def gail_alone_on_basic() -> dict[str, Any]:
    """The ``reward_signals`` of GAIL alone on Basic: the environment's reward at strength 0 (reported,
    not learned from) and GAIL on :data:`EXPERT_BASIC`, the discriminator seeing the actions."""
    return {
        "extrinsic": {"strength": 0.0, "gamma": 0.9},
        "gail": {
            "strength": 1.0,
            "gamma": 0.9,
            "encoding_size": 128,
            "demo_path": str(EXPERT_BASIC),
            "use_actions": True,
        },
    }


def trainer_config(**changes: Any) -> str:
    """The text of a trainer config file with one ``default`` section: ``BASIC_LEARNING`` with
    ``changes`` (a change to None removes that key)."""
    section = {key: value for key, value in {**BASIC_LEARNING, **changes}.items() if value is not None}
    return yaml.safe_dump({"default": section}, sort_keys=False)


def shipped_config(brain: str, source: Path = SHIPPED_CONFIG, **changes: Any) -> str:
    """The text of a trainer config file with one ``default`` section: the section of ``brain`` in
    ``source`` (default :data:`SHIPPED_CONFIG`) merged into its default section, with ``changes``."""
    section = merged_section(yaml.safe_load(source.read_text()), brain)
    return yaml.safe_dump({"default": {**section, **changes}}, sort_keys=False)


class LearnProcess:
    """``python -m mlagents.trainers.learn *args`` (or ``python script *args``) started in ``cwd`` in
    its own session (so that its whole process group can be signalled and checked), with the
    environment variables ``env`` (default: ours).

    Its output goes to a file in ``cwd`` that can be polled while it runs (``output()``); stderr goes
    there too, interleaved, unless ``separate_stderr`` (then ``errors()`` reads it).
    """

    def __init__(
        self,
        cwd: Path,
        *args: object,
        separate_stderr: bool = False,
        script: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cwd = cwd
        self.args = [str(a) for a in args]
        stamp = time.monotonic_ns()
        self.log_path = cwd / f"learn-{stamp}.log"
        self.err_path: Path | None = cwd / f"learn-{stamp}.err" if separate_stderr else None
        # The child keeps its own copies of the file descriptors; ours close once it started.
        with ExitStack() as files:
            stdout = files.enter_context(open(self.log_path, "w"))
            stderr = files.enter_context(open(self.err_path, "w")) if self.err_path else subprocess.STDOUT
            command = ["-m", "mlagents.trainers.learn"] if script is None else [str(script)]
            self.process = subprocess.Popen(
                [sys.executable, *command, *self.args],
                cwd=cwd,
                env=None if env is None else dict(env),
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        """The command's pid, which is also its process group id."""
        return self.process.pid

    def output(self) -> str:
        """What the command wrote so far (stdout, with stderr unless ``separate_stderr``)."""
        return self.log_path.read_text()

    def errors(self) -> str:
        """What the command wrote to stderr so far (only with ``separate_stderr``)."""
        assert self.err_path is not None, (
            "start the command with separate_stderr=True to read its stderr alone"
        )
        return self.err_path.read_text()

    def wait_for(self, pattern: str, timeout: float) -> None:
        """Wait until a line of the output matches the regular expression ``pattern``.

        :raises AssertionError: not within ``timeout`` seconds, or the command ended first.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.output(), re.MULTILINE):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"{pattern!r} did not appear; output:\n{self.output()[-4000:]}")

    def finish(self, timeout: float = 150) -> int:
        """Wait for the command to end and return its exit status; after ``timeout`` seconds kill
        its whole process group (and raise ``subprocess.TimeoutExpired``)."""
        try:
            return self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def learn_args(
    env: object,
    *,
    base_port: int,
    run_id: str | None = None,
    num_envs: int | None = None,
    seed: int | None = None,
    config: object = "config.yaml",
    extra: Iterable[object] = (),
) -> list[object]:
    """The arguments of an ``mlagents-learn`` training run without graphics: the trainer config file
    ``config``, the build ``env`` on ports from ``base_port``, then ``--run-id``, ``--num-envs`` and
    ``--seed`` where given, then ``extra``."""
    args: list[object] = [config, f"--env={env}", f"--base-port={base_port}", "--train", "--no-graphics"]
    if run_id is not None:
        args.append(f"--run-id={run_id}")
    if num_envs is not None:
        args.append(f"--num-envs={num_envs}")
    if seed is not None:
        args.append(f"--seed={seed}")
    return [*args, *extra]


#: ``mlagents-learn`` with fault-injection hooks (see that file).
FAULTY_LEARN = Path(__file__).resolve().parent / "faulty_learn.py"


def faulty_learn(cwd: Path, faults: Mapping[str, Any], *args: object, report: bool = False) -> LearnProcess:
    """``faulty_learn.py *args`` in ``cwd`` with the test hooks ``faults`` (its launch markers in
    ``cwd / "markers"``); with ``report`` its report goes to ``cwd / "report.json"``."""
    markers = cwd / "markers"
    markers.mkdir()
    hooks = {**faults, "markers": str(markers)}
    if report:
        hooks["report"] = str(cwd / "report.json")
    env = dict(os.environ, MLAGENTS_TEST_FAULTS=json.dumps(hooks))
    return LearnProcess(cwd, *args, script=FAULTY_LEARN, env=env)


def finish_ok(run: LearnProcess, ports: Iterable[int] = (), timeout: float = 150) -> str:
    """Wait for ``run`` to end (see :meth:`LearnProcess.finish`), assert that it exited with status 0
    and left nothing running (its process group, builds on ``ports``), and return its output."""
    status = run.finish(timeout)
    output = run.output()
    assert status == 0, output[-4000:]
    assert_nothing_left(ports, pgid=run.pid)
    return output


def run_learn(cwd: Path, *args: object, timeout: float = 180) -> tuple[int, str, str]:
    """Run mlagents-learn in ``cwd`` to its end; return (exit status, stdout, stderr), after checking
    that no process of its session survives."""
    run = LearnProcess(cwd, *args, separate_stderr=True)
    status = run.finish(timeout)
    assert_nothing_left(pgid=run.pid)
    return status, run.output(), run.errors()


def leftovers(ports: Iterable[int] = (), pgid: int | None = None) -> list[int]:
    """Pids of live processes of the process group ``pgid``, or builds started with ``--port p``
    for one of ``ports``."""
    group = process_group_members(pgid) if pgid is not None else []
    return sorted({*group, *builds_on_ports(list(ports))})


def assert_nothing_left(ports: Iterable[int] = (), pgid: int | None = None, timeout: float = 5.0) -> None:
    """Wait up to ``timeout`` seconds for ``leftovers(ports, pgid)`` to end (multiprocessing's
    resource tracker, for one, notices a moment later that its parent ended), then assert none is left."""
    ports = list(ports)
    deadline = time.monotonic() + timeout
    while leftovers(ports, pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = leftovers(ports, pgid)
    assert left == [], f"processes were left behind: {left}"


def assert_stopped_before_any_build(status: int, err: str, message: str, marker: Path) -> None:
    """``mlagents-learn`` failed with exactly one ``ERROR:`` line holding ``message``, no traceback,
    and never started a build (the ``marker`` of :func:`python_that_notes` is missing)."""
    errors = [line for line in err.splitlines() if line.startswith("ERROR:")]
    assert status == 1 and "Traceback" not in err and len(errors) == 1, err[-3000:]
    assert message in errors[0], errors[0]
    assert not marker.exists(), "a build was started"


def python_that_notes(folder: Path) -> tuple[Path, Path]:
    """An interpreter for the build launcher (``$MLAGENTS_PYTHON``) that notes every use in a file:
    (the interpreter script, the file), the file exists only if something tried to start a build."""
    marker = folder / "build-started"
    script = folder / "python-that-notes"
    script.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec "{sys.executable}" "$@"\n')
    script.chmod(0o755)
    return script, marker


# ---------------------------------------------------------------------------------- a run's results


def read_scalars(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the TensorBoard event files in ``folder``: tag -> [(step, value)] in the order
    written (values as TensorBoard stored them, float32)."""
    from tensorboard.backend.event_processing import event_accumulator

    accumulator = event_accumulator.EventAccumulator(
        str(folder), size_guidance={event_accumulator.SCALARS: 0}
    )
    accumulator.Reload()
    return {
        tag: [(event.step, event.value) for event in accumulator.Scalars(tag)]
        for tag in accumulator.Tags()["scalars"]
    }


def summary_scalars(summaries_dir: Path) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """Every scalar a run wrote under ``summaries_dir``: (summary folder, tag) -> [(step, value)]
    (see :func:`read_scalars`)."""
    return {
        (folder.name, tag): values
        for folder in sorted(path for path in summaries_dir.iterdir() if path.is_dir())
        for tag, values in read_scalars(folder).items()
    }


def model_digests(model_dir: Path) -> dict[str, str]:
    """SHA-256 of every checkpoint file (``model-<step>.*``) and exported model of a run's model
    folder, by path relative to it (the ``checkpoint`` index file holds write times: not compared)."""
    files = [*model_dir.glob("*/model-*"), *model_dir.glob("*.nn"), *model_dir.glob("*.onnx")]
    return {
        str(path.relative_to(model_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(files)
    }


@contextmanager
def cpu_load(processes: int = 2) -> Iterator[None]:
    """Busy loops in ``processes`` other processes while the block runs (a loaded machine)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()
