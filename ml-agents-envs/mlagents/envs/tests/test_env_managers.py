"""SimpleEnvManager on the real Basic build, the shared step rule (auto-reset on global_done), and the
transport of worker exceptions."""

import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.communicator_objects import CommandProto
from mlagents.envs.env_manager import EnvManager, StepInfo, create_environment
from mlagents.envs.env_worker import WorkerError
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import (
    UnityActionException,
    UnityCommunicationException,
    UnityWorkerInUseException,
)
from mlagents.envs.mock_communicator import MockCommunicator
from mlagents.envs.policy import Policy
from mlagents.envs.simple_env_manager import SimpleEnvManager
from mlagents.envs.timers import get_timer_tree, reset_timers

BASIC = "BasicLearning"


class ConstantPolicy(Policy):
    def __init__(self, action: float, width: int = 1) -> None:
        self.action = action
        self.width = width
        self.calls = 0

    def get_action(self, brain_info):
        self.calls += 1
        n = len(brain_info.agents)
        return ActionInfo(
            np.full((n, self.width), self.action), None, None, np.zeros(n), {"action": self.action}
        )


@pytest.fixture
def basic_manager(basic_build, free_port):
    env = UnityEnvironment(basic_build, base_port=free_port)
    manager = SimpleEnvManager(env)
    yield manager
    manager.close()
    assert env.proc1.poll() is not None  # the build was ended


def position(all_brain_info) -> int:
    return int(np.argmax(all_brain_info[BASIC].vector_observations[0]))


def test_simple_env_manager_steps_with_the_policy(basic_manager):
    assert isinstance(basic_manager, EnvManager)
    assert list(basic_manager.external_brains) == [BASIC]
    assert basic_manager.reset_parameters == {}
    policy = ConstantPolicy(2.0)  # right
    basic_manager.set_policy(BASIC, policy)
    (first,) = basic_manager.reset(config={}, train_mode=True)
    assert first == StepInfo(None, first.current_all_brain_info, None)
    assert first.current_all_brain_info[BASIC].agents[0].startswith("$0-")
    reset_timers()
    previous = first.current_all_brain_info
    for expected in (11, 12, 13):
        (step_info,) = basic_manager.step()
        assert step_info.previous_all_brain_info is previous
        assert step_info.brain_name_to_action_info[BASIC].outputs == {"action": 2.0}
        np.testing.assert_array_equal(
            step_info.current_all_brain_info[BASIC].previous_vector_actions, [[2.0]]
        )
        assert position(step_info.current_all_brain_info) == expected
        previous = step_info.current_all_brain_info
    assert policy.calls == 3
    names = [child["name"] for child in get_timer_tree()["children"]]
    assert "SimpleEnvManager._take_step" in names and "UnityEnvironment.step" in names


def test_brains_without_a_policy_get_no_actions(basic_manager):
    basic_manager.reset()
    (step_info,) = basic_manager.step()
    assert step_info.brain_name_to_action_info == {}
    # UnityEnvironment fills missing actions with zeros: Basic's "stay".
    np.testing.assert_array_equal(step_info.current_all_brain_info[BASIC].previous_vector_actions, [[0.0]])
    assert position(step_info.current_all_brain_info) == 10


def test_environment_errors_propagate(basic_manager):
    basic_manager.set_policy(BASIC, ConstantPolicy(1.0))

    class TwoNumbers(Policy):
        def get_action(self, brain_info):
            return ActionInfo(np.zeros((len(brain_info.agents), 2)), None, None, None, None)

    basic_manager.set_policy(BASIC, TwoNumbers())
    basic_manager.reset()
    with pytest.raises(UnityActionException, match="There was a mismatch between the provided action"):
        basic_manager.step()


class MockEnvironment(UnityEnvironment):
    """UnityEnvironment over the original test suite's MockCommunicator (no build, no port)."""

    mock = None

    @staticmethod
    def get_communicator(worker_id, base_port, timeout_wait, **kwargs):
        MockEnvironment.mock = MockCommunicator(discrete_action=False, num_agents=3)
        return MockEnvironment.mock


def test_global_done_resets_instead_of_stepping():
    # No example academy has a step limit; the mock reports global_done when the first action is -1.
    env = MockEnvironment(file_name=None)
    manager = SimpleEnvManager(env)
    try:
        manager.set_policy("RealFakeBrain", ConstantPolicy(-1.0, width=2))
        manager.reset()
        (step_info,) = manager.step()
        assert MockEnvironment.mock.last_input.rl_input.command == CommandProto.Value("STEP")
        assert env.global_done
        (after_done,) = manager.step()  # must not raise "The episode is completed"
        assert MockEnvironment.mock.last_input.rl_input.command == CommandProto.Value("RESET")
        assert after_done.previous_all_brain_info is step_info.current_all_brain_info
        assert after_done.current_all_brain_info["RealFakeBrain"].agents == ["$0-0", "$0-1", "$0-2"]
    finally:
        manager.close()


def test_worker_error_keeps_type_message_and_traceback():
    try:
        raise UnityWorkerInUseException(3, 5008)  # __init__ takes (worker_id, port), not a message
    except UnityWorkerInUseException as raised:
        original = raised
        error = WorkerError.from_exception(raised)
    rebuilt = error.to_exception(worker_id=3)
    assert type(rebuilt) is UnityWorkerInUseException
    assert str(rebuilt) == str(original)
    assert "Raised in UnityEnvironment worker 3" in rebuilt.__notes__[0]
    assert "test_worker_error_keeps_type_message_and_traceback" in rebuilt.__notes__[0]


def test_worker_error_of_an_unpicklable_exception():
    class LocalError(Exception):  # a local class cannot be pickled by reference
        pass

    try:
        raise LocalError("something odd")
    except LocalError as raised:
        error = WorkerError.from_exception(raised)
    assert error.pickled_exception is None
    rebuilt = error.to_exception(worker_id=1)
    assert type(rebuilt) is UnityCommunicationException
    assert "UnityEnvironment worker 1 failed with" in str(rebuilt)
    assert "LocalError: something odd" in str(rebuilt)
    assert "Traceback" in rebuilt.__notes__[0]


def test_factories_are_told_the_restart_number_when_they_take_it():
    calls = []

    def plain(worker_id):
        calls.append(("plain", worker_id))
        return worker_id

    def restart_aware(worker_id, restart=0):
        calls.append(("aware", worker_id, restart))
        return worker_id

    class Factory:
        def __call__(self, worker_id, *, restart=0):
            calls.append(("object", worker_id, restart))
            return worker_id

    for factory in (plain, restart_aware, Factory()):
        create_environment(factory, 2)
        create_environment(factory, 2, restart=3)
    create_environment(lambda worker_id, **kwargs: calls.append(("kwargs", kwargs)), 1, restart=1)
    assert calls == [
        ("plain", 2),
        ("plain", 2),
        ("aware", 2, 0),
        ("aware", 2, 3),
        ("object", 2, 0),
        ("object", 2, 3),
        ("kwargs", {}),
    ]
