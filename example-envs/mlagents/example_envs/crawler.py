"""Crawler: a four-legged creature walks toward a target (static or moving).

Brains ``CrawlerStaticLearning`` (12 agents, a static target 1375 ahead) and
``CrawlerDynamicLearning`` (9 agents, each on a walled 100 x 100 platform, a free target box that
jumps elsewhere when touched): vector observation 126, continuous action 20, a decision every 5
physics steps of 0.01333 s, episodes of 5000 physics steps.

Observation (Unity axes, +y up), with L = the look-toward-the-target frame of the last decision
(forward f = the normalised direction from the body to the target, right r = normalise(up x f),
up u = f x r; "in L" = (v.r, v.u, v.f)):
ground distance below the body (downward ray, 10 when nothing is hit) (1); the body's forward in
L (3); its up in L (3); then for the body, leg0, foreleg0, ..., leg3, foreleg3: touching the
ground (1), centre-of-mass velocity in L (3), angular velocity in L (3), and for every part but
the body: its position in the body's frame divided by the body's scale 1.05 (3), its drive target
normalised to [0, 1] per joint axis X, Y, Z (3; 0 for an axis without range) and its strength
(s + 1) / 2 (1). 7 + 7 + 8 x 14 = 126.

Action: a0..a7 target rotations of the hips (X, Y per leg), a8..a11 of the knees (X), a12..a15
strengths of the upper legs, a16..a19 of the lower legs (see :mod:`.crawler_body`).

Reward per physics step: 0.03 x (body velocity . d) + 0.01 x (d . body forward), d the direction
to the target of the last decision. When the body or an upper leg starts touching the ground the
reward since the last decision is set to -1 and the episode ends. CrawlerDynamic: +1 per part
touching the target in a physics step, and the target jumps to a random spot of its platform.
Reset: every part back to its spawn pose (legs straight and level, the body 1.75 above the
ground), at rest; drive targets and strengths keep their last values.

:func:`crawler_heuristic` is a hand-written trot toward the target (see its docstring).
"""

from __future__ import annotations

import numpy as np

from .articulated import end_all_after_instability
from .crawler_body import PARTS, SPAWN_HEIGHT, TIMESTEP, CrawlerSite
from .crawler_world import CrawlerWorld
from .sdk.messages import DecisionBatch
from .sdk.scene import BrainSpec, EngineConfiguration, Scene, SceneSpec, one_brain_spec

OBSERVATION_SIZE = 126
ACTION_SIZE = 20
MAX_STEP = 5000
DECISION_INTERVAL = 5
VELOCITY_REWARD = 0.03
FACING_REWARD = 0.01
BODY_SCALE = 1.05
TARGET_RADIUS = 50.0  # CrawlerDynamic respawns the target within this distance of the platform centre
GROUND_TOP = 0.5
_UP = np.array([0.0, 1.0, 0.0])
#: Player brain keys (actions start at 0: mid-range targets at half strength): Q/W/E/R lower and
#: A/S/D/F raise the thighs of legs 0..3 (hip X), T/Y/U/I and G/H/J/K sweep them (hip Y +/-),
#: Z/X/C/V fold and 1/2/3/4 straighten the knees.
PLAYER_KEYS: dict[str, tuple[int, float]] = {
    **{key: (2 * leg, 1.0) for leg, key in enumerate("qwer")},
    **{key: (2 * leg, -1.0) for leg, key in enumerate("asdf")},
    **{key: (2 * leg + 1, 1.0) for leg, key in enumerate("tyui")},
    **{key: (2 * leg + 1, -1.0) for leg, key in enumerate("ghjk")},
    **{key: (8 + leg, 1.0) for leg, key in enumerate("zxcv")},
    **{key: (8 + leg, -1.0) for leg, key in enumerate("1234")},
}


def look_frames(direction: np.ndarray) -> np.ndarray:
    """Rows (right, up, forward) ``(n, 3, 3)`` of the frame looking along ``direction`` with world
    up, Unity's cross products (a zero direction looks along +z, as Unity does)."""
    length = np.linalg.norm(direction, axis=1, keepdims=True)
    forward = np.where(length > 1e-9, direction / np.maximum(length, 1e-9), [0.0, 0.0, 1.0])
    right = np.cross(_UP, forward)
    right_length = np.linalg.norm(right, axis=1, keepdims=True)
    right = np.where(right_length > 1e-9, right / np.maximum(right_length, 1e-9), [1.0, 0.0, 0.0])
    up = np.cross(forward, right)
    return np.stack([right, up, forward], 1)


class _Crawler(Scene):
    """The part shared by both scenes; subclasses give brain, sites, ground and target handling."""

    player_key_table = PLAYER_KEYS

    BRAIN = ""
    NUM_AGENTS = 0
    world: CrawlerWorld

    @classmethod
    def spec(cls) -> SceneSpec:
        return one_brain_spec(
            BrainSpec(cls.BRAIN, OBSERVATION_SIZE, "continuous", (ACTION_SIZE,)),
            cls.NUM_AGENTS,
            max_step=MAX_STEP,
            decision_interval=DECISION_INTERVAL,
            training=cls.training_configuration(),
        )

    @classmethod
    def training_configuration(cls) -> EngineConfiguration:
        return EngineConfiguration(80, 80, 0, 100.0, -1)

    def make_world(self) -> CrawlerWorld:
        raise NotImplementedError

    def initialize(self) -> None:
        self.world = self.make_world()
        n = self.world.n
        # the direction to the target seen at the last decision (the reward's d and the frame L)
        self.direction = np.zeros((n, 3))
        self.direction[:, 0] = 1.0
        self.frames = look_frames(self.direction)

    def agent_reset(self, agents: np.ndarray) -> None:
        if agents.size == 0:
            return
        # the original re-orients the agent root with one random yaw draw; it has no physical effect
        self.academy.rng.uniform(0.0, 360.0, size=agents.size)
        self.world.reset_bodies(agents)

    def collect_observations(self, agents: np.ndarray) -> np.ndarray:
        w = self.world
        positions = w.positions()
        to_target = w.target_positions() - positions[:, 0]
        length = np.linalg.norm(to_target, axis=1, keepdims=True)
        self.direction[agents] = (to_target / np.maximum(length, 1e-9))[agents]
        self.frames[agents] = look_frames(to_target[agents])
        frames = self.frames[agents]  # (k, 3, 3) rows right, up, forward

        def in_frame(v: np.ndarray) -> np.ndarray:
            return np.einsum("kij,k...j->k...i", frames, v)

        right, up, forward = w.body_axes()
        omega, velocity = w.velocities()
        k = agents.size
        obs = np.empty((k, OBSERVATION_SIZE), dtype=np.float32)
        obs[:, 0] = w.ground_distances()[agents]
        obs[:, 1:4] = in_frame(forward[agents])
        obs[:, 4:7] = in_frame(up[agents])
        parts = np.zeros((k, PARTS, 14))
        parts[:, :, 0] = w.touching_ground[agents]
        parts[:, :, 1:4] = in_frame(velocity[agents])
        parts[:, :, 4:7] = in_frame(omega[agents])
        offset = positions[agents, 1:] - positions[agents, :1]
        body_axes = np.stack([right[agents], up[agents], forward[agents]], 1)
        parts[:, 1:, 7:10] = np.einsum("kij,kpj->kpi", body_axes, offset) / BODY_SCALE
        parts[:, 1:, 10:13] = w.norm_targets[agents, 1:]
        parts[:, 1:, 13] = w.strengths[agents, 1:]
        obs[:, 7:14] = parts[:, 0, :7]
        obs[:, 14:] = parts[:, 1:].reshape(k, 8 * 14)
        return obs

    def agent_action(self, agents: np.ndarray, actions: np.ndarray) -> None:
        # the original sets the drives in every physics step from the held action (idempotent)
        self.world.set_drives(agents, actions)

    def physics_step(self) -> None:
        w = self.world
        started, touching_target = w.step()
        if w.unstable:
            end_all_after_instability(self.academy, type(self).__name__, np.arange(w.n))
            return
        self.touch_targets(touching_target)
        forward = w.body_forward()
        velocity = w.body_com_velocities()
        reward = VELOCITY_REWARD * np.einsum(
            "ij,ij->i", velocity, self.direction
        ) + FACING_REWARD * np.einsum("ij,ij->i", self.direction, forward)
        all_agents = np.arange(w.n)
        self.academy.add_reward(all_agents, reward.astype(np.float32))
        # the body or an upper leg hit the ground: the reward of this decision becomes -1, done
        fallen = np.flatnonzero(started[:, [0, 1, 3, 5, 7]].any(1))
        if fallen.size:
            self.academy.set_reward(fallen, -1.0)
            self.academy.done(fallen)

    def touch_targets(self, touching: np.ndarray) -> None:
        """Target contact (CrawlerDynamic only)."""

    def heuristic(self, brain: str, agents: np.ndarray, batch: DecisionBatch) -> np.ndarray:
        steps = self.academy.agent_step_counts[agents]
        return crawler_heuristic(batch.vector_observations, steps * TIMESTEP)


class CrawlerStatic(_Crawler):
    """CrawlerStaticTarget: 12 crawlers on one long floor, each walking to its own fixed target
    1375 ahead (+x)."""

    BRAIN = "CrawlerStaticLearning"
    NUM_AGENTS = 12
    LANES = tuple(float(z) for z in range(-300, 300, 50))
    START_X = -200.0
    TARGET = (1175.0, 4.0)  # x and height of every lane's target

    @classmethod
    def training_configuration(cls) -> EngineConfiguration:
        return EngineConfiguration(1280, 720, 0, 100.0, -1)

    def make_world(self) -> CrawlerWorld:
        sites = [CrawlerSite((self.START_X, GROUND_TOP + SPAWN_HEIGHT, z)) for z in self.LANES]
        ground = f'<geom name="ground" type="plane" size="0 0 1" pos="0 0 {GROUND_TOP}"/>'
        # the static targets float and touch nothing: fixed bodies without collision
        x, height = self.TARGET
        targets = "".join(
            f'<body name="target_{i}" pos="{x} {z} {height}">'
            f'<geom type="box" size="0.5 0.5 0.5" contype="0" conaffinity="0"/></body>'
            for i, z in enumerate(self.LANES)
        )
        return CrawlerWorld(sites, ground, targets)


class CrawlerDynamic(_Crawler):
    """CrawlerDynamicTarget: 9 walled platforms of 100 x 100, each with a crawler and a free
    target box (mass 5) that jumps to a random spot when touched."""

    BRAIN = "CrawlerDynamicLearning"
    NUM_AGENTS = 9
    #: touching the target pays +1 and moves it (the original's intended behaviour; its 0.9.3
    #: project misses the target tag, so a build of it may never pay this bonus)
    target_touch_bonus: bool = True
    TARGET_START = np.array([6.2, 3.0, 0.0])

    @classmethod
    def platforms(cls) -> np.ndarray:
        """Platform centres (Unity axes, ground centre height 0) ``(9, 3)``."""
        return np.array([[x, 0.0, z] for x in (0.0, 100.0, 200.0) for z in (0.0, 100.0, 200.0)])

    def make_world(self) -> CrawlerWorld:
        centres = self.platforms()
        sites = [CrawlerSite((c[0], GROUND_TOP + SPAWN_HEIGHT, c[2])) for c in centres]
        ground = f'<geom name="ground" type="plane" size="0 0 1" pos="0 0 {GROUND_TOP}"/>'
        walls = []
        for c in centres:
            x, y = c[0], c[2]
            for dx, dy, sx, sy in ((50, 0, 0.5, 50), (-50, 0, 0.5, 50), (0, 50, 50, 0.5), (0, -50, 50, 0.5)):
                walls.append(f'<geom type="box" size="{sx} {sy} 2.5" pos="{x + dx} {y + dy} 2"/>')
        targets = []
        for i, c in enumerate(centres):
            p = c + self.TARGET_START
            targets.append(
                f'<body name="target_{i}" pos="{p[0]} {p[2]} {p[1]}"><freejoint/>'
                f'<geom type="box" size="0.5 0.5 0.5" mass="5"/></body>'
            )
        return CrawlerWorld(sites, ground, "".join(walls) + "".join(targets))

    def touch_targets(self, touching: np.ndarray) -> None:
        if not self.target_touch_bonus:
            return
        counts = touching.sum(1)
        for agent in np.flatnonzero(counts):
            self.academy.add_reward(np.array([agent]), float(counts[agent]))
            for _ in range(int(counts[agent])):  # the original re-draws once per touching part
                self.world.place_target(int(agent), self._random_target_spot(int(agent)))

    def _random_target_spot(self, agent: int) -> np.ndarray:
        """Platform centre + (x, 5, z): x and z of a uniform point in a ball of radius 50."""
        rng = self.academy.rng
        while True:
            p = rng.uniform(-1.0, 1.0, 3)
            if p @ p <= 1.0:
                break
        return self.platforms()[agent] + np.array([TARGET_RADIUS * p[0], 5.0, TARGET_RADIUS * p[2]])


# ---------------------------------------------------------------- hand-written gait
GAIT_PERIOD = 1.0  # seconds per stride
STRIDE = 1.0  # hip sweep amplitude (action units: 1 = the full +-20 degrees)
LIFT = 0.7  # extra thigh lift in the swing (action units: 1 = 30 degrees more)
TURN_GAIN = 10.0
_TROT = np.array([0.0, 0.5, 0.0, 0.5])  # legs 0 and 2, 1 and 3 move together
_FORWARD_SIGN = np.array([-1.0, 1.0, 1.0, -1.0])  # the hip Y sign that swings leg k forward
_LEFT = np.array([-1.0, 1.0, 1.0, -1.0])  # +1 for the left legs (1, 2)


def crawler_heuristic(observations: np.ndarray, time: np.ndarray) -> np.ndarray:
    """A trot toward the target from the observations and the time since each episode started
    (seconds). Diagonal leg pairs alternate: in the swing half of the stride the thigh rises (the
    knee keeps its angle, so the foot clears the ground) and the hip carries the leg forward; in
    the stance half the foot is down and the hip sweeps it back, pushing the body forward.
    Steering: when the target lies to one side (the body's forward in the target frame, the
    2nd..4th observations) the legs of that side take shorter strides and the other side longer
    ones. Full strength on every joint. Returns float32 ``(k, 20)``."""
    obs = np.asarray(observations, dtype=np.float64)
    k = obs.shape[0]
    t = np.asarray(time, dtype=np.float64).reshape(k, 1)
    phase = 2.0 * np.pi * (t / GAIT_PERIOD + _TROT)  # (k, 4)
    swing = np.maximum(np.sin(phase), 0.0)  # > 0: the leg is in the air
    # > 0: the body points right of the target, so turn left; a target behind turns fully
    side = obs[:, 1:2]
    turn = np.clip(TURN_GAIN * side, -1.0, 1.0)
    turn = np.where(obs[:, 3:4] < 0.0, np.where(side >= 0.0, 1.0, -1.0), turn)
    stride = STRIDE * (1.0 - 0.8 * turn * _LEFT)
    actions = np.zeros((k, 20))
    actions[:, 0:8:2] = -LIFT * swing  # hip X: 0 = thigh 30 degrees up (standing), lower = higher
    actions[:, 1:8:2] = _FORWARD_SIGN * -np.cos(phase) * stride  # back at lift-off, forward at touch-down
    actions[:, 8:12] = 0.0  # knees 75 degrees
    actions[:, 12:20] = 1.0
    return np.clip(actions, -1.0, 1.0).astype(np.float32)
