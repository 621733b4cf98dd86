"""CheckpointStore: damaged checkpoints are skipped on load, and a save killed at any moment (a
real SIGKILL of a process saving in a loop, or a fault between writing and switching) leaves a
folder that loads."""

import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from mlagents.trainers.checkpoints import (
    STATE_FILE,
    CheckpointStore,
    NoReadableCheckpoint,
    checkpoint_problem,
)


def make_store(directory: Path, keep: int = 5, **kwargs) -> tuple[CheckpointStore, tf.Variable]:
    value = tf.Variable(np.zeros(1000, dtype=np.float32))
    return CheckpointStore(tf.train.Checkpoint(value=value), str(directory), keep, **kwargs), value


def saved_value(prefix: str) -> float:
    """The first element of the variable ``value`` saved in ``prefix``."""
    return float(tf.train.load_checkpoint(prefix).get_tensor("value/.ATTRIBUTES/VARIABLE_VALUE")[0])


def save_steps(store: CheckpointStore, value: tf.Variable, steps: list[int]) -> None:
    for step in steps:
        value.assign(np.full(1000, step, dtype=np.float32))
        store.save(step)


def truncate(prefix: Path) -> None:
    (data,) = prefix.parent.glob(f"{prefix.name}.data-*")
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])


def test_keeps_the_newest_and_tensorflow_reads_the_list(tmp_path):
    store, value = make_store(tmp_path, keep=2)
    save_steps(store, value, [100, 200, 300])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        STATE_FILE,
        "model-200.data-00000-of-00001",
        "model-200.index",
        "model-300.data-00000-of-00001",
        "model-300.index",
    ]
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model-300")
    assert store.listed() == ["model-200", "model-300"]
    assert store.newest_readable() == str(tmp_path / "model-300")


def test_a_truncated_newest_checkpoint_falls_back_to_the_previous_one(tmp_path, caplog):
    store, value = make_store(tmp_path)
    save_steps(store, value, [100, 200, 300])
    truncate(tmp_path / "model-300")
    assert checkpoint_problem(str(tmp_path / "model-300")) is not None
    with caplog.at_level(logging.WARNING, logger="mlagents.trainers"):
        prefix = CheckpointStore(tf.train.Checkpoint(), str(tmp_path), 5).newest_readable()
    assert prefix == str(tmp_path / "model-200") and saved_value(prefix) == 200.0
    warnings = [record.getMessage() for record in caplog.records]
    assert any(str(tmp_path / "model-300") in message and "cannot be read" in message for message in warnings)


def test_no_readable_checkpoint_is_one_clear_error(tmp_path):
    store, value = make_store(tmp_path)
    save_steps(store, value, [100, 200])
    truncate(tmp_path / "model-100")
    (tmp_path / "model-200.index").write_bytes(b"")
    with pytest.raises(NoReadableCheckpoint) as raised:
        store.newest_readable()
    message = str(raised.value)
    assert "\n" not in message
    assert f"No checkpoint in {tmp_path} can be read: model-200, model-100 are damaged" in message
    assert "without --load" in message


def test_no_checkpoint_at_all_is_none(tmp_path):
    assert make_store(tmp_path / "missing")[0].newest_readable() is None


class SimulatedKill(BaseException):
    """Stands for a kill between writing a checkpoint and switching it in."""


def test_a_save_interrupted_before_the_switch_changes_nothing(tmp_path):
    store, value = make_store(tmp_path, keep=2)
    save_steps(store, value, [100, 200])

    def kill(prefix: str) -> None:
        raise SimulatedKill(prefix)

    store.before_switch = kill
    with pytest.raises(SimulatedKill):
        save_steps(store, value, [300])
    assert store.listed() == ["model-100", "model-200"]
    assert not (tmp_path / "model-300.index").exists()
    assert saved_value(tf.train.latest_checkpoint(str(tmp_path))) == 200.0


def test_a_checkpoint_switched_in_but_not_listed_is_still_found(tmp_path):
    # A kill after the files were moved in and before the list was rewritten.
    store, value = make_store(tmp_path)
    save_steps(store, value, [100, 200])
    listed = (tmp_path / STATE_FILE).read_text()
    save_steps(store, value, [300])
    (tmp_path / STATE_FILE).write_text(listed)
    assert store.candidates()[:2] == [str(tmp_path / "model-200"), str(tmp_path / "model-300")]
    # Both are complete; the list's newest is taken, as TensorFlow would.
    assert store.newest_readable() == str(tmp_path / "model-200")


SAVE_LOOP = textwrap.dedent(
    """
    import sys
    import numpy as np
    import tensorflow as tf
    from mlagents.trainers.checkpoints import CheckpointStore

    directory, first = sys.argv[1], int(sys.argv[2])
    value = tf.Variable(np.zeros(1_000_000, dtype=np.float32))  # 4 MB: a save takes a while
    store = CheckpointStore(tf.train.Checkpoint(value=value), directory, 3)
    step = first
    while True:
        value.assign(tf.fill([1_000_000], float(step)))
        store.save(step)
        print(f"saved {step}", flush=True)
        step += 1
    """
)


@pytest.mark.slow
def test_sigkill_while_saving_in_a_loop_never_breaks_the_folder(tmp_path):
    """A process saves 4 MB checkpoints back to back (it spends nearly all its time saving) and
    is killed with SIGKILL right after its second save (so inside the third); the list's newest
    checkpoint then reads back whole, without warnings, and the abandoned save is cleaned up."""
    script = tmp_path / "save_loop.py"
    script.write_text(SAVE_LOOP)
    directory = tmp_path / "checkpoints"
    first = 0
    for saves in (2,):
        process = subprocess.Popen(
            [sys.executable, str(script), str(directory), str(first)],
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        )
        try:
            assert process.stdout is not None
            lines = [process.stdout.readline() for _ in range(saves)]
            assert lines[-1].startswith("saved ")
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
        last_reported = int(lines[-1].split()[1])
        store = CheckpointStore(tf.train.Checkpoint(), str(directory), 3)  # removes abandoned saves
        newest = tf.train.latest_checkpoint(str(directory))
        assert newest is not None and checkpoint_problem(newest) is None
        # The save in progress at the kill may or may not have been switched in.
        assert saved_value(newest) in (float(last_reported), float(last_reported + 1))
        assert store.newest_readable() == newest
        assert not [p for p in directory.iterdir() if p.name.startswith(".saving-")]
        first = int(saved_value(newest)) + 1


# ---------------------------------------------------------------------------------------- mlagents-learn --load

BASIC_BUILD = Path(__file__).resolve().parents[4] / "example-envs" / "builds" / "Basic.x86_64"
#: Seconds one mlagents-learn run of these tests may take; a test runs two (the module's saved run,
#: counted in the first test that uses it, and its own), so its own timeout leaves room for both.
LEARN_TIMEOUT = 240


def learn(cwd: Path, port: int, max_steps: int, *extra: str) -> tuple[int, str]:
    """Run mlagents-learn on Basic (one instance) in ``cwd``; returns (status, output)."""
    from mlagents.trainers.tests.learn_helpers import LearnProcess, assert_nothing_left, trainer_config

    (cwd / f"config-{max_steps}.yaml").write_text(trainer_config(max_steps=max_steps, summary_freq=100))
    run = LearnProcess(
        cwd,
        f"config-{max_steps}.yaml",
        "--env",
        BASIC_BUILD,
        "--base-port",
        port,
        "--train",
        "--run-id=ck",
        "--save-freq=200",
        "--no-graphics",
        *extra,
    )
    status = run.finish(timeout=LEARN_TIMEOUT)
    assert_nothing_left([port], pgid=run.pid)
    return status, run.output()


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory, free_port_range) -> Path:
    """A 600-step run: checkpoints at steps 200, 400, 600 and the final one at 601."""
    if not BASIC_BUILD.exists():
        pytest.skip("the Basic build is missing")
    cwd = tmp_path_factory.mktemp("saved")
    status, output = learn(cwd, free_port_range(1), 600)
    assert status == 0, output[-3000:]
    steps = sorted(int(p.name[6:-6]) for p in (cwd / "models/ck-0/BasicLearning").glob("model-*.index"))
    assert steps == [200, 400, 600, 601]
    return cwd


@pytest.mark.slow
@pytest.mark.timeout(2 * LEARN_TIMEOUT + 60)
def test_load_skips_a_truncated_newest_checkpoint(saved_run, tmp_path, free_port_range):
    cwd = tmp_path / "run"
    shutil.copytree(saved_run, cwd)
    truncate(cwd / "models/ck-0/BasicLearning/model-601")
    status, output = learn(cwd, free_port_range(1), 700, "--load")
    assert status == 0, output[-3000:]
    warnings = [
        line for line in output.splitlines() if line.startswith("WARNING:") and "cannot be read" in line
    ]
    assert len(warnings) == 1 and "models/ck-0/BasicLearning/model-601 cannot be read" in warnings[0]
    assert "Loading the checkpoint model-600 instead" in output
    # The run continues from step 600: its first summary, 100 steps later, is at 700.
    assert re.search(r"BasicLearning: Step: 700\. ", output), output[-3000:]
    assert "Traceback" not in output


@pytest.mark.slow
@pytest.mark.timeout(2 * LEARN_TIMEOUT + 60)
def test_load_with_no_readable_checkpoint_is_one_error_line(saved_run, tmp_path, free_port_range):
    cwd = tmp_path / "run"
    shutil.copytree(saved_run, cwd)
    model_dir = cwd / "models/ck-0/BasicLearning"
    for index in model_dir.glob("model-*.index"):
        truncate(model_dir / index.name[: -len(".index")])
    status, output = learn(cwd, free_port_range(1), 700, "--load")
    assert status == 1
    assert "Traceback" not in output, output[-3000:]  # the warnings may name TensorFlow's IndexError
    errors = [line for line in output.splitlines() if line.startswith("ERROR:")]
    assert errors == [
        "ERROR:mlagents.trainers:UnityPolicyException: No checkpoint in ./models/ck-0/BasicLearning can be read: "
        + errors[0].split("can be read: ", 1)[1]
    ]
    assert "model-601, model-600, model-400, model-200 are damaged" in errors[0]
    assert "Start without --load" in errors[0]
