"""Run the test suite many times, each time in a different shuffled order, optionally with a
background CPU load, and count every test that ever failed.

    .venv/bin/python tools/stress_suite.py --runs 10 --load 2            # the whole suite
    .venv/bin/python tools/stress_suite.py --runs 20 --load 2 --seed 7 \\
        ml-agents-envs/mlagents/envs/tests/test_subprocess_env_manager.py  # some test files

Run ``i`` (0-based) shuffles with seed ``--seed + i`` (the ``stress_shuffle`` plugin in this folder:
test files shuffled, then the tests inside each file); rerun one order with
``PYTHONPATH=tools .venv/bin/python -m pytest -p stress_shuffle --shuffle-seed SEED``.
``--load K`` starts K busy-loop processes (niceness ``--load-nice``, default 0) for the whole
session, so that the tests meet a machine whose cores are all busy. Every process this script starts is ended when
it returns, also on Ctrl-C or SIGTERM.

Per run it prints the seed, the counts and the time; at the end, each test that failed with how
many runs it failed in, the seeds and the first lines of its first error. Logs and JUnit XML files
go to ``--out`` (default: a new folder under the system's temporary folder). Exit status: 0 when
every run passed, 1 otherwise.
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TOOLS = Path(__file__).resolve().parent
BUSY_LOOP = "import os, sys\nos.nice(int(sys.argv[1]))\nwhile True:\n    pass\n"


@dataclass
class Failure:
    """What is known about one test that failed in at least one run."""

    count: int = 0
    seeds: list[int] = field(default_factory=list)
    first_error: str = ""


@dataclass
class RunResult:
    seed: int
    returncode: int
    seconds: float
    counts: dict[str, int]
    failed: dict[str, str]  # test id -> first lines of its error


def _terminate_session(process: subprocess.Popen) -> None:
    """End a process started with ``start_new_session=True`` and everything still in its session's
    process group (SIGTERM, then SIGKILL)."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; members of its group may remain.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return


def _first_lines(text: str, count: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:count])


def _parse_junit(path: Path) -> tuple[dict[str, int], dict[str, str]]:
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    failed: dict[str, str] = {}
    root = ElementTree.parse(path).getroot()
    for case in root.iter("testcase"):
        counts["tests"] += 1
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        for child in case:
            if child.tag in ("failure", "error"):
                counts["failures" if child.tag == "failure" else "errors"] += 1
                message = child.get("message") or ""
                text = (child.text or "").strip()
                # The last lines of pytest's long report hold the assertion/exception (lines with "E ").
                error_lines = [line for line in text.splitlines() if line.startswith("E ")]
                detail = "\n".join(error_lines[:8]) or _first_lines(text)
                key = test_id if child.tag == "failure" else f"{test_id} [{child.tag}]"
                failed[key] = _first_lines(f"{message}\n{detail}", 10)
            elif child.tag == "skipped":
                counts["skipped"] += 1
    return counts, failed


def run_once(
    seed: int, run_index: int, out: Path, paths: list[str], extra: list[str], run_timeout: float
) -> RunResult:
    xml_path = out / f"run-{run_index:03d}-seed-{seed}.xml"
    log_path = out / f"run-{run_index:03d}-seed-{seed}.log"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "stress_shuffle",
        f"--shuffle-seed={seed}",
        f"--junitxml={xml_path}",
        "-q",
        "-rfE",
        *extra,
        *paths,
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TOOLS), *filter(None, [env.get("PYTHONPATH")])])
    start = time.monotonic()
    with open(log_path, "wb") as log:
        log.write((" ".join(command) + "\n").encode())
        log.flush()
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            returncode = process.wait(run_timeout)
        except subprocess.TimeoutExpired:
            returncode = -1
        finally:
            _terminate_session(process)
    seconds = time.monotonic() - start
    failed: dict[str, str] = {}
    counts: dict[str, int] = {}
    if xml_path.exists():
        try:
            counts, failed = _parse_junit(xml_path)
        except ElementTree.ParseError as error:
            failed["<junit xml unreadable>"] = str(error)
    if returncode != 0 and not failed:
        tail = log_path.read_text(errors="replace").splitlines()[-15:]
        reason = "timed out" if returncode == -1 else f"exited with {returncode}"
        failed[f"<whole run {reason}>"] = "\n".join(tail)
    return RunResult(seed, returncode, seconds, counts, failed)


def start_load(count: int, niceness: int) -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(niceness)], start_new_session=True)
        for _ in range(count)
    ]


def stop_load(load: list[subprocess.Popen]) -> None:
    for process in load:
        _terminate_session(process)


def _raise_on_sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="*", help="test files or node ids (default: the whole suite)")
    parser.add_argument("--runs", type=int, default=10, help="how many runs (default 10)")
    parser.add_argument("--seed", type=int, default=None, help="seed of run 0 (default: random)")
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes to start (default 0)")
    parser.add_argument(
        "--load-nice",
        type=int,
        default=0,
        help="niceness of the busy loops (default 0: they compete with the tests like any other work; "
        "at 19 the scheduler hardly lets them delay anything)",
    )
    parser.add_argument("--run-timeout", type=float, default=3600.0, help="seconds per run (default 3600)")
    parser.add_argument("--out", type=Path, default=None, help="folder for logs and JUnit XML")
    parser.add_argument("--pytest-arg", action="append", default=[], help="one more pytest argument")
    parser.add_argument("--stop-on-failure", action="store_true", help="stop after the first failed run")
    args = parser.parse_args(argv)

    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    out = args.out or Path(tempfile.mkdtemp(prefix="stress-suite-"))
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"stress_suite: {args.runs} runs, seeds {seed}..{seed + args.runs - 1}, "
        f"load {args.load} (nice {args.load_nice}), "
        f"paths {args.paths or 'whole suite'}, logs in {out}",
        flush=True,
    )
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    load = start_load(args.load, args.load_nice)
    results: list[RunResult] = []
    try:
        for index in range(args.runs):
            result = run_once(seed + index, index, out, args.paths, args.pytest_arg, args.run_timeout)
            results.append(result)
            status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
            counts = ", ".join(f"{name} {value}" for name, value in result.counts.items())
            print(
                f"run {index + 1}/{args.runs} seed {result.seed}: {status}; {counts}; {result.seconds:.0f} s",
                flush=True,
            )
            for test_id in result.failed:
                print(f"    failed: {test_id}", flush=True)
            if args.stop_on_failure and result.returncode != 0:
                break
    except KeyboardInterrupt:
        print("stress_suite: interrupted", flush=True)
    finally:
        stop_load(load)

    failures: dict[str, Failure] = {}
    for result in results:
        for test_id, error in result.failed.items():
            failure = failures.setdefault(test_id, Failure(first_error=error))
            failure.count += 1
            failure.seeds.append(result.seed)
    failed_runs = sum(1 for result in results if result.returncode != 0)
    print(f"\nstress_suite: {len(results)} runs, {failed_runs} failed, load {args.load}, first seed {seed}")
    for test_id, failure in sorted(failures.items(), key=lambda item: -item[1].count):
        print(f"\n{failure.count}x {test_id} (seeds {failure.seeds})")
        for line in failure.first_error.splitlines():
            print(f"    {line}")
    summary = {
        "first_seed": seed,
        "load": args.load,
        "paths": args.paths,
        "runs": [vars(result) for result in results],
        "failures": {test_id: vars(failure) for test_id, failure in failures.items()},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return 0 if results and failed_runs == 0 and len(results) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
