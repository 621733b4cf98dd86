"""Project-wide test settings and fixtures."""

import atexit
import signal
import tempfile
from collections.abc import Callable

import pytest

from mlagents.example_envs.ports import find_free_port_range


@pytest.fixture(autouse=True)
def _temporary_files_under_tmp_path(tmp_path, monkeypatch):
    """Build logs and other temporary folders of a test go under its own tmp_path (which pytest
    rotates), never into the machine's /tmp: also in worker processes, which read TMPDIR."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.fixture(scope="session")
def free_port_range() -> Callable[[int], int]:
    """``free_port_range(count)``: a base port whose ``count`` consecutive loopback ports are
    free now and handed to no other test, worker or test run of this machine
    (for ``UnityEnvironment(base_port=...)`` with ``count`` workers)."""
    return find_free_port_range


@pytest.fixture
def free_port(free_port_range: Callable[[int], int]) -> int:
    """One port as ``free_port_range(1)`` gives it."""
    return free_port_range(1)


# ------------------------------------------------------------------ tests that render with OpenGL
#
# Mesa's software OpenGL (llvmpipe) and TensorFlow each carry their own copy of LLVM, and a
# process that loads both crashes (a segmentation fault when rendering after TensorFlow was
# imported, an abort at exit the other way round). The suite imports TensorFlow while it collects
# the trainer tests, so tests marked ``renders`` run in a fresh Python process of their own: the
# first marked test of a module runs all the module's marked tests there, and each test then
# reports the outcome it had in that process.

RENDER_CHILD_VARIABLE = "MLAGENTS_TEST_RENDERING_PROCESS"
_rendered_outcomes: dict[str, tuple[str, str]] = {}


def pytest_configure(config: pytest.Config) -> None:
    # A shell starts a background job (`pytest ... &`) with SIGINT ignored, and processes inherit
    # that: Ctrl-C tests would then wait for a KeyboardInterrupt that never comes. Give the suite
    # (and the processes it starts) the interpreter's usual Ctrl-C behaviour in any case.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line(
        "markers", "renders: renders with OpenGL, so it runs in a Python process without TensorFlow"
    )
    config.addinivalue_line(
        "markers", "opengl: needs offscreen OpenGL from the system (in a child process or a build)"
    )


# OpenGL comes from system packages (libEGL with Mesa, or OSMesa), not from pip. On a machine
# without them the tests that render are skipped with what to install; CI sets this variable so
# that they run (and fail with the same message) instead.
REQUIRE_RENDERING_VARIABLE = "MLAGENTS_REQUIRE_RENDERING"


@pytest.hookimpl(tryfirst=True)  # before -m selects: the quick loop is -m "not slow"
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import os

    # A test of the learning suite is slow too.
    for item in items:
        if item.get_closest_marker("learning") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)

    needs_opengl = [
        item
        for item in items
        if item.get_closest_marker("renders") is not None or item.get_closest_marker("opengl") is not None
    ]
    if not needs_opengl or os.environ.get(REQUIRE_RENDERING_VARIABLE) == "1":
        return
    from mlagents.example_envs.sdk.rendering import offscreen_opengl_missing

    reason = offscreen_opengl_missing()
    if reason is not None:
        for item in needs_opengl:
            item.add_marker(pytest.mark.skip(reason=reason))


def _run_marked_tests_of_module(item: pytest.Item) -> None:
    """Runs the ``renders`` tests of ``item``'s module in a child pytest and records each outcome."""
    import os
    import subprocess
    import sys
    import xml.etree.ElementTree as ElementTree
    from pathlib import Path

    node_ids = [
        other.nodeid
        for other in item.session.items
        if other.path == item.path and other.get_closest_marker("renders") is not None
    ]
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "outcomes.xml"
        process = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", f"--junitxml={report}", *node_ids],
            cwd=item.config.rootpath,
            env={**os.environ, RENDER_CHILD_VARIABLE: "1"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = process.stdout[-6000:] + process.stderr[-3000:]
        outcomes: dict[str, tuple[str, str]] = {}
        if report.exists():
            for case in ElementTree.parse(report).getroot().iter("testcase"):
                problem = next(iter(case), None)
                if problem is None or problem.tag in ("system-out", "system-err"):
                    outcomes[case.get("name", "")] = ("passed", "")
                elif problem.tag == "skipped":
                    outcomes[case.get("name", "")] = ("skipped", problem.get("message", ""))
                else:
                    outcomes[case.get("name", "")] = ("failed", problem.text or problem.get("message", ""))
    for node_id in node_ids:
        name = node_id.rsplit("::", 1)[-1]
        _rendered_outcomes[node_id] = outcomes.get(
            name, ("failed", f"no outcome from the rendering process (exit {process.returncode}):\n{output}")
        )


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    import os

    if pyfuncitem.get_closest_marker("renders") is None or os.environ.get(RENDER_CHILD_VARIABLE):
        return None
    if pyfuncitem.nodeid not in _rendered_outcomes:
        _run_marked_tests_of_module(pyfuncitem)
    outcome, text = _rendered_outcomes[pyfuncitem.nodeid]
    if outcome == "skipped":
        pytest.skip(text)
    if outcome == "failed":
        pytest.fail(f"in the rendering process:\n{text}", pytrace=False)
    return True


# ------------------------------------------------------------- the end of the test process
#
# gRPC's core crashes the interpreter when a channel or server it still runs is destroyed during
# interpreter shutdown. At the end of the session the suite collects garbage while everything is
# still alive, closes what a test left open, and names the leak so that it gets fixed where it
# happened. Under pytest-xdist each worker does this for the tests it ran and hands the names of the
# leaks to the controlling process, which writes the summary.
#
# The suite's process also holds TensorFlow, torch, MuJoCo, gRPC and onnxruntime at once, and
# their native destructors, which run after Python has finished (past faulthandler's reach), have
# crashed it with a segmentation fault after every result was reported (seen twice in 40-minute
# runs). Once the Python exit handlers registered after this file have run (environments closed,
# Ray shut down), the process flushes its output and ends with the session's status without
# running those native destructors: a pytest-xdist worker with the status of its share of the tests
# (the controlling process does not read it), the controlling process with the whole run's.

_leaked_grpc: list[str] = []
_session_status: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import gc
    import sys

    _session_status.append(int(exitstatus))
    gc.collect()
    grpc = sys.modules.get("grpc")
    if grpc is None:
        return
    for thing in gc.get_objects():
        # type(), not isinstance(): isinstance can run properties of foreign objects (torch warns)
        kind = type(thing)
        if issubclass(kind, grpc.Server):
            thing.stop(None)
            _leaked_grpc.append(f"server {kind.__name__}")
        elif issubclass(kind, grpc.Channel):
            thing.close()
            _leaked_grpc.append(f"channel {kind.__name__}")
    gc.collect()
    workeroutput = getattr(session.config, "workeroutput", None)  # set in pytest-xdist workers only
    if workeroutput is not None:
        workeroutput["leaked_grpc"] = list(_leaked_grpc)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # a pytest-xdist hook, called in the controller
    """The leaks a worker found reach the summary, which the controlling process writes."""
    _leaked_grpc.extend(getattr(node, "workeroutput", {}).get("leaked_grpc", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _leaked_grpc:
        terminalreporter.write_line(
            f"{len(_leaked_grpc)} gRPC objects were still open after the last test and were closed "
            f"here ({', '.join(sorted(set(_leaked_grpc)))}): a test or fixture does not close them.",
            yellow=True,
        )


def _end_without_native_destructors() -> None:
    import logging
    import os
    import sys

    if not _session_status:
        return
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(_session_status[-1])


atexit.register(_end_without_native_destructors)
