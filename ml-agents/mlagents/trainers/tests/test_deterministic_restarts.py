"""``mlagents-learn --deterministic`` with a worker lost and restarted: the run is still a function of
its configuration and seed. One build of two exits after its 150th exchange (the example builds'
``--fault-exit-after``, on the first launch only); the restarted build is seeded from the run seed,
the worker id and the restart number, so two such runs, one of them under CPU load, write the same
summaries and models, byte for byte."""

import re
from pathlib import Path

import pytest

from mlagents.example_envs.ports import find_free_port_range
from mlagents.trainers.tests.learn_helpers import (
    BUILDS,
    SMALL_3DBALL,
    LearnProcess,
    assert_nothing_left,
    cpu_load,
    faulty_learn,
    learn_args,
    model_digests,
    summary_scalars,
    trainer_config,
)

pytestmark = pytest.mark.slow

BALL = BUILDS / "3DBall.x86_64"
NUM_ENVS = 2
CONFIG = trainer_config(**SMALL_3DBALL, max_steps=600, summary_freq=150)
LOST = re.compile(r"UnityEnvironment worker 1 was lost \(UnityCommunicationException")


def start(cwd: Path, base_port: int) -> LearnProcess:
    cwd.mkdir(parents=True)
    (cwd / "config.yaml").write_text(CONFIG)
    faults = {"first_launch_args": {"1": ["--fault-exit-after", "150"]}}
    args = learn_args(
        BALL,
        base_port=base_port,
        run_id="det",
        num_envs=NUM_ENVS,
        seed=5,
        extra=["--deterministic", "--restarts-rate-limit-n=-1"],
    )
    return faulty_learn(cwd, faults, *args)


def finish(run: LearnProcess, base_port: int) -> str:
    status = run.finish(timeout=240)
    output = run.output()
    assert status == 0, output[-4000:]
    assert_nothing_left(ports=range(base_port, base_port + NUM_ENVS), pgid=run.pid)
    assert len(LOST.findall(output)) == 1, output[-4000:]
    return output


@pytest.mark.timeout(600)
@pytest.mark.skipif(not BALL.exists(), reason="example-envs/builds/3DBall.x86_64 is missing")
def test_a_restarted_worker_keeps_the_run_deterministic(tmp_path: Path) -> None:
    ports = find_free_port_range(2 * NUM_ENVS)
    finish(start(tmp_path / "quiet", ports), ports)
    with cpu_load(2):
        finish(start(tmp_path / "loaded", ports + NUM_ENVS), ports + NUM_ENVS)
    quiet = summary_scalars(tmp_path / "quiet" / "summaries")
    loaded = summary_scalars(tmp_path / "loaded" / "summaries")
    assert quiet[("det_3DBallLearning", "Environment/Restarts")][-1][1] == 1.0
    assert [step for step, _ in quiet[("det_3DBallLearning", "Environment/Cumulative Reward")]][-1] >= 600
    assert loaded == quiet
    models = model_digests(tmp_path / "quiet" / "models" / "det-0")
    assert "3DBallLearning.nn" in {Path(name).name for name in models}
    assert model_digests(tmp_path / "loaded" / "models" / "det-0") == models
