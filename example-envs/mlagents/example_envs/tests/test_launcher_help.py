"""The launcher's command line: ``--help`` lists every option the build accepts (and starts
nothing), an unknown ``--option`` is refused by name, and the arguments Python callers and Unity
users pass keep being accepted.

The options are taken from the parser itself (:func:`launcher_parser`), so an option added without
help text, or left out of the documentation's table, fails here.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.process_launcher import build_command
from mlagents.example_envs.sdk import cli
from mlagents.example_envs.sdk.arguments import (
    BUILD_ARGS_VARIABLE,
    VIDEO_ONLY_OPTIONS,
    launcher_help,
    launcher_parser,
    refused_argument,
    video_parser,
)

ROOT = Path(__file__).resolve().parents[4]
BUILDS = ROOT / "example-envs" / "builds"
OPTIONS_PAGE = ROOT / "docs" / "Learning-Environment-Create-New.md"
HELP_OPTIONS = ["-h", "--help"]

# What a user may pass to a Unity player (and so to a build written for one): all ignored.
UNITY_PLAYER_ARGUMENTS = [
    "-logFile",
    "-",
    "-screen-width",
    "640",
    "-screen-height",
    "480",
    "-screen-fullscreen",
    "0",
    "-force-glcore",
    "-force-vulkan",
    "-nolog",
    "-popupwindow",
    "-height",
]


def parser_options() -> list[str]:
    """Every option string the build's parser accepts."""
    return [option for action in launcher_parser()._actions for option in action.option_strings]


def test_every_option_has_one_line_of_help() -> None:
    parser = launcher_parser()
    assert len(parser_options()) >= 20
    missing = [action.option_strings for action in parser._actions if not (action.help or "").strip()]
    assert not missing, f"options without help text: {missing}"
    help_lines = launcher_help().splitlines()
    for option in parser_options() + HELP_OPTIONS:
        lines = [line for line in help_lines if re.match(rf"\s+(\S+, )*{re.escape(option)}\b", line)]
        assert len(lines) == 1, f"{option} is not on exactly one line of the help: {lines}"
    # The video mode's own parser accepts nothing the launcher does not know (and list).
    video_options = {option for action in video_parser()._actions for option in action.option_strings}
    assert video_options - set(HELP_OPTIONS) <= set(parser_options())
    assert set(VIDEO_ONLY_OPTIONS) <= video_options


def test_every_option_is_in_the_documentation_table() -> None:
    text = OPTIONS_PAGE.read_text(encoding="utf-8")
    section = text.split("## Command-line arguments of a build", 1)[1].split("\n## ", 1)[0]
    # The table is one block of consecutive "|" lines (a blank line inside would end it).
    tables = re.findall(r"(?:^\|.*\|\n)+", section, flags=re.MULTILINE)
    assert len(tables) == 1, f"the options table is split into {len(tables)} blocks"
    documented = set(re.findall(r"`(--?[\w-]+)", tables[0]))
    missing = sorted(set(parser_options() + HELP_OPTIONS) - documented)
    assert not missing, f"not in the table of {OPTIONS_PAGE.name}: {missing}"


def _listening_socket(port: int) -> socket.socket:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(1)
    server.setblocking(False)
    return server


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "mlagents.example_envs", "--help"],
        [sys.executable, "-m", "mlagents.example_envs", "-h"],
        [sys.executable, "-m", "mlagents.example_envs", "3DBall", "--help"],
        [sys.executable, "-m", "mlagents.example_envs", "3DBall", "-h"],
        [str(BUILDS / "3DBall.x86_64"), "--help"],
    ],
    ids=["module--help", "module-h", "name--help", "name-h", "launcher-script--help"],
)
def test_help_prints_every_option_and_starts_nothing(command: list[str], free_port: int) -> None:
    # Python's side listens on the port the build is given: a build that started would connect.
    with _listening_socket(free_port) as server:
        done = subprocess.run(
            command + ["--port", str(free_port)], capture_output=True, text=True, timeout=30
        )
        with pytest.raises(BlockingIOError):
            server.accept()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: "), done.stdout[:200]
    for option in parser_options() + HELP_OPTIONS:
        assert re.search(rf"^\s+(\S+, )*{re.escape(option)}\b", done.stdout, flags=re.MULTILINE), option
    assert "single dash" in done.stdout and "3DBall" in done.stdout


@pytest.mark.parametrize(
    "arguments, named",
    [
        (["--bogus", "1"], "--bogus"),
        (["--port", "5005", "--no-such-flag"], "--no-such-flag"),
        (["--por", "5005"], "--por"),  # no abbreviations: a typo is not taken for --port
        (["--prot=5005"], "--prot"),
        (["-nographics", "stray"], "'stray'"),
        (["--episodes", "3"], "--episodes is only read with --record-video"),
    ],
)
def test_unknown_option_is_refused_by_name(
    arguments: list[str], named: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(BUILD_ARGS_VARIABLE, raising=False)
    monkeypatch.setattr(cli, "run_client", _must_not_start)
    assert cli.main(["Basic", *arguments]) == 2
    error = capsys.readouterr().err
    assert named in error and "--help" in error
    assert error.strip().count("\n") == 0


def test_unknown_option_is_refused_in_video_mode_and_build_args(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "video_main", _must_not_start)
    assert cli.main(["Basic", "--record-video", "x.gif", "--epsiodes", "2"]) == 2
    assert "--epsiodes" in capsys.readouterr().err
    monkeypatch.setattr(cli, "run_client", _must_not_start)
    monkeypatch.setenv(BUILD_ARGS_VARIABLE, "--brian-type BasicLearning=heuristic")
    assert cli.main(["Basic"]) == 2
    assert "--brian-type" in capsys.readouterr().err


def test_unknown_option_exits_2_from_the_command_line() -> None:
    command = [sys.executable, "-m", "mlagents.example_envs", "Basic", "--bogus-option"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "--bogus-option" in done.stderr and done.stdout == ""


def _must_not_start(*args: object, **kwargs: object) -> int:
    raise AssertionError("the build started")


def test_arguments_of_python_callers_and_unity_players_are_accepted() -> None:
    # What UnityEnvironment passes (with and without graphics, with extra arguments of a test hook).
    for no_graphics in (True, False):
        command = build_command("build", 5005, no_graphics, ["--frame-time-ms", "1"], False)
        assert refused_argument(command[1:]) is None, command
    assert refused_argument(UNITY_PLAYER_ARGUMENTS + ["--port", "5005", "-nographics", "-batchmode"]) is None
    assert refused_argument(["--record-video", "x.gif", "--episodes", "2", "--seed", "3"], video=True) is None


def test_unity_environment_starts_a_build_with_unity_player_arguments(free_port: int) -> None:
    env = UnityEnvironment(
        file_name=str(BUILDS / "Basic.x86_64"),
        base_port=free_port,
        no_graphics=True,
        args=UNITY_PLAYER_ARGUMENTS,
        timeout_wait=60,
    )
    try:
        info = env.reset(train_mode=True)["BasicLearning"]
        assert len(info.agents) == 1
    finally:
        env.close()
