"""RestartPolicy: lifetime and rate limits per worker, -1 unlimited, which errors restart."""

import pytest

from mlagents.envs.exception import (
    UnityActionException,
    UnityCommunicationException,
    UnityEnvironmentException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents.envs.restart_policy import (
    RestartLimitExceeded,
    RestartLimits,
    RestartPolicy,
    is_restartable,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_defaults_are_those_of_later_ml_agents() -> None:
    assert RestartLimits() == RestartLimits(
        max_lifetime_restarts=10, rate_limit_n=1, rate_limit_period_s=60.0
    )


def test_rate_limit_per_worker_and_window() -> None:
    clock = FakeClock()
    policy = RestartPolicy(RestartLimits(10, 1, 60.0), clock)
    assert policy.request(0) == 1
    assert policy.request(1) == 1  # another worker has its own quota
    clock.now += 59.0
    cause = UnityTimeOutException("no answer\nmore")
    with pytest.raises(RestartLimitExceeded, match="restarts-rate-limit-n=1") as raised:
        policy.request(0, cause)
    assert raised.value.__cause__ is cause and raised.value.worker_id == 0
    assert "UnityTimeOutException: no answer." in str(raised.value)
    clock.now += 1.5  # the first restart left the 60 s window
    assert policy.request(0) == 2
    assert policy.total_restarts == 3 and policy.restarts_of(0) == 2


def test_lifetime_limit() -> None:
    clock = FakeClock()
    policy = RestartPolicy(RestartLimits(2, -1, 60.0), clock)
    policy.request(3)
    policy.request(3)
    with pytest.raises(RestartLimitExceeded, match="max-lifetime-restarts=2"):
        policy.request(3)
    assert policy.refusal(4) is None


def test_zero_forbids_and_minus_one_is_unlimited() -> None:
    with pytest.raises(RestartLimitExceeded):
        RestartPolicy(RestartLimits(0, 1, 60.0)).request(0)
    unlimited = RestartPolicy(RestartLimits(-1, -1, 1.0), FakeClock())
    for _ in range(50):
        unlimited.request(0)
    assert unlimited.restarts_of(0) == 50


@pytest.mark.parametrize(
    "bad", [{"max_lifetime_restarts": -2}, {"rate_limit_n": 1.5}, {"rate_limit_period_s": 0}]
)
def test_invalid_limits(bad: dict) -> None:
    with pytest.raises(ValueError):
        RestartLimits(**bad)


def test_restartable_errors() -> None:
    assert is_restartable(UnityCommunicationException("gone"))
    assert is_restartable(UnityTimeOutException("silent"))
    assert not is_restartable(RestartLimitExceeded("limit"))
    assert not is_restartable(UnityEnvironmentException("no build"))
    assert not is_restartable(UnityActionException("bad action"))
    assert not is_restartable(UnityWorkerInUseException(3))
    assert not is_restartable(KeyboardInterrupt())
