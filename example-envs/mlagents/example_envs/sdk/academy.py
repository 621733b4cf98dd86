"""The Academy engine: Unity's Academy / Agent / Brain step semantics, vectorized over agents.

One :class:`Academy` runs one scene (a :class:`~.scene.Scene` subclass). It is driven by the
messages Python sends, exactly like the Unity academy is driven by its communicator:

* :meth:`Academy.advance` takes Python's message (the first one after initialization, then the
  reply to each output), finishes the academy step that was waiting for it and runs further
  academy steps until the next *exchange point* (an academy step in which at least one agent
  requested a decision, or the academy is done). It returns what Unity would send there.
* The wire path (``client.py``) converts that :class:`AcademyOutput` into protobuf messages;
  the in-process runner (``local.py``) hands it over as it is. Both paths therefore share every
  rule of the academy step and of decisions.

Per-agent state lives in numpy arrays indexed by agent index (0..num_agents-1, declaration
order). Vectors are float32 like Unity's floats.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .brains import BrainSettings, controllers_for
from .controller import BrainController
from .demo_recorder import DemonstrationRecorder
from .messages import AcademyInput, AcademyOutput, Command, DecisionBatch
from .scene import Scene
from .specs import BrainSpec, EngineConfiguration, SceneSpec

# The messages are defined in ``messages.py``; the engine that consumes and produces them
# exports them as well (scripts and the trainers' tests import DecisionBatch from here).
__all__ = [
    "FIXED_DELTA_TIME",
    "Academy",
    "AcademyInput",
    "AcademyOutput",
    "Command",
    "DecisionBatch",
    "agent_ids",
    "agent_indices",
]

#: Unity's fixed timestep of every example project (seconds per academy / physics step).
FIXED_DELTA_TIME = 0.02


# count_nonzero is a direct C call: several times cheaper than ndarray.any() on small arrays.
_count = np.count_nonzero


def agent_ids(count: int) -> np.ndarray:
    """Stable, Unity-looking instance ids (negative int32) for ``count`` agents."""
    return (-1000 - 14 * np.arange(count, dtype=np.int64)).astype(np.int64)


def agent_indices(ids: np.ndarray) -> np.ndarray:
    """The agent indices of ids made by :func:`agent_ids` (its inverse)."""
    return (-1000 - np.asarray(ids, dtype=np.int64)) // 14


def _as_index(agents: np.ndarray | Sequence[int] | int) -> np.ndarray:
    index = np.asarray(agents)
    if index.dtype == bool:
        return np.flatnonzero(index)
    return index.astype(np.int64, copy=False).reshape(-1)


class _BrainState:
    """Per-brain buffers, sized for every agent so that agents can switch brains."""

    def __init__(self, spec: BrainSpec, index: int, num_agents: int) -> None:
        self.spec = spec
        self.index = index
        self.obs_size = spec.vector_observation_size
        self.stack = max(1, spec.num_stacked_vector_observations)
        self.stacked = np.zeros((num_agents, self.obs_size * self.stack), dtype=np.float32)
        self.action_length = spec.action_length
        self.mask_length = spec.mask_length
        self.masks = np.zeros((num_agents, self.mask_length), dtype=bool)
        # Branch b owns the mask columns branch_bounds[b]:branch_bounds[b + 1]; a continuous brain
        # has no branches (and no mask columns).
        self.branch_bounds: np.ndarray = (
            np.cumsum((0,) + tuple(spec.vector_action_size))
            if spec.mask_length
            else np.zeros(1, dtype=np.int64)
        )
        self.empty = DecisionBatch(
            agents=np.zeros(0, dtype=np.int64),
            vector_observations=np.zeros((0, self.obs_size * self.stack), dtype=np.float32),
            visual_observations=[
                np.zeros((0, c.height, c.width, 3), dtype=np.uint8) for c in spec.camera_resolutions
            ],
            rewards=np.zeros(0, dtype=np.float32),
            local_done=np.zeros(0, dtype=bool),
            max_reached=np.zeros(0, dtype=bool),
            action_masks=None,
            previous_vector_actions=np.zeros((0, self.action_length), dtype=np.float32),
        )


class Academy:
    """Runs a scene with Unity's academy semantics.

    :param scene: the Scene subclass to run; it is instantiated here, after the RNG is seeded.
    :param seed: the seed Python sent at initialization (any int; negative values wrap to uint32).
    :param frame_time: seconds to sleep in every academy step (a fixed frame cost for benchmarks).
    :param brain_settings: brain types, broadcast and recordings (``brains.py``); by default every
        brain is external (Python decides) and nothing is recorded.

    Scene-facing API (used from the hooks through ``self.academy``): :meth:`add_reward`,
    :meth:`set_reward`, :meth:`done`, :meth:`request_decision`, :meth:`request_action`,
    :meth:`set_action_mask`, :meth:`set_brain`, :meth:`brain_of`, :meth:`agents_of_brain`,
    :attr:`reset_parameters`, :attr:`rng`, :attr:`is_training`, :attr:`step_count`,
    :attr:`total_step_count`, :attr:`episode_count`, :attr:`num_agents`,
    :attr:`agent_step_counts`, :attr:`engine_configuration`, ``FIXED_DELTA_TIME``.
    """

    FIXED_DELTA_TIME = FIXED_DELTA_TIME

    def __init__(
        self,
        scene: type[Scene],
        seed: int = 0,
        frame_time: float = 0.0,
        brain_settings: BrainSettings | None = None,
    ) -> None:
        settings = brain_settings or BrainSettings()
        self.spec: SceneSpec = settings.scene_spec(scene.spec())
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed % 2**32)
        self.frame_time = float(frame_time)
        self.reset_parameters: dict[str, float] = {k: float(v) for k, v in self.spec.reset_parameters.items()}
        self.step_count = 0
        self.total_step_count = 0
        self.episode_count = 0
        self._is_training = True
        self._max_steps = int(self.spec.academy_max_steps)
        self._academy_done = False
        self._academy_max_reached = False

        self.brains: dict[str, BrainSpec] = {}
        self._brains: list[_BrainState] = []
        self._brain_names: list[str] = []
        n = sum(group.count for group in self.spec.agents)
        for spec in self.spec.brains:
            if spec.name in self.brains:
                raise ValueError(f"Scene {scene.__name__} declares brain '{spec.name}' twice.")
            self.brains[spec.name] = spec
            self._brains.append(_BrainState(spec, len(self._brains), n))
            self._brain_names.append(spec.name)
        self._brain_index = {name: i for i, name in enumerate(self._brain_names)}

        self.num_agents = n
        self._all = np.arange(n, dtype=np.int64)
        self.ids = agent_ids(n)
        self._brain = np.zeros(n, dtype=np.int64)
        self._max_step = np.zeros(n, dtype=np.int64)
        self._interval = np.ones(n, dtype=np.int64)
        self._on_demand = np.zeros(n, dtype=bool)
        start = 0
        for group in self.spec.agents:
            if group.brain not in self._brain_index:
                raise ValueError(
                    f"Scene {scene.__name__}: an agent group uses brain '{group.brain}', which is not "
                    f"among the declared brains {self._brain_names}."
                )
            end = start + group.count
            self._brain[start:end] = self._brain_index[group.brain]
            self._max_step[start:end] = group.max_step
            self._interval[start:end] = max(1, group.decision_interval)
            self._on_demand[start:end] = group.on_demand
            start = end
        # maxStep 0 means "no limit": compare against a count that is never reached.
        self._max_step_eff = np.where(self._max_step > 0, self._max_step, np.iinfo(np.int64).max)
        self._has_max_step = bool((self._max_step > 0).any())
        # Academy steps that certainly pass before an agent can reach its max step (a lower
        # bound: agent resets only make it later); the full test runs when it reaches 0.
        self._timeout_countdown = 0
        periodic = ~self._on_demand
        self._periodic = periodic
        self._any_periodic = bool(periodic.any())
        self._all_periodic = bool(periodic.all())
        self._interval_groups = [
            (int(interval), periodic & (self._interval == interval))
            for interval in np.unique(self._interval[periodic])
        ]
        self._single_brain = self._all_on_one_brain()

        self.agent_step_counts = np.zeros(n, dtype=np.int64)
        self._reward = np.zeros(n, dtype=np.float32)
        self._done = np.zeros(n, dtype=bool)
        self._max_reached = np.zeros(n, dtype=bool)
        self._request_decision = np.zeros(n, dtype=bool)
        self._request_action = np.zeros(n, dtype=bool)
        self._has_already_reset = np.zeros(n, dtype=bool)
        self._has_mask = np.zeros(n, dtype=bool)
        max_action = max((b.action_length for b in self._brains), default=0)
        self._action = np.zeros((n, max_action), dtype=np.float32)
        self._memories = np.zeros((n, 0), dtype=np.float32)
        self._memory_length = np.zeros(n, dtype=np.int64)
        self._text_actions: list[str] | None = None  # allocated when Python first sends text
        self._last_agents: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in self._brains]

        self._started = False
        self._first_reset_done = False
        self._initial_parameters: Mapping[str, float] | None = None
        self._pending: AcademyInput | None = None
        self._mid_step = False
        self._quit = False

        self.scene = scene()
        self.scene.academy = self
        self.scene.initialize()
        self._setup_brains(settings)

    def _setup_brains(self, settings: BrainSettings) -> None:
        """Controllers of the brains that act in the build, recorders, and what Python sees."""
        self.brain_settings = settings
        controllers = controllers_for(self.scene, self.brains, settings)
        self._controllers: list[BrainController | None] = [
            controllers.get(name) for name in self._brain_names
        ]
        self._visible = [settings.is_visible(name) for name in self._brain_names]
        self._recorders: list[DemonstrationRecorder | None] = [None] * len(self._brains)
        if settings.record:
            for name, demo_name in settings.record.items():
                self._recorders[self._brain_index[name]] = DemonstrationRecorder(
                    self.brains[name], demo_name, settings.demo_folder, settings.demo_steps
                )
        # The plain path (every brain external, nothing recorded) skips the per-exchange loop.
        self._local = (
            any(c is not None for c in self._controllers) or bool(settings.record) or not all(self._visible)
        )

    # ------------------------------------------------------------------ properties for scenes
    @property
    def is_training(self) -> bool:
        """True in training mode (Python's ``train_mode``), False in inference mode."""
        return self._is_training

    @property
    def engine_configuration(self) -> EngineConfiguration:
        """The engine configuration of the current mode (cosmetic: the physics step never changes)."""
        if self._is_training:
            return self.spec.training_configuration
        return self.spec.inference_configuration

    @property
    def recordings_complete(self) -> bool:
        """True when there are recordings with a step limit and all of them reached it."""
        recorders = [r for r in self._recorders if r is not None]
        return bool(recorders) and all(r.full for r in recorders)

    def recorder_of(self, brain_name: str) -> DemonstrationRecorder | None:
        """The recorder of ``brain_name`` (None when it is not recorded)."""
        return self._recorders[self._brain_index[brain_name]]

    def indices_of(self, ids: np.ndarray) -> np.ndarray:
        """Agent indices (int64) of the agent ids in a :class:`DecisionBatch`."""
        return agent_indices(ids)

    def run(
        self, max_steps: int = 0, stop: Callable[[], bool] | None = None, train_mode: bool = False
    ) -> int:
        """Run academy steps without Python (a build in which Python sees no brain).

        External brains keep their stored actions. Stops after ``max_steps`` steps (0 = no limit),
        or when ``stop()`` returns True (checked before each step). Returns the steps run.
        """
        if not self._started:
            self._started = True
            self._is_training = train_mode
        steps = 0
        while not (max_steps and steps >= max_steps) and not (stop is not None and stop()):
            if self._mid_step:
                self._mid_step = False
            else:
                self._begin_step()
            if self._quit:
                break
            self._finish_step()
            steps += 1
        return steps

    def close(self) -> None:
        """Finish the recordings and release the controllers (a player gives the terminal back)."""
        for recorder in self._recorders:
            if recorder is not None:
                recorder.close()
        for controller in self._controllers:
            close = getattr(controller, "close", None)
            if close is not None:
                close()

    @property
    def quit_requested(self) -> bool:
        """True once Python sent the QUIT command."""
        return self._quit

    # ------------------------------------------------------------------ scene API
    def add_reward(self, agents: np.ndarray, reward: float | np.ndarray) -> None:
        """AddReward: add ``reward`` (scalar or ``(len(agents),)``) to the agents' pending reward.
        ``agents``: unique int indices or a bool mask over all agents."""
        self._reward[agents] += np.asarray(reward, dtype=np.float32)

    def set_reward(self, agents: np.ndarray, reward: float | np.ndarray) -> None:
        """SetReward: replace the agents' pending reward (later ``add_reward`` calls add on top)."""
        self._reward[agents] = reward

    def done(self, agents: np.ndarray) -> None:
        """Done: the agents' episodes end; they reset at their next decision (on-demand: at once)."""
        self._done[agents] = True

    def request_decision(self, agents: np.ndarray) -> None:
        """RequestDecision (on-demand agents): report and receive a new action in this step."""
        self._request_decision[agents] = True
        self._request_action[agents] = True

    def request_action(self, agents: np.ndarray) -> None:
        """RequestAction: act with the stored action in this step, without a new decision."""
        self._request_action[agents] = True

    def set_action_mask(
        self, agents: np.ndarray, mask: np.ndarray | Sequence[bool], branch: int | None = None
    ) -> None:
        """Forbid actions until the agents' next report (call from ``collect_observations``).

        :param agents: indices of agents that share one discrete brain.
        :param mask: bool, True = forbidden. Shape ``(mask_length,)`` or ``(len(agents), mask_length)``
            over all branches concatenated; with ``branch`` given, over that branch's actions only.
            Calls accumulate (logical or).
        :raises ValueError: for a continuous brain, a wrong shape or agents of several brains.
        """
        index = _as_index(agents)
        if index.size == 0:
            return
        brain = self._brain_of_group(index)
        if brain.mask_length == 0:
            raise ValueError(
                f"Brain '{brain.spec.name}' is continuous; action masks are for discrete brains."
            )
        mask_array = np.asarray(mask, dtype=bool)
        if branch is not None:
            lo, hi = int(brain.branch_bounds[branch]), int(brain.branch_bounds[branch + 1])
            width = hi - lo
        else:
            lo, hi, width = 0, brain.mask_length, brain.mask_length
        if mask_array.shape not in ((width,), (index.size, width)):
            raise ValueError(
                f"Action mask for brain '{brain.spec.name}' must have shape ({width},) or "
                f"({index.size}, {width}); got {mask_array.shape}."
            )
        rows = brain.masks[index, lo:hi] | mask_array
        brain.masks[index, lo:hi] = rows
        self._has_mask[index] = True

    def set_brain(self, agents: np.ndarray, brain_name: str) -> None:
        """GiveBrain: move the agents to another brain. Like Unity this also clears the agents'
        data (observation stack zero-filled, memories and text cleared; the stored action stays).

        :raises KeyError: when the brain is not declared by the scene.
        """
        index = _as_index(agents)
        if brain_name not in self._brain_index:
            raise KeyError(f"Unknown brain '{brain_name}'; this scene declares {self._brain_names}.")
        self._brain[index] = self._brain_index[brain_name]
        self._single_brain = self._all_on_one_brain()
        self._clear_agent_data(index)

    def brain_of(self, agents: np.ndarray) -> list[str]:
        """Brain names of the given agents."""
        return [self._brain_names[b] for b in self._brain[_as_index(agents)]]

    def agents_of_brain(self, brain_name: str) -> np.ndarray:
        """Indices of the agents currently using ``brain_name`` (int64, ascending)."""
        return np.flatnonzero(self._brain == self._brain_index[brain_name])

    # ------------------------------------------------------------------ driving
    def advance(self, message: AcademyInput) -> AcademyOutput | None:
        """Deliver Python's message and run academy steps until the next exchange point.

        The first call delivers the input that followed initialization (its reset parameters and
        training flag are used by the forced reset of the first academy step). Later calls deliver
        the reply to the previous output: actions are stored at once, the rest of the waiting step
        runs (academy step, agent actions, physics), and a RESET or QUIT command takes effect at
        the start of the next academy step, as in Unity.

        :returns: the output of the next exchange point, or None after a QUIT command.
        :raises ValueError: when an action array does not fit the agents of the previous output.
        """
        if self._quit:
            return None
        if not self._started:
            self._started = True
            self._is_training = bool(message.is_training)
            self._initial_parameters = message.reset_parameters
        else:
            self._pending = message
            self._store_actions(message)
        if self._mid_step:
            self._mid_step = False
            self._finish_step()
        while True:
            output = self._begin_step()
            if self._quit:
                return None
            if output is not None:
                self._mid_step = True
                return output
            self._finish_step()

    # ------------------------------------------------------------------ internals
    def _all_on_one_brain(self) -> bool:
        return self.num_agents > 0 and bool((self._brain == self._brain[0]).all())

    def _brain_of_group(self, index: np.ndarray) -> _BrainState:
        brain_ids = self._brain[index]
        if not self._single_brain and (brain_ids != brain_ids[0]).any():
            raise ValueError("These agents use different brains; pass the agents of one brain at a time.")
        return self._brains[int(brain_ids[0])]

    def _store_actions(self, message: AcademyInput) -> None:
        if message.actions:
            for name, values in message.actions.items():
                b = self._brain_index.get(name)
                if b is None or self._controllers[b] is not None:
                    continue  # Unity ignores actions for unknown brains and brains it decides for
                agents = self._last_agents[b]
                if agents.size == 0:
                    continue
                length = self._brains[b].action_length
                array = np.asarray(values, dtype=np.float32)
                if array.size == agents.size * length:
                    array = array.reshape(agents.size, length)
                else:
                    raise ValueError(
                        f"Brain '{name}' expects actions of shape ({agents.size}, {length}) "
                        f"(one row per agent of the last decision), got shape {array.shape}."
                    )
                self._action[agents, :length] = array
                # Unity overwrites every field of the agent's action from the reply: memories
                # and text the reply does not carry for this brain become empty.
                if self._memories.shape[1]:
                    self._memories[agents] = 0.0
                    self._memory_length[agents] = 0
                if self._text_actions is not None:
                    for agent in agents.tolist():
                        self._text_actions[agent] = ""
        if message.memories:
            for name, values in message.memories.items():
                b = self._brain_index.get(name)
                if b is None or self._last_agents[b].size == 0 or self._controllers[b] is not None:
                    continue
                self._set_memories(self._last_agents[b], values)
        if message.text_actions:
            for name, texts in message.text_actions.items():
                b = self._brain_index.get(name)
                if b is None or self._last_agents[b].size == 0:
                    continue
                if self._text_actions is None:
                    self._text_actions = [""] * self.num_agents
                for agent, text in zip(self._last_agents[b].tolist(), texts):
                    self._text_actions[agent] = text

    def _set_memories(self, agents: np.ndarray, values: np.ndarray) -> None:
        """Store the agents' memories (reported back at their next decision)."""
        array = np.asarray(values, dtype=np.float32).reshape(agents.size, -1)
        width = array.shape[1]
        if width > self._memories.shape[1]:
            grown = np.zeros((self.num_agents, width), dtype=np.float32)
            grown[:, : self._memories.shape[1]] = self._memories
            self._memories = grown
        self._memories[agents, :width] = array
        self._memories[agents, width:] = 0.0
        self._memory_length[agents] = width

    def _act_locally(self, batches: dict[str, DecisionBatch]) -> dict[str, DecisionBatch]:
        """Record, let the build's own brains decide, and keep what Python sees."""
        visible: dict[str, DecisionBatch] = {}
        for brain in self._brains:
            b = brain.index
            name = brain.spec.name
            batch = batches[name]
            if batch.agents.size:
                recorder = self._recorders[b]
                if recorder is not None:
                    recorder.record(batch)
                controller = self._controllers[b]
                if controller is not None:
                    self._apply_decision(brain, self._last_agents[b], controller.decide(batch))
            if self._visible[b]:
                visible[name] = batch
        return visible

    def _apply_decision(
        self, brain: _BrainState, agents: np.ndarray, decision: np.ndarray | tuple[np.ndarray, np.ndarray]
    ) -> None:
        """Store a controller's actions (and memories) like the reply of Python would be."""
        memories = None
        if isinstance(decision, tuple):
            decision, memories = decision
        actions = np.asarray(decision, dtype=np.float32)
        expected = (agents.size, brain.action_length)
        if actions.shape != expected:
            raise ValueError(
                f"The controller of brain '{brain.spec.name}' returned actions of shape {actions.shape}; "
                f"expected {expected}."
            )
        self._action[agents, : brain.action_length] = actions
        if memories is not None:
            self._set_memories(agents, memories)
        elif self._memories.shape[1]:
            self._memories[agents] = 0.0
            self._memory_length[agents] = 0

    def _check_max_steps(self) -> None:
        """Agents at their max step are done (and flagged); then how many steps surely pass
        before the next one can be (every step while one waits for its reset)."""
        remaining = self._max_step_eff - self.agent_step_counts
        timed_out = remaining <= 0
        if _count(timed_out):
            self._max_reached |= timed_out
            self._done |= timed_out
        self._timeout_countdown = int(remaining.min())

    def _clear_agent_data(self, index: np.ndarray) -> None:
        """ResetData: zeroed observation stacks, no memories, no text action (action kept)."""
        for brain in self._brains:
            brain.stacked[index] = 0.0
        if self._memories.shape[1]:
            self._memories[index] = 0.0
            self._memory_length[index] = 0
        if self._text_actions is not None:
            for agent in np.asarray(index).tolist():
                self._text_actions[agent] = ""

    def _reset_agents(self, index: np.ndarray) -> None:
        self._clear_agent_data(index)
        self.agent_step_counts[index] = 0
        self.scene.agent_reset(index)

    def _academy_reset(self) -> None:
        self.step_count = 0
        self.episode_count += 1
        self._academy_done = False
        self._academy_max_reached = False
        self.scene.academy_reset()

    def _forced_full_reset(self) -> None:
        self._academy_reset()
        self._reset_agents(self._all)
        self._first_reset_done = True

    def _apply_reset_parameters(self, parameters: Mapping[str, float] | None) -> None:
        if parameters:
            for key, value in parameters.items():
                self.reset_parameters[key] = float(value)

    def _begin_step(self) -> AcademyOutput | None:
        """Academy step phases up to the exchange with Python (the steps before it in Unity's order)."""
        if self.frame_time > 0.0:
            time.sleep(self.frame_time)
        self.scene.pre_step()

        pending = self._pending
        if pending is not None:
            self._pending = None
            if pending.command == Command.RESET:
                self._apply_reset_parameters(pending.reset_parameters)
                self._is_training = bool(pending.is_training)
                self._forced_full_reset()
            elif pending.command == Command.QUIT:
                self._quit = True
                return None
        elif not self._first_reset_done:
            self._apply_reset_parameters(self._initial_parameters)
            self._forced_full_reset()

        if self._max_steps > 0 and self.step_count >= self._max_steps:
            self._academy_max_reached = True
            self._academy_done = True

        # Status broadcast: periodic agents act every step and decide every N-th step.
        academy_done = self._academy_done
        count = 0 if academy_done else self.step_count
        if self._all_periodic:
            self._request_action.fill(True)
        elif self._any_periodic:
            np.logical_or(self._request_action, self._periodic, out=self._request_action)
        if self._any_periodic:
            for interval, members in self._interval_groups:
                if count % interval == 0:
                    np.logical_or(self._request_decision, members, out=self._request_decision)
        if self._academy_max_reached:
            self._max_reached[:] = True
        if academy_done:
            self._done[:] = True
            self._has_already_reset[:] = False
            self._academy_reset()

        # Reset-if-done: on-demand agents at once (once per done), the others at their decision.
        done = self._done
        if _count(done):
            resetting = done & np.where(self._on_demand, ~self._has_already_reset, self._request_decision)
            if _count(resetting):
                self._has_already_reset |= resetting & self._on_demand
                self._reset_agents(resetting.nonzero()[0])

        deciding = self._request_decision
        decisions = _count(deciding)
        if not decisions:
            if academy_done:
                return AcademyOutput(
                    True,
                    {
                        name: b.empty
                        for name, b, visible in zip(self._brain_names, self._brains, self._visible)
                        if visible
                    },
                )
            return None
        batches = self._collect(deciding)
        if decisions == self.num_agents:
            # every agent decides (3DBall's decision steps): whole arrays, no boolean indexing
            self._reward.fill(0.0)
            self._done.fill(False)
            self._max_reached.fill(False)
            self._has_already_reset.fill(False)
        else:
            self._reward[deciding] = 0.0
            self._done[deciding] = False
            self._max_reached[deciding] = False
            self._has_already_reset[deciding] = False
        deciding.fill(False)
        if self._local:
            batches = self._act_locally(batches)
            if not academy_done and not any(batch.agents.size for batch in batches.values()):
                return None  # only brains Python does not see decided: no exchange
        return AcademyOutput(academy_done, batches)

    def _collect(self, deciding: np.ndarray) -> dict[str, DecisionBatch]:
        """Send state: observations, stacking, masks and rendering of every deciding agent."""
        batches: dict[str, DecisionBatch] = {}
        if self._single_brain:
            index_all = deciding.nonzero()[0]
            only = int(self._brain[0])
        for brain in self._brains:
            if self._single_brain:
                index = index_all if brain.index == only else self._last_agents[brain.index][:0]
            else:
                index = (deciding & (self._brain == brain.index)).nonzero()[0]
            self._last_agents[brain.index] = index
            if index.size == 0:
                batches[brain.spec.name] = brain.empty
                continue
            batches[brain.spec.name] = self._collect_brain(brain, index)
        return batches

    def _collect_brain(self, brain: _BrainState, index: np.ndarray) -> DecisionBatch:
        k = index.size
        name = brain.spec.name
        if brain.mask_length:
            brain.masks[index] = False
            self._has_mask[index] = False
        observation = self.scene.collect_observations(index)
        if brain.obs_size:
            observation = np.asarray(observation, dtype=np.float32)
            if observation.shape != (k, brain.obs_size):
                raise ValueError(
                    f"{type(self.scene).__name__}.collect_observations returned shape {observation.shape} "
                    f"for brain '{name}'; expected ({k}, {brain.obs_size})."
                )
            stacked = brain.stacked
            if brain.stack > 1:
                rows = stacked[index]
                rows[:, : -brain.obs_size] = rows[:, brain.obs_size :]
                rows[:, -brain.obs_size :] = observation
                stacked[index] = rows
                vector = rows
            else:
                stacked[index] = observation
                vector = stacked[index]
        else:
            vector = brain.empty.vector_observations if k == 0 else np.zeros((k, 0), dtype=np.float32)

        masks = None
        if brain.mask_length and _count(self._has_mask[index]):
            masks = brain.masks[index]
            bounds = brain.branch_bounds
            for b in range(len(bounds) - 1):
                if masks[:, bounds[b] : bounds[b + 1]].all(axis=1).any():
                    raise ValueError(
                        f"{type(self.scene).__name__} masked every action of branch {b} of brain "
                        f"'{name}'; at least one action of each branch must stay allowed."
                    )

        visuals = []
        for camera, resolution in enumerate(brain.spec.camera_resolutions):
            image = np.asarray(self.scene.render(index, camera))
            expected = (k, resolution.height, resolution.width, 3)
            if image.shape != expected or image.dtype != np.uint8:
                raise ValueError(
                    f"{type(self.scene).__name__}.render(camera={camera}) returned {image.dtype} "
                    f"{image.shape} for brain '{name}'; expected uint8 {expected}."
                )
            visuals.append(image)

        memories = None
        if self._memories.shape[1]:
            lengths = self._memory_length[index]
            width = int(lengths.max())
            if width:
                memories = self._memories[index, :width]
        previous_text = None
        if self._text_actions is not None:
            texts = [self._text_actions[i] for i in index.tolist()]
            if any(texts):
                previous_text = texts

        # Copies of the agents' rows; of whole arrays when every agent decides (cheaper).
        rows = index if k < self.num_agents else slice(None)
        return DecisionBatch(
            agents=self.ids[rows].copy(),
            vector_observations=vector,
            visual_observations=visuals,
            rewards=self._reward[rows].copy(),
            local_done=self._done[rows].copy(),
            max_reached=self._max_reached[rows].copy(),
            action_masks=masks,
            previous_vector_actions=self._action[rows, : brain.action_length].copy(),
            memories=memories,
            previous_text_actions=previous_text,
        )

    def _finish_step(self) -> None:
        """Academy step phases after the exchange with Python (actions, agent steps) and the physics step."""
        self.scene.academy_step()
        acting = self._request_action
        count = _count(acting)
        if count:
            if self._single_brain:
                brain = self._brains[int(self._brain[0])]
                if count == self.num_agents:
                    acting.fill(False)
                    # a copy, like the fancy index: the scene may keep or change the array
                    self.scene.agent_action(self._all, self._action[:, : brain.action_length].copy())
                else:
                    index = acting.nonzero()[0]
                    acting.fill(False)
                    self.scene.agent_action(index, self._action[index, : brain.action_length])
            else:
                groups = [
                    (brain, (acting & (self._brain == brain.index)).nonzero()[0]) for brain in self._brains
                ]
                acting[:] = False
                for brain, index in groups:
                    if index.size:
                        self.scene.agent_action(index, self._action[index, : brain.action_length])
        if self._has_max_step:
            self._timeout_countdown -= 1
            if self._timeout_countdown <= 0:
                self._check_max_steps()
        self.agent_step_counts += 1
        self.step_count += 1
        self.total_step_count += 1
        self.scene.physics_step()
