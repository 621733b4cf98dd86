"""The contract between the Academy engine and an example environment ("scene").

A scene is written *vectorized*: the Academy calls each hook once per academy
step with a numpy array of agent indices (``agents``, int64, shape ``(k,)``,
ascending, possibly empty) instead of once per agent, so that all agents of a
scene are simulated together. Agent indices are 0..``num_agents``-1, in the
order the agents were declared (the registration order of the Unity scene).

The Academy (see ``academy.py``) owns everything that is the same for every
Unity scene: the academy step order of Unity ML-Agents 0.9 (docs/Learning-Environment-Create-New.md),
decision intervals and action repeat, on-demand decisions, reward accumulation
(``add_reward`` / ``set_reward``), done / max-step bookkeeping, observation
stacking, action masks, visual-observation PNG encoding, reset parameters,
training vs inference configuration, seeding and the wire. A scene only says
what its agents observe, how they act and what the world does.

A scene calls back into the Academy through ``self.academy`` (set before
``initialize``): ``add_reward``, ``set_reward``, ``done``,
``request_decision``, ``set_action_mask``, ``set_brain``, ``reset_parameters``,
``rng``, ``is_training``, ``step_count``.

The Academy API in detail (``agents`` = int64 indices, or a bool mask over all agents):

* ``add_reward(agents, r)`` / ``set_reward(agents, r)``: AddReward / SetReward; ``r`` is a
  scalar or one float per agent. Rewards are float32 and reported at the agent's next decision.
* ``done(agents)``: end the agents' episodes (reset at their next decision; on-demand agents
  reset at the next academy step).
* ``request_decision(agents)``: RequestDecision (on-demand agents, usually from ``pre_step``);
  ``request_action(agents)``: act with the stored action without deciding.
* ``set_action_mask(agents, mask, branch=None)``: bool, True = forbidden; ``(mask_length,)`` or
  ``(len(agents), mask_length)`` over all branches, or over one branch's actions with
  ``branch``; calls accumulate; call it from ``collect_observations``.
* ``set_brain(agents, name)``: GiveBrain (also zero-fills the agents' observation stacks).
* ``brain_of(agents) -> list[str]``, ``agents_of_brain(name) -> int64 indices``.
* ``reset_parameters``: dict name -> float (defaults from ``SceneSpec.reset_parameters``;
  a Python reset overwrites the keys it sends, then resets the academy and every agent).
* ``rng``: ``numpy.random.Generator`` seeded from the seed Python sent at initialization
  (the scene is created after it): draw everything random from it.
* ``is_training`` (bool), ``step_count`` (academy steps since the academy reset),
  ``total_step_count``, ``episode_count`` (academy resets so far), ``num_agents``,
  ``agent_step_counts`` (int64 ``(num_agents,)``, physics steps since each agent's reset,
  read-only for scenes), ``engine_configuration``, ``FIXED_DELTA_TIME`` (0.02 s),
  ``seed``, ``ids`` (the int agent ids sent to Python).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .messages import DecisionBatch
from .specs import (
    AgentGroup,
    BrainSpec,
    CameraResolution,
    EngineConfiguration,
    SceneSpec,
    SpaceType,
    one_brain_spec,
)

if TYPE_CHECKING:  # pragma: no cover
    from .academy import Academy

# A scene declares itself with the data types of ``specs.py`` and its heuristic receives a
# DecisionBatch (``messages.py``): a scene imports them from here, with Scene.
__all__ = [
    "AgentGroup",
    "BrainSpec",
    "CameraResolution",
    "DecisionBatch",
    "EngineConfiguration",
    "Scene",
    "SceneSpec",
    "SpaceType",
    "one_brain_spec",
]


class Scene(ABC):
    """Base class of every example environment. Subclasses implement the hooks below.

    Hook order inside one academy step (Unity's order), all vectorized:
    ``pre_step`` (the agents' own FixedUpdate: on-demand agents request decisions
    here) -> [Python reset: ``academy_reset`` then ``agent_reset(all)``] ->
    ``agent_reset(done agents that reset now)`` -> ``collect_observations`` /
    ``render`` for deciding agents -> exchange with Python -> ``academy_step`` ->
    ``agent_action(acting agents)`` -> ``physics_step`` (world integration and the
    collision/trigger callbacks, which may add rewards and call done).
    """

    #: set by the Academy before ``initialize`` is called
    academy: Academy
    #: True when the scene's state is sized by ``academy.num_agents``, so that a build can run
    #: extra agents (the ``--teacher`` option copies a brain's agents for a teacher brain).
    supports_extra_agents: bool = False
    #: the ``player`` brain type's key table of each of the scene's brains (see :meth:`player_keys`);
    #: None: the scene has no player brain, or overrides :meth:`player_keys`
    player_key_table: ClassVar[Mapping[str, tuple[int, float]] | None] = None

    @classmethod
    @abstractmethod
    def spec(cls) -> SceneSpec:
        """The academy name, brains, agents, reset-parameter defaults and configurations."""

    def initialize(self) -> None:
        """Build the world (InitializeAcademy + every agent's InitializeAgent). The Academy's
        RNG is already seeded; reset parameters hold their defaults."""

    def academy_reset(self) -> None:
        """AcademyReset: called on a Python reset (and when the academy hits its max steps)."""

    @abstractmethod
    def agent_reset(self, agents: np.ndarray) -> None:
        """AgentReset for the given agents (start a new episode for each)."""

    @abstractmethod
    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        """CollectObservations: float32 array ``(len(agents), vector_observation_size)`` of
        the current frame (the Academy stacks frames). Agents of several brains may be asked
        at once only if their brains have the same observation size; the Academy groups calls
        by brain, so ``agents`` always share one brain. A discrete brain may call
        ``academy.set_action_mask`` here."""

    def render(self, agents: np.ndarray, camera: int) -> np.ndarray:
        """Visual observation ``camera`` of the given agents: uint8 ``(len(agents), H, W, 3)``,
        row 0 = top of the picture. Only called for brains that declare cameras."""
        raise NotImplementedError(f"{type(self).__name__} declares cameras but does not render them")

    def pre_step(self) -> None:
        """Start of every academy step (the agents' own FixedUpdate)."""

    def academy_step(self) -> None:
        """AcademyStep, after the actions arrived and before agents act."""

    @abstractmethod
    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        """AgentAction: ``actions`` is float32 ``(len(agents), action_length)`` (discrete
        branches as floats holding integers; continuous values as sent, unclipped).
        Called with the agents of one brain at a time."""

    def physics_step(self) -> None:
        """Advance the world by one fixed step of 0.02 s after all agents acted, then run
        the collision/trigger callbacks (rewards and done set here belong to this step)."""

    # ------------------------------------------------------------------ brains acting in the build
    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        """The scripted decision of the ``heuristic`` brain type (a Unity Heuristic brain).

        :param brain: the brain deciding.
        :param agents: int64 indices of the deciding agents (the rows of ``batch``).
        :param batch: what they report (observations, rewards, dones, masks).
        :returns: float32 ``(len(agents), action_length)``.
        """
        raise NotImplementedError(f"{type(self).__name__} has no heuristic for brain '{brain}'.")

    @classmethod
    def has_heuristic(cls, brain: str) -> bool:
        """True when :meth:`heuristic` decides for ``brain`` (default: the scene overrides it)."""
        return cls.heuristic is not Scene.heuristic

    @classmethod
    def player_keys(cls, brain: str) -> Mapping[str, tuple[int, float]] | None:
        """The ``player`` brain type's key table of ``brain``: key name -> (index, value), where
        index is the action index (continuous) or the branch (discrete). None: no player brain.
        Default: :attr:`player_key_table` for every brain the scene declares."""
        if cls.player_key_table is None or all(b.name != brain for b in cls.spec().brains):
            return None
        return cls.player_key_table
