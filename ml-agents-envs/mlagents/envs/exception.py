"""Exceptions raised by the Python side of the wire (``mlagents.envs``)."""

import logging

logger = logging.getLogger("mlagents.envs")


class UnityException(Exception):
    """Base class of every error raised by ``mlagents.envs``."""


class UnityEnvironmentException(UnityException):
    """The environment cannot be used as asked: no build found, API version mismatch, invalid reset
    parameter, editor mode with a non-zero worker id, or a call made after ``close()``."""


class UnityCommunicationException(UnityException):
    """The conversation with the environment broke off: the build stopped answering normally, its
    process exited, or (env managers) a worker process died."""


class UnityActionException(UnityException):
    """``step()`` got actions that do not fit the environment, or was called when no episode runs."""


class SamplerException(UnityException):
    """A reset-parameter sampler is misconfigured (see ``mlagents.envs.sampler_class``)."""


class UnityTimeOutException(UnityException):
    """The environment did not answer in time.

    :param message: the error message.
    :param log_file_path: optional path of a Unity ``UnitySDK.log``; its "Exception"/"Error" blocks
        are logged before the exception is raised, to point at what went wrong inside the build.
    """

    def __init__(self, message: str, log_file_path: str | None = None) -> None:
        if log_file_path is not None:
            _log_unity_errors(log_file_path)
        super().__init__(message)


def _log_unity_errors(log_file_path: str) -> None:
    """Log every block of a UnitySDK.log that starts with an "Exception" or "Error" line and ends at
    the next empty line (Unity writes each event as type / message / stack trace)."""
    try:
        with open(log_file_path, encoding="utf-8", errors="replace") as log_file:
            lines = log_file.readlines()
    except OSError:
        logger.error("An error might have occured in the environment. No UnitySDK.log file could be found.")
        return
    collected = ["\n"]
    in_block = False
    for line in lines:
        stripped = line.strip()
        if stripped in ("Exception", "Error"):
            in_block = True
            collected.append("-" * 22 + "\n")
        if stripped == "":
            in_block = False
        if in_block:
            collected.append(stripped + "\n")
    logger.info("".join(collected))
    logger.error(
        "An error might have occured in the environment. "
        f"You can check the logfile for more information at {log_file_path}"
    )


class UnityWorkerInUseException(UnityException):
    """The port ``base_port + worker_id`` cannot be used (another environment or program holds it).

    :param worker_id: the worker id whose port is taken.
    :param port: the port itself; when given, the message names it and says how to pick another.
    """

    MESSAGE_TEMPLATE = (
        "Couldn't start socket communication because worker number {} is still in use. "
        "You may need to manually close a previously opened environment "
        "or use a different worker number."
    )

    def __init__(self, worker_id: int, port: int | None = None) -> None:
        message = self.MESSAGE_TEMPLATE.format(str(worker_id))
        if port is not None:
            message += (
                f" Port {port} (base port + worker id) is already in use on this machine: pick another "
                f"port with --base-port (UnityEnvironment(base_port=...)) or another worker_id."
            )
        super().__init__(message)
