"""TrainerController on real example builds (SimpleEnvManager, real gRPC), with a small trainer
written here that acts randomly and records what the controller asks of it."""

import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

from mlagents.envs.action_info import ActionInfo
from mlagents.envs.environment import UnityEnvironment
from mlagents.envs.exception import UnityCommunicationException
from mlagents.envs.policy import Policy
from mlagents.envs.sampler_class import SamplerManager
from mlagents.envs.simple_env_manager import SimpleEnvManager
from mlagents.envs.subprocess_env_manager import SubprocessEnvManager
from mlagents.envs.timers import reset_timers
from mlagents.example_envs.ports import find_free_port_range
from mlagents.trainers.meta_curriculum import MetaCurriculum
from mlagents.trainers.trainer import Trainer
from mlagents.trainers.trainer_controller import TrainerController

BUILDS = Path(__file__).resolve().parents[4] / "example-envs" / "builds"


class RandomPolicy(Policy):
    def __init__(self, brain, seed=0):
        self.brain = brain
        self.rng = np.random.default_rng(seed)
        self.step = 0

    def get_action(self, brain_info):
        n = len(brain_info.agents)
        if n == 0:
            return ActionInfo([], [], [], None, None)
        if self.brain.vector_action_space_type == "discrete":
            action = self.rng.integers(0, self.brain.vector_action_space_size[0], size=(n, 1))
        else:
            action = self.rng.uniform(-1, 1, size=(n, self.brain.vector_action_space_size[0]))
        return ActionInfo(action, None, None, None, {"agents": n})

    def increment_step(self, n):
        self.step += n
        return self.step


class RecordingTrainer(Trainer):
    """Acts randomly, 'updates' every ``update_every`` steps, records saves/exports/episode ends."""

    def __init__(self, brain, params, training, update_every=50, interrupt_after=None):
        super().__init__(brain, params, training, "test")
        self.policy = RandomPolicy(brain)
        self.update_every = update_every
        self.interrupt_after = interrupt_after
        self.experiences = 0
        self.updates = 0
        self.last_update_step = 0
        self.episode_ends = 0
        self.saved_at = []
        self.exports = 0
        self.returns = {}

    def add_experiences(self, curr_info, next_info, take_action_outputs):
        assert take_action_outputs["agents"] == len(curr_info[self.brain_name].agents)
        self.experiences += 1
        if self.interrupt_after is not None and self.experiences >= self.interrupt_after:
            raise KeyboardInterrupt
        info = next_info[self.brain_name]
        for agent, reward in zip(info.agents, info.rewards):
            self.returns[agent] = self.returns.get(agent, 0.0) + reward

    def process_experiences(self, current_info, new_info):
        info = new_info[self.brain_name]
        for agent, done in zip(info.agents, info.local_done):
            if done:
                episode_return = self.returns.pop(agent, 0.0)
                self.stats["Environment/Cumulative Reward"].append(episode_return)
                self.reward_buffer.appendleft(episode_return)

    def end_episode(self):
        self.episode_ends += 1
        self.returns.clear()

    def is_ready_update(self):
        return self.get_step - self.last_update_step >= self.update_every

    def update_policy(self):
        self.updates += 1
        self.last_update_step = self.get_step

    def save_model(self):
        self.saved_at.append(self.get_step)

    def export_model(self):
        self.exports += 1


def make_env(name, args=None):
    return UnityEnvironment(
        str(BUILDS / f"{name}.x86_64"), base_port=find_free_port_range(1), no_graphics=True, args=args
    )


def make_controller(
    tmp_path, trainer, save_freq=50, train=True, meta_curriculum=None, sampler=None, interval=None
):
    return TrainerController(
        {trainer.brain_name: trainer},
        str(tmp_path / "models" / "test-0"),
        str(tmp_path / "summaries"),
        "test-0",
        save_freq,
        meta_curriculum,
        train,
        0,
        True,
        sampler or SamplerManager(None),
        interval,
    )


def params(tmp_path, brain, **extra):
    values = {
        "max_steps": 120,
        "summary_freq": 40,
        "summary_path": str(tmp_path / "summaries" / f"test_{brain}"),
    }
    values.update(extra)
    return values


def assert_closed(env):
    assert env.proc1 is not None and env.proc1.poll() is not None


@pytest.fixture(autouse=True)
def fresh_timers():
    reset_timers()
    yield
    reset_timers()


def test_training_loop_saves_summarizes_and_exports(tmp_path):
    env = make_env("Basic")
    manager = SimpleEnvManager(env)
    brain = env.external_brains["BasicLearning"]
    trainer = RecordingTrainer(brain, params(tmp_path, "BasicLearning"), True)
    make_controller(tmp_path, trainer).start_learning(manager)

    assert_closed(env)
    assert trainer.get_step == 121  # runs while step <= max_steps
    assert trainer.saved_at == [50, 100, 121]
    assert trainer.exports == 1
    assert trainer.updates == 2
    assert trainer.experiences == 121
    acc = event_accumulator.EventAccumulator(str(tmp_path / "summaries" / "test_BasicLearning"))
    acc.Reload()
    assert [e.step for e in acc.Scalars("Environment/Lesson")] == [40, 80, 120]
    assert "Hyperparameters" in acc.Tags()["tensors"]
    tree = json.loads((tmp_path / "summaries" / "test-0_timers.json").read_text())
    advance = next(c for c in tree["children"] if c["name"] == "TrainerController.advance")
    assert advance["count"] == 121
    assert {c["name"] for c in advance["children"]} == {
        "env_step",
        "add_experiences",
        "process_experiences",
        "update_policy",
    }
    assert (tmp_path / "models" / "test-0").is_dir()


def test_interrupt_saves_exports_and_closes(tmp_path):
    env = make_env("Basic")
    brain = env.external_brains["BasicLearning"]
    trainer = RecordingTrainer(brain, params(tmp_path, "BasicLearning"), True, interrupt_after=30)
    make_controller(tmp_path, trainer).start_learning(SimpleEnvManager(env))
    assert_closed(env)
    assert trainer.saved_at == [29]
    assert trainer.exports == 1
    assert (tmp_path / "summaries" / "test-0_timers.json").is_file()


def test_inference_neither_counts_steps_nor_saves(tmp_path):
    env = make_env("Basic")
    brain = env.external_brains["BasicLearning"]
    trainer = RecordingTrainer(brain, params(tmp_path, "BasicLearning"), False, interrupt_after=30)
    make_controller(tmp_path, trainer, train=False).start_learning(SimpleEnvManager(env))
    assert_closed(env)
    assert trainer.get_step == 0 and trainer.updates == 0
    assert trainer.saved_at == [] and trainer.exports == 0


def test_environment_failure_saves_exports_and_raises(tmp_path):
    env = make_env("Basic", args=["--fault-exit-after", "40"])
    brain = env.external_brains["BasicLearning"]
    trainer = RecordingTrainer(brain, params(tmp_path, "BasicLearning", max_steps=1000), True)
    with pytest.raises(UnityCommunicationException):
        make_controller(tmp_path, trainer).start_learning(SimpleEnvManager(env))
    assert_closed(env)
    assert len(trainer.saved_at) == 1 and trainer.exports == 1


@pytest.mark.skipif(not (BUILDS / "3DBall.x86_64").exists(), reason="the 3DBall build is missing")
def test_curriculum_lessons_and_resampling(tmp_path):
    curricula = tmp_path / "curricula"
    curricula.mkdir()
    (curricula / "3DBallLearning.json").write_text(
        json.dumps(
            {
                "measure": "progress",
                "thresholds": [0.2, 0.5],
                "min_lesson_length": 0,
                "signal_smoothing": False,
                "parameters": {"mass": [1.0, 2.0, 3.0]},
            }
        )
    )
    env = make_env("3DBall")
    brain = env.external_brains["3DBallLearning"]
    meta_curriculum = MetaCurriculum(str(curricula), env.reset_parameters)
    sampler = SamplerManager({"gravity": {"sampler-type": "uniform", "min_value": 5, "max_value": 6}}, seed=3)
    trainer = RecordingTrainer(brain, params(tmp_path, "3DBallLearning", max_steps=60, summary_freq=10), True)
    controller = make_controller(
        tmp_path, trainer, meta_curriculum=meta_curriculum, sampler=sampler, interval=25
    )
    controller.start_learning(SimpleEnvManager(env))

    assert meta_curriculum.lesson_nums == {"3DBallLearning": 2}
    # Lesson changes at steps 13 and 31, resamplings at 25 and 50.
    assert trainer.episode_ends == 4
    assert env.reset_parameters["mass"] == 3.0
    assert 5.0 <= env.reset_parameters["gravity"] < 6.0
    acc = event_accumulator.EventAccumulator(str(tmp_path / "summaries" / "test_3DBallLearning"))
    acc.Reload()
    lessons = {e.step: e.value for e in acc.Scalars("Environment/Lesson")}
    assert lessons[10] == 0 and lessons[20] == 1 and lessons[40] == 2


class AgentRowsPolicy(RandomPolicy):
    """RandomPolicy whose outputs also hold one row per agent: its id."""

    def get_action(self, brain_info):
        action_info = super().get_action(brain_info)
        if action_info.outputs is None:
            return action_info
        return action_info._replace(outputs={"agent_ids": list(brain_info.agents)})


class WorkerRecordingTrainer(RecordingTrainer):
    """Records, for every transition it receives, the workers whose agents it holds, and checks that
    the policy outputs it gets are those of exactly these agents."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.policy = AgentRowsPolicy(self.brain)
        self.transition_workers = []

    def add_experiences(self, curr_info, next_info, take_action_outputs):
        previous, following = curr_info[self.brain_name], next_info[self.brain_name]
        assert take_action_outputs["agent_ids"] == previous.agents
        assert [a.split("-")[0] for a in following.agents] == [a.split("-")[0] for a in previous.agents]
        self.transition_workers.append([agent.split("-")[0] for agent in previous.agents])
        self.experiences += 1


def test_several_environments_reach_the_trainer_as_the_manager_batched_them(tmp_path, free_port_range):
    """With SubprocessEnvManager the trainer receives one transition per batched decision (the joined
    BrainInfos and the policy's unsplit outputs, checked by RecordingTrainer), and every environment
    step exactly once."""
    factory = partial(
        UnityEnvironment, str(BUILDS / "Basic.x86_64"), base_port=free_port_range(2), no_graphics=True
    )
    manager = SubprocessEnvManager(factory, 2)
    brain = manager.external_brains["BasicLearning"]
    trainer = WorkerRecordingTrainer(brain, params(tmp_path, "BasicLearning"), True)
    make_controller(tmp_path, trainer).start_learning(manager)

    assert trainer.get_step > 120
    assert sum(len(workers) for workers in trainer.transition_workers) == trainer.get_step
    for workers in trainer.transition_workers:
        assert len(set(workers)) == len(workers) and set(workers) <= {"$0", "$1"}
