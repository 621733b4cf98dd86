"""benchmarks/process_cpu.py: how it finds and sorts a run's processes, and a real short run."""

import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlagents.trainers.tests.learn_helpers import assert_nothing_left
from mlagents.trainers.tests.test_long_run_benchmark import BENCHMARKS, benchmark_module

BASIC = Path(BENCHMARKS).parent / "example-envs" / "builds" / "Basic.x86_64"

# A parent whose child starts a grandchild in a session of its own (as a worker starts a build),
# all three waiting until this test closes their standard input.
TREE = textwrap.dedent(
    """
    import subprocess, sys
    depth = int(sys.argv[1])
    if depth < 2:
        child = subprocess.Popen(
            [sys.executable, __file__, str(depth + 1)], stdin=subprocess.PIPE, start_new_session=depth == 1
        )
    print(depth, flush=True)
    sys.stdin.read()
    if depth < 2:
        child.stdin.close()
        child.wait()
    """
)


def test_every_process_below_the_trainer_is_found_and_sorted(tmp_path):
    process_cpu = benchmark_module("process_cpu")
    script = tmp_path / "tree.py"
    script.write_text(TREE)
    root = subprocess.Popen(
        [sys.executable, str(script), "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        # The grandchild prints first: once the root has printed, all three are running.
        assert root.stdout.readline().strip() in {"0", "1", "2"}
        found = {}
        while len(found) < 3:
            found = {int(pid): parent for pid, parent, _ in process_cpu._processes_under(root.pid)}
        kinds = sorted(process_cpu.kind_of(pid, parent, root.pid) for pid, parent in found.items())
        assert kinds == ["builds", "trainer", "workers"]
        outside = {int(pid) for pid, _, _ in process_cpu._processes_under(root.pid)} - set(found)
        assert not outside
    finally:
        root.stdin.close()
        root.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not BASIC.exists(), reason="the Basic build is missing")
def test_a_short_run_has_cpu_in_every_kind_of_process(free_port_range):
    base_port = free_port_range(2)
    result = subprocess.run(
        [
            sys.executable,
            str(Path(BENCHMARKS) / "process_cpu.py"),
            "--env=Basic",
            "--num-envs=2",
            "--max-steps=300",
            f"--base-port={base_port}",
        ],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    row = re.search(
        r"\| this tree \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \(\+ ([\d.]+)\) \| (\d+) \| (\d+) \|",
        result.stdout,
    )
    assert row, result.stdout
    trainer, workers, builds, total, unseen = (float(value) for value in row.groups()[:5])
    assert trainer > 0 and workers > 0 and builds > 0
    assert total == pytest.approx(trainer + workers + builds, abs=0.02)
    # Most of what the operating system accounted to the run was seen process by process.
    assert unseen < total
    assert_nothing_left(ports=[base_port, base_port + 1])


def test_progress_lines_of_both_trainers_give_the_steady_rate_and_the_time_outside():
    process_cpu = benchmark_module("process_cpu")
    output = "\n".join(
        [
            "INFO:mlagents.trainers: run: BasicLearning: Step: 2001. Time Elapsed: 1.5 s Mean Reward: 0.1.",
            "INFO:mlagents.trainers: run-0: BasicLearning: Step: 4000. Time Elapsed: 2.5 s Mean Reward: 0.2.",
            "INFO:mlagents.trainers: run: BasicLearning: Step: 6001.0. Time Elapsed: 3.5 s Mean Reward: 0.3.",
        ]
    )
    figures = process_cpu.progress_figures(output, wall=5.0)
    assert figures == {"steady": 2000.0, "outside": 1.5}
    one_line = process_cpu.progress_figures(output.splitlines()[0], wall=5.0)
    assert one_line["outside"] == 3.5 and math.isnan(one_line["steady"])
