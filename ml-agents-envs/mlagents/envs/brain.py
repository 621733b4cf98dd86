"""What a brain is (``BrainParameters``) and what its agents report at one decision (``BrainInfo``)."""

import io
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image

from mlagents.envs.communicator_objects import AgentInfoProto, BrainParametersProto

logger = logging.getLogger("mlagents.envs")

SPACE_TYPES = ("discrete", "continuous")  # index = SpaceTypeProto value


class BrainParameters:
    """The fixed description of one brain, as declared by the environment.

    :param brain_name: name of the brain (the Unity brain asset).
    :param vector_observation_space_size: size of ONE vector observation frame (floats).
    :param num_stacked_vector_observations: frames stacked into each agent's vector observation.
    :param camera_resolutions: one dict per visual observation:
        ``{"height": int, "width": int, "blackAndWhite": bool}``.
    :param vector_action_space_size: branch sizes (discrete) or ``[n]`` (continuous).
    :param vector_action_descriptions: one description per action (may be empty strings).
    :param vector_action_space_type: ``0``/``"discrete"`` or ``1``/``"continuous"``; stored as the string.
    """

    def __init__(
        self,
        brain_name: str,
        vector_observation_space_size: int,
        num_stacked_vector_observations: int,
        camera_resolutions: list[dict[str, Any]],
        vector_action_space_size: list[int],
        vector_action_descriptions: list[str],
        vector_action_space_type: int | str,
    ) -> None:
        self.brain_name = brain_name
        self.vector_observation_space_size = vector_observation_space_size
        self.num_stacked_vector_observations = num_stacked_vector_observations
        self.number_visual_observations = len(camera_resolutions)
        self.camera_resolutions = camera_resolutions
        self.vector_action_space_size = vector_action_space_size
        self.vector_action_descriptions = vector_action_descriptions
        if isinstance(vector_action_space_type, str):
            if vector_action_space_type not in SPACE_TYPES:
                raise ValueError(
                    f"vector_action_space_type must be one of {SPACE_TYPES}, got {vector_action_space_type!r}"
                )
            self.vector_action_space_type = vector_action_space_type
        else:
            self.vector_action_space_type = SPACE_TYPES[vector_action_space_type]

    def __str__(self) -> str:
        return """Unity brain name: {}
        Number of Visual Observations (per agent): {}
        Vector Observation space size (per agent): {}
        Number of stacked Vector Observation: {}
        Vector Action space type: {}
        Vector Action space size (per agent): {}
        Vector Action descriptions: {}""".format(
            self.brain_name,
            str(self.number_visual_observations),
            str(self.vector_observation_space_size),
            str(self.num_stacked_vector_observations),
            self.vector_action_space_type,
            str(self.vector_action_space_size),
            ", ".join(self.vector_action_descriptions),
        )

    def __repr__(self) -> str:
        return (
            f"BrainParameters({self.brain_name!r}, {self.vector_observation_space_size!r}, "
            f"{self.num_stacked_vector_observations!r}, {self.camera_resolutions!r}, "
            f"{self.vector_action_space_size!r}, {self.vector_action_descriptions!r}, "
            f"{self.vector_action_space_type!r})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BrainParameters) and vars(self) == vars(other)

    @property
    def action_length(self) -> int:
        """Floats in one agent's vector action: one per branch (discrete) or the vector size (continuous)."""
        if self.vector_action_space_type == "discrete":
            return len(self.vector_action_space_size)
        return int(self.vector_action_space_size[0])

    @staticmethod
    def from_proto(brain_param_proto: BrainParametersProto) -> "BrainParameters":
        """The BrainParameters described by a ``BrainParametersProto`` (initialization output or .demo header)."""
        resolutions = [
            {"height": r.height, "width": r.width, "blackAndWhite": r.gray_scale}
            for r in brain_param_proto.camera_resolutions
        ]
        return BrainParameters(
            brain_param_proto.brain_name,
            brain_param_proto.vector_observation_size,
            brain_param_proto.num_stacked_vector_observations,
            resolutions,
            list(brain_param_proto.vector_action_size),
            list(brain_param_proto.vector_action_descriptions),
            brain_param_proto.vector_action_space_type,
        )


class BrainInfo:
    """Everything the agents of one brain reported at one decision point (n = number of agents).

    Attributes (shapes for n agents):

    - ``visual_observations``: list over cameras of lists over agents of float64 arrays
      ``(H, W, 3)`` (colour) or ``(H, W, 1)`` (black and white), values in [0, 1].
    - ``vector_observations``: float64 ``(n, size * stacks)``, oldest frame first.
    - ``text_observations``: list of n str.
    - ``memories``: float64 ``(n, m)`` (m = longest memory, shorter ones zero-padded) or ``(0, 0)``.
    - ``rewards``: list of n float (NaN replaced by 0).
    - ``agents``: list of n agent ids, ``"$<worker_id>-<id>"`` (e.g. ``"$0-12345"``).
    - ``local_done``, ``max_reached``: lists of n bool.
    - ``previous_vector_actions``: float64 ``(n, k)``, the last action each agent applied.
    - ``previous_text_actions``: list of n lists of characters (the stored text split up, as 0.9 did).
    - ``action_masks``: float64 ``(n, sum of branch sizes)``, 1 = allowed, 0 = masked.
    - ``custom_observations``: list of n ``CustomObservation`` messages.
    """

    def __init__(
        self,
        visual_observation: list[list[np.ndarray]],
        vector_observation: np.ndarray,
        text_observations: list[str],
        memory: np.ndarray | None = None,
        reward: list[float] | None = None,
        agents: list[Any] | None = None,
        local_done: list[bool] | None = None,
        vector_action: np.ndarray | None = None,
        text_action: list[Any] | None = None,
        max_reached: list[bool] | None = None,
        action_mask: np.ndarray | None = None,
        custom_observations: list[Any] | None = None,
    ) -> None:
        self.visual_observations = visual_observation
        self.vector_observations = vector_observation
        self.text_observations = text_observations
        self.memories = memory
        self.rewards = reward
        self.local_done = local_done
        self.max_reached = max_reached
        self.agents = agents
        self.previous_vector_actions = vector_action
        self.previous_text_actions = text_action
        self.action_masks = action_mask
        self.custom_observations = custom_observations

    def merge(self, other: "BrainInfo") -> None:
        """Append ``other``'s agents after this BrainInfo's own (in place)."""
        for i in range(len(self.visual_observations)):
            self.visual_observations[i].extend(other.visual_observations[i])
        self.vector_observations = np.append(self.vector_observations, other.vector_observations, axis=0)
        self.text_observations.extend(other.text_observations)
        self.memories = self.merge_memories(
            _memories_or_empty(self.memories),
            _memories_or_empty(other.memories),
            self.agents or [],
            other.agents or [],
        )
        self.rewards = safe_concat_lists(self.rewards, other.rewards)
        self.local_done = safe_concat_lists(self.local_done, other.local_done)
        self.max_reached = safe_concat_lists(self.max_reached, other.max_reached)
        self.agents = safe_concat_lists(self.agents, other.agents)
        self.previous_vector_actions = safe_concat_np_ndarray(
            self.previous_vector_actions, other.previous_vector_actions
        )
        self.previous_text_actions = safe_concat_lists(
            self.previous_text_actions, other.previous_text_actions
        )
        self.action_masks = safe_concat_np_ndarray(self.action_masks, other.action_masks)
        self.custom_observations = safe_concat_lists(self.custom_observations, other.custom_observations)

    @staticmethod
    def merge_memories(
        m1: np.ndarray, m2: np.ndarray, agents1: Sequence[Any], agents2: Sequence[Any]
    ) -> np.ndarray:
        """Stack two memory matrices row-wise; an empty side becomes zeros ``(its agents, other width)``
        and the narrower side is zero-padded on the right."""
        if len(m1) == 0 and len(m2) != 0:
            m1 = np.zeros((len(agents1), m2.shape[1]))
        elif len(m2) == 0 and len(m1) != 0:
            m2 = np.zeros((len(agents2), m1.shape[1]))
        elif m2.shape[1] > m1.shape[1]:
            m1 = np.pad(m1, ((0, 0), (0, m2.shape[1] - m1.shape[1])))
        elif m1.shape[1] > m2.shape[1]:
            m2 = np.pad(m2, ((0, 0), (0, m1.shape[1] - m2.shape[1])))
        return np.append(m1, m2, axis=0)

    @staticmethod
    def process_pixels(image_bytes: bytes, gray_scale: bool) -> np.ndarray:
        """Decode one visual observation (PNG or any format Pillow reads).

        :param image_bytes: the encoded image.
        :param gray_scale: average the colour channels into one.
        :return: float64 array ``(H, W, 3)``, or ``(H, W, 1)`` when ``gray_scale``, values in [0, 1].
        """
        with Image.open(io.BytesIO(bytearray(image_bytes))) as decoded:
            image = decoded if decoded.mode == "RGB" else decoded.convert("RGB")
            pixels = np.asarray(image, dtype=np.float64) / 255.0
        if gray_scale:
            pixels = np.mean(pixels, axis=2, keepdims=True)
        return pixels

    @staticmethod
    def from_agent_proto(
        worker_id: int, agent_info_list: Sequence[AgentInfoProto], brain_params: BrainParameters
    ) -> "BrainInfo":
        """Build the BrainInfo of one brain from the AgentInfoProtos of its agents.

        :param worker_id: prefixed to every agent id (``"$<worker_id>-<id>"``) so ids stay unique
            across several environments.
        :param agent_info_list: one AgentInfoProto per agent, in the order they were received.
        :param brain_params: the brain; its cameras (not the messages) say how many images each agent has.
        :raises IndexError: an agent sent fewer images than the brain declares cameras.
        """
        n_agents = len(agent_info_list)
        visual_observations = [
            [
                BrainInfo.process_pixels(info.visual_observations[camera], resolution["blackAndWhite"])
                for info in agent_info_list
            ]
            for camera, resolution in enumerate(brain_params.camera_resolutions)
        ]

        memory_size = max((len(info.memories) for info in agent_info_list), default=0)
        if memory_size == 0:
            memories = np.zeros((0, 0))
        else:
            memories = np.zeros((n_agents, memory_size))
            for row, info in enumerate(agent_info_list):
                memories[row, : len(info.memories)] = info.memories

        total_num_actions = int(sum(brain_params.vector_action_space_size))
        action_masks = np.ones((n_agents, total_num_actions))
        for row, info in enumerate(agent_info_list):
            if len(info.action_mask) == total_num_actions:
                # On the wire true means "forbidden"; in BrainInfo 1 means "allowed".
                action_masks[row, :] = np.logical_not(np.asarray(info.action_mask, dtype=bool))

        rewards = np.array([info.reward for info in agent_info_list], dtype=np.float64)
        nan_rewards = np.isnan(rewards)
        if nan_rewards.any():
            logger.warning("An agent had a NaN reward for brain " + brain_params.brain_name)
            rewards[nan_rewards] = 0.0

        obs_size = brain_params.vector_observation_space_size * brain_params.num_stacked_vector_observations
        if n_agents == 0:
            vector_observations = np.zeros((0, obs_size))
        else:
            vector_observations = np.array(
                [info.stacked_vector_observation for info in agent_info_list], dtype=np.float64
            )
            if np.isnan(vector_observations).any():
                logger.warning("An agent had a NaN observation for brain " + brain_params.brain_name)
            vector_observations = np.nan_to_num(vector_observations)

        # Zero-padded to the longest stored action so that an agent that never acted (empty list)
        # cannot make the matrix ragged.
        action_width = max((len(info.stored_vector_actions) for info in agent_info_list), default=0)
        if n_agents == 0:
            action_width = brain_params.action_length
        previous_vector_actions = np.zeros((n_agents, action_width))
        for row, info in enumerate(agent_info_list):
            previous_vector_actions[row, : len(info.stored_vector_actions)] = info.stored_vector_actions

        return BrainInfo(
            visual_observation=visual_observations,
            vector_observation=vector_observations,
            text_observations=[info.text_observation for info in agent_info_list],
            memory=memories,
            reward=rewards.tolist(),
            agents=[f"${worker_id}-{info.id}" for info in agent_info_list],
            local_done=[info.done for info in agent_info_list],
            vector_action=previous_vector_actions,
            text_action=[list(info.stored_text_actions) for info in agent_info_list],
            max_reached=[info.max_step_reached for info in agent_info_list],
            custom_observations=[info.custom_observation for info in agent_info_list],
            action_mask=action_masks,
        )


def _memories_or_empty(memories: np.ndarray | None) -> np.ndarray:
    return np.zeros((0, 0)) if memories is None else memories


def safe_concat_lists(l1: list[Any] | None, l2: list[Any] | None) -> list[Any] | None:
    """Concatenate two lists into a new one; None stands for "nothing" (None + None -> None)."""
    if l1 is None:
        return None if l2 is None else l2.copy()
    if l2 is None:
        return l1.copy()
    return l1 + l2


def safe_concat_np_ndarray(a1: np.ndarray | None, a2: np.ndarray | None) -> np.ndarray | None:
    """Stack two arrays along axis 0; None or empty arrays are skipped (both skipped -> None)."""
    if a1 is not None and a1.size != 0:
        if a2 is not None and a2.size != 0:
            return np.append(a1, a2, axis=0)
        return a1.copy()
    if a2 is not None and a2.size != 0:
        return a2.copy()
    return None


# Dict of brain name to BrainInfo
AllBrainInfo = dict[str, BrainInfo]
