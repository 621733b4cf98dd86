"""UnityEnvironment logic driven by MockCommunicator (the original's test double) and a two-brain variant.

The same behaviour against a real build over real gRPC is in test_environment_build.py.
"""

import logging

import numpy as np
import pytest

from mlagents.envs import (
    UnityActionException,
    UnityEnvironment,
    UnityEnvironmentException,
)
from mlagents.envs.communicator_objects import (
    BrainParametersProto,
    CustomAction,
    CustomResetParameters,
    UnityInput,
    UnityOutput,
)
from mlagents.envs.mock_communicator import MockCommunicator


class TwoBrainCommunicator(MockCommunicator):
    """MockCommunicator plus a second, not-trained brain "Watcher" and two reset parameters."""

    def __init__(
        self, second_is_training: bool = False, first_is_training: bool = True, version: str = "API-9"
    ):
        super().__init__(discrete_action=True)
        self.second_is_training = second_is_training
        self.first_is_training = first_is_training
        self.version = version

    def initialize(self, inputs: UnityInput) -> UnityOutput:
        output = super().initialize(inputs)
        init = output.rl_initialization_output
        init.version = self.version
        init.brain_parameters[0].is_training = self.first_is_training
        init.brain_parameters.append(
            BrainParametersProto(
                brain_name="Watcher",
                vector_observation_size=1,
                num_stacked_vector_observations=1,
                vector_action_size=[4],
                vector_action_descriptions=["a", "b", "c", "d"],
                vector_action_space_type=1,
                is_training=self.second_is_training,
            )
        )
        init.environment_parameters.float_parameters["gravity"] = 9.81
        init.environment_parameters.float_parameters["scale"] = 1.0
        return output


def make_env(monkeypatch, communicator, **kwargs) -> UnityEnvironment:
    """An environment in editor mode (no build) talking to ``communicator``."""
    monkeypatch.setattr(UnityEnvironment, "get_communicator", lambda *args, **kw: communicator)
    return UnityEnvironment(None, **kwargs)


@pytest.fixture
def mock_env(monkeypatch):
    comm = MockCommunicator(discrete_action=False, visual_inputs=0)
    env = make_env(monkeypatch, comm)
    yield env, comm
    env._close()


def test_initialization(mock_env):
    env, comm = mock_env
    assert env.academy_name == "RealFakeAcademy"
    assert env.brain_names == ["RealFakeBrain"] and env.external_brain_names == ["RealFakeBrain"]
    assert env.number_brains == 1 and env.number_external_brains == 1
    brain = env.brains["RealFakeBrain"]
    assert brain.vector_action_space_type == "continuous"
    assert brain.vector_action_space_size == [2]
    assert brain.num_stacked_vector_observations == 2
    assert env.external_brains == {"RealFakeBrain": brain}
    assert env.reset_parameters == {}
    assert env.logfile_path == ""
    assert env.global_done is None


def test_str(monkeypatch):
    env = make_env(monkeypatch, TwoBrainCommunicator())
    # Protobuf maps have no order: the parameters are listed in the order they were received.
    printed = {"gravity": "\t\tgravity -> 9.8100004196167\n", "scale": "\t\tscale -> 1.0\n"}
    parameters = "".join(printed[name] for name in env.reset_parameters)
    assert str(env) == (
        "Unity Academy name: RealFakeAcademy\n"
        "        Number of Brains: 2\n"
        "        Number of Training Brains : 1\n"
        "        Reset Parameters :\n" + parameters + "Unity brain name: RealFakeBrain\n"
        "        Number of Visual Observations (per agent): 0\n"
        "        Vector Observation space size (per agent): 3\n"
        "        Number of stacked Vector Observation: 2\n"
        "        Vector Action space type: discrete\n"
        "        Vector Action space size (per agent): [2]\n"
        "        Vector Action descriptions: , \n"
        "Unity brain name: Watcher\n"
        "        Number of Visual Observations (per agent): 0\n"
        "        Vector Observation space size (per agent): 1\n"
        "        Number of stacked Vector Observation: 1\n"
        "        Vector Action space type: continuous\n"
        "        Vector Action space size (per agent): [4]\n"
        "        Vector Action descriptions: a, b, c, d"
    )
    env.close()


def test_reset_and_reset_input(mock_env):
    env, comm = mock_env
    info = env.reset(train_mode=False)["RealFakeBrain"]
    sent = comm.last_input.rl_input
    assert sent.command == 1 and sent.is_training is False
    assert sent.HasField("environment_parameters") and len(sent.environment_parameters.float_parameters) == 0
    assert not sent.agent_actions
    assert info.agents == ["$0-0", "$0-1", "$0-2"]
    assert info.vector_observations.shape == (3, 6)
    assert info.local_done == [False, False, True]
    assert env.global_done is False


def test_step_sends_one_action_per_agent(mock_env):
    env, comm = mock_env
    env.reset()
    actions = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    env.step(
        actions,
        memory=np.array([[0.1], [0.2], [0.3]]),
        text_action="hi",
        value=np.array([7.0, 8.0, 9.0]),
        custom_action=CustomAction(),
    )
    sent = comm.last_input.rl_input
    assert sent.command == 0 and not sent.is_training and not sent.HasField("environment_parameters")
    per_agent = sent.agent_actions["RealFakeBrain"].value
    assert [list(a.vector_actions) for a in per_agent] == [[1, 2], [3, 4], [5, 6]]
    assert [a.memories[0] for a in per_agent] == pytest.approx([0.1, 0.2, 0.3])
    assert [a.text_actions for a in per_agent] == ["hi", "hi", "hi"]
    assert [a.value for a in per_agent] == [7.0, 8.0, 9.0]
    assert all(a.HasField("custom_action") for a in per_agent)

    env.step({"RealFakeBrain": [0.5] * 6})
    per_agent = comm.last_input.rl_input.agent_actions["RealFakeBrain"].value
    assert [a.value for a in per_agent] == [0.0, 0.0, 0.0]  # no value given: field left unset
    assert not any(a.HasField("custom_action") for a in per_agent)
    assert [a.text_actions for a in per_agent] == ["", "", ""]


def test_missing_actions_are_zeros(mock_env):
    env, comm = mock_env
    env.reset()
    env.step()
    per_agent = comm.last_input.rl_input.agent_actions["RealFakeBrain"].value
    assert [list(a.vector_actions) for a in per_agent] == [[0, 0]] * 3


def test_step_before_reset_and_after_global_done(mock_env):
    env, comm = mock_env
    with pytest.raises(UnityActionException) as error:
        env.step([0] * 6)
    assert str(error.value) == (
        "You cannot conduct step without first calling reset. Reset the environment with 'reset()'"
    )
    env.reset()
    env.step([-1] + [0] * 5)  # the mock ends the academy episode on action -1
    assert env.global_done is True
    with pytest.raises(UnityActionException) as error:
        env.step([0] * 6)
    assert str(error.value) == "The episode is completed. Reset the environment with 'reset()'"
    env.reset()
    env.step([0] * 6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"vector_action": [1]},
            "The brain RealFakeBrain expected 6 continuous action(s), but was provided: [1.0]",
        ),
        (
            {"vector_action": {"Nope": [1]}},
            "The name Nope does not correspond to an external brain in the environment",
        ),
        (
            {"memory": {"Nope": [1]}},
            "The name Nope does not correspond to an external brain in the environment",
        ),
        (
            {"text_action": {"Nope": "x"}},
            "The name Nope does not correspond to an external brain in the environment",
        ),
        ({"text_action": ["a", "b"]}, "The brain RealFakeBrain expected 3 text_action but was given 2"),
        ({"vector_action": (1, 2)}, "step() got a tuple for vector_action"),
    ],
)
def test_step_validation(mock_env, kwargs, message):
    env, _ = mock_env
    env.reset()
    with pytest.raises(UnityActionException) as error:
        env.step(**kwargs)
    assert message in str(error.value)


@pytest.mark.parametrize(
    "argument, value, text",
    [
        ("vector_action", [1], "a keys, and vector_actions as values"),
        ("memory", [1], "as keys and memories as values"),
        ("text_action", "x", "as keys and text_actions as values"),
        ("value", [1.0], "as keys and state/action value estimates as values"),
        ("custom_action", CustomAction(), "as keys and CustomAction instances as values"),
    ],
)
def test_single_brain_forms_need_exactly_one_external_brain(monkeypatch, argument, value, text):
    env = make_env(monkeypatch, TwoBrainCommunicator(second_is_training=True))
    env.reset()
    with pytest.raises(UnityActionException) as error:
        env.step(**{argument: value})
    assert str(error.value) == "You have 2 brains, you need to feed a dictionary of brain names " + text
    env.close()


@pytest.mark.parametrize(
    "argument, value, name",
    [
        ("vector_action", [1], "vector_action"),
        ("memory", [1], "memory"),
        ("text_action", "x", "value"),  # sic: 0.9 says "value" for text_action
        ("value", [1.0], "value"),
        ("custom_action", CustomAction(), "custom_action"),
    ],
)
def test_single_brain_forms_without_external_brains(monkeypatch, argument, value, name, caplog):
    env = make_env(monkeypatch, TwoBrainCommunicator(first_is_training=False))
    assert "No Learning Brains set to train found" in caplog.text
    env.reset()
    with pytest.raises(UnityActionException) as error:
        env.step(**{argument: value})
    assert (
        str(error.value)
        == f"There are no external brains in the environment, step cannot take a {name} input"
    )
    env.close()


def test_two_brains_with_dicts(monkeypatch):
    comm = TwoBrainCommunicator(second_is_training=True)
    env = make_env(monkeypatch, comm)
    all_info = env.reset()
    assert set(all_info) == {"RealFakeBrain"}  # the mock only reports agents of RealFakeBrain
    env.step({"RealFakeBrain": [[1], [0], [1]]})  # "Watcher" has 0 agents: no map entry
    assert set(comm.last_input.rl_input.agent_actions) == {"RealFakeBrain"}
    env.close()


def test_reset_parameters(monkeypatch, caplog):
    comm = TwoBrainCommunicator()
    env = make_env(monkeypatch, comm)
    assert env.reset_parameters == pytest.approx({"gravity": 9.81, "scale": 1.0})
    with caplog.at_level(logging.INFO, logger="mlagents.envs"):
        env.reset(
            config={"gravity": 3, "scale": np.float64(2.5)}, custom_reset_parameters=CustomResetParameters()
        )
    assert "Academy reset with parameters: gravity -> 3, scale -> 2.5" in caplog.text
    sent = comm.last_input.rl_input.environment_parameters
    assert dict(sent.float_parameters) == {"gravity": 3.0, "scale": 2.5}
    assert sent.HasField("custom_reset_parameters")
    assert env.reset_parameters == {"gravity": 3, "scale": 2.5}
    env.reset(config={"scale": True})  # bool is an int, as in 0.9
    assert dict(comm.last_input.rl_input.environment_parameters.float_parameters) == {"scale": 1.0}
    env.reset()  # None: every current parameter is sent
    assert set(comm.last_input.rl_input.environment_parameters.float_parameters) == {"gravity", "scale"}

    with pytest.raises(UnityEnvironmentException) as error:
        env.reset(config={"gravity": 1.0, "wind": 2.0})
    assert str(error.value) == "The parameter 'wind' is not a valid parameter."
    assert env.reset_parameters["gravity"] == 1.0  # keys before the bad one were stored
    with pytest.raises(UnityEnvironmentException) as error:
        env.reset(config={"gravity": np.float32(1.0)})
    assert str(error.value) == "The value for parameter 'gravity'' must be an Integer or a Float."
    with pytest.raises(UnityEnvironmentException) as error:
        env.reset(config={"gravity": "high"})
    assert str(error.value) == "The value for parameter 'gravity'' must be an Integer or a Float."
    env.close()


def test_close(mock_env):
    env, comm = mock_env
    env.close()
    assert comm.has_been_closed
    with pytest.raises(UnityEnvironmentException, match="No Unity environment is loaded."):
        env.close()
    with pytest.raises(UnityEnvironmentException, match="No Unity environment is loaded."):
        env.reset()


@pytest.mark.parametrize("version", ["API-9", "API-8"])
def test_compatible_versions(monkeypatch, version):
    env = make_env(monkeypatch, TwoBrainCommunicator(version=version))
    env.close()


def test_incompatible_version_closes(monkeypatch):
    comm = TwoBrainCommunicator(version="API-7")
    with pytest.raises(UnityEnvironmentException) as error:
        make_env(monkeypatch, comm)
    assert str(error.value) == (
        "The API number is not compatible between Unity and python. Python API : API-9, Unity API : API-7.\n"
        "Please go to https://github.com/Unity-Technologies/ml-agents to download the latest version of ML-Agents."
    )
    assert comm.has_been_closed


@pytest.mark.parametrize(
    "given, flat",
    [
        (3, [3.0]),
        (np.float32(0.5), [0.5]),
        ([1, 2], [1.0, 2.0]),
        ([[1, 2], [3, 4]], [1.0, 2.0, 3.0, 4.0]),
        ([np.array([1, 2]), np.array([3])], [1.0, 2.0, 3.0]),
        (np.array([[1, 2], [3, 4]]), [1.0, 2.0, 3.0, 4.0]),
        ([], []),
    ],
)
def test_flatten(given, flat):
    assert UnityEnvironment._flatten(given) == flat


@pytest.mark.parametrize(
    "kwargs, address",
    [({}, "127.0.0.1"), ({"docker_training": True}, "[::]"), ({"bind_address": "0.0.0.0"}, "0.0.0.0")],
)
def test_bind_address_choice(monkeypatch, kwargs, address):
    seen = {}

    def get_communicator(worker_id, base_port, timeout_wait, **options):
        seen.update(options)
        return MockCommunicator()

    monkeypatch.setattr(UnityEnvironment, "get_communicator", staticmethod(get_communicator))
    env = UnityEnvironment(None, exchange_timeout=7.0, **kwargs)
    assert seen == {"bind_address": address, "exchange_timeout": 7.0}
    env.close()
