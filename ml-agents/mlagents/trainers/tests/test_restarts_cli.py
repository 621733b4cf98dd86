"""mlagents-learn restarts lost environment workers: the real command on real builds.

The command runs through ``faulty_learn.py`` (beside this file), which is ``mlagents-learn`` with
two test hooks read from the ``MLAGENTS_TEST_FAULTS`` environment variable: extra build arguments
for a worker's first launch (the example builds' ``--fault-hang-after`` / ``--fault-exit-after``)
and a short ``exchange_timeout``; it also checks every trajectory chunk that reaches the update
buffer for a transition across a break and reports the result in a JSON file.
"""

import json
import os
import re
import signal
from pathlib import Path

import pytest

from mlagents.trainers.tests.learn_helpers import (
    BUILDS,
    SMALL_3DBALL,
    assert_nothing_left,
    faulty_learn,
    learn_args,
    leftovers,
    read_scalars,
    trainer_config,
)

pytestmark = pytest.mark.slow

BALL = BUILDS / "3DBall.x86_64"
BASIC = BUILDS / "Basic.x86_64"

RESTART_LINE = re.compile(
    r"UnityEnvironment worker (\d) was lost \((\w+): .*\)\. Restarting it on the same port .* "
    r"The environment's log: (\S+)$",
    re.MULTILINE,
)


@pytest.mark.timeout(720)  # up to 240 s to step 400, then up to 400 s to the end
@pytest.mark.skipif(not BALL.exists(), reason="the 3DBall build is missing")
def test_training_goes_on_after_a_killed_and_a_hung_build(tmp_path, free_port_range):
    config = trainer_config(**SMALL_3DBALL, max_steps=2400, summary_freq=400, vis_encode_type="simple")
    (tmp_path / "config.yaml").write_text(config)
    port = free_port_range(4)
    # Worker 2's first build stops answering after 30 exchanges; it is noticed after 3 s. Every
    # academy step costs 10 ms, so the other workers cannot finish the run meanwhile: they need at
    # least 2400 / 3 / 100 = 8 s for it.
    faults = {
        "first_launch_args": {"2": ["--fault-hang-after", "30"]},
        "args": ["--frame-time-ms", "10"],
        "exchange_timeout": 3.0,
    }
    args = learn_args(
        BALL, base_port=port, run_id="faults", num_envs=4, seed=1, extra=["--restarts-rate-limit-n=-1"]
    )
    run = faulty_learn(tmp_path, faults, *args, report=True)
    try:
        # The first summary: with four workers the step count crosses 400 by up to 3 steps at once.
        run.wait_for(r"Step: 40[0-3]\.", timeout=240)
        # Worker 1's build is killed outright.
        builds = leftovers([port + 1])
        assert builds
        for build in builds:
            os.kill(build, signal.SIGKILL)
        status = run.finish(timeout=400)
    finally:
        if run.process.poll() is None:
            os.killpg(run.process.pid, signal.SIGKILL)
    output = run.output()
    assert status == 0, output[-4000:]
    assert "Traceback" not in output
    lines = RESTART_LINE.findall(output)
    restarts = {(int(worker), error): Path(log).name for worker, error, log in lines}
    # The killed build and the hung one (a healthy build that stalls past exchange_timeout on an
    # overloaded machine would be restarted too: counted, not an error).
    assert restarts.get((1, "UnityCommunicationException")) == "3DBall-worker1.log", output[-4000:]
    assert restarts.get((2, "UnityTimeOutException")) == "3DBall-worker2.log", output[-4000:]
    # Training went on to max_steps: the last summary and the final save.
    assert re.search(r"Step: 2400(\.0)?\. ", output), output[-4000:]
    model_dir = tmp_path / "models" / "faults-0"
    assert (model_dir / "3DBallLearning.nn").is_file()
    restarts_written = read_scalars(tmp_path / "summaries" / "faults_3DBallLearning")["Environment/Restarts"]
    assert max(value for _, value in restarts_written) == len(lines)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["chunks"] > 0 and report["breaks"] == []
    assert_nothing_left(range(port, port + 4), pgid=run.process.pid)


@pytest.mark.timeout(360)  # the run may take 300 s
@pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing")
def test_past_the_limit_the_run_saves_and_ends_with_one_error(tmp_path, free_port_range):
    (tmp_path / "config.yaml").write_text(trainer_config(max_steps=1.0e6, summary_freq=200))
    port = free_port_range(2)
    faults = {"first_launch_args": {"1": ["--fault-exit-after", "150"]}}
    args = learn_args(BASIC, base_port=port, run_id="limit", num_envs=2, extra=["--max-lifetime-restarts=0"])
    run = faulty_learn(tmp_path, faults, *args, report=True)
    status = run.finish(timeout=300)
    output = run.output()
    assert status == 1, output[-4000:]
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, output[-4000:]
    assert errors[0].startswith(
        "ERROR:mlagents.trainers:UnityCommunicationException: UnityEnvironment worker 1 was lost"
    )
    assert "--max-lifetime-restarts=0" in errors[0]
    assert "Saved Model" in output
    model_dir = tmp_path / "models" / "limit-0"
    assert (model_dir / "BasicLearning.nn").is_file()
    assert any(path.name.endswith(".index") for path in (model_dir / "BasicLearning").iterdir())
    assert_nothing_left([port, port + 1], pgid=run.process.pid)
