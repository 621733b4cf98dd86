"""What every round-two example (Bouncer, Reacher, Tennis, FoodCollector, Pyramids, SoccerTwos)
must show in the same way: the same seed gives the same episode and another seed another one;
the build over real gRPC has the brains and reset parameters of the spec and plays step by step
like the scene in process; two builds run through a SubprocessEnvManager; and (where the
benchmark is a mean episode return) the scripted decision reaches 80% of the benchmark while
random actions stay far below. The example-specific rules are tested in ``test_<example>.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from mlagents.example_envs.bouncer import bouncer_heuristic
from mlagents.example_envs.pyramids import switch_then_gold
from mlagents.example_envs.reacher import reacher_heuristic
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tennis import tennis_heuristic

Decide = Callable[[dict], dict]


def random_actions(
    env: LocalEnvironment, counts: dict[str, int], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Uniformly random actions for ``counts[brain]`` agents of each brain: continuous values in
    [-1, 1], one whole action per discrete branch."""
    actions = {}
    for brain, k in counts.items():
        spec = env.brains[brain]
        if spec.vector_action_space_type == "continuous":
            actions[brain] = rng.uniform(-1.0, 1.0, (k, spec.action_length)).astype(np.float32)
        else:
            columns = [rng.integers(0, size, k) for size in spec.vector_action_size]
            actions[brain] = np.stack(columns, axis=1).astype(np.float32)
    return actions


@dataclass(frozen=True)
class BrainFacts:
    name: str
    space_type: str
    action_sizes: list[int]
    observation_size: int
    stacked: int | None = None  # checked when given


@dataclass(frozen=True)
class Example:
    name: str
    brains: tuple[BrainFacts, ...]
    reset_parameters: dict[str, float]
    reproduce_decisions: int = 30
    # wire: decide(local env, rng) -> decide(infos); decisions; tolerances; reset config; check of
    # the local scene after the run
    wire_decide: Callable[[LocalEnvironment, np.random.Generator], Decide] = lambda env, rng: lambda infos: {}
    wire_decisions: int = 5
    obs_atol: float = 1e-6
    reward_atol: float = 1e-7
    wire_config: dict[str, float] | None = None
    wire_check: Callable[[LocalEnvironment], None] = lambda env: None
    external_brains: list[str] | None = None
    # two workers: deciders per brain, agents per brain, transitions to run, a check of every
    # transition's infos returning a number that is summed, and a check of the numbers
    worker_deciders: dict[str, Callable[[Any], np.ndarray]] = field(default_factory=dict)
    worker_agents: dict[str, int] = field(default_factory=dict)
    worker_transitions: int = 4
    worker_step: Callable[[dict], float] = lambda infos: 0.0
    worker_total: Callable[[list[float]], None] = lambda values: None


def _zeros(size: int) -> Callable[[Any], np.ndarray]:
    return lambda info: np.zeros((len(info.agents), size), np.float32)


def _heuristic(brain: str, count: int, heuristic: Callable[[np.ndarray], np.ndarray]) -> Callable:
    def factory(env: LocalEnvironment, rng: np.random.Generator) -> Decide:
        def decide(infos: dict) -> dict:
            assert len(infos[brain].agents) == count
            return {brain: heuristic(infos[brain].vector_observations)}

        return decide

    return factory


def _random(counts: dict[str, int]) -> Callable:
    def factory(env: LocalEnvironment, rng: np.random.Generator) -> Decide:
        def decide(infos: dict) -> dict:
            for brain, k in counts.items():
                assert len(infos[brain].agents) == k
            return random_actions(env, counts, rng)

        return decide

    return factory


def _pyramids_decide(env: LocalEnvironment, rng: np.random.Generator) -> Decide:
    scene = env.academy.scene

    def decide(infos: dict) -> dict:
        assert len(infos["PyramidsLearning"].agents) == 16
        return {"PyramidsLearning": switch_then_gold(scene)}  # the in-process scene is in the same state

    return decide


def _rewards_sum(brain: str, count: int) -> Callable[[dict], float]:
    def step(infos: dict) -> float:
        assert len(infos[brain].agents) == count
        return float(np.sum(infos[brain].rewards))

    return step


def _bouncer_step(infos: dict) -> float:
    assert len(infos["BouncerLearning"].agents) == 1
    return float(infos["BouncerLearning"].rewards[0])


def _at_least(minimum: float, reduce: Callable[[list[float]], float] = sum) -> Callable[[list[float]], None]:
    def check(values: list[float]) -> None:
        assert reduce(values) > minimum

    return check


def _step_penalties(checks: dict[str, tuple[int, float]]) -> Callable[[dict], float]:
    def step(infos: dict) -> float:
        for brain, (count, reward) in checks.items():
            assert len(infos[brain].agents) == count
            if reward:
                np.testing.assert_allclose(infos[brain].rewards, reward, rtol=1e-5)
        return 0.0

    return step


def _switch_pressed(env: LocalEnvironment) -> None:
    assert env.academy.scene.switch_on.any()  # the brick pyramids took part


def _bouncer_scale(env: LocalEnvironment) -> None:
    _, half = env.academy.scene.world.banana_box()
    np.testing.assert_allclose(half, [2.0, 2.0, 4.0])


EXAMPLES = [
    Example(
        "Bouncer",
        (BrainFacts("BouncerLearning", "continuous", [3], 6, 3),),
        {"banana_scale": 150.0},
        reproduce_decisions=40,
        wire_decide=lambda env, rng: (
            lambda infos: {"BouncerLearning": bouncer_heuristic(infos["BouncerLearning"].vector_observations)}
        ),
        wire_decisions=40,
        obs_atol=1e-5,
        reward_atol=1e-6,
        wire_config={"banana_scale": 200.0},
        wire_check=_bouncer_scale,
        external_brains=["BouncerLearning"],
        worker_deciders={"BouncerLearning": lambda info: bouncer_heuristic(info.vector_observations)},
        worker_agents={"BouncerLearning": 1},
        worker_transitions=40,
        worker_step=_bouncer_step,
        worker_total=_at_least(0.5, max),  # the scripted jumps catch bananas through the workers too
    ),
    Example(
        "Reacher",
        (BrainFacts("ReacherLearning", "continuous", [4], 33, 1),),
        {"goal_size": 5.0, "goal_speed": 1.0, "gravity": 9.81, "deviation": 0.0, "deviation_freq": 0.0},
        wire_decide=_heuristic("ReacherLearning", 20, reacher_heuristic),
        wire_decisions=40,
        obs_atol=1e-4,
        reward_atol=1e-6,
        wire_config={"goal_size": 6.0},
        wire_check=lambda env: np.testing.assert_allclose(env.academy.scene.goal_size, 6.0),
        worker_deciders={"ReacherLearning": lambda info: reacher_heuristic(info.vector_observations)},
        worker_agents={"ReacherLearning": 20},
        worker_transitions=80,
        worker_step=_rewards_sum("ReacherLearning", 20),
        worker_total=_at_least(1.0),  # the scripted reach scores through the workers too
    ),
    Example(
        "Tennis",
        (BrainFacts("TennisLearning", "continuous", [2], 8, 3),),
        {"gravity": 9.81, "angle": 55.0, "scale": 1.0},
        wire_decide=_heuristic("TennisLearning", 36, tennis_heuristic),
        wire_decisions=40,
        obs_atol=1e-5,
        reward_atol=1e-6,
        wire_config={"angle": 50.0},
        wire_check=lambda env: np.testing.assert_allclose(np.abs(env.academy.scene.world.angles), 50.0),
        worker_deciders={"TennisLearning": lambda info: tennis_heuristic(info.vector_observations)},
        worker_agents={"TennisLearning": 36},
        worker_transitions=60,
        worker_step=_rewards_sum("TennisLearning", 36),
        worker_total=_at_least(0.5),  # the scripted rallies cross the net through the workers too
    ),
    Example(
        "FoodCollector",
        (BrainFacts("BananaLearning", "discrete", [3, 3, 3, 2], 53),),
        {"laser_length": 1.0, "agent_scale": 1.0},
        wire_decide=_random({"BananaLearning": 20}),
        wire_config={"agent_scale": 1.5},
        wire_check=lambda env: np.testing.assert_allclose(env.academy.scene.world.agent_scales, 1.5),
        worker_deciders={"BananaLearning": _zeros(4)},
        worker_agents={"BananaLearning": 20},
        worker_step=_step_penalties({"BananaLearning": (20, 0.0)}),
    ),
    Example(
        "Pyramids",
        (BrainFacts("PyramidsLearning", "discrete", [5], 172),),
        {},
        wire_decide=_pyramids_decide,
        wire_decisions=60,
        obs_atol=1e-5,
        reward_atol=1e-6,
        wire_check=_switch_pressed,
        worker_deciders={"PyramidsLearning": _zeros(1)},
        worker_agents={"PyramidsLearning": 16},
        worker_step=_step_penalties({"PyramidsLearning": (16, -5 / 5000)}),
    ),
    Example(
        "SoccerTwos",
        (
            BrainFacts("StrikerLearning", "discrete", [7], 112),
            BrainFacts("GoalieLearning", "discrete", [5], 112),
        ),
        {"ball_scale": 7.5, "gravity": 9.81},
        wire_decide=_random({"StrikerLearning": 16, "GoalieLearning": 16}),
        wire_config={"ball_scale": 6.0},
        wire_check=lambda env: np.testing.assert_allclose(env.academy.scene.world.ball_radius, 0.66),
        worker_deciders={"StrikerLearning": _zeros(1), "GoalieLearning": _zeros(1)},
        worker_agents={"StrikerLearning": 16, "GoalieLearning": 16},
        worker_step=_step_penalties({"StrikerLearning": (16, -5 / 3000), "GoalieLearning": (16, 5 / 3000)}),
    ),
]
IDS = [example.name for example in EXAMPLES]


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_same_seed_same_episode_other_seed_other_episode(example: Example, assert_reproducible) -> None:  # type: ignore[no-untyped-def]
    brains = [b.name for b in example.brains]

    def trajectory(seed: int) -> np.ndarray:
        rng = np.random.default_rng(7)
        env = LocalEnvironment(example.name, seed=seed)
        batches = env.reset()
        frames = []
        for decision in range(example.reproduce_decisions + 1):
            frames.extend(
                np.concatenate([batches[b].vector_observations.ravel(), batches[b].rewards]) for b in brains
            )
            if decision < example.reproduce_decisions:
                batches = env.step(random_actions(env, {b: len(batches[b].agents) for b in brains}, rng))
        env.close()
        return np.concatenate(frames)

    assert_reproducible(trajectory)


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_build_over_grpc_matches_the_in_process_scene(
    example: Example, open_build, assert_wire_matches_local
) -> None:  # type: ignore[no-untyped-def]
    env = open_build(example.name, seed=3)
    assert env.academy_name == "Academy"
    if example.external_brains is not None:
        assert env.external_brain_names == example.external_brains
    for facts in example.brains:
        params = env.brains[facts.name]
        assert params.vector_action_space_type == facts.space_type
        assert params.vector_action_space_size == facts.action_sizes
        assert params.vector_observation_space_size == facts.observation_size
        if facts.stacked is not None:
            assert params.num_stacked_vector_observations == facts.stacked
    assert env.reset_parameters == pytest.approx(example.reset_parameters)
    local = LocalEnvironment(example.name, seed=3)
    decide = example.wire_decide(local, np.random.default_rng(0))
    assert_wire_matches_local(
        env,
        local,
        [b.name for b in example.brains],
        decide,
        example.wire_decisions,
        obs_atol=example.obs_atol,
        reward_atol=example.reward_atol,
        config=example.wire_config,
    )
    example.wire_check(local)


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_two_workers_through_subprocess_env_manager(example: Example, two_workers) -> None:  # type: ignore[no-untyped-def]
    workers = two_workers(example.name, example.worker_deciders)
    first = example.brains[0]
    stacked = first.stacked or 1
    observations = [infos[first.name].vector_observations for infos in workers.first]
    expected = (example.worker_agents[first.name], first.observation_size * stacked)
    assert all(obs.shape == expected for obs in observations)
    assert not np.allclose(observations[0], observations[1])  # worker seeds differ
    values = [example.worker_step(infos) for infos in workers.transitions(example.worker_transitions)]
    example.worker_total(values)


# ---- the scripted decision against the benchmark (examples whose benchmark is a mean return)


@dataclass(frozen=True)
class Benchmark:
    name: str
    brain: str
    benchmark: float
    heuristic: Callable[[LocalEnvironment], Callable[[Any], np.ndarray]]
    heuristic_run: tuple[int, int, int | None]  # env seed, decisions, episodes
    heuristic_check: Callable[[list[float], list[bool]], None]
    random_run: tuple[int, int, int | None]
    random_check: Callable[[list[float], list[bool]], None]


def _bouncer_scripted(returns: list[float], timeouts: list[bool]) -> None:
    assert len(returns) >= 20
    assert np.mean(returns) >= 0.8 * 10.0, returns


def _bouncer_random(returns: list[float], timeouts: list[bool]) -> None:
    assert len(returns) >= 30
    assert np.mean(returns) < 0.1 * 10.0, returns


def _reacher_scripted(returns: list[float], timeouts: list[bool]) -> None:
    assert len(returns) == 20 and all(timeouts)  # episodes end by the 4000-step limit only
    assert np.mean(returns) >= 0.8 * 30.0, np.round(returns, 1)


def _reacher_random(returns: list[float], timeouts: list[bool]) -> None:
    assert len(returns) == 20
    assert np.mean(returns) < 0.1 * 30.0, np.mean(returns)


def _tennis_scripted(returns: list[float], timeouts: list[bool]) -> None:
    assert sum(timeouts) >= 36  # every player played a whole 5000-step episode
    assert np.mean(returns) >= 0.8 * 2.5, np.round(returns, 2)


def _tennis_random(returns: list[float], timeouts: list[bool]) -> None:
    assert len(returns) >= 200
    assert np.mean(returns) < 0.05 * 2.5, np.mean(returns)


def _pyramids_scripted(returns: list[float], timeouts: list[bool]) -> None:
    assert len(returns) >= 16
    assert np.mean(returns) >= 0.8 * 1.75, returns


def _pyramids_random(returns: list[float], timeouts: list[bool]) -> None:
    assert len(returns) >= 16
    assert np.mean(returns) < 0.25 * 1.75, returns


BENCHMARKS = [
    Benchmark(
        "Bouncer",
        "BouncerLearning",
        10.0,
        lambda env: lambda b: bouncer_heuristic(b.vector_observations),
        (6, 2000, 20),
        _bouncer_scripted,
        (7, 2000, 30),
        _bouncer_random,
    ),
    Benchmark(
        "Reacher",
        "ReacherLearning",
        30.0,
        lambda env: lambda b: reacher_heuristic(b.vector_observations),
        (0, 1002, None),
        _reacher_scripted,
        (4, 1002, None),
        _reacher_random,
    ),
    Benchmark(
        "Tennis",
        "TennisLearning",
        2.5,
        lambda env: lambda b: tennis_heuristic(b.vector_observations),
        (0, 1100, None),
        _tennis_scripted,
        (5, 300, None),
        _tennis_random,
    ),
    Benchmark(
        "Pyramids",
        "PyramidsLearning",
        1.75,
        lambda env: (lambda scene: lambda _: switch_then_gold(scene))(env.academy.scene),
        (6, 500, 16),
        _pyramids_scripted,
        (7, 1002, 16),
        _pyramids_random,
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", BENCHMARKS, ids=[case.name for case in BENCHMARKS])
def test_scripted_decision_reaches_the_benchmark(case: Benchmark, run_episodes) -> None:  # type: ignore[no-untyped-def]
    seed, decisions, episodes = case.heuristic_run
    env = LocalEnvironment(case.name, seed=seed)
    returns, timeouts = run_episodes(env, case.brain, case.heuristic(env), decisions, episodes=episodes)
    case.heuristic_check(returns, timeouts)


@pytest.mark.slow
@pytest.mark.parametrize("case", BENCHMARKS, ids=[case.name for case in BENCHMARKS])
def test_random_policy_stays_far_below_the_benchmark(case: Benchmark, run_episodes) -> None:  # type: ignore[no-untyped-def]
    seed, decisions, episodes = case.random_run
    env = LocalEnvironment(case.name, seed=seed)
    rng = np.random.default_rng(0)

    def decide(batch) -> np.ndarray:  # type: ignore[no-untyped-def]
        return random_actions(env, {case.brain: len(batch.agents)}, rng)[case.brain]

    returns, timeouts = run_episodes(env, case.brain, decide, decisions, episodes=episodes)
    case.random_check(returns, timeouts)
