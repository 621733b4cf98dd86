"""Finding, starting, watching and ending an environment build (a Unity player or an example launcher).

A build runs in its own session (so Ctrl-C in the terminal reaches Python first, and ending the
process group ends everything the build started), with stdout and stderr in a log file whose
last lines are shown when something goes wrong.
"""

import glob
import logging
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Sequence

from mlagents.envs.exception import UnityCommunicationException, UnityEnvironmentException

logger = logging.getLogger("mlagents.envs")

# Extensions users may type; every occurrence is removed, in this order, as the original did.
STRIPPED_EXTENSIONS = (".app", ".exe", ".x86_64", ".x86")
LOG_TAIL_LINES = 20
# Seconds a build gets to exit after SIGTERM before SIGKILL.
TERMINATE_GRACE = 3.0


def strip_extensions(file_name: str) -> str:
    """``file_name`` without surrounding blanks and without any of ``STRIPPED_EXTENSIONS``."""
    name = file_name.strip()
    for extension in STRIPPED_EXTENSIONS:
        name = name.replace(extension, "")
    return name


def candidate_patterns(file_name: str, platform: str = sys.platform, cwd: str | None = None) -> list[str]:
    """The glob patterns tried, in order, to find the executable of ``file_name`` on ``platform``."""
    cwd = os.getcwd() if cwd is None else cwd
    name = strip_extensions(file_name)
    true_filename = os.path.basename(os.path.normpath(name))
    local = os.path.join(cwd, name)
    if platform in ("linux", "linux2"):
        return [local + ".x86_64", local + ".x86", name + ".x86_64", name + ".x86"]
    if platform == "darwin":
        return [
            os.path.join(local + ".app", "Contents", "MacOS", true_filename),
            os.path.join(name + ".app", "Contents", "MacOS", true_filename),
            os.path.join(local + ".app", "Contents", "MacOS", "*"),
            os.path.join(name + ".app", "Contents", "MacOS", "*"),
        ]
    if platform == "win32":
        return [local + ".exe", name + ".exe"]
    return []


def resolve_executable(
    file_name: str, platform: str = sys.platform, cwd: str | None = None
) -> tuple[str | None, str]:
    """Find the executable of an environment the way Unity ML-Agents 0.9 does.

    :param file_name: path of the build, with or without its extension (``.x86_64``, ``.app``, ...).
    :return: ``(path to launch or None when nothing matches, base name of the environment)``.
    """
    true_filename = os.path.basename(os.path.normpath(strip_extensions(file_name)))
    for pattern in candidate_patterns(file_name, platform, cwd):
        matches = glob.glob(pattern)
        if matches:
            return matches[0], true_filename
    return None, true_filename


def build_command(
    launch_string: str, port: int, no_graphics: bool, args: Sequence[str], docker_training: bool
) -> list[str] | str:
    """The command that starts a build: an argv list, or a shell string in docker mode
    (``no_graphics`` and ``args`` are ignored there, as in the original)."""
    if docker_training:
        # exec: the shell is replaced by xvfb-run, so signals reach it and not a shell.
        return (
            "exec xvfb-run --auto-servernum --server-args='-screen 0 640x480x24' "
            f"{shlex.quote(launch_string)} --port {port}"
        )
    graphics = ["-nographics", "-batchmode"] if no_graphics else []
    return [launch_string, *graphics, "--port", str(port), *[str(arg) for arg in args]]


def describe_returncode(returncode: int) -> str:
    """``"3"``, or ``"-9 (SIGKILL)"`` for a process ended by a signal."""
    if returncode < 0:
        try:
            return f"{returncode} ({signal.Signals(-returncode).name})"
        except ValueError:
            pass
    return str(returncode)


class BuildProcess:
    """A started build: its ``popen``, the ``command_line`` shown to users and its ``log_path``."""

    def __init__(self, popen: subprocess.Popen[bytes], command_line: str, log_path: str) -> None:
        self.popen = popen
        self.command_line = command_line
        self.log_path = log_path

    @classmethod
    def start(cls, command: list[str] | str, log_path: str) -> "BuildProcess":
        """Start ``command`` (argv list, or shell string) in a new session, output to ``log_path``.

        The child gets ``MLAGENTS_PYTHON`` = this interpreter unless our environment already sets it
        (the example launchers use it to find the interpreter).

        :raises UnityEnvironmentException: the file cannot be executed.
        """
        env = dict(os.environ)
        env.setdefault("MLAGENTS_PYTHON", sys.executable)
        shell = isinstance(command, str)
        command_line = command if isinstance(command, str) else shlex.join(command)
        with open(log_path, "wb") as log_file:
            try:
                popen = subprocess.Popen(
                    command,
                    shell=shell,
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
            except OSError as error:
                raise UnityEnvironmentException(
                    f"Couldn't start the environment with: {command_line}\n{error}\n"
                    "Make sure the file is an environment build and is executable (chmod +x)."
                ) from error
        logger.debug("Started environment (pid %d): %s; log: %s", popen.pid, command_line, log_path)
        return cls(popen, command_line, log_path)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def poll(self) -> int | None:
        """The exit code, or None while the build runs."""
        return self.popen.poll()

    def check_alive(self) -> None:
        """:raises UnityCommunicationException: the build exited (names its exit code and log tail)."""
        returncode = self.popen.poll()
        if returncode is not None:
            raise UnityCommunicationException(
                f"The environment process exited unexpectedly with code {describe_returncode(returncode)}.\n"
                + self.describe()
            )

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of the build's log ("" when empty or unreadable)."""
        try:
            with open(self.log_path, "rb") as log_file:
                log_file.seek(0, os.SEEK_END)
                size = log_file.tell()
                log_file.seek(max(0, size - 64 * 1024))
                text = log_file.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def describe(self) -> str:
        """Command line, log path and the log's last lines, for error messages."""
        tail = self.log_tail()
        if tail:
            log = f"Last lines of the environment's log ({self.log_path}):\n{tail}"
        else:
            log = f"The environment's log ({self.log_path}) is empty."
        return f"Command line: {self.command_line}\n{log}"

    def end(self, grace: float, terminate_grace: float = TERMINATE_GRACE) -> int | None:
        """Make sure the build and everything in its process group is gone.

        :param grace: seconds to wait for a voluntary exit (e.g. after the goodbye message)
            before SIGTERM.
        :param terminate_grace: seconds between SIGTERM and SIGKILL.
        :return: the build's exit code.
        """
        if grace > 0:
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        if self.popen.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.popen.wait(timeout=terminate_grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.popen.wait()
        # Whatever the build started in its session (e.g. behind a launcher script) goes too.
        self._signal_group(signal.SIGKILL)
        return self.popen.returncode

    def _signal_group(self, signum: int) -> None:
        if hasattr(os, "killpg"):
            try:
                os.killpg(self.popen.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass
        elif self.popen.poll() is None:
            self.popen.kill()
