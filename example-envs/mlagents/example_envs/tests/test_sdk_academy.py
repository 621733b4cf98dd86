"""Step semantics of the Academy engine (the step order, decisions, resets), on small scenes
written here, run through LocalEnvironment and the Academy itself."""

from __future__ import annotations

import numpy as np
import pytest

from mlagents.example_envs.sdk.academy import Academy
from mlagents.example_envs.sdk.local import LocalEnvironment
from mlagents.example_envs.sdk.messages import AcademyInput, Command
from mlagents.example_envs.sdk.scene import AgentGroup, BrainSpec, CameraResolution, Scene, SceneSpec

# ---------------------------------------------------------------------------------------------
# Test scenes


class Counter(Scene):
    """Periodic agents (continuous, 1 float). Each physics step an acting agent earns its action
    value as reward. Observation: [agent step count, academy step count, episode number].
    ``finish_at``: agent step count at which an agent calls done (None: never)."""

    interval = 3
    count = 2
    max_step = 0
    stack = 1
    finish_at: int | None = None
    academy_max_steps = 0

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            academy_name="CounterAcademy",
            brains=[BrainSpec("Counter", 3, "continuous", (1,), num_stacked_vector_observations=cls.stack)],
            agents=[AgentGroup("Counter", cls.count, max_step=cls.max_step, decision_interval=cls.interval)],
            reset_parameters={"start": 0.0, "other": 5.0},
            academy_max_steps=cls.academy_max_steps,
        )

    def initialize(self) -> None:
        self.episodes = np.zeros(self.academy.num_agents)
        self.actions_log: list[tuple[int, list[int], list[float]]] = []
        self.resets_log: list[tuple[int, list[int]]] = []
        self.academy_resets = 0

    def academy_reset(self) -> None:
        self.academy_resets += 1

    def agent_reset(self, agents: np.ndarray) -> None:
        self.episodes[agents] += 1
        self.resets_log.append((self.academy.total_step_count, agents.tolist()))

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        steps = self.academy.agent_step_counts[agents]
        return np.stack(
            [steps, np.full(len(agents), self.academy.step_count), self.episodes[agents]], axis=1
        ).astype(np.float32)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        self.actions_log.append((self.academy.total_step_count, agents.tolist(), actions[:, 0].tolist()))
        self.academy.add_reward(agents, actions[:, 0])
        if self.finish_at is not None:
            finished = agents[self.academy.agent_step_counts[agents] == self.finish_at]
            self.academy.done(finished)


def make(scene: type[Scene], **attributes) -> type[Scene]:
    """A subclass of ``scene`` with class attributes changed (one scene variant per test)."""
    return type(scene.__name__, (scene,), attributes)


def acts(*values: float) -> dict[str, np.ndarray]:
    return {"Counter": np.array(values, dtype=np.float32).reshape(-1, 1)}


# ---------------------------------------------------------------------------------------------
# Decision interval, action repeat, reward accumulation


def test_decision_interval_repeats_the_action_and_sums_the_rewards():
    env = LocalEnvironment(make(Counter, interval=3))
    first = env.reset()["Counter"]
    assert first.agents.tolist() == env.academy.ids.tolist()
    assert first.vector_observations[:, 1].tolist() == [0, 0]  # academy step 0
    assert first.rewards.tolist() == [0, 0]
    second = env.step(acts(1.0, 2.0))["Counter"]
    # One Python step = N = 3 physics steps; the same action each time, the rewards summed.
    assert second.vector_observations[:, 1].tolist() == [3, 3]
    assert second.rewards.tolist() == [3.0, 6.0]
    assert second.previous_vector_actions.tolist() == [[1.0], [2.0]]
    log = env.academy.scene.actions_log
    assert [entry[2] for entry in log] == [[1.0, 2.0]] * 3
    assert [entry[0] for entry in log] == [0, 1, 2]


def test_agents_of_a_brain_without_actions_keep_their_previous_action():
    env = LocalEnvironment(make(Counter, interval=1))
    env.reset()
    env.step(acts(0.5, 0.25))
    batch = env.step({})["Counter"]
    assert batch.rewards.tolist() == [0.5, 0.25]
    assert batch.previous_vector_actions.tolist() == [[0.5], [0.25]]


def test_initial_stored_action_is_zero_and_kept_over_resets():
    env = LocalEnvironment(make(Counter, interval=1))
    first = env.reset()["Counter"]
    assert first.previous_vector_actions.tolist() == [[0.0], [0.0]]
    env.step(acts(0.75, 0.75))
    again = env.reset()["Counter"]
    assert again.previous_vector_actions.tolist() == [[0.75], [0.75]]


def test_wrong_action_shape_is_a_clear_error():
    env = LocalEnvironment(make(Counter, interval=1))
    env.reset()
    with pytest.raises(ValueError, match=r"expects actions of shape \(2, 1\)"):
        env.step(acts(1.0, 2.0, 3.0))


def test_step_before_reset_and_after_global_done_raise():
    env = LocalEnvironment(make(Counter, interval=1, academy_max_steps=2))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(acts(0.0, 0.0))
    env.reset()
    env.step(acts(0.0, 0.0))
    env.step(acts(0.0, 0.0))
    assert env.global_done
    with pytest.raises(RuntimeError, match="reset"):
        env.step(acts(0.0, 0.0))


# ---------------------------------------------------------------------------------------------
# On-demand decisions


class OnDemand(Scene):
    """Agent 0 (on-demand) requests a decision every other academy step; agent 1 is periodic (N=4)."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            academy_name="A",
            brains=[BrainSpec("B", 1, "continuous", (1,))],
            agents=[AgentGroup("B", 1, on_demand=True), AgentGroup("B", 1, decision_interval=4)],
        )

    def initialize(self) -> None:
        self.acted: list[tuple[int, list[int]]] = []
        self.tick = 0

    def pre_step(self) -> None:
        if self.tick % 2 == 0:
            self.academy.request_decision(np.array([0]))
        self.tick += 1

    def agent_reset(self, agents: np.ndarray) -> None:
        pass

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        return np.full((len(agents), 1), self.academy.total_step_count, dtype=np.float32)

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        self.acted.append((self.academy.total_step_count, agents.tolist()))


def test_on_demand_agents_act_only_when_they_request_and_python_steps_only_at_decisions():
    env = LocalEnvironment(OnDemand)
    seen = []
    batch = env.reset()["B"]
    seen.append((int(batch.vector_observations[0, 0]), batch.agents.tolist()))
    for _ in range(4):
        batch = env.step({"B": np.zeros((len(batch.agents), 1))})["B"]
        seen.append((int(batch.vector_observations[0, 0]), batch.agents.tolist()))
    a0, a1 = env.academy.ids.tolist()
    # Exchanges only at academy steps where someone decided: 0 (both), 2 (a0), 4 (both), 6, 8.
    assert seen == [(0, [a0, a1]), (2, [a0]), (4, [a0, a1]), (6, [a0]), (8, [a0, a1])]
    acted_steps_a0 = [step for step, agents in env.academy.scene.acted if 0 in agents]
    assert acted_steps_a0 == [0, 2, 4, 6]
    acted_steps_a1 = [step for step, agents in env.academy.scene.acted if 1 in agents]
    assert acted_steps_a1 == list(range(8))  # periodic agents act every step


# ---------------------------------------------------------------------------------------------
# Done, reset ordering, first observation of the next episode


def test_done_mid_interval_keeps_acting_then_resets_at_the_decision_with_the_next_first_observation():
    # Agents call done when their step count reaches 4 (during the 5th physics step, interval 3).
    env = LocalEnvironment(make(Counter, interval=3, finish_at=4))
    env.reset()
    b1 = env.step(acts(1.0, 1.0))["Counter"]  # academy step 3
    assert not b1.local_done.any()
    b2 = env.step(acts(1.0, 1.0))["Counter"]  # academy step 6: done at step 4, acted 5, reset at 6
    assert b2.local_done.tolist() == [True, True]
    assert b2.max_reached.tolist() == [False, False]
    # The reward covers the whole interval (acting after done included) ...
    assert b2.rewards.tolist() == [3.0, 3.0]
    # ... and the observation is the first of the next episode: step count 0, episode 2.
    assert b2.vector_observations[:, 0].tolist() == [0, 0]
    assert b2.vector_observations[:, 2].tolist() == [2, 2]
    acted_at = [entry[0] for entry in env.academy.scene.actions_log]
    assert acted_at == [0, 1, 2, 3, 4, 5]
    b3 = env.step(acts(1.0, 1.0))["Counter"]
    assert not b3.local_done.any()


def test_agent_max_step_gives_one_plus_max_step_over_n_decisions():
    env = LocalEnvironment(make(Counter, interval=3, max_step=6, count=1))
    batch = env.reset()["Counter"]
    start = env.academy.total_step_count
    decisions = 0
    while True:
        batch = env.step(acts(0.0))["Counter"]
        decisions += 1
        if batch.local_done[0]:
            break
    assert decisions == 1 + 6 // 3
    assert batch.max_reached.tolist() == [True]
    # The reset happens maxStep + N physics steps after the previous one (3DBall: 5005).
    resets = [step for step, _ in env.academy.scene.resets_log]
    assert resets[-1] - resets[-2] == 6 + 3
    assert env.academy.total_step_count - start == 9
    assert batch.vector_observations[0, 0] == 0  # new episode


def test_on_demand_agent_with_max_step_acts_max_step_plus_one_times():
    class Timed(OnDemand):
        @classmethod
        def spec(cls) -> SceneSpec:
            brain = BrainSpec("B", 1, "continuous", (1,))
            return SceneSpec("A", [brain], [AgentGroup("B", 1, max_step=4, on_demand=True)])

        def pre_step(self) -> None:
            self.academy.request_decision(np.array([0]))

    env = LocalEnvironment(Timed)
    env.reset()
    actions = 0
    while True:
        batch = env.step({"B": np.zeros((1, 1))})["B"]
        actions += 1
        if batch.local_done[0]:
            break
    assert actions == 4 + 1
    assert batch.max_reached[0]


def test_academy_max_steps_forces_every_agent_done_and_resets_in_the_same_step():
    env = LocalEnvironment(make(Counter, interval=2, academy_max_steps=4))
    env.reset()
    env.step(acts(1.0, 1.0))  # academy step 2
    batch = env.step(acts(1.0, 1.0))["Counter"]  # step 4 = max: done, reset, report
    assert env.global_done is True
    assert batch.local_done.tolist() == [True, True]
    assert batch.max_reached.tolist() == [True, True]
    assert batch.vector_observations[:, 0].tolist() == [0, 0]  # agents reset in that step
    assert batch.vector_observations[:, 1].tolist() == [0, 0]  # academy reset too
    assert env.academy.episode_count == 2
    env.reset()
    assert env.global_done is False


# ---------------------------------------------------------------------------------------------
# Rewards


class Rewarder(Scene):
    """One periodic agent (N=3): each physics step AddReward(-0.1); at academy step 1 of each
    interval SetReward(1.0) then AddReward(0.5)."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            "A", [BrainSpec("R", 1, "continuous", (1,))], [AgentGroup("R", 1, decision_interval=3)]
        )

    def agent_reset(self, agents):
        pass

    def collect_observations(self, agents):
        return np.zeros((len(agents), 1), dtype=np.float32)

    def agent_action(self, agents, actions):
        self.academy.add_reward(agents, -0.1)
        if self.academy.step_count % 3 == 1:
            self.academy.set_reward(agents, 1.0)
            self.academy.add_reward(agents, 0.5)


def test_set_reward_replaces_what_was_accumulated_and_add_reward_adds_on_top():
    env = LocalEnvironment(Rewarder)
    env.reset()
    batch = env.step({"R": np.zeros((1, 1))})["R"]
    # step 0: -0.1; step 1: -0.1 then SetReward(1) + 0.5 -> 1.5; step 2: -0.1 -> 1.4
    assert batch.rewards[0] == pytest.approx(1.4, abs=1e-6)
    assert batch.rewards.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Stacking


def test_stacking_shifts_oldest_first_and_zero_fills_on_agent_reset():
    env = LocalEnvironment(make(Counter, interval=1, stack=3, count=1, finish_at=2))
    b0 = env.reset()["Counter"].vector_observations[0]
    assert b0.shape == (9,)
    assert b0[:6].tolist() == [0] * 6 and b0[6:].tolist() == [0, 0, 1]
    b1 = env.step(acts(0.0))["Counter"].vector_observations[0]
    assert b1.tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    b2 = env.step(acts(0.0))["Counter"].vector_observations[0]
    assert b2.tolist() == [0, 0, 1, 1, 1, 1, 2, 2, 1]
    b3 = env.step(acts(0.0))["Counter"]  # done at step count 2 -> reset -> stack zeroed
    assert b3.local_done[0]
    assert b3.vector_observations[0].tolist() == [0, 0, 0, 0, 0, 0, 0, 3, 2]


# ---------------------------------------------------------------------------------------------
# Action masks


class Masked(Scene):
    """Two agents of a discrete brain with branches (2, 3): agent 0 forbids action 1 of branch 0
    and action 2 of branch 1; agent 1 sets no mask. ``mask_all`` forbids all of branch 0."""

    enabled = True
    mask_all = False

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec("A", [BrainSpec("D", 1, "discrete", (2, 3))], [AgentGroup("D", 2)])

    def agent_reset(self, agents):
        pass

    def collect_observations(self, agents):
        if self.enabled:
            self.academy.set_action_mask(agents[agents == 0], [False, True, False, False, False])
            self.academy.set_action_mask(agents[agents == 0], [False, False, True], branch=1)
        if self.mask_all:
            self.academy.set_action_mask(agents, [True, True], branch=0)
        return np.zeros((len(agents), 1), dtype=np.float32)

    def agent_action(self, agents, actions):
        pass


def test_action_masks_true_means_forbidden_and_are_absent_when_never_set():
    env = LocalEnvironment(Masked)
    batch = env.reset()["D"]
    assert batch.action_masks.dtype == bool
    assert batch.action_masks.tolist() == [[False, True, False, False, True], [False] * 5]
    assert batch.previous_vector_actions.shape == (2, 2)
    env.academy.scene.enabled = False
    batch = env.step({"D": np.zeros((2, 2))})["D"]
    assert batch.action_masks is None  # cleared before every collection


def test_masking_every_action_of_a_branch_is_an_error():
    env = LocalEnvironment(make(Masked, mask_all=True))
    with pytest.raises(ValueError, match="branch 0"):
        env.reset()


# ---------------------------------------------------------------------------------------------
# Visual observations, several brains, brain switching


class Visual(Scene):
    """Brain V (camera 6x4 and 3x2) with two agents; brain W (no decisions until switched)."""

    @classmethod
    def spec(cls) -> SceneSpec:
        cameras = (CameraResolution(6, 4), CameraResolution(3, 2, True))
        return SceneSpec(
            "A",
            [
                BrainSpec("V", 0, "discrete", (2,), camera_resolutions=cameras),
                BrainSpec("W", 0, "discrete", (2,), camera_resolutions=cameras),
            ],
            [AgentGroup("V", 2)],
        )

    def agent_reset(self, agents):
        pass

    def collect_observations(self, agents):
        return np.zeros((len(agents), 0), dtype=np.float32)

    def render(self, agents, camera):
        height, width = ((4, 6), (2, 3))[camera]
        images = np.zeros((len(agents), height, width, 3), dtype=np.uint8)
        for row, agent in enumerate(agents):
            images[row, 0, 0] = (255, camera * 100, agent * 50)
            images[row, -1, -1] = (1, 2, 3)
        return images

    def agent_action(self, agents, actions):
        pass


def test_visual_observations_shapes_and_png_round_trip():
    from mlagents.example_envs.sdk.png import decode_png
    from mlagents.example_envs.sdk.wire import agent_info_protos

    env = LocalEnvironment(Visual)
    batches = env.reset()
    batch = batches["V"]
    assert [v.shape for v in batch.visual_observations] == [(2, 4, 6, 3), (2, 2, 3, 3)]
    assert batch.visual_observations[0][1, 0, 0].tolist() == [255, 0, 50]
    infos = agent_info_protos(batch)
    for i, info in enumerate(infos):
        assert len(info.visual_observations) == 2
        for camera, data in enumerate(info.visual_observations):
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            np.testing.assert_array_equal(decode_png(data), batch.visual_observations[camera][i])
    # Every brain appears in every output, possibly empty with the right shapes.
    empty = batches["W"]
    assert len(empty.agents) == 0
    assert [v.shape for v in empty.visual_observations] == [(0, 4, 6, 3), (0, 2, 3, 3)]


def test_set_brain_moves_agents_and_every_brain_is_reported():
    env = LocalEnvironment(Visual)
    env.reset()
    env.academy.set_brain(np.array([1]), "W")
    batches = env.step({"V": np.zeros((2, 1))})
    ids = env.academy.ids.tolist()
    assert batches["V"].agents.tolist() == [ids[0]]
    assert batches["W"].agents.tolist() == [ids[1]]
    with pytest.raises(KeyError, match="Unknown brain"):
        env.academy.set_brain(np.array([0]), "Nope")


# ---------------------------------------------------------------------------------------------
# Reset parameters, Python reset, seeding, training flag


class Seeded(Scene):
    """Observation: a random number drawn at each agent reset and the reset parameters."""

    @classmethod
    def spec(cls) -> SceneSpec:
        return SceneSpec(
            "A",
            [BrainSpec("S", 3, "continuous", (1,))],
            [AgentGroup("S", 3, decision_interval=1)],
            reset_parameters={"p": 1.0, "q": 2.0},
        )

    def initialize(self):
        self.draw = np.zeros(self.academy.num_agents)

    def agent_reset(self, agents):
        self.draw[agents] = self.academy.rng.uniform(size=len(agents))

    def collect_observations(self, agents):
        p = self.academy.reset_parameters
        return np.stack([self.draw[agents], np.full(len(agents), p["p"]), np.full(len(agents), p["q"])], 1)

    def agent_action(self, agents, actions):
        pass


def test_reset_parameters_are_applied_on_python_reset():
    env = LocalEnvironment(Seeded)
    assert env.reset_parameters == {"p": 1.0, "q": 2.0}
    batch = env.reset()["S"]
    assert batch.vector_observations[0, 1:].tolist() == [1.0, 2.0]
    batch = env.reset(config={"p": 3.5})["S"]
    assert batch.vector_observations[0, 1:].tolist() == [3.5, 2.0]
    assert env.reset_parameters == {"p": 3.5, "q": 2.0}
    with pytest.raises(KeyError, match="not a valid reset parameter"):
        env.reset(config={"nope": 1.0})


def test_python_reset_copies_only_the_keys_sent():
    academy = Academy(Seeded, seed=0)
    academy.advance(AcademyInput(Command.RESET, True, {"q": 7.0}))
    assert academy.reset_parameters == {"p": 1.0, "q": 7.0}
    out = academy.advance(AcademyInput(Command.RESET, True, {"p": 4.0}))
    assert academy.reset_parameters == {"p": 4.0, "q": 7.0}
    assert out.batches["S"].vector_observations[0, 1:].tolist() == [4.0, 7.0]
    assert academy.episode_count == 2


def test_python_reset_mid_episode_resets_without_done_and_carries_the_pending_reward():
    env = LocalEnvironment(make(Counter, interval=1))
    env.reset()
    env.step(acts(1.0, 1.0))
    episodes_before = env.academy.episode_count
    batch = env.reset()["Counter"]
    # Unity acts once more with the stored action before the reset takes effect.
    assert batch.rewards.tolist() == [1.0, 1.0]
    assert batch.local_done.tolist() == [False, False]
    assert batch.vector_observations[:, 0].tolist() == [0, 0]
    assert env.academy.episode_count == episodes_before + 1


def test_same_seed_same_episode_different_seeds_differ():
    def first_draws(seed):
        env = LocalEnvironment(Seeded, seed=seed)
        out = [env.reset()["S"].vector_observations[:, 0].tolist()]
        out.append(env.reset()["S"].vector_observations[:, 0].tolist())
        return out

    assert first_draws(0) == first_draws(0)
    assert first_draws(0) != first_draws(1)
    assert first_draws(-5) == first_draws(-5)  # negative int32 seeds from Python are valid


def test_training_flag_and_engine_configuration_follow_python():
    env = LocalEnvironment(Seeded, train_mode=False)
    env.reset()
    assert env.academy.is_training is False
    assert env.academy.engine_configuration.width == 1280
    env.reset(train_mode=True)
    assert env.academy.is_training is True
    assert env.academy.engine_configuration.time_scale == 100.0


def test_quit_command_ends_the_academy():
    academy = Academy(Seeded, seed=0)
    academy.advance(AcademyInput(Command.RESET, True))
    assert academy.advance(AcademyInput(Command.QUIT)) is None
    assert academy.quit_requested


def test_bad_observation_shape_names_the_scene_and_the_expected_shape():
    class Broken(Seeded):
        def collect_observations(self, agents):
            return np.zeros((len(agents), 2), dtype=np.float32)

    with pytest.raises(ValueError, match=r"Broken.collect_observations returned shape \(3, 2\).*\(3, 3\)"):
        LocalEnvironment(Broken).reset()


def test_memories_and_text_actions_are_echoed_and_cleared_at_agent_reset():
    academy = Academy(make(Counter, interval=1, count=2, finish_at=1), seed=0)
    academy.advance(AcademyInput(Command.RESET, True))
    memories = {"Counter": np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)}
    out = academy.advance(
        AcademyInput(actions=acts(0.0, 0.0), memories=memories, text_actions={"Counter": ["a", "b"]})
    )
    batch = out.batches["Counter"]
    np.testing.assert_array_equal(batch.memories, memories["Counter"])
    assert batch.previous_text_actions == ["a", "b"]
    out = academy.advance(AcademyInput(actions=acts(0.0, 0.0)))  # done at step count 1 -> reset
    batch = out.batches["Counter"]
    assert batch.local_done.all()
    assert batch.memories is None and batch.previous_text_actions is None
