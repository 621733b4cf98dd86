"""RLTrainer's vectorized experience collection against the per-agent algorithm of ML-Agents 0.9.

``reference_add_experiences`` below is the 0.9 algorithm written out agent by agent and field by
field; the trainer's numpy version must leave exactly the same trajectories, reward sums, episode
step counts and statistics, whatever agents join, leave, finish or hit their step limit.
"""

import numpy as np
import pytest

from mlagents.envs.brain import BrainInfo, BrainParameters
from mlagents.trainers.buffer import Buffer
from mlagents.trainers.ppo.trainer import PPOTrainer

AGENTS = ["a", "b", "c", "d"]


def make_brain(space, cameras=0):
    resolutions = [{"height": 20, "width": 24, "blackAndWhite": False}] * cameras
    actions = [3, 2] if space == "discrete" else [2]
    return BrainParameters("Brain", 3, 1, resolutions, actions, [""] * len(actions), space)


def random_info(rng, brain, agents, memory_size=0):
    n = len(agents)
    discrete = brain.vector_action_space_type == "discrete"
    masks = (rng.random((n, 5)) > 0.3).astype(np.float64) if discrete else np.ones((n, 0))
    done = rng.random(n) < 0.25
    return BrainInfo(
        visual_observation=[[rng.random((20, 24, 3)) for _ in range(n)] for _ in brain.camera_resolutions],
        vector_observation=rng.normal(size=(n, 3)),
        text_observations=[""] * n,
        memory=rng.normal(size=(n, memory_size)) if memory_size else np.zeros((0, 0)),
        reward=list(rng.normal(size=n)),
        agents=list(agents),
        local_done=list(done),
        vector_action=rng.integers(0, 2, size=(n, 2)).astype(np.float64),
        text_action=[[] for _ in range(n)],
        max_reached=list(done & (rng.random(n) < 0.5)),
        action_mask=masks,
    )


def reference_add_experiences(trainer, curr_info, next_info, outputs):
    """ML-Agents 0.9's add_experiences, one agent and one field at a time."""
    policy = trainer.policy
    buffers = trainer.training_buffer
    if outputs:
        trainer.stats["Policy/Entropy"].append(float(np.mean(outputs["entropy"])))
        trainer.stats["Policy/Learning Rate"].append(float(outputs["learning_rate"]))
        for name, signal in policy.reward_signals.items():
            trainer.stats[signal.value_name].append(float(np.mean(outputs["value_heads"][name])))
    for agent_id in curr_info.agents:
        buffers[agent_id].last_brain_info = curr_info
        buffers[agent_id].last_take_action_outputs = outputs
    same = list(curr_info.agents) == list(next_info.agents)
    curr_to_use = curr_info if same else trainer.construct_curr_info(next_info)
    rewards = {
        name: signal.evaluate(curr_to_use, next_info) for name, signal in policy.reward_signals.items()
    }
    for next_idx, agent_id in enumerate(next_info.agents):
        agent = buffers[agent_id]
        stored, stored_outputs = agent.last_brain_info, agent.last_take_action_outputs
        if stored is not None:
            idx = list(stored.agents).index(agent_id)
            if not stored.local_done[idx] and stored_outputs is not None:
                for i in range(policy.vis_obs_size):
                    agent[f"visual_obs{i}"].append(stored.visual_observations[i][idx])
                    agent[f"next_visual_obs{i}"].append(next_info.visual_observations[i][next_idx])
                agent["vector_obs"].append(stored.vector_observations[idx])
                agent["next_vector_in"].append(next_info.vector_observations[next_idx])
                if policy.use_recurrent:
                    agent["memory"].append(policy.memories_of(stored)[idx])
                agent["masks"].append(1.0)
                agent["done"].append(bool(next_info.local_done[next_idx]))
                if policy.use_continuous_act:
                    agent["actions_pre"].append(stored_outputs["pre_action"][idx])
                    agent["random_normal_epsilon"].append(stored_outputs["random_normal_epsilon"][idx])
                else:
                    agent["action_mask"].append(policy.action_masks_of(stored)[idx], padding_value=1)
                agent["actions"].append(stored_outputs["action"][idx])
                agent["action_probs"].append(stored_outputs["action_probs"][idx])
                agent["prev_action"].append(stored.previous_vector_actions[idx])
                trainer.collected_rewards["environment"][agent_id] += float(
                    np.float32(next_info.rewards[next_idx])
                )
                for name, result in rewards.items():
                    agent[f"{name}_rewards"].append(float(result.scaled_reward[next_idx]))
                    agent[f"{name}_value_estimates"].append(float(stored_outputs["value_heads"][name][idx]))
                    trainer.collected_rewards[name][agent_id] += float(result.scaled_reward[next_idx])
        if not next_info.local_done[next_idx]:
            trainer.episode_steps[agent_id] += 1


def assert_same_state(fast, reference):
    assert sorted(fast.training_buffer) == sorted(reference.training_buffer)
    for agent_id, expected in reference.training_buffer.items():
        actual = fast.training_buffer[agent_id]
        assert sorted(actual) == sorted(expected), agent_id
        for key, field in expected.items():
            assert len(actual[key]) == len(field), (agent_id, key)
            if len(field):
                np.testing.assert_array_equal(
                    np.array(actual[key]), np.array(field), err_msg=f"{agent_id} {key}"
                )
                assert np.array(actual[key]).dtype == np.array(field).dtype, (agent_id, key)
                assert type(actual[key][0]) is type(field[0]), (agent_id, key)
            assert actual[key].padding_value == field.padding_value, (agent_id, key)
        assert actual.last_brain_info is expected.last_brain_info
    for name, sums in reference.collected_rewards.items():
        assert dict(fast.collected_rewards[name]) == dict(sums), name
    assert dict(fast.episode_steps) == dict(reference.episode_steps)
    assert dict(fast.stats) == dict(reference.stats)


@pytest.mark.slow
@pytest.mark.parametrize(
    "space, cameras, recurrent",
    [("discrete", 0, False), ("continuous", 0, False), ("discrete", 1, True), ("continuous", 1, True)],
)
def test_add_experiences_matches_the_per_agent_algorithm(ppo_params, space, cameras, recurrent):
    brain = make_brain(space, cameras)
    params = ppo_params(use_recurrent=recurrent, memory_size=8, time_horizon=1000)
    fast = PPOTrainer(brain, 1, params, True, False, 0, "run")
    reference = PPOTrainer(brain, 1, params, True, False, 0, "run")
    rng = np.random.default_rng(7)
    memory_size = 8 if recurrent else 0
    current = random_info(rng, brain, AGENTS[:3], memory_size)
    for step in range(25):
        # Agents join, leave and come back; some steps keep the same agents (the common case).
        agents = AGENTS[:3] if step % 3 else [a for a in AGENTS if rng.random() < 0.7]
        following = random_info(rng, brain, agents, memory_size)
        outputs = fast.policy.get_action(current).outputs if current.agents else None
        fast.add_experiences({"Brain": current}, {"Brain": following}, outputs)
        reference_add_experiences(reference, current, following, outputs)
        assert_same_state(fast, reference)
        current = following


def test_brain_without_decision_adds_nothing(ppo_params):
    trainer = PPOTrainer(make_brain("discrete"), 1, ppo_params(), True, False, 0, "run")
    rng = np.random.default_rng(1)
    first, second = random_info(rng, trainer.brain, ["a"]), random_info(rng, trainer.brain, ["a"])
    trainer.add_experiences({"Brain": first}, {"Brain": second}, None)
    assert len(trainer.training_buffer["a"]["actions"]) == 0
    assert trainer.training_buffer["a"].last_brain_info is first


def test_per_agent_hooks_append_one_row(ppo_params):
    trainer = PPOTrainer(make_brain("continuous"), 1, ppo_params(), True, False, 0, "run")
    rng = np.random.default_rng(2)
    info = random_info(rng, trainer.brain, ["a", "b"])
    outputs = trainer.policy.get_action(info).outputs
    trainer.add_policy_outputs(outputs, "b", 1)
    buffer = trainer.training_buffer["b"]
    np.testing.assert_array_equal(buffer["actions"][0], outputs["action"][1])
    np.testing.assert_array_equal(buffer["actions_pre"][0], outputs["pre_action"][1])
    rewards = {name: signal.evaluate(info, info) for name, signal in trainer.policy.reward_signals.items()}
    trainer.add_rewards_outputs(rewards, outputs["value_heads"], "b", 1, 0)
    assert buffer["extrinsic_rewards"] == [float(np.float32(info.rewards[0]))]
    assert buffer["extrinsic_value_estimates"] == [float(outputs["value_heads"]["extrinsic"][1])]


def test_append_rows_equals_appending_agent_by_agent():
    rng = np.random.default_rng(3)
    columns = {
        "obs": rng.normal(size=(3, 2)),
        "mask": [np.ones(2), np.zeros(2), np.ones(2)],
        "r": [0.5, 1.0, 2.0],
    }
    fast, slow = Buffer(), Buffer()
    for buffer in (fast, slow):
        buffer["y"]["obs"].append(np.zeros(2))  # an existing trajectory continues
    fast.append_rows(["x", "y", "z"], columns, {"mask": 1})
    for j, agent_id in enumerate(["x", "y", "z"]):
        for key, column in columns.items():
            slow[agent_id][key].append(column[j], padding_value=1 if key == "mask" else 0)
    for agent_id in slow:
        for key, field in slow[agent_id].items():
            np.testing.assert_array_equal(np.array(fast[agent_id][key]), np.array(field))
            assert fast[agent_id][key].padding_value == field.padding_value


def test_append_rows_rejects_a_column_of_another_length():
    with pytest.raises(ValueError, match="column 'obs' has 2 values for 3 agents"):
        Buffer().append_rows(["x", "y", "z"], {"obs": np.zeros((2, 4))})


@pytest.mark.parametrize("space", ["discrete", "continuous"])
def test_joined_transitions_of_several_environments_give_the_same_trajectories(ppo_params, space):
    """What an env manager hands TrainerController for the steps of one pass (one transition per
    batched decision: the joined BrainInfo the policy saw, its unsplit outputs, the new BrainInfos
    joined) leaves the trainer with the trajectories, bootstrapped returns and statistics of handing
    it the environments' transitions one by one (statistics as means over the same agents)."""
    from mlagents.envs.env_manager import StepBatch, StepInfo
    from mlagents.envs.step_batching import StepBatcher
    from mlagents.trainers.trainer_controller import TrainerController

    brain = make_brain(space)
    params = ppo_params(time_horizon=4, buffer_size=10**6)
    one_by_one = PPOTrainer(brain, 1, params, True, False, 0, "run")
    joined = PPOTrainer(brain, 1, params, True, False, 0, "run")
    rng = np.random.default_rng(11)
    workers = {w: [f"{w}-{a}" for a in AGENTS[: 2 + w]] for w in range(3)}
    current = {w: random_info(rng, brain, agents) for w, agents in workers.items()}
    policies = {"Brain": one_by_one.policy}
    batcher = StepBatcher()
    actions = batcher.decide(policies, [(w, {"Brain": current[w]}) for w in workers])
    for step in range(30):
        # A pass brings the steps of some of the environments (at least one), in any order.
        ready = [w for w in rng.permutation(3).tolist() if rng.random() < 0.7] or [int(rng.integers(3))]
        steps = []
        for w in ready:
            # Now and then an agent is missing from the new observation.
            agents = [a for a in workers[w] if rng.random() < 0.9] if step % 4 == 3 else workers[w]
            following = random_info(rng, brain, agents)
            steps.append((w, StepInfo({"Brain": current[w]}, {"Brain": following}, actions[w])))
            current[w] = following
        batches = batcher.collect(steps)
        for batch in batches:
            for step_info in batch.step_infos:
                previous, following = step_info.previous_all_brain_info, step_info.current_all_brain_info
                outputs = step_info.brain_name_to_action_info["Brain"].outputs
                one_by_one.add_experiences(previous, following, outputs)
                one_by_one.process_experiences(previous, following)
        transitions = TrainerController._transitions("Brain", batches)
        assert len(transitions) == len(batches)
        for batch, (previous, following, outputs) in zip(batches, transitions):
            assert previous["Brain"].agents == [
                a for s in batch.step_infos for a in s.previous_all_brain_info["Brain"].agents
            ]
            joined.add_experiences(previous, following, outputs)
            joined.process_experiences(previous, following)
        actions.update(batcher.decide(policies, [(w, {"Brain": current[w]}) for w in sorted(ready)]))
        # A step without a decision (e.g. right after a reset) is handed over alone.
        alone = StepInfo(None, {"Brain": current[0]}, None)
        assert TrainerController._transitions("Brain", [StepBatch(alone, [alone])]) == []

    assert sorted(joined.training_buffer) == sorted(one_by_one.training_buffer)
    for agent_id, expected in one_by_one.training_buffer.items():
        for key, field in expected.items():
            np.testing.assert_allclose(
                np.array(joined.training_buffer[agent_id][key], dtype=float),
                np.array(field, dtype=float),
                rtol=1e-5,
                err_msg=f"{agent_id} {key}",
            )
    update_expected, update_joined = (
        one_by_one.training_buffer.update_buffer,
        joined.training_buffer.update_buffer,
    )
    assert sorted(update_joined) == sorted(update_expected) and len(update_expected["actions"]) > 50

    # Trajectories reach the update buffer per pass instead of per environment: put both in the order
    # of their (exact, random) observations, then compare every field.
    def order(update_buffer):
        observations = np.array(update_buffer["vector_obs"], dtype=float)
        return np.lexsort(observations.T[::-1])

    expected_order, joined_order = order(update_expected), order(update_joined)
    for key, field in update_expected.items():
        expected_rows = np.array(field, dtype=float)[expected_order]
        joined_rows = np.array(update_joined[key], dtype=float)[joined_order]
        np.testing.assert_allclose(joined_rows, expected_rows, rtol=1e-5, atol=1e-6, err_msg=key)
    for name in one_by_one.collected_rewards:
        assert dict(joined.collected_rewards[name]) == pytest.approx(dict(one_by_one.collected_rewards[name]))
    assert dict(joined.episode_steps) == dict(one_by_one.episode_steps)
    assert joined.stats["Environment/Cumulative Reward"] == pytest.approx(
        one_by_one.stats["Environment/Cumulative Reward"]
    )


# The fields the collection writes; advantages and returns (the PPO math) are left out on purpose.
COLLECTED_FIELDS = (
    "vector_obs",
    "next_vector_in",
    "visual_obs0",
    "next_visual_obs0",
    "memory",
    "masks",
    "done",
    "action_mask",
    "prev_action",
    "actions",
    "action_probs",
    "actions_pre",
    "random_normal_epsilon",
    "extrinsic_rewards",
    "extrinsic_value_estimates",
)


def reference_process_experiences(trainer, next_info):
    """ML-Agents 0.9's choice of the trajectories to process, one agent at a time in the order of
    ``next_info``: a trajectory moves to the update buffer when its agent is done or it holds more
    than ``time_horizon`` steps; a finished episode adds to the statistics."""
    buffers = trainer.training_buffer
    for row, agent_id in enumerate(next_info.agents):
        agent = dict.get(buffers, agent_id)
        actions = None if agent is None else dict.get(agent, "actions")
        if not actions:
            continue
        done = bool(next_info.local_done[row])
        if not (done or len(actions) > trainer.time_horizon):
            continue
        buffers.append_update_buffer(agent_id, training_length=trainer.policy.sequence_length)
        agent.reset_agent()
        if done:
            trainer._update_end_episode_stats(agent_id)


@pytest.mark.slow
@pytest.mark.parametrize(
    "space, cameras, recurrent",
    [("discrete", 0, False), ("continuous", 0, False), ("discrete", 1, True)],
)
def test_collection_fills_the_update_buffer_like_the_per_agent_algorithm(
    ppo_params, space, cameras, recurrent
):
    """Old (agent by agent) and new (vectorized) collection on the same recorded BrainInfo sequence
    put the same experiences into the update buffer in the same order, and record the same
    statistics, episode returns and reward buffer."""
    brain = make_brain(space, cameras)
    params = ppo_params(use_recurrent=recurrent, memory_size=8, time_horizon=3, buffer_size=10**6)
    fast = PPOTrainer(brain, 1, params, True, False, 0, "run")
    reference = PPOTrainer(brain, 1, params, True, False, 0, "run")
    rng = np.random.default_rng(5)
    memory_size = 8 if recurrent else 0
    recorded = [random_info(rng, brain, AGENTS[:3], memory_size)]
    for step in range(40):
        agents = AGENTS[:3] if step % 3 else [a for a in AGENTS if rng.random() < 0.7]
        recorded.append(random_info(rng, brain, agents, memory_size))
    for current, following in zip(recorded, recorded[1:]):
        outputs = fast.policy.get_action(current).outputs if current.agents else None
        fast.add_experiences({"Brain": current}, {"Brain": following}, outputs)
        fast.process_experiences({"Brain": current}, {"Brain": following})
        reference_add_experiences(reference, current, following, outputs)
        reference_process_experiences(reference, following)

    expected, actual = reference.training_buffer.update_buffer, fast.training_buffer.update_buffer
    assert len(expected["actions"]) > 20
    compared = [key for key in COLLECTED_FIELDS if key in expected]
    assert set(compared) == set(expected), "a collected field is missing from COLLECTED_FIELDS"
    for key in compared:
        assert len(actual[key]) == len(expected[key]), key
        np.testing.assert_array_equal(np.array(actual[key]), np.array(expected[key]), err_msg=key)
        assert np.array(actual[key]).dtype == np.array(expected[key]).dtype, key
    for agent_id, trajectory in reference.training_buffer.items():
        for key, field in trajectory.items():
            np.testing.assert_array_equal(np.array(fast.training_buffer[agent_id][key]), np.array(field))
    assert dict(fast.stats) == dict(reference.stats)
    assert fast.cumulative_returns_since_policy_update == reference.cumulative_returns_since_policy_update
    assert list(fast.reward_buffer) == list(reference.reward_buffer)
    assert dict(fast.episode_steps) == dict(reference.episode_steps)
