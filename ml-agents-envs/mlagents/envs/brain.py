"""What a brain is (``BrainParameters``) and what its agents report at one decision (``BrainInfo``)."""

import io
import logging
from collections.abc import Sequence
from itertools import chain
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from mlagents.envs.communicator_objects import AgentInfoProto, BrainParametersProto

logger = logging.getLogger("mlagents.envs")

T = TypeVar("T")

SPACE_TYPES = ("discrete", "continuous")  # index = SpaceTypeProto value


def action_length(space_type: str, action_sizes: Sequence[int]) -> int:
    """Floats in one agent's vector action: one per branch (discrete) or the vector size (continuous)."""
    return len(action_sizes) if space_type == "discrete" else int(action_sizes[0])


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
        """Floats in one agent's vector action (see :func:`action_length`)."""
        return action_length(self.vector_action_space_type, self.vector_action_space_size)

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
        """Append ``other``'s agents after this BrainInfo's own (in place).

        Fields that are None on both sides stay None, and so do array fields without elements on
        both sides (see :func:`safe_concat_np_ndarray`); :func:`concatenate_brain_infos` is the
        same join that keeps such arrays' shapes.
        """
        vars(self).update(vars(_join([self, other], keep_empty_arrays=False)))

    @staticmethod
    def merge_memories(
        m1: np.ndarray, m2: np.ndarray, agents1: Sequence[Any], agents2: Sequence[Any]
    ) -> np.ndarray:
        """Stack two memory matrices row-wise; an empty side becomes zeros ``(its agents, other width)``
        and the narrower side is zero-padded on the right."""
        return _join_memories([m1, m2], [len(m1) or len(agents1), len(m2) or len(agents2)])

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
        # One pass over the messages gathers every field (each attribute read of a message is a
        # lookup in the protobuf runtime), then each field becomes an array in one go.
        infos = list(agent_info_list)
        n_agents = len(infos)
        visual_observations = [
            [
                BrainInfo.process_pixels(info.visual_observations[camera], resolution["blackAndWhite"])
                for info in infos
            ]
            for camera, resolution in enumerate(brain_params.camera_resolutions)
        ]
        observations: list[Sequence[float]] = []
        rewards: list[float] = []
        agents: list[Any] = []
        dones: list[bool] = []
        max_reached: list[bool] = []
        texts: list[str] = []
        text_actions: list[Any] = []
        custom_observations: list[Any] = []
        memories: list[Sequence[float]] = []
        masks: list[Sequence[bool]] = []
        actions: list[Sequence[float]] = []
        prefix = f"${worker_id}-"
        for info in infos:
            observations.append(info.stacked_vector_observation)
            rewards.append(info.reward)
            agents.append(prefix + str(info.id))
            dones.append(info.done)
            max_reached.append(info.max_step_reached)
            texts.append(info.text_observation)
            text_actions.append(list(info.stored_text_actions))
            custom_observations.append(info.custom_observation)
            memories.append(info.memories)
            masks.append(info.action_mask)
            actions.append(info.stored_vector_actions)

        memory_size = max(map(len, memories), default=0)
        memory = np.zeros((0, 0)) if memory_size == 0 else _padded_rows(memories, memory_size)

        total_num_actions = int(sum(brain_params.vector_action_space_size))
        masked = [row for row, mask in enumerate(masks) if len(mask) == total_num_actions]
        if masked and total_num_actions > 0:
            # On the wire true means "forbidden"; in BrainInfo 1 means "allowed".
            forbidden = np.fromiter(
                chain.from_iterable(masks[row] for row in masked),
                dtype=bool,
                count=len(masked) * total_num_actions,
            ).reshape(len(masked), total_num_actions)
            if len(masked) == n_agents:  # every agent sent its mask: no row of ones to keep
                action_masks = np.logical_not(forbidden).astype(np.float64)
            else:
                action_masks = np.ones((n_agents, total_num_actions))
                action_masks[masked] = np.logical_not(forbidden)
        else:
            action_masks = np.ones((n_agents, total_num_actions))

        # NaN is the only float not equal to itself; a Python test is cheaper than numpy's for a few.
        if any(reward != reward for reward in rewards):
            logger.warning("An agent had a NaN reward for brain " + brain_params.brain_name)
            rewards = [0.0 if reward != reward else reward for reward in rewards]

        obs_size = brain_params.vector_observation_space_size * brain_params.num_stacked_vector_observations
        if n_agents == 0:
            vector_observations = np.zeros((0, obs_size))
        else:
            width = len(observations[0])
            if all(len(row) == width for row in observations):
                vector_observations = _padded_rows(observations, width)
            else:
                vector_observations = np.array(observations, dtype=np.float64)  # ragged: numpy's error
            if not np.isfinite(vector_observations).all():
                if np.isnan(vector_observations).any():
                    logger.warning("An agent had a NaN observation for brain " + brain_params.brain_name)
                vector_observations = np.nan_to_num(vector_observations)

        # Zero-padded to the longest stored action so that an agent that never acted (empty list)
        # cannot make the matrix ragged.
        action_width = max(map(len, actions), default=0)
        if n_agents == 0:
            action_width = brain_params.action_length
        previous_vector_actions = _padded_rows(actions, action_width)

        return BrainInfo(
            visual_observation=visual_observations,
            vector_observation=vector_observations,
            text_observations=texts,
            memory=memory,
            reward=rewards,
            agents=agents,
            local_done=dones,
            vector_action=previous_vector_actions,
            text_action=text_actions,
            max_reached=max_reached,
            custom_observations=custom_observations,
            action_mask=action_masks,
        )


def _padded_rows(rows: Sequence[Sequence[float]], width: int) -> np.ndarray:
    """float64 ``(len(rows), width)``: each row zero-padded to ``width`` (none may be longer)."""
    n_rows = len(rows)
    if width == 0 or n_rows == 0:
        return np.zeros((n_rows, width))
    if all(len(row) == width for row in rows):
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=n_rows * width)
        return flat.reshape(n_rows, width)
    out = np.zeros((n_rows, width))
    for index, row in enumerate(rows):
        out[index, : len(row)] = row
    return out


def concatenate_brain_infos(infos: Sequence[BrainInfo]) -> BrainInfo:
    """A new BrainInfo with the agents of ``infos`` in order (the inputs are not modified).

    The result of chaining :meth:`BrainInfo.merge` on a copy, except that an array field whose
    inputs have no elements keeps its shape (e.g. ``(0, k)``, or ``(n, 0)`` action masks of a brain
    without discrete actions) instead of becoming None: a policy can take any joined BrainInfo.

    :param infos: at least one BrainInfo of the same brain.
    :raises ValueError: ``infos`` is empty.
    """
    if not infos:
        raise ValueError("concatenate_brain_infos needs at least one BrainInfo")
    return _join(infos, keep_empty_arrays=True)


def take_agents(info: BrainInfo, rows: slice | np.ndarray) -> BrainInfo:
    """A new BrainInfo with only the agents at ``rows`` (a slice, or an array of indices).

    Arrays without a row per agent (memories ``(0, 0)`` of a policy without memory) are kept whole.
    """
    n_agents = len(info.agents or [])
    return BrainInfo(
        visual_observation=[_take_list(camera, rows) for camera in info.visual_observations],
        vector_observation=_take_array(info.vector_observations, n_agents, rows),
        text_observations=_take_list(info.text_observations, rows),
        memory=_take_optional_array(info.memories, n_agents, rows),
        reward=_take_optional_list(info.rewards, rows),
        agents=_take_optional_list(info.agents, rows),
        local_done=_take_optional_list(info.local_done, rows),
        vector_action=_take_optional_array(info.previous_vector_actions, n_agents, rows),
        text_action=_take_optional_list(info.previous_text_actions, rows),
        max_reached=_take_optional_list(info.max_reached, rows),
        action_mask=_take_optional_array(info.action_masks, n_agents, rows),
        custom_observations=_take_optional_list(info.custom_observations, rows),
    )


def safe_concat_lists(l1: list[Any] | None, l2: list[Any] | None) -> list[Any] | None:
    """Concatenate two lists into a new one; None stands for "nothing" (None + None -> None)."""
    return _join_lists([l1, l2])


def safe_concat_np_ndarray(a1: np.ndarray | None, a2: np.ndarray | None) -> np.ndarray | None:
    """Stack two arrays along axis 0; None or empty arrays are skipped (both skipped -> None)."""
    return _join_arrays([a1, a2])


def _join(infos: Sequence[BrainInfo], keep_empty_arrays: bool) -> BrainInfo:
    """The one implementation of joining BrainInfos (agents of ``infos`` in order)."""
    agent_counts = [len(info.agents or []) for info in infos]
    join_arrays = _join_arrays_keeping_shape if keep_empty_arrays else _join_arrays
    n_cameras = len(infos[0].visual_observations)
    return BrainInfo(
        visual_observation=[
            [obs for info in infos for obs in info.visual_observations[camera]] for camera in range(n_cameras)
        ],
        vector_observation=np.concatenate([info.vector_observations for info in infos], axis=0),
        text_observations=[text for info in infos for text in info.text_observations],
        memory=_join_memories([info.memories for info in infos], agent_counts),
        reward=_join_lists([info.rewards for info in infos]),
        agents=_join_lists([info.agents for info in infos]),
        local_done=_join_lists([info.local_done for info in infos]),
        vector_action=join_arrays([info.previous_vector_actions for info in infos]),
        text_action=_join_lists([info.previous_text_actions for info in infos]),
        max_reached=_join_lists([info.max_reached for info in infos]),
        action_mask=join_arrays([info.action_masks for info in infos]),
        custom_observations=_join_lists([info.custom_observations for info in infos]),
    )


def _join_lists(lists: Sequence[list[T] | None]) -> list[T] | None:
    """A new list of the items of ``lists`` in order; None stands for "nothing" (all None -> None)."""
    present = [items for items in lists if items is not None]
    if not present:
        return None
    return [item for items in present for item in items]


def _join_arrays(arrays: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """``arrays`` stacked along axis 0 (a new array); None and arrays without elements are skipped,
    and when nothing is left the result is None."""
    present = [array for array in arrays if array is not None and array.size != 0]
    if not present:
        return None
    if len(present) == 1:
        return present[0].copy()
    return np.concatenate(present, axis=0)


def _join_arrays_keeping_shape(arrays: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """:func:`_join_arrays`, but arrays without elements still count their rows: ``(2, 0)`` and
    ``(3, 0)`` give ``(5, 0)``, and ``(0, k)`` arrays give ``(0, k)``."""
    joined = _join_arrays(arrays)
    present = [array for array in arrays if array is not None]
    if joined is None and present:
        joined = np.zeros((sum(len(array) for array in present), *present[0].shape[1:]))
    return joined


def _join_memories(memories: Sequence[np.ndarray | None], row_counts: Sequence[int]) -> np.ndarray:
    """Memory matrices stacked row-wise, zero-padded on the right to the widest; a part without
    memories (None or no elements) contributes ``row_counts[i]`` rows of zeros. All empty -> ``(0, 0)``."""
    widths = [m.shape[1] if m is not None and m.ndim == 2 and m.size != 0 else 0 for m in memories]
    width = max(widths, default=0)
    if width == 0:
        return np.zeros((0, 0))
    result = np.zeros((int(sum(row_counts)), width))
    row = 0
    for memory, memory_width, count in zip(memories, widths, row_counts):
        if memory is not None and memory_width:
            result[row : row + count, :memory_width] = memory
        row += count
    return result


def _take_list(items: list[T], rows: slice | np.ndarray) -> list[T]:
    if isinstance(rows, slice):
        return items[rows]
    return [items[int(i)] for i in rows]


def _take_optional_list(items: list[T] | None, rows: slice | np.ndarray) -> list[T] | None:
    return None if items is None else _take_list(items, rows)


def _take_array(array: np.ndarray, n_agents: int, rows: slice | np.ndarray) -> np.ndarray:
    return array[rows] if array.ndim >= 1 and len(array) == n_agents else array


def _take_optional_array(
    array: np.ndarray | None, n_agents: int, rows: slice | np.ndarray
) -> np.ndarray | None:
    return None if array is None else _take_array(array, n_agents, rows)


# Dict of brain name to BrainInfo
AllBrainInfo = dict[str, BrainInfo]
