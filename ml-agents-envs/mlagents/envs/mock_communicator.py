"""A communicator that fakes one environment in memory (test double of the original test suite)."""

from mlagents.envs.communicator import API_VERSION, Communicator
from mlagents.envs.communicator_objects import (
    AgentInfoProto,
    BrainParametersProto,
    ResolutionProto,
    UnityInput,
    UnityOutput,
    UnityRLInitializationOutput,
    UnityRLOutput,
)


class MockCommunicator(Communicator):
    """Fakes an academy "RealFakeAcademy" with one trained brain and ``num_agents`` agents.

    The brain has ``vector_action_size=[2]`` (two discrete branches, or a continuous vector of 2),
    ``visual_inputs`` colour cameras of 30x40 and 2 stacked frames when ``stack``. Each exchange
    answers for brain "RealFakeBrain": ids 0..n-1, reward 1, observation ``[1, 2, 3]`` per stacked
    frame, agent 2 done; ``global_done`` is True when the first agent's first action is -1.

    :param discrete_action: discrete (True) or continuous (False) action space.
    :param visual_inputs: number of cameras declared by the brain.
    :param stack: two stacked vector observations instead of one.
    :param num_agents: agents reported by every exchange.
    :param brain_name: name of the brain declared at initialization.
    :param vec_obs_size: vector observation size declared at initialization.
    """

    def __init__(
        self,
        discrete_action: bool = False,
        visual_inputs: int = 0,
        stack: bool = True,
        num_agents: int = 3,
        brain_name: str = "RealFakeBrain",
        vec_obs_size: int = 3,
    ) -> None:
        super().__init__()
        self.is_discrete = discrete_action
        self.steps = 0
        self.visual_inputs = visual_inputs
        self.has_been_closed = False
        self.num_agents = num_agents
        self.brain_name = brain_name
        self.vec_obs_size = vec_obs_size
        self.num_stacks = 2 if stack else 1
        self.last_input: UnityInput | None = None

    def initialize(self, inputs: UnityInput) -> UnityOutput:
        resolutions = [
            ResolutionProto(width=30, height=40, gray_scale=False) for _ in range(self.visual_inputs)
        ]
        brain = BrainParametersProto(
            vector_observation_size=self.vec_obs_size,
            num_stacked_vector_observations=self.num_stacks,
            vector_action_size=[2],
            camera_resolutions=resolutions,
            vector_action_descriptions=["", ""],
            vector_action_space_type=int(not self.is_discrete),
            brain_name=self.brain_name,
            is_training=True,
        )
        init = UnityRLInitializationOutput(
            name="RealFakeAcademy", version=API_VERSION, log_path="", brain_parameters=[brain]
        )
        return UnityOutput(rl_initialization_output=init)

    def exchange(self, inputs: UnityInput) -> UnityOutput | None:
        self.last_input = inputs
        self.steps += 1
        stored_action = [1] if self.is_discrete else [1, 2]
        observation = [1, 2, 3] * self.num_stacks
        agents = [
            AgentInfoProto(
                stacked_vector_observation=observation,
                reward=1,
                stored_vector_actions=stored_action,
                stored_text_actions="",
                text_observation="",
                memories=[],
                done=(i == 2),
                max_step_reached=False,
                id=i,
            )
            for i in range(self.num_agents)
        ]
        global_done = False
        actions = inputs.rl_input.agent_actions
        if "RealFakeBrain" in actions and actions["RealFakeBrain"].value:
            first = actions["RealFakeBrain"].value[0].vector_actions
            global_done = len(first) > 0 and first[0] == -1
        output = UnityRLOutput(global_done=global_done)
        output.agentInfos["RealFakeBrain"].value.extend(agents)
        return UnityOutput(rl_output=output)

    def close(self) -> None:
        self.has_been_closed = True
