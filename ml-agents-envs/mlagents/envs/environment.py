"""``UnityEnvironment``: start (or wait for) an environment, then reset and step it from Python."""

import atexit
import logging
import os
import shutil
import subprocess
import tempfile
from typing import Any

import numpy as np

from mlagents.envs import wire
from mlagents.envs.base_unity_environment import (
    BaseUnityEnvironment,
    StepCustomActions,
    StepTexts,
    StepValues,
)
from mlagents.envs.brain import AllBrainInfo, BrainParameters
from mlagents.envs.communicator import API_VERSION, COMPATIBLE_API_VERSIONS, Communicator
from mlagents.envs.communicator_objects import (
    CustomAction,
    CustomResetParameters,
    UnityInput,
    UnityOutput,
    UnityRLInitializationInput,
    UnityRLInitializationOutput,
    UnityRLInput,
    UnityRLOutput,
)
from mlagents.envs.exception import (
    UnityActionException,
    UnityCommunicationException,
    UnityEnvironmentException,
    UnityException,
    UnityTimeOutException,
)
from mlagents.envs.process_launcher import BuildProcess, build_command, candidate_patterns, resolve_executable
from mlagents.envs.rpc_communicator import ALL_INTERFACES, LOOPBACK, RpcCommunicator
from mlagents.envs.timers import hierarchical_timer, timed

logger = logging.getLogger("mlagents.envs")

# Seconds a build gets to quit by itself after the goodbye (status 400) message.
GOODBYE_GRACE = 3.0


class UnityEnvironment(BaseUnityEnvironment):
    """One environment (a Unity build or an example launcher), driven from Python over gRPC.

    Python listens on ``bind_address:base_port + worker_id``; the build is started with
    ``--port <that port>`` and connects. Example::

        env = UnityEnvironment("example-envs/builds/Basic", worker_id=1, no_graphics=True)
        info = env.reset(train_mode=True)["BasicLearning"]
        info = env.step([1.0] * len(info.agents))["BasicLearning"]
        env.close()

    :param file_name: path of the build (extension optional); None waits for an environment that
        starts by itself (the Unity Editor's Play button, or a build started by hand with ``--port``).
    :param worker_id: added to ``base_port``; must be 0 when ``file_name`` is None.
    :param base_port: first port of the range used by environments.
    :param seed: random seed sent to the environment.
    :param docker_training: start the build under ``xvfb-run`` and listen on all interfaces.
    :param no_graphics: pass ``-nographics -batchmode`` to the build.
    :param timeout_wait: seconds to wait for the environment to connect.
    :param args: extra command-line arguments for the build.
    :param exchange_timeout: seconds to wait for each answer of a connected environment (the
        second initialization call and every reset/step); a hung build raises
        ``UnityTimeOutException`` after that long.
    :param bind_address: interface to listen on; default loopback (``"127.0.0.1"``), or all
        interfaces (``"[::]"``) with ``docker_training``.
    :param log_dir: folder for the build's log (stdout and stderr), kept after close. By default
        the log goes to a fresh temporary folder that is removed on a clean close and kept
        (its path is in the error message) when the environment failed.
    :raises UnityEnvironmentException: no build found, incompatible API version, editor mode with
        ``worker_id != 0``.
    :raises UnityWorkerInUseException: the port is in use.
    :raises UnityTimeOutException: the environment did not connect within ``timeout_wait``.
    :raises UnityCommunicationException: the build exited during start-up.
    """

    SCALAR_ACTION_TYPES = (int, np.int32, np.int64, float, np.float32, np.float64)
    SINGLE_BRAIN_ACTION_TYPES = SCALAR_ACTION_TYPES + (list, np.ndarray)
    SINGLE_BRAIN_TEXT_TYPES = (str, list, np.ndarray)

    def __init__(
        self,
        file_name: str | None = None,
        worker_id: int = 0,
        base_port: int = 5005,
        seed: int = 0,
        docker_training: bool = False,
        no_graphics: bool = False,
        timeout_wait: float = 30,
        args: list[str] | None = None,
        *,
        exchange_timeout: float = 120.0,
        bind_address: str | None = None,
        log_dir: str | None = None,
    ) -> None:
        atexit.register(self._close)
        self.port = base_port + worker_id
        self._buffer_size = 12000
        self._version_ = API_VERSION
        self._loaded = False
        self.proc1: subprocess.Popen[bytes] | None = None
        self.worker_id = worker_id
        self.timeout_wait = timeout_wait
        self.exchange_timeout = exchange_timeout
        self.build_log_path: str | None = None
        self.communicator: Communicator | None = None
        self._build: BuildProcess | None = None
        self._log_dir = log_dir
        self._temporary_log_dir: str | None = None
        self._keep_build_log = False
        self._n_agents: dict[str, int] = {}
        self._global_done: bool | None = None
        self._academy_name = ""
        self._log_path = ""
        self._brains: dict[str, BrainParameters] = {}
        self._brain_names: list[str] = []
        self._external_brain_names: list[str] = []
        self._num_brains = 0
        self._num_external_brains = 0
        self._resetParameters: dict[str, float] = {}
        if bind_address is None:
            bind_address = ALL_INTERFACES if docker_training else LOOPBACK
        try:
            self._start(file_name, base_port, seed, docker_training, no_graphics, args or [], bind_address)
        except BaseException:
            self._close()
            raise

    def _start(
        self,
        file_name: str | None,
        base_port: int,
        seed: int,
        docker_training: bool,
        no_graphics: bool,
        args: list[str],
        bind_address: str,
    ) -> None:
        self.communicator = self.get_communicator(
            self.worker_id,
            base_port,
            self.timeout_wait,
            exchange_timeout=self.exchange_timeout,
            bind_address=bind_address,
        )
        if file_name is not None:
            self.executable_launcher(file_name, docker_training, no_graphics, args)
        else:
            if self.worker_id != 0:
                raise UnityEnvironmentException(
                    "If the environment name is None, the worker-id must be 0 in order to connect with the Editor."
                )
            logger.info("Start training by pressing the Play button in the Unity Editor.")
            logger.info(
                f"(Or start an environment build yourself with --port {self.port}; "
                f"waiting up to {self.timeout_wait:g} seconds.)"
            )
        self._loaded = True

        try:
            academy = wire.academy_description(
                self.send_academy_parameters(UnityRLInitializationInput(seed=seed))
            )
        except UnityTimeOutException as error:
            raise self._failure(error, self._connect_timeout_context()) from error
        except UnityCommunicationException as error:
            raise self._failure(error) from error

        if academy.version not in COMPATIBLE_API_VERSIONS:
            raise UnityEnvironmentException(
                f"The API number is not compatible between Unity and python. Python API : {self._version_}, "
                f"Unity API : {academy.version}.\nPlease go to https://github.com/Unity-Technologies/ml-agents "
                "to download the latest version of ML-Agents."
            )
        self._academy_name = academy.name
        self._log_path = academy.log_path
        self._brains = academy.brains
        self._brain_names = list(academy.brains)
        self._external_brain_names = academy.external_brain_names
        self._num_brains = len(self._brain_names)
        self._num_external_brains = len(self._external_brain_names)
        self._resetParameters = academy.reset_parameters
        logger.info(f"\n'{self._academy_name}' started successfully!\n{str(self)}")
        if self._num_external_brains == 0:
            logger.warning(
                " No Learning Brains set to train found in the Unity Environment. "
                "You will not be able to pass actions to your agent(s)."
            )

    # ----------------------------------------------------------------------------------------------
    # Properties

    @property
    def logfile_path(self) -> str:
        """The log path the environment reported (empty for 0.8/0.9 builds; see ``build_log_path``)."""
        return self._log_path

    @property
    def brains(self) -> dict[str, BrainParameters]:
        return self._brains

    @property
    def global_done(self) -> bool | None:
        return self._global_done

    @property
    def academy_name(self) -> str:
        return self._academy_name

    @property
    def number_brains(self) -> int:
        return self._num_brains

    @property
    def number_external_brains(self) -> int:
        return self._num_external_brains

    @property
    def brain_names(self) -> list[str]:
        return self._brain_names

    @property
    def external_brain_names(self) -> list[str]:
        return self._external_brain_names

    @property
    def external_brains(self) -> dict[str, BrainParameters]:
        return {name: self._brains[name] for name in self._external_brain_names}

    @property
    def reset_parameters(self) -> dict[str, float]:
        return self._resetParameters

    # ----------------------------------------------------------------------------------------------
    # Starting the build

    @staticmethod
    def get_communicator(
        worker_id: int,
        base_port: int,
        timeout_wait: float,
        *,
        exchange_timeout: float = 120.0,
        bind_address: str = LOOPBACK,
    ) -> Communicator:
        """The communicator to use (tests replace this with a ``MockCommunicator``)."""
        return RpcCommunicator(
            worker_id, base_port, timeout_wait, exchange_timeout=exchange_timeout, bind_address=bind_address
        )

    def executable_launcher(
        self, file_name: str, docker_training: bool, no_graphics: bool, args: list[str]
    ) -> None:
        """Find the build of ``file_name`` (see ``process_launcher.resolve_executable``) and start it.

        :raises UnityEnvironmentException: no matching build, or it cannot be executed.
        """
        launch_string, true_filename = resolve_executable(file_name)
        if launch_string is None:
            self._close()
            tried = ", ".join(candidate_patterns(file_name))
            raise UnityEnvironmentException(
                f"Couldn't launch the {true_filename} environment. Provided filename does not match any environments."
                f" (Looked for: {tried}.)"
            )
        logger.debug(f"This is the launch string {launch_string}")
        command = build_command(launch_string, self.port, no_graphics, args, docker_training)
        self.build_log_path = self._new_log_path(true_filename)
        self._build = BuildProcess.start(command, self.build_log_path)
        self.proc1 = self._build.popen
        if self.communicator is not None:
            self.communicator.set_peer_check(self._build.check_alive)

    def _new_log_path(self, true_filename: str) -> str:
        if self._log_dir is not None:
            os.makedirs(self._log_dir, exist_ok=True)
            folder = self._log_dir
        else:
            self._temporary_log_dir = tempfile.mkdtemp(prefix="mlagents-env-")
            folder = self._temporary_log_dir
        return os.path.join(folder, f"{true_filename}-worker{self.worker_id}.log")

    def _connect_timeout_context(self) -> str:
        if self._build is not None:
            return self._build.describe()
        return (
            f"No environment connected to port {self.port} within {self.timeout_wait:g} seconds "
            "(no build was launched: file_name is None)."
        )

    def _failure(self, error: UnityException, context: str | None = None) -> UnityException:
        """Close everything after ``error`` and return the exception to raise (with ``context`` appended)."""
        self._keep_build_log = self._build is not None
        self._close()
        if context is None:
            return error
        return type(error)(f"{error}\n{context}")

    # ----------------------------------------------------------------------------------------------
    # Reset and step

    def __str__(self) -> str:
        reset_params = "\n\t\t".join(
            str(k) + " -> " + str(self._resetParameters[k]) for k in self._resetParameters
        )
        return (
            f"""Unity Academy name: {self._academy_name}
        Number of Brains: {str(self._num_brains)}
        Number of Training Brains : {str(self._num_external_brains)}
        Reset Parameters :\n\t\t{reset_params}"""
            + "\n"
            + "\n".join(str(self._brains[b]) for b in self._brains)
        )

    def reset(
        self,
        config: dict[str, float] | None = None,
        train_mode: bool = True,
        custom_reset_parameters: CustomResetParameters | None = None,
    ) -> AllBrainInfo:
        """Start a new episode.

        :param config: reset parameters to change (name -> int/float); None sends all current ones.
        :param train_mode: training configuration (fast) or inference configuration (real time).
        :param custom_reset_parameters: a ``CustomResetParameters`` message for customised builds.
        :return: brain name -> BrainInfo of the first decision.
        :raises UnityEnvironmentException: unknown parameter, non-number value, or no environment loaded.
        :raises UnityCommunicationException: the environment stopped or its process exited.
        :raises UnityTimeOutException: no answer within ``exchange_timeout``.
        """
        if config is None:
            config = self._resetParameters
        elif config:
            pairs = ", ".join(f"{name} -> {value}" for name, value in config.items())
            logger.info(f"Academy reset with parameters: {pairs}")
        for k in config:
            if (k in self._resetParameters) and (isinstance(config[k], (int, float))):
                self._resetParameters[k] = config[k]
            elif not isinstance(config[k], (int, float)):
                raise UnityEnvironmentException(
                    f"The value for parameter '{k}'' must be an Integer or a Float."
                )
            else:
                raise UnityEnvironmentException(f"The parameter '{k}' is not a valid parameter.")
        if not self._loaded:
            raise UnityEnvironmentException("No Unity environment is loaded.")
        outputs = self._exchange(self._generate_reset_input(train_mode, config, custom_reset_parameters))
        return self._update_state(outputs)

    @timed
    def step(
        self,
        vector_action: StepValues = None,
        memory: StepValues = None,
        text_action: StepTexts = None,
        value: StepValues = None,
        custom_action: StepCustomActions = None,
    ) -> AllBrainInfo:
        """Apply actions to the agents of the last decision and return the next decision.

        Each argument is a dict brain name -> value, or (with exactly one external brain) the value
        itself. Vector actions and memories are flattened per brain: ``n_agents x action length``
        floats (a number per branch for discrete brains).

        :param vector_action: actions; missing brains get zeros.
        :param memory: memories of recurrent policies, echoed back by the environment.
        :param text_action: one string per agent, or one string for all.
        :param value: per-agent value estimates (shown by the environment's monitor).
        :param custom_action: a ``CustomAction`` per agent, or one for all.
        :return: brain name -> BrainInfo.
        :raises UnityActionException: malformed actions, episode completed, or no reset yet.
        :raises UnityEnvironmentException: no environment loaded.
        :raises UnityCommunicationException: the environment stopped or its process exited.
        :raises UnityTimeOutException: no answer within ``exchange_timeout``.
        """
        vector_action = {} if vector_action is None else vector_action
        memory = {} if memory is None else memory
        text_action = {} if text_action is None else text_action
        value = {} if value is None else value
        custom_action = {} if custom_action is None else custom_action

        if not self._loaded:
            raise UnityEnvironmentException("No Unity environment is loaded.")
        if self._global_done:
            raise UnityActionException("The episode is completed. Reset the environment with 'reset()'")
        if self.global_done is None:
            raise UnityActionException(
                "You cannot conduct step without first calling reset. Reset the environment with 'reset()'"
            )

        vector_action = self._per_brain(
            vector_action,
            self.SINGLE_BRAIN_ACTION_TYPES,
            "a keys, and vector_actions as values",
            "vector_action",
        )
        memory = self._per_brain(
            memory, self.SINGLE_BRAIN_ACTION_TYPES, "as keys and memories as values", "memory"
        )
        text_action = self._per_brain(
            text_action,
            self.SINGLE_BRAIN_TEXT_TYPES,
            "as keys and text_actions as values",
            "value",
            "text_action",
        )
        value = self._per_brain(
            value,
            self.SINGLE_BRAIN_ACTION_TYPES,
            "as keys and state/action value estimates as values",
            "value",
        )
        custom_action = self._per_brain(
            custom_action, (CustomAction,), "as keys and CustomAction instances as values", "custom_action"
        )

        for brain_name in list(vector_action) + list(memory) + list(text_action):
            if brain_name not in self._external_brain_names:
                raise UnityActionException(
                    f"The name {brain_name} does not correspond to an external brain in the environment"
                )

        for brain_name in self._external_brain_names:
            self._complete_brain_inputs(brain_name, vector_action, memory, text_action, custom_action)

        step_input = self._generate_step_input(vector_action, memory, text_action, value, custom_action)
        with hierarchical_timer("communicator.exchange"):
            outputs = self._exchange(step_input)
        return self._update_state(outputs)

    def _per_brain(
        self,
        argument: Any,
        single_types: tuple[type, ...],
        many_text: str,
        none_text: str,
        name: str | None = None,
    ) -> dict[str, Any]:
        """``argument`` as a (new) dict brain name -> value; a single-brain value is wrapped."""
        name = name or none_text
        if isinstance(argument, single_types):
            if self._num_external_brains == 1:
                return {self._external_brain_names[0]: argument}
            if self._num_external_brains > 1:
                raise UnityActionException(
                    f"You have {self._num_brains} brains, you need to feed a dictionary of brain names {many_text}"
                )
            raise UnityActionException(
                f"There are no external brains in the environment, step cannot take a {none_text} input"
            )
        if not isinstance(argument, dict):
            raise UnityActionException(
                f"step() got a {type(argument).__name__} for {name}: pass a dictionary of brain names as keys, "
                "or (with one external brain) a number, list or numpy array."
            )
        return dict(argument)

    def _complete_brain_inputs(
        self,
        brain_name: str,
        vector_action: dict[str, Any],
        memory: dict[str, Any],
        text_action: dict[str, Any],
        custom_action: dict[str, Any],
    ) -> None:
        """Fill in defaults for ``brain_name`` in place and check the sizes against its agent count."""
        n_agent = self._n_agents.get(brain_name, 0)
        brain = self._brains[brain_name]
        if brain_name not in vector_action:
            vector_action[brain_name] = [0.0] * n_agent * brain.action_length
        else:
            vector_action[brain_name] = self._flatten(vector_action[brain_name])
        if memory.get(brain_name) is None:
            memory[brain_name] = []
        else:
            memory[brain_name] = self._flatten(memory[brain_name])
        if text_action.get(brain_name) is None:
            text_action[brain_name] = [""] * n_agent
        elif isinstance(text_action[brain_name], str):
            text_action[brain_name] = [text_action[brain_name]] * n_agent
        if custom_action.get(brain_name) is None:
            custom_action[brain_name] = [None] * n_agent
        elif isinstance(custom_action[brain_name], CustomAction):
            custom_action[brain_name] = [custom_action[brain_name]] * n_agent

        number_text_actions = len(text_action[brain_name])
        if not (number_text_actions == n_agent or number_text_actions == 0):
            raise UnityActionException(
                "There was a mismatch between the provided text_action and "
                "the environment's expectation: "
                f"The brain {brain_name} expected {n_agent} text_action but was given {number_text_actions}"
            )
        expected = n_agent * brain.action_length
        if len(vector_action[brain_name]) != expected:
            raise UnityActionException(
                "There was a mismatch between the provided action and "
                "the environment's expectation: "
                f"The brain {brain_name} expected {expected} {brain.vector_action_space_type} action(s), "
                f"but was provided: {vector_action[brain_name]}"
            )

    @classmethod
    def _flatten(cls, arr: Any) -> list[float]:
        """A scalar, list, nested list or array as one flat list of floats (one nesting level removed)."""
        if isinstance(arr, cls.SCALAR_ACTION_TYPES):
            return [float(arr)]
        if isinstance(arr, np.ndarray):
            if arr.ndim <= 2 and (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
                # The common case (a policy's action matrix) without a Python loop.
                return arr.astype(np.float64, copy=False).ravel().tolist()
            arr = arr.tolist()
        if len(arr) == 0:
            return []
        if isinstance(arr[0], np.ndarray):
            arr = [item for sublist in arr for item in sublist.tolist()]
        if isinstance(arr[0], list):
            arr = [item for sublist in arr for item in sublist]
        return [float(x) for x in arr]

    def _exchange(self, inputs: UnityInput) -> UnityOutput:
        """Send ``inputs``, return the output; on any failure close everything and raise."""
        if self.communicator is None:
            raise UnityEnvironmentException("No Unity environment is loaded.")
        try:
            outputs = self.communicator.exchange(inputs)
        except UnityTimeOutException as error:
            context = self._build.describe() if self._build is not None else None
            raise self._failure(error, context) from error
        except UnityCommunicationException as error:
            raise self._failure(error) from error
        if outputs is None:
            raise self._failure(UnityCommunicationException("Communicator has stopped."))
        return outputs

    def _update_state(self, outputs: UnityOutput) -> AllBrainInfo:
        state, self._global_done = self._get_state(outputs.rl_output)
        for brain_name in self._external_brain_names:
            self._n_agents[brain_name] = len(state[brain_name].agents or []) if brain_name in state else 0
        return state

    def _get_state(self, output: UnityRLOutput) -> tuple[AllBrainInfo, bool]:
        """BrainInfos of every brain in ``output`` and the academy's done flag."""
        return wire.brain_infos_from_output(output, self._brains, self.worker_id)

    @timed
    def _generate_step_input(
        self,
        vector_action: dict[str, list[float]],
        memory: dict[str, list[float]],
        text_action: dict[str, Any],
        value: dict[str, Any],
        custom_action: dict[str, Any],
    ) -> UnityInput:
        return wire.step_input(self._n_agents, vector_action, memory, text_action, value, custom_action)

    def _generate_reset_input(
        self, training: bool, config: dict[str, float], custom_reset_parameters: CustomResetParameters | None
    ) -> UnityInput:
        return wire.reset_input(training, config, custom_reset_parameters)

    def send_academy_parameters(
        self, init_parameters: UnityRLInitializationInput
    ) -> UnityRLInitializationOutput:
        """Send the seed, return the environment's initialization output."""
        if self.communicator is None:
            raise UnityEnvironmentException("No Unity environment is loaded.")
        inputs = UnityInput()
        inputs.rl_initialization_input.CopyFrom(init_parameters)
        output: UnityRLInitializationOutput = self.communicator.initialize(inputs).rl_initialization_output
        return output

    @staticmethod
    def wrap_unity_input(rl_input: UnityRLInput) -> UnityInput:
        return wire.wrap_unity_input(rl_input)

    # ----------------------------------------------------------------------------------------------
    # Closing

    def close(self) -> None:
        """Stop the environment: it is told to quit, then ended for sure; the port is freed.

        :raises UnityEnvironmentException: nothing is loaded (never started, or already closed).
        """
        if self._loaded:
            self._close()
        else:
            raise UnityEnvironmentException("No Unity environment is loaded.")

    def _close(self) -> None:
        """End everything this environment holds; safe to call at any point and several times."""
        self._loaded = False
        atexit.unregister(self._close)
        goodbye_delivered = False
        if self.communicator is not None:
            goodbye_delivered = bool(getattr(self.communicator, "has_pending_call", False))
            self.communicator.close()
        if self._build is not None:
            build, self._build = self._build, None
            build.end(grace=GOODBYE_GRACE if goodbye_delivered else 0.0)
        if self._temporary_log_dir is not None and not self._keep_build_log:
            shutil.rmtree(self._temporary_log_dir, ignore_errors=True)
            self._temporary_log_dir = None
