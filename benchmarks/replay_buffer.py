"""Memory and speed of the SAC replay buffer: the update buffer (``AgentBuffer``, a list of numpy
arrays per field) against the column store (``ReplayBuffer``, preallocated arrays).

Two scenes, with the fields and dtypes the SAC trainer stores for them:

* 3DBall: vector observation 8, continuous actions 2 (89 bytes of data a step);
* a camera scene like VisualFoodCollector: one 84 x 84 RGB camera, discrete actions [3, 3, 3, 2].

For each: the bytes a stored step takes (what ``tracemalloc`` sees retained after ``--steps`` steps in
trajectories of ``--time-horizon`` steps, so the Python objects count; and the store's own
``bytes_per_step()``), the median microseconds to append one trajectory to a full buffer (from the agent's
trajectory, through ``append_update_buffer``, into each buffer) and to draw a mini-batch of ``--batch`` steps
from a buffer of ``--big`` steps (3DBall) or ``--big-camera`` steps (camera; the same trajectories
appended again and again).

    python benchmarks/replay_buffer.py [--steps 20000] [--camera-steps 2000] [--big 500000]

Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mlagents.trainers.buffer import AgentBuffer, Buffer, decode_images
from mlagents.trainers.sac.replay_buffer import ReplayBuffer


@dataclass(frozen=True)
class Scene:
    name: str
    vector: int
    actions: int
    continuous: bool
    camera: tuple[int, int, int] | None = None
    masks: int = 0


SCENES = [
    Scene("3DBall (vector 8, continuous 2)", vector=8, actions=2, continuous=True),
    Scene(
        "camera 84x84x3, discrete [3,3,3,2]",
        vector=0,
        actions=4,
        continuous=False,
        camera=(84, 84, 3),
        masks=11,
    ),
]


def collect(buffer: Buffer, scene: Scene, rng: np.random.Generator, steps: int) -> None:
    """``steps`` decisions of agent 0 as the SAC trainer keeps them (images are k / 255, the next
    image of a step is the following step's image)."""
    frame = rng.integers(0, 256, size=scene.camera) / 255.0 if scene.camera else None
    agent = buffer[0]
    for step in range(steps):
        columns: dict[str, object] = {
            "masks": 1.0,
            "done": step == steps - 1,
            "prev_action": rng.normal(size=scene.actions),
            "environment_rewards": float(rng.normal()),
        }
        if scene.vector:
            columns["vector_obs"] = rng.normal(size=scene.vector)
            columns["next_vector_in"] = rng.normal(size=scene.vector)
        if scene.camera:
            following = rng.integers(0, 256, size=scene.camera) / 255.0
            columns["visual_obs0"], columns["next_visual_obs0"] = frame, following
            frame = following
        if scene.continuous:
            columns["actions"] = rng.normal(size=scene.actions).astype(np.float32)
        else:
            columns["actions"] = rng.integers(0, 3, size=scene.actions).astype(np.int32)
            columns["action_mask"] = np.ones(scene.masks)
        for key, value in columns.items():
            agent[key].append(value)  # type: ignore[arg-type]


def to_update_buffer(buffer: Buffer) -> None:
    buffer.append_update_buffer(0, training_length=1)
    buffer[0].reset_agent()


def to_replay_buffer(buffer: Buffer, replay: ReplayBuffer) -> None:
    to_update_buffer(buffer)
    replay.append(buffer.update_buffer)
    buffer.update_buffer.clear()


def retained(fill: Callable[[], object], steps: int) -> tuple[float, object]:
    """Bytes per step that ``fill`` leaves allocated (its result kept alive), and the result."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = fill()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / steps, result


def microseconds(action: Callable[[], object], repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        action()
    return (time.perf_counter() - start) / repeats * 1e6


def fill_old(scene: Scene, steps: int, horizon: int) -> AgentBuffer:
    buffer, rng = Buffer(), np.random.default_rng(0)
    for _ in range(steps // horizon):
        collect(buffer, scene, rng, horizon)
        to_update_buffer(buffer)
    return buffer.update_buffer


def fill_new(scene: Scene, steps: int, horizon: int) -> ReplayBuffer:
    staging, rng = Buffer(), np.random.default_rng(0)
    replay = ReplayBuffer(steps, 1)
    for _ in range(steps // horizon):
        collect(staging, scene, rng, horizon)
        to_replay_buffer(staging, replay)
    return replay


def append_times(scene: Scene, horizon: int, repeats: int) -> tuple[float, float, float]:
    """Median µs per trajectory appended once the buffers are full (``repeats`` trajectories of room,
    cut to 80 % when over it, as the trainer cuts them; the first ``repeats`` appends, which grow
    them, are not timed): to the update buffer; to the replay buffer (staged); the store's own
    ``append``. The median: the rare append that grows the store past its capacity (once in a run)
    and the machine's noise do not count."""
    rng = np.random.default_rng(1)
    size = horizon * repeats
    old, staging, replay = Buffer(), Buffer(), ReplayBuffer(size, 1)
    old_times, new_times, store_times = [], [], []
    for round_ in range(2 * repeats):
        collect(old, scene, rng, horizon)
        old_time = microseconds(lambda: to_update_buffer(old), 1)
        collect(staging, scene, rng, horizon)
        staging_time = microseconds(lambda: to_update_buffer(staging), 1)
        store_time = microseconds(lambda: replay.append(staging.update_buffer), 1)
        staging.update_buffer.clear()
        if round_ >= repeats:
            old_times.append(old_time)
            new_times.append(staging_time + store_time)
            store_times.append(store_time)
        if len(replay) > size:
            old.truncate_update_buffer(int(size * 0.8))
            replay.truncate(int(size * 0.8))
    return float(np.median(old_times)), float(np.median(new_times)), float(np.median(store_times))


def big_buffers(scene: Scene, steps: int, horizon: int) -> tuple[AgentBuffer, ReplayBuffer]:
    """Buffers of ``steps`` steps: 16 distinct trajectories appended again and again."""
    staging, rng = Buffer(), np.random.default_rng(2)
    chunks = []
    for _ in range(16):
        collect(staging, scene, rng, horizon)
        to_update_buffer(staging)
        chunks.append(dict(staging.update_buffer))
        staging.update_buffer.clear()
    old, replay = AgentBuffer(), ReplayBuffer(steps, 1)
    for index in range(steps // horizon):
        chunk = chunks[index % len(chunks)]
        replay.append(chunk)
        for key, field in chunk.items():
            old[key].extend(field)
    return old, replay


def report(scene: Scene, steps: int, big: int, args: argparse.Namespace) -> None:
    """Print the figures of one scene."""
    horizon = args.time_horizon
    print(f"== {scene.name}")
    old_bytes, _ = retained(lambda: fill_old(scene, steps, horizon), steps)
    new_bytes, replay = retained(lambda: fill_new(scene, steps, horizon), steps)
    assert isinstance(replay, ReplayBuffer)
    print(f"bytes per step, {steps} steps:  update buffer {old_bytes:,.0f}  replay buffer {new_bytes:,.0f}")
    print(
        f"  replay buffer: bytes_per_step() {replay.bytes_per_step():,.1f}, row_bytes {replay.row_bytes},"
        f" nbytes {replay.nbytes:,} for {len(replay)} steps ({replay.allocated} allocated)"
    )
    repeats = args.repeats if scene.camera is None else max(1, args.repeats // 10)
    old_append, new_append, store_append = append_times(scene, horizon, repeats)
    print(
        f"µs per trajectory of {horizon} appended: update buffer {old_append:,.0f}  replay buffer"
        f" {new_append:,.0f} (of which ReplayBuffer.append {store_append:,.0f})"
    )
    old, big_replay = big_buffers(scene, big, horizon)
    rng_old, rng_new = np.random.default_rng(3), np.random.default_rng(3)
    old_sample = microseconds(lambda: old.sample_mini_batch(args.batch, 1, rng_old), args.repeats)
    new_sample = microseconds(lambda: big_replay.sample_mini_batch(args.batch, 1, rng_new), args.repeats)
    decoded = ""
    if scene.camera:  # the update buffer's mini-batches hold float32 images, the store's the codes
        decoding = microseconds(
            lambda: decode_images(big_replay.sample_mini_batch(args.batch, 1, rng_new)["visual_obs0"]),
            args.repeats,
        )
        decoded = f" ({decoding:,.0f} with one camera field decoded)"
    print(
        f"µs per mini-batch of {args.batch} from {len(big_replay):,} steps: update buffer {old_sample:,.0f}"
        f"  replay buffer {new_sample:,.0f}{decoded}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--steps", type=int, default=20_000, help="steps stored for the memory figure (3DBall)"
    )
    parser.add_argument("--camera-steps", type=int, default=2_000, help="the same for the camera scene")
    parser.add_argument("--time-horizon", type=int, default=64)
    parser.add_argument("--big", type=int, default=500_000, help="steps of the buffer sampled from (3DBall)")
    parser.add_argument("--big-camera", type=int, default=20_000, help="the same for the camera scene")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    for scene, steps, big in zip(SCENES, (args.steps, args.camera_steps), (args.big, args.big_camera)):
        report(scene, steps, big, args)


if __name__ == "__main__":
    main()
