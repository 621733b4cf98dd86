"""UnityParallelEnv: every agent of every brain as a PettingZoo ParallelEnv."""

import numpy as np
import pytest
from gymnasium import spaces

from gym_unity.envs import UnityGymException
from gym_unity.tests.gym_test_scenes import EPISODE_MAX_STEP, MULTI_AGENTS

pytest.importorskip("pettingzoo")
from pettingzoo import ParallelEnv
from pettingzoo.test import parallel_api_test

from gym_unity.envs import UnityParallelEnv


@pytest.mark.parametrize(
    "build, agents, brains, cycles",
    [
        ("3DBall", 12, {"3DBallLearning"}, 60),
        ("Tennis", 36, {"TennisLearning"}, 60),
        ("SoccerTwos", 32, {"StrikerLearning", "GoalieLearning"}, 20),
    ],
)
def test_example_builds_pass_the_parallel_api_test(make_env, example_build, build, agents, brains, cycles):
    env = make_env(UnityParallelEnv, example_build(build))
    assert isinstance(env, ParallelEnv)
    assert len(env.possible_agents) == agents
    assert {env.brain_of(agent) for agent in env.possible_agents} == brains
    parallel_api_test(env, num_cycles=cycles)


def test_soccer_agents_have_their_brains_spaces(make_env, example_build):
    env = make_env(UnityParallelEnv, example_build("SoccerTwos"))
    assert env.possible_agents[0] == "StrikerLearning_0" and env.possible_agents[-1] == "GoalieLearning_15"
    assert env.action_space("StrikerLearning_3") == spaces.Discrete(7)
    assert env.action_space("GoalieLearning_3") == spaces.Discrete(5)
    assert env.observation_space("GoalieLearning_3") == spaces.Box(-np.inf, np.inf, (112,), np.float32)


def test_two_brains_scene_passes_the_api_test_and_routes_actions(make_env, scene_build):
    env = make_env(UnityParallelEnv, scene_build("TwoBrainsMultiAgent"))
    assert env.possible_agents == ["MoverBrain_0", "MoverBrain_1", "ChooserBrain_0"]
    assert env.action_space("MoverBrain_1") == spaces.Box(-1, 1, (2,), np.float32)
    assert env.action_space("ChooserBrain_0") == spaces.MultiDiscrete([3, 2])
    parallel_api_test(env, num_cycles=20)

    env.reset()
    actions = {
        "MoverBrain_0": np.array([0.25, -0.5], dtype=np.float32),
        "MoverBrain_1": np.array([1.0, 0.0], dtype=np.float32),
        "ChooserBrain_0": np.array([2, 1]),
    }
    observations, rewards, terminations, truncations, infos = env.step(actions)
    # Each agent observes the action it received.
    for agent, action in actions.items():
        np.testing.assert_allclose(observations[agent], action)
        assert observations[agent].dtype == np.float32
    assert rewards == {agent: 0.5 for agent in actions}
    assert not any(terminations.values()) and not any(truncations.values())


def test_finished_agents_leave_until_every_agent_is_done(make_env, scene_build):
    env = make_env(UnityParallelEnv, scene_build("MultiEpisodes"))
    agents = ["MultiEpisodesBrain_0", "MultiEpisodesBrain_1", "MultiEpisodesBrain_2"]
    observations, infos = env.reset(seed=0)
    assert env.agents == agents and set(observations) == set(infos) == set(agents)

    # Agent 1 ends its episode (action 1): terminated, and it leaves the live agents.
    _, rewards, terminations, truncations, _ = env.step({agent: int(agent.endswith("1")) for agent in agents})
    assert terminations == {agents[0]: False, agents[1]: True, agents[2]: False}
    assert rewards[agents[1]] == 1.0 and not any(truncations.values())
    assert env.agents == [agents[0], agents[2]]
    with pytest.raises(UnityGymException, match=r"\['MultiEpisodesBrain_1'\] are done"):
        env.step({agent: 0 for agent in agents})
    with pytest.raises(UnityGymException, match="No action for the live agent"):
        env.step({agents[0]: 0})

    # The others reach their maximum step count: truncated; then nobody is left.
    for _ in range(EPISODE_MAX_STEP):
        _, _, terminations, truncations, _ = env.step({agent: 0 for agent in env.agents})
    assert truncations == {agents[0]: True, agents[2]: True} and not any(terminations.values())
    assert env.agents == []
    with pytest.raises(UnityGymException, match="call reset"):
        env.step({})
    env.reset()
    assert env.agents == agents


def test_reset_seed_restarts_the_build(make_env, scene_build):
    env = make_env(UnityParallelEnv, scene_build("Branched"), seed=3)
    first, _ = env.reset(seed=3)  # as started with seed 3: no restart
    env.step({"BranchedBrain_0": np.array([1, 0, 2, 1])})
    again, _ = env.reset(seed=3)
    np.testing.assert_array_equal(again["BranchedBrain_0"], first["BranchedBrain_0"])
    other, _ = env.reset(seed=4)
    assert other["BranchedBrain_0"][-1] != first["BranchedBrain_0"][-1]
    shifted, _ = env.reset(options={"config": {"offset": 10.0}})
    assert shifted["BranchedBrain_0"][-1] >= 10.0


def test_refusals_end_the_build(make_env, scene_build):
    with pytest.raises(UnityGymException, match="no external brain"):
        make_env(UnityParallelEnv, scene_build("NoExternalBrain"))
    env = make_env(UnityParallelEnv, scene_build("ChangingAgents"))
    with pytest.raises(UnityGymException, match="every agent to decide at every step.*On-demand"):
        for _ in range(4):
            env.step({agent: 0 for agent in env.agents})
    env = make_env(UnityParallelEnv, scene_build("MultiEcho"))
    assert len(env.possible_agents) == MULTI_AGENTS
    with pytest.raises(UnityGymException, match="Unknown agent 'Nobody'"):
        env.action_space("Nobody")
    with pytest.raises(UnityGymException, match="Unknown agent 'Nobody'"):
        env.step({**{agent: np.zeros(2) for agent in env.agents}, "Nobody": np.zeros(2)})
