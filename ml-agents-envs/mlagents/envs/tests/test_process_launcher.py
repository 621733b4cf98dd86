"""Finding builds, their command lines, and starting/ending real child processes."""

import os
import signal
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mlagents.envs.exception import UnityCommunicationException, UnityEnvironmentException
from mlagents.envs.process_launcher import (
    BuildProcess,
    build_command,
    candidate_patterns,
    describe_returncode,
    resolve_executable,
    strip_extensions,
)


def make_executable(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + textwrap.dedent(script))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(
    "given, stripped",
    [
        ("  envs/3DBall.x86_64 ", "envs/3DBall"),
        ("envs/3DBall.x86", "envs/3DBall"),
        ("Ball.app", "Ball"),
        ("Ball.exe", "Ball"),
        ("a.x86_64/b.x86", "a/b"),  # every occurrence goes, anywhere in the path
    ],
)
def test_strip_extensions(given, stripped):
    assert strip_extensions(given) == stripped


def test_candidate_patterns_per_platform(tmp_path):
    cwd = str(tmp_path)
    assert candidate_patterns("builds/Ball.x86_64", "linux", cwd) == [
        f"{cwd}/builds/Ball.x86_64",
        f"{cwd}/builds/Ball.x86",
        "builds/Ball.x86_64",
        "builds/Ball.x86",
    ]
    assert candidate_patterns("Ball", "darwin", cwd) == [
        f"{cwd}/Ball.app/Contents/MacOS/Ball",
        "Ball.app/Contents/MacOS/Ball",
        f"{cwd}/Ball.app/Contents/MacOS/*",
        "Ball.app/Contents/MacOS/*",
    ]
    assert candidate_patterns("Ball.exe", "win32", cwd) == [f"{cwd}/Ball.exe", "Ball.exe"]
    assert candidate_patterns("Ball", "sunos5", cwd) == []


def test_resolve_executable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "builds").mkdir()
    (tmp_path / "builds" / "Ball.x86").write_text("")
    assert resolve_executable("builds/Ball", "linux") == (str(tmp_path / "builds" / "Ball.x86"), "Ball")
    (tmp_path / "builds" / "Ball.x86_64").write_text("")
    assert resolve_executable(" builds/Ball.x86_64", "linux") == (
        str(tmp_path / "builds" / "Ball.x86_64"),
        "Ball",
    )
    # An absolute path works from any directory.
    monkeypatch.chdir("/")
    assert resolve_executable(str(tmp_path / "builds" / "Ball"), "linux")[0] == str(
        tmp_path / "builds" / "Ball.x86_64"
    )
    macos = tmp_path / "Mac.app" / "Contents" / "MacOS"
    macos.mkdir(parents=True)
    (macos / "SomethingElse").write_text("")
    assert resolve_executable(str(tmp_path / "Mac"), "darwin") == (str(macos / "SomethingElse"), "Mac")
    assert resolve_executable(str(tmp_path / "Missing"), "linux") == (None, "Missing")


def test_build_command():
    assert build_command("/b/Ball.x86_64", 5005, False, [], False) == ["/b/Ball.x86_64", "--port", "5005"]
    assert build_command("/b/Ball.x86_64", 5006, True, ["--x", "1"], False) == [
        "/b/Ball.x86_64",
        "-nographics",
        "-batchmode",
        "--port",
        "5006",
        "--x",
        "1",
    ]
    assert build_command("/my builds/Ball", 5007, True, ["ignored"], True) == (
        "exec xvfb-run --auto-servernum --server-args='-screen 0 640x480x24' '/my builds/Ball' --port 5007"
    )


def test_describe_returncode():
    assert describe_returncode(3) == "3"
    assert describe_returncode(-9) == "-9 (SIGKILL)"


def test_start_logs_output_and_sets_the_session_and_interpreter(tmp_path, monkeypatch, assert_gone):
    monkeypatch.delenv("MLAGENTS_PYTHON", raising=False)
    exe = make_executable(
        tmp_path / "Env.x86_64",
        """\
        echo "python=$MLAGENTS_PYTHON"
        echo "args=$*"
        echo "oops" >&2
        exit 3
        """,
    )
    log = tmp_path / "env.log"
    build = BuildProcess.start([str(exe), "--port", "1"], str(log))
    assert build.popen.wait(timeout=10) == 3
    text = log.read_text()
    assert f"python={sys.executable}" in text and "args=--port 1" in text and "oops" in text
    assert build.log_tail(2) == "args=--port 1\noops"
    with pytest.raises(UnityCommunicationException) as error:
        build.check_alive()
    message = str(error.value)
    assert "exited unexpectedly with code 3" in message
    assert f"Command line: {exe} --port 1" in message and str(log) in message and "oops" in message
    build.end(grace=0)
    assert_gone(build.popen)


def test_start_keeps_a_given_interpreter(tmp_path, monkeypatch):
    monkeypatch.setenv("MLAGENTS_PYTHON", "/opt/custom/python")
    exe = make_executable(tmp_path / "Env", 'echo "python=$MLAGENTS_PYTHON"\n')
    build = BuildProcess.start([str(exe)], str(tmp_path / "log"))
    build.popen.wait(timeout=10)
    assert "python=/opt/custom/python" in (tmp_path / "log").read_text()
    build.end(grace=0)


def test_new_session(tmp_path):
    exe = make_executable(tmp_path / "Env", "sleep 30\n")
    build = BuildProcess.start([str(exe)], str(tmp_path / "log"))
    try:
        assert os.getsid(build.pid) == build.pid and os.getpgid(build.pid) == build.pid
        build.check_alive()  # still running: no error
    finally:
        build.end(grace=0)
    assert build.popen.returncode == -signal.SIGTERM


def test_end_kills_a_build_that_ignores_sigterm_and_its_children(tmp_path, assert_gone, group_members):
    exe = make_executable(
        tmp_path / "Stubborn",
        """\
        trap '' TERM
        sleep 60 &
        echo started
        while true; do sleep 0.05; done
        """,
    )
    log = tmp_path / "log"
    build = BuildProcess.start([str(exe)], str(log))
    deadline = time.monotonic() + 10
    while "started" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(group_members(build.pid)) >= 2  # the script and its background sleep
    start = time.monotonic()
    assert build.end(grace=0.2, terminate_grace=0.3) == -signal.SIGKILL
    assert time.monotonic() - start < 20  # not waiting for its 60 s child, even on a loaded machine
    assert_gone(build.popen)


def test_end_leaves_an_exited_build_alone(tmp_path):
    exe = make_executable(tmp_path / "Quick", "exit 0\n")
    build = BuildProcess.start([str(exe)], str(tmp_path / "log"))
    start = time.monotonic()
    assert build.end(grace=60) == 0
    assert time.monotonic() - start < 20  # no wait for the grace, even on a loaded machine


def test_not_executable(tmp_path):
    path = tmp_path / "Env.x86_64"
    path.write_text("not a program")
    with pytest.raises(UnityEnvironmentException, match="chmod"):
        BuildProcess.start([str(path)], str(tmp_path / "log"))


def test_log_tail_of_a_missing_log(tmp_path):
    exe = make_executable(tmp_path / "Env", "exit 0\n")
    build = BuildProcess.start([str(exe)], str(tmp_path / "log"))
    build.end(grace=1)
    (tmp_path / "log").unlink()
    assert build.log_tail() == ""
    assert "is empty" in build.describe()
