"""benchmarks/long_run.py end to end: a run of the real Basic build in two legs (the first stopped at a
step limit with SIGTERM, the second continuing with --load to the run's max_steps), then its report;
and train_to_benchmark's helpers on that run's files."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mlagents.trainers.tests.learn_helpers import assert_nothing_left, trainer_config
from mlagents.trainers.trainer_util import load_config

REPO = Path(__file__).resolve().parents[4]
BENCHMARKS = REPO / "benchmarks"
BASIC = REPO / "example-envs" / "builds" / "Basic.x86_64"
MAX_STEPS = 10000

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing"),
    # The module's two legs (up to 240 s each) count in the first test that uses them.
    pytest.mark.timeout(600),
]


def long_run(*args: object, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "long_run.py"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def benchmark_module(name: str):
    """benchmarks/<name>.py loaded as the module ``benchmarks_<name>`` (it puts its own folder on
    ``sys.path`` for the benchmarks it imports)."""
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def two_legs(tmp_path_factory):
    """A Basic run of MAX_STEPS steps in two legs; (run folder, output of leg 0, output of leg 1)."""
    run_dir = tmp_path_factory.mktemp("long") / "Basic"
    config = run_dir.parent / "basic.yaml"
    config.write_text(trainer_config(learning_rate=3.0e-3, summary_freq=1000))
    first = long_run(
        "leg", run_dir, "--env=Basic", f"--config={config}", f"--max-steps={MAX_STEPS}", "--until-step=2000"
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert_nothing_left(pgid=int((run_dir / "leg0.pid").read_text().split()[0]))
    second = long_run("leg", run_dir)
    assert second.returncode == 0, second.stdout + second.stderr
    assert_nothing_left(pgid=int((run_dir / "leg1.pid").read_text().split()[0]))
    return run_dir, first.stdout, second.stdout


def test_legs_stop_save_and_continue(two_legs):
    run_dir, first, second = two_legs
    assert "Leg 0" in first and "a new run" in first and "step limit: stopping the leg" in first
    assert "Leg 1" in second and "from the last checkpoint" in second and "stopping" not in second
    assert re.search(r"^\s+load:\s+True$", (run_dir / "leg1.log").read_text(), re.MULTILINE)
    # The run's settings and config are fixed by the first leg: max_steps for the scene's brain.
    assert yaml.safe_load((run_dir / "trainer_config.yaml").read_text())["BasicLearning"] == {
        "max_steps": MAX_STEPS
    }
    steps = [
        [int(s) for s in re.findall(r"Step: (\d+)\.", (run_dir / f"leg{i}.log").read_text())] for i in (0, 1)
    ]
    assert 2000 <= steps[0][-1] < MAX_STEPS
    # The second leg goes on from the first one's checkpoint, not from step 0.
    assert steps[1][0] > steps[0][-1] and steps[1][-1] > MAX_STEPS - 1000
    for leg in (0, 1):
        assert (run_dir / f"leg{leg}.exit").read_text().split()[0] == "0"
        cpu = [line.split() for line in (run_dir / f"leg{leg}.tree.cpu").read_text().splitlines()]
        # Samples while it ran, then the trainer's resource usage at its exit: it only grows, and
        # a leg of TensorFlow start-up, two builds and training takes more than a CPU second.
        assert [float(c) for _, c in cpu] == sorted(float(c) for _, c in cpu) and float(cpu[-1][1]) >= 1
    assert (run_dir / "models" / "long-0" / "BasicLearning.nn").is_file()


def test_a_run_keeps_the_scene_of_its_first_leg(two_legs):
    run_dir, _, _ = two_legs
    refused = long_run("leg", run_dir, "--env=3DBall")
    assert refused.returncode != 0
    assert "already holds a run of Basic" in refused.stderr
    assert not (run_dir / "leg2.log").exists()
    missing = long_run("leg", run_dir.parent / "empty")
    assert missing.returncode != 0 and "give the scene of its first leg with --env" in missing.stderr


def test_report_of_the_two_legs(two_legs):
    run_dir, _, _ = two_legs
    shown = long_run("report", run_dir, "--stretch=2000", "--rolling=2")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    legs = re.findall(r"^\| (\d|all) \| (\d+) - (\d+) \| (\d+) [^|]*\| (\d+) \|", out, re.MULTILINE)
    assert [leg[0] for leg in legs] == ["0", "1", "all"], out
    (_, start0, end0, _, cpu0), (_, start1, end1, _, cpu1), (_, _, end_all, _, cpu_all) = legs
    assert (
        start0 == "0" and start1 == end0 and 2000 <= int(end0) < MAX_STEPS - 1000 < int(end1) == int(end_all)
    )
    assert abs(int(cpu_all) - int(cpu0) - int(cpu1)) <= 1  # each figure rounded
    assert "exit status 0" in out
    windows = re.search(r"BasicLearning: (\d+) summary windows with a mean reward", out)
    # Every window of both legs that the console showed with a mean reward, each step once. A
    # window written after the trainer passed max_steps shows the float max_steps ("10000.0"), as
    # the original's console did.
    shown_windows = {
        step
        for leg in (0, 1)
        for step in re.findall(r"Step: (\d+)(?:\.0)?\. Time Elapsed", (run_dir / f"leg{leg}.log").read_text())
    }
    assert windows and int(windows[1]) == len(shown_windows), out
    assert "Rolling mean of 2 windows" in out and "Benchmark 0.93:" in out
    stretches = re.findall(r"^\| (\d+) - (\d+) \| ", out, re.MULTILINE)
    assert stretches[:5] == [(str(i), str(i + 2000)) for i in range(0, MAX_STEPS, 2000)], out
    assert "| Steps | Cumulative Reward | Episode Length | Entropy |" in out


def test_train_to_benchmark_helpers_on_the_run(two_legs, tmp_path):
    run_dir, _, _ = two_legs
    bench = benchmark_module("train_to_benchmark")
    timers = run_dir / "summaries" / "long-0_timers.json"
    rate = bench.loop_steps_per_second(timers)
    assert rate is not None and rate > 0
    # Counted per brain: a scene of two brains advances half as many steps per call.
    assert bench.loop_steps_per_second(timers, brains=2) == pytest.approx(rate / 2)
    assert bench.scene_brains("SoccerTwos") == ("StrikerLearning", "GoalieLearning")
    # A brain without a section of its own gets only the keys the case changes (the rest comes
    # from the default section when the config loads).
    written = yaml.safe_load(
        bench.case_config("VisualFoodCollector", "ppo", str(tmp_path), max_steps=5e5).read_text()
    )
    assert written["VisualBananaLearning"] == {"max_steps": 5e5}
    written = yaml.safe_load(bench.case_config("SoccerTwos", "ppo", str(tmp_path), max_steps=1e5).read_text())
    assert written["StrikerLearning"]["max_steps"] == written["GoalieLearning"]["max_steps"] == 1e5
    shipped = load_config(str(bench.CONFIG))  # reads the shipped "1e-3" as a number
    assert {k: v for k, v in written["StrikerLearning"].items() if k != "max_steps"} == {
        k: v for k, v in shipped["StrikerLearning"].items() if k != "max_steps"
    }
