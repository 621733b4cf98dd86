"""Walker: a humanoid learns to walk toward a target 1800 ahead without falling.

Brain ``WalkerLearning``: vector observation 212 stacked 5 times, continuous action 39; 11 agents,
a decision every 5 physics steps of 0.01333 s, episodes of 5000 physics steps.

Observation (Unity world axes, +y up): the normalised direction from the hips to the target as
computed in the previous physics step (zeros before the first action) (3); the hips' absolute
position (3); the hips' forward (3) and up (3); then for hips, chest, spine, head, thighL, shinL,
footL, thighR, shinR, footR, armL, forearmL, handL, armR, forearmR, handR: touching the ground
(1), centre-of-mass velocity (3), angular velocity (3), position in the hips' frame divided by the
hips' scale (1.2841, 0.3911, 0.7331) (3); and for chest, spine, thighL, shinL, thighR, shinR,
armL, forearmL, armR, forearmR: drive target normalised per axis X, Y, Z (3) and strength (1).
12 + 16 x 10 + 10 x 4 = 212.

Action: 26 target rotations and 13 strengths (see :data:`.walker_body.TARGET_ACTIONS`).
Reward per physics step, d = the direction to the target this step: 0.03 (d . hips velocity) +
0.01 (d . hips forward) + 0.02 (head height - hips height) - 0.01 |head velocity - hips
velocity|. A part other than a foot starting to touch the ground sets the reward of the decision
to -1 and ends the episode. Reset: every part back to its spawn pose (a T-pose, feet 0.544 above
the floor) at rest, the torso masses from the reset parameters.

:func:`walker_heuristic` holds the spawn pose (a stand-still controller).
"""

from __future__ import annotations

import numpy as np

from .articulated import end_all_after_instability
from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec
from .walker_body import FEET_CLEARANCE, PART_INDEX, PARTS
from .walker_world import WalkerWorld

BRAIN = "WalkerLearning"
NUM_AGENTS = 11
OBSERVATION_SIZE = 212
ACTION_SIZE = 39
STACK = 5
MAX_STEP = 5000
DECISION_INTERVAL = 5
FLOOR_TOP = -0.5
START_X = -500.0
TARGET_X = 1300.0
LANES = tuple(float(z) for z in range(-250, 300, 50))
HIPS_SCALE = np.array([1.2841, 0.3911, 0.7331])
RESET_PARAMETERS = {"gravity": 9.81, "hip_mass": 15.0, "chest_mass": 8.0, "spine_mass": 10.0}
_OBSERVED = [PART_INDEX[p] for p in ("chest", "spine", "thighL", "shinL", "thighR", "shinR")] + [
    PART_INDEX[p] for p in ("armL", "forearmL", "armR", "forearmR")
]
#: Player brain keys (actions start at 0: mid-range targets at half strength): Q/A and W/S swing
#: the left and right thighs forward/back, E/D and R/F bend/straighten the knees, T/G and Y/H
#: swing the left and right arms, U/J bend the chest and I/K the spine forward/back.
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    "q": (6, -1.0), "a": (6, 1.0), "w": (8, -1.0), "s": (8, 1.0),
    "e": (10, 1.0), "d": (10, -1.0), "r": (11, 1.0), "f": (11, -1.0),
    "t": (18, 1.0), "g": (18, -1.0), "y": (20, 1.0), "h": (20, -1.0),
    "u": (0, 1.0), "j": (0, -1.0), "i": (3, 1.0), "k": (3, -1.0),
}  # fmt: skip
_HEAD = PART_INDEX["head"]
_FEET = [PART_INDEX["footL"], PART_INDEX["footR"]]
#: the parts whose touching the ground ends the episode: all but the feet
_PENALIZED = np.array([i for i in range(len(PARTS)) if i not in _FEET])


def spawn_height() -> float:
    """Hips height at spawn: the feet bottoms 0.544 above the floor."""
    foot = PARTS[PART_INDEX["footL"]]
    return FLOOR_TOP + FEET_CLEARANCE + foot.shape[1][1] / 2 - foot.centre[1]


class Walker(Scene):
    """Walker: brain ``WalkerLearning``, 11 agents, 212 x 5 observations, continuous 39."""

    player_key_table = PLAYER_KEYS

    world: WalkerWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(BRAIN, OBSERVATION_SIZE, "continuous", (ACTION_SIZE,), STACK),
            NUM_AGENTS,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            reset_parameters=RESET_PARAMETERS,
            training=EngineConfiguration(80, 80, 1, 25.0, -1),
        )

    def initialize(self) -> None:
        hips = [np.array([START_X, spawn_height(), z]) for z in LANES]
        self.world = WalkerWorld(hips, FLOOR_TOP)
        self.targets = np.array([[TARGET_X, 0.0, z] for z in LANES])  # the target boxes at rest
        self.direction = np.zeros((NUM_AGENTS, 3))
        self._all = np.arange(NUM_AGENTS)
        self._apply_masses(np.arange(NUM_AGENTS))

    def _apply_masses(self, agents: np.ndarray) -> None:
        params = self.academy.reset_parameters
        masses = {"hips": params["hip_mass"], "chest": params["chest_mass"], "spine": params["spine_mass"]}
        for name, mass in masses.items():
            if not float(mass) > 0.0:
                raise ValueError(
                    f"Walker reset parameter {name.replace('hips', 'hip')}_mass must be positive, got {mass}."
                )
        self.world.set_masses(agents, {k: float(v) for k, v in masses.items()})

    def academy_reset(self) -> None:
        self.world.set_gravity(float(self.academy.reset_parameters["gravity"]))

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        self.world.reset_bodies(agents)
        self._apply_masses(agents)

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        w = self.world
        positions = w.positions()[agents]
        right, up, forward = (v[agents] for v in w.hips_axes())
        omega, velocity = (v[agents] for v in w.velocities())
        k = agents.size
        obs = np.empty((k, OBSERVATION_SIZE), dtype=np.float32)
        obs[:, 0:3] = self.direction[agents]
        obs[:, 3:6] = positions[:, 0]
        obs[:, 6:9] = forward
        obs[:, 9:12] = up
        parts = np.empty((k, len(PARTS), 10))
        parts[:, :, 0] = w.touching_ground[agents]
        parts[:, :, 1:4] = velocity
        parts[:, :, 4:7] = omega
        axes = np.stack([right, up, forward], 1)
        parts[:, :, 7:10] = np.einsum("kij,kpj->kpi", axes, positions - positions[:, :1]) / HIPS_SCALE
        obs[:, 12:172] = parts.reshape(k, -1)
        drives = np.concatenate(
            [w.norm_targets[agents][:, _OBSERVED], w.strengths[agents][:, _OBSERVED, None]], axis=2
        )
        obs[:, 172:212] = drives.reshape(k, -1)
        return obs

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        self.world.set_drives(agents, actions)

    def physics_step(self) -> None:
        w = self.world
        started = w.step()
        if w.unstable:
            end_all_after_instability(self.academy, type(self).__name__, self._all)
            return
        positions = w.part_positions([0, _HEAD])  # hips, head
        to_target = self.targets - positions[:, 0]
        self.direction = to_target / np.maximum(np.linalg.norm(to_target, axis=1, keepdims=True), 1e-9)
        forward = w.hips_forward()
        velocity = w.part_velocities([0, _HEAD])
        d = self.direction
        reward = (
            0.03 * np.einsum("ij,ij->i", d, velocity[:, 0])
            + 0.01 * np.einsum("ij,ij->i", d, forward)
            + 0.02 * (positions[:, 1, 1] - positions[:, 0, 1])
            - 0.01 * np.linalg.norm(velocity[:, 1] - velocity[:, 0], axis=1)
        )
        self.academy.add_reward(self._all, reward.astype(np.float32))
        fallen = np.flatnonzero(started[:, _PENALIZED].any(1))
        if fallen.size:
            self.academy.set_reward(fallen, -1.0)
            self.academy.done(fallen)

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        return walker_heuristic(batch.vector_observations)


def walker_heuristic(observations: np.ndarray) -> np.ndarray:
    """Stand still: every joint's drive aims at the spawn pose (angle 0, i.e. the middle of a
    symmetric range and the matching point of an asymmetric one) at full strength. Returns
    float32 ``(k, 39)``."""
    from .walker_body import TARGET_ACTIONS, axis_range

    k = np.asarray(observations).shape[0]
    actions = np.ones((k, ACTION_SIZE), dtype=np.float64)
    for j, (part, axis) in enumerate(TARGET_ACTIONS):
        low, high = axis_range(PARTS[PART_INDEX[part]], axis)
        actions[:, j] = 2.0 * (0.0 - low) / (high - low) - 1.0  # the action whose target is 0
    return actions.astype(np.float32)
