import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo, concatenate_brain_infos
from mlagents.envs.env_manager import StepInfo
from mlagents.envs.policy import Policy
from mlagents.envs.step_batching import StepBatcher, split_action_info, take_action_rows


def make_info(worker: int, n: int, memory_width: int = 0, cameras: int = 1) -> BrainInfo:
    """n agents of worker ``worker``; every number encodes (worker, agent) so rows can be traced."""
    codes = np.array([worker * 100 + i for i in range(n)], dtype=np.float64)
    return BrainInfo(
        visual_observation=[[np.full((2, 2, 1), code) for code in codes] for _ in range(cameras)],
        vector_observation=np.repeat(codes[:, None], 3, axis=1),
        text_observations=[f"t{code:g}" for code in codes],
        memory=np.repeat(codes[:, None], memory_width, axis=1) if memory_width else np.zeros((0, 0)),
        reward=codes.tolist(),
        agents=[f"${worker}-{i}" for i in range(n)],
        local_done=[False] * n,
        vector_action=codes[:, None].copy(),
        text_action=[[] for _ in range(n)],
        max_reached=[False] * n,
        action_mask=np.ones((n, 3)),
        custom_observations=[None] * n,
    )


class RecordingPolicy(Policy):
    """Answers every agent with its own observation code, in every per-agent field."""

    def __init__(self):
        self.calls = []
        self.inputs = []

    def get_action(self, brain_info):
        self.calls.append(list(brain_info.agents))
        self.inputs.append(brain_info)
        n = len(brain_info.agents)
        if n == 0:
            return ActionInfo([], [], [], None, None)
        code = brain_info.vector_observations[:, 0]
        return ActionInfo(
            action=code[:, None] + 0.5,
            memory=np.stack([code, -code], axis=1),
            text=[f"a{c:g}" for c in code],
            value=code * 2,
            outputs={
                "log_probs": code[:, None],
                "value": {"extrinsic": code * 3, "curiosity": code * 4},
                "learning_rate": 0.0003,
                "entropy_scalar": np.float32(1.5),
                "pre_action": list(code),
            },
        )


def test_concatenate_keeps_order_and_does_not_modify_inputs():
    infos = [make_info(0, 2, memory_width=0), make_info(1, 0), make_info(2, 3, memory_width=2)]
    before = [(list(i.agents), i.vector_observations.copy(), len(i.visual_observations[0])) for i in infos]
    merged = concatenate_brain_infos(infos)
    assert merged.agents == ["$0-0", "$0-1", "$2-0", "$2-1", "$2-2"]
    np.testing.assert_array_equal(merged.vector_observations[:, 0], [0, 1, 200, 201, 202])
    assert [obs[0, 0, 0] for obs in merged.visual_observations[0]] == [0, 1, 200, 201, 202]
    assert merged.rewards == [0, 1, 200, 201, 202]
    assert merged.text_observations == ["t0", "t1", "t200", "t201", "t202"]
    assert merged.previous_vector_actions.shape == (5, 1)
    assert merged.action_masks.shape == (5, 3)
    # memories: a BrainInfo without memories contributes zero rows of the widest width
    assert merged.memories.shape == (5, 2)
    np.testing.assert_array_equal(merged.memories[:2], 0)
    np.testing.assert_array_equal(merged.memories[2:, 0], [200, 201, 202])
    after = [(list(i.agents), i.vector_observations, len(i.visual_observations[0])) for i in infos]
    for (agents0, obs0, cams0), (agents1, obs1, cams1) in zip(before, after):
        assert agents0 == agents1 and cams0 == cams1
        np.testing.assert_array_equal(obs0, obs1)


def test_concatenate_agrees_with_brain_info_merge():
    infos = [make_info(0, 2, memory_width=1), make_info(1, 1, memory_width=3)]
    merged = concatenate_brain_infos(infos)
    reference = make_info(0, 2, memory_width=1)
    reference.merge(make_info(1, 1, memory_width=3))
    for attribute in ("vector_observations", "memories", "previous_vector_actions", "action_masks"):
        np.testing.assert_array_equal(getattr(merged, attribute), getattr(reference, attribute))
    for attribute in ("agents", "rewards", "local_done", "max_reached", "text_observations"):
        assert getattr(merged, attribute) == getattr(reference, attribute)


def test_split_action_info_gives_each_part_its_rows():
    policy = RecordingPolicy()
    infos = [make_info(0, 2), make_info(1, 0), make_info(2, 3)]
    parts = split_action_info(policy.get_action(concatenate_brain_infos(infos)), [2, 0, 3])
    assert len(parts) == 3
    for part, info in zip(parts, infos):
        code = info.vector_observations[:, 0]
        np.testing.assert_array_equal(part.action, code[:, None] + 0.5)
        np.testing.assert_array_equal(part.memory, np.stack([code, -code], axis=1).reshape(-1, 2))
        assert part.text == [f"a{c:g}" for c in code]
        np.testing.assert_array_equal(part.value, code * 2)
        np.testing.assert_array_equal(part.outputs["log_probs"], code[:, None])
        np.testing.assert_array_equal(part.outputs["value"]["extrinsic"], code * 3)
        np.testing.assert_array_equal(part.outputs["value"]["curiosity"], code * 4)
        assert part.outputs["pre_action"] == list(code)
        # not per-agent: shared unchanged
        assert part.outputs["learning_rate"] == 0.0003
        assert part.outputs["entropy_scalar"] == np.float32(1.5)


def test_take_action_rows_gathers_rows_in_the_given_order():
    policy = RecordingPolicy()
    infos = [make_info(0, 2), make_info(1, 1), make_info(2, 3)]
    whole = policy.get_action(concatenate_brain_infos(infos))
    part = take_action_rows(whole, 6, np.array([3, 0, 5]))
    np.testing.assert_array_equal(part.action[:, 0], [200.5, 0.5, 202.5])
    np.testing.assert_array_equal(part.outputs["value"]["extrinsic"], [600, 0, 606])
    assert part.text == ["a200", "a0", "a202"]
    assert part.outputs["pre_action"] == [200, 0, 202]
    assert part.outputs["learning_rate"] == 0.0003


def test_concatenate_keeps_rows_of_zero_width():
    infos = [make_info(0, 2), make_info(1, 3)]
    for info in infos:
        info.action_masks = np.ones((len(info.agents), 0))  # a brain without discrete actions
    assert concatenate_brain_infos(infos).action_masks.shape == (5, 0)


def test_split_of_an_empty_decision():
    parts = split_action_info(ActionInfo([], [], [], None, None), [0, 0])
    assert parts == [ActionInfo([], [], [], None, None)] * 2


def decide(batcher, policies, all_brain_infos):
    per_env = batcher.decide(policies, list(enumerate(all_brain_infos)))
    return [per_env[env_id] for env_id in range(len(all_brain_infos))]


def test_one_policy_call_per_brain_for_all_environments():
    policy_a, policy_b = RecordingPolicy(), RecordingPolicy()
    all_brain_infos = [
        {"A": make_info(0, 1), "B": make_info(0, 2), "NoPolicy": make_info(0, 1)},
        {"A": make_info(1, 2), "B": make_info(1, 1), "NoPolicy": make_info(1, 1)},
        {"A": make_info(2, 1)},
    ]
    results = decide(StepBatcher(), {"A": policy_a, "B": policy_b}, all_brain_infos)
    assert policy_a.calls == [["$0-0", "$1-0", "$1-1", "$2-0"]]
    assert policy_b.calls == [["$0-0", "$0-1", "$1-0"]]
    assert [set(result) for result in results] == [{"A", "B"}, {"A", "B"}, {"A"}]
    for result, all_brain_info in zip(results, all_brain_infos):
        for brain, action_info in result.items():
            expected = all_brain_info[brain].vector_observations[:, 0][:, None] + 0.5
            np.testing.assert_array_equal(action_info.action, expected)


def test_a_single_environment_gets_the_policy_result_unchanged():
    policy = RecordingPolicy()
    info = make_info(0, 2)
    (result,) = decide(StepBatcher(), {"A": policy}, [{"A": info}])
    assert policy.calls == [["$0-0", "$0-1"]]
    assert policy.inputs[0] is info
    assert result["A"].outputs["learning_rate"] == 0.0003


def test_policy_errors_propagate():
    class FailingPolicy(Policy):
        def get_action(self, brain_info):
            raise ValueError("policy broke")

    with pytest.raises(ValueError, match="policy broke"):
        decide(StepBatcher(), {"A": FailingPolicy()}, [{"A": make_info(0, 1)}, {"A": make_info(1, 1)}])


def step(batcher, per_env_actions, previous, env_ids, code_offset):
    """The StepInfos of ``env_ids`` finishing their step: new observations coded ``code_offset + env``."""
    steps = []
    for env_id in env_ids:
        following = {"A": make_info(code_offset + env_id, 1 + env_id)}
        steps.append((env_id, StepInfo(previous[env_id], following, per_env_actions[env_id])))
        previous[env_id] = following
    return batcher.collect(steps)


def test_a_pass_where_every_environment_finishes_is_one_batch_joined_once():
    policy = RecordingPolicy()
    batcher = StepBatcher()
    previous = {env_id: {"A": make_info(env_id, 1 + env_id)} for env_id in range(3)}
    actions = batcher.decide({"A": policy}, list(previous.items()))
    first_input = policy.inputs[-1]
    decision = policy.get_action(first_input)
    (batch,) = step(batcher, actions, previous, [2, 0, 1], 10)
    # The trainer gets the BrainInfo the policy saw and its unsplit decision ...
    assert batch.transition.previous_all_brain_info["A"] is first_input
    np.testing.assert_array_equal(
        batch.transition.brain_name_to_action_info["A"].outputs["log_probs"], decision.outputs["log_probs"]
    )
    # ... and the new observations joined in the same order (agents of environment 0, 1, 2).
    current = batch.transition.current_all_brain_info["A"]
    assert current.agents == ["$10-0", "$11-0", "$11-1", "$12-0", "$12-1", "$12-2"]
    assert [s.current_all_brain_info["A"].agents[0] for s in batch.step_infos] == ["$10-0", "$11-0", "$12-0"]
    # The next decision is taken on that joined BrainInfo: nothing is joined a second time.
    batcher.decide({"A": policy}, [(env_id, previous[env_id]) for env_id in range(3)])
    assert policy.inputs[-1] is current


def test_environments_that_finish_apart_get_their_rows_of_each_decision():
    policy = RecordingPolicy()
    batcher = StepBatcher()
    previous = {env_id: {"A": make_info(env_id, 1 + env_id)} for env_id in range(3)}
    actions = batcher.decide({"A": policy}, list(previous.items()))
    # Environment 1 is slow; 0 and 2 finish first and are decided for again.
    (early,) = step(batcher, actions, previous, [2, 0], 10)
    assert early.transition.previous_all_brain_info["A"].agents == ["$0-0", "$2-0", "$2-1", "$2-2"]
    np.testing.assert_array_equal(
        early.transition.brain_name_to_action_info["A"].outputs["log_probs"][:, 0], [0, 200, 201, 202]
    )
    assert early.transition.current_all_brain_info["A"].agents == ["$10-0", "$12-0", "$12-1", "$12-2"]
    second = batcher.decide({"A": policy}, [(0, previous[0]), (2, previous[2])])
    assert policy.inputs[-1] is early.transition.current_all_brain_info["A"]
    actions.update(second)
    # Then 1 (first decision) and 0 (second decision) finish in the same pass: two batches.
    older, newer = step(batcher, actions, previous, [0, 1], 20)
    assert older.transition.previous_all_brain_info["A"].agents == ["$1-0", "$1-1"]
    np.testing.assert_array_equal(
        older.transition.brain_name_to_action_info["A"].outputs["log_probs"][:, 0], [100, 101]
    )
    assert older.transition.current_all_brain_info["A"].agents == ["$21-0", "$21-1"]
    assert newer.transition.previous_all_brain_info["A"].agents == ["$10-0"]
    assert newer.transition.current_all_brain_info["A"].agents == ["$20-0"]
    assert [len(batch.step_infos) for batch in (older, newer)] == [1, 1]


def test_a_reset_forgets_decisions_and_observations():
    policy = RecordingPolicy()
    batcher = StepBatcher()
    previous = {env_id: {"A": make_info(env_id, 1)} for env_id in range(2)}
    actions = batcher.decide({"A": policy}, list(previous.items()))
    step(batcher, actions, previous, [0, 1], 10)
    batcher.reset()
    fresh = [(env_id, {"A": make_info(30 + env_id, 1)}) for env_id in range(2)]
    batcher.decide({"A": policy}, fresh)
    assert policy.calls[-1] == ["$30-0", "$31-0"]
