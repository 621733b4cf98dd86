"""What every example scene promises, one row per scene (not a test module): its brains, agents,
reset parameters and engine settings, and how the contract tests of
``test_example_contract.py`` play it (over the wire, through two workers, twice with one seed,
scripted and at random against the benchmark). A shape a scene is not tested in is ``None``.

The figures (seeds, decisions, tolerances, thresholds) are the ones each scene's own tests used
before they were gathered here; a benchmark is the mean episode return of the original's trained
model, and a scripted decision must reach 80% of it while random actions stay far below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from mlagents.example_envs.ball3d import balance
from mlagents.example_envs.bouncer import bouncer_heuristic
from mlagents.example_envs.gridworld import shortest_path_action
from mlagents.example_envs.hallway import shortest_path
from mlagents.example_envs.push_block import push_toward_goal
from mlagents.example_envs.pyramids import switch_then_gold
from mlagents.example_envs.reacher import reacher_heuristic
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.tennis import tennis_heuristic
from mlagents.example_envs.tests.playing import Decide
from mlagents.example_envs.walker import walker_heuristic

#: ``decide(brain infos of every brain) -> {brain: actions}``, for the wire test.
DecideAll = Callable[[dict], dict[str, np.ndarray]]
#: What the transitions of two workers must show (an iterable of AllBrainInfo).
TransitionsCheck = Callable[[Iterable[dict]], None]
#: What the returns and max_reached flags of the ended episodes must show.
EpisodesCheck = Callable[[list[float], list[bool]], None]


@dataclass(frozen=True)
class Brain:
    """A brain as Python sees it; ``cameras`` are (width, height, gray scale)."""

    name: str
    space_type: str
    action_sizes: tuple[int, ...]
    observation_size: int
    stacked: int = 1
    cameras: tuple[tuple[int, int, bool], ...] = ()


@dataclass(frozen=True)
class Wire:
    """The build over gRPC against the scene in process: both seeded ``seed``, reset with
    ``config``, then ``decisions`` times the actions of ``decide(in-process env, rng 0)``."""

    seed: int
    decisions: int
    obs_atol: float
    reward_atol: float
    decide: Callable[[LocalEnvironment, np.random.Generator], DecideAll] | None = None  # None: random
    reset_obs_atol: float | None = None
    config: dict[str, float] | None = None
    check: Callable[[LocalEnvironment], None] | None = None  # of the in-process scene afterwards


@dataclass(frozen=True)
class Workers:
    """Two builds through a SubprocessEnvManager (worker ``w`` seeded ``w``) with ``deciders()``,
    for ``transitions`` transitions that ``check`` reads."""

    deciders: Callable[[], dict[str, Decide]]
    transitions: int
    check: TransitionsCheck | None = None
    seeds_differ: bool = True  # the workers' first observations differ


@dataclass(frozen=True)
class Replay:
    """The same seed gives the same run of ``decisions`` random decisions (actions from
    ``default_rng(actions_seed)``), recording ``record`` of every brain after the reset and each
    decision; another seed gives another ``other_seed``: "episode" (not equal), "reset" (the first
    record not even close) or None (not checked)."""

    decisions: int
    record: tuple[str, ...] = ("observations", "rewards")  # also "agents", "pictures"
    actions_seed: int = 7
    other_seed: str | None = "episode"
    slow: bool = False


@dataclass(frozen=True)
class Play:
    """Episodes of the first brain in process (scene seeded ``seed``): at most ``decisions``
    decisions, stopping after ``episodes`` ended episodes when given; ``check`` reads them."""

    seed: int
    decisions: int
    episodes: int | None
    check: EpisodesCheck
    decide: Callable[[LocalEnvironment, np.random.Generator], Decide] | None = None  # None: random
    slow: bool = True


@dataclass(frozen=True)
class Example:
    """One example scene: what it shows Python, and how the contract plays it."""

    name: str
    academy: str
    brains: tuple[Brain, ...]
    #: (brain, count, max_step, decision interval, on demand) of each agent group
    groups: tuple[tuple[str, int, int, int, bool], ...]
    reset_parameters: dict[str, float]
    academy_max_steps: int
    #: training configuration: (width, height, quality level, time scale, target frame rate)
    engine: tuple[int, int, int, float, int]
    wire: Wire | None = None
    workers: Workers | None = None
    replay: Replay | None = None
    scripted: Play | None = None
    random: Play | None = None
    renders: bool = False  # renders its pictures with OpenGL (tests run in a process without TensorFlow)
    #: agents per brain at every decision when known in advance (brains a scene switches agents
    #: between, like WallJump's, only have the total of ``groups``)
    fixed_brains: bool = True

    @property
    def agents(self) -> int:
        return sum(group[1] for group in self.groups)

    @property
    def brain_names(self) -> list[str]:
        return [brain.name for brain in self.brains]


# ---------------------------------------------------------------- decisions


def _observing(brain: str, heuristic: Callable[[np.ndarray], np.ndarray]) -> Callable[..., DecideAll]:
    """The wire's decide: ``heuristic(vector observations)`` for ``brain``."""

    def factory(env: LocalEnvironment, rng: np.random.Generator) -> DecideAll:
        return lambda infos: {brain: heuristic(infos[brain].vector_observations.astype(np.float32))}

    return factory


def _pyramids_wire(env: LocalEnvironment, rng: np.random.Generator) -> DecideAll:
    scene = env.academy.scene  # the in-process scene is in the same state as the build's
    return lambda infos: {"PyramidsLearning": switch_then_gold(scene)}


def _switch_pressed(env: LocalEnvironment) -> None:
    assert env.academy.scene.switch_on.any()  # the brick pyramids took part


def _constant(value: float, size: int) -> Decide:
    return lambda info: np.full((len(info.agents), size), value, np.float32)


def shortest_path_actions(brain_info: Any) -> np.ndarray:
    """:func:`shortest_path_action` for every agent of a GridWorld BrainInfo (pictures as floats
    in [0, 1]), float32 ``(agents, 1)``."""
    images = brain_info.visual_observations[0]
    return np.array(
        [[shortest_path_action(np.round(image * 255).astype(np.uint8))] for image in images], np.float32
    )


def _random_per_brain(brains: list[str], branches: tuple[int, ...]) -> Callable[[], dict[str, Decide]]:
    """Random discrete actions for each brain, from a generator of its own (seeded by its index)."""

    def deciders() -> dict[str, Decide]:
        rngs = {name: np.random.default_rng(i) for i, name in enumerate(brains)}

        def decide(rng: np.random.Generator) -> Decide:
            return lambda info: np.stack(
                [rng.integers(0, n, len(info.agents)) for n in branches], axis=1
            ).astype(np.float32)

        return {name: decide(rngs[name]) for name in brains}

    return deciders


def _uniform(count: int, size: int) -> Callable[[], dict[str, Decide]]:
    def deciders() -> dict[str, Decide]:
        rng = np.random.default_rng(0)
        return {"CrawlerDynamicLearning": lambda info: rng.uniform(-1, 1, (count, size)).astype(np.float32)}

    return deciders


def _gridworld_masked_random(env: LocalEnvironment, rng: np.random.Generator) -> Decide:
    """A random move among those the action mask allows."""

    def decide(batch: Any) -> np.ndarray:
        allowed = np.flatnonzero(~batch.action_masks[0])
        return np.array([[int(rng.choice(allowed))]], np.float32)

    return decide


def _gridworld_follow_the_picture(env: LocalEnvironment, rng: np.random.Generator) -> Decide:
    return lambda batch: np.array([[shortest_path_action(batch.visual_observations[0][0])]], np.float32)


# ---------------------------------------------------------------- checks of two workers' transitions


def _every(check: Callable[[dict], None]) -> TransitionsCheck:
    def run(transitions: Iterable[dict]) -> None:
        for infos in transitions:
            check(infos)

    return run


def _always(holds: Callable[[dict], Any]) -> TransitionsCheck:
    """Every transition: ``holds(infos)`` is true."""

    def check(infos: dict) -> None:
        assert holds(infos)

    return _every(check)


def _rewards(values: dict[str, float], rtol: float = 1e-7) -> TransitionsCheck:
    """Every transition: each brain's rewards are ``values[brain]``."""

    def check(infos: dict) -> None:
        for brain, value in values.items():
            np.testing.assert_allclose(infos[brain].rewards, value, rtol=rtol)

    return _every(check)


def _summed(brain: str, minimum: float, reduce: Callable[[list[float]], float] = sum) -> TransitionsCheck:
    """``reduce`` over the transitions of the summed rewards of ``brain`` exceeds ``minimum``."""

    def run(transitions: Iterable[dict]) -> None:
        values = [float(np.sum(infos[brain].rewards)) for infos in transitions]
        assert reduce(values) > minimum

    return run


def _gridworld_six_short_episodes(transitions: Iterable[dict]) -> None:
    """Following the picture, both workers end episodes close to the optimum."""
    returns, running = [], {0: 0.0, 1: 0.0}
    for infos in transitions:
        info = infos["GridWorldLearning"]
        worker = int(info.agents[0].split("-")[0].lstrip("$"))
        running[worker] += info.rewards[0]
        if info.local_done[0]:
            returns.append(running[worker])
            running[worker] = 0.0
        if len(returns) >= 6:
            break
    assert len(returns) >= 6 and min(returns) >= 0.9


# ---------------------------------------------------------------- checks of episodes


def episodes(
    *,
    at_least: int | None = None,
    exactly: int | None = None,
    mean_at_least: float | None = None,
    mean_below: float | None = None,
    also: EpisodesCheck | None = None,
) -> EpisodesCheck:
    """The number of ended episodes and their mean return (and ``also`` whatever else)."""

    def check(returns: list[float], timeouts: list[bool]) -> None:
        if at_least is not None:
            assert len(returns) >= at_least, len(returns)
        if exactly is not None:
            assert len(returns) == exactly, len(returns)
        if mean_at_least is not None:
            assert np.mean(returns) >= mean_at_least, np.round(returns, 3)
        if mean_below is not None:
            assert np.mean(returns) < mean_below, np.mean(returns)
        if also is not None:
            also(returns, timeouts)

    return check


def _balanced_to_the_end(returns: list[float], timeouts: list[bool]) -> None:
    # A full episode is 1 + 5000/5 decisions of +0.1 and ends by the agent's max step.
    assert sum(timeouts) >= 10
    assert max(returns) == pytest.approx(100.1, abs=1e-3)


def _gridworld_short_paths(returns: list[float], timeouts: list[bool]) -> None:
    # Optimal return 1 - 0.01 (d - 1) for a path of d moves: at most 8 moves on a 5x5 board, one pit.
    assert min(returns) >= 1 - 0.01 * 7


def _all_timed_out(returns: list[float], timeouts: list[bool]) -> None:
    assert all(timeouts)  # episodes end by the 4000-step limit only


def _every_player_played_a_whole_episode(returns: list[float], timeouts: list[bool]) -> None:
    assert sum(timeouts) >= 36


# ---------------------------------------------------------------- the table

_NO_RESET_PARAMETERS: dict[str, float] = {}
_BALL = {"mass": 1.0, "gravity": 9.81, "scale": 1.0}
_PUSH_BLOCK = {"dynamic_friction": 0.0, "static_friction": 0.0, "block_drag": 0.5, "block_scale": 2.0}
_WALL_JUMP_BRAINS = ["SmallWallJumpLearning", "BigWallJumpLearning"]
_CAMERA = ((84, 84, False),)


def _ball(name: str, academy: str, observation_size: int, stacked: int, engine: tuple) -> Example:
    brain = f"{name}Learning"
    return Example(
        name,
        academy,
        (Brain(brain, "continuous", (2,), observation_size, stacked),),
        ((brain, 12, 5000, 5, False),),
        _BALL,
        0,
        engine,
        wire=Wire(
            3,
            3,
            obs_atol=1e-5,
            reward_atol=1e-6,
            decide=_observing(brain, balance),
            reset_obs_atol=1e-6,
            config={"gravity": 9.81},
        ),
        workers=(
            Workers(
                lambda: {brain: lambda info: balance(info.vector_observations.astype(np.float32))},
                6,
                _rewards({brain: 0.1}),
            )
            if name == "3DBall"
            else None
        ),
        replay=Replay(60, record=("observations",), actions_seed=5, other_seed="reset"),
        scripted=Play(
            2,
            1001,
            None,
            episodes(exactly=12, mean_at_least=0.8 * 100.0, also=_balanced_to_the_end),
            decide=lambda env, rng: lambda batch: balance(batch.vector_observations),
        ),
        random=Play(0, 150, None, episodes(at_least=24, mean_below=0.1 * 100.0), slow=False),
    )


def _visual(name: str, brain: str, branches: tuple[int, ...], group: tuple, max_steps: int, engine: tuple,
            reset_parameters: dict[str, float]) -> Example:  # fmt: skip
    return Example(
        name,
        "Academy",
        (Brain(brain, "discrete", branches, 0, 1, _CAMERA),),
        ((brain, *group),),
        reset_parameters,
        max_steps,
        engine,
        wire=Wire(5, 3, obs_atol=0.0, reward_atol=1e-6),
        replay=Replay(3, record=("pictures",)),
        renders=True,
    )


EXAMPLES: list[Example] = [
    _ball("3DBall", "Ball3DAcademy", 8, 1, (600, 300, 0, 20.0, 60)),
    _ball("3DBallHard", "Ball3DHardAcademy", 5, 9, (300, 200, 0, 20.0, 60)),
    Example(
        "Basic",
        "Academy",
        (Brain("BasicLearning", "discrete", (3,), 20),),
        (("BasicLearning", 1, 0, 1, True),),
        _NO_RESET_PARAMETERS,
        0,
        (80, 80, 1, 100.0, 60),
        # the optimum is 0.93 per episode (7 moves to the large goal)
        random=Play(0, 2000, 20, episodes(exactly=20, mean_below=0.5), slow=False),
    ),
    Example(
        "Bouncer",
        "Academy",
        (Brain("BouncerLearning", "continuous", (3,), 6, 3),),
        (("BouncerLearning", 1, 0, 1, True),),
        {"banana_scale": 150.0},
        0,
        (80, 80, 1, 100.0, -1),
        wire=Wire(
            3,
            40,
            obs_atol=1e-5,
            reward_atol=1e-6,
            decide=_observing("BouncerLearning", bouncer_heuristic),
            config={"banana_scale": 200.0},
            check=lambda env: np.testing.assert_allclose(
                env.academy.scene.world.banana_box()[1], [2.0, 2.0, 4.0]
            ),
        ),
        workers=Workers(
            lambda: {"BouncerLearning": lambda info: bouncer_heuristic(info.vector_observations)},
            40,
            _summed("BouncerLearning", 0.5, max),  # the scripted jumps catch bananas through the workers too
        ),
        replay=Replay(40, slow=True),
        scripted=Play(
            6,
            2000,
            20,
            episodes(at_least=20, mean_at_least=0.8 * 10.0),
            decide=lambda env, rng: lambda batch: bouncer_heuristic(batch.vector_observations),
        ),
        random=Play(7, 2000, 30, episodes(at_least=30, mean_below=0.1 * 10.0)),
    ),
    Example(
        "CrawlerDynamic",
        "Academy",
        (Brain("CrawlerDynamicLearning", "continuous", (20,), 126),),
        (("CrawlerDynamicLearning", 9, 5000, 5, False),),
        _NO_RESET_PARAMETERS,
        0,
        (80, 80, 0, 100.0, -1),
        workers=Workers(
            _uniform(9, 20),
            10,
            _always(lambda infos: np.isfinite(infos["CrawlerDynamicLearning"].vector_observations).all()),
            seeds_differ=False,
        ),
        replay=Replay(15, other_seed=None),
    ),
    Example(
        "CrawlerStatic",
        "Academy",
        (Brain("CrawlerStaticLearning", "continuous", (20,), 126),),
        (("CrawlerStaticLearning", 12, 5000, 5, False),),
        _NO_RESET_PARAMETERS,
        0,
        (1280, 720, 0, 100.0, -1),
        wire=Wire(2, 20, obs_atol=1e-4, reward_atol=1e-5),
        replay=Replay(15, other_seed=None),
    ),
    Example(
        "FoodCollector",
        "Academy",
        (Brain("BananaLearning", "discrete", (3, 3, 3, 2), 53),),
        (("BananaLearning", 20, 5000, 5, False),),
        {"laser_length": 1.0, "agent_scale": 1.0},
        1500,
        (500, 500, 0, 15.0, -1),
        wire=Wire(
            3,
            5,
            obs_atol=1e-6,
            reward_atol=1e-7,
            config={"agent_scale": 1.5},
            check=lambda env: np.testing.assert_allclose(env.academy.scene.world.agent_scales, 1.5),
        ),
        workers=Workers(lambda: {"BananaLearning": _constant(0.0, 4)}, 4),
        replay=Replay(30, slow=True),
    ),
    Example(
        "GridWorld",
        "GridAcademy",
        (Brain("GridWorldLearning", "discrete", (5,), 0, 1, _CAMERA),),
        (("GridWorldLearning", 1, 100, 1, True),),
        {"gridSize": 5.0, "numObstacles": 1.0, "numGoals": 1.0},
        0,
        (84, 84, 0, 20.0, -1),
        wire=Wire(
            5,
            4,
            obs_atol=0.0,
            reward_atol=1e-8,
            decide=lambda env, rng: (
                lambda infos: {"GridWorldLearning": shortest_path_actions(infos["GridWorldLearning"])}
            ),
        ),
        workers=Workers(
            lambda: {"GridWorldLearning": shortest_path_actions},
            400,
            _gridworld_six_short_episodes,
            seeds_differ=False,
        ),
        replay=Replay(80, record=("pictures",), actions_seed=1),
        scripted=Play(
            7,
            101 * 40,
            40,
            # benchmark 0.8
            episodes(exactly=40, mean_at_least=0.8 * 0.8, also=_gridworld_short_paths),
            decide=_gridworld_follow_the_picture,
            slow=False,
        ),
        random=Play(
            7,
            101 * 60,
            60,
            episodes(exactly=60, mean_below=0.25 * 0.8),
            decide=_gridworld_masked_random,
            slow=False,
        ),
    ),
    Example(
        "Hallway",
        "Academy",
        (Brain("HallwayLearning", "discrete", (5,), 36, 3),),
        (("HallwayLearning", 16, 3000, 6, False),),
        _NO_RESET_PARAMETERS,
        0,
        (128, 128, 0, 20.0, -1),
        wire=Wire(3, 3, obs_atol=1e-6, reward_atol=1e-7),
        workers=Workers(
            lambda: {"HallwayLearning": _constant(1.0, 1)},  # forward
            4,
            _always(lambda infos: np.all(np.asarray(infos["HallwayLearning"].rewards) <= 1.0)),
        ),
        replay=Replay(40, record=("observations",), slow=True),
        scripted=Play(
            1,
            400,
            32,
            episodes(at_least=32, mean_at_least=0.8 * 0.7),
            decide=lambda env, rng: (lambda scene: lambda _: shortest_path(scene))(env.academy.scene),
        ),
        random=Play(2, 510, 16, episodes(at_least=16, mean_below=0.25 * 0.7)),
    ),
    Example(
        "PushBlock",
        "Academy",
        (Brain("PushBlockLearning", "discrete", (7,), 70, 3),),
        (("PushBlockLearning", 32, 5000, 5, False),),
        _PUSH_BLOCK,
        0,
        (400, 300, 0, 15.0, 60),
        wire=Wire(
            3,
            3,
            obs_atol=1e-6,
            reward_atol=1e-7,
            config={"block_scale": 3.0},
            check=lambda env: np.testing.assert_allclose(env.academy.scene.world.block_halves, 1.5),
        ),
        workers=Workers(
            lambda: {"PushBlockLearning": _constant(0.0, 1)},
            4,
            _rewards({"PushBlockLearning": -5 / 5000}, 1e-5),
        ),  # standing still
        replay=Replay(30, record=("observations",), slow=True),
        scripted=Play(
            1,
            400,
            64,
            episodes(at_least=64, mean_at_least=0.8 * 4.5),
            decide=lambda env, rng: (lambda scene: lambda _: push_toward_goal(scene))(env.academy.scene),
            slow=False,
        ),
        # 1002 decisions: every agent finishes at least one 5000-step episode
        random=Play(2, 1002, 32, episodes(at_least=32, mean_below=0.25 * 4.5)),
    ),
    Example(
        "Pyramids",
        "Academy",
        (Brain("PyramidsLearning", "discrete", (5,), 172),),
        (("PyramidsLearning", 16, 5000, 5, False),),
        _NO_RESET_PARAMETERS,
        0,
        (80, 80, 1, 100.0, -1),
        wire=Wire(
            3,
            60,
            obs_atol=1e-5,
            reward_atol=1e-6,
            decide=_pyramids_wire,
            check=_switch_pressed,
        ),
        workers=Workers(
            lambda: {"PyramidsLearning": _constant(0.0, 1)},
            4,
            _rewards({"PyramidsLearning": -5 / 5000}, 1e-5),
        ),
        replay=Replay(30, slow=True),
        scripted=Play(
            6,
            500,
            16,
            episodes(at_least=16, mean_at_least=0.8 * 1.75),
            decide=lambda env, rng: (lambda scene: lambda _: switch_then_gold(scene))(env.academy.scene),
        ),
        random=Play(7, 1002, 16, episodes(at_least=16, mean_below=0.25 * 1.75)),
    ),
    Example(
        "Reacher",
        "Academy",
        (Brain("ReacherLearning", "continuous", (4,), 33),),
        (("ReacherLearning", 20, 4000, 4, False),),
        {"goal_size": 5.0, "goal_speed": 1.0, "gravity": 9.81, "deviation": 0.0, "deviation_freq": 0.0},
        0,
        (80, 80, 0, 100.0, 60),
        wire=Wire(
            3,
            40,
            obs_atol=1e-4,
            reward_atol=1e-6,
            decide=_observing("ReacherLearning", reacher_heuristic),
            config={"goal_size": 6.0},
            check=lambda env: np.testing.assert_allclose(env.academy.scene.goal_size, 6.0),
        ),
        workers=Workers(
            lambda: {"ReacherLearning": lambda info: reacher_heuristic(info.vector_observations)},
            80,
            _summed("ReacherLearning", 1.0),  # the scripted reach scores through the workers too
        ),
        replay=Replay(30),
        scripted=Play(
            0,
            1002,
            None,
            episodes(exactly=20, mean_at_least=0.8 * 30.0, also=_all_timed_out),
            decide=lambda env, rng: lambda batch: reacher_heuristic(batch.vector_observations),
        ),
        random=Play(4, 1002, None, episodes(exactly=20, mean_below=0.1 * 30.0)),
    ),
    Example(
        "SoccerTwos",
        "Academy",
        (
            Brain("StrikerLearning", "discrete", (7,), 112),
            Brain("GoalieLearning", "discrete", (5,), 112),
        ),
        (("StrikerLearning", 16, 3000, 5, False), ("GoalieLearning", 16, 3000, 5, False)),
        {"ball_scale": 7.5, "gravity": 9.81},
        0,
        (800, 500, 0, 10.0, 60),
        wire=Wire(
            3,
            5,
            obs_atol=1e-6,
            reward_atol=1e-7,
            config={"ball_scale": 6.0},
            check=lambda env: np.testing.assert_allclose(env.academy.scene.world.ball_radius, 0.66),
        ),
        workers=Workers(
            lambda: {"StrikerLearning": _constant(0.0, 1), "GoalieLearning": _constant(0.0, 1)},
            4,
            _rewards({"StrikerLearning": -5 / 3000, "GoalieLearning": 5 / 3000}, 1e-5),
        ),
        replay=Replay(30, slow=True),
    ),
    Example(
        "Tennis",
        "Academy",
        (Brain("TennisLearning", "continuous", (2,), 8, 3),),
        (("TennisLearning", 36, 5000, 5, False),),
        {"gravity": 9.81, "angle": 55.0, "scale": 1.0},
        25000,
        (300, 200, 0, 100.0, 60),
        wire=Wire(
            3,
            40,
            obs_atol=1e-5,
            reward_atol=1e-6,
            decide=_observing("TennisLearning", tennis_heuristic),
            config={"angle": 50.0},
            check=lambda env: np.testing.assert_allclose(np.abs(env.academy.scene.world.angles), 50.0),
        ),
        workers=Workers(
            lambda: {"TennisLearning": lambda info: tennis_heuristic(info.vector_observations)},
            60,
            _summed("TennisLearning", 0.5),  # the scripted rallies cross the net through the workers too
        ),
        replay=Replay(30, slow=True),
        scripted=Play(
            0,
            1100,
            None,
            episodes(mean_at_least=0.8 * 2.5, also=_every_player_played_a_whole_episode),
            decide=lambda env, rng: lambda batch: tennis_heuristic(batch.vector_observations),
        ),
        random=Play(5, 300, None, episodes(at_least=200, mean_below=0.05 * 2.5)),
    ),
    _visual(
        "VisualFoodCollector",
        "VisualBananaLearning",
        (3, 3, 3, 2),
        (8, 5000, 5, False),
        1500,
        (500, 500, 0, 15.0, -1),
        _NO_RESET_PARAMETERS,
    ),  # fmt: skip
    _visual(
        "VisualHallway",
        "VisualHallwayLearning",
        (5,),
        (1, 3000, 6, False),
        0,
        (128, 128, 0, 20.0, -1),
        _NO_RESET_PARAMETERS,
    ),  # fmt: skip
    _visual(
        "VisualPushBlock",
        "VisualPushBlockLearning",
        (7,),
        (1, 5000, 5, False),
        0,
        (400, 300, 0, 15.0, 60),
        _PUSH_BLOCK,
    ),  # fmt: skip
    _visual(
        "VisualPyramids",
        "VisualPyramidsLearning",
        (5,),
        (1, 5000, 5, False),
        0,
        (80, 80, 1, 100.0, -1),
        _NO_RESET_PARAMETERS,
    ),  # fmt: skip
    Example(
        "Walker",
        "Academy",
        (Brain("WalkerLearning", "continuous", (39,), 212, 5),),
        (("WalkerLearning", 11, 5000, 5, False),),
        {"gravity": 9.81, "hip_mass": 15.0, "chest_mass": 8.0, "spine_mass": 10.0},
        0,
        (80, 80, 1, 25.0, -1),
        wire=Wire(1, 10, obs_atol=1e-4, reward_atol=1e-5, config={"hip_mass": 20.0}),
        workers=Workers(
            lambda: {"WalkerLearning": lambda info: walker_heuristic(info.vector_observations)},
            6,
            _always(lambda infos: not np.any(infos["WalkerLearning"].local_done)),
            seeds_differ=False,
        ),
        replay=Replay(10, other_seed=None),
    ),
    Example(
        "WallJump",
        "Academy",
        tuple(Brain(name, "discrete", (3, 3, 3, 2), 74, 6) for name in _WALL_JUMP_BRAINS),
        (("SmallWallJumpLearning", 24, 2000, 5, False),),
        {
            "no_wall_height": 0.0,
            "small_wall_height": 4.0,
            "big_wall_min_height": 8.0,
            "big_wall_max_height": 8.0,
        },
        0,
        (80, 80, 1, 100.0, -1),
        wire=Wire(3, 4, obs_atol=1e-5, reward_atol=1e-6),
        workers=Workers(_random_per_brain(_WALL_JUMP_BRAINS, (3, 3, 3, 2)), 6),
        replay=Replay(25, record=("observations", "agents"), slow=True),
        fixed_brains=False,
    ),
]
