"""SubprocessUnityEnvironment (the 0.8 parallel environment) on real example builds."""

from functools import partial

import numpy as np
import pytest

from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import UnityActionException, UnityEnvironmentException
from mlagents.envs.subprocess_environment import SubprocessUnityEnvironment
from mlagents.envs.tests.example_builds import example_build
from mlagents.envs.tests.processes import assert_nothing_left, live_children

BALL = "3DBallLearning"


def assert_all_ended(env: SubprocessUnityEnvironment, before: set[int]) -> None:
    build_pids = [worker.build_pid for worker in env.envs]
    assert all(pid is not None for pid in build_pids)
    assert_nothing_left([pid for pid in build_pids if pid is not None], children_before=before)


@pytest.mark.slow
def test_merged_ids_agent_count_splits_and_step_async_errors(free_port_range) -> None:
    before = live_children()
    base_port = free_port_range(2)
    env = SubprocessUnityEnvironment(
        partial(UnityEnvironment, example_build("3DBall"), base_port=base_port), n_env=2
    )
    try:
        assert list(env.external_brains) == [BALL]
        assert env.external_brains[BALL].vector_observation_space_size == 8
        assert env.reset_parameters == env._manager.reset_parameters
        info = env.reset()[BALL]
        assert env.env_agent_counts == {BALL: [12, 12]}
        assert len(info.agents) == 24 and info.vector_observations.shape == (24, 8)
        # Worker w's agents come after those of the workers before it, named "<w>-<own id>".
        assert [agent.split("-", 1)[0] for agent in info.agents] == ["0"] * 12 + ["1"] * 12
        own_ids = [agent.split("-", 1)[1] for agent in info.agents]
        assert own_ids[:12] == own_ids[12:] and not any(agent.startswith("$") for agent in own_ids)
        assert env.global_done is False

        # Every agent gets its own row: worker 0 rows 0..11, worker 1 rows 12..23.
        actions = np.stack([np.linspace(-0.9, 0.9, 24), np.linspace(0.9, -0.9, 24)], axis=1)
        info = env.step({BALL: actions})[BALL]
        assert len(info.agents) == 24
        np.testing.assert_allclose(info.previous_vector_actions, actions, rtol=1e-6)
        # Flat arrays and a lone brain's values without a dict are cut the same way.
        info = env.step(actions[::-1].ravel())[BALL]
        np.testing.assert_allclose(info.previous_vector_actions, actions[::-1], rtol=1e-6)

        env.step_async({BALL: actions})
        with pytest.raises(UnityEnvironmentException) as twice:
            env.step_async({BALL: actions})
        assert str(twice.value) == "Tried to take an environment step bore previous step has completed."
        assert len(env.step_await()[BALL].agents) == 24
        with pytest.raises(UnityEnvironmentException) as not_taken:
            env.step_await()
        assert str(not_taken.value) == "Tried to await an environment step, but no async step was taken."

        # A worker's error reaches the caller with its own type.
        env.step_async({BALL: np.zeros((24, 3))})
        with pytest.raises(UnityActionException, match="3DBallLearning"):
            env.step_await()
    finally:
        env.close()
    assert_all_ended(env, before)


@pytest.mark.slow
def test_global_done_when_every_academy_is_done(free_port_range) -> None:
    # FoodCollector's academy ends its episode after 1500 academy steps (300 decisions).
    env = SubprocessUnityEnvironment(
        partial(UnityEnvironment, example_build("FoodCollector"), base_port=free_port_range(2)), n_env=2
    )
    try:
        name = "BananaLearning"
        info = env.reset()[name]
        assert env.env_agent_counts == {name: [20, 20]}
        actions = np.zeros((40, 4))
        for _ in range(299):
            info = env.step({name: actions})[name]
        assert env.global_done is False
        info = env.step({name: actions})[name]
        assert env.global_done is True
        # A worker whose academy is done starts a new episode instead of stepping.
        info = env.step({name: actions})[name]
        assert env.global_done is False
        assert len(info.agents) == 40 and not any(info.local_done)
    finally:
        env.close()


def test_constructor_error_leaves_no_process(free_port_range, tmp_path) -> None:
    before = live_children()
    factory = partial(UnityEnvironment, str(tmp_path / "NoSuchBuild"), base_port=free_port_range(2))
    with pytest.raises(UnityEnvironmentException, match="NoSuchBuild"):
        SubprocessUnityEnvironment(factory, n_env=2)
    assert live_children() <= before
