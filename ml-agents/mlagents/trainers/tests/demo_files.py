"""Helpers that write ``.demo`` files as Unity's demonstration recorder does (not a test module):
the layout itself (:func:`write_demo_file`) and a small synthetic expert (:func:`write_demo`).

Imported as ``mlagents.trainers.tests.demo_files``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from google.protobuf.internal.encoder import _VarintBytes

from mlagents.envs.communicator_objects import AgentInfoProto, BrainParametersProto, DemonstrationMetaProto

#: The meta data is padded to this many bytes (its length prefix included), as Unity writes it.
META_DATA_BYTES = 33


def write_demo_file(
    path: Path | str,
    meta: DemonstrationMetaProto,
    brain: BrainParametersProto,
    records: Iterable[AgentInfoProto],
) -> None:
    """Write ``path``: the length-delimited ``meta`` padded with zeros to ``META_DATA_BYTES``, then
    the length-delimited ``brain`` and one length-delimited record per decision."""
    raw_meta = meta.SerializeToString()
    data = bytearray(_VarintBytes(len(raw_meta)) + raw_meta)
    data += b"\0" * (META_DATA_BYTES - len(data))
    for message in (brain, *records):
        raw = message.SerializeToString()
        data += _VarintBytes(len(raw)) + raw
    Path(path).write_bytes(bytes(data))


def write_demo(
    path: Path | str,
    brain_name: str = "Brain",
    vec: int = 4,
    actions: Sequence[int] = (3, 2),
    continuous: bool = False,
    episodes: int = 3,
    length: int = 6,
    seed: int = 0,
) -> str:
    """A .demo file of ``episodes`` episodes of ``length`` decisions: the expert always takes action
    (t mod size) per branch at decision t (continuous: [0.5, -0.5]), sees ``vec`` observations near
    +1 and earns 0.1 per decision; returns the path."""
    rng = np.random.default_rng(seed)
    infos = []
    for _ in range(episodes):
        for t in range(length):
            action = [0.5, -0.5] if continuous else [float(t % size) for size in actions]
            infos.append(
                AgentInfoProto(
                    stacked_vector_observation=list(1.0 + 0.1 * rng.normal(size=vec)),
                    stored_vector_actions=action,
                    reward=0.1,
                    done=t == length - 1,
                    id=0,
                )
            )
    meta = DemonstrationMetaProto(
        api_version=1,
        demonstration_name="test",
        number_steps=len(infos),
        number_episodes=episodes,
        mean_reward=0.6,
    )
    brain = BrainParametersProto(
        vector_observation_size=vec,
        num_stacked_vector_observations=1,
        vector_action_size=list(actions),
        vector_action_descriptions=[""] * len(actions),
        vector_action_space_type=1 if continuous else 0,
        brain_name=brain_name,
    )
    write_demo_file(path, meta, brain, infos)
    return str(path)
