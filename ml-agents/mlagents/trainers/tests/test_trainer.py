"""The Trainer base class: console line, TensorBoard scalars and text, hyper-parameter checks."""

import logging

import pytest
from tensorboard.backend.event_processing import event_accumulator

from mlagents.envs.brain import BrainParameters
from mlagents.envs.timers import get_timer_tree, reset_timers
from mlagents.trainers.exception import UnityTrainerException
from mlagents.trainers.trainer import Trainer


class StepCounter:
    """The part of a policy the base class uses: a persistent step counter."""

    def __init__(self, start=0):
        self.step = start

    def increment_step(self, n):
        self.step += n
        return self.step


def make_trainer(tmp_path, training=True, **overrides):
    params = {"summary_freq": 100, "max_steps": 5.0e4, "summary_path": str(tmp_path / "run_Brain")}
    params.update(overrides)
    trainer = Trainer(BrainParameters("Brain", 3, 1, [], [2], ["", ""], "discrete"), params, training, "run")
    trainer.policy = StepCounter()
    return trainer


def read_events(path):
    guidance = {event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0}
    acc = event_accumulator.EventAccumulator(path, size_guidance=guidance)
    acc.Reload()
    return acc


def summary_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "mlagents.trainers"]


def test_console_line_with_rewards(tmp_path, caplog):
    trainer = make_trainer(tmp_path)
    trainer.increment_step(1000)
    trainer.stats["Environment/Cumulative Reward"] += [0.0, 1.0]
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        trainer.write_summary(1000, 12.3456)
    assert summary_lines(caplog) == [
        " run: Brain: Step: 1000. Time Elapsed: 12.346 s Mean Reward: 0.500. Std of Reward: 0.500. Training."
    ]


def test_console_line_without_episode(tmp_path, caplog):
    trainer = make_trainer(tmp_path, training=False)
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        trainer.write_summary(200, 1.0)
    assert summary_lines(caplog) == [
        " run: Brain: Step: 0. No episode was completed since last summary. Not Training."
    ]


def test_step_capped_at_max_steps_prints_the_float(tmp_path, caplog):
    trainer = make_trainer(tmp_path, max_steps="5.0e2")
    trainer.increment_step(600)
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        trainer.write_summary(100, 1.0)
    assert summary_lines(caplog) == [
        " run: Brain: Step: 500.0. No episode was completed since last summary. Not Training."
    ]


@pytest.mark.parametrize("global_step", [0, 99, 150])
def test_no_summary_off_the_period(tmp_path, caplog, global_step):
    trainer = make_trainer(tmp_path)
    trainer.stats["Environment/Cumulative Reward"].append(1.0)
    with caplog.at_level(logging.INFO, logger="mlagents.trainers"):
        trainer.write_summary(global_step, 1.0)
    assert summary_lines(caplog) == []
    assert trainer.stats["Environment/Cumulative Reward"] == [1.0]


def test_tensorboard_scalars_are_means_then_cleared(tmp_path):
    trainer = make_trainer(tmp_path)
    trainer.increment_step(100)
    trainer.stats["Environment/Cumulative Reward"] += [1.0, 2.0]
    trainer.stats["Policy/Entropy"] += [0.5]
    trainer.stats["Losses/Value Loss"] = []
    trainer.write_summary(100, 1.0, lesson_num=2)
    trainer.increment_step(100)
    trainer.stats["Environment/Cumulative Reward"] += [4.0]
    trainer.write_summary(200, 2.0, lesson_num=3)
    trainer.close_summary_writer()

    acc = read_events(str(tmp_path / "run_Brain"))
    assert set(acc.Tags()["scalars"]) == {
        "Environment/Cumulative Reward",
        "Policy/Entropy",
        "Environment/Lesson",
    }
    rewards = [(e.step, e.value) for e in acc.Scalars("Environment/Cumulative Reward")]
    assert rewards == [(100, 1.5), (200, 4.0)]
    assert [(e.step, e.value) for e in acc.Scalars("Policy/Entropy")] == [(100, 0.5)]
    assert [(e.step, e.value) for e in acc.Scalars("Environment/Lesson")] == [(100, 2.0), (200, 3.0)]
    assert all(len(values) == 0 for values in trainer.stats.values())


def test_mean_reward_gauge(tmp_path):
    reset_timers()
    trainer = make_trainer(tmp_path)
    trainer.stats["Environment/Cumulative Reward"] += [3.0]
    trainer.write_summary(100, 1.0)
    gauges = {g["name"]: g for g in get_timer_tree()["gauges"]}
    assert gauges["Brain.mean_reward"]["value"] == 3.0
    trainer.close_summary_writer()
    reset_timers()


def test_hyperparameters_text_table(tmp_path):
    trainer = make_trainer(tmp_path)
    trainer.write_tensorboard_text("Hyperparameters", {"batch_size": 32, "reward_signals": {"extrinsic": {}}})
    trainer.close_summary_writer()
    acc = read_events(str(tmp_path / "run_Brain"))
    assert "Hyperparameters" in acc.Tags()["tensors"]
    table = acc.Tensors("Hyperparameters")[0].tensor_proto
    assert [s.decode() for s in table.string_val] == [
        "batch_size",
        "32",
        "reward_signals",
        "{'extrinsic': {}}",
    ]


def test_summary_writer_is_created_lazily(tmp_path):
    trainer = make_trainer(tmp_path)
    assert not (tmp_path / "run_Brain").exists()
    trainer.summary_writer.flush()
    assert (tmp_path / "run_Brain").is_dir()
    trainer.close_summary_writer()


def test_check_param_keys_names_key_class_and_brain(tmp_path):
    trainer = make_trainer(tmp_path)
    trainer.param_keys = ["summary_freq", "batch_size"]
    with pytest.raises(UnityTrainerException) as info:
        trainer.check_param_keys()
    assert str(info.value) == (
        "The hyper-parameter batch_size could not be found for the "
        "<class 'mlagents.trainers.trainer.Trainer'> trainer of brain Brain."
    )


def test_str_lists_hyperparameters_with_nesting(tmp_path):
    trainer = make_trainer(tmp_path)
    trainer.trainer_parameters = {"batch_size": 32, "reward_signals": {"extrinsic": {"gamma": 0.9}}}
    assert str(trainer) == (
        "Hyperparameters for the Trainer of brain Brain: \n"
        "\tbatch_size:\t32\n"
        "\treward_signals:\t\n"
        "\t  extrinsic:\t\n"
        "\t    gamma:\t0.9"
    )


def test_steps_come_from_the_policy(tmp_path):
    trainer = make_trainer(tmp_path)
    trainer.policy = StepCounter(start=700)  # e.g. restored by --load
    trainer.increment_step(3)
    assert trainer.get_step == 703
    assert trainer.get_max_steps == 50000.0


def test_subclass_hooks_are_abstract(tmp_path):
    trainer = make_trainer(tmp_path)
    for call in (trainer.update_policy, trainer.end_episode, trainer.is_ready_update):
        with pytest.raises(NotImplementedError):
            call()
