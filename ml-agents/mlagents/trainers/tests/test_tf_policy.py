"""TFPolicy helpers: FixedSignatureFunction (the policies' fast TensorFlow calls) and the step counter."""

import numpy as np
import pytest
import tensorflow as tf

from mlagents.envs.brain import BrainParameters
from mlagents.trainers.fixed_signature import FixedSignatureFunction
from mlagents.trainers.ppo.policy import PPOPolicy

SIGNATURE = [
    {"obs": tf.TensorSpec([None, 3], tf.float32), "actions": tf.TensorSpec([None, 2], tf.int32)},
    tf.TensorSpec([None], tf.float32),
]


def python_function(inputs, scale):
    weighted = inputs["obs"] * scale[:, None]
    return {"sum": tf.reduce_sum(weighted, axis=1), "actions": inputs["actions"] + 1}


def test_same_results_as_the_tf_function_for_numpy_and_tensor_inputs():
    fast = FixedSignatureFunction(python_function, SIGNATURE)
    reference = tf.function(python_function, input_signature=SIGNATURE)
    rng = np.random.default_rng(0)
    for n in (1, 4, 7):
        obs = rng.normal(size=(n, 3))  # float64: converted to the signature's float32
        actions = rng.integers(0, 5, size=(n, 2))
        scale = rng.random(n).astype(np.float32)
        expected = reference({"obs": obs.astype(np.float32), "actions": actions.astype(np.int32)}, scale)
        for args in (
            ({"obs": obs, "actions": actions}, scale),
            (
                {"obs": tf.constant(obs, tf.float32), "actions": tf.constant(actions, tf.int32)},
                tf.constant(scale),
            ),
        ):
            out = fast(*args)
            assert set(out) == {"sum", "actions"}
            np.testing.assert_array_equal(out["sum"].numpy(), expected["sum"].numpy())
            np.testing.assert_array_equal(out["actions"].numpy(), expected["actions"].numpy())
    assert fast.tracing_count() == 1  # one trace for every batch size


def test_wrong_inputs_are_refused_with_a_clear_message():
    fast = FixedSignatureFunction(python_function, SIGNATURE)
    good = {"obs": np.zeros((2, 3)), "actions": np.zeros((2, 2))}
    scale = np.ones(2)
    with pytest.raises(TypeError, match="expected 2 arguments, got 1"):
        fast(good)
    with pytest.raises(TypeError, match=r"expected the inputs \['actions', 'obs'\], got \['obs'\]"):
        fast({"obs": good["obs"]}, scale)
    with pytest.raises(TypeError, match="expected the inputs"):
        fast(dict(good, extra=np.zeros(2)), scale)
    with pytest.raises(
        ValueError, match=r"input obs: expected shape \[None, 3\] \(None: any\), got \[2, 4\]"
    ):
        fast(dict(good, obs=np.zeros((2, 4))), scale)
    with pytest.raises(ValueError, match=r"input argument 1: expected shape \[None\]"):
        fast(good, np.ones((2, 1)))
    with pytest.raises(TypeError, match="input actions: expected a int32 tensor, got float32"):
        fast(dict(good, actions=tf.zeros((2, 2))), scale)
    np.testing.assert_array_equal(fast(good, scale)["sum"].numpy(), [0.0, 0.0])


def make_policy(ppo_params, **overrides):
    brain = BrainParameters("Brain", 3, 1, [], [2], ["", ""], "continuous")
    return PPOPolicy(0, brain, ppo_params(**overrides), True)


def test_increment_step_counts_in_python_and_writes_global_step_when_tensorflow_reads_it(
    ppo_params, continuous_update_batch
):
    policy = make_policy(ppo_params, max_steps=1000)
    assert policy.increment_step(3) == 3
    assert policy.increment_step(2) == 5
    assert int(policy.model.global_step.numpy()) == 0  # not written yet: no TensorFlow op per step
    # Decisions report lr(5) without the variable.
    info_outputs = policy.evaluate(brain_info(np.zeros((2, 3))))
    assert info_outputs["learning_rate"] == pytest.approx((3e-4 - 1e-10) * (1 - 5 / 1000) + 1e-10, rel=1e-6)
    assert policy.get_current_step() == 5
    assert int(policy.model.global_step.numpy()) == 5
    policy.increment_step(10)
    policy.update(continuous_update_batch(4), 4)  # the update's schedules see step 15
    assert int(policy.model.global_step.numpy()) == 15
    policy.model.global_step.assign(100)  # set from outside: get_current_step reads it again
    assert policy.get_current_step() == 100
    assert policy.increment_step(1) == 101


def test_loaded_policy_continues_the_saved_step_count(ppo_params):
    policy = make_policy(ppo_params)
    policy.increment_step(7)
    policy.save_model(7)  # writes the pending steps first
    loaded = make_policy(ppo_params, load=True)
    assert loaded.get_current_step() == 7
    assert loaded.increment_step(2) == 9


@pytest.mark.parametrize("initial, end, max_step", [(3e-4, 1e-10, 5e4), (0.2, 0.1, 5e5), (1e-3, 1e-5, 0.5)])
def test_learning_rate_value_equals_the_graph_schedule(initial, end, max_step):
    from mlagents.trainers.models import LearningModel

    step = tf.Variable(0, dtype=tf.int32)
    graph = tf.function(lambda: LearningModel.polynomial_decay(initial, end, step, max_step), autograph=False)
    for value in [0, 1, 282, 824, 1015, 9999, int(max_step), int(max_step) + 7, 10**7]:
        step.assign(value)
        assert LearningModel.polynomial_decay_value(initial, end, value, max_step) == pytest.approx(
            float(graph().numpy()), rel=1e-6, abs=0
        )


def brain_info(obs):
    from mlagents.envs.brain import BrainInfo

    n = len(obs)
    return BrainInfo(
        [],
        obs,
        [""] * n,
        np.zeros((0, 0)),
        [0.0] * n,
        [str(i) for i in range(n)],
        [False] * n,
        np.zeros((n, 2)),
        [[]] * n,
        [False] * n,
    )


def test_value_estimates_of_ended_episodes_need_no_network_call(ppo_params):
    policy = make_policy(ppo_params)
    calls = []
    value_fn = policy._value_fn
    policy._value_fn = lambda feed: calls.append(len(feed["vector_observation"])) or value_fn(feed)
    info = brain_info(np.random.default_rng(0).normal(size=(3, 3)))
    ended = policy.get_batched_value_estimates([(info, 0), (info, 2)], [True, True])
    assert calls == [] and ended["extrinsic"].dtype == np.float32
    np.testing.assert_array_equal(ended["extrinsic"], [0.0, 0.0])
    mixed = policy.get_batched_value_estimates([(info, 2), (info, 0), (info, 1)], [True, False, True])
    assert calls == [3]
    alone = policy.get_value_estimates(info, 0, False)["extrinsic"]
    np.testing.assert_allclose(mixed["extrinsic"], [0.0, alone, 0.0], rtol=1e-6)
