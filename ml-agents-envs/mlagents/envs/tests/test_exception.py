"""Exception hierarchy and messages of mlagents.envs.exception."""

import logging

import pytest

import mlagents.envs
from mlagents.envs import exception
from mlagents.envs.exception import UnityException, UnityTimeOutException, UnityWorkerInUseException

#: Every exception class that mlagents.envs.exception defines.
EXCEPTIONS = [
    value
    for value in vars(exception).values()
    if isinstance(value, type) and issubclass(value, Exception) and value.__module__ == exception.__name__
]


def test_the_exceptions_are_those_of_0_9_and_exported():
    names = sorted(cls.__name__ for cls in EXCEPTIONS)
    assert len(names) == 7 and set(names) <= set(mlagents.envs.__all__)


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: cls.__name__)
def test_every_exception_is_a_unity_exception(cls):
    assert issubclass(cls, UnityException) and issubclass(UnityException, Exception)


def test_worker_in_use_message():
    assert str(UnityWorkerInUseException(3)) == (
        "Couldn't start socket communication because worker number 3 is still in use. "
        "You may need to manually close a previously opened environment or use a different worker number."
    )
    with_port = str(UnityWorkerInUseException(3, port=5008))
    assert with_port.startswith(str(UnityWorkerInUseException(3)))
    assert "Port 5008" in with_port and "--base-port" in with_port and "worker_id" in with_port


def test_timeout_with_a_unity_log_reports_its_errors(tmp_path, caplog):
    log = tmp_path / "UnitySDK.log"
    log.write_text(
        "2019-08-01 10:00\n \nLog\nall good\n\nException\nNullReferenceException: x\n  at Foo()\n\nLog\nfine\n\n"
    )
    with caplog.at_level(logging.INFO, logger="mlagents.envs"):
        error = UnityTimeOutException("too slow", str(log))
    assert str(error) == "too slow"
    assert "-" * 22 + "\nException\nNullReferenceException: x\nat Foo()" in caplog.text
    assert "all good" not in caplog.text and "fine" not in caplog.text
    assert f"You can check the logfile for more information at {log}" in caplog.text


def test_timeout_with_a_missing_log(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="mlagents.envs"):
        UnityTimeOutException("too slow", str(tmp_path / "nope.log"))
    assert "No UnitySDK.log file could be found." in caplog.text
