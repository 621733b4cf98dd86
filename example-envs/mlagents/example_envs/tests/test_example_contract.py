"""What every example scene must show in the same way, one test per promise, parametrized over
the scenes of the registry with each scene's figures from ``example_table.py``:

* its brains, agents, reset parameters and engine settings are those of the table;
* its build, started as a process and spoken to over real gRPC, shows Python those brains and
  plays step by step exactly like the scene in process;
* two builds run side by side through a SubprocessEnvManager;
* the same seed gives the same episode (and another seed another one);
* a scripted decision reaches 80% of the benchmark and random actions stay far below.

What is specific to one example is tested in its own ``test_<example>.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import astuple
from typing import Any

import numpy as np
import pytest

from mlagents.example_envs import example_names
from mlagents.example_envs.sdk.brains import BrainSettings
from mlagents.example_envs.sdk.catalogue import find_scene, registered_scenes
from mlagents.example_envs.sdk.heuristic import HEURISTIC
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tests.example_table import EXAMPLES, Example, Play
from mlagents.example_envs.tests.playing import (
    assert_wire_matches_local,
    random_actions,
    run_episodes,
)


def cases(shape: str | None = None, always_slow: bool = False, renders: bool = False) -> list[Any]:
    """The examples tested in ``shape`` (a field of :class:`Example`; all of them for None), as
    pytest parameters marked ``slow`` when the case takes a second or more and ``renders`` when
    it renders."""
    params = []
    for example in EXAMPLES:
        facts = example if shape is None else getattr(example, shape)
        if facts is None:
            continue
        marks = []
        if always_slow or getattr(facts, "slow", False):
            marks.append(pytest.mark.slow)
        if renders and example.renders:
            marks.append(pytest.mark.renders)
        params.append(pytest.param(example, id=example.name, marks=marks))
    return params


def assert_agents(example: Example, infos: dict) -> dict:
    """Every brain of ``example`` is in ``infos`` with its agents; returns ``infos``."""
    counts = [len(infos[name].agents) for name in example.brain_names]
    assert sum(counts) == example.agents
    if example.fixed_brains:
        per_brain = {brain: count for brain, count, *_ in example.groups}
        assert counts == [per_brain[name] for name in example.brain_names]
    return infos


def random_decision(
    env: LocalEnvironment, brains: list[str], rng: np.random.Generator
) -> Callable[[dict], dict]:
    """Uniformly random actions for the agents each brain has (a BrainInfo or a DecisionBatch)."""
    return lambda infos: random_actions(env, {name: len(infos[name].agents) for name in brains}, rng)


def test_the_table_has_every_registered_example() -> None:
    assert [example.name for example in EXAMPLES] == example_names() == sorted(registered_scenes())


@pytest.mark.parametrize("example", cases())
def test_brains_agents_reset_parameters_and_engine_configuration(example: Example) -> None:
    spec = find_scene(example.name).spec()
    assert spec.academy_name == example.academy
    brains = [
        (
            b.name,
            b.vector_action_space_type,
            tuple(b.vector_action_size),
            b.vector_observation_size,
            b.num_stacked_vector_observations,
            tuple((c.width, c.height, c.gray_scale) for c in b.camera_resolutions),
            b.is_training,
        )
        for b in spec.brains
    ]
    assert brains == [(*astuple(brain), True) for brain in example.brains]
    groups = [(g.brain, g.count, g.max_step, g.decision_interval, g.on_demand) for g in spec.agents]
    assert groups == list(example.groups)
    assert spec.reset_parameters == example.reset_parameters
    assert spec.academy_max_steps == example.academy_max_steps
    c = spec.training_configuration
    assert (c.width, c.height, c.quality_level, c.time_scale, c.target_frame_rate) == example.engine


@pytest.mark.parametrize("example", cases("wire", always_slow=True, renders=True))
def test_build_over_grpc_shows_the_brains_and_plays_like_the_scene_in_process(
    example: Example, open_build: Callable[..., Any]
) -> None:
    wire = example.wire
    assert wire is not None
    env = open_build(example.name, seed=wire.seed)
    assert env.academy_name == example.academy
    assert env.external_brain_names == example.brain_names
    for brain in example.brains:
        params = env.brains[brain.name]
        assert params.vector_action_space_type == brain.space_type
        assert list(params.vector_action_space_size) == list(brain.action_sizes)
        assert params.vector_observation_space_size == brain.observation_size
        assert params.num_stacked_vector_observations == brain.stacked
        cameras = [{"width": w, "height": h, "blackAndWhite": gray} for w, h, gray in brain.cameras]
        assert params.camera_resolutions == cameras
    assert env.reset_parameters == pytest.approx(example.reset_parameters)  # float32 on the wire

    local = LocalEnvironment(example.name, seed=wire.seed)
    rng = np.random.default_rng(0)
    decide = (wire.decide or (lambda env, rng: random_decision(env, example.brain_names, rng)))(local, rng)
    assert_wire_matches_local(
        env,
        local,
        example.brain_names,
        lambda infos: decide(assert_agents(example, infos)),
        wire.decisions,
        obs_atol=wire.obs_atol,
        reward_atol=wire.reward_atol,
        reset_obs_atol=wire.reset_obs_atol,
        config=wire.config,
    )
    if wire.check is not None:
        wire.check(local)
    local.close()


@pytest.mark.parametrize("example", cases("workers", always_slow=True))
def test_two_workers_through_subprocess_env_manager(
    example: Example, two_workers: Callable[..., Any]
) -> None:
    spec = example.workers
    assert spec is not None
    workers = two_workers(example.name, spec.deciders())
    first = [
        np.concatenate([infos[name].vector_observations for name in example.brain_names])
        for infos in workers.first
    ]
    size = example.brains[0].observation_size * example.brains[0].stacked
    assert all(observations.shape == (example.agents, size) for observations in first)
    if spec.seeds_differ:
        assert not np.allclose(first[0], first[1])  # different seeds, different episodes
    transitions: Iterator[dict] = (
        assert_agents(example, infos) for infos in workers.transitions(spec.transitions)
    )
    if spec.check is not None:
        spec.check(transitions)
    else:
        for _ in transitions:
            pass


def _record(batches: dict, brains: list[str], what: tuple[str, ...]) -> np.ndarray:
    """What a replay compares of one decision, as one float64 vector."""
    parts = []
    for name in brains:
        batch = batches[name]
        if "observations" in what:
            parts.append(np.ravel(batch.vector_observations))
        if "rewards" in what:
            parts.append(np.asarray(batch.rewards))
        if "agents" in what:
            parts.append(np.asarray(batch.agents))
        if "pictures" in what:
            parts.extend(np.ravel(camera) for camera in batch.visual_observations)
    return np.concatenate([np.asarray(part, np.float64) for part in parts])


@pytest.mark.parametrize("example", cases("replay", renders=True))
def test_same_seed_same_episode_other_seed_other_episode(example: Example) -> None:
    replay = example.replay
    assert replay is not None

    def run(seed: int) -> list[np.ndarray]:
        env = LocalEnvironment(example.name, seed=seed)
        decide = random_decision(env, example.brain_names, np.random.default_rng(replay.actions_seed))
        batches = env.reset()
        frames = [_record(batches, example.brain_names, replay.record)]
        for _ in range(replay.decisions):
            batches = env.step(decide(batches))
            frames.append(_record(batches, example.brain_names, replay.record))
        env.close()
        return frames

    first = run(0)
    np.testing.assert_array_equal(np.concatenate(first), np.concatenate(run(0)))
    if replay.other_seed == "episode":
        assert not np.array_equal(np.concatenate(first), np.concatenate(run(1)))
    elif replay.other_seed == "reset":
        assert not np.allclose(first[0], run(1)[0])


def _play(example: Example, play: Play) -> tuple[list[float], list[bool]]:
    env = LocalEnvironment(example.name, seed=play.seed)
    brain = example.brains[0].name
    rng = np.random.default_rng(0)
    if play.decide is not None:
        decide = play.decide(env, rng)
    else:
        decide = lambda batch: random_actions(env, {brain: len(batch.agents)}, rng)[brain]  # noqa: E731
    returns, timeouts = run_episodes(env, brain, decide, play.decisions, episodes=play.episodes)
    env.close()
    return returns, timeouts


@pytest.mark.parametrize("example", cases("scripted"))
def test_scripted_decision_reaches_the_benchmark(example: Example) -> None:
    assert example.scripted is not None
    example.scripted.check(*_play(example, example.scripted))


@pytest.mark.parametrize("example", cases("random"))
def test_random_policy_stays_far_below_the_benchmark(example: Example) -> None:
    assert example.random is not None
    example.random.check(*_play(example, example.random))


@pytest.mark.parametrize("example", cases(always_slow=True, renders=True))
def test_every_scripted_brain_plays(example: Example) -> None:
    """Every brain for which the scene has a scripted decision can be played by it (the builds'
    ``--brain-type <brain>=heuristic``) with every agent of the scene: the scene runs 30 steps with
    Python deciding nothing, and the decisions it broadcasts are the heuristic's."""
    scene = find_scene(example.name)
    scripted = [name for name in example.brain_names if scene.has_heuristic(name)]
    if not scripted:
        pytest.skip(f"{example.name} has no scripted decision")
    settings = BrainSettings(kinds={name: (HEURISTIC, None) for name in scripted}, broadcast=set(scripted))
    env = LocalEnvironment(example.name, seed=3, brain_settings=settings)
    try:
        external = [name for name in env.brains if name not in scripted]
        rng = np.random.default_rng(3)
        batches = env.reset()
        for _ in range(30):
            batches = env.step(
                random_actions(env, {name: len(batches[name].agents) for name in external}, rng)
            )
        for name in scripted:
            assert len(batches[name].agents) > 0
            assert np.isfinite(np.asarray(batches[name].previous_vector_actions, dtype=np.float64)).all()
    finally:
        env.close()
