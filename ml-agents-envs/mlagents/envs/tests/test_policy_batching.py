import numpy as np
import pytest

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.brain import BrainInfo
from mlagents.envs.policy import Policy
from mlagents.envs.policy_batching import (
    concatenate_brain_infos,
    concatenate_outputs,
    get_batched_actions,
    split_action_info,
)


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

    def get_action(self, brain_info):
        self.calls.append(list(brain_info.agents))
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


def test_concatenate_outputs_undoes_the_split():
    policy = RecordingPolicy()
    infos = [make_info(0, 2), make_info(1, 1), make_info(2, 3)]
    whole = policy.get_action(concatenate_brain_infos(infos)).outputs
    parts = [part.outputs for part in split_action_info(ActionInfo(None, None, None, None, whole), [2, 1, 3])]
    joined = concatenate_outputs(parts, [2, 1, 3])
    np.testing.assert_array_equal(joined["log_probs"], whole["log_probs"])
    np.testing.assert_array_equal(joined["value"]["extrinsic"], whole["value"]["extrinsic"])
    np.testing.assert_array_equal(joined["value"]["curiosity"], whole["value"]["curiosity"])
    assert joined["pre_action"] == whole["pre_action"]
    assert joined["learning_rate"] == 0.0003 and joined["entropy_scalar"] == np.float32(1.5)
    assert concatenate_outputs(parts[:1], [2]) is parts[0]
    with pytest.raises(ValueError, match="different keys"):
        concatenate_outputs([parts[0], {"log_probs": parts[1]["log_probs"]}], [2, 1])
    with pytest.raises(ValueError, match="at least one part"):
        concatenate_outputs([], [])


def test_concatenate_keeps_rows_of_zero_width():
    infos = [make_info(0, 2), make_info(1, 3)]
    for info in infos:
        info.action_masks = np.ones((len(info.agents), 0))  # a brain without discrete actions
    assert concatenate_brain_infos(infos).action_masks.shape == (5, 0)


def test_split_of_an_empty_decision():
    parts = split_action_info(ActionInfo([], [], [], None, None), [0, 0])
    assert parts == [ActionInfo([], [], [], None, None)] * 2


def test_one_policy_call_per_brain_for_all_environments():
    policy_a, policy_b = RecordingPolicy(), RecordingPolicy()
    all_brain_infos = [
        {"A": make_info(0, 1), "B": make_info(0, 2), "NoPolicy": make_info(0, 1)},
        {"A": make_info(1, 2), "B": make_info(1, 1), "NoPolicy": make_info(1, 1)},
        {"A": make_info(2, 1)},
    ]
    results = get_batched_actions({"A": policy_a, "B": policy_b}, all_brain_infos)
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
    (result,) = get_batched_actions({"A": policy}, [{"A": info}])
    assert policy.calls == [["$0-0", "$0-1"]]
    assert result["A"].outputs["learning_rate"] == 0.0003


def test_policy_errors_propagate():
    class FailingPolicy(Policy):
        def get_action(self, brain_info):
            raise ValueError("policy broke")

    with pytest.raises(ValueError, match="policy broke"):
        get_batched_actions({"A": FailingPolicy()}, [{"A": make_info(0, 1)}, {"A": make_info(1, 1)}])
